"""Curriculum of paper 000's refresh-repair-expand loop: per-instance mastery maps, RL frontier
selection, the expand step's refresh pool and Repair SFT replay quotas."""

from swetrain.curriculum.mastery import (
    Estimate,
    InstanceMastery,
    MasteryError,
    MasteryMap,
    estimate_mastery,
    regressions,
    rollout_counts,
    update_from_trajectories,
)
from swetrain.curriculum.replay import plan_replay, replay_quota
from swetrain.curriculum.select import FrontierConfig, Selection, refresh_pool, select_frontier

__all__ = [
    "Estimate", "FrontierConfig", "InstanceMastery", "MasteryError", "MasteryMap", "Selection",
    "estimate_mastery", "plan_replay", "refresh_pool", "regressions", "replay_quota", "rollout_counts",
    "select_frontier", "update_from_trajectories",
]
