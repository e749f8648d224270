"""Every algos function keeps its outputs on the inputs' device (CPU always; CUDA when present)."""

import pytest
import torch

from swetrain.algos import (
    agg_loss,
    apply_invalid_override,
    attempt_rewards,
    get_advantage_estimator,
    get_policy_loss,
    mopd_advantages,
    returns_to_go,
    segment_flags_to_token_mask,
    token_rewards_with_k1,
)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_pipeline_on_device(device):
    g = torch.Generator().manual_seed(0)
    B, T = 4, 9
    dev = torch.device(device)
    outcomes = torch.tensor([[0.0, 1.0], [1.0, float("nan")]], device=dev)
    r = attempt_rewards(outcomes)
    assert r.device.type == dev.type
    adv_b = get_advantage_estimator("rloo")(torch.tensor([1.0, 0.0, 0.0, 1.0], device=dev), ["a", "a", "b", "b"])
    assert adv_b.device.type == dev.type
    mask = (torch.rand(B, T, generator=g) > 0.3).to(dev)
    lo = (-torch.rand(B, T, generator=g)).to(dev)
    tok = token_rewards_with_k1(adv_b, lo, lo - 0.1, mask, beta=0.01)
    adv = returns_to_go(tok, mask, 0.9)
    seg = torch.where(mask, torch.arange(T, device=dev).expand(B, T) // 3, torch.full((B, T), -1, device=dev))
    inv = segment_flags_to_token_mask(seg, torch.zeros(B, 3, dtype=torch.bool, device=dev))
    adv = apply_invalid_override(adv, inv)
    logp = lo.clone().requires_grad_(True)
    for name in ("clipped", "minirl", "mopd"):
        loss, _ = get_policy_loss(name)(logp, lo, adv, mask, logp_behavior=lo, segment_ids=seg)
        assert loss.device.type == dev.type
        loss.backward()
    assert logp.grad.device.type == dev.type
    assert mopd_advantages(lo, lo, lo).device.type == dev.type
    assert agg_loss(lo, mask, "seq-mean-segment-sum").device.type == dev.type
