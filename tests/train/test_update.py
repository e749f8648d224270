"""One real policy update per recipe on the tiny model moves log-probs in the advantage's direction."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from swetrain.train.batch import collate, token_logprobs
from swetrain.train.config import load_config
from swetrain.train.update import AttemptRecord, PolicyUpdater, cosine_with_warmup, sample_from_trajectory, trajectory_advantages

from train_helpers import TOOLS, fix_turns, make_trajectory


def _model(tiny_path):
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    return AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)


def _mean_logp(model, sample, pad_id, which=None):
    batch = collate([sample], pad_id)
    with torch.no_grad():
        logp = token_logprobs(model.eval(), batch.input_ids, batch.attention_mask)[0]
    mask = batch.loss_mask[0].bool() if which is None else which
    return float(logp[mask].mean())


def _unique_tokens(sample, other):
    """Trainable positions of ``sample`` whose token id the other sample never generated."""
    theirs = {t for t, m in zip(other.token_ids, other.loss_mask) if m}
    return torch.tensor([bool(m) and t not in theirs for t, m in zip(sample.token_ids, sample.loss_mask)])


def _records(trajs):
    return [AttemptRecord(t.instance_id, t.chain, t.attempt - 1, t.resolved) for t in trajs]


def _run(recipe, trajs, tiny_path, tokenizer, overrides=()):
    cfg = load_config(recipe, overrides=["optim.lr=0.002", "optim.warmup_steps=0", *overrides])
    rewards, adv = trajectory_advantages(_records(trajs), cfg.algo)
    samples = [sample_from_trajectory(t, a, r) for t, a, r in zip(trajs, adv, rewards)]
    model = _model(tiny_path)
    ref = copy.deepcopy(model).eval() if cfg.algo.kl_beta > 0 else None
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr)
    sched = cosine_with_warmup(opt, 0, 10, 0.1)
    pad = tokenizer.pad_token_id
    before = [_mean_logp(model, s, pad) for s in samples]
    updater = PolicyUpdater(model, opt, sched, cfg.algo, cfg.optim, pad_id=pad, ref_model=ref)
    metrics = updater.update(samples, torch.Generator().manual_seed(0))
    after = [_mean_logp(model, s, pad) for s in samples]
    return cfg, samples, adv, before, after, metrics, model


@pytest.mark.parametrize("recipe", ["grpo", "minirl"])
def test_one_step_moves_logprobs_along_advantage(recipe, tiny_path, tokenizer):
    trajs = [
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("return a < b"), chain=0, resolved=True),
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("del x[0]; pass"), chain=1, resolved=False),
    ]
    cfg, samples, adv, before, after, metrics, model = _run(recipe, trajs, tiny_path, tokenizer)
    assert adv[0] > 0 > adv[1]
    if recipe == "minirl":
        assert adv == pytest.approx([1.0, -1.0])  # RLOO with one success out of two
        assert "kl/k1_mean" in metrics
    assert metrics["update/optimizer_steps"] == 1 and math.isfinite(metrics["loss"])
    assert after[0] > before[0], "log-prob of the positive-advantage trajectory must rise"
    # tokens only the negative trajectory generated (shared template tokens cancel out)
    pad = tokenizer.pad_token_id
    own = _unique_tokens(samples[1], samples[0])
    base = _model(tiny_path)
    assert _mean_logp(model, samples[1], pad, own) < _mean_logp(base, samples[1], pad, own)


def test_fcswe_step_active_set(tiny_path, tokenizer):
    ctx = "Your previous patch failed: test_a FAILED"
    trajs = [
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("del x[0]; pass"), chain=0, attempt=1, resolved=False),
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("return a < b"), chain=0, attempt=2, resolved=True, context=ctx),
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("return b > a"), chain=1, attempt=1, resolved=True),
    ]
    cfg, samples, adv, before, after, metrics, model = _run("fcswe", trajs, tiny_path, tokenizer)
    # local rewards [0, 1] and [1, ⊥]; active set {0, 1, 1}: leave-one-out baselines
    assert adv[0] < 0 < adv[1] and adv[2] > 0
    assert after[1] > before[1] and after[2] > before[2]
    own = _unique_tokens(samples[0], samples[1])
    pad = tokenizer.pad_token_id
    base = _model(tiny_path)
    assert own.any() and _mean_logp(model, samples[0], pad, own) < _mean_logp(base, samples[0], pad, own)
    # the failure context is in the prompt: never trainable
    recovery = samples[1]
    assert recovery.loss_mask[: trajs[1].prompt_len] == [0] * trajs[1].prompt_len


@pytest.mark.parametrize("penalty", [True, False])
def test_fcswe_runtime_penalty(penalty, tiny_path, tokenizer):
    """A resolved attempt's invalid turn gets -5 (log-prob falls) unless the penalty is off."""
    trajs = [
        make_trajectory(
            tokenizer, TOOLS, "t1", fix_turns("return b > a"), chain=0, resolved=True, invalid=[False, True, False]
        ),
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("del x[0]; pass"), chain=1, resolved=False),
    ]
    over = [] if penalty else ["algo.runtime_penalty=false"]
    cfg, samples, adv, before, after, metrics, model = _run("fcswe", trajs, tiny_path, tokenizer, over)
    inv = torch.tensor(samples[0].invalid, dtype=torch.bool)
    assert inv.any()
    pad = tokenizer.pad_token_id
    base = _model(tiny_path)
    moved = _mean_logp(model, samples[0], pad, inv) - _mean_logp(base, samples[0], pad, inv)
    assert (moved < 0) if penalty else (moved > 0)
    if penalty:
        assert metrics["adv/token_abs_max"] == pytest.approx(5.0)


