import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from swetrain.algos import (
    agg_loss,
    apply_invalid_override,
    get_policy_loss,
    list_policy_losses,
    register_policy_loss,
    segment_counts,
    segment_flags_to_token_mask,
)

NAN = float("nan")
# Row 0: two turns (tokens 1-2 and 4-6); row 1: one turn; row 2: nothing valid.
MASK = torch.tensor([[0, 1, 1, 0, 1, 1, 1], [1, 1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]]).bool()
LOSS = torch.tensor(
    [[NAN, 1.0, 2.0, 100.0, 3.0, 4.0, 5.0], [6.0, 8.0, NAN, 0, 0, 0, 0], [7.0, 7, 7, 7, 7, 7, 7]]
)


def test_agg_modes_hand_computed():
    assert agg_loss(LOSS, MASK, "token-mean").item() == pytest.approx((15 + 14) / 7)
    assert agg_loss(LOSS, MASK, "seq-mean-token-sum").item() == pytest.approx((15 + 14) / 2)
    assert agg_loss(LOSS, MASK, "seq-mean-token-mean").item() == pytest.approx((3 + 7) / 2)
    # turns: row0 sums 3 and 12 -> mean 7.5; row1 sum 14 -> (7.5 + 14) / 2
    assert agg_loss(LOSS, MASK, "seq-mean-segment-sum").item() == pytest.approx((7.5 + 14) / 2)


def test_agg_segment_ids_override_runs():
    # Same valid tokens, but row 0 declared as three turns: {1}, {2}, {4,5,6}.
    seg = torch.tensor([[-1, 0, 1, -1, 2, 2, 2], [0, 0, -1, -1, -1, -1, -1], [-1] * 7])
    assert segment_counts(MASK, seg).tolist() == [3, 1, 0]
    assert segment_counts(MASK).tolist() == [2, 1, 0]
    assert agg_loss(LOSS, MASK, "seq-mean-segment-sum", seg).item() == pytest.approx((15 / 3 + 14) / 2)


def test_agg_nothing_valid_is_zero_and_keeps_graph():
    x = torch.ones(2, 3, requires_grad=True)
    for mode in ("token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-segment-sum"):
        out = agg_loss(x * 2, torch.zeros(2, 3, dtype=torch.bool), mode)
        assert out.item() == 0.0
        out.backward()
        assert x.grad is not None and torch.equal(x.grad, torch.zeros(2, 3))
        x.grad = None


def test_agg_errors():
    with pytest.raises(ValueError, match="mode"):
        agg_loss(LOSS, MASK, "sum")
    with pytest.raises(ValueError, match="mask"):
        agg_loss(LOSS, MASK[:, :3], "token-mean")
    with pytest.raises(ValueError, match="segment_ids"):
        agg_loss(LOSS, MASK, "seq-mean-segment-sum", torch.zeros(3, 7))


def test_registry():
    assert {"clipped", "minirl", "mopd"} <= set(list_policy_losses())
    with pytest.raises(ValueError, match="clipped"):
        get_policy_loss("ppo2")

    @register_policy_loss("test_const_loss")
    def const(logp, logp_old, advantages, mask, **kw):
        return logp.sum() * 0, {}

    assert get_policy_loss("test_const_loss") is const


