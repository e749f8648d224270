"""``Verifier.verify(task, patch) -> Verdict``: apply a model patch to a fresh copy and run the tests.

Steps (SWE-bench's harness, on local processes):

1. Reject before touching anything: an empty patch (``error="empty patch"``), text with no file
   headers (``malformed``), a patch that touches *protected files* (see below).
2. Fresh workspace at ``base_commit``; apply with ``git apply``, then ``git apply --3way``, then
   ``patch --fuzz`` (each on a clean tree, inside the sandbox). None applies -> NO, not applied.
3. Apply the task's ``test_patch`` (a failure here is the task's fault: infra failure).
4. Run exactly FAIL_TO_PASS ∪ PASS_TO_PASS with pytest, writing junit XML; each test has a per-test
   limit (a hanging test FAILS with a message saying so); the whole run has ``timeout_s``.
5. Statuses come from the junit XML (console output is never parsed, so fake ``PASSED`` lines do
   nothing); grading uses SWE-bench's rules (:mod:`swetrain.env.grading`).

Protected tests and configuration (:mod:`swetrain.env.protect`): a patch that touches a test file
of the task (test patch files, files holding F2P/P2P tests), ``conftest.py``, ``pytest.ini``,
``.pytest.ini``, ``pytest.toml``, ``sitecustomize.py`` / ``usercustomize.py`` or ``.git/``; that
changes the pytest section of ``tox.ini`` / ``setup.cfg`` / ``pyproject.toml`` (other sections may
change); or whose added lines skip, deselect or xfail tests (``pytest.xfail(``, ``mark.skip``,
``collect_ignore``, pytest hooks, ``addopts``, ...) gets ``status NO`` with ``error`` and
``diagnostics`` naming each file, line and rule; no test is run. The check runs on the patch text
before anything is created, and again on the patched tree right after applying (so fuzzy, binary
or context diffs and symlinks are judged by what pytest would actually read).

Infra failures (``infra_failure=True``, never a model failure): the repository or environment is
missing, the task lists no tests, the test patch does not apply, the whole test run exceeded
``timeout_s``, or the test command produced no junit report at all (pytest missing or crashed
before reporting: a non-zero exit with no parsed results is never a pass), or the bubblewrap
sandbox was killed from outside while it applied the patch or ran the tests (bwrap's own process
ended by a signal; the patch's code cannot do that, its signals come back as exit 128+N). A run that
reported results but exited non-zero without any failing test is graded NO (not a pass).
"""

from __future__ import annotations

import shlex
import time
import uuid
from pathlib import Path

from swetrain.env.backend import WorkspaceBackend, check_sandbox, default_sandbox, open_workspace
from swetrain.env.grading import PASSING_F2P, PASSING_P2P, grade, parse_junit, statuses_for
from swetrain.env.protect import PROTECTED_NAMES, patch_files  # noqa: F401 (re-exported: older imports)
from swetrain.env.protect import UNCHECKED, Violation, find_violations, tree_reader
from swetrain.env.stable import stable_output
from swetrain.env.verdict import TestResult, Verdict
from swetrain.env.workspace import PYTEST_PLUGIN_DIR, Limits, WorkspaceError, pristine_snapshot
from swetrain.tasks.record import Task

PLUGIN_DIR = PYTEST_PLUGIN_DIR  # on PYTHONPATH of the test command (bound into the sandbox)
TRACEBACK_CHARS = 1500
DIAGNOSTICS_CHARS = 8000


def task_protected_paths(task: Task) -> set[str]:
    """Files of this task the model may not touch: the test patch's files and the F2P/P2P files."""
    protected = patch_files(task.test_patch) if task.test_patch else set()
    return protected | {t.split("::", 1)[0] for t in task.tests}


def _pristine_reader(task: Task):
    """Lazy reader of the base commit's files (None for every file when there is no snapshot)."""
    state: dict = {}

    def read(path: str) -> str | None:
        if "reader" not in state:
            try:
                state["reader"] = tree_reader(pristine_snapshot(task))
            except (WorkspaceError, OSError):
                state["reader"] = lambda _p: None
        return state["reader"](path)

    return read


def _refused(iid: str, violations: list[Violation], **kw) -> Verdict:
    """NO without running tests: every broken protection rule, named with its file and line."""
    reasons = [str(v) for v in violations]
    shown = "; ".join(reasons[:4]) + (f"; and {len(reasons) - 4} more" if len(reasons) > 4 else "")
    return Verdict(
        instance_id=iid, error=f"patch refused (protected tests or test configuration): {shown}",
        diagnostics=_clip(
            "The patch was rejected without running tests because it changes protected test files or "
            "pytest configuration, or skips, deselects or xfails tests:\n"
            + "\n".join(f"- {r}" for r in reasons)
            + "\nFix the source code so the tests pass; do not change tests or their configuration, and do "
            "not skip or xfail tests.", DIAGNOSTICS_CHARS),
        **kw,
    )


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


