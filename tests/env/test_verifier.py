"""Verifier: definite verdicts for good, partial, broken, hostile and hanging patches."""

from __future__ import annotations

import pytest

from swetrain.env.grading import grade_builtin, junit_key, swebench_available
from swetrain.env.verifier import Verifier, patch_files
from swetrain.env.workspace import Workspace


@pytest.fixture
def verifier(tmp_path):
    return Verifier(timeout_s=60, test_timeout_s=2, root=tmp_path / "vroot")


def _patch_for(task, tmp_path, script: str) -> str:
    """A real git patch: run ``script`` in a workspace and take its diff."""
    with Workspace.create(task, root=tmp_path / "mk") as ws:
        res = ws.run(script)
        assert res.returncode == 0, res.output
        return ws.diff()


def _edit_mul(body: str) -> str:
    return f"python - <<'EOF'\nimport re\np='calc/__init__.py'\ns=open(p).read()\ns=s.replace('    return a + b  # bug: should multiply', {body!r})\nopen(p,'w').write(s)\nEOF"


def test_gold_patch_is_full(task, verifier):
    v = verifier.verify(task, task.patch)
    assert v.resolved and v.status == "FULL" and v.patch_applied and v.apply_method == "git-apply"
    assert {t.status for t in v.tests} == {"PASSED"} and len(v.tests) == 4
    assert not v.infra_failure and v.reward == 1.0


def test_plugins_under_tmp_stay_visible_in_the_sandbox(task, verifier, tmp_path, monkeypatch):
    """swetrain installed (editable) under /tmp: its pytest plugin must still load in the sandbox."""
    import shutil

    from swetrain.env import workspace as workspace_mod
    from swetrain.env.interface import PYTEST_PLUGIN_DIR
    from swetrain.env.sandbox import bwrap_available

    moved = tmp_path / "elsewhere" / "pytest_plugins"
    shutil.copytree(PYTEST_PLUGIN_DIR, moved)
    assert str(moved).startswith("/tmp/")
    monkeypatch.setattr(workspace_mod, "PYTEST_PLUGIN_DIR", moved)  # the local backend's binds and PYTHONPATH
    v = verifier.verify(task, task.patch)
    assert v.resolved and not v.infra_failure, v.diagnostics
    if bwrap_available():
        with Workspace.create(task, root=tmp_path / "ws2") as ws:
            assert ws.isolated and ws.run(f"test -f {moved}/swetrain_hang_guard.py").returncode == 0


def test_wrong_fix_is_no_with_diagnostics(task, verifier, tmp_path):
    v = verifier.verify(task, _patch_for(task, tmp_path, _edit_mul("    return a - b")))
    assert v.status == "NO" and not v.resolved and v.patch_applied and not v.infra_failure
    assert "FAILED tests/test_calc.py::test_mul " in v.diagnostics and "assert -1 == 12" in v.diagnostics
    assert all(t.status == "PASSED" for t in v.tests if t.kind == "PASS_TO_PASS")


def test_partial_fix_is_partial(task, verifier, tmp_path):
    v = verifier.verify(task, _patch_for(task, tmp_path, _edit_mul("    return a * b if a else 1")))
    assert v.status == "PARTIAL" and not v.resolved
    st = {t.test_id.split("::")[1]: t.status for t in v.tests}
    assert st["test_mul"] == "PASSED" and st["test_mul_zero"] == "FAILED"


def test_breaking_pass_to_pass_is_no(task, verifier, tmp_path):
    script = _edit_mul("    return a * b") + "\nsed -i 's/return -a/return a/' calc/__init__.py"
    v = verifier.verify(task, _patch_for(task, tmp_path, script))
    assert v.status == "NO" and "tests/test_calc.py::test_neg" in v.diagnostics


def test_empty_and_malformed_patches(task, verifier):
    for patch in ("", "   \n", None):
        v = verifier.verify(task, patch)
        assert v.status == "NO" and not v.patch_applied and v.error == "empty patch" and not v.infra_failure
    v = verifier.verify(task, "this is not a diff\n")
    assert v.status == "NO" and "malformed" in v.error and not v.infra_failure
    broken = task.patch.replace("-    return a + b  # bug: should multiply", "-    return nothing_like_this()")
    assert broken != task.patch
    v = verifier.verify(task, broken)
    assert v.status == "NO" and not v.patch_applied and "does not apply" in v.error
    assert "could not be applied" in v.diagnostics


