"""Repository cards: what a repository says it is, as a labeler input (issue 33).

A :class:`RepoCard` holds the opening description of the repository's README, its package metadata
(name, summary, keywords, classifiers from ``pyproject.toml`` / ``setup.cfg`` / ``setup.py`` /
``package.json`` / ``Cargo.toml`` / ``pom.xml`` / ``go.mod``), its dependency names, its primary
language (by source-file count) and its top-level layout. Cards are built

* from a repository on disk: a folder (a source checkout, a Docker image's ``/testbed`` copied out
  with ``docker cp``) with :func:`card_from_folder`, or a git snapshot at a commit (built-in and
  synthesized tasks' ``source`` at ``base_commit``) with :func:`card_from_git`;
* from a cards file (:func:`read_cards_file`): JSONL rows ``{"repo", "card", "source_path",
  "commit"}`` (the format of ``shared/data/repo_cards.jsonl``; ``card`` null = no card).

:class:`CardStore` resolves a card per input row (the row's snapshot first, then the folders given
per repository, then the cards files) and caches it per repository; :meth:`RepoCard.sha256`
(content only) and :attr:`RepoCard.source` go into each labeled row's provenance. Nothing here
carries labels.
"""

from __future__ import annotations

import configparser
import hashlib
import json
import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

CARD_VERSION = "card-v1"
DESCRIPTION_CHARS = 1000
LAYOUT_MAX = 40
DEPS_MAX = 60
PACKAGED_CARDS = Path(__file__).with_name("data") / "repo_cards.jsonl"

_README_NAMES = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md", "README.markdown")
_SKIP_DIRS = {".git", "node_modules", "vendor", "third_party", "thirdparty", "build", "dist", "target", ".venv", "venv", "__pycache__"}
_EXT_LANG = {
    ".py": "python", ".pyx": "python", ".js": "javascript", ".mjs": "javascript", ".jsx": "javascript", ".ts": "typescript",
    ".tsx": "typescript", ".java": "java", ".kt": "kotlin", ".scala": "scala", ".go": "go", ".rs": "rust", ".c": "c",
    ".h": "c", ".cc": "c++", ".cpp": "c++", ".cxx": "c++", ".hpp": "c++", ".hh": "c++", ".cs": "c#", ".rb": "ruby",
    ".php": "php", ".swift": "swift", ".m": "objective-c", ".dart": "dart", ".lua": "lua", ".r": "r", ".jl": "julia",
    ".sh": "shell", ".ex": "elixir", ".exs": "elixir", ".hs": "haskell", ".vue": "javascript", ".svelte": "javascript",
}
# README sections that end the description (install/usage/contributing blocks are dropped)
_STOP_HEADING = re.compile(r"^(?:#{1,6}\s*|)(install|installation|getting started|usage|quick ?start|contribut|license|"
                           r"documentation|table of contents|contents|requirements|build|development|setup)\b", re.I)


class CardError(ValueError):
    """A cards file or repository folder cannot be read; says which and why."""


