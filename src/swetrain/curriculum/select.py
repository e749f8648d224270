"""RL data selection from a mastery map (paper 000, refresh-repair-expand).

* :func:`select_frontier`: the next exploration set. It is the *informative frontier*
  (``0 < p_hat < 1``: repeated rollouts expose both successes and failures, so group-relative
  advantages are non-zero) plus a small set of currently unsolved instances with evidence of a
  historical success (``p_hat = 0`` and ``H(x) = 1``). Pure hard zeros (``p_hat = 0``, no
  success anywhere) and saturated instances (``p_hat = 1``) are excluded from the RL budget.
  The frontier is ordered by the Bernoulli variance ``p(1 - p)`` (the chance that a group
  of two rollouts disagrees), most informative first.
* :func:`refresh_pool`: the expand step, the RL set plus a random sample of instances whose
  base-model pass rates were zero or one, to be re-estimated before the next RL phase
  (previously unsolved ones may now succeed; saturated ones may no longer be mastered).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from swetrain.curriculum.mastery import MasteryError, MasteryMap


@dataclass(frozen=True)
class FrontierConfig:
    max_tasks: int | None = None  # size of the RL set (None: every eligible instance)
    evidence_share: float = 0.25  # at most this share of the set is zero-pass instances with H(x) = 1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_tasks is not None and self.max_tasks < 1:
            raise MasteryError(f"max_tasks: must be >= 1 or None (got {self.max_tasks})")
        if not 0.0 <= self.evidence_share <= 1.0:
            raise MasteryError(f"evidence_share: must lie in [0, 1] (got {self.evidence_share})")


@dataclass
class Selection:
    frontier: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    excluded: dict[str, list[str]] = field(default_factory=dict)  # reason -> instance ids

    @property
    def selected(self) -> list[str]:
        return [*self.frontier, *self.evidence]

    def counts(self) -> dict[str, int]:
        return {"frontier": len(self.frontier), "evidence": len(self.evidence),
                **{k: len(v) for k, v in sorted(self.excluded.items())}}


def select_frontier(mastery: MasteryMap, candidates: Iterable[str], config: FrontierConfig | None = None) -> Selection:
    """Choose the next RL set among ``candidates`` (see the module docstring).

    Instances without a current estimate are excluded as ``unestimated`` (estimate them first:
    the paper reruns incomplete refreshes before an instance can enter a training set).
    """
    cfg = config or FrontierConfig()
    rng = random.Random(cfg.seed)
    excluded: dict[str, list[str]] = {"saturated": [], "hard_zero": [], "unestimated": [], "over_budget": []}
    frontier: list[tuple[float, float, str]] = []
    evidence: list[str] = []
    for iid in sorted(set(candidates)):
        rec = mastery.instances.get(iid)
        p = None if rec is None else rec.p_hat
        if p is None:
            excluded["unestimated"].append(iid)
        elif p >= 1.0:
            excluded["saturated"].append(iid)
        elif p > 0.0:
            frontier.append((-p * (1.0 - p), rng.random(), iid))
        elif rec is not None and rec.ever_solved:
            evidence.append(iid)
        else:
            excluded["hard_zero"].append(iid)
    frontier_ids = [iid for _, _, iid in sorted(frontier)]
    rng.shuffle(evidence)

    budget = cfg.max_tasks if cfg.max_tasks is not None else len(frontier_ids) + len(evidence)
    evidence_cap = math.floor(cfg.evidence_share * budget)
    if evidence and cfg.evidence_share > 0:
        evidence_cap = max(evidence_cap, 1)
    take_evidence = min(len(evidence), evidence_cap, budget)  # a small reserved share
    take_frontier = min(len(frontier_ids), budget - take_evidence)
    excluded["over_budget"] = sorted(frontier_ids[take_frontier:] + evidence[take_evidence:])
    return Selection(frontier=frontier_ids[:take_frontier], evidence=sorted(evidence[:take_evidence]),
                     excluded={k: v for k, v in excluded.items() if v})


def refresh_pool(mastery: MasteryMap, rl_set: Iterable[str], candidates: Iterable[str], extra: int, *,
                 base_phase: str, seed: int = 0) -> list[str]:
    """The RL set plus ``extra`` instances drawn at random from ``candidates`` outside it whose
    ``base_phase`` estimate was 0 or 1 (the refresh pool ``U`` to re-estimate before the next
    RL phase). Returned sorted; instances without a ``base_phase`` estimate are not drawn."""
    if extra < 0:
        raise MasteryError(f"extra: must be >= 0 (got {extra})")
    chosen = set(rl_set)
    extreme = []
    for iid in sorted(set(candidates) - chosen):
        rec = mastery.instances.get(iid)
        est = rec.estimate_of(base_phase) if rec is not None else None
        if est is not None and est.p_hat in (0.0, 1.0):
            extreme.append(iid)
    drawn = random.Random(seed).sample(extreme, min(extra, len(extreme)))
    return sorted(chosen | set(drawn))
