"""One evaluation: ``swetrain eval``, :func:`evaluate_policy` (the quickstart, the learning check) and
the experts pipeline run :func:`run_eval` and write the same ``eval.json`` (scripted repair baseline on
a built-in task, so the run is real and fast)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from swetrain.cli import app
from swetrain.eval.protocol import load_eval, record_samples, task_success

SEED = 1234  # the experts preset's evaluation seed


@pytest.fixture(scope="module")
def task():
    from swetrain.tasks.builtin import load_builtin

    return sorted(load_builtin(split="heldout"), key=lambda t: t.instance_id)[0]


def _experts_pipeline(root):
    from swetrain.experts.config import load_experts_config
    from swetrain.experts.pipeline import ExpertsPipeline
    from swetrain.rollout.cli import build_policy

    cfg = load_experts_config(preset="smoke", overrides=["sampling.workers=1", f"eval.seed={SEED}"])
    pipeline = ExpertsPipeline(cfg, root)
    pipeline._policy = lambda model: build_policy("scripted-repair")  # the model folder is not read
    return cfg, pipeline


def test_cli_evaluate_policy_and_experts_write_one_schema(tmp_path, task):
    from swetrain.eval.evaluate import evaluate_policy
    from swetrain.rollout.cli import build_policy

    cfg, pipeline = _experts_pipeline(tmp_path / "experts")
    s = cfg.sampling
    scores = pipeline.evaluate(tmp_path / "model", [task], tmp_path / "experts-eval")
    experts = load_eval(tmp_path / "experts-eval")

    result = evaluate_policy(build_policy("scripted-repair"), [task], tmp_path / "api", sampling=s.sampling(),
                             attempts=1, context_variant="none", seed=SEED)
    api = load_eval(tmp_path / "api")

    args = ["eval", "--policy", "scripted-repair", "--tasks", _one_task_file(tmp_path, task), "--split", "",
            "--out", str(tmp_path / "cli"), "--attempts", "1", "--mode", "resample", "--seeds", str(SEED),
            "--temperature", str(s.temperature), "--max-turns", str(s.max_turns),
            "--max-new-tokens", str(s.max_new_tokens), "--max-context-tokens", str(s.max_context_tokens), "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    cli = load_eval(tmp_path / "cli")

    records = {"cli": cli, "evaluate_policy": api, "experts": experts}
    keys = {name: set(r) - {"_path", "task_source", "split", "tier", "task_sample_seed", "limit", "policy_path"}
            for name, r in records.items()}
    assert keys["cli"] == keys["evaluate_policy"] == keys["experts"], keys
    assert {name: set(r["protocol"]) for name, r in records.items()} == {name: set(cli["protocol"]) for name in records}
    # the same protocol, the same sampling, the same decoding seed: the same attempts and token bills
    iid = task.instance_id
    for r in records.values():
        assert r["schema"] == "swetrain.eval/1" and record_samples(r) == [str(SEED)] and r["tasks"] == [iid]
        assert (r["mode"], r["context"], r["attempts"]) == ("resample", "none", 1)
    assert cli["outcomes"] == api["outcomes"] == experts["outcomes"]
    assert cli["tokens"] == api["tokens"] == experts["tokens"]
    assert sum(cli["tokens"][str(SEED)][iid]) > 0
    # each caller's view is computed from that record
    assert scores == task_success(experts) == {iid: float(cli["outcomes"][str(SEED)][iid][0])}
    assert result.resolved_at_1 == cli["resolved_at"][0] and result.per_task == {iid: [[float(scores[iid])]]}


def _one_task_file(tmp_path, task) -> str:
    from swetrain.tasks.record import save_tasks

    path = tmp_path / "tasks.jsonl"
    save_tasks([task], path)
    return str(path)


def test_chains_are_samples_of_one_record(tmp_path, task):
    """``chains`` per seed (the learning check's samples, the experts' eval.samples) are samples
    ``"<seed>:<chain>"`` of the record, and the experts' per-task score averages them."""
    cfg, pipeline = _experts_pipeline(tmp_path / "experts")
    pipeline.cfg.eval.samples = 2
    scores = pipeline.evaluate(tmp_path / "model", [task], tmp_path / "ev")
    record = load_eval(tmp_path / "ev")
    assert record["chains"] == 2 and record_samples(record) == [f"{SEED}:0", f"{SEED}:1"]
    got = [record["outcomes"][k][task.instance_id][0] for k in record_samples(record)]
    assert scores[task.instance_id] == pytest.approx(sum(got) / 2)
    assert json.loads((tmp_path / "ev" / "eval.json").read_text())["protocol"]["chains"] == 2
