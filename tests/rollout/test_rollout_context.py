"""Rollouts whose episodes outgrow the policy's window store them (reason ``context``, reward 0);
a rollout that stores no trajectory at all exits non-zero and says why."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.env.demo import build_demo_task, write_tasks_file
from swetrain.policy.wrappers import LockedPolicy
from swetrain.rollout.engine import RolloutReport
from swetrain.rollout.errors import no_trajectory_message
from swetrain.rollout.store import TrajectoryStore


def windowed_copy(dst, window: int):
    """A model folder of the tiny policy (weights linked, not copied) whose window is ``window``."""
    from swetrain.policy.tiny import ensure_tiny

    src = ensure_tiny()
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and f.name != "config.json":
            (dst / f.name).symlink_to(f.resolve())
    config = json.loads((src / "config.json").read_text())
    config["max_position_embeddings"] = window
    (dst / "config.json").write_text(json.dumps(config))
    return dst


@pytest.mark.slow
def test_rollout_of_a_policy_with_a_small_window_stores_context_terminations(tmp_path):
    """The issue's repro (a fresh tiny model, builtin held-out tasks, G=2, R=2) with a window small
    enough that every episode outgrows it: before, every chain was skipped with ``ValueError:
    prompts: a prompt of N tokens leaves no room in the model's context`` and nothing was stored."""
    model = windowed_copy(tmp_path / "tiny-window", 1200)  # builtin prompts are ~970-1410 tokens
    out = tmp_path / "r1"
    args = ["rollout", "--tasks", "builtin", "--split", "heldout", "--limit", "2", "--policy", f"hf:{model}",
            "--group", "2", "--attempts", "2", "--max-tokens", "32", "--out", str(out), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    rows = TrajectoryStore(out).read_all()
    assert summary["chains_done"] == 4 and summary["chains_skipped"] == 0 and not summary["skipped_tasks"]
    assert summary["trajectories"] == len(rows) == 8  # 2 tasks x 2 chains x 2 attempts, none resolved
    assert summary["stop_reasons"] == {"context": 8}
    assert all(t.stop_reason == "context" and t.reward == 0.0 and t.verdict is not None for t in rows)
    assert all(len(t.token_ids) <= 1200 - 32 or t.num_turns == 0 for t in rows)
    # prompts that never fit, or episodes that outgrew the window after a turn (which, depends on
    # the sampled tasks' prompt lengths): either way stored as context terminations, not skipped
    assert any(t.num_turns == 0 and t.patch == "" for t in rows) or any(t.num_turns >= 1 for t in rows)


def test_rollout_that_stores_nothing_exits_1_and_says_why(tmp_path):
    task = build_demo_task(tmp_path / "demo")
    tasks = write_tasks_file(task, tmp_path / "demo" / "tasks.jsonl")
    task.source_path().rename(tmp_path / "demo" / "moved")  # every workspace now fails to start
    out = tmp_path / "run"
    args = ["rollout", "--tasks", str(tasks), "--policy", "scripted:finish", "--group", "2", "--attempts", "2",
            "--infra-retries", "0", "--out", str(out), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    why = result.stderr.strip().splitlines()[-1]
    assert why.startswith("no trajectory stored: all 2 chains failed: infra failure after 1 tries: workspace for demo__calc-1")
    assert TrajectoryStore(out).count() == 0
    assert json.loads(result.stdout.strip().splitlines()[-1])["trajectories"] == 0


def test_no_trajectory_message():
    assert no_trajectory_message(RolloutReport(chains_resumed=4)) is None  # nothing left to run
    assert no_trajectory_message(RolloutReport(chains_done=1, trajectories=2)) is None
    failed = RolloutReport(chains_skipped=3, skipped_tasks={"a": "ValueError: bad\n  second line", "b": "other"})
    assert no_trajectory_message(failed) == "no trajectory stored: all 3 chains failed: ValueError: bad second line"


def test_locked_policy_exposes_the_window():
    """Workers > 1 share the policy through a LockedPolicy: the loop must still see the window."""
    from transformers import AutoTokenizer

    from swetrain.agent.scripted import ScriptedPolicy, TurnScript
    from swetrain.policy.tiny import ensure_tiny

    policy = ScriptedPolicy(AutoTokenizer.from_pretrained(ensure_tiny()), TurnScript([]), max_context=512)
    assert LockedPolicy(policy).max_context == 512
