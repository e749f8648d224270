"""``swetrain rollout`` end to end with a zero-cost scripted policy."""

from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.env.demo import build_demo_task, write_tasks_file
from swetrain.rollout.store import TrajectoryStore


@pytest.mark.slow
def test_rollout_cli_json_and_store(tmp_path):
    task = build_demo_task(tmp_path / "demo")
    tasks = write_tasks_file(task, tmp_path / "demo" / "tasks.jsonl")
    out = tmp_path / "run"
    args = ["rollout", "--tasks", str(tasks), "--policy", "scripted:finish", "--group", "2", "--attempts", "2",
            "--context", "patch-only", "--out", str(out), "--max-turns", "3", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["resolved@1"] == 0.0 and summary["resolved@2"] == 0.0
    assert summary["conditional_recovery"] == 0.0 and summary["trajectories"] == 4
    rows = TrajectoryStore(out).read_all()
    assert sorted((t.chain, t.attempt) for t in rows) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert all(t.context_variant == "patch-only" for t in rows)
    assert json.loads((out / "rollout.json").read_text())["result"]["stored_rows"] == 4
    # bad input: a clear error naming the option
    bad = CliRunner().invoke(app, [*args[:10], "everything", *args[11:]])
    assert bad.exit_code == 2 and "everything" in bad.output
