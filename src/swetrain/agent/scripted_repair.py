"""The scripted repair agent: finds a fix by running tests (never reading the gold patch) and turns
it into a clean, formulaic demonstration trajectory in the agent's own chat format.

Every action of the demonstration is derivable from what the agent has seen so far -- no hidden
knowledge -- so a small policy can imitate it:

    execute_bash  {"cmd": TEST_CMD}                         -> first failing test + short traceback
    execute_bash  {"cmd": grep -n -A 20 "def F(" P}         -> F's source with line numbers
    file_editor   {"command": "str_replace", "path": P, "old_str": OLD, "new_str": NEW}
    execute_bash  {"cmd": TEST_CMD}                         -> all tests pass
    finish        {"command": "submit"}

``P`` and ``F`` must be named by the issue or the first observation: a backticked
``pkg.mod.Class.F`` in the issue (``P`` = ``pkg/mod.py``), a frame ``P:line: in F`` of the
traceback (deepest first), or a function ``F`` called on a traceback line and defined in a file
that a frame or the issue names. ``OLD`` must lie in the lines the grep shows.

The search behind it (not shown in the demonstration) runs inside a real workspace of the task:
candidate single-line edits inside those functions are the inverse-style rewrites of
:mod:`swetrain.tasks.synth.mutate` (flip a comparison, shift a boundary, swap ``+``/``-``, invert an
``if``, drop a ``not``, swap arguments / branches, ...) plus integer ``+-1``, removing a
``break`` and undoing a one-keystroke typo of a repository name (:func:`typo_fixes`, the crash
tier's NameError / AttributeError / unexpected keyword); each is written, the failing tests are re-run, and the first edit that makes them pass
without breaking the rest of the suite wins.

The demonstration is replayed through :func:`swetrain.agent.loop.run_episode` with a
:class:`~swetrain.agent.scripted.ScriptedPolicy`, so its token ids, assistant mask and observations
are exactly those a model would produce and see.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from swetrain.agent.format import tool_call_text
from swetrain.agent.loop import PatchVerifier
from swetrain.tasks.synth.mutate import IDENTIFIER, typo_sources

TEST_CMD = "python -m pytest -q -x --tb=short -p no:cacheprovider 2>&1 | tail -n 25"
#: Lines of a function the locating grep shows after its ``def`` line.
GREP_AFTER = 20
#: a dotted module name in backticks in issue text (```pkg.mod```); group 1 is the name
BACKTICKED_MODULE = re.compile(r"`([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+)`")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - .*)?$", re.M)
#: a pytest ``--tb=short`` traceback frame ``path.py:LINE: in FUNC``; groups: path, line, function
TRACEBACK_FRAME = re.compile(r"^(\S+\.py):(\d+): in (\w+)", re.M)
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_INT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


@dataclass
class RepairPlan:
    """A verified single-line fix and the function that holds it."""

    path: str  # relative to the repository root
    line: int  # 1-based line of the fix
    old: str  # exact old text (one line, or two when one line is not unique)
    new: str
    function: str  # the function holding the fix, located with :func:`grep_cmd`
    failing_tests: list[str] = field(default_factory=list)
    candidates_tried: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def grep_cmd(path: str, function: str) -> str:
    """The command that shows ``function`` of ``path`` with line numbers."""
    return f'grep -n -A {GREP_AFTER} "def {function}(" {path}'


def demo_messages(plan: RepairPlan) -> list[str]:
    """The five assistant messages of the demonstration."""
    return [
        tool_call_text("execute_bash", {"cmd": TEST_CMD}),
        tool_call_text("execute_bash", {"cmd": grep_cmd(plan.path, plan.function)}),
        tool_call_text("file_editor", {"command": "str_replace", "path": plan.path, "old_str": plan.old, "new_str": plan.new}),
        tool_call_text("execute_bash", {"cmd": TEST_CMD}),
        tool_call_text("finish", {"command": "submit"}),
    ]


# ---------------------------------------------------------------------------------- search
def is_test_file(path: str) -> bool:
    """True for a path of a test file or under a tests folder (``tests/...``, ``test_*.py``, ``conftest.py``)."""
    name = Path(path).name
    return "tests/" in path or path.startswith("tests") or name.startswith("test_") or name == "conftest.py"


class SourceTree:
    """The repository's Python files, read once: from a host folder or from a workspace of any
    backend (through ``WorkspaceBackend.walk``, so a container's repository works the same)."""

    def __init__(self, root: Any):
        if isinstance(root, (str, Path)):
            base = Path(root)
            files = ((p.relative_to(base).as_posix(), p) for p in sorted(base.rglob("*.py")) if p.is_file())
            self.files = {rel: p.read_text(encoding="utf-8", errors="replace") for rel, p in files}
        else:
            self.files = {rel: data.decode("utf-8", errors="replace") for rel, data in root.walk(".")
                          if rel.endswith(".py")}

    def is_file(self, rel: str) -> bool:
        return rel in self.files

    def read(self, rel: str) -> str:
        return self.files[rel]


def _tree(root: Any) -> SourceTree:
    return root if isinstance(root, SourceTree) else SourceTree(root)


def _source_files(tree: SourceTree) -> list[str]:
    out = []
    for rel in sorted(tree.files):
        if rel.startswith(".") or "/." in rel or is_test_file(rel):
            continue
        out.append(rel)
    return out


def function_spans(source: str) -> list[tuple[str, int, int]]:
    """(name, ``def`` line, last line) of every function/method in ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.name, node.lineno, node.end_lineno or node.lineno))
    return out


def issue_targets(root: Any, text: str) -> list[tuple[str, str | None]]:
    """(source file, function or None) for each backticked dotted name in ``text``: the longest
    prefix that is a module names the file (``pkg.mod`` -> ``pkg/mod.py``), the last remaining part
    the function (``pkg.mod.Class.method`` -> ``("pkg/mod.py", "method")``)."""
    tree = _tree(root)
    out: list[tuple[str, str | None]] = []
    for dotted in BACKTICKED_MODULE.findall(text):
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            base = "/".join(parts[:cut])
            rel = next((r for r in (base + ".py", base + "/__init__.py") if tree.is_file(r)), None)
            if rel is None or is_test_file(rel):
                continue
            target = (rel, parts[-1] if cut < len(parts) else None)
            if target not in out:
                out.append(target)
            break
    return out


def _candidate_functions(root: Any, output: str, issue: str = "") -> list[tuple[str, str, int, int]]:
    """(path, function, def line, last line) the issue and the first observation point at, in
    search order: a function the issue names, non-test traceback frames (deepest first), then
    functions called on traceback lines and defined in a file that a frame or the issue names."""
    tree = _tree(root)
    sources = {rel: tree.read(rel) for rel in _source_files(tree)}
    found: list[tuple[str, str, int, int]] = []
    seen: set[tuple[str, str]] = set()

    def add(path: str, name: str) -> None:
        if (path, name) in seen or path not in sources:
            return
        for fn, lo, hi in function_spans(sources[path]):
            if fn == name:
                seen.add((path, name))
                found.append((path, name, lo, hi))
                return

    targets = issue_targets(tree, issue)
    for path, name in targets:
        if name:
            add(path, name)
    frames = [(m.group(1).lstrip("./"), m.group(3)) for m in TRACEBACK_FRAME.finditer(output)]
    frames = [(p, n) for p, n in frames if not is_test_file(p)]
    for path, name in reversed(frames):
        add(path, name)
    files = list(dict.fromkeys([p for p, _ in reversed(frames)] + [p for p, _ in targets]))
    called = []
    for line in output.splitlines():
        for name in _CALL.findall(line):
            if name not in called and not name.startswith("test") and name not in ("assert", "print", "len", "raises"):
                called.append(name)
    for name in called:
        for path in files:
            add(path, name)
    return found


def _line_variants(line: str) -> list[str]:
    """Hand-written single-line inverse edits: integers +-1 and removing a ``break``."""
    out = []
    if line.strip() == "break":
        out.append(line[: len(line) - len(line.lstrip())] + "pass")
    for m in _INT.finditer(line):
        v = int(m.group(1))
        for w in (v - 1, v + 1):
            if w >= 0:
                out.append(line[: m.start()] + str(w) + line[m.end() :])
    return out


def typo_fixes(line: str, vocabulary: Mapping[str, int]) -> list[str]:
    """Rewrites of ``line`` that undo a one-keystroke typo, the inverse of the crash kinds: every
    identifier of the line that occurs only once in the repository (``vocabulary``: name -> count,
    :func:`vocabulary_of`) replaced by each repository name it is a typo of
    (:func:`swetrain.tasks.synth.mutate.typo_sources`, the inverse of ``typo_candidates``: a letter
    dropped, doubled or transposed).
    What a NameError / AttributeError / unexpected-keyword TypeError names is such an identifier,
    so the search reaches the fix from the traceback alone."""
    out: list[str] = []
    for m in IDENTIFIER.finditer(line):
        tok = m.group(0)
        if vocabulary.get(tok, 0) > 1:
            continue
        for name in typo_sources(tok):
            if name in vocabulary:
                fixed = line[: m.start()] + name + line[m.end() :]
                if fixed not in out:
                    out.append(fixed)
    return out


def vocabulary_of(tree: Any) -> Counter[str]:
    """Identifier-like words of the repository's non-test Python files, with their counts."""
    tree = _tree(tree)
    return Counter(w for rel in _source_files(tree) for w in IDENTIFIER.findall(tree.read(rel)))


def line_edits(source: str, path: str, lo: int, hi: int, vocabulary: Mapping[str, int] | None = None) -> list[tuple[int, str]]:
    """(line, new line text) single-line rewrites inside lines [lo, hi] of ``source``; with
    ``vocabulary`` (:func:`vocabulary_of`) also the typo inverses of :func:`typo_fixes`."""
    from swetrain.tasks.synth.mutate import apply_site, enumerate_sites

    lines = source.splitlines()
    edits: list[tuple[int, str]] = []
    seen: set[tuple[int, str]] = set()
    try:
        sites = [s for s in enumerate_sites(source, path) if lo <= s.line <= hi]
    except Exception:  # noqa: BLE001 - unparsable source: only line edits
        sites = []
    for site in sites:
        new_source = apply_site(source, site)
        if new_source is None:
            continue
        new_lines = new_source.splitlines()
        if len(new_lines) != len(lines):
            continue
        diff = [i for i, (a, b) in enumerate(zip(lines, new_lines)) if a != b]
        if len(diff) != 1:
            continue
        key = (diff[0] + 1, new_lines[diff[0]])
        if key not in seen:
            seen.add(key)
            edits.append(key)
    for i in range(lo - 1, min(hi, len(lines))):
        variants = _line_variants(lines[i])
        if vocabulary is not None:
            variants += typo_fixes(lines[i], vocabulary)
        for variant in variants:
            key = (i + 1, variant)
            if key not in seen:
                seen.add(key)
                edits.append(key)
    return edits


#: Lexical units of a line for :func:`minimal_edit`: short string literals, identifiers/numbers,
#: two-character operators, whitespace, any other single character.
_UNIT = re.compile(r"\"[^\"\\\n]{0,24}\"|'[^'\\\n]{0,24}'|\w+|==|!=|<=|>=|\*\*|//|->|<<|>>|[-+*/%&|^]=|\s+|[^\w\s]")


def _occurrences(text: str, span: str) -> int:
    """Occurrences of ``span`` in ``text``, overlapping ones included (``str.count`` skips them)."""
    n, at = 0, text.find(span)
    while at >= 0 and n < 2:
        n, at = n + 1, text.find(span, at + 1)
    return n


def minimal_edit(source: str, line: int, new_line: str) -> tuple[str, str] | None:
    """The shortest ``str_replace`` for replacing line ``line`` (1-based) of ``source`` by
    ``new_line``: ``old_str`` is the run of whole lexical units (:data:`_UNIT`) of that line that
    covers every changed character, never ends on whitespace, and occurs exactly once in
    ``source``, with the fewest units (ties: the one reaching least far left); ``new_str`` is the
    same span with the change applied.

    ``value > self.low`` -> ``value <= self.low`` gives ``("> self.low", "<= self.low")`` when
    ``> self`` also occurs elsewhere, a copy burden of ~3 tokens instead of the ~15-40 of the whole line (issue 16). Returns
    None when even the whole stripped line is not unique or nothing changes.
    """
    lines = source.splitlines()
    old = lines[line - 1]
    if old == new_line:
        return None
    p = 0
    while p < min(len(old), len(new_line)) and old[p] == new_line[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new_line)) - p and old[-1 - s] == new_line[-1 - s]:
        s += 1
    end_old, end_new = len(old) - s, len(new_line) - s
    units = [(m.start(), m.end()) for m in _UNIT.finditer(old)]
    if not units:
        return None
    # the units holding the changed characters; a pure insertion at p: the unit ending at p
    # (or the first unit, for an insertion at the start of the line)
    if end_old > p:
        first = next(k for k, (a, b) in enumerate(units) if b > p)
        last = next(k for k in range(len(units) - 1, -1, -1) if units[k][0] < end_old)
    else:
        first = last = next((k for k, (a, b) in enumerate(units) if a < p <= b), 0)

    def blank(k: int) -> bool:
        return old[units[k][0]:units[k][1]].isspace()

    while blank(first) and first > 0:
        first -= 1
    while blank(last) and last < len(units) - 1:
        last += 1
    solid = [k for k in range(len(units)) if not blank(k)]
    lefts = [k for k in solid if k <= first] or [first]
    rights = [k for k in solid if k >= last] or [last]
    # every widening whose ends are not whitespace, fewest units first (then the one reaching
    # least far to the left: issue text reads left to right, so the change leads the span)
    spans = sorted(((sum(1 for k in solid if lo <= k <= hi), first - lo, lo, hi) for lo in lefts for hi in rights))
    for _, _, lo, hi in spans:
        a, b = units[lo][0], units[hi][1]
        span = old[a:b]
        if not span.isspace() and _occurrences(source, span) == 1:
            return span, old[a:p] + new_line[p:end_new] + old[end_old:b]
    return None


