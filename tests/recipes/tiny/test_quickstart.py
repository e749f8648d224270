"""Smoke test of the main job with a tiny schedule (real suite, real verifier, tiny model)."""

from __future__ import annotations

import json

import pytest

from swetrain.tasks.builtin import TASKS_FILE

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not TASKS_FILE.exists(), reason="the built-in suite (tasks.jsonl) is not generated in this checkout")
def test_quickstart_tiny_schedule(tmp_path):
    from swetrain.recipes.tiny.quickstart import QuickstartOptions, run_quickstart

    out = tmp_path / "qs"
    summary = run_quickstart(
        QuickstartOptions(
            out=out, policy="tiny", steps=1, seed=0, eval_tasks=2, tasks_per_step=1, group=2, progress=False,
            overrides=("rollout.max_turns=2", "rollout.max_new_tokens=16"),
        )
    )
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["steps"] == 1 == summary["steps"]
    for when in ("before", "after"):
        for key in ("resolved_at_1", "resolved_at_2", "conditional_recovery"):
            assert 0.0 <= on_disk[when][key] <= 1.0
    assert (out / "report.md").is_file() and (out / "reward.png").is_file() and (out / "resolved_before_after.png").is_file()
    assert (out / "metrics.jsonl").read_text().count("\n") == 1
    assert list((out / "tensorboard").glob("events.out.tfevents.*"))
    assert list((out / "trajectories").glob("part-*.parquet"))
    assert (out / "config.yaml").is_file()
    assert on_disk["trained_checkpoint"] and (out / "checkpoints").is_dir()


def test_quickstart_refuses_a_foreign_out_folder(tmp_path):
    from typer.testing import CliRunner

    from swetrain.cli import app

    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("not a quickstart run")
    res = CliRunner().invoke(app, ["quickstart", "--out", str(out)])
    assert res.exit_code == 2 and "does not look like a quickstart run" in res.output
    assert (out / "notes.txt").read_text() == "not a quickstart run"  # nothing deleted
