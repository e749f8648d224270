"""Repair SFT data: mastery-weighted replay of verifier-approved trajectories (paper 000, RRE).

After an RL phase, each instance ``x`` with verified successes in the expert's trajectory
buffer receives a quota ``q(x) = g_rep(p_hat(x))`` with ``g_rep`` non-increasing, so
low-mastery instances get more *distinct* successful trajectories and mastered ones fewer.
When the buffer holds fewer successes than the quotas ask for, the chosen trajectories are
cycled (a multiset) only to fill the fixed repair budget. Instances without a verified success
get nothing: a zero post-RL estimate with an empty buffer has nothing to replay.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from swetrain.curriculum.mastery import MasteryError, MasteryMap


def replay_quota(p_hat: float | None, *, max_quota: int = 4, min_quota: int = 1) -> int:
    """``g_rep``: ``min_quota + round((max_quota - min_quota) * (1 - p_hat))``, non-increasing in
    ``p_hat``; an instance without an estimate counts as unmastered (``p_hat = 0``)."""
    if not 0 <= min_quota <= max_quota:
        raise MasteryError(f"replay quota: need 0 <= min_quota <= max_quota (got {min_quota}, {max_quota})")
    p = 0.0 if p_hat is None else min(max(float(p_hat), 0.0), 1.0)
    return min_quota + round((max_quota - min_quota) * (1.0 - p))


def plan_replay(trajectories: Iterable[Any], mastery: MasteryMap, budget: int | None = None, *, max_quota: int = 4,
                min_quota: int = 1) -> list[Any]:
    """The Repair SFT multiset: verified successful trajectories chosen by quota, then cycled to
    ``budget`` samples (``None``: the distinct ones once; nothing when no success is available).

    Order: instances from the lowest mastery up (ties by id); within an instance, trajectories in
    the order given (their storage order), distinct ones before any repeat. A budget smaller than
    the sum of the quotas keeps the low-mastery instances' trajectories.
    """
    if budget is not None and budget < 1:
        raise MasteryError(f"budget: must be >= 1 (got {budget})")
    by_instance: dict[str, list[Any]] = {}
    for t in trajectories:
        verdict = getattr(t, "verdict", None)
        if t.resolved and verdict is not None and not getattr(verdict, "infra_failure", False):
            by_instance.setdefault(t.instance_id, []).append(t)
    order = sorted(by_instance, key=lambda iid: (mastery.p_hat(iid) or 0.0, iid))
    distinct: list[Any] = []
    for iid in order:
        quota = replay_quota(mastery.p_hat(iid), max_quota=max_quota, min_quota=min_quota)
        distinct.extend(by_instance[iid][:quota])
    if not distinct or budget is None:
        return distinct
    return [distinct[i % len(distinct)] for i in range(budget)]
