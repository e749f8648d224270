"""``Verifier.verify(task, patch) -> Verdict``: apply a model patch to a fresh copy and run the tests.

Steps (SWE-bench's harness, on local processes):

1. Reject before touching anything: an empty patch (``error="empty patch"``), text with no file
   headers (``malformed``); then, in a fresh workspace at ``base_commit`` (any backend:
   :func:`~swetrain.env.backend.open_workspace`), before anything runs in it, a patch that
   touches *protected files* (see below), judged against the workspace's base files.
2. Apply with ``git apply``, then ``git apply --3way``, then
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
before anything runs, and again on the patched tree right after applying (so fuzzy, binary
or context diffs and symlinks are judged by what pytest would actually read).

Hardened (issue 30, the default; ``hardened=False`` keeps the path described above for benches): the
files a patch changed come from the patched tree compared with the base tree (:mod:`swetrain.env.harden`),
changed test files are restored from the base tree, new modules shadowing the harness or the standard
library and compiled code are refused, the tests run under the trusted runner
(``pytest_plugins/swetrain_runner.py``: harness imported before the repository is on ``sys.path``,
canary tests with random names, renamed copies of the FAIL_TO_PASS tests, integrity checks of pytest's
own code), its report is read without following links; a wrong canary, changed pytest internals, a
skip/xfail from non-test code or a replaced report give ``status="TAMPERED"`` (reward 0, the model's
failure); a crash or hang is the patch's (NO) when the base tree's run completes. See docs/env.md,
"Threat model".

Infra failures (``infra_failure=True``, never a model failure): the repository or environment is
missing, the task lists no tests, the test patch does not apply, the whole test run exceeded
``timeout_s``, or the test command produced no junit report at all (pytest missing or crashed
before reporting: a non-zero exit with no parsed results is never a pass), or the bubblewrap
sandbox was killed from outside while it applied the patch or ran the tests (bwrap's own process
ended by a signal; the patch's code cannot do that, its signals come back as exit 128+N). A run that
reported results but exited non-zero without any failing test is graded NO (not a pass).
"""

from __future__ import annotations

import json
import shlex
import time
import uuid
from pathlib import Path

from swetrain.env.backend import WorkspaceBackend, check_sandbox, default_sandbox, open_workspace
from swetrain.env.grading import PASSING_F2P, PASSING_P2P, JunitCase, grade, junit_key, parse_junit, statuses_for
from swetrain.env.harden import (
    ReportError,
    changed_paths,
    harness_command,
    read_report,
    restore_set,
    special_casing_flags,
    structural_violations,
)
from swetrain.env.protect import UNCHECKED, Violation, find_violations, patch_files
from swetrain.env.stable import stable_output
from swetrain.env.verdict import TestResult, Verdict
from swetrain.env.interface import TEST_TIMEOUT_S, Limits, WorkspaceError
from swetrain.tasks.record import Task

TRACEBACK_CHARS = 1500
DIAGNOSTICS_CHARS = 8000


