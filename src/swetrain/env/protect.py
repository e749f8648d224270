"""Protected tests and test configuration: which changes a model patch may not make.

``find_violations(patch, read_pre, ...)`` is a pure function over the patch text and a reader of
the base commit's files (``read_pre(path) -> str | None``, ``None`` = no such file). It returns one
:class:`Violation` per broken rule, each with a readable message naming the file (and line) and the
rule; ``protected_changes`` returns just those messages. Rules:

``protected-file``
    The patch touches (modifies, creates, deletes or renames) a file the task protects (the test
    patch's files, files holding a FAIL_TO_PASS / PASS_TO_PASS test), a file whose *name* pytest or
    Python treats as configuration or start-up code anywhere in the tree (``conftest.py``,
    ``pytest.ini``, ``.pytest.ini``, ``pytest.toml``, ``.pytest.toml``, ``sitecustomize.py``,
    ``usercustomize.py``), or anything under ``.git/``.
``pytest-config``
    The patch changes the pytest section of ``tox.ini`` (``[pytest]``), ``setup.cfg``
    (``[tool:pytest]``; ``[pytest]`` is checked too) or ``pyproject.toml`` (``[tool.pytest]`` and
    ``[tool.pytest.ini_options]``), in any folder. The section is parsed before and after the
    patch (with pytest's own parsers: ``iniconfig``, ``tomllib``) and compared, so a patch that only
    changes other parts of these files (a dependency version, flake8 options) is accepted.
``pytest-config-unchecked``
    The pytest section of such a file could not be compared (a hunk does not apply exactly to the
    base file, the file does not parse, a symlink leads out of the tree). The verifier re-checks
    these after applying the patch (``read_post`` = the patched tree) and refuses what remains.
``skips-tests``, ``xfails-tests``, ``pytest-hooks``, ``pytest-options``, ``verifier-report``
    An *added* line (any file except documentation: .rst, .md, .txt, .adoc, .html) matches one of
    :data:`ADDED_LINE_RULES`: skipping, deselecting or xfailing tests (``pytest.skip(``,
    ``pytest.xfail(``, ``pytest.mark.skip``/``skipif``/``xfail``, ``unittest.skip``, ``SkipTest``,
    ``collect_ignore``, ``__test__ = ...``), pytest hooks and plugin wiring (``pytest_runtest_*``,
    ``pytest_collection_modifyitems``, ``hookimpl``, ``pytest_plugins``, ``pytest11``), pytest
    options (``addopts``, ``--deselect``, ``-p no:``, ``PYTEST_ADDOPTS``) or the verifier's own
    junit report. SWE-bench grading counts an XFAIL FAIL_TO_PASS test as passed and a SKIPPED
    PASS_TO_PASS test as kept, so library code calling ``pytest.xfail()`` during a test would
    otherwise earn a full reward.

Reference patch (the task's gold patch): a rule the gold patch itself breaks would make the task
unsolvable (e.g. a fix inside pytest's own ``skipping.py`` adds ``pytest_runtest_`` lines), so an
added-line rule broken by ``reference_patch`` is not enforced for that task, and a pytest section
change is accepted when the section ends up exactly as the gold patch leaves it.
``protected-file`` is always enforced.

With ``read_post`` (a reader of the *patched* tree) the check reads every touched file before and
after instead of trusting the patch text: the added lines are the real ones (fuzzy, binary or
context diffs, symlinks included) and config sections are parsed from the files pytest will read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

Reader = Callable[[str], "str | None"]

PROTECTED_NAMES = {
    "conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml",
    "sitecustomize.py", "usercustomize.py",
}
CONFIG_SECTIONS = {  # file name -> the pytest sections compared before/after
    "tox.ini": "[pytest]",
    "setup.cfg": "[tool:pytest]",
    "pyproject.toml": "[tool.pytest] / [tool.pytest.ini_options]",
}
DOC_SUFFIXES = {".rst", ".md", ".txt", ".adoc", ".html", ".htm"}
UNCHECKED = "pytest-config-unchecked"

# (rule, why, pattern) for added lines; the first matching pattern of a line is reported.
ADDED_LINE_RULES: list[tuple[str, str, re.Pattern[str]]] = [
    (rule, why, re.compile(rx))
    for rule, why, rx in (
        ("xfails-tests", "marks tests as expected failures, and an XFAIL counts as a pass",
         r"\bxfail\b|\bXFailed\b|\bexpectedFailure\b"),
        ("skips-tests", "skips tests",
         r"\bpytest\s*\.\s*(?:skip|importorskip)\b|\bmark\s*\.\s*skip(?:if)?\b|\bimportorskip\b"
         r"|\bunittest\s*\.\s*skip\w*|\bskip(?:If|Unless)\s*\(|\bskipTest\s*\(|\bSkipTest\b"
         r"|^\s*from\s+_?pytest\b[\w.]*\s+import\b.*\bskip\b|\bskip\s*\.\s*Exception\b"
         r"|\b_pytest\s*\.\s*(?:outcomes|skipping|runner|reports|junitxml|unittest)\b|\bOutcomeException\b"),
        ("skips-tests", "keeps tests from being collected",
         r"\bcollect_ignore(?:_glob)?\b|\b__test__\s*="),
        ("pytest-hooks", "adds pytest hooks or plugins, which can deselect tests or rewrite outcomes",
         r"\bpytest_(?:collection\w*|runtest_\w+|ignore_collect|collect\w*|pycollect_\w+|make_collect_report"
         r"|report_\w+|deselected|itemcollected|pyfunc_call|sessionfinish|unconfigure|configure"
         r"|terminal_summary|plugins)\b|\bhook(?:impl|wrapper)\b|\bpytest11\b"),
        ("pytest-options", "changes pytest's options (deselects tests or disables plugins)",
         r"--deselect\b|\baddopts\b|-p\s*no:|\bPYTEST_(?:ADDOPTS|PLUGINS|DISABLE_PLUGIN_AUTOLOAD)\b"),
        ("verifier-report", "refers to the verifier's test report",
         r"\bjunit|swetrain"),
    )
]


@dataclass(frozen=True)
class Violation:
    """One broken rule: ``message`` is what the agent reads (file, line, rule, why)."""

    path: str
    rule: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        return self.message


# ----------------------------------------------------------------------------------- parsing
_DIFF_GIT = re.compile(r'^diff --git (?:"?a/(.+?)"?) (?:"?b/(.+?)"?)$')
_MINUS_PLUS = re.compile(r"^(?:---|\+\+\+) (.+?)(?:\t.*)?$")
_RENAME = re.compile(r"^(?:rename|copy) (?:from|to) (.+)$")


def patch_files(patch: str) -> set[str]:
    """Every repository path a unified / git diff names (old and new sides, renames included)."""
    files: set[str] = set()
    for line in patch.splitlines():
        m = _DIFF_GIT.match(line)
        if m:
            files.update(m.groups())
            continue
        m = _RENAME.match(line)
        if m:
            files.add(m.group(1).strip('"'))
            continue
        if line.startswith(("--- ", "+++ ")):
            m = _MINUS_PLUS.match(line)
            if m:
                name = m.group(1).strip().strip('"')
                if name == "/dev/null":
                    continue
                parts = name.split("/", 1)
                files.add(parts[1] if len(parts) == 2 and parts[0] in ("a", "b") else name)
    return {str(PurePosixPath(f)) for f in files if f}


def _strip_prefix(name: str | None) -> str | None:
    if not name or name == "/dev/null":
        return None
    parts = name.split("/", 1)
    return str(PurePosixPath(parts[1] if len(parts) == 2 and parts[0] in ("a", "b") else name))


class _Unapplicable(Exception):
    pass


def _apply_hunks(pre: str | None, pfile) -> str:
    """The file after ``pfile``'s hunks (exact context, any offset, like ``git apply``)."""
    lines = [] if pre is None else pre.splitlines()
    out: list[str] = []
    pos = 0
    for hunk in pfile:
        src = [ln.value.rstrip("\r\n") for ln in hunk if ln.is_context or ln.is_removed]
        tgt = [ln.value.rstrip("\r\n") for ln in hunk if ln.is_context or ln.is_added]
        want = hunk.source_start - 1 if hunk.source_length else hunk.source_start
        want = max(want, pos)
        at = None
        for off in range(len(lines) + 1):
            for i in (want - off, want + off) if off else (want,):
                if pos <= i <= len(lines) - len(src) and lines[i:i + len(src)] == src:
                    at = i
                    break
            if at is not None:
                break
        if at is None:
            raise _Unapplicable(f"a hunk at line {hunk.source_start} does not match the base file")
        out += lines[pos:at] + tgt
        pos = at + len(src)
    out += lines[pos:]
    return "\n".join(out) + ("\n" if out else "")


