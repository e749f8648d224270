"""Frontier selection and the refresh pool (paper 000's RRE data selection)."""

from __future__ import annotations

import pytest

from swetrain.curriculum.mastery import MasteryError, MasteryMap
from swetrain.curriculum.select import FrontierConfig, refresh_pool, select_frontier


def make_map() -> MasteryMap:
    m = MasteryMap()
    for iid, n, s in [("half", 4, 2), ("quarter", 4, 1), ("three4", 4, 3), ("sat", 4, 4), ("zero", 4, 0),
                      ("zero_ev", 4, 0), ("zero_ev2", 4, 0), ("eighth", 8, 1)]:
        m.refresh(iid, n, s, "base")
    m.add_success_evidence(["zero_ev", "zero_ev2"])
    return m


def test_frontier_order_and_strata():
    sel = select_frontier(make_map(), ["half", "quarter", "three4", "sat", "zero", "zero_ev", "zero_ev2", "eighth", "fresh"])
    assert sel.frontier[0] == "half"  # p(1-p) largest first
    assert set(sel.frontier[1:3]) == {"quarter", "three4"} and sel.frontier[3] == "eighth"
    # evidence-backed zeros: at most 25% of the 6 eligible -> 1 of the 2
    assert len(sel.evidence) == 1 and sel.evidence[0] in {"zero_ev", "zero_ev2"}
    assert sel.excluded["saturated"] == ["sat"] and sel.excluded["hard_zero"] == ["zero"]
    assert sel.excluded["unestimated"] == ["fresh"] and len(sel.excluded["over_budget"]) == 1
    assert sel.counts()["frontier"] == 4 and sel.selected == sel.frontier + sel.evidence


def test_budget_keeps_the_most_informative_and_a_small_evidence_share():
    m = make_map()
    sel = select_frontier(m, m.instances, FrontierConfig(max_tasks=2, evidence_share=0.25))
    assert sel.frontier == ["half"] and len(sel.evidence) == 1  # floor(0.5) -> at least 1 evidence slot
    sel = select_frontier(m, m.instances, FrontierConfig(max_tasks=3, evidence_share=0.0))
    assert sel.frontier[0] == "half" and len(sel.frontier) == 3 and sel.evidence == []
    # deterministic for a seed
    a = select_frontier(m, m.instances, FrontierConfig(seed=3))
    b = select_frontier(m, m.instances, FrontierConfig(seed=3))
    assert a == b


def test_bad_config():
    with pytest.raises(MasteryError, match="max_tasks"):
        FrontierConfig(max_tasks=0)
    with pytest.raises(MasteryError, match="evidence_share"):
        FrontierConfig(evidence_share=1.5)


def test_refresh_pool_adds_extreme_base_rates_only():
    m = make_map()
    m.refresh("half", 4, 4, "rl-1")  # now saturated, but its base rate was 0.5: never drawn as extra
    pool = refresh_pool(m, ["quarter"], m.instances, extra=10, base_phase="base", seed=0)
    assert set(pool) == {"quarter", "sat", "zero", "zero_ev", "zero_ev2"}
    small = refresh_pool(m, ["quarter"], m.instances, extra=2, base_phase="base", seed=0)
    assert len(small) == 3 and "quarter" in small
    assert refresh_pool(m, ["quarter"], m.instances, extra=0, base_phase="base") == ["quarter"]
    with pytest.raises(MasteryError, match="extra"):
        refresh_pool(m, [], m.instances, extra=-1, base_phase="base")