def _batch(seed=0, B=3, T=6, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    logp_old = -torch.rand(B, T, generator=g, dtype=dtype) * 2 - 0.1
    logp = (logp_old + 0.05 * torch.randn(B, T, generator=g, dtype=dtype)).requires_grad_(True)
    adv = torch.randn(B, T, generator=g, dtype=dtype)
    mask = torch.rand(B, T, generator=g) > 0.3
    mask[:, 0] = True
    behavior = logp_old + 0.3 * torch.randn(B, T, generator=g, dtype=dtype)
    seg = torch.cumsum((torch.arange(T) % 3 == 0).long().expand(B, T), dim=1)
    return logp, logp_old, adv, mask, behavior, seg


@pytest.mark.parametrize("name", ["clipped", "minirl", "mopd"])
def test_gradcheck_float64(name):
    logp, logp_old, adv, mask, behavior, seg = _batch()
    fn = get_policy_loss(name)

    def f(lp):
        return fn(lp, logp_old, adv, mask, logp_behavior=behavior, segment_ids=seg)[0]

    assert torch.autograd.gradcheck(f, (logp,), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", ["clipped", "minirl", "mopd"])
def test_gradient_sign_follows_advantage(name):
    """Minimising the loss raises logp where A > 0 and lowers it where A < 0 (on-policy)."""
    logp, _, adv, mask, _, seg = _batch(1)
    loss, _ = get_policy_loss(name)(logp, logp.detach(), adv, mask, segment_ids=seg)
    loss.backward()
    gr = logp.grad
    assert torch.all(gr[mask & (adv > 0)] < 0)
    assert torch.all(gr[mask & (adv < 0)] > 0)
    assert torch.all(gr[~mask] == 0)


def test_clipped_hand_computed():
    logp_old = torch.zeros(1, 3)
    logp = torch.log(torch.tensor([[1.5, 0.5, 1.1]])).requires_grad_(True)
    adv = torch.tensor([[1.0, -1.0, 2.0]])
    loss, m = get_policy_loss("clipped")(logp, logp_old, adv, [[1, 1, 1]], clip_low=0.2, clip_high=0.2)
    # token losses: -min(1.5, 1.2)=-1.2 ; -min(-0.5, -0.8)=0.8 ; -min(2.2, 2.2)=-2.2
    assert loss.item() == pytest.approx((-1.2 + 0.8 - 2.2) / 3, rel=1e-5)
    assert m["pg/clip_frac"] == pytest.approx(2 / 3)
    loss.backward()
    assert logp.grad[0, 0] == 0 and logp.grad[0, 1] == 0  # clipped tokens carry no gradient
    assert logp.grad[0, 2].item() == pytest.approx(-2.0 * 1.1 / 3, rel=1e-5)


def test_minirl_sign_aware_mask_and_tis():
    logp_old = torch.zeros(1, 4)
    ratio = torch.tensor([[1.5, 1.5, 0.5, 0.5]])
    logp = torch.log(ratio).requires_grad_(True)
    adv = torch.tensor([[1.0, -1.0, 1.0, -1.0]])
    behavior = torch.tensor([[0.0, -math.log(3.0), 0.0, 0.0]])  # w = [1, min(3, 2)=2, 1, 1]
    loss, m = get_policy_loss("minirl")(
        logp, logp_old, adv, [[1, 1, 1, 1]], logp_behavior=behavior, eps_low=0.2, eps_high=0.28, tis_cap=2.0,
        agg="token-mean",
    )
    # token 0 masked (A>0, rho>1.28); token 3 masked (A<0, rho<0.8); others kept
    exp = (0 + (-2 * -1 * 1.5) + (-1 * 1 * 0.5) + 0) / 4
    assert loss.item() == pytest.approx(exp, rel=1e-5)
    assert m["pg/mask_frac"] == pytest.approx(0.5)
    assert m["pg/is_capped_frac"] == pytest.approx(0.25)
    assert m["pg/is_weight_mean"] == pytest.approx(5 / 4)
    loss.backward()
    assert logp.grad[0, 0] == 0 and logp.grad[0, 3] == 0


def test_per_trajectory_advantages_broadcast():
    logp, logp_old, _, mask, _, _ = _batch(2, dtype=torch.float32)
    a_row = torch.tensor([1.0, -2.0, 0.5])
    l1, _ = get_policy_loss("clipped")(logp, logp_old, a_row, mask)
    l2, _ = get_policy_loss("clipped")(logp, logp_old, a_row[:, None].expand(3, 6), mask)
    assert torch.allclose(l1, l2)


def test_nan_on_masked_tokens_never_leaks():
    logp, logp_old, adv, mask, behavior, seg = _batch(3)
    adv, logp_old, behavior = adv.clone(), logp_old.clone(), behavior.clone()
    adv[~mask] = NAN
    logp_old[~mask] = NAN
    behavior[~mask] = float("-inf")
    for name in ("clipped", "minirl", "mopd"):
        logp.grad = None
        loss, metrics = get_policy_loss(name)(logp, logp_old, adv, mask, logp_behavior=behavior, segment_ids=seg)
        loss.backward()
        assert torch.isfinite(loss) and torch.isfinite(logp.grad).all()
        assert all(math.isfinite(v) for v in metrics.values())


def test_bad_inputs_are_named():
    logp, logp_old, adv, mask, _, _ = _batch(4)
    fn = get_policy_loss("minirl")
    bad = adv.clone()
    bad[0, 0] = NAN  # token 0 is always valid in _batch
    with pytest.raises(ValueError, match="advantages: non-finite"):
        fn(logp, logp_old, bad, mask)
    with pytest.raises(ValueError, match="logp_old"):
        fn(logp, None, adv, mask)
    with pytest.raises(ValueError, match="logp_behavior"):
        fn(logp, logp_old, adv, mask, logp_behavior=torch.zeros(2, 2))
    with pytest.raises(ValueError, match="logp:"):
        fn(logp.detach().numpy(), logp_old, adv, mask)
    with pytest.raises(TypeError):
        fn(logp, logp_old, adv, mask, clip_ratio=0.3)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["clipped", "minirl", "mopd"]),
    st.sampled_from(["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-segment-sum"]),
    st.integers(0, 10_000),
    st.floats(-50, 50),
)
def test_property_inactive_rows_never_contribute(name, agg, seed, junk):
    """Appending an all-masked row with arbitrary values changes neither loss nor metrics."""
    logp, logp_old, adv, mask, behavior, seg = _batch(seed, B=2, T=5)
    fn = get_policy_loss(name)
    l1, m1 = fn(logp, logp_old, adv, mask, logp_behavior=behavior, segment_ids=seg, agg=agg)
    cat = lambda x, v: torch.cat([x, torch.full((1, 5), v, dtype=x.dtype)])  # noqa: E731
    lp2 = torch.cat([logp, torch.full((1, 5), junk, dtype=logp.dtype)])
    l2, m2 = fn(
        lp2, cat(logp_old, junk), cat(adv, junk), torch.cat([mask, torch.zeros(1, 5, dtype=torch.bool)]),
        logp_behavior=cat(behavior, -junk), segment_ids=torch.cat([seg, torch.zeros(1, 5, dtype=seg.dtype)]), agg=agg,
    )
    assert torch.allclose(l1, l2)
    assert m1 == pytest.approx(m2)


