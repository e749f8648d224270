"""Group-relative advantage estimators with a registry.

Every estimator has the signature::

    fn(rewards[N], group_ids, active=None, eps=1e-6) -> Tensor[N]

* ``rewards``: one scalar per trajectory (tensor, numpy array or list). NaN means "no reward" (⊥).
* ``group_ids``: length-N sequence of hashables (e.g. issue ids) or an integer tensor; rows with
  equal ids are compared with each other.
* ``active``: optional ``bool[N]``; by default a row is active iff its reward is not NaN. An
  explicitly active row with a NaN reward is an error.

Inactive rows and every row of a group with fewer than two active rows get advantage 0, and
inactive rows never enter any group statistic. The output has the floating dtype and the device
of ``rewards``. Results carry no autograd history (advantages are constants of the loss).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Protocol

import torch

from ._tensor import Tensorish, as_bool, as_float, check_ndim, group_index
from .registry import Registry


class AdvantageEstimator(Protocol):
    def __call__(
        self,
        rewards: Tensorish,
        group_ids: Tensorish | Sequence[Hashable],
        active: Tensorish | None = None,
        eps: float = 1e-6,
    ) -> torch.Tensor: ...


ADV_ESTIMATORS: Registry[Callable[..., torch.Tensor]] = Registry("advantage estimator")


def register_adv_est(name: str, *, override: bool = False):
    """Decorator registering an advantage estimator under ``name`` (verl style)."""
    return ADV_ESTIMATORS.register(name, override=override)


def get_advantage_estimator(name: str) -> AdvantageEstimator:
    """Return the estimator registered as ``name``; ``ValueError`` lists the known names."""
    return ADV_ESTIMATORS.get(name)


def list_advantage_estimators() -> list[str]:
    return ADV_ESTIMATORS.names()


class GroupStats:
    """Per-row statistics of each row's group over its ACTIVE rows only (all tensors ``[N]``).

    ``n``: active rows in the group; ``total``: sum of their rewards; ``mean``; ``std``: sample
    standard deviation (ddof=1; 0 when n < 2). ``r``: rewards with inactive rows set to 0;
    ``valid``: the row is active and its group has at least two active rows.
    """

    def __init__(
        self,
        rewards: Tensorish,
        group_ids: Tensorish | Sequence[Hashable],
        active: Tensorish | None,
    ) -> None:
        r = as_float(rewards, "rewards")
        check_ndim(r, 1, "rewards", "[N]")
        nan = torch.isnan(r)
        if active is None:
            act = ~nan
        else:
            act = as_bool(active, "active", like=r)
            if act.shape != r.shape:
                raise ValueError(f"active: shape {tuple(act.shape)} does not match rewards {tuple(r.shape)}")
            if (act & nan).any():
                i = int((act & nan).nonzero()[0, 0])
                raise ValueError(f"rewards: row {i} is marked active but its reward is NaN")
        if torch.isinf(r[act]).any():
            raise ValueError("rewards: active rewards must be finite")
        idx, n_groups = group_index(group_ids, r.shape[0], r.device)
        r0 = torch.where(act, r, torch.zeros_like(r)).detach()
        w = act.to(r.dtype)
        n_g = torch.zeros(n_groups, dtype=r.dtype, device=r.device).index_add_(0, idx, w)
        s_g = torch.zeros_like(n_g).index_add_(0, idx, r0)
        mean_g = s_g / n_g.clamp(min=1)
        dev2 = torch.where(act, (r0 - mean_g[idx]) ** 2, torch.zeros_like(r0))
        ss_g = torch.zeros_like(n_g).index_add_(0, idx, dev2)
        std_g = torch.sqrt(ss_g / (n_g - 1).clamp(min=1))
        self.r = r0
        self.active = act
        self.n = n_g[idx]
        self.total = s_g[idx]
        self.mean = mean_g[idx]
        self.std = std_g[idx]
        self.valid = act & (self.n >= 2)

    def finish(self, adv: torch.Tensor) -> torch.Tensor:
        return torch.where(self.valid, adv, torch.zeros_like(adv))

    def leave_one_out_mean(self) -> torch.Tensor:
        """b_i = mean of the other active rewards of row i's group (0 where undefined)."""
        return (self.total - self.r) / (self.n - 1).clamp(min=1)