def task_protected_paths(task: Task) -> set[str]:
    """Files of this task the model may not touch: the test patch's files and the F2P/P2P files."""
    protected = patch_files(task.test_patch) if task.test_patch else set()
    return protected | {t.split("::", 1)[0] for t in task.tests}


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
        test_timeout_s: float = TEST_TIMEOUT_S,
        root: str | Path | None = None,
        isolated: bool | None = None,
        sandbox: str | None = None,
        hardened: bool = True,
    ):
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.timeout_s = timeout_s
        self.test_timeout_s = test_timeout_s
        self.limits = limits or Limits(timeout_s=timeout_s)
        self.root = root
        self.isolated = isolated
        self.sandbox = check_sandbox(sandbox or default_sandbox())  # None: --sandbox of the command, else local
        # hardened (issue 30): real changed paths, restored tests, the trusted runner with canaries and
        # renamed copies, a safe report read, the base tree's run behind an infra verdict. False: the
        # verifier as it was before (kept for the bench and as the planted regression of redteam)
        self.hardened = hardened

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
        if self.hardened and not task.FAIL_TO_PASS:
            # ungradable: any patch keeping PASS_TO_PASS would be FULL (0 of 0 tests to fix)
            return _infra(iid, "task lists no FAIL_TO_PASS tests; it cannot be graded")
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
        try:
            ws = open_workspace(task, sandbox=self.sandbox, root=self.root, limits=self.limits, isolated=self.isolated,
                                one_shot=True)
        except (WorkspaceError, OSError) as exc:
            return _infra(iid, f"could not create a workspace: {exc}")
        try:
            # the protection rules on the patch text, before anything runs; config files whose
            # hunks do not apply exactly are judged after applying (in _run)
            bad = [v for v in find_violations(patch, ws.base_reader(), protected_paths=task_protected_paths(task),
                                              reference_patch=task.patch) if v.rule != UNCHECKED]
            if bad:
                return _refused(iid, bad)
            return self._run(task, ws, patch) if self.hardened else self._run_legacy(task, ws, patch)
        finally:
            ws.close()

    def _run_legacy(self, task: Task, ws: WorkspaceBackend, patch: str) -> Verdict:
        iid = task.instance_id
        data = patch.encode("utf-8", errors="surrogateescape")
        if not data.endswith(b"\n"):
            data += b"\n"
        method, errors = None, []
        for name, cmd in self.APPLY_METHODS:
            res = ws.run(cmd, timeout=60, stdin=data)
            if ws.crashed(res):
                return _infra(iid, f"{ws.crash_reason(res)} while applying the patch ({name})")
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
                return _infra(iid, f"{ws.crash_reason(res)} while applying the test patch", patch_applied=True,
                              apply_method=method)
            if res.returncode != 0:
                return _infra(iid, f"the task's test patch does not apply after the model patch: {_clip(res.output, 600)}",
                              patch_applied=True, apply_method=method)
        junit, cmd = self._junit_command(task, ws)
        res = ws.run(cmd, timeout=self.timeout_s)
        if res.timed_out:
            return _infra(iid, f"the test run exceeded {self.timeout_s:g}s", patch_applied=True, apply_method=method,
                          output=res.output)
        if ws.crashed(res):
            return _infra(iid, f"{ws.crash_reason(res)} while running the tests",
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

    # ------------------------------------------------------------------------------------------
    def _apply(self, ws: WorkspaceBackend, iid: str, patch: str) -> tuple[str | None, Verdict | None]:
        data = patch.encode("utf-8", errors="surrogateescape")
        if not data.endswith(b"\n"):
            data += b"\n"
        errors = []
        for name, cmd in self.APPLY_METHODS:
            res = ws.run(cmd, timeout=60, stdin=data)
            if ws.crashed(res):
                return None, _infra(iid, f"{ws.crash_reason(res)} while applying the patch ({name})")
            if res.returncode == 0 and not res.timed_out:
                return name, None
            errors.append(f"{name}: {_clip(res.output, 600)}")
            ws.reset()
        return None, Verdict(
            instance_id=iid, error="patch does not apply: " + _clip(errors[0], 400),
            diagnostics="The patch could not be applied to the repository at the base commit:\n"
            + _clip("\n".join(errors), 1500),
        )

    def _run(self, task: Task, ws: WorkspaceBackend, patch: str) -> Verdict:
        """The hardened run (issue 30): see docs/env.md, "Threat model"."""
        iid = task.instance_id
        method, failed = self._apply(ws, iid, patch)
        if failed is not None:
            return failed
        kw = {"patch_applied": True, "apply_method": method}
        # which files the patch changed: the patched tree against the base tree, not the header text
        changed = changed_paths(ws)
        headers = patch_files(patch)
        touched = (changed or set()) | headers
        base_read, post_read = ws.base_reader(), ws.reader()
        protected = task_protected_paths(task)
        bad = find_violations(patch, base_read, read_post=post_read, protected_paths=protected,
                              reference_patch=task.patch, touched=touched)
        bad += structural_violations(touched, task, _base_exists(base_read))
        if changed is None:
            bad.append(Violation("?", "unchecked-paths", "the files the patch changed could not be listed from the "
                                 "patched tree; rule: unchecked-paths"))
        if bad:
            return _refused(iid, bad, **kw)
        flags = special_casing_flags(touched, base_read, post_read)
        notes = []
        restore = restore_set(touched, task, protected)
        if restore:
            in_base = [p for p in restore if _base_exists(base_read)(p)]
            quoted = " ".join(shlex.quote(p) for p in restore)
            cmd = f"rm -rf -- {quoted}"
            if in_base:
                cmd += (" && git -c core.hooksPath=/dev/null -c core.fsmonitor=false checkout -q HEAD -- "
                        + " ".join(shlex.quote(p) for p in in_base))
            res = ws.run(cmd, timeout=60)
            if ws.crashed(res):
                return _infra(iid, f"{ws.crash_reason(res)} while restoring test files", **kw)
            if res.returncode != 0:
                return _refused(iid, [Violation(p, "test-restore", f"{p}: the test file could not be restored from "
                                                f"the base tree ({_clip(res.output, 200)}); rule: test-restore")
                                      for p in restore], **kw)
            notes.append("test files restored from the base tree before the run: " + ", ".join(restore[:8])
                         + (f" and {len(restore) - 8} more" if len(restore) > 8 else ""))
        if task.test_patch.strip():
            res = ws.run("git apply --verbose --binary -", timeout=60, stdin=task.test_patch.encode())
            if ws.crashed(res):
                return _infra(iid, f"{ws.crash_reason(res)} while applying the test patch", **kw)
            if res.returncode != 0:
                return _infra(iid, f"the task's test patch does not apply after the model patch: {_clip(res.output, 600)}",
                              **kw)
        outcome = self._harness_run(task, ws)
        if outcome is None:  # a test command the runner cannot stand in for: the old way, flagged
            verdict = self._run_tests_legacy(task, ws, method)
            verdict.flags = ["the test command is not `python -m pytest`: ran without the trusted harness", *flags]
            return verdict
        res, report, problem = outcome
        if problem is not None and problem.missing or (problem is None and report is None):
            why = (f"the test run exceeded {self.timeout_s:g}s" if res.timed_out
                   else f"the test command exited with {res.returncode} and produced no results ({problem})")
            if ws.crashed(res):
                return _infra(iid, f"{ws.crash_reason(res)} while running the tests", output=res.output, **kw)
            return self._blame(task, why, res, flags, **kw)
        if problem is not None:
            return _tampered(iid, [f"the test report {problem}"], res.output, flags, **kw)
        return self._grade(task, report, res, flags, notes, **kw)

    def _harness_run(self, task: Task, ws: WorkspaceBackend, seed: str | None = None):
        """Run F2P ∪ P2P under the trusted runner: (result, report dict | None, ReportError | None);
        None when the task's test command is not pytest's."""
        plugin = ws.pytest_plugin_dir()
        head = harness_command(task.test_cmd or "python -m pytest", plugin)
        if head is None:
            return None
        rand = seed or uuid.uuid4().hex[:16]
        git_dir = _base_exists(ws.base_reader())(".git/HEAD")
        report_rel = f".git/swetrain-{rand}/report.json" if git_dir else f".swetrain-{rand}/report.json"
        ids = " ".join(shlex.quote(t) for t in task.tests)
        cmd = (f"{head} --swetrain-test-timeout={self.test_timeout_s:g} -p no:cacheprovider -q "
               f"-o console_output_style=classic -- {ids}")
        spec = json.dumps({"report": report_rel, "clone": list(task.FAIL_TO_PASS)}).encode()
        res = ws.run(cmd, timeout=self.timeout_s, stdin=spec)
        if res.timed_out or ws.crashed(res):
            return res, None, ReportError("no report (the run did not finish)", missing=True)
        try:
            data = read_report(ws, report_rel)
        except ReportError as exc:
            return res, None, exc
        try:
            report = json.loads(data.decode("utf-8"))
            if not isinstance(report, dict) or not isinstance(report.get("results"), dict):
                raise ValueError("not the runner's report")
        except (ValueError, UnicodeDecodeError) as exc:
            return res, None, ReportError(f"is not the runner's report ({str(exc)[:200]})")
        return res, report, None

    def _blame(self, task: Task, why: str, res, flags: list[str], **kw) -> Verdict:
        """The patched run ended without a report: whose fault? Run the base tree (test patch only);
        if that run completes, the patch made the run crash or hang: NO, the model's failure."""
        iid = task.instance_id
        try:
            base_ws = open_workspace(task, sandbox=self.sandbox, root=self.root, limits=self.limits,
                                     isolated=self.isolated, one_shot=True)
        except (WorkspaceError, OSError) as exc:
            return _infra(iid, f"{why}; the base tree could not be checked ({exc})", output=res.output, **kw)
        try:
            if task.test_patch.strip():
                tp = base_ws.run("git apply --verbose --binary -", timeout=60, stdin=task.test_patch.encode())
                if tp.returncode != 0:
                    return _infra(iid, f"{why}; the test patch does not apply to the base tree", output=res.output, **kw)
            outcome = self._harness_run(task, base_ws)
        finally:
            base_ws.close()
        if outcome is None or outcome[1] is None:
            return _infra(iid, f"{why}; the base tree's run does not complete either", output=res.output, **kw)
        reason = "the patch made the test run hang" if res.timed_out else "the patch made the test run crash"
        v = Verdict(instance_id=iid, error=f"{reason}: {why}; the base tree's run completes", flags=flags, **kw)
        v.diagnostics = _clip(stable_output(
            f"Result: NO. {reason[0].upper() + reason[1:]} ({why}), while the same tests complete on the "
            "unpatched repository. Fix the code so that the tests run to the end."
            + ("\nLast output of the test command:\n" + _clip(res.output[-3000:], 1500) if res.output else "")),
            DIAGNOSTICS_CHARS)
        return v

    def _grade(self, task: Task, report: dict, res, flags: list[str], notes: list[str], **kw) -> Verdict:
        iid = task.instance_id
        results = {str(k): str(v) for k, v in report.get("results", {}).items()}
        texts = report.get("texts") or {}
        tamper = [str(t) for t in report.get("tamper") or []]
        canaries = report.get("canaries") or {}
        expected = {"fail": "FAILED", "pass": "PASSED", "error": "ERROR"}
        f2p_passing = any(results.get(k) in PASSING_F2P for k in results if k in set(task.FAIL_TO_PASS))
        runner_notes = [str(n) for n in report.get("notes") or []]
        if not canaries and any(n.startswith(("no module", "canary not made")) for n in runner_notes):
            expected = {}  # no plain test module to hold them (doctests only): nothing to compare
            notes.append("no canary tests could be added to this run")
        for kind, want in expected.items():
            nid = canaries.get(kind)
            got = results.get(nid, "MISSING") if nid else "MISSING"
            # a canary that did not run at all is tampering only when a test it guards passed
            # (a collection error or an unknown test id stops pytest before any test runs)
            if got != want and (got != "MISSING" or f2p_passing):
                tamper.append(f"the canary test that must {'error' if kind == 'error' else kind} came back {got}")
        if report.get("error"):
            notes.append(f"the runner reported: {str(report['error'])[:300]}")
        # the canaries and renamed copies stay out of what the agent reads
        hidden = {str(n).split("::")[-1] for n in [*canaries.values(), *(report.get("clones") or {}).values()]}
        hidden |= {str(n).split("::")[0].rsplit("/", 1)[-1] for n in (report.get("clones") or {}).values()}
        hidden |= {"swetrain_runner", "canary"}
        res.output = "\n".join(ln for ln in res.output.splitlines() if not any(h and h in ln for h in hidden))
        if tamper:
            return _tampered(iid, tamper, res.output, flags, **kw)
        by_key = {junit_key(k): k for k in results}

        def find(tid: str) -> str | None:
            if tid in results:
                return tid
            return by_key.get(junit_key(tid))

        tests: list[TestResult] = []
        seen = set()
        for kind, ids_ in (("FAIL_TO_PASS", task.FAIL_TO_PASS), ("PASS_TO_PASS", task.PASS_TO_PASS)):
            for tid in ids_:
                if tid in seen:
                    continue
                seen.add(tid)
                key = find(tid)
                status = results[key] if key else "MISSING"
                if status not in ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL", "MISSING"):
                    status = "ERROR"
                good = PASSING_F2P if kind == "FAIL_TO_PASS" else PASSING_P2P
                tb = "" if status in good else _clip(str(texts.get(key, "")) if key else "", TRACEBACK_CHARS)
                tests.append(TestResult(test_id=tid, kind=kind, status=status, traceback=tb))
        status_map = {t.test_id: t.status for t in tests if t.status != "MISSING"}
        status, _grader = grade(status_map, task.FAIL_TO_PASS, [t for t in task.PASS_TO_PASS if t not in task.FAIL_TO_PASS])
        error = None
        # the renamed copies (random module and function names, no PYTEST_CURRENT_TEST) must agree
        clones = report.get("clones") or {}
        disagree = []
        for t in tests:
            if t.kind != "FAIL_TO_PASS" or t.status not in PASSING_F2P:
                continue
            key = find(t.test_id)
            cid = clones.get(key) if key else None
            if cid is None:
                continue
            got = results.get(cid, "MISSING")
            if got not in PASSING_F2P:
                disagree.append(f"{t.test_id} passes under its own name but is {got} when renamed")
        if disagree:
            status = "NO"
            error = ("the tests pass only under their own names (special-casing of the test run): "
                     + "; ".join(disagree[:3]))
        rc = int(report.get("exitstatus", res.returncode) if isinstance(report.get("exitstatus"), int) else res.returncode)
        if status != "NO" and rc not in (0, 1):
            status = "NO"
            error = f"the test run ended with pytest exit status {rc}; not counted as a pass"
        verdict = Verdict(instance_id=iid, resolved=status == "FULL", status=status,  # type: ignore[arg-type]
                          error=error, tests=tests, flags=flags, **kw)
        collection = [JunitCase(e.get("nodeid", ""), "", "ERROR", str(e.get("text", "")))
                      for e in report.get("collect_errors") or [] if isinstance(e, dict)]
        verdict.diagnostics = _diagnostics(verdict, collection, res.output, notes=notes)
        return verdict

    def _junit_command(self, task: Task, ws: WorkspaceBackend) -> tuple[str, str]:
        """(report path, command): the task's pytest command with the hang guard, writing junit XML."""
        junit = f".swetrain-junit-{uuid.uuid4().hex[:8]}.xml"
        ids = " ".join(shlex.quote(t) for t in task.tests)
        cmd = (
            f"export PYTHONPATH={shlex.quote(ws.pytest_plugin_dir())}${{PYTHONPATH:+:$PYTHONPATH}}; "
            f"{task.test_cmd or 'python -m pytest'} -p swetrain_hang_guard --swetrain-test-timeout={self.test_timeout_s:g} "
            f"-rA -p no:cacheprovider -o junit_family=xunit1 --junitxml={junit} -- {ids}"
        )
        return junit, cmd

    def _run_tests_legacy(self, task: Task, ws: WorkspaceBackend, method: str) -> Verdict:
        """Tests of a task whose command is not pytest's: junit XML, read safely."""
        iid = task.instance_id
        kw = {"patch_applied": True, "apply_method": method}
        junit, cmd = self._junit_command(task, ws)
        res = ws.run(cmd, timeout=self.timeout_s)
        if res.timed_out:
            return _infra(iid, f"the test run exceeded {self.timeout_s:g}s", output=res.output, **kw)
        if ws.crashed(res):
            return _infra(iid, f"{ws.crash_reason(res)} while running the tests", output=res.output, **kw)
        try:
            cases = parse_junit(read_report(ws, junit), f"{ws.agent_root}/{junit}")
        except ReportError as exc:
            if exc.missing:
                return _infra(iid, f"the test command exited with {res.returncode} and produced no results ({exc})",
                              output=res.output, **kw)
            return _tampered(iid, [f"the junit report {exc}"], res.output, [], **kw)
        except ValueError as exc:
            return _infra(iid, f"the test command exited with {res.returncode} and produced no results ({exc})",
                          output=res.output, **kw)
        report = {"results": {}, "texts": {}, "exitstatus": res.returncode, "notes": ["no module: junit"]}
        found = statuses_for(task.tests, cases)
        for tid, case in found.items():
            report["results"][tid] = case.status
            report["texts"][tid] = case.text
        if res.returncode != 0 and not any(c.status in ("FAILED", "ERROR") for c in cases):
            report["exitstatus"] = 3
        return self._grade(task, report, res, [], [], **kw)


def _base_exists(base_read):
    def exists(path: str) -> bool:
        for p in (path, f"{path}/__init__.py"):
            try:
                if base_read(p) is not None:
                    return True
            except (OSError, ValueError):
                return True
        return False

    return exists


def _tampered(iid: str, reasons: list[str], output: str, flags: list[str], **kw) -> Verdict:
    """TAMPERED: the run's outcomes cannot be trusted; reward 0, the model's failure."""
    shown = "; ".join(reasons[:3]) + (f"; and {len(reasons) - 3} more" if len(reasons) > 3 else "")
    diag = ("Result: TAMPERED. The test run was tampered with, so its results were discarded:\n"
            + "\n".join(f"- {r}" for r in reasons[:10])
            + "\nFix the source code; do not change how pytest runs, skips or reports tests.")
    if flags:
        diag += "\nLines that special-case the test run:\n" + "\n".join(f"- {f}" for f in flags[:10])
    return Verdict(instance_id=iid, status="TAMPERED", error=f"test run tampered with: {shown}",
                   tamper_reasons=reasons, flags=flags, diagnostics=_clip(stable_output(diag), DIAGNOSTICS_CHARS), **kw)


def _infra(iid: str, reason: str, *, patch_applied: bool = False, apply_method: str | None = None,
           output: str = "") -> Verdict:
    diag = f"Verification could not be completed (infrastructure problem): {reason}."
    if output:
        diag += "\nLast output of the test command:\n" + _clip(output[-3000:], 1500)
    return Verdict(instance_id=iid, infra_failure=True, infra_reason=reason, patch_applied=patch_applied,
                   apply_method=apply_method, diagnostics=diag)


def _diagnostics(v: Verdict, collection_errors, output: str, notes: list[str] | None = None) -> str:
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
    for f in v.flags[:10]:
        lines.append(f"Flag: {f}")
    for n in notes or []:
        lines.append(f"Note: {n}.")
    text = "\n".join(lines)
    if v.status == "NO" and not any(t.traceback for t in v.tests) and not collection_errors and output:
        text += "\n\nTest output (tail):\n" + _clip(output[-2000:], 1500)
    return _clip(stable_output(text), DIAGNOSTICS_CHARS)  # a seed reproduces attempt 2 (env/stable.py)