def parse_patch(patch: str):
    """``patch`` as a ``unidiff.PatchSet``, or None when unidiff cannot parse it."""
    try:
        import unidiff

        return unidiff.PatchSet(patch)
    except Exception:  # noqa: BLE001 - unidiff raises several types on odd input
        return None


def pytest_section(name: str, text: str | None):
    """The parsed pytest configuration of a ``tox.ini`` / ``setup.cfg`` / ``pyproject.toml`` text.

    ``None`` text (no file) gives ``{}``. Raises ``ValueError`` when the text does not parse.
    """
    if text is None:
        return {}
    if name == "pyproject.toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10 without tomli: compare the tables' text
            try:
                import tomli as tomllib  # type: ignore[no-redef]
            except ModuleNotFoundError:
                return _toml_tables_text(text)
        try:
            data = tomllib.loads(text)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(str(exc)) from exc
        tool = data.get("tool", {})
        return {"tool.pytest": tool.get("pytest")} if isinstance(tool, dict) and "pytest" in tool else {}
    sections = _parse_ini(text)
    return {k: v for k, v in sections.items() if k.strip().lower() in ("pytest", "tool:pytest")}


def _parse_ini(text: str) -> dict[str, dict[str, str]]:
    try:
        import iniconfig  # the parser pytest itself uses for .ini / .cfg files
    except ModuleNotFoundError:
        import configparser

        cp = configparser.RawConfigParser(strict=False)
        try:
            cp.read_string(text)
        except configparser.Error as exc:
            raise ValueError(str(exc)) from exc
        return {s: dict(cp.items(s)) for s in cp.sections()}
    try:
        ini = iniconfig.IniConfig("config.ini", data=text)
    except Exception as exc:  # noqa: BLE001 - iniconfig.ParseError and friends
        raise ValueError(str(exc)) from exc
    return {name: dict(ini[name].items()) for name in ini.sections}


