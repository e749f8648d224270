"""Config validation, atomic phases, bad inputs (no rollouts: fast)."""

from __future__ import annotations

import json

import pytest

from swetrain.experts.config import load_experts_config
from swetrain.experts.phases import PhaseStore
from swetrain.experts.pipeline import ExpertsError, ExpertsPipeline, _balanced
from swetrain.train.config import ConfigError


def test_config_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"experts\.rl\.stepz: unknown key"):
        load_experts_config(preset="smoke", overrides=["experts.rl.stepz=3"])
    with pytest.raises(ConfigError, match=r"mopd\.lam: .*greater than or equal to 1"):
        load_experts_config(preset="smoke", overrides=["mopd.lam=0.5"])
    with pytest.raises(ConfigError, match=r"mopd\.mix: routes \['Z'\]"):
        load_experts_config(preset="smoke", overrides=["mopd.mix={Z: 1}"])
    with pytest.raises(ConfigError, match=r"label\.file: required"):
        load_experts_config(preset="smoke", overrides=["label.source=file"])
    with pytest.raises(ConfigError, match="unknown preset"):
        load_experts_config(preset="huge")
    bad = tmp_path / "c.yaml"
    bad.write_text("pool: {routes: [A, A]}\n")
    with pytest.raises(ConfigError, match=r"pool\.routes: .*distinct"):
        load_experts_config(bad)


def test_unknown_loss_name_is_one_clear_error():
    with pytest.raises(ConfigError, match=r"(?s)experts\.rl\.overrides: .*unknown policy loss 'ppo'"):
        load_experts_config(preset="smoke", overrides=["experts.rl.overrides=[algo.policy_loss=ppo]"])
    with pytest.raises(ConfigError, match=r"(?s)mopd\.overrides: .*algo\.lr: unknown key"):
        load_experts_config(preset="smoke", overrides=["mopd.overrides=[algo.lr=1]"])


def test_phase_store_is_atomic_and_skips(tmp_path):
    store = PhaseStore(tmp_path, log=lambda m: None)
    calls = []

    def ok(tmp):
        calls.append(1)
        (tmp / "out.txt").write_text("x")
        return {"value": 1}

    def boom(tmp):
        (tmp / "half.txt").write_text("half")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        store.run("a/b", boom)
    assert not (tmp_path / "a" / "b").exists() and not list((tmp_path / ".tmp").iterdir())
    # a stale folder of a killed process is removed on the next run
    (tmp_path / ".tmp" / "a__b.999999").mkdir()
    info = store.run("a/b", ok)
    assert info["value"] == 1 and (tmp_path / "a" / "b" / "out.txt").read_text() == "x"
    assert json.loads((tmp_path / "a" / "b" / "phase.json").read_text())["value"] == 1
    assert not list((tmp_path / ".tmp").iterdir())
    assert store.run("a/b", ok)["value"] == 1 and len(calls) == 1 and store.skipped == ["a/b"]


def _pipe(tmp_path, *overrides):
    cfg = load_experts_config(preset="smoke", overrides=list(overrides))
    return ExpertsPipeline(cfg, tmp_path / "run", log=lambda m: None)


def test_route_with_no_tasks(tmp_path):
    p = _pipe(tmp_path, "pool.routes=[A, Z]", "baselines.enabled=false")
    with pytest.raises(ExpertsError, match="route Z: no training tasks"):
        p.run()
    assert not (tmp_path / "run" / "label").exists()


def test_labels_file_must_match_the_pool(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"instance_id": "nope__1", "route": "A"}) + "\n")
    p = _pipe(tmp_path, "label.source=file", f"label.file={labels}")
    with pytest.raises(ExpertsError, match="does not match the pool"):
        p.run()
    assert not (tmp_path / "run" / "label").exists()


def test_labels_file_assigns_routes(tmp_path):
    from swetrain.tasks.builtin import load_builtin

    labels = tmp_path / "labels.jsonl"
    rows = [{"instance_id": t.instance_id, "route": "B" if t.route == "A" else t.route}
            for split in ("train", "heldout") for t in load_builtin(split=split)]
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    p = _pipe(tmp_path, "label.source=file", f"label.file={labels}", "pool.routes=[A, B]")
    with pytest.raises(ExpertsError, match="route A: no training tasks"):
        p.run()
    p = _pipe(tmp_path, "label.source=file", f"label.file={labels}", "pool.routes=[B, C]")
    p.phases.run("label", p.phase_label)
    routes = p.routes()
    assert routes["source"] == "file" and len(routes["train"]["B"]) == 3
    assert all(p.tasks()[i].route == "B" for i in routes["train"]["B"])


def test_missing_expert_checkpoint(tmp_path):
    p = _pipe(tmp_path)
    p.phases.run("label", p.phase_label)
    with pytest.raises(ExpertsError, match="expert checkpoint of route A is missing"):
        p.phases.run("mopd", lambda tmp: p.phase_mopd(tmp, {"A": "experts/A/r1-rl/model", "B": "base", "C": "base"}))
    assert not (tmp_path / "run" / "mopd").exists() and not list((tmp_path / "run" / ".tmp").iterdir())


