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
