import pytest
import torch

from swetrain.algos import get_policy_loss, mopd_advantages, mopd_loss, mopd_metrics

TEACHER = torch.tensor([[-1.0, -3.0, -0.2, -9.0]])
BEHAVIOR = torch.tensor([[-2.0, -1.0, -0.2, -1.0]])
REF = torch.tensor([[-1.5, -2.0, -1.2, -1.0]])


def test_mopd_advantages_gated_hand_computed():
    a = mopd_advantages(TEACHER, BEHAVIOR, REF, lam=1.25, gate=True, clip=5.0)
    # imitation + 0.25 * relu(teacher - ref), clipped to [-5, 5]
    exp = [1.0 + 0.25 * 0.5, -2.0 + 0.0, 0.0 + 0.25 * 1.0, -5.0]
    assert a[0].tolist() == pytest.approx(exp)


def test_mopd_advantages_ungated_and_unclipped():
    a = mopd_advantages(TEACHER, BEHAVIOR, REF, lam=1.25, gate=False, clip=None)
    exp = [1.0 + 0.125, -2.0 - 0.25, 0.25, -8.0 - 2.0]
    assert a[0].tolist() == pytest.approx(exp)


def test_lam_one_is_plain_on_policy_distillation():
    a = mopd_advantages(TEACHER, BEHAVIOR, REF, lam=1.0, clip=None)
    assert torch.allclose(a, TEACHER - BEHAVIOR)


def test_gate_makes_extrapolation_nonnegative():
    torch.manual_seed(0)
    t, b, r = (torch.randn(4, 16) for _ in range(3))
    plain = mopd_advantages(t, b, r, lam=1.0, clip=None)
    ex = mopd_advantages(t, b, r, lam=1.25, gate=True, clip=None)
    assert torch.all(ex - plain >= 0)


def test_mopd_advantages_errors_and_detached():
    t = TEACHER.clone().requires_grad_(True)
    assert not mopd_advantages(t, BEHAVIOR, REF).requires_grad
    with pytest.raises(ValueError, match="logp_ref"):
        mopd_advantages(TEACHER, BEHAVIOR, REF[:, :2])
    with pytest.raises(ValueError, match="clip"):
        mopd_advantages(TEACHER, BEHAVIOR, REF, clip=0)


def test_mopd_loss_is_turn_aware_vanilla_pg():
    logp = torch.tensor([[-1.0, -2.0, -3.0, -4.0]], requires_grad=True)
    adv = torch.tensor([[1.0, 2.0, -1.0, 0.5]])
    mask = torch.tensor([[1, 1, 0, 1]])  # turns: {0,1} and {3}
    loss, m = mopd_loss(logp, None, adv, mask)
    # token losses -A*logp: 1, 4, (masked), 2 -> turn sums 5 and 2 -> mean 3.5
    assert loss.item() == pytest.approx(3.5)
    loss.backward()
    assert logp.grad[0].tolist() == pytest.approx([-0.5, -1.0, 0.0, -0.25])
    assert m["pg/adv_pos_frac"] == pytest.approx(1.0)
    assert get_policy_loss("mopd") is mopd_loss


def test_mopd_metrics():
    m = mopd_metrics(TEACHER, BEHAVIOR, REF, [[1, 1, 1, 0]])
    assert m["mopd/student_teacher_k1"] == pytest.approx((-1 + 2 + 0) / 3)
    assert m["mopd/gate_open_frac"] == pytest.approx(2 / 3)
    assert m["mopd/teacher_ref_gap"] == pytest.approx((0.5 - 1.0 + 1.0) / 3)
