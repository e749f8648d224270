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

Protected files (the model may not modify, create or delete them): every file the test patch
touches, every file holding a FAIL_TO_PASS / PASS_TO_PASS test, any ``conftest.py``, ``pytest.ini``,
``sitecustomize.py`` / ``usercustomize.py`` (they could rewrite test outcomes), and anything under
``.git/``. Such a patch gets ``status NO`` with ``error`` naming the files; nothing is run.

Infra failures (``infra_failure=True``, never a model failure): the repository or environment is
missing, the task lists no tests, the test patch does not apply, the whole test run exceeded
``timeout_s``, or the test command produced no junit report at all (pytest missing or crashed
before reporting: a non-zero exit with no parsed results is never a pass). A run that reported
results but exited non-zero without any failing test is graded NO (not a pass).
"""

from __future__ import annotations

import re
import shlex
import time
import uuid
from pathlib import Path, PurePosixPath

from swetrain.env.grading import PASSING_F2P, PASSING_P2P, grade, read_junit, statuses_for
from swetrain.env.verdict import TestResult, Verdict
from swetrain.env.workspace import PYTEST_PLUGIN_DIR, Limits, Workspace, WorkspaceError
from swetrain.tasks.record import Task

PLUGIN_DIR = PYTEST_PLUGIN_DIR  # on PYTHONPATH of the test command (bound into the sandbox)
PROTECTED_NAMES = {"conftest.py", "pytest.ini", "sitecustomize.py", "usercustomize.py"}
TRACEBACK_CHARS = 1500
DIAGNOSTICS_CHARS = 8000

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


def protected_files(task: Task, touched: set[str]) -> list[str]:
    """The subset of ``touched`` that a model patch must not change (rule in the module doc)."""
    protected = patch_files(task.test_patch) if task.test_patch else set()
    protected |= {t.split("::", 1)[0] for t in task.tests}
    bad = []
    for f in sorted(touched):
        p = PurePosixPath(f)
        if f in protected or p.name in PROTECTED_NAMES or (p.parts and p.parts[0] == ".git"):
            bad.append(f)
    return bad


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
    ):
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.timeout_s = timeout_s
        self.test_timeout_s = test_timeout_s
        self.limits = limits or Limits(timeout_s=timeout_s)
        self.root = root
        self.isolated = isolated

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
        bad = protected_files(task, touched)
        if bad:
            return Verdict(
                instance_id=iid, error=f"patch modifies protected test files: {', '.join(bad)}",
                diagnostics=(
                    "The patch was rejected without running tests because it modifies test files or "
                    f"test configuration: {', '.join(bad)}. Fix the source code, not the tests."
                ),
            )
        try:
            ws = Workspace.create(task, root=self.root, limits=self.limits, isolated=self.isolated)
        except (WorkspaceError, OSError) as exc:
            return _infra(iid, f"could not create a workspace: {exc}")
        try:
            return self._run(task, ws, patch)
        finally:
            ws.close()

    def _run(self, task: Task, ws: Workspace, patch: str) -> Verdict:
        iid = task.instance_id
        data = patch.encode("utf-8", errors="surrogateescape")
        if not data.endswith(b"\n"):
            data += b"\n"
        method, errors = None, []
        for name, cmd in self.APPLY_METHODS:
            res = ws.run(cmd, timeout=60, stdin=data)
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
        if task.test_patch.strip():
            res = ws.run("git apply --verbose --binary -", timeout=60, stdin=task.test_patch.encode())
            if res.returncode != 0:
                return _infra(iid, f"the task's test patch does not apply after the model patch: {_clip(res.output, 600)}",
                              patch_applied=True, apply_method=method)
        junit = f".swetrain-junit-{uuid.uuid4().hex[:8]}.xml"
        base_cmd = task.test_cmd or "python -m pytest"
        ids = " ".join(shlex.quote(t) for t in task.tests)
        cmd = (
            f"export PYTHONPATH={shlex.quote(str(PLUGIN_DIR))}${{PYTHONPATH:+:$PYTHONPATH}}; "
            f"{base_cmd} -p swetrain_hang_guard --swetrain-test-timeout={self.test_timeout_s:g} "
            f"-rA -p no:cacheprovider -o junit_family=xunit1 --junitxml={junit} -- {ids}"
        )
        res = ws.run(cmd, timeout=self.timeout_s)
        if res.timed_out:
            return _infra(iid, f"the test run exceeded {self.timeout_s:g}s", patch_applied=True, apply_method=method,
                          output=res.output)
        try:
            cases = read_junit(ws.path / junit)
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
    return _clip(text, DIAGNOSTICS_CHARS)