@dataclass(frozen=True)
class RepoCard:
    """What a repository says it is (no labels). ``source`` says where the card came from."""

    repo: str
    description: str = ""
    package: dict[str, Any] = field(default_factory=dict)  # name, summary, keywords, classifiers (what the manifests give)
    dependencies: tuple[str, ...] = ()
    language: str = ""
    layout: tuple[str, ...] = ()
    source: str = ""

    @property
    def empty(self) -> bool:
        return not (self.description.strip() or self.package or self.dependencies)

    def content(self) -> dict[str, Any]:
        """The card without ``source`` (what the hash covers)."""
        d = asdict(self)
        d.pop("source")
        d["dependencies"] = list(self.dependencies)
        d["layout"] = list(self.layout)
        return d

    def sha256(self) -> str:
        """SHA-256 (16 hex) of the card's content in canonical JSON, with the card format version."""
        payload = json.dumps({"v": CARD_VERSION, **self.content()}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {**self.content(), "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RepoCard:
        pkg = d.get("package") or {}
        return cls(repo=str(d.get("repo") or ""), description=str(d.get("description") or ""),
                   package=dict(pkg) if isinstance(pkg, Mapping) else {}, dependencies=tuple(str(x) for x in d.get("dependencies") or ()),
                   language=str(d.get("language") or ""), layout=tuple(str(x) for x in d.get("layout") or ()),
                   source=str(d.get("source") or ""))

    def keywords(self) -> list[str]:
        kw = self.package.get("keywords") or []
        return [str(k) for k in (kw if isinstance(kw, list) else [kw])]

    def about(self, limit: int = DESCRIPTION_CHARS) -> str:
        """What the repository says it is: the README description, else (or also, when short) the
        package summary and keywords. The text the labeler embeds."""
        parts = [self.description.strip()]
        summary = str(self.package.get("summary") or "").strip()
        if summary and summary.lower() not in self.description.lower():
            parts.append(summary)
        if self.keywords():
            parts.append("keywords: " + ", ".join(self.keywords()[:15]))
        if self.topics():
            parts.append("topics: " + ", ".join(self.topics()))
        return " ".join(p for p in parts if p)[:limit]

    def topics(self) -> list[str]:
        """The package's ``Topic ::`` classifiers, most specific part of each, deduplicated."""
        return list(dict.fromkeys(str(c).split("::")[-1].strip() for c in self.package.get("classifiers") or []
                                  if str(c).startswith("Topic")))

    def text(self, limit: int = 1500) -> str:
        """One paragraph for embeddings, signals and prompts: description, package summary, keywords,
        classifier topics, dependencies, language, layout (each part only when present)."""
        parts = []
        if self.description:
            parts.append(self.description)
        summary = str(self.package.get("summary") or "")
        if summary and summary.lower() not in self.description.lower():
            parts.append(summary)
        if self.keywords():
            parts.append("keywords: " + ", ".join(self.keywords()))
        topics = [c.split("::")[-1].strip() for c in self.package.get("classifiers") or [] if str(c).startswith("Topic")]
        if topics:
            parts.append("topics: " + ", ".join(dict.fromkeys(topics)))
        if self.dependencies:
            parts.append("dependencies: " + ", ".join(self.dependencies[:30]))
        if self.language:
            parts.append(f"language: {self.language}")
        if self.layout:
            parts.append("layout: " + " ".join(self.layout[:25]))
        return " ".join(p if p.endswith((".", "!", "?")) else p + "." for p in parts)[:limit]


# ---- README description ------------------------------------------------------------------------
def readme_description(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """The opening description of a README: title and the first descriptive paragraphs, without
    badges, images, HTML tags, heading markers, code blocks, link targets and install/usage sections."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"```.*?```|~~~.*?~~~", "\n\n", text, flags=re.S)
    out: list[str] = []
    para: list[str] = []
    paragraphs = 0
    lines = text.splitlines()
    for i, raw in enumerate(lines):
        line = raw.rstrip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        underline = bool(nxt) and set(nxt) <= set("=-~^*#") and len(nxt) >= 3
        if re.fullmatch(r"\s*[=\-~^*#`]{3,}\s*", line or "-") and not line.strip().isalnum():
            if para:
                out.append(" ".join(para))
                para = []
                paragraphs += 1
            continue
        if line.startswith(("    ", "\t", ".. ", ">>>", "$ ")) or re.match(r"^\s*(pip|npm|cargo|go|conda|yarn) (install|get|add)\b", line):
            continue
        heading = line.lstrip("#").strip() if line.startswith("#") else (line.strip() if underline else None)
        if heading is not None and out and _STOP_HEADING.match(heading):
            break
        clean = re.sub(r"!\[[^\]]*\]\([^)]*\)|\[!\[.*?\]\(.*?\)\]\(.*?\)", " ", line)  # images, badges
        clean = re.sub(r"\|[^|]*\|_?", " ", clean) if clean.strip().startswith("..") else clean
        clean = re.sub(r"<[^>]+>", " ", clean)
        clean = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", clean)  # markdown links -> text
        clean = re.sub(r"`([^`]*)`_", r"\1", clean)
        clean = clean.lstrip("#").strip()
        if not clean:
            if para:
                out.append(" ".join(para))
                para = []
                paragraphs += 1
                if paragraphs >= 4:
                    break
            continue
        para.append(clean)
    if para:
        out.append(" ".join(para))
    desc = re.sub(r"\s+", " ", " ".join(out)).strip()
    return desc[:limit]


# ---- manifests -----------------------------------------------------------------------------------
def _dep_name(spec: str) -> str:
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._\-]*)", spec or "")
    return m.group(1).lower() if m else ""


def _toml(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            return {}
    try:
        return tomllib.loads(text)
    except Exception:  # noqa: BLE001 - a broken manifest gives no metadata, not an error
        return {}


def _merge(pkg: dict[str, Any], deps: list[str], name: str = "", summary: str = "", keywords: Iterable[str] = (),
           classifiers: Iterable[str] = (), new_deps: Iterable[str] = ()) -> None:
    if name and not pkg.get("name"):
        pkg["name"] = name
    if summary and not pkg.get("summary"):
        pkg["summary"] = re.sub(r"\s+", " ", str(summary)).strip()[:300]
    kws = [k.strip() for k in keywords if isinstance(k, str) and k.strip()]
    if kws:
        pkg["keywords"] = list(dict.fromkeys([*pkg.get("keywords", []), *kws]))[:30]
    cls = [c.strip() for c in classifiers if isinstance(c, str) and c.strip()]
    if cls:
        pkg["classifiers"] = list(dict.fromkeys([*pkg.get("classifiers", []), *cls]))[:40]
    for d in new_deps:
        n = _dep_name(d)
        if n and n not in deps and n not in ("python",):
            deps.append(n)


def _keywords(value: Any) -> list[str]:
    if isinstance(value, str):
        return [k for k in re.split(r"[,\s]+", value) if k]
    return [str(k) for k in value or []]


def parse_manifests(read) -> tuple[dict[str, Any], list[str]]:
    """(package metadata, dependency names) from the manifests ``read(name)`` returns (text or None)."""
    pkg: dict[str, Any] = {}
    deps: list[str] = []
    text = read("pyproject.toml")
    if text:
        data = _toml(text)
        proj = data.get("project") or {}
        poetry = (data.get("tool") or {}).get("poetry") or {}
        for src in (proj, poetry):
            if not isinstance(src, dict):
                continue
            dep_list = src.get("dependencies") or []
            if isinstance(dep_list, dict):
                dep_list = list(dep_list)
            _merge(pkg, deps, src.get("name", ""), src.get("description", ""), _keywords(src.get("keywords")),
                   src.get("classifiers") or [], dep_list)
    text = read("setup.cfg")
    if text:
        cp = configparser.ConfigParser(interpolation=None)
        try:
            cp.read_string(text)
        except configparser.Error:
            cp = None  # type: ignore[assignment]
        if cp is not None and cp.has_section("metadata"):
            md = cp["metadata"]
            _merge(pkg, deps, md.get("name", ""), md.get("description", ""), _keywords(md.get("keywords", "")),
                   md.get("classifiers", "").splitlines(),
                   cp.get("options", "install_requires", fallback="").splitlines())
    text = read("setup.py")
    if text:
        g = lambda key: (re.search(key + r"\s*=\s*['\"]([^'\"]+)['\"]", text) or [None, ""])[1]  # noqa: E731
        reqs = re.search(r"install_requires\s*=\s*\[([^\]]*)\]", text, re.S)
        kws = g("keywords")
        _merge(pkg, deps, g("name"), g("description"), _keywords(kws), re.findall(r"['\"](Topic ::[^'\"]+)['\"]", text),
               re.findall(r"['\"]([^'\"]+)['\"]", reqs.group(1)) if reqs else [])
    text = read("package.json")
    if text:
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = {}
        if isinstance(data, dict):
            _merge(pkg, deps, str(data.get("name") or ""), str(data.get("description") or ""), _keywords(data.get("keywords")), (),
                   [*(data.get("dependencies") or {}), *(data.get("peerDependencies") or {})])
    text = read("Cargo.toml")
    if text:
        data = _toml(text)
        p = data.get("package") or {}
        if isinstance(p, dict):
            _merge(pkg, deps, str(p.get("name") or ""), str(p.get("description") or ""), _keywords(p.get("keywords")),
                   [f"Topic :: {c}" for c in p.get("categories") or []], list(data.get("dependencies") or {}))
    text = read("pom.xml")
    if text:
        body = re.sub(r"<dependencies>.*?</dependencies>|<build>.*?</build>|<parent>.*?</parent>", " ", text, flags=re.S)
        art = re.search(r"<artifactId>([^<]+)</artifactId>", body)
        desc = re.search(r"<description>([^<]+)</description>", body)
        _merge(pkg, deps, art.group(1) if art else "", desc.group(1) if desc else "", (), (),
               re.findall(r"<dependency>\s*<groupId>[^<]*</groupId>\s*<artifactId>([^<]+)</artifactId>", text))
    text = read("go.mod")
    if text:
        mod = re.search(r"^module\s+(\S+)", text, re.M)
        reqs = re.findall(r"^\s*(?:require\s+)?([a-z0-9.\-]+\.[a-z]+/[^\s]+)\s+v", text, re.M)
        _merge(pkg, deps, mod.group(1) if mod else "", "", (), (), [r.rstrip("/").split("/")[-1] for r in reqs])
    for req in ("requirements.txt", "requirements/base.txt"):
        text = read(req)
        if text:
            _merge(pkg, deps, new_deps=[ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", "-"))])
    return pkg, deps[:DEPS_MAX]


# ---- building from a repository --------------------------------------------------------------------
def _language(paths: Iterable[str]) -> str:
    counts: Counter[str] = Counter()
    for p in paths:
        parts = p.split("/")
        if any(x in _SKIP_DIRS or x.startswith(".") for x in parts[:-1]):
            continue
        lang = _EXT_LANG.get(Path(p).suffix.lower())
        if lang:
            counts[lang] += 1
    return counts.most_common(1)[0][0] if counts else ""


def _layout(top: Iterable[tuple[str, bool]]) -> tuple[str, ...]:
    names = sorted({n + ("/" if is_dir else "") for n, is_dir in top if not n.startswith(".") and n not in _SKIP_DIRS})
    return tuple(names[:LAYOUT_MAX])


def _build(repo: str, files: list[str], top: list[tuple[str, bool]], read, source: str) -> RepoCard:
    desc = ""
    have = set(files)
    for name in _README_NAMES:
        if name in have:
            desc = readme_description(read(name) or "")
            if desc:
                break
    pkg, deps = parse_manifests(lambda n: read(n) if n in have else None)
    return RepoCard(repo=repo, description=desc, package=pkg, dependencies=tuple(deps), language=_language(files),
                    layout=_layout(top), source=source)


def card_from_folder(path: str | Path, repo: str = "") -> RepoCard:
    """The card of a repository checked out (or copied) in ``path``: README opening, manifests,
    language by source-file count (at most 20,000 files walked), top-level layout."""
    root = Path(path)
    if not root.is_dir():
        raise CardError(f"{root}: not a folder (a repository card needs the repository on disk)")
    files: list[str] = []
    stack = [root]
    while stack and len(files) < 20000:
        d = stack.pop()
        try:
            entries = sorted(d.iterdir())
        except OSError:
            continue
        for e in entries:
            if e.is_dir() and not e.is_symlink():
                if e.name not in _SKIP_DIRS and not e.name.startswith("."):
                    stack.append(e)
            elif e.is_file():
                files.append(e.relative_to(root).as_posix())
    top = [(e.name, e.is_dir()) for e in root.iterdir()]

    def read(name: str) -> str | None:
        try:
            return (root / name).read_text(encoding="utf-8", errors="replace")[:200_000]
        except OSError:
            return None

    return _build(repo or root.name, files, top, read, f"folder:{root.resolve()}")


def _git(path: Path, *args: str) -> str | None:
    try:
        res = subprocess.run(["git", "-C", str(path), *args], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.decode("utf-8", errors="replace") if res.returncode == 0 else None


def card_from_git(path: str | Path, commit: str, repo: str = "") -> RepoCard:
    """The card of a git snapshot at ``commit`` (files read with ``git show``, not the work tree)."""
    root = Path(path)
    listing = _git(root, "ls-tree", "-r", "--name-only", commit)
    if listing is None:
        raise CardError(f"{root}: commit {commit[:12]} not readable with git (is it a snapshot repository holding that commit?)")
    files = [f for f in listing.splitlines() if f]
    top_listing = _git(root, "ls-tree", commit) or ""
    top = [(ln.split("\t", 1)[1], ln.split()[1] == "tree") for ln in top_listing.splitlines() if "\t" in ln]

    def read(name: str) -> str | None:
        out = _git(root, "show", f"{commit}:{name}")
        return out[:200_000] if out is not None else None

    return _build(repo or root.name, files, top, read, f"snapshot:{root.resolve()}@{commit[:12]}")


# ---- cards files -------------------------------------------------------------------------------------
def read_cards_file(path: str | Path) -> dict[str, RepoCard | None]:
    """``repo`` (lower case) -> card, or None where the file says the repository has no card.

    Rows: ``{"repo", "card": text|null, "source_path", "commit"}`` (the shared repo_cards format) or
    a full card (``description``, ``package``, ...; e.g. written by :func:`write_cards_file`)."""
    path = Path(path)
    if not path.exists():
        raise CardError(f"{path}: cards file does not exist")
    from swetrain.label.io import jsonl_objects

    out: dict[str, RepoCard | None] = {}
    for line_no, row, bad in jsonl_objects(path):
        if row is None:
            raise CardError(str(bad))
        repo = row.get("repo")
        if not isinstance(repo, str) or not repo.strip():
            raise CardError(f"{path}:{line_no}: missing 'repo'")
        if "description" in row or "package" in row:
            card = RepoCard.from_dict(row)
            card = RepoCard(**{**card.__dict__, "source": card.source or f"cards:{path.name}"})
        else:
            text = row.get("card")
            if text is not None and not isinstance(text, str):
                raise CardError(f"{path}:{line_no}: 'card' must be text or null")
            if not text or not text.strip():
                out[repo.lower()] = None
                continue
            where = f"{row.get('source_path') or 'README'}@{str(row.get('commit') or '')[:12]}"
            card = RepoCard(repo=repo, description=re.sub(r"\s+", " ", text).strip()[:DESCRIPTION_CHARS],
                            source=f"cards:{path.name}:{where}")
        out[repo.lower()] = card
    return out


def write_cards_file(cards: Iterable[RepoCard], path: str | Path) -> None:
    from swetrain.label.io import atomic_write_text

    atomic_write_text(path, "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in cards))


# ---- resolving cards for input rows ------------------------------------------------------------------
class CardStore:
    """Finds the card of each input row and caches it per repository.

    Order: the row's own ``repo_card`` (a card dict), the row's snapshot (``source`` folder at
    ``base_commit`` when it is a git repository holding it, else the folder), a folder given for the
    repository (``folders``), then the cards files in order. ``stats`` counts rows by where their card
    came from (``none``: no card).
    """

    def __init__(self, cards_files: Iterable[str | Path] = (), folders: Mapping[str, str | Path] | None = None,
                 use_snapshots: bool = True, base_dir: str | Path | None = None):
        self.files = [Path(p) for p in cards_files]
        self.tables = [read_cards_file(p) for p in self.files]
        self.folders = {k.lower(): Path(v) for k, v in (folders or {}).items()}
        self.use_snapshots = use_snapshots
        self.base_dir = Path(base_dir) if base_dir is not None else None
        self._cache: dict[tuple[str, str], RepoCard | None] = {}
        self.stats: Counter[str] = Counter()
        self.errors: list[str] = []

    def _snapshot(self, row: Mapping[str, Any]) -> Path | None:
        src = row.get("source")
        if not self.use_snapshots or not isinstance(src, str) or not src.strip():
            return None
        p = Path(src).expanduser()
        if not p.is_absolute() and self.base_dir is not None:
            p = self.base_dir / p
        return p if p.is_dir() else None

    def card_for(self, row: Mapping[str, Any]) -> RepoCard | None:
        repo = str(row.get("repo") or "")
        given = row.get("repo_card")
        if isinstance(given, Mapping):
            self.stats["row"] += 1
            return RepoCard.from_dict({"repo": repo, **given})
        snap = self._snapshot(row)
        commit = str(row.get("base_commit") or "")
        key = (repo.lower(), f"{snap}@{commit}" if snap is not None else "")
        if key not in self._cache:
            self._cache[key] = self._resolve(repo, snap, commit)
        card = self._cache[key]
        self.stats[card.source.split(":", 1)[0] if card is not None else "none"] += 1
        return card

    def _resolve(self, repo: str, snap: Path | None, commit: str) -> RepoCard | None:
        if snap is not None:
            try:
                if commit and (snap / ".git").exists():
                    return card_from_git(snap, commit, repo)
                return card_from_folder(snap, repo)
            except CardError as exc:
                self.errors.append(str(exc))
        folder = self.folders.get(repo.lower())
        if folder is not None:
            try:
                return card_from_folder(folder, repo)
            except CardError as exc:
                self.errors.append(str(exc))
        for table in self.tables:
            if repo.lower() in table:
                return table[repo.lower()]
        return None

    def attach(self, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The rows with ``repo_card`` set (a card dict) where a card was found, unchanged otherwise."""
        out = []
        for r in rows:
            card = self.card_for(r)
            out.append({**r, "repo_card": card.to_dict()} if card is not None else dict(r))
        return out

    def summary(self) -> str:
        total = sum(self.stats.values())
        none = self.stats.get("none", 0)
        found = ", ".join(f"{k} {v}" for k, v in sorted(self.stats.items()) if k != "none")
        return f"repository cards: {total - none} of {total} row(s) have one ({found or 'none found'}); {none} without a card"

