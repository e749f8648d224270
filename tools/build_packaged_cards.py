"""Build ``src/swetrain/label/data/repo_cards.jsonl``: the development corpus's repository cards.

Developer tool, run by hand (never by the package, its tests or CI): it reads the README cards of
``shared/data/repo_cards.jsonl`` for the repositories of the label corpus and, for Python and
JavaScript/TypeScript repositories, adds the package metadata their package index publishes (PyPI's
JSON API, the npm registry: package registries only), and for the others the Debian archive's
(``apt-cache show``, the package lists apt already has), as a repository on disk would give it from its
manifests. A package counts only when its project URLs name the repository
(:func:`swetrain.label.package_meta.names_repository`). Only the corpus's repositories are written
(a repository found only in ``heldout_inputs.jsonl`` never is; the file is not read). Metadata is the index's latest release at fetch time (the README card's commit may be
older); each card's ``source`` says where every part came from.

    python tools/build_packaged_cards.py [--shared ../shared/data/repo_cards.jsonl] [--workers 8]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from swetrain.label.cards import PACKAGED_CARDS, RepoCard, read_cards_file
from swetrain.label.package_meta import from_debian, from_npm, from_pypi, names_repository, parse_debian, with_package

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "src/swetrain/label/data/corpus.jsonl"
INDEX = {"Python": "pypi", "JavaScript": "npm", "TypeScript": "npm"}  # every other language: the Debian archive


def _get(url: str) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url, timeout=30) as f:
            return json.load(f)
    except (urllib.error.URLError, TimeoutError, ValueError):
        return None


def debian_candidates(repo: str) -> list[str]:
    """Debian's naming rules for a project's binary packages (program, C/C++/Rust/Java/PHP/Ruby/Go library)."""
    owner, name = (x.lower().replace("_", "-") for x in repo.split("/"))
    return [name, f"lib{name}-dev", f"librust-{name}-dev", f"lib{name}-java", f"php-{name}", f"ruby-{name}",
            f"golang-github-{owner}-{name}-dev"]


def candidates(repo: str) -> list[str]:
    owner, name = repo.split("/")
    low = name.lower()
    return list(dict.fromkeys([name, low, low.replace("_", "-"), low.removesuffix(".py").removesuffix(".js"),
                               low.removeprefix("py-").removeprefix("python-"), f"{owner}-{name}".lower()]))


def fetch(repo: str, index: str) -> tuple[str, dict[str, Any], tuple[str, ...], str] | None:
    """(repo, package, dependencies, source) for the first candidate package that names ``repo``."""
    if index == "debian":
        for name in debian_candidates(repo):
            res = subprocess.run(["apt-cache", "show", "--no-all-versions", name], capture_output=True, text=True)
            fields = parse_debian(res.stdout) if res.returncode == 0 else {}
            if fields and names_repository(fields, repo):
                package, deps = from_debian(fields)
                return repo, package, deps, f"debian:{fields.get('Package')}={fields.get('Version')}"
        return None
    for name in candidates(repo):
        quoted = urllib.parse.quote(name, safe="@")
        if index == "pypi":
            doc = _get(f"https://pypi.org/pypi/{quoted}/json")
            info = doc.get("info") if doc else None
            if info and names_repository(info, repo):
                package, deps = from_pypi(info)
                return repo, package, deps, f"pypi:{info.get('name')}=={info.get('version')}"
        else:
            doc = _get(f"https://registry.npmjs.org/{quoted}/latest")
            if doc and names_repository(doc, repo):
                package, deps = from_npm(doc)
                return repo, package, deps, f"npm:{doc.get('name')}@{doc.get('version')}"
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared/data/repo_cards.jsonl")
    ap.add_argument("--out", type=Path, default=PACKAGED_CARDS)
    ap.add_argument("--workers", type=int, default=8)
    args = ap.parse_args()
    corpus = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    language = {r["repo"]: r.get("language", "") for r in corpus}
    repos = sorted(language)
    shared_rows = {json.loads(line)["repo"].lower(): json.loads(line) for line in args.shared.read_text().splitlines() if line.strip()}
    cards = read_cards_file(args.shared)
    jobs = [(r, INDEX.get(language[r], "debian")) for r in repos]
    with cf.ThreadPoolExecutor(args.workers) as ex:
        found = {hit[0]: hit for hit in ex.map(lambda j: fetch(*j), jobs) if hit is not None}
    lines, n_pkg = [], 0
    for repo in repos:
        card = cards.get(repo.lower())
        if repo in found:
            _, package, deps, source = found[repo]
            base = card if card is not None else RepoCard(repo=repo)
            lines.append(json.dumps(with_package(base, package, deps, source).to_dict(), ensure_ascii=False))
            n_pkg += 1
        elif repo.lower() in shared_rows:
            lines.append(json.dumps(shared_rows[repo.lower()], ensure_ascii=False))
    args.out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} repositories -> {args.out}: {n_pkg} with package metadata "
          f"({', '.join(f'{sum(1 for r, i in jobs if i == x and r in found)} {x}' for x in ('pypi', 'npm', 'debian'))}) "
          f"of {len(jobs)} repositories")


if __name__ == "__main__":
    main()
