"""The one scheduling loop (``run_jobs``) over any ChainPool; both pools implement the protocol.

The Ray and local pools give the same records through this loop:
``test_rollout_engine.py::test_ray_and_local_backends_give_the_same_records``; an actor killed
mid-chain is run again through it: ``test_faults.py::test_ray_actor_killed_mid_episode_chain_is_retried``.
"""

from __future__ import annotations

from dataclasses import dataclass

from swetrain.rollout.chain_job import INFRA_GIVE_UP, ChainResult, RolloutReport
from swetrain.rollout.pools import ChainPool, Finished, LocalChainPool, run_jobs
from swetrain.rollout.ray_backend import RayChainPool


@dataclass(frozen=True)
class Task:
    instance_id: str


class StepPool:
    """A ChainPool that ends its jobs one per ``finished`` call, oldest first; ``outcomes`` says,
    per (task, chain), what each try returns: "ok", "lost" (worker gone) or "given up"."""

    def __init__(self, slots: int, outcomes: dict[tuple[str, int], list[str]] | None = None) -> None:
        self.slots = slots
        self.outcomes = outcomes or {}
        self.running: list[tuple[Task, int]] = []
        self.started: list[tuple[str, int]] = []
        self.most = 0

    def __enter__(self) -> StepPool:
        return self

    def __exit__(self, *exc) -> None:
        pass

    def has_room(self) -> bool:
        return len(self.running) < self.slots

    def busy(self) -> bool:
        return bool(self.running)

    def submit(self, task: Task, chain: int) -> None:
        self.running.append((task, chain))
        self.started.append((task.instance_id, chain))
        self.most = max(self.most, len(self.running))

    def finished(self) -> list[Finished]:
        task, chain = self.running.pop(0)
        tries = self.outcomes.get((task.instance_id, chain), [])
        outcome = tries.pop(0) if tries else "ok"
        if outcome == "lost":
            return [Finished(task, chain, None)]
        error = f"{INFRA_GIVE_UP} 3 tries: boom" if outcome == "given up" else None
        return [Finished(task, chain, ChainResult(task.instance_id, chain, error=error))]

    def batch_stats(self) -> dict[str, float]:
        return {}


def collector(report: RolloutReport, seen: list[tuple[str, int]]):
    """What the engine's collect does with a chain's result: count it, or give its task up."""
    def collect(result: ChainResult) -> None:
        seen.append((result.instance_id, result.chain))
        if result.ok:
            report.chains_done += 1
        else:
            report.chains_skipped += 1
            report.skipped_tasks.setdefault(result.instance_id, result.error or "")
    return collect


def jobs(tasks: str, chains: int) -> list[tuple[Task, int]]:
    return [(Task(t), c) for c in range(chains) for t in tasks]


def test_jobs_start_in_order_never_more_than_the_pool_has_room_for():
    pool, report, seen = StepPool(slots=2), RolloutReport(), []
    run_jobs(pool, jobs("ab", 3), collector(report, seen), report)
    order = [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert pool.started == order and seen == order
    assert pool.most == 2 and report.chains_done == 6 and not pool.busy()


def test_a_lost_try_runs_again_first_in_line():
    pool, report, seen = StepPool(slots=1, outcomes={("a", 0): ["lost", "lost"]}), RolloutReport(), []
    run_jobs(pool, jobs("ab", 1), collector(report, seen), report)
    assert pool.started == [("a", 0), ("a", 0), ("a", 0), ("b", 0)]
    assert seen == [("a", 0), ("b", 0)] and report.chains_done == 2


def test_a_given_up_task_starts_none_of_its_remaining_chains():
    pool, report, seen = StepPool(slots=1, outcomes={("a", 0): ["given up"]}), RolloutReport(), []
    run_jobs(pool, jobs("ab", 3), collector(report, seen), report)
    assert pool.started == [("a", 0), ("b", 0), ("b", 1), ("b", 2)]
    assert report.chains_skipped == 3 and report.chains_done == 3 and list(report.skipped_tasks) == ["a"]


def test_both_pools_are_chain_pools():
    assert isinstance(StepPool(1), ChainPool)
    assert issubclass(LocalChainPool, ChainPool) and issubclass(RayChainPool, ChainPool)