def _toml_tables_text(text: str) -> dict[str, str]:
    """Fallback without a TOML parser: the raw text of tables named tool.pytest*, and of ``[tool]``."""
    tables: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$", line)
        if m:
            key = re.sub(r"[\s\"']", "", m.group(1))
            current = key if key == "tool" or key.startswith("tool.pytest") else None
            continue
        if current is not None:
            tables.setdefault(current, []).append(line.strip())
    return {k: "\n".join(v) for k, v in tables.items() if k != "tool" or any("pytest" in ln for ln in v)}


# ------------------------------------------------------------------------------------ checks
def _name_violations(paths: Iterable[str], protected_paths: set[str]) -> list[Violation]:
    out = []
    for f in sorted(set(paths)):
        p = PurePosixPath(f)
        if f in protected_paths:
            why = "it is a test file of this task"
        elif p.name in PROTECTED_NAMES:
            why = f"{p.name} can change how tests are collected or reported"
        elif any(part in ("sitecustomize", "usercustomize") for part in p.parts[:-1]) \
                or p.name.split(".", 1)[0] in ("sitecustomize", "usercustomize"):
            why = "Python runs sitecustomize / usercustomize modules (files or packages) at start-up"
        elif p.parts and p.parts[0] == ".git":
            why = "the repository metadata may not be changed"
        else:
            continue
        out.append(Violation(f, "protected-file", f"{f}: protected file ({why}); rule: protected-file"))
    return out