def test_invalid_override_and_flags():
    seg = torch.tensor([[-1, 0, 0, -1, 1, 1], [0, 0, 0, -1, -1, -1]])
    flags = torch.tensor([[False, True], [False, False]])
    inv = segment_flags_to_token_mask(seg, flags)
    assert inv.tolist() == [[False, False, False, False, True, True], [False] * 6]
    adv = torch.tensor([0.5, -0.25])
    out = apply_invalid_override(adv, inv)
    assert out[0].tolist() == [0.5, 0.5, 0.5, 0.5, -5.0, -5.0]
    assert out[1].tolist() == [-0.25] * 6
    out2 = apply_invalid_override(torch.zeros(2, 6), inv, value=-2.0)
    assert out2.sum().item() == -4.0
    with pytest.raises(ValueError, match="segment_ids: id 1"):
        segment_flags_to_token_mask(seg, flags[:, :1])
    with pytest.raises(ValueError, match="invalid_token_mask"):
        apply_invalid_override(torch.zeros(2, 6), torch.zeros(2, 5, dtype=torch.bool)[None])


@pytest.mark.parametrize("name", ["clipped", "minirl", "mopd"])
@pytest.mark.parametrize("agg", ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-segment-sum"])
def test_micro_batches_with_global_norm_sum_to_full_batch(name, agg):
    from swetrain.algos import agg_norm

    logp, logp_old, adv, mask, behavior, seg = _batch(5, B=4, T=6)
    mask[3] = False  # an empty row must not change the normaliser
    fn = get_policy_loss(name)
    full, _ = fn(logp, logp_old, adv, mask, logp_behavior=behavior, segment_ids=seg, agg=agg)
    norm = agg_norm(mask, agg)
    parts = [
        fn(logp[i:j], logp_old[i:j], adv[i:j], mask[i:j], logp_behavior=behavior[i:j], segment_ids=seg[i:j],
           agg=agg, loss_norm=norm)[0]
        for i, j in ((0, 1), (1, 4))
    ]
    assert torch.allclose(full, parts[0] + parts[1])
    with pytest.raises(ValueError, match="norm"):
        agg_loss(LOSS, MASK, agg, norm=0)