def edit_strings(source: str, line: int, new_line: str) -> tuple[str, str]:
    """``(old_str, new_str)`` replacing line ``line`` of ``source`` by ``new_line``: the
    :func:`minimal_edit` span when one exists, else the whole line (with a neighbouring line when
    the line alone is not unique)."""
    edit = minimal_edit(source, line, new_line)
    if edit is not None:
        return edit
    lines = source.splitlines()
    old, new = lines[line - 1], new_line
    if _occurrences(source, old) == 1:
        return old, new
    if line >= 2:
        old2, new2 = lines[line - 2] + "\n" + old, lines[line - 2] + "\n" + new
        if _occurrences(source, old2) == 1:
            return old2, new2
    if line < len(lines):
        old3, new3 = old + "\n" + lines[line], new + "\n" + lines[line]
        if _occurrences(source, old3) == 1:
            return old3, new3
    raise ValueError("line is not unique in its file")


# One process per searched function: imports pytest once, then for each candidate edit writes the
# file and forks a child that runs the failing tests (then the whole suite) with ``pytest.main``;
# ~10x cheaper than a fresh interpreter per candidate. Runs inside the workspace's sandbox.
_RUNNER = r"""
import json, os, signal, sys
spec = json.loads(sys.stdin.read())
sys.dont_write_bytecode = True
sys.pycache_prefix = os.path.join(os.environ.get("TMPDIR", "/tmp"), ".swetrain-no-pyc")
import pytest

def run(args):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1); os.dup2(fd, 2)
        signal.alarm(int(spec["timeout"]))
        try:
            rc = pytest.main(args + ["-q", "-x", "-p", "no:cacheprovider"])
        except BaseException:
            rc = 99
        os._exit(int(rc))
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)

path, lines = spec["path"], spec["lines"]
ending = spec["ending"]
result = None
try:
    for i, (line, new) in enumerate(spec["edits"]):
        cur = list(lines)
        cur[line - 1] = new + ending[line - 1]
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(cur))
        if run(list(spec["tests"])) != 0:
            continue
        if spec["suite"] and run([]) != 0:
            continue
        result = i
        break
finally:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(lines))
print("SWETRAIN_RESULT " + json.dumps({"index": result}))
"""