def _scan_lines(path: str, numbered: Iterable[tuple[int | None, str]]) -> list[Violation]:
    if PurePosixPath(path).suffix.lower() in DOC_SUFFIXES:
        return []
    out = []
    for lineno, text in numbered:
        for rule, why, rx in ADDED_LINE_RULES:
            m = rx.search(text)
            if m:
                where = f"{path}:{lineno}" if lineno else path
                snippet = text.strip()
                if len(snippet) > 100:
                    snippet = snippet[:97] + "..."
                out.append(Violation(path, rule, f"{where}: adds `{snippet}`, which {why}; rule: {rule}", lineno))
                break
    return out


def added_lines(pre: str | None, post: str | None) -> list[tuple[int, str]]:
    """Lines of ``post`` that ``pre`` does not have (as a multiset; 1-based line numbers in ``post``).

    Linear in the file size (no diff alignment): for a line that occurs more often after than
    before, the later occurrences are the ones reported.
    """
    left = Counter([] if pre is None else pre.splitlines())
    added = []
    for i, line in enumerate([] if post is None else post.splitlines(), 1):
        if left[line] > 0:
            left[line] -= 1
        else:
            added.append((i, line))
    return added


def _config_violation(path: str, pre: str | None, post: str | None, allowed: list) -> Violation | None:
    name = PurePosixPath(path).name
    section = CONFIG_SECTIONS[name]
    try:
        before, after = pytest_section(name, pre), pytest_section(name, post)
    except ValueError as exc:
        if pre == post:
            return None
        return Violation(path, UNCHECKED, f"{path}: the pytest section {section} could not be compared "
                         f"({str(exc)[:200]}); rule: {UNCHECKED}")
    if before == after or any(p == path and after == sec for p, sec in allowed):
        return None
    return Violation(path, "pytest-config", f"{path}: changes the pytest section {section} "
                     "(pytest configuration is protected); rule: pytest-config")


def _safe_read(reader: Reader, path: str) -> tuple[bool, str | None, str]:
    try:
        return True, reader(path), ""
    except (OSError, ValueError) as exc:
        return False, None, str(exc)


def pure_post_images(pset, read_pre: Reader, want: Callable[[str], bool]) -> dict[str, object]:
    """path -> text after the patch (None = gone) or an _Unapplicable, for paths ``want`` accepts."""
    posts: dict[str, object] = {}
    for pf in pset:
        src = None if pf.is_added_file else _strip_prefix(pf.source_file)
        tgt = None if pf.is_removed_file else _strip_prefix(pf.target_file)
        if src and src != tgt and want(src):
            posts[src] = None  # renamed away
        if tgt and want(tgt):
            if pf.is_binary_file:
                posts[tgt] = _Unapplicable("binary patch")
                continue
            ok, pre, err = _safe_read(read_pre, src) if src else (True, None, "")
            try:
                if not ok:
                    raise _Unapplicable(err)
                posts[tgt] = _apply_hunks(pre, pf)
            except _Unapplicable as exc:
                posts[tgt] = exc
    return posts


def _is_config(path: str) -> bool:
    return PurePosixPath(path).name in CONFIG_SECTIONS


