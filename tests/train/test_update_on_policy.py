"""The on-policy shortcut of ``PolicyUpdater``: one epoch of one mini-batch takes the old log-probs
from the training forward itself (no scoring forward), and the update is the same as with them
scored separately."""

from __future__ import annotations

import copy

import pytest
import torch

from swetrain.train.config import load_config
from swetrain.train.update import AttemptRecord, PolicyUpdater, has_active_dropout, sample_from_trajectory, trajectory_advantages

from train_helpers import TOOLS, fix_turns, make_trajectory


def _model(tiny_path):
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    return AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)


def _samples(tokenizer, cfg):
    fixes = [("return a < b", True), ("return a > b + 1", False), ("x", False), ("return b", True)]
    trajs = [make_trajectory(tokenizer, TOOLS, "t1", fix_turns(f), chain=c, resolved=r, invalid=[False, c == 2, False])
             for c, (f, r) in enumerate(fixes)]
    records = [AttemptRecord(t.instance_id, t.chain, t.attempt - 1, t.resolved) for t in trajs]
    rewards, adv = trajectory_advantages(records, cfg.algo)
    samples = [sample_from_trajectory(t, a, r) for t, a, r in zip(trajs, adv, rewards)]
    # one row without behaviour log-probs (a scripted policy): its behaviour is the old log-probs
    samples[1].behavior_logprobs = [0.0] * len(samples[1].token_ids)
    samples[1].meta["has_behavior_logprobs"] = False
    return samples


def _update(recipe, overrides, tiny_path, tokenizer, opt="sgd"):
    cfg = load_config(recipe, overrides=["optim.warmup_steps=0", "optim.micro_batch_tokens=256", *overrides])
    samples = _samples(tokenizer, cfg)
    model = _model(tiny_path)
    ref = copy.deepcopy(model).eval() if cfg.algo.kl_beta > 0 else None
    if opt == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    updater = PolicyUpdater(model, optimizer, None, cfg.algo, cfg.optim, pad_id=tokenizer.pad_token_id, ref_model=ref)
    metrics = updater.update(samples, torch.Generator().manual_seed(0))
    return torch.cat([p.detach().flatten() for p in model.parameters()]), metrics


@pytest.mark.parametrize(
    "recipe, extra",
    [
        ("grpo", []),
        ("fcswe", []),  # runtime penalty on the invalid turn
        ("fcswe", ["optim.skip_zero_advantage=false", "algo.loss_agg=seq-mean-token-mean"]),
        ("minirl", ["algo.kl_beta=0"]),  # TIS against behaviour log-probs, return-to-go without K1
    ],
)
def test_shortcut_gives_the_same_update(recipe, extra, tiny_path, tokenizer):
    on, m_on = _update(recipe, extra, tiny_path, tokenizer)
    off, m_off = _update(recipe, [*extra, "optim.on_policy_shortcut=false"], tiny_path, tokenizer)
    assert m_on["update/on_policy_shortcut"] == 1.0 and m_off["update/on_policy_shortcut"] == 0.0
    start = torch.cat([p.detach().flatten() for p in _model(tiny_path).parameters()])
    moved = float((on - start).abs().max())
    assert moved > 1e-3  # the update did something
    assert torch.allclose(on, off, atol=1e-6, rtol=1e-5), float((on - off).abs().max())
    assert m_on["loss"] == pytest.approx(m_off["loss"], abs=1e-6)
    assert m_on["grad_norm"] == pytest.approx(m_off["grad_norm"], rel=1e-5)
    assert m_on["pg/ratio_mean"] == 1.0
    if recipe == "minirl":
        assert m_on["pg/is_weight_mean"] == pytest.approx(m_off["pg/is_weight_mean"], abs=1e-6)


def test_shortcut_with_adamw(tiny_path, tokenizer):
    on, _ = _update("grpo", [], tiny_path, tokenizer, opt="adamw")
    off, _ = _update("grpo", ["optim.on_policy_shortcut=false"], tiny_path, tokenizer, opt="adamw")
    assert torch.allclose(on, off, atol=1e-6)


@pytest.mark.parametrize(
    "recipe, extra",
    [
        ("grpo", ["optim.epochs=2"]),
        ("grpo", ["optim.mini_batches=2"]),
        ("minirl", []),  # kl_beta > 0: K1(old, ref) enters the advantages
        ("grpo", ["optim.on_policy_shortcut=false"]),
    ],
)
def test_shortcut_only_when_exactly_on_policy(recipe, extra, tiny_path, tokenizer):
    _, metrics = _update(recipe, extra, tiny_path, tokenizer)
    assert metrics["update/on_policy_shortcut"] == 0.0


def test_active_dropout_disables_the_shortcut(tiny_path, tokenizer):
    model = _model(tiny_path)
    assert not has_active_dropout(model)
    model.config.attention_dropout = 0.1
    assert has_active_dropout(model)
    cfg = load_config("grpo")
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    assert not PolicyUpdater(model, optimizer, None, cfg.algo, cfg.optim).on_policy_shortcut()
    model.config.attention_dropout = 0.0
    assert PolicyUpdater(model, optimizer, None, cfg.algo, cfg.optim).on_policy_shortcut()
    model.model.layers[0].mlp.add_module("drop", torch.nn.Dropout(0.1))
    assert has_active_dropout(model)
