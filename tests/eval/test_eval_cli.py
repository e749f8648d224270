"""``swetrain eval`` runs the held-out protocol on a real task with a real (tiny) model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.tasks.record import save_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))
from train_helpers import make_bug_task  # noqa: E402


def bug_tasks_file(tmp_path: Path):
    """One real bug task (a git repository under tmp_path/bug) and its tasks.jsonl."""
    task = make_bug_task(tmp_path / "bug", "index")
    tasks_file = tmp_path / "bug" / "tasks.jsonl"
    save_tasks([task.model_copy(update={"source": str(tmp_path / "bug" / "repo")})], tasks_file)
    return task, tasks_file


@pytest.mark.slow
def test_eval_cli_writes_metrics(tmp_path):
    from swetrain.policy.tiny import ensure_tiny

    task, tasks_file = bug_tasks_file(tmp_path)
    out = tmp_path / "eval"
    args = ["eval", "--policy", str(ensure_tiny()), "--tasks", str(tasks_file), "--split", "", "--out", str(out),
            "--max-turns", "2", "--max-new-tokens", "16", "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    head = json.loads(res.stdout.strip().splitlines()[-1])
    assert head["n_tasks"] == 1 and 0.0 <= head["resolved_at_1"] <= head["resolved_at_2"] <= 1.0
    info = json.loads((out / "eval.json").read_text())
    assert info["policy_path"] == str(ensure_tiny()) and len(info["outcomes"]["0"][task.instance_id]) == 2


def test_eval_cli_names_a_bad_policy(tmp_path):
    task, tasks_file = bug_tasks_file(tmp_path)
    res = CliRunner().invoke(app, ["eval", "--policy", "no-such-model", "--tasks", str(tasks_file), "--split", ""])
    assert res.exit_code != 0 and "no-such-model" in res.output


def test_eval_cli_that_stores_nothing_exits_1_and_says_why(tmp_path):
    from swetrain.policy.tiny import ensure_tiny

    task, tasks_file = bug_tasks_file(tmp_path)
    (tmp_path / "bug" / "repo").rename(tmp_path / "bug" / "moved")  # every workspace fails to start
    out = tmp_path / "eval"
    res = CliRunner().invoke(app, ["eval", "--policy", str(ensure_tiny()), "--tasks", str(tasks_file), "--split", "",
                                   "--out", str(out), "--seeds", "0,1", "--json"])
    assert res.exit_code == 1, res.output
    why = res.stderr.strip().splitlines()[-1]
    assert why.startswith("evaluation: no trajectory stored in any seed") and "infra failure after 3 tries" in why
    assert not (out / "eval.json").exists()


def test_eval_cli_dtype_runs_the_weights_in_bfloat16(tmp_path):
    from swetrain.policy.tiny import ensure_tiny

    task, tasks_file = bug_tasks_file(tmp_path)
    out = tmp_path / "eval"
    args = ["eval", "--policy", str(ensure_tiny()), "--tasks", str(tasks_file), "--split", "", "--out", str(out),
            "--attempts", "1", "--max-turns", "1", "--max-new-tokens", "8", "--dtype", "bfloat16", "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    info = json.loads((out / "eval.json").read_text())
    assert info["dtype"] == "bfloat16" and info["generated_tokens"]


def test_eval_cli_dtype_is_checked(tmp_path):
    from swetrain.policy.tiny import ensure_tiny

    task, tasks_file = bug_tasks_file(tmp_path)
    base = ["eval", "--tasks", str(tasks_file), "--split", "", "--out", str(tmp_path / "eval")]

    def said(res) -> str:  # the error box's text on one line
        return " ".join(res.output.replace("│", " ").split())

    res = CliRunner().invoke(app, [*base, "--policy", "scripted-repair", "--dtype", "bfloat16"])
    assert res.exit_code != 0 and "--dtype" in said(res) and "not a local model" in said(res)
    res = CliRunner().invoke(app, [*base, "--policy", str(ensure_tiny()), "--dtype", "bfloat12"])
    assert res.exit_code != 0 and "bfloat12" in said(res) and not (tmp_path / "eval" / "eval.json").exists()
