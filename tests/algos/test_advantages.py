import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from swetrain.algos import get_advantage_estimator, list_advantage_estimators, register_adv_est

NAN = float("nan")


def test_registry_lists_names_on_unknown():
    with pytest.raises(ValueError) as e:
        get_advantage_estimator("ppo-gae")
    for name in ("rloo", "grpo", "active_set"):
        assert name in str(e.value)
    assert {"rloo", "grpo", "active_set", "grpo_mean"} <= set(list_advantage_estimators())


def test_register_custom_and_duplicate_guard():
    @register_adv_est("test_zero_adv")
    def zero(rewards, group_ids, active=None, eps=1e-6):
        return torch.zeros(len(rewards))

    assert get_advantage_estimator("test_zero_adv") is zero
    with pytest.raises(ValueError, match="already registered"):
        register_adv_est("test_zero_adv")(lambda *a, **k: None)


def test_rloo_one_success_in_eight_gets_one():
    """Seed 000, eq. 11-13: G=8, one success -> 1.0 under RLOO vs 7/8 mean-centred GRPO."""
    r = [1.0] + [0.0] * 7
    ids = ["issue"] * 8
    a = get_advantage_estimator("rloo")(r, ids)
    assert a[0].item() == pytest.approx(1.0)
    assert torch.allclose(a[1:], torch.full((7,), -1 / 7))
    g = get_advantage_estimator("grpo_mean")(r, ids)
    assert g[0].item() == pytest.approx(7 / 8)
    # RLOO = G/(G-1) * mean-centred advantage.
    assert torch.allclose(a, g * 8 / 7)


def test_rloo_k_successes_formula():
    # k successes of G: success gets (G-k)/(G-1), failure gets -k/(G-1).
    G, k = 8, 3
    a = get_advantage_estimator("rloo")([1.0] * k + [0.0] * (G - k), [0] * G)
    assert a[0].item() == pytest.approx((G - k) / (G - 1))
    assert a[-1].item() == pytest.approx(-k / (G - 1))


def test_grpo_hand_computed_and_zero_variance():
    a = get_advantage_estimator("grpo")(torch.tensor([1.0, 0.0, 0.0, 0.0]), [0, 0, 0, 0])
    std = math.sqrt(0.25)  # sample var: (0.5625 + 3*0.0625)/3 = 0.25
    assert a[0].item() == pytest.approx(0.75 / (std + 1e-6), rel=1e-5)
    z = get_advantage_estimator("grpo")([1.0, 1.0, 1.0], ["x"] * 3)
    assert torch.equal(z, torch.zeros(3))


def test_active_set_hand_computed():
    # Issue u: chains [1,⊥],[0,1],[0,0] flattened; issue v: only one active attempt -> 0.
    r = [1, NAN, 0, 1, 0, 0, 1, NAN]
    ids = ["u"] * 6 + ["v"] * 2
    a = get_advantage_estimator("active_set")(r, ids)
    s = math.sqrt(0.3)
    exp = [0.75 / s, 0, -0.5 / s, 0.75 / s, -0.5 / s, -0.5 / s, 0, 0]
    assert torch.allclose(a, torch.tensor(exp), atol=1e-5)


def test_active_set_zero_variance_fallback_no_division():
    a = get_advantage_estimator("active_set")([0.0, 0.0], [1, 1])
    assert torch.equal(a, torch.zeros(2))


def test_explicit_active_mask_and_errors():
    fn = get_advantage_estimator("rloo")
    a = fn([1.0, 0.0, 5.0], [0, 0, 0], active=[True, True, False])
    assert a.tolist() == pytest.approx([1.0, -1.0, 0.0])
    with pytest.raises(ValueError, match="row 1 is marked active but its reward is NaN"):
        fn([1.0, NAN], [0, 0], active=[1, 1])
    with pytest.raises(ValueError, match="group_ids"):
        fn([1.0, 0.0], [0])
    with pytest.raises(ValueError, match="rewards"):
        fn([[1.0, 0.0]], [0])
    with pytest.raises(ValueError, match="finite"):
        fn([float("inf"), 0.0], [0, 0])


def test_numpy_and_tensor_group_ids_agree():
    r = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    a1 = get_advantage_estimator("grpo")(r, np.array([3, 3, 7, 7, 7]))
    a2 = get_advantage_estimator("grpo")(r, ["a", "a", "b", "b", "b"])
    assert a1.dtype == torch.float64
    assert torch.allclose(a1, a2)


def test_output_has_no_grad_history():
    r = torch.tensor([1.0, 0.0], requires_grad=True)
    assert not get_advantage_estimator("rloo")(r, [0, 0]).requires_grad


groups = st.lists(
    st.lists(st.one_of(st.sampled_from([0.0, 1.0]), st.floats(-3, 3), st.just(NAN)), min_size=1, max_size=9),
    min_size=1,
    max_size=5,
)


def _flatten(gs):
    r, ids = [], []
    for g, rows in enumerate(gs):
        r += rows
        ids += [f"issue-{g}"] * len(rows)
    return torch.tensor(r, dtype=torch.float64), ids


@settings(max_examples=60, deadline=None)
@given(groups)
def test_property_rloo_grpo_groups_sum_to_zero(gs):
    r, ids = _flatten(gs)
    for name in ("rloo", "grpo", "grpo_mean"):
        a = get_advantage_estimator(name)(r, ids)
        start = 0
        for rows in gs:
            seg = a[start : start + len(rows)]
            assert abs(seg.sum().item()) < 1e-6 * max(1.0, seg.abs().sum().item())
            start += len(rows)


@settings(max_examples=60, deadline=None)
@given(groups, st.data())
def test_property_inactive_rows_are_ignored(gs, data):
    """Changing an inactive row's reward never changes any advantage; inactive rows get 0."""
    r, ids = _flatten(gs)
    active = ~torch.isnan(r)
    r_other = r.clone()
    junk = data.draw(st.floats(-100, 100))
    r_other[~active] = junk
    for name in ("rloo", "grpo", "active_set"):
        fn = get_advantage_estimator(name)
        a = fn(r, ids)
        b = fn(r_other, ids, active=active)
        assert torch.allclose(a, b)
        assert torch.all(a[~active] == 0)


def test_numpy_string_group_ids():
    a = get_advantage_estimator("rloo")([1.0, 0.0, 1.0], np.array(["x", "x", "y"]))
    assert a.tolist() == pytest.approx([1.0, -1.0, 0.0])