def test_fuzzy_patch_applies_with_fallback(task, verifier):
    # context lines that no longer match exactly: git apply refuses, patch --fuzz accepts
    head = "@@ -6,7 +6,7 @@ def add(a, b):\n \n"
    assert head in task.patch
    fuzzy = task.patch.replace(head, "@@ -6,7 +6,7 @@ def add(a, b):\n # a context line that is not there\n")
    v = verifier.verify(task, fuzzy)
    assert v.patch_applied and v.apply_method in ("git-apply-3way", "patch-fuzz"), v
    assert v.status == "FULL"


@pytest.mark.parametrize("target", ["tests/test_calc.py", "tests/conftest.py", "conftest.py", "sitecustomize.py"])
def test_patches_touching_tests_are_rejected(task, verifier, tmp_path, target):
    script = _edit_mul("    return a * b") + f"\nmkdir -p $(dirname {target}); echo '# hack' >> {target}"
    v = verifier.verify(task, _patch_for(task, tmp_path, script))
    assert v.status == "NO" and not v.patch_applied and target in v.error and "protected" in v.error
    assert not v.tests and not v.infra_failure


def test_conftest_hack_cannot_fake_results(task, verifier):
    """Even a hand-written patch adding a result-forging conftest is refused before running."""
    hack = (
        "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n+++ b/conftest.py\n"
        "@@ -0,0 +1,2 @@\n+def pytest_runtest_makereport(item, call):\n+    pass\n"
    )
    v = verifier.verify(task, hack)
    assert v.status == "NO" and "conftest.py" in v.error


def test_binary_patch(task, verifier, tmp_path):
    script = _edit_mul("    return a * b") + "\nprintf 'PNG\\0\\1\\2\\377' > calc/logo.bin"
    patch = _patch_for(task, tmp_path, script)
    assert "GIT binary patch" in patch
    v = verifier.verify(task, patch)
    assert v.status == "FULL" and v.apply_method == "git-apply"
    # a binary patch onto a protected path is still rejected
    bad = _patch_for(task, tmp_path, "printf '\\0\\1' > tests/test_calc.py")
    assert "protected" in verifier.verify(task, bad).error


def test_fake_passed_output_does_not_count(task, verifier, tmp_path):
    body = (
        "    import sys\n"
        "    for t in ('test_mul', 'test_mul_zero'):\n"
        "        print(f'PASSED tests/test_calc.py::{t}')\n"
        "        sys.stderr.write(f'tests/test_calc.py::{t} PASSED\\n')\n"
        "    return a + b"
    )
    v = verifier.verify(task, _patch_for(task, tmp_path, _edit_mul(body)))
    assert v.status == "NO" and not v.resolved
    assert {t.status for t in v.tests if t.kind == "FAIL_TO_PASS"} == {"FAILED"}


def test_hanging_test_fails_definitely(task, verifier, tmp_path):
    v = verifier.verify(task, _patch_for(task, tmp_path, _edit_mul("    while True:\n        pass")))
    assert v.status == "NO" and not v.infra_failure and v.patch_applied
    assert "per-test limit" in v.diagnostics
    assert {t.status for t in v.tests if t.kind == "FAIL_TO_PASS"} == {"FAILED"}


def test_whole_run_timeout_is_the_patchs_fault_when_the_base_completes(task, tmp_path):
    """Issue 30 (7): a patch whose tests hang past the whole-run limit gets NO (the base tree's run
    completes), not an unscored infra verdict; the old verifier said infra."""
    slow = Verifier(timeout_s=4, test_timeout_s=0, root=tmp_path / "v2")
    patch = _patch_for(task, tmp_path, _edit_mul("    import time\n    time.sleep(100)\n    return a * b"))
    v = slow.verify(task, patch)
    assert not v.infra_failure and v.status == "NO" and not v.resolved
    assert "the patch made the test run hang" in v.error and "base tree" in v.error
    old = Verifier(timeout_s=4, test_timeout_s=0, root=tmp_path / "v3", hardened=False).verify(task, patch)
    assert old.infra_failure and "exceeded" in old.infra_reason


def test_whole_run_timeout_is_infra_when_the_base_hangs_too(task, tmp_path):
    hang = task.model_copy(update={"test_cmd": "sleep 30; python -m pytest"})
    hang.with_base_dir(task._base_dir)
    v = Verifier(timeout_s=2, test_timeout_s=0, root=tmp_path / "v2").verify(hang, task.patch)
    assert v.infra_failure and "exceeded" in v.infra_reason and "does not complete either" in v.infra_reason


