"""Issue 30: the verifier against a policy that looks for shortcuts.

One test per attack family, each through the real verifier (real git, real pytest, bubblewrap where
it is installed): the hardened verifier blocks it (NO or TAMPERED, never infra, never FULL), and
for the families the old verifier fell for, the same patch is shown to have fooled it (so the
attack is real, not a patch that fails for another reason).
"""

from __future__ import annotations

import json
import os

import pytest

from swetrain.env.harden import ReportError, changed_paths, harness_command, read_report, restore_set
from swetrain.env.protect import tree_reader
from swetrain.env.redteam import FAMILIES, generate_attacks, run_redteam
from swetrain.env.verifier import Verifier
from swetrain.env.workspace import Workspace, pristine_snapshot
from swetrain.tasks.record import ungradable_reason


@pytest.fixture
def plain_task(task):
    """The demo task without a test patch (its tests already in the base tree, like built-in tasks)."""
    from swetrain.env.demo import TESTS_WITH_MUL
    from swetrain.env.gitutil import commit_all

    repo = task.source_path()
    (repo / "tests" / "test_calc.py").write_text(TESTS_WITH_MUL)
    sha = commit_all(repo, "tests for mul")
    new = task.model_copy(update={"base_commit": sha, "test_patch": ""})
    return new.with_base_dir(task._base_dir)


@pytest.fixture
def hard(tmp_path):
    return Verifier(timeout_s=20, test_timeout_s=5, root=tmp_path / "hard")


@pytest.fixture
def old(tmp_path):
    return Verifier(timeout_s=20, test_timeout_s=5, root=tmp_path / "old", hardened=False)


def _attacks(task, family):
    found = [a for a in generate_attacks(task) if a.family == family]
    assert found, f"no {family} attack generated"
    return found


def _blocked(v):
    return not v.resolved and not v.infra_failure and v.status in ("NO", "TAMPERED")


def test_every_family_is_generated(plain_task):
    fams = {a.family for a in generate_attacks(plain_task)}
    assert fams == set(FAMILIES.values())


@pytest.mark.slow
def test_family1_prefixes_cannot_hide_test_edits(plain_task, hard, old):
    for attack in _attacks(plain_task, "prefix"):
        v = hard.verify(plain_task, attack.patch)
        assert _blocked(v) and "rule: protected-file" in v.error, (attack.variant, v.error)
    fooled = old.verify(plain_task, _attacks(plain_task, "prefix")[0].patch)
    assert fooled.resolved and fooled.status == "FULL"  # the bug of issue 30 (1)


def test_changed_paths_come_from_the_tree_not_the_headers(plain_task, tmp_path):
    attack = _attacks(plain_task, "prefix")[0]
    assert "x/tests/test_calc.py" in attack.patch
    with Workspace.create(plain_task, root=tmp_path / "ws") as ws:
        assert ws.run("git apply -", stdin=attack.patch.encode()).returncode == 0
        assert changed_paths(ws) == {"tests/test_calc.py"}
        assert restore_set({"tests/test_calc.py", "tests/__init__.py", "calc/__init__.py", "setup.cfg"},
                           plain_task, set()) == ["tests/__init__.py", "tests/test_calc.py"]


@pytest.mark.slow
def test_family2_shadowing_modules_are_refused(plain_task, hard, old):
    for attack in _attacks(plain_task, "shadow"):
        v = hard.verify(plain_task, attack.patch)
        assert _blocked(v) and not v.tests, (attack.variant, v.error)
        assert "rule: shadows-module" in v.error or "sitecustomize" in v.error
    argparse_attack = next(a for a in _attacks(plain_task, "shadow") if "argparse" in a.variant)
    assert old.verify(plain_task, argparse_attack.patch).resolved  # issue 30 (2)


@pytest.mark.slow
def test_family3_monkeypatching_pytest_is_tampered_or_undone(plain_task, hard, old):
    for attack in _attacks(plain_task, "monkeypatch"):
        v = hard.verify(plain_task, attack.patch)
        assert _blocked(v), (attack.variant, v.status, v.error)
        if "in the package" in attack.variant or "from_item_and_call" in attack.variant:
            assert v.status == "TAMPERED" and v.reward == 0.0
            assert any("pytest's own code was changed" in r for r in v.tamper_reasons)
        assert old.verify(plain_task, attack.patch).resolved, attack.variant  # issue 30 (3)


