import math

import pytest
import torch

from swetrain.algos import k3, kl_metrics, returns_to_go, token_rewards_with_k1

NAN = float("nan")
MASK = torch.tensor([[0, 1, 1, 0, 1, 1, 1], [1, 1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]]).bool()


def test_token_rewards_hand_computed():
    lo = torch.full((3, 7), -1.0)
    lr = torch.full((3, 7), -1.5)
    r = token_rewards_with_k1([1.0, -0.5, 3.0], lo, lr, MASK, beta=0.1)
    exp = torch.tensor(
        [
            [0, -0.05, -0.05, 0, -0.05, -0.05, 0.95],
            [-0.05, -0.55, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, 0, 0],  # no valid token: nothing to carry the terminal reward
        ]
    )
    assert torch.allclose(r, exp)


def test_token_rewards_nan_terminal_row_is_inactive():
    lo = torch.zeros(2, 7)
    lr = torch.ones(2, 7)
    r = token_rewards_with_k1([NAN, 2.0], lo, lr, MASK[:2], beta=1.0)
    assert torch.equal(r[0], torch.zeros(7))
    assert r[1].tolist() == [1.0, 3.0, 0, 0, 0, 0, 0]


def test_token_rewards_are_detached_and_validate():
    lo = torch.zeros(1, 3, requires_grad=True)
    r = token_rewards_with_k1([1.0], lo, torch.zeros(1, 3), [[1, 1, 1]], beta=0.5)
    assert not r.requires_grad
    with pytest.raises(ValueError, match="beta"):
        token_rewards_with_k1([1.0], lo, torch.zeros(1, 3), [[1, 1, 1]], beta=-1)
    with pytest.raises(ValueError, match="terminal"):
        token_rewards_with_k1([1.0, 2.0], lo, torch.zeros(1, 3), [[1, 1, 1]], beta=0.5)
    with pytest.raises(ValueError, match="logp_ref"):
        token_rewards_with_k1([1.0], lo, torch.zeros(1, 4), [[1, 1, 1]], beta=0.5)


def test_returns_to_go_skips_masked_positions():
    r = torch.tensor([[9.0, 1.0, 2.0, 9.0, 3.0]])
    m = torch.tensor([[0, 1, 1, 0, 1]]).bool()
    g1 = returns_to_go(r, m, 1.0)
    assert g1.tolist() == [[0.0, 6.0, 5.0, 0.0, 3.0]]
    g = returns_to_go(r, m, 0.5)
    # discount counts valid tokens only: G4=3, G2=2+0.5*3, G1=1+0.5*G2
    assert torch.allclose(g, torch.tensor([[0.0, 1 + 0.5 * 3.5, 3.5, 0.0, 3.0]]))


def test_returns_to_go_gamma_one_matches_loop():
    torch.manual_seed(0)
    r = torch.randn(4, 33, dtype=torch.float64)
    m = torch.rand(4, 33) > 0.4
    fast = returns_to_go(r, m, 1.0)
    slow = returns_to_go(r, m, 1.0 - 1e-12)
    assert torch.allclose(fast, slow, atol=1e-9)
    with pytest.raises(ValueError, match="gamma"):
        returns_to_go(r, m, 1.5)


def test_k1_reward_then_rtg_on_single_row_equals_terminal_minus_kl_tail():
    # gamma=1: the advantage at token t is R - beta * sum_{s>=t} K1_s (eq. 14 order).
    lo = torch.tensor([[-0.2, -0.4, -0.1]])
    lr = torch.tensor([[-0.3, -0.1, -0.1]])
    a = returns_to_go(token_rewards_with_k1([1.0], lo, lr, [[1, 1, 1]], 0.5), [[1, 1, 1]], 1.0)
    d = (lo - lr)[0]
    exp = [1 - 0.5 * d[t:].sum().item() for t in range(3)]
    assert a[0].tolist() == pytest.approx(exp)


def test_k3_nonnegative_and_metrics():
    lp = torch.tensor([[-1.0, -2.0, -0.5]])
    ref = torch.tensor([[-1.5, -1.0, -0.5]])
    v = k3(lp, ref)
    assert (v >= 0).all() and v[0, 2] == 0
    m = kl_metrics(lp, ref, [[1, 1, 0]])
    assert m["kl/k1_mean"] == pytest.approx((0.5 - 1.0) / 2)
    assert m["kl/k3_mean"] == pytest.approx(((math.exp(-0.5) - 1 + 0.5) + (math.exp(1) - 1 - 1)) / 2)
    assert kl_metrics(lp, ref, [[0, 0, 0]]) == {"kl/k1_mean": 0.0, "kl/k3_mean": 0.0}


def test_k1_token_advantages_composes_eq14():
    from swetrain.algos import k1_token_advantages, rloo_advantages

    terminal = rloo_advantages([1.0, 0.0], ["x", "x"])  # [1, -1]
    lo = torch.tensor([[-0.2, -0.4, -0.1], [-1.0, -1.0, -1.0]])
    lr = torch.tensor([[-0.3, -0.1, -0.1], [-1.0, -2.0, -1.0]])
    m = torch.tensor([[1, 1, 1], [1, 0, 1]]).bool()
    a = k1_token_advantages(terminal, lo, lr, m, beta=0.5, gamma=1.0)
    assert a[0].tolist() == pytest.approx([1 - 0.5 * (0.1 - 0.3 + 0.0), 1 - 0.5 * (-0.3), 1.0])
    assert a[1].tolist() == pytest.approx([-1.0, 0.0, -1.0])
