"""The synthesis pipeline end to end on a small real project (real pytest, real git)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swetrain.env.gitutil import git
from swetrain.tasks.record import load_tasks
from swetrain.tasks.synth.api import prepare_path, synthesize
from swetrain.tasks.synth.errors import SynthError
from swetrain.tasks.synth.pipeline import ProjectSpec, SynthConfig, Synthesizer
from swetrain.tasks.synth.project import parse_requirement
from swetrain.tasks.synth.projects import Profile
from swetrain.tasks.synth.statement import leaks

CORE = '''
def clamp(x, lo, hi):
    """Clamp x into the closed interval [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def total(values, start=0):
    """Sum of values plus start."""
    acc = start
    for v in values:
        acc = acc + v
    return acc


def spin(n):
    """Count down from n to zero."""
    while n > 0:
        n -= 1
    return n
'''

TESTS = '''
from calc.core import clamp, spin, total


def test_clamp_low():
    assert clamp(-5, 0, 3) == 0

def test_clamp_high():
    assert clamp(5, 0, 3) == 3

def test_clamp_inside():
    assert clamp(2, 0, 3) == 2

def test_total():
    assert total([1, 2, 3]) == 6

def test_total_start():
    assert total([1], start=10) == 11

def test_total_empty():
    assert total([]) == 0

def test_spin():
    assert spin(3) == 0
'''


def make_project(root: Path, tests: str = TESTS) -> Path:
    (root / "calc").mkdir(parents=True)
    (root / "calc" / "__init__.py").write_text("")
    (root / "calc" / "core.py").write_text(CORE)
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(tests)
    return root


def spec_for(tree: Path) -> ProjectSpec:
    return ProjectSpec(name="calc", tree=tree, python=Path(sys.executable), profile=Profile(paths=("tests",)),
                       repo="local/calc", instance_prefix="local__calc", labels={"domain": {"l1": "data_science"}},
                       route="A", autoload_plugins=False)


@pytest.mark.slow
def test_synthesizer_keeps_valid_mutants(tmp_path):
    tree = make_project(tmp_path / "calc")
    synth = Synthesizer(spec_for(tree), tmp_path / "work" / "repo", SynthConfig(max_tasks=3, seed=1, verify=False))
    base = synth.prepare()
    assert len(base.usable) == 7 and not base.flaky
    tasks = synth.run()
    assert 1 <= len(tasks) <= 3
    repo = tmp_path / "work" / "repo"
    for t in tasks:
        assert t.FAIL_TO_PASS and t.PASS_TO_PASS and not set(t.FAIL_TO_PASS) & set(t.PASS_TO_PASS)
        assert t.patch.startswith("diff --git a/calc/core.py b/calc/core.py")
        assert "tests/" not in t.patch and t.test_patch == ""
        assert leaks(t.problem_statement, t.patch) == []
        assert t.labels["domain"]["l1"] == "data_science" and t.route == "A"
        # base commit is the buggy state; the gold patch turns it back into the clean commit
        assert git(repo, "rev-parse", f"tasks/{t.instance_id}").stdout.decode().strip() == t.base_commit
        wt = tmp_path / f"wt-{t.instance_id}"
        git(repo, "worktree", "add", "-q", "--detach", str(wt), t.base_commit)
        git(wt, "apply", "-", input=t.patch.encode())
        assert (wt / "calc" / "core.py").read_text() == CORE
    # deterministic: same seed, same tasks and commits
    again = Synthesizer(spec_for(tree), tmp_path / "work2" / "repo", SynthConfig(max_tasks=3, seed=1, verify=False)).run()
    assert [(t.instance_id, t.base_commit, t.problem_statement) for t in again] == \
        [(t.instance_id, t.base_commit, t.problem_statement) for t in tasks]
    assert synth.report.candidates >= len(tasks) and synth.report.kept == len(tasks)
    # a fresh snapshot + the gold patches reversed by one fast-import reproduce every base commit
    from swetrain.tasks.synth.snapshot import ProjectRepo

    fresh = ProjectRepo.create(tree, tmp_path / "fresh")
    assert fresh.clean == tasks[0].environment_setup_commit
    shas = fresh.add_reverse_patches([(t.instance_id, t.patch) for t in tasks])
    assert shas == {t.instance_id: t.base_commit for t in tasks}


@pytest.mark.slow
def test_hanging_mutant_is_rejected_by_timeout(tmp_path):
    tree = make_project(tmp_path / "calc")
    synth = Synthesizer(spec_for(tree), tmp_path / "w" / "repo", SynthConfig(verify=False, min_timeout_s=3))
    synth.prepare()
    # `n -= 1` -> `n += 1` never terminates
    site = next(s for s in synth.sites() if s.kind == "arith_op" and s.function == "spin")
    assert synth.try_site(site) == "timeout"
    assert (synth.scratch / "calc" / "core.py").read_text() == CORE  # restored after the kill


def test_no_tests_is_a_clear_error(tmp_path):
    tree = tmp_path / "empty"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    with pytest.raises(SynthError, match="no tests found"):
        prepare_path(tree, tmp_path / "wd", python=sys.executable)


def test_failing_suite_is_a_clear_error(tmp_path):
    tree = make_project(tmp_path / "calc", tests="def test_broken():\n    assert False\n")
    synth = Synthesizer(spec_for(tree), tmp_path / "w" / "repo", SynthConfig(verify=False))
    with pytest.raises(SynthError, match="tests already failing"):
        synth.prepare()


@pytest.mark.parametrize("bad", ["toolz", "toolz>=1", "", "pytest==8.0.0", "pluggy==1.5.0"])
def test_bad_requirements(bad):
    with pytest.raises(SynthError):
        parse_requirement(bad)


@pytest.mark.slow
def test_cli_writes_nothing_on_bad_input(tmp_path):
    from swetrain.cli import app

    tree = make_project(tmp_path / "calc", tests="def test_broken():\n    assert False\n")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(app, ["tasks", "synth", "--path", str(tree), "--python", sys.executable,
                                   "--out", str(out), "--no-verify", "--workdir", str(tmp_path / "wd")])
    assert res.exit_code == 1 and "tests already failing" in res.output
    assert not out.exists() and not out.with_name("out.jsonl.tmp").exists()


@pytest.mark.slow
def test_cli_path_writes_verified_tasks(tmp_path):
    """The CLI end to end with the final acceptance through the real verifier (buggy unresolved,
    gold resolved twice); the written tasks verify again from the file."""
    from swetrain.cli import app
    from swetrain.env.verifier import Verifier
    from swetrain.tasks.synth.pipeline import NOOP_PATCH

    tree = make_project(tmp_path / "calc")
    out = tmp_path / "out.jsonl"
    rep = tmp_path / "rep.json"
    res = CliRunner().invoke(app, ["tasks", "synth", "--path", str(tree), "--python", sys.executable, "--out",
                                   str(out), "--max-tasks", "2", "--workdir", str(tmp_path / "wd"),
                                   "--report", str(rep)])
    assert res.exit_code == 0, res.output
    tasks = load_tasks(out)
    report = json.loads(rep.read_text())
    assert 1 <= len(tasks) <= 2 and report["kept"] == len(tasks) and report["verify_s"] > 0
    assert all(Path(t.source).is_absolute() and t.source_path().is_dir() for t in tasks)
    v = Verifier(timeout_s=120)
    t = tasks[0]
    assert v.verify(t, t.patch).resolved
    buggy = v.verify(t, NOOP_PATCH)
    assert buggy.patch_applied and not buggy.resolved


@pytest.mark.slow
def test_crash_kinds_give_easy_tier_tasks_with_a_traceback(tmp_path):
    from swetrain.tasks.record import task_tier
    from swetrain.tasks.synth.mutate import CRASH_EXCEPTION, CRASH_KINDS

    tree = make_project(tmp_path / "calc")
    config = SynthConfig(max_tasks=3, seed=0, verify=False, kinds=CRASH_KINDS)
    tasks = Synthesizer(spec_for(tree), tmp_path / "work" / "repo", config).run()
    assert tasks
    for t in tasks:
        kind = t.labels["synth"]["kind"]
        assert kind in CRASH_KINDS and t.labels["tier"] == "easy" and task_tier(t) == "easy"
        assert t.labels["task_type"] == {"l1": "bug_fix", "l2": "crash_exception"}
        text = t.problem_statement
        assert "Traceback (most recent call last):" in text and CRASH_EXCEPTION[kind] in text
        assert 'File "calc/core.py", line ' in text and leaks(text, t.patch) == []
    # the standard kinds stay the default and carry no tier label (task_tier reads "standard")
    std = Synthesizer(spec_for(tree), tmp_path / "w2" / "repo", SynthConfig(max_tasks=1, seed=1, verify=False)).run()
    assert std and "tier" not in std[0].labels and task_tier(std[0]) == "standard"
