"""Repair SFT replay quotas: non-increasing in mastery, distinct before repeats, cycled to budget."""

from __future__ import annotations

import pytest

from swetrain.agent.trajectory import Trajectory
from swetrain.curriculum.mastery import MasteryError, MasteryMap
from swetrain.curriculum.replay import plan_replay, replay_quota
from swetrain.env.verdict import Verdict


def ok(iid: str, chain: int, resolved: bool = True, infra: bool = False) -> Trajectory:
    return Trajectory(instance_id=iid, chain=chain, resolved=resolved,
                      verdict=Verdict(instance_id=iid, resolved=resolved, infra_failure=infra))


def test_quota_is_non_increasing():
    quotas = [replay_quota(p / 10) for p in range(11)]
    assert quotas[0] == 4 and quotas[-1] == 1 and all(a >= b for a, b in zip(quotas, quotas[1:]))
    assert replay_quota(None) == 4
    with pytest.raises(MasteryError, match="min_quota"):
        replay_quota(0.5, max_quota=1, min_quota=2)


def test_plan_replay_allocates_by_mastery_and_cycles():
    m = MasteryMap()
    m.refresh("hard", 4, 1, "rl-1")  # p = 0.25 -> quota 3
    m.refresh("easy", 4, 4, "rl-1")  # p = 1 -> quota 1
    m.refresh("never", 4, 0, "rl-1")  # no success in the buffer -> nothing
    trajs = [ok("easy", c) for c in range(4)] + [ok("hard", c) for c in range(2)] + [ok("never", 0, resolved=False),
             ok("hard", 9, infra=True)]
    distinct = plan_replay(trajs, m)
    assert [(t.instance_id, t.chain) for t in distinct] == [("hard", 0), ("hard", 1), ("easy", 0)]
    cycled = plan_replay(trajs, m, budget=7)
    assert len(cycled) == 7 and cycled[:3] == distinct and cycled[3:6] == distinct  # a multiset
    assert plan_replay(trajs, m, budget=2) == distinct[:2]  # low mastery kept first
    assert plan_replay([ok("never", 0, resolved=False)], m, budget=5) == []
    with pytest.raises(MasteryError, match="budget"):
        plan_replay(trajs, m, budget=0)