class Verifier:
    """Judge patches on tasks. Thread-safe: every call uses its own fresh workspace."""

    APPLY_METHODS = (
        ("git-apply", "git apply --verbose --binary --whitespace=nowarn -"),
        ("git-apply-3way", "git apply --verbose --binary --3way --whitespace=nowarn -"),
        ("patch-fuzz", "patch --batch --fuzz=5 -p1 --forward --no-backup-if-mismatch -r - "),
    )

    def __init__(
        self,
        *,
        timeout_s: float = 300,
        limits: Limits | None = None,
        test_timeout_s: float = 60,
        root: str | Path | None = None,
        isolated: bool | None = None,
        sandbox: str | None = None,
    ):
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.timeout_s = timeout_s
        self.test_timeout_s = test_timeout_s
        self.limits = limits or Limits(timeout_s=timeout_s)
        self.root = root
        self.isolated = isolated
        self.sandbox = check_sandbox(sandbox or default_sandbox())  # None: --sandbox of the command, else local

    # ------------------------------------------------------------------------------------------
    def verify(self, task: Task, patch: str) -> Verdict:
        """Judge ``patch`` on ``task``; always returns a Verdict (never raises for bad input)."""
        start = time.monotonic()
        verdict = self._verify(task, patch if isinstance(patch, str) else "")
        verdict.duration_s = round(time.monotonic() - start, 3)
        return verdict

    def _verify(self, task: Task, patch: str) -> Verdict:
        iid = task.instance_id
        if not task.tests:
            return _infra(iid, "task lists no FAIL_TO_PASS or PASS_TO_PASS tests")
        if not patch.strip():
            return Verdict(
                instance_id=iid, error="empty patch",
                diagnostics="The submitted patch is empty: no file was changed, so the issue is not fixed.",
            )
        touched = patch_files(patch)
        if not touched:
            return Verdict(
                instance_id=iid, error="malformed patch: no file headers (---/+++ or diff --git) found",
                diagnostics="The submitted patch is not a unified diff (no file headers were found).",
            )
        read_pre = _pristine_reader(task)
        protected = task_protected_paths(task)
        # config files whose hunks do not apply exactly are judged after applying (below)
        bad = [v for v in find_violations(patch, read_pre, protected_paths=protected, reference_patch=task.patch)
               if v.rule != UNCHECKED]
        if bad:
            return _refused(iid, bad)
        try:
            ws = open_workspace(task, sandbox=self.sandbox, root=self.root, limits=self.limits, isolated=self.isolated,
                                one_shot=True)
        except (WorkspaceError, OSError) as exc:
            return _infra(iid, f"could not create a workspace: {exc}")
        try:
            return self._run(task, ws, patch)
        finally:
            ws.close()

    def _run(self, task: Task, ws: WorkspaceBackend, patch: str) -> Verdict:
        iid = task.instance_id
        data = patch.encode("utf-8", errors="surrogateescape")
        if not data.endswith(b"\n"):
            data += b"\n"
        method, errors = None, []
        for name, cmd in self.APPLY_METHODS:
            res = ws.run(cmd, timeout=60, stdin=data)
            if ws.crashed(res):
                return _infra(iid, f"{_killed(ws, res)} while applying the patch ({name})")
            if res.returncode == 0 and not res.timed_out:
                method = name
                break
            errors.append(f"{name}: {_clip(res.output, 600)}")
            ws.reset()
        if method is None:
            return Verdict(
                instance_id=iid, error="patch does not apply: " + _clip(errors[0], 400),
                diagnostics="The patch could not be applied to the repository at the base commit:\n"
                + _clip("\n".join(errors), 1500),
            )
        # the same rules on the patched tree itself (fuzzy, binary and context diffs, symlinks)
        bad = find_violations(patch, ws.base_reader(), read_post=ws.reader(),
                              protected_paths=task_protected_paths(task), reference_patch=task.patch)
        if bad:
            return _refused(iid, bad, patch_applied=True, apply_method=method)
        if task.test_patch.strip():
            res = ws.run("git apply --verbose --binary -", timeout=60, stdin=task.test_patch.encode())
            if ws.crashed(res):
                return _infra(iid, f"{_killed(ws, res)} while applying the test patch", patch_applied=True,
                              apply_method=method)
            if res.returncode != 0:
                return _infra(iid, f"the task's test patch does not apply after the model patch: {_clip(res.output, 600)}",
                              patch_applied=True, apply_method=method)
        junit = f".swetrain-junit-{uuid.uuid4().hex[:8]}.xml"
        base_cmd = task.test_cmd or "python -m pytest"
        ids = " ".join(shlex.quote(t) for t in task.tests)
        cmd = (
            f"export PYTHONPATH={shlex.quote(_plugin_dir(ws))}${{PYTHONPATH:+:$PYTHONPATH}}; "
            f"{base_cmd} -p swetrain_hang_guard --swetrain-test-timeout={self.test_timeout_s:g} "
            f"-rA -p no:cacheprovider -o junit_family=xunit1 --junitxml={junit} -- {ids}"
        )
        res = ws.run(cmd, timeout=self.timeout_s)
        if res.timed_out:
            return _infra(iid, f"the test run exceeded {self.timeout_s:g}s", patch_applied=True, apply_method=method,
                          output=res.output)
        if ws.crashed(res):
            return _infra(iid, f"{_killed(ws, res)} while running the tests",
                          patch_applied=True, apply_method=method, output=res.output)
        try:
            try:
                report = ws.read_file(junit)
            except OSError:
                raise ValueError(f"no junit report at {ws.agent_root}/{junit}") from None
            cases = parse_junit(report, f"{ws.agent_root}/{junit}")
        except ValueError as exc:
            return _infra(iid, f"the test command exited with {res.returncode} and produced no results ({exc})",
                          patch_applied=True, apply_method=method, output=res.output)
        found = statuses_for(task.tests, cases)
        results: list[TestResult] = []
        seen = set()
        for kind, ids_ in (("FAIL_TO_PASS", task.FAIL_TO_PASS), ("PASS_TO_PASS", task.PASS_TO_PASS)):
            for tid in ids_:
                if tid in seen:
                    continue
                seen.add(tid)
                case = found.get(tid)
                status = case.status if case else "MISSING"
                good = PASSING_F2P if kind == "FAIL_TO_PASS" else PASSING_P2P
                tb = "" if status in good else _clip(case.text if case else "", TRACEBACK_CHARS)
                results.append(TestResult(test_id=tid, kind=kind, status=status, traceback=tb))
        status_map = {r.test_id: r.status for r in results if r.status != "MISSING"}
        status, _grader = grade(status_map, task.FAIL_TO_PASS, [t for t in task.PASS_TO_PASS if t not in task.FAIL_TO_PASS])
        error = None
        any_failure = any(c.status in ("FAILED", "ERROR") for c in cases)
        if res.returncode != 0 and not any_failure and status != "NO":
            status = "NO"
            error = f"the test command exited with {res.returncode} but reported no failing test; not counted as a pass"
        requested = {id(c) for c in found.values()}
        collection = [c for c in cases if c.status == "ERROR" and id(c) not in requested]
        verdict = Verdict(
            instance_id=iid,
            resolved=status == "FULL",
            status=status,  # type: ignore[arg-type]
            patch_applied=True,
            apply_method=method,
            error=error,
            tests=results,
        )
        verdict.diagnostics = _diagnostics(verdict, collection, res.output)
        return verdict


