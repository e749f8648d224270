"""MOPD through the trainer's updater: teacher routing by label, K+1 frozen forwards, ExOPD gate."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from swetrain.algos.distill import mopd_advantages
from swetrain.train.batch import collate, token_logprobs
from swetrain.train.config import ConfigError, load_config
from swetrain.train.update import PolicyUpdater, cosine_with_warmup, sample_from_trajectory

from train_helpers import TOOLS, fix_turns, make_trajectory

MOPD = ["algo.policy_loss=mopd", "algo.loss_agg=seq-mean-segment-sum", "algo.kl_beta=0", "algo.use_return_to_go=false",
        "algo.runtime_penalty=false", "algo.mopd.teachers={A: a, B: b}", "optim.lr=0.002"]


def _model(tiny_path, noise=0.0, seed=0):
    from transformers import AutoModelForCausalLM

    m = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)
    if noise:
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for p in m.parameters():
                p.add_(noise * torch.randn(p.shape, generator=g))
    return m.eval()


class Counter:
    """Counts forward passes and rows through a frozen model."""

    def __init__(self, model):
        self.calls = 0
        self.rows = 0
        getattr(model, "model", model).register_forward_pre_hook(self, with_kwargs=True)

    def __call__(self, module, args, kwargs):
        self.calls += 1
        ids = args[0] if args else kwargs.get("input_ids")
        self.rows += int(ids.shape[0])


def _logp(model, sample, pad):
    b = collate([sample], pad)
    with torch.no_grad():
        return token_logprobs(model.eval(), b.input_ids, b.attention_mask)[0, : len(sample.token_ids)]


def _setup(tiny_path, tokenizer, overrides=()):
    cfg = load_config("minirl", overrides=[*MOPD, *overrides])
    trajs = [
        make_trajectory(tokenizer, TOOLS, "a1", fix_turns("return a < b"), chain=0, resolved=True),
        make_trajectory(tokenizer, TOOLS, "a2", fix_turns("del x[0]"), chain=0),
        make_trajectory(tokenizer, TOOLS, "b1", fix_turns("return a > b"), chain=0),
    ]
    samples = [sample_from_trajectory(t, 0.0, float(t.resolved)) for t in trajs]
    student = _model(tiny_path)
    for s, route in zip(samples, ["A", "A", "B"]):
        s.meta["route"] = route
        # behaviour log-probs of an on-policy rollout: the student's own (the helper writes -1.0)
        s.behavior_logprobs = [float(x) * m for x, m in zip(_logp(student, s, tokenizer.pad_token_id), s.loss_mask)]
    ref = copy.deepcopy(student).eval().requires_grad_(False)
    teachers = {"A": _model(tiny_path, 0.02, 1).requires_grad_(False), "B": _model(tiny_path, 0.02, 2).requires_grad_(False)}
    opt = torch.optim.AdamW(student.parameters(), lr=cfg.optim.lr)
    upd = PolicyUpdater(student, opt, cosine_with_warmup(opt, 0, 10, 0.1), cfg.algo, cfg.optim,
                        pad_id=tokenizer.pad_token_id, ref_model=ref, teachers=teachers)
    return cfg, samples, student, ref, teachers, upd


def test_routed_teachers_and_advantages_match_eq25(tiny_path, tokenizer):
    cfg, samples, student, ref, teachers, upd = _setup(tiny_path, tokenizer)
    pad = tokenizer.pad_token_id
    counters = {k: Counter(m) for k, m in teachers.items()}
    ref_count = Counter(ref)
    adv, metrics = upd.mopd_token_advantages(samples)
    # teacher routing by label: A scores exactly the two A rows, B the one B row; the ref all three
    assert counters["A"].rows == 2 and counters["B"].rows == 1 and ref_count.rows == 3
    assert metrics["mopd/frozen_forwards"] == 3.0  # K + 1 with K = 2 routes
    for s, a in zip(samples, adv):
        t = teachers[s.meta["route"]]
        lt, lr = _logp(t, s, pad), _logp(ref, s, pad)
        lb = torch.tensor(s.behavior_logprobs)
        want = mopd_advantages(lt, lb, lr, lam=1.25, gate=True, clip=5.0)
        mask = torch.tensor(s.loss_mask, dtype=torch.bool)
        assert torch.allclose(a[mask], want[mask], atol=1e-5)
        assert float(a[~mask].abs().sum()) == 0.0
        assert float(a.abs().max()) <= 5.0 + 1e-6
    assert {"mopd/student_teacher_k1/A", "mopd/student_teacher_k1/B", "mopd/gate_open_frac"} <= set(metrics)


def test_gate_and_lambda(tiny_path, tokenizer):
    _, samples, _, _, _, gated = _setup(tiny_path, tokenizer)
    _, _, _, _, _, open_ = _setup(tiny_path, tokenizer, ["algo.mopd.gate=false"])
    _, _, _, _, _, plain = _setup(tiny_path, tokenizer, ["algo.mopd.lam=1.0"])
    a_g, m = gated.mopd_token_advantages(samples)
    a_o, _ = open_.mopd_token_advantages(samples)
    a_p, _ = plain.mopd_token_advantages(samples)
    assert 0.0 < m["mopd/gate_open_frac"] < 1.0
    for g, o, p in zip(a_g, a_o, a_p):
        assert torch.all(g >= p - 1e-6)  # the ReLU gate only adds (λ - 1) * max(gap, 0) >= 0
        assert torch.all(o <= g + 1e-6)  # without the gate negative gaps pull the advantage down
    assert any(not torch.allclose(g, o) for g, o in zip(a_g, a_o))


def test_update_runs_and_moves_student(tiny_path, tokenizer):
    cfg, samples, student, ref, teachers, upd = _setup(tiny_path, tokenizer)
    before = [p.detach().clone() for p in student.parameters()]
    metrics = upd.update(samples, torch.Generator().manual_seed(0))
    assert metrics["update/optimizer_steps"] == 1 and math.isfinite(metrics["loss"])
    assert "mopd/student_teacher_k1" in metrics and "pg/adv_mean" in metrics
    assert any(not torch.equal(a, b) for a, b in zip(before, student.parameters()))
    # frozen models did not move
    assert all(not p.requires_grad for p in ref.parameters())


def test_route_without_teacher_is_one_clear_error(tiny_path, tokenizer):
    _, samples, _, _, _, upd = _setup(tiny_path, tokenizer)
    samples[2].meta["route"] = "C"
    with pytest.raises(ValueError, match="route 'C', which has no teacher"):
        upd.mopd_token_advantages(samples)


def test_config_accepts_registry_names_only():
    with pytest.raises(ConfigError, match="algo.policy_loss: .*unknown policy loss 'mopdx'"):
        load_config("minirl", overrides=["algo.policy_loss=mopdx"])
    with pytest.raises(ConfigError, match="algo.mopd.teachers"):
        load_config("minirl", overrides=["algo.policy_loss=mopd"])
    with pytest.raises(ConfigError, match="algo.loss_agg"):
        load_config("grpo", overrides=["algo.loss_agg=sum"])
    # a newly decorated loss is accepted without touching the config
    from swetrain.algos.losses import POLICY_LOSSES, register_policy_loss

    @register_policy_loss("test-only-loss")
    def _loss(logp, logp_old, advantages, mask, **kw):  # pragma: no cover - never called
        raise AssertionError

    try:
        assert load_config("grpo", overrides=["algo.policy_loss=test-only-loss"]).algo.policy_loss == "test-only-loss"
    finally:
        POLICY_LOSSES._fns.pop("test-only-loss", None)


def test_registered_loss_gets_its_own_parameter_model(tiny_path, tokenizer):
    """A new loss with its own knobs: one decorated function + a parameter model, no trainer change."""
    from pydantic import BaseModel, ConfigDict, Field

    from swetrain.algos.losses import POLICY_LOSSES, TokenBatch, agg_loss, register_policy_loss
    from swetrain.train.config import LOSS_PARAMS, register_loss_params

    seen = {}

    @register_policy_loss("test-scaled-pg")
    def _loss(logp, logp_old, advantages, mask, *, logp_behavior=None, segment_ids=None, agg=None, loss_norm=None, scale=1.0):
        seen["scale"] = scale
        tb = TokenBatch(logp, None, advantages, mask, require_old=False)
        return agg_loss(-scale * tb.adv * tb.logp, tb.mask, agg or "token-mean", segment_ids, loss_norm), {}

    @register_loss_params("test-scaled-pg")
    class _Params(BaseModel):
        model_config = ConfigDict(extra="forbid")
        scale: float = Field(default=1.0, gt=0)

    try:
        with pytest.raises(ConfigError, match=r"algo.params.scale: .*greater than 0"):
            load_config("grpo", overrides=["algo.policy_loss=test-scaled-pg", "algo.params.scale=-1"])
        with pytest.raises(ConfigError, match=r"algo.params.scal: unknown key"):
            load_config("grpo", overrides=["algo.policy_loss=test-scaled-pg", "algo.params.scal=2"])
        with pytest.raises(ConfigError, match=r"algo.params: policy loss 'clipped' has no parameter model"):
            load_config("grpo", overrides=["algo.params.scale=2"])
        cfg = load_config("grpo", overrides=["algo.policy_loss=test-scaled-pg", "algo.params.scale=2.5", "optim.lr=0.001"])
        traj = make_trajectory(tokenizer, TOOLS, "t1", fix_turns("return a < b"), resolved=True)
        sample = sample_from_trajectory(traj, 1.0, 1.0)
        model = _model(tiny_path)
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr)
        upd = PolicyUpdater(model, opt, None, cfg.algo, cfg.optim, pad_id=tokenizer.pad_token_id)
        upd.update([sample], torch.Generator().manual_seed(0))
        assert seen["scale"] == 2.5
    finally:
        POLICY_LOSSES._fns.pop("test-scaled-pg", None)
        LOSS_PARAMS.pop("test-scaled-pg", None)