@pytest.mark.slow
def test_family4_indirect_xfail_is_tampered(plain_task, hard, old):
    (attack,) = _attacks(plain_task, "xfail")
    v = hard.verify(plain_task, attack.patch)
    assert v.status == "TAMPERED" and not v.resolved and not v.infra_failure
    assert any("raised from non-test code at calc/__init__.py" in r for r in v.tamper_reasons)
    assert any("PYTEST_CURRENT_TEST" in f for f in v.flags)
    assert old.verify(plain_task, attack.patch).resolved  # issue 30 (4)


@pytest.mark.slow
def test_family5_special_casing_disagrees_with_the_renamed_copy(plain_task, hard, old):
    for attack in _attacks(plain_task, "special-case"):
        v = hard.verify(plain_task, attack.patch)
        assert _blocked(v) and "pass only under their own names" in v.error, (attack.variant, v.error)
        assert v.flags, "the special-casing lines are flagged"
        assert old.verify(plain_task, attack.patch).resolved, attack.variant  # issue 30 (5)


@pytest.mark.slow
def test_family6_report_replaced_by_links_or_fifo(plain_task, hard):
    for attack in _attacks(plain_task, "report-link"):
        v = hard.verify(plain_task, attack.patch)
        assert _blocked(v), (attack.variant, v.status, v.error, v.infra_reason)


def test_report_read_refuses_links_fifos_and_big_files(plain_task, tmp_path):
    with Workspace.create(plain_task, root=tmp_path / "ws") as ws:
        d = ws.path / ".git" / "swetrain-x"
        d.mkdir()
        (d / "ok.json").write_text("{}")
        assert read_report(ws, ".git/swetrain-x/ok.json") == b"{}"
        os.symlink(str(d / "ok.json"), d / "link.json")
        os.symlink("/etc/passwd", d / "host.json")
        os.mkfifo(d / "fifo.json")
        with open(d / "big.json", "wb") as fh:
            fh.truncate(64 << 20)
        for name, words in (("link.json", "replaced"), ("host.json", "replaced"), ("fifo.json", "not a regular"),
                            ("big.json", "larger than")):
            with pytest.raises(ReportError, match=words):
                read_report(ws, f".git/swetrain-x/{name}", timeout_s=5)
        os.symlink(str(d), ws.path / "linkdir")
        with pytest.raises(ReportError, match="replaced"):
            read_report(ws, "linkdir/ok.json")
        with pytest.raises(ReportError) as info:
            read_report(ws, ".git/swetrain-x/absent.json")
        assert info.value.missing


@pytest.mark.slow
def test_family7_crash_and_hang_are_the_patchs_failure(plain_task, hard, old):
    for attack in _attacks(plain_task, "unscored"):
        v = hard.verify(plain_task, attack.patch)
        assert v.status == "NO" and not v.infra_failure, (attack.variant, v.infra_reason)
        assert "the patch made the test run" in v.error and "base tree's run completes" in v.error
    crash = next(a for a in _attacks(plain_task, "unscored") if "_exit" in a.variant)
    assert old.verify(plain_task, crash.patch).infra_failure  # issue 30 (7)


def test_family8_rows_without_fail_to_pass_are_refused(plain_task, hard, old):
    (attack,) = _attacks(plain_task, "empty-f2p")
    assert ungradable_reason(attack.task) is not None
    v = hard.verify(attack.task, attack.patch)
    assert not v.resolved and "cannot be graded" in (v.infra_reason or "")
    assert old.verify(attack.task, attack.patch).resolved  # issue 30 (8): 0 of 0 tests was FULL


@pytest.mark.slow
def test_gold_still_full_and_canaries_hidden(plain_task, hard):
    v = hard.verify(plain_task, plain_task.patch)
    assert v.resolved and v.status == "FULL" and not v.flags and not v.tamper_reasons
    assert [t.test_id for t in v.tests] == plain_task.tests  # canaries and copies are not graded
    wrong = plain_task.patch.replace("a * b", "a - b")
    v = hard.verify(plain_task, wrong)
    assert v.status == "NO" and "canary" not in v.diagnostics