def test_penalty_shows_in_token_nonzero_frac(tiny_path, tokenizer):
    """No reward in the group: every outcome advantage is 0, but the invalid turn's tokens carry -5."""
    trajs = [
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("return b > a"), chain=0, resolved=False, invalid=[False, True, False]),
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("del x[0]; pass"), chain=1, resolved=False),
    ]
    cfg, samples, adv, before, after, metrics, model = _run("fcswe", trajs, tiny_path, tokenizer, [])
    trainable = sum(s.n_trainable for s in samples)
    penalised = sum(int((torch.as_tensor(s.invalid, dtype=torch.bool) & torch.as_tensor(s.loss_mask, dtype=torch.bool)).sum()) for s in samples)
    assert 0 < penalised < trainable
    assert metrics["adv/token_nonzero_frac"] == pytest.approx(penalised / trainable)
    assert metrics["adv/token_abs_max"] == pytest.approx(5.0)


def test_reward_scheme_ablations():
    recs = [AttemptRecord("t", 0, 0, False), AttemptRecord("t", 0, 1, True), AttemptRecord("t", 1, 0, False), AttemptRecord("t", 1, 1, False)]
    cfg = load_config("fcswe")
    r_local, _ = trajectory_advantages(recs, cfg.algo)
    assert r_local == [0.0, 1.0, 0.0, 0.0]
    cfg.algo.reward_scheme = "broadcast"
    r_b, _ = trajectory_advantages(recs, cfg.algo)
    assert r_b == [1.0, 1.0, 0.0, 0.0]
    cfg.algo.reward_scheme = "last"
    r_l, a_l = trajectory_advantages(recs, cfg.algo)
    assert math.isnan(r_l[0]) and r_l[1] == 1.0 and math.isnan(a_l[0])
    # infrastructure failures (None) are never scored
    r_i, a_i = trajectory_advantages([AttemptRecord("u", 0, 0, None), AttemptRecord("u", 1, 0, True)], cfg.algo)
    assert math.isnan(r_i[0]) and a_i[1] == 0.0


def test_micro_batching_matches_full_batch(tiny_path, tokenizer):
    """Gradient accumulation over micro-batches gives the same update as one big batch."""
    trajs = [
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("return a < b"), chain=0, resolved=True),
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("return a > b + 1"), chain=1, resolved=False),
        make_trajectory(tokenizer, TOOLS, "t1", fix_turns("x"), chain=2, resolved=False),
    ]
    params = []
    for budget in (100000, 16):
        cfg = load_config("grpo", overrides=[f"optim.micro_batch_tokens={budget}", "optim.lr=0.001"])
        rewards, adv = trajectory_advantages(_records(trajs), cfg.algo)
        samples = [sample_from_trajectory(t, a, r) for t, a, r in zip(trajs, adv, rewards)]
        model = _model(tiny_path)
        opt = torch.optim.SGD(model.parameters(), lr=1.0)
        PolicyUpdater(model, opt, None, cfg.algo, cfg.optim, pad_id=tokenizer.pad_token_id).update(samples)
        params.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert torch.allclose(params[0], params[1], atol=1e-5)


@pytest.mark.parametrize("recipe, rewards", [("fcswe", (True, False, False, False)), ("grpo", (False, False, False)),
                                             ("minirl", (True, False, False))])
def test_zero_advantage_rows_skipped_without_changing_the_update(recipe, rewards, tiny_path, tokenizer):
    """Rows whose token advantages are all 0 run no forward/backward, yet the update is the same
    (they stay in the loss normaliser; with no signal at all the optimizer still steps on zeros)."""
    fixes = ["return a < b", "return a > b + 1", "x", "return b"]
    trajs = [make_trajectory(tokenizer, TOOLS, "t1", fix_turns(fixes[c]), chain=c, resolved=r) for c, r in enumerate(rewards)]
    trajs.append(make_trajectory(tokenizer, TOOLS, "t2", fix_turns("return 0"), chain=0, resolved=False))  # lone, A = 0
    trajs.append(make_trajectory(tokenizer, TOOLS, "t2", fix_turns("return 1"), chain=1, resolved=False))
    results = {}
    for skip in (True, False):
        overrides = [f"optim.skip_zero_advantage={str(skip).lower()}", "optim.micro_batch_tokens=64",
                     "optim.mini_batches=2", "optim.epochs=2", "optim.weight_decay=0.01"]
        cfg, samples, adv, before, after, metrics, model = _run(recipe, trajs, tiny_path, tokenizer, overrides)
        results[skip] = (torch.cat([p.detach().flatten() for p in model.parameters()]), metrics)
    zero_rows = sum(1 for a in adv if a == 0)
    assert zero_rows >= 2
    assert torch.allclose(results[True][0], results[False][0], atol=1e-6)
    assert results[True][1]["loss"] == pytest.approx(results[False][1]["loss"], abs=1e-6)
    # minirl: K1(old, ref) is exactly 0 while the policy equals its frozen reference, so the
    # zero-return rows have no token advantage either (they are skipped after scoring)
    assert results[True][1]["update/zero_adv_skipped"] == zero_rows
    assert results[False][1]["update/zero_adv_skipped"] == 0