def _scale(diff: torch.Tensor, std: torch.Tensor, eps: float) -> torch.Tensor:
    """diff / (std + eps), or diff unchanged where std <= eps (zero-variance fallback)."""
    return torch.where(std > eps, diff / (std + eps), diff)


@register_adv_est("rloo")
def rloo_advantages(
    rewards: Tensorish,
    group_ids: Tensorish | Sequence[Hashable],
    active: Tensorish | None = None,
    eps: float = 1e-6,
) -> torch.Tensor:
    """RLOO (seed 000, eq. 11): ``A_i = R_i − (1/(G−1)) Σ_{j≠i} R_j`` over the active rows.

    Equivalently ``A_i = G/(G−1) · (R_i − mean_G R)`` (eq. 13): with ``G = 8`` and one success the
    success gets ``1.0`` where mean-centred GRPO gives ``7/8``. No standardisation; ``eps`` unused.

    Shapes: ``rewards[N]`` -> ``Tensor[N]``.
    """
    st = GroupStats(rewards, group_ids, active)
    return st.finish(st.r - st.leave_one_out_mean())


@register_adv_est("grpo")
def grpo_advantages(
    rewards: Tensorish,
    group_ids: Tensorish | Sequence[Hashable],
    active: Tensorish | None = None,
    eps: float = 1e-6,
) -> torch.Tensor:
    """GRPO: ``A_i = (R_i − mean_g) / (std_g + eps)`` with the sample std (ddof=1) of the group.

    When ``std_g <= eps`` (all-equal group) the difference is not divided (it is then 0 anyway
    up to eps-sized noise). Shapes: ``rewards[N]`` -> ``Tensor[N]``.
    """
    st = GroupStats(rewards, group_ids, active)
    return st.finish(_scale(st.r - st.mean, st.std, eps))


@register_adv_est("grpo_mean")
def grpo_mean_advantages(
    rewards: Tensorish,
    group_ids: Tensorish | Sequence[Hashable],
    active: Tensorish | None = None,
    eps: float = 1e-6,
) -> torch.Tensor:
    """Mean-centred, non-standardised GRPO (seed 000's baseline, eq. 12): ``A_i = R_i − mean_g``.

    Shapes: ``rewards[N]`` -> ``Tensor[N]``.
    """
    st = GroupStats(rewards, group_ids, active)
    return st.finish(st.r - st.mean)


@register_adv_est("active_set")
def active_set_advantages(
    rewards: Tensorish,
    group_ids: Tensorish | Sequence[Hashable],
    active: Tensorish | None = None,
    eps: float = 1e-6,
) -> torch.Tensor:
    """FC-SWE active-set advantage over all executed attempts V_x of an issue.

    ``b_i = (1/(|V_x|−1)) Σ_{j∈V_x, j≠i} r_j`` (leave-one-out mean over initial AND recovery
    attempts of the issue); ``s`` = sample std (ddof=1) of the active rewards of the issue;
    ``A_i = (r_i − b_i)/(s + eps)``, or ``r_i − b_i`` when ``s <= eps`` (zero-variance fallback,
    ``eps = 1e-6`` in the paper). Rows are attempts; use one group id per issue.

    Shapes: ``rewards[N]`` -> ``Tensor[N]``.
    """
    st = GroupStats(rewards, group_ids, active)
    return st.finish(_scale(st.r - st.leave_one_out_mean(), st.std, eps))


def broadcast_to_tokens(advantages: Tensorish, mask: Tensorish) -> torch.Tensor:
    """Broadcast per-trajectory advantages ``[B]`` onto valid tokens ``[B, T]`` (0 elsewhere)."""
    a = as_float(advantages, "advantages")
    check_ndim(a, 1, "advantages", "[B]")
    m = as_bool(mask, "mask", like=a)
    check_ndim(m, 2, "mask", "[B, T]")
    if m.shape[0] != a.shape[0]:
        raise ValueError(f"mask: {m.shape[0]} rows but advantages has {a.shape[0]}")
    return torch.where(m, a.unsqueeze(1).expand(m.shape), torch.zeros((), dtype=a.dtype, device=a.device))
