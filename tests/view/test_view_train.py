"""The viewer on a real training run: advantages recomputed as the trainer did, metrics, checkpoint tokenizer."""

from __future__ import annotations

import math

import pytest

from swetrain.view.build import build_run, page_data

pytestmark = pytest.mark.slow


def test_train_run_advantages_match_the_trainer(train_run):
    view = build_run(train_run)
    assert view.run.kind == "train"
    assert [s.name for s in view.run.sources] == ["."] and 0 in view.train
    metrics = view.run.metrics
    assert len(metrics) == 1 and metrics[0]["step"] == 1
    m = metrics[0]
    rows = view.index
    assert len(rows) == m["rollout/trajectories"] + m["rollout/incomplete_group_rows"]
    assert all(e["step"] == 1 for e in rows)
    trained = [e for e in rows if e["adv"] is not None]
    assert trained, "every complete group has advantages"
    # the trainer's own logged numbers, recounted from the recomputed values
    assert math.isclose(sum(e["reward"] for e in trained) / len(trained), m["reward/mean"], abs_tol=1e-9)
    nonzero = sum(1 for e in rows if e["adv"] not in (None, 0.0)) / len(rows)
    assert math.isclose(nonzero, m["adv/nonzero_frac"], abs_tol=1e-9)
    # tokens: advantages and the runtime penalty travel with each episode; behaviour log-probs of a model
    ep = view.episodes[trained[0]["key"]]["tokens"]
    assert ep["step"] == 1 and ep["penalty"] == -5.0 and ep["adv"] == trained[0]["adv"]
    assert ep["lp"] is not None and any(v != 0 for v in ep["lp"])
    assert all(v == 0 for v, c in zip(ep["lp"], ep["mask"]) if c == "0")  # log-probs only where generated
    summary = page_data([view])["runs"][0]
    assert summary["tokenizer"]["how"] == "the run's latest checkpoint"
    assert summary["sources"][0]["train"] is True
    assert any(f["name"] == "config.yaml" for f in summary["files"])


def test_eval_run(tmp_path, tasks_file):
    """``swetrain eval`` run: stores under seed-S/, R@k from eval.json beside the recount."""
    from view_runs import swetrain

    out = tmp_path / "eval"
    swetrain("eval", "--policy", "scripted-repair", "--tasks", str(tasks_file), "--attempts", "2",
             "--mode", "feedback", "--seeds", "0", "--out", str(out))
    view = build_run(out)
    assert view.run.kind == "eval" and [s.name for s in view.run.sources] == ["seed-0"]
    summary = page_data([view])["runs"][0]
    stated = next(d for d in summary["declared"] if d["record"] == "eval.json")
    recount = summary["recount"][0]
    assert stated["resolved@1"] == pytest.approx(recount["resolved@1"])
    assert stated["resolved@2"] == pytest.approx(recount["resolved@2"])
    assert summary["tokenizer"] is not None