def _pure_violations(patch: str, read_pre: Reader, allowed_sections: list) -> list[Violation]:
    """Config sections (post-images computed from the hunks) and added lines of the patch text."""
    out: list[Violation] = []
    pset = parse_patch(patch)
    touched = patch_files(patch)
    if pset is None:  # unparsable by unidiff: scan raw '+' lines, leave config files unchecked
        path = "?"
        numbered: dict[str, list] = {}
        for line in patch.splitlines():
            m = _MINUS_PLUS.match(line) if line.startswith("+++ ") else None
            if m:
                path = _strip_prefix(m.group(1).strip().strip('"')) or path
            elif line.startswith("+") and not line.startswith("+++ "):
                numbered.setdefault(path, []).append((None, line[1:]))
        for path, lines in numbered.items():
            out += _scan_lines(path, lines)
        out += [Violation(p, UNCHECKED, f"{p}: the patch could not be parsed to compare its pytest section; "
                          f"rule: {UNCHECKED}") for p in sorted(touched) if _is_config(p)]
        return out
    posts = pure_post_images(pset, read_pre, _is_config)
    for path in sorted(posts):
        post = posts[path]
        if isinstance(post, _Unapplicable):
            section = CONFIG_SECTIONS[PurePosixPath(path).name]
            out.append(Violation(path, UNCHECKED, f"{path}: the pytest section {section} could not be compared "
                                 f"({post}); rule: {UNCHECKED}"))
            continue
        ok, pre, err = _safe_read(read_pre, path)
        v = _config_violation(path, pre, post, allowed_sections) if ok else Violation(
            path, UNCHECKED, f"{path}: could not read the base file ({err}); rule: {UNCHECKED}")
        if v:
            out.append(v)
    for pf in pset:
        tgt = None if pf.is_removed_file else _strip_prefix(pf.target_file)
        if tgt:
            added = [(ln.target_line_no, ln.value.rstrip("\r\n")) for h in pf for ln in h if ln.is_added]
            out += _scan_lines(tgt, added)
    return out


def find_violations(
    patch: str,
    read_pre: Reader,
    *,
    read_post: Reader | None = None,
    protected_paths: Iterable[str] = (),
    reference_patch: str | None = None,
    touched: Iterable[str] | None = None,
) -> list[Violation]:
    """Every protected change ``patch`` makes (empty list = allowed); see the module doc.

    ``touched``: the paths the patch really changed (the verifier compares the patched tree with the
    base tree); default: the paths its headers name, which a prefix other than ``a/``/``b/`` hides."""
    allowed_rules: set[str] = set()
    allowed_sections: list[tuple[str, object]] = []
    if reference_patch and reference_patch.strip():
        ref = _pure_violations(reference_patch, read_pre, [])
        allowed_rules = {v.rule for v in ref if v.rule not in ("pytest-config", UNCHECKED)}
        rset = parse_patch(reference_patch)
        if rset is not None:
            for path, post in pure_post_images(rset, read_pre, _is_config).items():
                if not isinstance(post, _Unapplicable):
                    try:
                        allowed_sections.append((path, pytest_section(PurePosixPath(path).name, post)))
                    except ValueError:
                        pass
    touched = patch_files(patch) if touched is None else set(touched)
    out = _name_violations(touched, set(protected_paths))
    if read_post is None:
        found = _pure_violations(patch, read_pre, allowed_sections)
    else:
        found = []
        for path in sorted(touched):
            ok_pre, pre, err_pre = _safe_read(read_pre, path)
            ok_post, post, err_post = _safe_read(read_post, path)
            if not (ok_pre and ok_post):
                if _is_config(path) or PurePosixPath(path).suffix.lower() not in DOC_SUFFIXES:
                    found.append(Violation(path, UNCHECKED, f"{path}: could not be read to check it "
                                           f"({err_pre or err_post}); rule: {UNCHECKED}"))
                continue
            if _is_config(path):
                v = _config_violation(path, pre, post, allowed_sections)
                if v:
                    found.append(v)
            if pre != post:
                found += _scan_lines(path, added_lines(pre, post))
    out += [v for v in found if v.rule not in allowed_rules]
    return out


def protected_changes(patch: str, read_pre: Reader, **kwargs) -> list[str]:
    """The messages of :func:`find_violations` (one per broken rule; empty = allowed)."""
    return [v.message for v in find_violations(patch, read_pre, **kwargs)]


def tree_reader(root: str | Path) -> Reader:
    """Read ``path`` under ``root`` as text (None when absent or not a file).

    A path that leads (through a symlink) out of ``root`` raises ``ValueError``: pytest would read
    a file the check cannot vouch for.
    """
    base = Path(root).resolve()

    def read(path: str) -> str | None:
        p = base / path
        if not p.exists() and not p.is_symlink():
            return None
        real = p.resolve()
        if real != base and base not in real.parents:
            raise ValueError(f"{path} leads out of the repository")
        if not real.is_file():
            return None
        return real.read_bytes().decode("utf-8", errors="replace")

    return read
