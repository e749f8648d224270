"""FC-SWE recovery chains: which attempts ran, and what reward each one gets.

A chain ``c`` of an issue makes up to ``R`` attempts; attempt ``r+1`` runs only when attempt ``r``
ran and failed. ``outcomes[c, r]`` is the verifier result ``y[c, r]`` in {0, 1} of an executed
attempt; entries after the chain's first success are ignored (NaN is the usual filler, written
⊥ in the paper).

Conventions (FC-SWE, "active set" definition; index r is 0-based here, 1-based in the paper):

* ``q[c, 0] = 1`` and ``q[c, r] = q[c, r-1] · (1 − y[c, r-1])``.
* A NaN on a position the recursion marks active means that attempt was *not executed* (recovery
  budget cut, infrastructure failure): it and every later attempt of that chain are inactive.
"""

from __future__ import annotations

from typing import Literal

import torch

from ._tensor import Tensorish, as_float, check_ndim

RewardScheme = Literal["local", "broadcast", "last"]
REWARD_SCHEMES: tuple[str, ...] = ("local", "broadcast", "last")


def _outcomes(outcomes: Tensorish) -> torch.Tensor:
    y = as_float(outcomes, "outcomes")
    check_ndim(y, 2, "outcomes", "[G, R] (chains x attempts)")
    return y


def active_mask(outcomes: Tensorish) -> torch.Tensor:
    """FC-SWE active indicator ``q[c, r]`` of each attempt.

    Args:
        outcomes: ``[G, R]`` verifier results in {0, 1}; values after a chain's first success (and
            NaN ⊥) are ignored. A NaN at an otherwise active position ends the chain there.

    Returns:
        ``BoolTensor[G, R]``: ``q[c, 0] = 1``, ``q[c, r] = q[c, r-1] · (1 − y[c, r-1])``
        (FC-SWE, active-set recursion), restricted to attempts that were executed.

    Raises:
        ValueError: ``outcomes`` is not 2-D, or an active attempt has a value other than 0/1.
    """
    y = _outcomes(outcomes)
    executed = ~torch.isnan(y)
    # still_going[c, r] = attempts 0..r-1 all executed and all failed.
    failed = executed & (y == 0)
    prev_failed = torch.cumprod(failed.to(torch.int64), dim=1)
    still_going = torch.ones_like(executed)
    if y.shape[1] > 1:
        still_going[:, 1:] = prev_failed[:, :-1].bool()
    q = still_going & executed
    bad = q & (y != 0) & (y != 1)
    if bad.any():
        c, r = (int(v) for v in bad.nonzero()[0])
        raise ValueError(
            f"outcomes: active attempt [{c}, {r}] has value {float(y[c, r])}; expected 0 or 1"
        )
    return q


def attempt_rewards(outcomes: Tensorish, scheme: RewardScheme = "local") -> torch.Tensor:
    """Per-attempt rewards of recovery chains, NaN (⊥) where an attempt gets no reward.

    Args:
        outcomes: ``[G, R]`` verifier results (see :func:`active_mask`).
        scheme:
            * ``"local"`` (FC-SWE trajectory-local reward): ``r[c, r] = y[c, r]`` on every active
              attempt; a failed-then-recovered chain gives ``[0, 1]``.
            * ``"broadcast"`` (the paper's shared-reward ablation): every active attempt gets the
              chain's final result (the outcome of its last active attempt): ``[1, 1]``.
            * ``"last"``: only the last active attempt of each chain is rewarded (``[⊥, 1]``).

    Returns:
        ``Tensor[G, R]`` (floating dtype of ``outcomes``, float32 for integer input) with NaN on
        inactive attempts and on attempts the scheme leaves unrewarded. Chains with no executed
        attempt are all NaN.
    """
    if scheme not in REWARD_SCHEMES:
        raise ValueError(f"scheme: unknown reward scheme {scheme!r}; expected one of {REWARD_SCHEMES}")
    y = _outcomes(outcomes)
    q = active_mask(y)
    nan = torch.full_like(y, float("nan"))
    if scheme == "local":
        return torch.where(q, y, nan)
    # Last active attempt per chain: the largest r with q[c, r] (active attempts form a prefix).
    n_active = q.sum(dim=1)
    last_idx = (n_active - 1).clamp(min=0)
    final = y.gather(1, last_idx.unsqueeze(1)).squeeze(1)  # [G]
    if scheme == "broadcast":
        return torch.where(q, final.unsqueeze(1).expand_as(y), nan)
    positions = torch.arange(y.shape[1], device=y.device).unsqueeze(0)
    is_last = q & (positions == last_idx.unsqueeze(1))
    return torch.where(is_last, y, nan)


def chain_advantages(
    outcomes: Tensorish,
    scheme: RewardScheme = "local",
    estimator: str = "active_set",
    eps: float = 1e-6,
) -> torch.Tensor:
    """Advantages of all attempts of ONE issue's chains (convenience for the FC-SWE recipe).

    Rewards come from :func:`attempt_rewards`; the rewarded attempts of all chains of the issue
    form one comparison group (FC-SWE active set V_x) for the registered ``estimator``.

    Args:
        outcomes: ``[G, R]`` verifier results of the issue's chains.

    Returns:
        ``Tensor[G, R]``: advantages, 0 where an attempt is inactive or unrewarded.
    """
    from .advantages import get_advantage_estimator

    r = attempt_rewards(outcomes, scheme)
    fn = get_advantage_estimator(estimator)
    flat = fn(r.reshape(-1), torch.zeros(r.numel(), dtype=torch.long), eps=eps)
    return flat.reshape(r.shape)