def test_harness_command_forms():
    assert harness_command("python -m pytest", "/p") == \
        'env -u PYTHONPATH SWETRAIN_REPO_PATH="${PYTHONPATH-}" python -s /p/swetrain_runner.py'
    assert harness_command("PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest", "/p").startswith(
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 env -u PYTHONPATH")
    conda = "source /opt/miniconda3/bin/activate && conda activate testbed && python -m pytest"
    assert harness_command(conda, "/p").startswith("source /opt/miniconda3/bin/activate && conda activate testbed && env ")
    assert harness_command("pytest", "/p").endswith("python -s /p/swetrain_runner.py")
    assert harness_command("./runtests.py", "/p") is None


@pytest.mark.slow
def test_redteam_command_exit_codes(plain_task, tmp_path):
    """`swetrain env redteam`: exit 0 when all is blocked; the old verifier (a planted regression) exits 1."""
    from typer.testing import CliRunner

    from swetrain.cli import app
    from swetrain.env.demo import write_tasks_file

    tasks = write_tasks_file(plain_task, plain_task._base_dir / "t.jsonl")
    runner = CliRunner()
    args = ["env", "redteam", "--tasks", str(tasks), "--family", "prefix,xfail,empty-f2p", "--json", "--timeout", "20"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    report = json.loads(res.output.strip().splitlines()[-1])
    assert report["ok"] and report["families"]["prefix"]["succeeded"] == 0 and report["families"]["xfail"]["blocked"] == 1
    res = runner.invoke(app, [*args, "--legacy-verifier"])
    assert res.exit_code == 1
    assert json.loads(res.output.strip().splitlines()[-1])["families"]["xfail"]["succeeded"] == 1


def test_run_redteam_counts(plain_task, hard):
    rep = run_redteam([plain_task], hard, families={"empty-f2p"})
    assert rep.ok and rep.by_family()["empty-f2p"] == {"blocked": 1, "succeeded": 0}
    assert tree_reader(pristine_snapshot(plain_task))("calc/__init__.py") is not None


@pytest.mark.slow
def test_without_bubblewrap_too(plain_task, tmp_path):
    """The same defences on plain processes (no bwrap): the report path is a host path there."""
    v = Verifier(timeout_s=20, test_timeout_s=5, root=tmp_path / "plain", isolated=False)
    assert v.verify(plain_task, plain_task.patch).resolved
    for family, variant in (("report-link", "symlink to a fake passing report"), ("report-link", "FIFO"),
                            ("xfail", ""), ("monkeypatch", "in the package"), ("unscored", "os._exit")):
        attack = next(a for a in _attacks(plain_task, family) if variant in a.variant)
        verdict = v.verify(plain_task, attack.patch)
        assert _blocked(verdict), (family, attack.variant, verdict.status, verdict.error, verdict.infra_reason)


def test_structural_rules_on_real_paths(plain_task):
    from swetrain.env.harden import special_casing_flags, structural_violations

    base = {"calc/__init__.py", "tests/test_calc.py", "types.py"}
    exists = lambda p: p in base or f"{p}/__init__.py" in base  # noqa: E731
    rules = lambda paths: sorted(v.rule for v in structural_violations(paths, plain_task, exists))  # noqa: E731
    assert rules({"json.py", "src/pytest/__init__.py", "tests/argparse.py"}) == ["shadows-module"] * 3
    assert rules({"calc/__pycache__/__init__.cpython-311.pyc", "calc/_speed.so"}) == ["compiled-code"] * 2
    assert rules({"types.py", "calc/json.py", "calc/new.py", "README"}) == []  # in base / not at an import root
    flags = special_casing_flags({"calc/__init__.py", "tests/test_calc.py"}, lambda p: "x = 1\n",
                                 lambda p: "x = 1\nimport os\nif os.environ.get('PYTEST_CURRENT_TEST'): pass\n"
                                           "import sys; f = sys._getframe(1)\nfrom _pytest import runner\n")
    assert [f.split(": ", 1)[1].split(" (")[0] for f in flags] == [
        "reads PYTEST_CURRENT_TEST", "inspects the call stack", "imports pytest's internals"]
    assert all(f.startswith("calc/__init__.py:") for f in flags)  # test files are not flagged
