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


def _flat(output: str) -> str:
    """The CLI's error text without rich's box and line wrapping."""
    return "".join(output.replace("│", " ").split())


def test_rollout_cli_bad_tasks_file_and_policy_spec_are_usage_errors(tmp_path):
    bad_rows = tmp_path / "bad.jsonl"
    bad_rows.write_text('{"instance_id": 3}\n')
    out = tmp_path / "run"
    base = ["rollout", "--policy", "scripted:finish", "--out", str(out), "--group", "1"]
    result = CliRunner().invoke(app, [*base, "--tasks", str(bad_rows)])
    assert result.exit_code == 2 and "bad.jsonl:1" in _flat(result.output) and "instance_id" in _flat(result.output)
    result = CliRunner().invoke(app, [*base, "--tasks", str(tmp_path / "absent.jsonl")])
    assert result.exit_code == 2 and "doesnotexist" in _flat(result.output)
    task = build_demo_task(tmp_path / "demo")
    tasks = write_tasks_file(task, tmp_path / "demo" / "tasks.jsonl")
    for spec, why in (("scripted:nonsense", "unknown scripted policy"), ("gpt:x", "unknown scheme")):
        result = CliRunner().invoke(app, ["rollout", "--policy", spec, "--out", str(out), "--tasks", str(tasks)])
        assert result.exit_code == 2 and "".join(why.split()) in _flat(result.output), result.output
    assert not (out / "trajectories").exists()  # nothing was run or stored


def test_tier_filter_keeps_one_tier_and_names_the_tiers_on_a_miss():
    import typer

    from swetrain.rollout.cli import filter_tier, sample_tasks
    from swetrain.tasks.record import task_tier

    easy = sample_tasks("builtin", "heldout", 0, 0, "easy")
    assert easy and {task_tier(t) for t in easy} == {"easy"}
    standard = sample_tasks("builtin", "heldout", 0, 0, "standard")
    assert standard and not {t.instance_id for t in easy} & {t.instance_id for t in standard}
    with pytest.raises(typer.BadParameter, match="tiers here: easy, standard"):
        filter_tier(easy + standard, "hard")


def test_builtin_rows_saved_to_a_file_get_their_snapshots(tmp_path):
    from swetrain.rollout.cli import load_task_spec
    from swetrain.tasks.builtin import shipped_tasks

    rows = [t for t in shipped_tasks() if t.split == "heldout"][:2]
    assert all(not t.source for t in rows)
    path = tmp_path / "two.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in rows))
    loaded = load_task_spec(str(path), None)
    assert [t.instance_id for t in loaded] == [t.instance_id for t in rows]
    for t in loaded:
        assert t.source and (t.source_path() / ".git").exists()
