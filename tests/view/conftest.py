"""Run directories for the viewer's tests, made by the real commands (kept small).

* ``rollout_run``: ``swetrain rollout`` with the scripted repair agent on two held-out built-in tasks,
  1 chain x 2 attempts: one resolved at attempt 1 (a real diff, passing tests), one failing both
  attempts (attempt 2 gets the failure context), ~10-20 s once per session;
* ``train_run``: ``swetrain train --recipe fcswe`` with ``tiny-sft``, one step of one task x 2 chains.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from view_runs import FAILING, RESOLVED, swetrain


@pytest.fixture(scope="session")
def tasks_file(tmp_path_factory) -> Path:
    from swetrain.tasks.builtin import load_builtin
    from swetrain.tasks.record import save_tasks

    wanted = (RESOLVED, FAILING)
    tasks = [t for t in load_builtin(split="heldout") if t.instance_id in wanted]
    assert len(tasks) == 2, "the built-in suite changed: pick two other held-out tasks"
    path = tmp_path_factory.mktemp("view-tasks") / "tasks.jsonl"
    save_tasks(sorted(tasks, key=lambda t: wanted.index(t.instance_id)), path)
    return path


@pytest.fixture(scope="session")
def rollout_run(tmp_path_factory, tasks_file) -> Path:
    out = tmp_path_factory.mktemp("view-runs") / "rollout"
    swetrain("rollout", "--tasks", str(tasks_file), "--policy", "scripted-repair", "--group", "1", "--attempts", "2",
             "--out", str(out), "--json")
    return out


@pytest.fixture(scope="session")
def train_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("view-runs") / "train"
    swetrain("train", "--recipe", "fcswe", "--out", str(out), "policy=tiny-sft", "train.steps=1", "train.save_every=1",
             "rollout.tasks_per_step=1", "rollout.group=2", "rollout.max_turns=3", "logging.progress=false", timeout=900)
    return out


@pytest.fixture
def run_copy(tmp_path, rollout_run) -> Path:
    """A copy of the rollout run that a test may damage."""
    dst = tmp_path / "run"
    shutil.copytree(rollout_run, dst)
    return dst