def _cited_lines(output: str, path: str) -> list[int]:
    """Line numbers of ``path`` that traceback frames in ``output`` point at."""
    return [int(m.group(2)) for m in TRACEBACK_FRAME.finditer(output) if m.group(1).lstrip("./") == path]


def _try_edits(workspace: Any, path: str, source: str, edits: list[tuple[int, str]], tests: list[str], *,
               suite: bool, timeout: float) -> int | None:
    """Index of the first edit in ``edits`` that makes ``tests`` (and with ``suite`` the whole suite)
    pass, run in one forking pytest process inside the workspace; the file is restored afterwards."""
    lines = source.splitlines(keepends=True)
    spec = {
        "path": path,
        "lines": lines,
        "ending": ["\n" if ln.endswith("\n") else "" for ln in lines],
        "edits": edits,
        "tests": tests,
        "suite": suite,
        "timeout": max(1, int(timeout)),
    }
    budget = timeout * (2 * len(edits) + 2) + 30
    res = workspace.run("python -c " + shlex.quote(_RUNNER), timeout=budget, stdin=json.dumps(spec).encode())
    match = re.search(r"SWETRAIN_RESULT (\{.*\})", res.output)
    if not match:
        raise RuntimeError(f"scripted repair runner failed on {path}: {res.output[-500:]}")
    return json.loads(match.group(1))["index"]


