"""An RL step whose rollout stores no trajectory raises NoTrajectoryError (``swetrain train``: exit 1)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.rollout.errors import NoTrajectoryError
from swetrain.tasks import save_tasks
from swetrain.train.config import load_config
from train_helpers import make_bug_task

OVERRIDES = ["train.steps=1", "rollout.tasks_per_step=1", "rollout.group=2", "rollout.max_turns=1",
             "rollout.max_new_tokens=8", "logging.progress=false", "logging.tensorboard=false"]


@pytest.fixture()
def unreachable_task(tmp_path):
    """A real task whose repository has moved away: every workspace fails to start."""
    task = make_bug_task(tmp_path / "bug", "index")
    task.source = str(task.source_path())
    task.source_path().rename(tmp_path / "bug" / "moved")
    return task


def test_step_without_trajectories_raises(tmp_path, unreachable_task, tiny_path):
    from swetrain.train.rl import RLTrainer

    trainer = RLTrainer(load_config("fcswe", None, OVERRIDES), tmp_path / "run", tasks=[unreachable_task], policy_path=tiny_path)
    with pytest.raises(NoTrajectoryError, match="^RL step 1: no trajectory stored: all 2 chains failed: infra failure"):
        trainer.train_step()
    assert trainer.step == 0  # the step did not count


def test_train_cli_exits_1_and_says_why(tmp_path, unreachable_task, tiny_path):
    tasks_file = tmp_path / "tasks.jsonl"
    save_tasks([unreachable_task], tasks_file)
    res = CliRunner().invoke(app, ["train", "--recipe", "fcswe", "--out", str(tmp_path / "run"),
                                   f"tasks.source={tasks_file}", f"policy={tiny_path}", *OVERRIDES])
    assert res.exit_code == 1, res.output
    assert res.stderr.strip().splitlines()[-1].startswith("RL step 1: no trajectory stored: all 2 chains failed")