def test_other_config_in_same_dir_is_refused(tmp_path):
    p = _pipe(tmp_path)
    p.phases.run("label", p.phase_label)
    (tmp_path / "run" / "config.yaml").write_text(p.cfg.to_yaml())
    q = _pipe(tmp_path, "experts.rounds=2")
    with pytest.raises(ExpertsError, match="another config"):
        q.run()


class _T:
    def __init__(self, iid, route):
        self.instance_id, self.route = iid, route


def test_balanced_stream_upsamples_routes():
    pools = {"A": [_T(f"a{i}", "A") for i in range(4)], "B": [_T("b0", "B")]}
    s = _balanced(pools, None, 0)
    assert [t.route for t in s].count("A") == 4 and [t.route for t in s].count("B") == 4
    assert [t.route for t in s[:4]] in (["A", "B", "A", "B"], ["B", "A", "B", "A"])
    s = _balanced(pools, {"A": 3, "B": 1}, 0)
    assert [t.route for t in s].count("A") == 6 and [t.route for t in s].count("B") == 2


def test_rl_phase_keeps_the_best_checkpoint(tmp_path, monkeypatch):
    """Within an RL phase the model is the checkpoint with the best target-route score (ties: the later)."""
    import swetrain.train.rl as rl

    class FakeTrainer:
        def __init__(self, config, run_dir, **kw):
            self.run_dir = run_dir
            self.steps = config.train.steps

        def train(self):
            for step in range(1, self.steps + 1):
                d = self.run_dir / "checkpoints" / f"step-{step:08d}" / "model"
                d.mkdir(parents=True)
                (d / "config.json").write_text(json.dumps({"step": step}))
            (self.run_dir / "metrics.jsonl").write_text("".join(json.dumps({"step": s}) + "\n" for s in range(1, self.steps + 1)))

    monkeypatch.setattr(rl, "RLTrainer", FakeTrainer)
    p = _pipe(tmp_path, "experts.rl.steps=3", "experts.rl.save_every=1")
    scores = {1: 0.5, 2: 1.0, 3: 1.0}
    monkeypatch.setattr(p, "evaluate", lambda model, tasks, out: {"t": scores[json.loads((model / "config.json").read_text())["step"]]})
    tmp = tmp_path / "phase"
    tmp.mkdir()
    info = p.rl_phase(tmp, "x", tmp_path, [], ["t"], p.cfg.experts.rl)
    assert info["candidates"] == {1: 0.5, 2: 1.0, 3: 1.0} and info["best_step"] == 3 and info["score"] == 1.0
    assert json.loads((tmp / "model" / "config.json").read_text())["step"] == 3
    assert not (tmp / "run" / "checkpoints").exists()


def test_repair_sft_keeps_the_best_epoch(tmp_path, monkeypatch, tiny_path, tokenizer):
    """Repair SFT saves every epoch and keeps the one with the best target-route score (ties: the later)."""
    from swetrain.train.sft import SFTConfig, SFTTrainer, sample_for_sft
    from train_helpers import TOOLS, fix_turns, make_trajectory

    p = _pipe(tmp_path)
    trainer = SFTTrainer.from_pretrained(tiny_path, SFTConfig(epochs=3, lr=1e-3, batch_tokens=64, seed=0))
    samples = [sample_for_sft(make_trajectory(tokenizer, TOOLS, f"t{i}", fix_turns("return a < b"), resolved=True))
               for i in range(2)]
    weights = {}

    def on_epoch_end(step, total, metrics):
        saver(step, total, metrics)
        if step * 3 % total == 0:
            weights[step * 3 // total] = trainer.model.lm_head.weight.detach().clone()

    saver = p.epoch_saver(trainer, tmp_path / "phase" / "epochs", 3)
    trainer.train(samples, on_epoch_end)
    assert sorted(d.name for d in (tmp_path / "phase" / "epochs").iterdir()) == ["epoch-1", "epoch-2", "epoch-3"]
    scores = {"epoch-1": 0.5, "epoch-2": 1.0, "epoch-3": 0.25}
    monkeypatch.setattr(p, "evaluate", lambda model, tasks, out: {"t": scores[model.name]})
    best, candidates = p.best_epoch(tmp_path / "phase" / "epochs", ["t"], tmp_path / "phase")
    assert best == 2 and candidates == {1: 0.5, 2: 1.0, 3: 0.25}
    assert not (tmp_path / "phase" / "epochs").exists()
    import torch
    from transformers import AutoModelForCausalLM

    kept = AutoModelForCausalLM.from_pretrained(tmp_path / "phase" / "model", dtype=torch.float32)
    assert torch.allclose(kept.lm_head.weight, weights[2]) and not torch.allclose(kept.lm_head.weight, weights[3])