def test_exit_code_without_failures_is_not_a_pass(task, tmp_path):
    """The old verifier: a non-zero exit without a failing test is NO. The hardened runner ends with
    os._exit before atexit hooks run, and a process killed mid-run leaves no report: NO, crash."""
    script = _edit_mul("    return a * b") + "\nprintf 'import atexit, os\\natexit.register(lambda: os._exit(3))\\n' >> calc/__init__.py"
    patch = _patch_for(task, tmp_path, script)
    old = Verifier(timeout_s=60, test_timeout_s=2, root=tmp_path / "v1", hardened=False).verify(task, patch)
    assert old.status == "NO" and not old.resolved and "exited with 3" in old.error
    crash = _patch_for(task, tmp_path, _edit_mul("    import os\n    os._exit(3)"))
    v = Verifier(timeout_s=60, test_timeout_s=2, root=tmp_path / "v2").verify(task, crash)
    assert v.status == "NO" and not v.infra_failure and "the patch made the test run crash" in v.error


def test_missing_tests_and_infra_cases(task, verifier):
    ghost = task.model_copy(update={"FAIL_TO_PASS": ["tests/test_calc.py::test_ghost"]})
    ghost.with_base_dir(task._base_dir)
    v = verifier.verify(ghost, task.patch)
    assert v.status == "NO" and v.tests[0].status == "MISSING" and "not found" in v.diagnostics
    none = task.model_copy(update={"FAIL_TO_PASS": [], "PASS_TO_PASS": []})
    assert verifier.verify(none, task.patch).infra_failure
    crash = task.model_copy(update={"test_cmd": "exit 4; true"})
    crash.with_base_dir(task._base_dir)
    v = verifier.verify(crash, task.patch)
    assert v.infra_failure and "no results" in v.infra_reason
    gone = task.model_copy(update={"source": "/nonexistent/repo"})
    v = verifier.verify(gone, task.patch)
    assert v.infra_failure and "workspace" in v.infra_reason


def test_patch_files_parser():
    p = "diff --git a/x/y.py b/x/z.py\nrename from x/y.py\nrename to x/z.py\n--- a/q.py\n+++ b/q.py\n--- /dev/null\n+++ b/new.txt\n"
    assert patch_files(p) == {"x/y.py", "x/z.py", "q.py", "new.txt"}
    assert patch_files("nothing here") == set()


def test_junit_key_matches_pytest():
    assert junit_key("tests/test_x.py::TestC::test_a[1-a/b.py]") == ("tests.test_x.TestC", "test_a[1-a/b.py]")
    assert junit_key("test_top.py::test_b") == ("test_top", "test_b")


STATUSES = ["PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL", None]


def test_builtin_grading_rules():
    assert grade_builtin({"a": "PASSED", "b": "PASSED"}, ["a"], ["b"]) == "FULL"
    assert grade_builtin({"a": "SKIPPED", "b": "PASSED"}, ["a"], ["b"]) == "NO"  # skipped F2P fails
    assert grade_builtin({"a": "PASSED", "b": "SKIPPED"}, ["a"], ["b"]) == "FULL"  # skipped P2P is kept
    assert grade_builtin({"a": "PASSED"}, ["a", "c"], []) == "PARTIAL"  # missing F2P fails
    assert grade_builtin({"a": "PASSED"}, ["a"], ["b"]) == "NO"  # missing P2P fails
    assert grade_builtin({"a": "XFAIL", "b": "PASSED"}, ["a"], ["b"]) == "FULL"


@pytest.mark.skipif(not swebench_available(), reason="swebench package not installed")
def test_builtin_grading_agrees_with_swebench():
    import itertools

    from swetrain.env.grading import grade_swebench

    for f1, f2, p1 in itertools.product(STATUSES, STATUSES, STATUSES):
        sm = {k: v for k, v in (("f1", f1), ("f2", f2), ("p1", p1)) if v}
        assert grade_builtin(sm, ["f1", "f2"], ["p1"]) == grade_swebench(sm, ["f1", "f2"], ["p1"]), sm


def test_diagnostics_repeat_exactly(task, verifier, tmp_path):
    """A failure whose traceback prints an object's repr: two verifications of the patch give the
    same diagnostics (attempt 2 of a chain reads them; env/stable.py), the address written 0x..."""
    patch = _patch_for(task, tmp_path, _edit_mul("    return object()"))
    first, second = (verifier.verify(task, patch) for _ in range(2))
    assert first.status == second.status == "NO"
    assert "<object object at 0x...>" in first.diagnostics
    assert first.diagnostics == second.diagnostics
