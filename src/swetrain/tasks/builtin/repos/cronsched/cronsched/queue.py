"""A priority job queue with delayed jobs and retries."""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from .durations import backoff_delays


@dataclass(order=True)
class Job:
    """A job; lower ``priority`` runs first, ties by earlier ``ready_at``, then submission order."""

    priority: int
    ready_at: float
    seq: int
    name: str = field(compare=False)
    attempts: int = field(default=0, compare=False)


class JobQueue:
    """Jobs become runnable at ``ready_at``; failed jobs are retried with backoff up to ``max_retries``."""

    def __init__(self, max_retries: int = 3, base_delay: float = 1.0) -> None:
        self.max_retries = max_retries
        self.delays = backoff_delays(max_retries, base=base_delay)
        self._heap: list[Job] = []
        self._seq = 0
        self.dead: list[str] = []

    def submit(self, name: str, priority: int = 0, at: float = 0.0) -> Job:
        job = Job(priority, at, self._seq, name)
        self._seq += 1
        heapq.heappush(self._heap, job)
        return job

    def __len__(self) -> int:
        return len(self._heap)

    def pop_ready(self, now: float) -> Job | None:
        """Remove and return the best job whose ``ready_at <= now`` (or ``None``)."""
        ready = [j for j in self._heap if j.ready_at <= now]
        if not ready:
            return None
        best = min(ready, key=lambda j: (j.priority, j.ready_at, j.seq))
        self._heap.remove(best)
        heapq.heapify(self._heap)
        return best

    def fail(self, job: Job, now: float) -> bool:
        """Reschedule ``job`` after its backoff delay; return False (and mark dead) when out of retries."""
        if job.attempts >= self.max_retries:
            self.dead.append(job.name)
            return False
        delay = self.delays[job.attempts]
        retry = Job(job.priority, now + delay, self._seq, job.name, job.attempts + 1)
        self._seq += 1
        heapq.heappush(self._heap, retry)
        return True

    def next_ready_time(self) -> float | None:
        """Earliest ``ready_at`` among queued jobs."""
        return min((j.ready_at for j in self._heap), default=None)
