"""One protocol, every backend: ``swetrain eval`` through a local model folder, an OpenAI-compatible
endpoint on 127.0.0.1 serving the same weights, and the scripted baseline, on the same task."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.eval.protocol import load_eval
from swetrain.tasks.record import save_tasks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))
from train_helpers import make_bug_task  # noqa: E402

PROTOCOL = ["--attempts", "2", "--mode", "feedback", "--seeds", "0,1", "--temperature", "0",
            "--max-turns", "2", "--max-new-tokens", "24", "--split", "", "--json"]


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory):
    root = tmp_path_factory.mktemp("task")
    task = make_bug_task(root / "bug", "index")
    path = root / "tasks.jsonl"
    save_tasks([task.model_copy(update={"source": str(root / "bug" / "repo")})], path)
    return path, task.instance_id


def run_eval(policy: str, tasks_file: Path, out: Path) -> dict:
    res = CliRunner().invoke(app, ["eval", "--policy", policy, "--tasks", str(tasks_file), "--out", str(out), *PROTOCOL])
    assert res.exit_code == 0, res.output
    head = json.loads(res.stdout.strip().splitlines()[-1])
    assert head["eval_json"] == str(out / "eval.json")
    return load_eval(out / "eval.json")


@pytest.mark.slow
def test_local_folder_and_openai_endpoint_give_the_same_protocol(tmp_path, tasks_file):
    from swetrain.policy.hf import HFPolicy
    from swetrain.policy.server import start_in_thread, stop
    from swetrain.policy.tiny import ensure_tiny

    path, iid = tasks_file
    local = run_eval(str(ensure_tiny()), path, tmp_path / "local")
    server, url = start_in_thread(HFPolicy(ensure_tiny(), device="cpu", dtype="float32"), model_name="tiny")
    try:
        remote = run_eval(f"openai:{url}#model=tiny&tokenizer={ensure_tiny()}", path, tmp_path / "remote")
    finally:
        stop(server)
    assert remote["policy"].startswith("openai:") and remote["tasks"] == local["tasks"] == [iid]
    for seed in ("0", "1"):
        # greedy decoding through HTTP and in-process: the same outcomes and the same token bills
        assert remote["outcomes"][seed] == local["outcomes"][seed]
        assert remote["tokens"][seed] == local["tokens"][seed]
        assert all(t > 0 for t in remote["tokens"][seed][iid])
    assert remote["resolved_at"] == local["resolved_at"]


@pytest.mark.slow
def test_scripted_baseline_runs_the_same_protocol(tmp_path, tasks_file):
    path, iid = tasks_file
    info = run_eval("scripted-repair:3", path, tmp_path / "scripted")
    outcomes = info["outcomes"]["0"][iid]
    assert len(outcomes) == 2 and outcomes[0] in (0, 1)
    assert info["resolved_at"][0] <= info["resolved_at"][1]
    assert len(info["tokens"]["0"][iid]) == sum(o is not None for o in outcomes)
