"""Rollout integrity: the workspace holds only the task's state, the sandbox shows only the runtime,
and the leak audit finds the answer wherever a sandbox could read it (and nothing when it can't)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swetrain.env.audit import audit_tasks, patch_needles
from swetrain.env.gitutil import git, init_snapshot
from swetrain.env.sandbox import bwrap_available
from swetrain.env.workspace import Workspace, WorkspaceError, _check_single_commit, pristine_snapshot
from swetrain.paths import swetrain_home
from swetrain.tasks import builtin
from swetrain.tasks.record import Task, save_tasks

needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap is not available")


@pytest.fixture(scope="module")
def calcium(tmp_path_factory):
    """The issue's example task, on a materialised built-in snapshot (whose history holds the fix)."""
    tasks = [t for t in builtin.shipped_tasks() if builtin.repo_name(t) == "calcium"]
    repo = builtin.materialise("calcium", tasks, tmp_path_factory.mktemp("builtin"))
    task = next(t for t in tasks if t.instance_id == "builtin__calcium-boundary_shift-5c1c31f4")
    return task.model_copy(update={"source": str(repo)}).with_base_dir(None)


def test_workspace_repository_is_the_task_state_alone(calcium, tmp_path):
    source = calcium.source_path()
    assert len(git(source, "rev-list", "--all").stdout.split()) > 2  # the source has every task's history
    with Workspace.create(calcium, root=tmp_path) as ws:
        out = ws.run("git log --all --format=%s; echo REFS; git for-each-ref --format='%(refname)'; "
                     "echo REFLOG; git reflog; echo STASH; git stash list; echo TAGS; git tag; "
                     "echo ALT; cat .git/objects/info/alternates; git status --porcelain").output
        assert out.split("REFS")[0].strip() == "swetrain: task base state"
        assert out.split("REFS")[1].split("REFLOG")[0].split() == ["refs/heads/main"]
        for section in ("REFLOG", "STASH", "TAGS"):
            assert out.split(section)[1].split("\n", 2)[1].strip() in ("", "STASH", "TAGS", "ALT")
        assert "No such file" in out.split("ALT")[1]
        # the tree is base_commit's, byte for byte; the object store holds just what HEAD reaches
        assert git(ws.path, "rev-parse", "HEAD^{tree}").stdout == git(source, "rev-parse",
                                                                        f"{calcium.base_commit}^{{tree}}").stdout
        stored = ws.run("git cat-file --batch-all-objects --batch-check | wc -l").output.strip()
        reachable = ws.run("git rev-list --objects --all | wc -l").output.strip()
        assert stored == reachable
        # the gold patch still applies and the diff of a change is a patch against the base
        ws.run("git apply -", stdin=calcium.patch.encode())
        short = re.sub(r"^index (\w{7})\w*\.\.(\w{7})\w*", r"index \1..\2", ws.diff(), flags=re.M)
        assert short == calcium.patch


def test_a_snapshot_with_history_is_refused(tmp_path):
    repo = tmp_path / "r"
    init_snapshot(_tree(tmp_path / "src", "x = 1\n"), repo)
    (repo / "a.py").write_text("x = 2\n")
    git(repo, "commit", "-qam", "second")
    head = git(repo, "rev-parse", "HEAD").stdout.decode().strip()
    with pytest.raises(WorkspaceError, match=r"task 't1': the snapshot cannot be made single-commit: .*more than one commit"):
        _check_single_commit("t1", repo, head)


def _tree(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "a.py").write_text(text)
    return folder


@needs_bwrap
def test_sandbox_shows_the_runtime_not_the_host(calcium, tmp_path):
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks([calcium], tasks_file)
    secret_home = Path.home() / ".swetrain-audit-probe"
    secret_home.write_text("host secret")
    try:
        with Workspace.create(calcium, root=tmp_path / "ws") as ws:
            probes = {
                "home": secret_home,
                "swetrain cache": swetrain_home(),
                "pristine snapshot": ws.pristine,
                "task source": calcium.source_path(),
                "tasks file": tasks_file,
                "package data": builtin.TASKS_FILE,
                "built-in repos": builtin.REPOS_DIR,
            }
            for what, path in probes.items():
                res = ws.run(f"ls {path} || echo GONE")
                assert "GONE" in res.output, f"{what} ({path}) is readable from the sandbox: {res.output[:200]}"
            # what commands need is there: the interpreter, git, the task's own code
            res = ws.run("python -c 'import sys; print(sys.version_info[0])' && git --version && ls /testbed")
            assert res.returncode == 0 and "calcium" in res.output
            assert ws.run("cat /etc/hostname; ls /root 2>&1 | head -3; echo $HOME").returncode == 0
    finally:
        secret_home.unlink()