def find_fix(
    workspace: Any, *, max_candidates: int = 80, timeout: float = 20.0, check_suite: bool = True, issue: str = ""
) -> RepairPlan | None:
    """Search a fix in ``workspace`` (left unchanged afterwards); None when none is found.

    Only fixes a demonstration can reach without hidden knowledge are searched (module docstring):
    functions named by the first observation (``TEST_CMD``'s output) or by ``issue`` (the problem
    statement), and lines the locating grep shows. A candidate must make every failing test pass;
    with ``check_suite`` the whole suite must pass too. Within a function, edits on lines the
    traceback points at are tried first, then by distance.
    """
    root = SourceTree(workspace)
    shown = workspace.run(TEST_CMD, timeout=120).output  # what the demonstration's first turn sees
    # the whole suite (no -x): every failing test must pass after the fix, not only the first one
    full = workspace.run("python -m pytest -q --tb=short -p no:cacheprovider 2>&1 | tail -n 300", timeout=120)
    failing = list(dict.fromkeys(_FAILED.findall(full.output)))
    if not failing:
        return None
    tried = 0
    vocabulary = vocabulary_of(root)
    for path, name, lo, hi in _candidate_functions(root, shown, issue):
        if tried >= max_candidates:
            return None
        source = root.read(path)
        hi = min(hi, lo + GREP_AFTER)
        edits = line_edits(source, path, lo, hi, vocabulary)
        cited = [c for c in _cited_lines(shown, path) if lo <= c <= hi]
        if cited:
            edits.sort(key=lambda e: min(abs(e[0] - c) for c in cited))
        usable = []
        for line, new_line in edits:
            try:
                usable.append((line, new_line, *edit_strings(source, line, new_line)))
            except ValueError:
                continue
        usable = usable[: max_candidates - tried]
        if not usable:
            continue
        index = _try_edits(workspace, path, source, [(u[0], u[1]) for u in usable], failing,
                           suite=check_suite, timeout=timeout)
        if index is None:
            tried += len(usable)
            continue
        line, new_line, old, new = usable[index]
        return RepairPlan(
            path=path,
            line=line,
            old=old,
            new=new,
            function=name,
            failing_tests=failing,
            candidates_tried=tried + index + 1,
        )
    return None


