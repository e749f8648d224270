"""Chain pools: where the rollout engine's chain jobs run, and the one scheduling loop over them.

A :class:`ChainPool` runs :func:`~swetrain.rollout.chain_job.run_chain_job` for (task, chain)
jobs, a bounded number at a time. :func:`run_jobs` feeds a pool: it starts jobs in order while the
pool has room, skips the chains of a task already given up, hands every finished chain to
``collect`` and queues again, first in line, a job whose try was lost with its worker. The pools:

* :class:`LocalChainPool`: a thread pool in this process; every thread shares one policy (made
  thread-safe by :func:`swetrain.policy.wrappers.wrap_for_workers`) and one verifier;
* :class:`swetrain.rollout.ray_backend.RayChainPool`: Ray actors, each with its own policy.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from swetrain.agent.loop import PatchVerifier, WorkspaceFactory
from swetrain.policy.base import Policy
from swetrain.policy.wrappers import batch_stats
from swetrain.rollout.chain_job import ChainResult, ChainJobConfig, RolloutReport, run_chain_job

Job = tuple[Any, int]  # (task, chain)


@dataclass
class Finished:
    """A job that ended: its result, or None when the try was lost with its worker (run it again)."""

    task: Any
    chain: int
    result: ChainResult | None


@runtime_checkable
class ChainPool(Protocol):
    """Runs chain jobs, a bounded number at once; opened and closed as a context manager."""

    def __enter__(self) -> ChainPool: ...

    def __exit__(self, *exc: Any) -> None: ...

    def has_room(self) -> bool:
        """Whether another job may start now."""
        ...

    def busy(self) -> bool:
        """Whether a job is running."""
        ...

    def submit(self, task: Any, chain: int) -> None:
        """Start chain ``chain`` of ``task``."""
        ...

    def finished(self) -> list[Finished]:
        """Wait until at least one running job ends; the jobs that ended."""
        ...

    def batch_stats(self) -> dict[str, float]:
        """What batching of generate calls did (``RolloutReport.generation_batches``); may be empty."""
        ...


def run_jobs(pool: ChainPool, jobs: Sequence[Job], collect: Callable[[ChainResult], None],
             report: RolloutReport) -> None:
    """Run ``jobs`` in order on ``pool``, handing each finished chain to ``collect``.

    A job of a task in ``report.skipped_tasks`` (given up by ``collect``) is not started and counts
    as skipped; a job whose try was lost with its worker is queued again, first in line.
    """
    pending = deque(jobs)
    while pending or pool.busy():
        while pending and pool.has_room():
            task, chain = pending.popleft()
            if task.instance_id in report.skipped_tasks:
                report.chains_skipped += 1
                continue
            pool.submit(task, chain)
        if not pool.busy():
            continue
        for done in pool.finished():
            if done.result is None:
                pending.appendleft((done.task, done.chain))
            else:
                collect(done.result)


class LocalChainPool:
    """``workers`` threads of this process sharing one (thread-safe) policy and one verifier."""

    def __init__(self, policy: Policy, verifier: PatchVerifier, config: ChainJobConfig, *, workers: int,
                 workspace_factory: WorkspaceFactory | None = None) -> None:
        self.policy = policy
        self.verifier = verifier
        self.config = config
        self.workers = workers
        self.workspace_factory = workspace_factory
        self._executor: ThreadPoolExecutor | None = None
        self._running: dict[Future[ChainResult], Job] = {}

    def __enter__(self) -> LocalChainPool:
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="swetrain-chain")
        self._running = {}
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def has_room(self) -> bool:
        return len(self._running) < self.workers

    def busy(self) -> bool:
        return bool(self._running)

    def submit(self, task: Any, chain: int) -> None:
        if self._executor is None:
            raise RuntimeError("LocalChainPool is not open: use it as a context manager")
        future = self._executor.submit(run_chain_job, task, chain, self.policy, self.verifier, self.config,
                                       workspace_factory=self.workspace_factory)
        self._running[future] = (task, chain)

    def finished(self) -> list[Finished]:
        done, _ = wait(list(self._running), return_when=FIRST_COMPLETED)
        out = []
        for future in done:
            task, chain = self._running.pop(future)
            out.append(Finished(task, chain, future.result()))
        return out

    def batch_stats(self) -> dict[str, float]:
        return batch_stats(self.policy)
