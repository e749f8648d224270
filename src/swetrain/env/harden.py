"""What the verifier does so that a patch cannot fake its verdict (issue 30; threat model in docs/env.md).

* :func:`changed_paths` — which files a patch changed, from the patched tree compared with the
  base tree (never from the patch's header text, which ``x/``/``y/`` prefixes, ``patch --fuzz``
  and friends read differently from our parser);
* :func:`structural_violations` — new modules that would shadow the harness or the standard
  library at an import root, compiled code (``.pyc``, ``__pycache__``, ``.so``);
* :func:`restore_set` — test files and test configuration put back from the base tree before the
  tests run, whatever the patch did to them;
* :func:`harness_command` — the task's test command with ``python -m pytest`` replaced by the
  trusted runner (``pytest_plugins/swetrain_runner.py``);
* :func:`read_report` — the runner's report read without following links, regular files only,
  size-limited before reading, with a timeout;
* :func:`special_casing_flags` — added lines that read ``PYTEST_CURRENT_TEST``, inspect the call
  stack or import ``_pytest`` in non-test code (shown in the diagnostics).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import sys
import threading
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from swetrain.env.interface import WorkspaceBackend
from swetrain.env.protect import Violation, patch_files

REPORT_MAX_BYTES = 32 << 20
RUNNER = "swetrain_runner.py"

# modules the harness imports (besides the standard library): a new top-level module of this name
# at an import root of the repository is refused
HARNESS_MODULES = {
    "pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "exceptiongroup", "tomli", "tomllib",
    "colorama", "pygments", "site", "sitecustomize", "usercustomize", "swetrain_runner", "swetrain_hang_guard",
    "typing_extensions", "_virtualenv", "distutils", "setuptools", "pkg_resources", "_distutils_hack",
}
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dylib", ".dll")
TEST_DIRS = {"tests", "test"}


def _stdlib_names() -> set[str]:
    names = set(getattr(sys, "stdlib_module_names", ()))
    names |= set(sys.builtin_module_names)
    return {n for n in names if n != "__main__"}


SHADOWED = _stdlib_names() | HARNESS_MODULES


# ------------------------------------------------------------------------ changed paths
def changed_paths(ws: WorkspaceBackend) -> set[str] | None:
    """Every path the patch created, changed or deleted, from the trees themselves (None: unknown).

    Local backend: the working copy compared with the pristine snapshot on the host (type, mode,
    size, link target, bytes where the mtime moved), ignored files and ``.git`` included (only
    ``.git/index``, which ``git apply --3way`` writes, is skipped). Docker: ``git status`` inside
    the container, untracked and ignored files included.
    """
    trees = ws.host_trees()
    if trees is not None:
        return _compare_trees(*trees)
    res = ws.run("git -c core.fsmonitor=false -c core.untrackedCache=false status --porcelain=v1 -z "
                 "--untracked-files=all --ignored=matching --no-renames", timeout=60)
    if res.returncode != 0 or res.timed_out:
        return None
    out: set[str] = set()
    for entry in res.output.split("\0"):
        if len(entry) > 3 and entry[2] == " ":
            out.add(entry[3:].rstrip("/"))
    return out


def _compare_trees(work: Path, pristine: Path) -> set[str]:
    out: set[str] = set()

    def walk(root: Path) -> dict[str, os.stat_result]:
        found: dict[str, os.stat_result] = {}
        stack = [""]
        while stack:
            rel = stack.pop()
            try:
                entries = list(os.scandir(root / rel if rel else root))
            except OSError:
                continue
            for e in entries:
                path = f"{rel}/{e.name}" if rel else e.name
                if path == ".git/index":
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                found[path] = st
                if stat.S_ISDIR(st.st_mode):
                    stack.append(path)
        return found

    after, before = walk(work), walk(pristine)
    for path, st in after.items():
        old = before.get(path)
        if old is None:
            if not stat.S_ISDIR(st.st_mode):
                out.add(path)
            continue
        if stat.S_IFMT(st.st_mode) != stat.S_IFMT(old.st_mode):
            out.add(path)
        elif stat.S_ISDIR(st.st_mode):
            continue
        elif stat.S_ISLNK(st.st_mode):
            if os.readlink(work / path) != os.readlink(pristine / path):
                out.add(path)
        elif st.st_size != old.st_size or (st.st_mode & 0o111) != (old.st_mode & 0o111):
            out.add(path)
        elif st.st_mtime_ns != old.st_mtime_ns:
            try:
                if (work / path).read_bytes() != (pristine / path).read_bytes():
                    out.add(path)
            except OSError:
                out.add(path)
    for path, st in before.items():
        if path not in after and not stat.S_ISDIR(st.st_mode):
            out.add(path)
    return out


# ------------------------------------------------------------------------ rules on real paths
def is_test_path(path: str) -> bool:
    """A test module, conftest, or a file inside a ``tests``/``test`` folder."""
    p = PurePosixPath(path)
    name = p.name
    if name == "conftest.py" or name == "tests.py" or (name.startswith("test_") and name.endswith(".py")) \
            or name.endswith("_test.py"):
        return True
    return any(part in TEST_DIRS for part in p.parts[:-1])


def import_roots(task) -> set[str]:
    """Folders whose modules are top-level importable in the test run: the repository root, ``src``,
    and the folders of the task's test files (pytest's rootdir-relative insertion)."""
    roots = {"", "src"}
    for t in task.tests:
        parent = str(PurePosixPath(t.split("::", 1)[0]).parent)
        roots.add("" if parent == "." else parent)
    return roots


def structural_violations(changed: Iterable[str], task, base_exists) -> list[Violation]:
    """New modules shadowing the harness / standard library at an import root; compiled code."""
    gold = patch_files(task.patch) if task.patch else set()
    roots = import_roots(task)
    out: list[Violation] = []
    seen: set[str] = set()
    for path in sorted(changed):
        if path in gold:
            continue
        p = PurePosixPath(path)
        if p.suffix.lower() in COMPILED_SUFFIXES or "__pycache__" in p.parts:
            out.append(Violation(path, "compiled-code", f"{path}: adds or changes compiled code (bytecode or a "
                                 "binary extension), which runs without its source being checked; rule: compiled-code"))
            continue
        for root in roots:
            prefix = PurePosixPath(root) if root else None
            if prefix is not None:
                try:
                    rest = p.relative_to(prefix)
                except ValueError:
                    continue
            else:
                rest = p
            top = rest.parts[0]
            name = top.split(".", 1)[0] if len(rest.parts) == 1 else top
            if len(rest.parts) == 1 and not re.search(r"\.(py|pyw|so|pyd|pth)$|^[^.]+$", top):
                continue
            mod_path = str(prefix / top) if prefix else top
            if name in SHADOWED and mod_path not in seen and not base_exists(mod_path):
                seen.add(mod_path)
                out.append(Violation(path, "shadows-module", f"{path}: adds a module `{name}` at an import root "
                                     f"({root or 'the repository root'}), where it would replace the "
                                     f"{'test harness' if name in HARNESS_MODULES else 'standard library'}'s "
                                     "own; rule: shadows-module"))
    return out


def restore_set(changed: Iterable[str], task, protected: set[str]) -> list[str]:
    """Changed test files and test configuration to put back from the base tree (SWE-bench applies
    the test patch last for the same reason); files the gold patch changes are the fix, kept."""
    from swetrain.env.protect import PROTECTED_NAMES

    gold = patch_files(task.patch) if task.patch else set()
    out = []
    for path in sorted(changed):
        if path in gold or path.startswith(".git/") or path == ".git":
            continue
        name = PurePosixPath(path).name
        # tox.ini / setup.cfg / pyproject.toml are not restored whole: their pytest sections are
        # compared on the patched tree (rule pytest-config), other sections may change with a fix
        if path in protected or is_test_path(path) or name in PROTECTED_NAMES:
            out.append(path)
    return out


# ------------------------------------------------------------------------ the command
_PY_M_PYTEST = re.compile(r"(?:^|(?<=[\s;&|(]))((?:[^\s;&|()]*/)?python[\d.]*)\s+-m\s+pytest\s*$")
_BARE_PYTEST = re.compile(r"(?:^|(?<=[\s;&|(]))(?:[^\s;&|()]*/)?(?:py\.test|pytest)\s*$")


def harness_command(test_cmd: str, plugin_dir: str) -> str | None:
    """``test_cmd`` with its trailing ``python -m pytest`` (or ``pytest``) replaced by the trusted
    runner, ``PYTHONPATH`` handed over in ``SWETRAIN_REPO_PATH``; None for a command of another form."""
    cmd = test_cmd.strip()
    m = _PY_M_PYTEST.search(cmd)
    if m:
        prefix, py = cmd[:m.start()], m.group(1)
    else:
        m = _BARE_PYTEST.search(cmd)
        if not m:
            return None
        prefix, py = cmd[:m.start()], "python"
    runner = shlex.quote(f"{plugin_dir}/{RUNNER}")
    return f'{prefix}env -u PYTHONPATH SWETRAIN_REPO_PATH="${{PYTHONPATH-}}" {py} -s {runner}'


# ------------------------------------------------------------------------ reading the report
class ReportError(ValueError):
    """The report is missing (``missing=True``) or is not what the runner writes (tampered)."""

    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def _open_nofollow(root: Path, rel: str) -> int:
    """An fd of ``root/rel`` opened component by component without following any link."""
    parts = [p for p in PurePosixPath(rel).parts if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ReportError(f"bad report path {rel!r}")
    flags_dir = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fd = os.open(str(root), flags_dir)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags_dir, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def read_report(ws: WorkspaceBackend, rel: str, *, max_bytes: int = REPORT_MAX_BYTES, timeout_s: float = 20.0) -> bytes:
    """The report's bytes. Local: opened with O_NOFOLLOW on every component (O_NONBLOCK, so a FIFO
    never blocks), fstat-checked to be a regular file no larger than ``max_bytes`` *before* reading,
    read in a thread with a timeout. Docker: the backend's archive read (no links, regular files,
    size-limited). Raises ReportError."""
    trees = ws.host_trees()
    if trees is None:
        try:
            data = ws.read_file(rel)
        except FileNotFoundError:
            raise ReportError(f"no report at {rel}", missing=True) from None
        except (OSError, ValueError) as exc:
            raise ReportError(f"the report could not be read ({exc})") from None
        if len(data) > max_bytes:
            raise ReportError(f"the report is larger than {max_bytes} bytes")
        return data
    box: dict = {}

    def work_() -> None:
        try:
            try:
                fd = _open_nofollow(trees[0], rel)
            except FileNotFoundError:
                raise ReportError(f"no report at {rel}", missing=True) from None
            except OSError as exc:  # ELOOP: a link; ENOTDIR: a link or file where a folder was
                raise ReportError(f"the report path was replaced ({exc.strerror})") from None
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise ReportError("the report is not a regular file")
                if st.st_size > max_bytes:
                    raise ReportError(f"the report is larger than {max_bytes} bytes ({st.st_size})")
                chunks, total = [], 0
                while True:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > max_bytes:
                        raise ReportError(f"the report grew past {max_bytes} bytes while read")
                    chunks.append(chunk)
                box["data"] = b"".join(chunks)
            finally:
                os.close(fd)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    t = threading.Thread(target=work_, daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        raise ReportError(f"reading the report took longer than {timeout_s:g}s")
    if "error" in box:
        err = box["error"]
        raise err if isinstance(err, ReportError) else ReportError(f"the report could not be read ({err})")
    return box["data"]


# ------------------------------------------------------------------------ special-casing flags
_FLAG_RULES = [
    ("reads PYTEST_CURRENT_TEST", re.compile(r"PYTEST_CURRENT_TEST")),
    ("inspects the call stack", re.compile(r"\binspect\s*\.\s*(?:stack|currentframe|getouterframes|trace)\b"
                                           r"|\bsys\s*\.\s*_getframe\b|\bf_back\b|\btraceback\s*\.\s*(?:extract|walk)_stack\b"
                                           r"|\bsys\s*\.\s*_current_frames\b|\bsettrace\b|\bsetprofile\b")),
    ("imports pytest's internals", re.compile(r"^\s*(?:from|import)\s+_pytest\b|\b__import__\s*\(\s*['\"]_?pytest")),
    ("looks for pytest at run time", re.compile(r"['\"]_?pytest['\"]\s+in\s+sys\s*\.\s*modules|\bsys\s*\.\s*modules\s*\[\s*['\"]_?pytest")),
    ("reads or ends the process abruptly", re.compile(r"\bos\s*\.\s*_exit\b|\batexit\s*\.\s*register\b")),
]


def special_casing_flags(changed: Iterable[str], base_read, post_read) -> list[str]:
    """Added lines of non-test files that special-case the test run (flags, not refusals)."""
    from swetrain.env.protect import DOC_SUFFIXES, added_lines

    flags = []
    for path in sorted(changed):
        if is_test_path(path) or PurePosixPath(path).suffix.lower() in DOC_SUFFIXES:
            continue
        try:
            pre, post = base_read(path), post_read(path)
        except (OSError, ValueError):
            continue
        if post is None or pre == post:
            continue
        for lineno, text in added_lines(pre, post):
            for what, rx in _FLAG_RULES:
                if rx.search(text):
                    snippet = text.strip()[:100]
                    flags.append(f"{path}:{lineno}: {what} (`{snippet}`)")
                    break
        if len(flags) > 20:
            break
    return flags