def _sandbox_killed(ws, res) -> bool:
    """The sandbox itself ended by a signal (killed from outside: OOM killer, operator)."""
    return bool(ws.crashed(res))


def _killed(ws, res) -> str:
    why = getattr(ws, "crash_reason", None)
    return why() if callable(why) else f"the sandbox was killed (signal {-res.returncode})"


def _plugin_dir(ws) -> str:
    """Where the sandbox sees swetrain's pytest plugins (the docker backend copies them in)."""
    plugins = getattr(ws, "pytest_plugin_dir", None)
    return plugins() if callable(plugins) else str(PLUGIN_DIR)


def _infra(iid: str, reason: str, *, patch_applied: bool = False, apply_method: str | None = None,
           output: str = "") -> Verdict:
    diag = f"Verification could not be completed (infrastructure problem): {reason}."
    if output:
        diag += "\nLast output of the test command:\n" + _clip(output[-3000:], 1500)
    return Verdict(instance_id=iid, infra_failure=True, infra_reason=reason, patch_applied=patch_applied,
                   apply_method=apply_method, diagnostics=diag)


def _diagnostics(v: Verdict, collection_errors, output: str) -> str:
    """What the agent reads about a failed attempt: failing tests with truncated tracebacks."""
    f2p = [t for t in v.tests if t.kind == "FAIL_TO_PASS"]
    p2p = [t for t in v.tests if t.kind == "PASS_TO_PASS"]
    f_ok = sum(t.status in PASSING_F2P for t in f2p)
    p_ok = sum(t.status in PASSING_P2P for t in p2p)
    lines = [f"Result: {v.status}. Tests that must now pass: {f_ok}/{len(f2p)} passed; "
             f"tests that must keep passing: {p_ok}/{len(p2p)} passed."]
    if v.error:
        lines.append(f"Note: {v.error}.")
    for t in v.tests:
        if t.traceback or t.status == "MISSING" or (t.kind == "FAIL_TO_PASS" and t.status not in PASSING_F2P):
            why = ": the test was not found or not collected" if t.status == "MISSING" else ""
            lines.append(f"\n{t.status} {t.test_id} ({'must now pass' if t.kind == 'FAIL_TO_PASS' else 'must keep passing'}){why}")
            if t.traceback:
                lines.append(t.traceback)
    for c in collection_errors[:3]:
        lines.append(f"\nERROR collecting {c.classname or c.name}:\n{_clip(c.text, TRACEBACK_CHARS)}")
    text = "\n".join(lines)
    if v.status == "NO" and not any(t.traceback for t in v.tests) and not collection_errors and output:
        text += "\n\nTest output (tail):\n" + _clip(output[-2000:], 1500)
    return _clip(stable_output(text), DIAGNOSTICS_CHARS)  # a seed reproduces attempt 2 (env/stable.py)
