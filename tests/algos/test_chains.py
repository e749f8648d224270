import math

import numpy as np
import pytest
import torch

from swetrain.algos import active_mask, attempt_rewards, chain_advantages

NAN = float("nan")
# FC-SWE's three R=2 chain shapes: first-try success, recovered, failed twice.
CHAINS = [[1, NAN], [0, 1], [0, 0]]


def _eq_nan(a: torch.Tensor, b: list) -> bool:
    return torch.equal(torch.isnan(a), torch.isnan(torch.tensor(b))) and torch.allclose(
        torch.nan_to_num(a, nan=-9.0), torch.nan_to_num(torch.tensor(b, dtype=a.dtype), nan=-9.0)
    )


def test_active_mask_recursion():
    q = active_mask(CHAINS)
    assert q.dtype == torch.bool
    assert q.tolist() == [[True, False], [True, True], [True, True]]


def test_values_after_success_are_ignored():
    # Garbage after the first success must not matter (not even a value outside {0,1}).
    q = active_mask([[0, 1, 7, 1], [1, 0, 0, 0]])
    assert q.tolist() == [[True, True, False, False], [True, False, False, False]]


def test_nan_on_active_position_ends_chain():
    q = active_mask([[0, NAN, 1], [NAN, 0, 0]])
    assert q.tolist() == [[True, False, False], [False, False, False]]


def test_active_value_must_be_binary():
    with pytest.raises(ValueError, match=r"outcomes: active attempt \[0, 1\]"):
        active_mask([[0, 0.5]])
    with pytest.raises(ValueError, match="outcomes"):
        active_mask([0, 1])


def test_local_rewards_keep_each_verdict():
    assert _eq_nan(attempt_rewards(CHAINS, "local"), [[1, NAN], [0, 1], [0, 0]])


def test_broadcast_rewards_share_final_result():
    assert _eq_nan(attempt_rewards(CHAINS, "broadcast"), [[1, NAN], [1, 1], [0, 0]])


def test_last_rewards_only_last_attempt():
    assert _eq_nan(attempt_rewards(CHAINS, "last"), [[1, NAN], [NAN, 1], [NAN, 0]])


def test_unknown_scheme():
    with pytest.raises(ValueError, match="scheme"):
        attempt_rewards(CHAINS, "final")


def test_numpy_int_input_and_float64_kept():
    r = attempt_rewards(np.array([[0, 1], [1, 1]]))
    assert r.dtype == torch.float32
    r64 = attempt_rewards(torch.tensor([[0.0, 1.0]], dtype=torch.float64))
    assert r64.dtype == torch.float64


def test_chain_advantages_hand_computed():
    # Active rewards of the issue: [1, 0, 1, 0, 0]; sample std = sqrt(0.3).
    a = chain_advantages(CHAINS)
    s = math.sqrt(0.3)
    expected = [[0.75 / s, 0.0], [-0.5 / s, 0.75 / s], [-0.5 / s, -0.5 / s]]
    assert torch.allclose(a, torch.tensor(expected), atol=1e-5)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 1.0, NAN]), min_size=1, max_size=4), min_size=1, max_size=6).filter(
    lambda rows: len({len(r) for r in rows}) == 1
))
def test_property_chain_invariants(rows):
    y = torch.tensor(rows)
    q = active_mask(y)
    # active attempts form a prefix ending at the first success or first non-executed attempt
    for c in range(y.shape[0]):
        n = int(q[c].sum())
        assert q[c, :n].all() and not q[c, n:].any()
        for r in range(n - 1):
            assert y[c, r] == 0
    local = attempt_rewards(y, "local")
    assert torch.equal(~torch.isnan(local), q)
    # every chain's reward pattern: local has at most one success, at its last active attempt
    assert (torch.nan_to_num(local).sum(dim=1) <= 1).all()
    last = attempt_rewards(y, "last")
    assert torch.equal(torch.nansum(last, dim=1), torch.nansum(local, dim=1))
    a = chain_advantages(y)
    assert torch.all(a[~q] == 0)
    # With a shared group the active-set advantages are n/(n-1)*(r-mean)/std: they sum to zero.
    assert abs(a.sum().item()) < 1e-4