@needs_bwrap
def test_audit_is_clean_on_the_task_and_finds_history_when_planted(calcium):
    """The audit sees what the agent sees; with the source's history fetched into the workspace
    (the old snapshot layout: every commit of the repository reachable) it finds the fix."""

    def old_layout(ws):
        subprocess.run(["git", "-C", str(ws.path), "fetch", "-q", str(calcium.source_path()),
                        "+refs/heads/*:refs/remotes/src/*"], check=True)

    clean = audit_tasks([calcium], scan_runtime=False)
    assert clean.clean and clean.tasks[0].needles >= 3, clean
    leaky = audit_tasks([calcium], scan_runtime=False, prepare=old_layout)
    hits = leaky.tasks[0].hits
    assert not leaky.clean and hits
    assert {h.how for h in hits} == {"git"} and all("/testbed/.git" in h.where for h in hits)
    assert any("if prec < min_prec:" in h.needle and h.kind == "gold" for h in hits)


@needs_bwrap
def test_audit_finds_an_answer_in_a_readable_file_and_in_the_environment(calcium, tmp_path, monkeypatch):
    """A task environment (bound read-only into the sandbox) holding a copy of the fixed file, and a
    variable carrying the patch: both are found and said where."""
    env = tmp_path / "venv"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    fixed = git(calcium.source_path(), "show", f"{calcium.base_commit}~1:calcium/parser.py").stdout
    (env / "lib").mkdir()
    (env / "lib" / "parser_fixed.py").write_bytes(fixed)
    task = calcium.model_copy(update={"environment": str(env)})
    original = Workspace.command_env
    monkeypatch.setattr(Workspace, "command_env",
                        lambda self: {**original(self), "TASK_DUMP": json.dumps(calcium.patch)})
    report = audit_tasks([task], scan_runtime=False)
    where = {(h.how, h.where) for h in report.tasks[0].hits}
    assert ("file", str(env / "lib" / "parser_fixed.py")) in where
    assert ("env", "environment variable TASK_DUMP") in where


def test_needles_skip_what_the_repository_already_shows(calcium):
    plain = patch_needles(calcium, b"")
    forms = {n.form for n in plain}
    assert forms == {"source", "diff", "json"} and all(n.kind == "gold" for n in plain)
    corpus = "\n".join(n.text for n in plain if n.form == "source").encode()
    assert {n.form for n in patch_needles(calcium, corpus)} == {"diff", "json"}
    with pytest.raises(ValueError, match="gold patch is not a unified diff"):
        patch_needles(calcium.model_copy(update={"patch": "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n+only\n"}), b"")


@pytest.mark.slow
@needs_bwrap
def test_audit_cli_over_builtin_and_synthesized_suites(tmp_path):
    """What CI runs: `swetrain env audit` over a sample of the built-in suite and a synthesized suite
    (whole sandbox, system runtime included), both clean; a bad tasks file is one clear error."""
    from swetrain.cli import app

    sys.path.insert(0, str(Path(__file__).parents[1] / "tasks"))
    from test_synth_pipeline import make_project

    tree = make_project(tmp_path / "calc")
    synth = tmp_path / "synth.jsonl"
    res = CliRunner().invoke(app, ["tasks", "synth", "--path", str(tree), "--python", sys.executable, "--out",
                                   str(synth), "--max-tasks", "2", "--workdir", str(tmp_path / "wd"), "--no-verify"])
    assert res.exit_code == 0, res.output
    import random

    from swetrain.tasks.record import load_tasks

    mixed = tmp_path / "mixed.jsonl"
    everything = sorted(builtin.load_builtin(), key=lambda t: t.instance_id)
    chosen = random.Random(0).sample(everything, 6) + load_tasks(synth)
    save_tasks(chosen, mixed)
    res = CliRunner().invoke(app, ["env", "audit", "--tasks", str(mixed), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output.strip().splitlines()[-1])
    assert report["summary"]["tasks"] == len(chosen) and report["summary"]["clean"] == len(chosen)
    assert all(t["needles"] > 0 and t["isolated"] for t in report["tasks"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": 3}\n')
    # a wide terminal: rich wraps the error box at the width, and a long tmp path would split the name
    res = CliRunner().invoke(app, ["env", "audit", "--tasks", str(bad)], env={"COLUMNS": "1000"})
    assert res.exit_code == 2 and "bad.jsonl" in res.output