# ---------------------------------------------------------------------------- demonstrations
@dataclass
class Demonstration:
    instance_id: str
    plan: RepairPlan | None
    trajectory: Any = None  # swetrain.agent.trajectory.Trajectory (resolved) or None
    reason: str = ""


def demonstrate(
    task: Any,
    tokenizer: Any,
    *,
    verifier: PatchVerifier | None = None,
    max_candidates: int = 80,
    check_suite: bool = True,
    workspace_factory: Any = None,
    plan: RepairPlan | None = None,
) -> Demonstration:
    """Find a fix for ``task`` (or take ``plan``, a fix found earlier) and replay it as a
    demonstration trajectory (resolved, or a reason)."""
    from swetrain.agent.loop import EpisodeLimits, run_episode
    from swetrain.agent.scripted import ScriptedPolicy, TurnScript
    from swetrain.env.backend import open_workspace

    make_ws = workspace_factory or (lambda t: open_workspace(t))
    ws = make_ws(task)
    try:
        if plan is None:
            # without check_suite the search only re-runs the failing tests; the replay below is
            # still judged on the whole suite (or the verifier), so a fix breaking others is dropped
            plan = find_fix(ws, max_candidates=max_candidates, check_suite=check_suite, issue=task.problem_statement or "")
        if plan is None:
            return Demonstration(task.instance_id, None, None, "no single-line fix found in the functions the first observation names")
        ws.reset()
        script = TurnScript(demo_messages(plan))
        policy = ScriptedPolicy(tokenizer, script)
        limits = EpisodeLimits(max_turns=6, max_context_tokens=16384, max_tokens_per_call=1024)
        traj = run_episode(task, ws, policy, None, limits, verifier=verifier, seed=0)
        if verifier is None:
            check = ws.run("python -m pytest -q -p no:cacheprovider 2>&1 | tail -n 3")
            traj.resolved = bool(re.search(r"\bpassed\b", check.output)) and not re.search(r"\b(failed|error)", check.output)
        if not traj.resolved:
            return Demonstration(task.instance_id, plan, traj, "replayed demonstration did not resolve the task")
        return Demonstration(task.instance_id, plan, traj, "ok")
    finally:
        ws.close()
