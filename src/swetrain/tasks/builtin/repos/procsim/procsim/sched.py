"""CPU scheduling. Each policy returns a timeline of ``(pid, start, end)`` slices."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

Slice = tuple[str, int, int]


@dataclass(frozen=True)
class Proc:
    """A process: arrival time, CPU burst, and priority (lower number = more important)."""

    pid: str
    arrival: int
    burst: int
    priority: int = 0

    def __post_init__(self) -> None:
        if self.arrival < 0 or self.burst <= 0:
            raise ValueError(f"{self.pid}: arrival must be >= 0 and burst > 0")


def _check(procs: list[Proc]) -> list[Proc]:
    if len({p.pid for p in procs}) != len(procs):
        raise ValueError("duplicate pids")
    return sorted(procs, key=lambda p: (p.arrival, p.pid))


def fcfs(procs: list[Proc]) -> list[Slice]:
    """First come, first served (ties by pid); the CPU idles until the next arrival."""
    t = 0
    out = []
    for p in _check(procs):
        start = max(t, p.arrival)
        out.append((p.pid, start, start + p.burst))
        t = start + p.burst
    return out


def _nonpreemptive(procs: list[Proc], key) -> list[Slice]:
    pending = _check(procs)
    t = 0
    out = []
    while pending:
        ready = [p for p in pending if p.arrival <= t]
        if not ready:
            t = min(p.arrival for p in pending)
            continue
        p = min(ready, key=key)
        pending.remove(p)
        out.append((p.pid, t, t + p.burst))
        t += p.burst
    return out


def sjf(procs: list[Proc]) -> list[Slice]:
    """Shortest job first, non-preemptive; ties by arrival then pid."""
    return _nonpreemptive(procs, key=lambda p: (p.burst, p.arrival, p.pid))


def priority(procs: list[Proc]) -> list[Slice]:
    """Non-preemptive priority scheduling (lowest number first); ties by arrival then pid."""
    return _nonpreemptive(procs, key=lambda p: (p.priority, p.arrival, p.pid))


def round_robin(procs: list[Proc], quantum: int) -> list[Slice]:
    """Round robin. Processes arriving during a slice queue before the preempted process."""
    if quantum <= 0:
        raise ValueError("quantum must be positive")
    pending = deque(_check(procs))
    remaining = {p.pid: p.burst for p in pending}
    queue: deque[Proc] = deque()
    t = 0
    out: list[Slice] = []
    while pending or queue:
        if not queue:
            t = max(t, pending[0].arrival)
        while pending and pending[0].arrival <= t:
            queue.append(pending.popleft())
        p = queue.popleft()
        run = min(quantum, remaining[p.pid])
        if out and out[-1][0] == p.pid and out[-1][2] == t:
            out[-1] = (p.pid, out[-1][1], t + run)
        else:
            out.append((p.pid, t, t + run))
        t += run
        remaining[p.pid] -= run
        while pending and pending[0].arrival <= t:
            queue.append(pending.popleft())
        if remaining[p.pid] > 0:
            queue.append(p)
    return out


def metrics(procs: list[Proc], timeline: list[Slice]) -> dict[str, dict[str, float]]:
    """Per-process ``completion``, ``turnaround`` (completion - arrival), ``waiting`` (turnaround - burst)
    and ``response`` (first start - arrival), plus an ``"avg"`` entry averaging the last three."""
    by_pid = {p.pid: p for p in procs}
    first: dict[str, int] = {}
    done: dict[str, int] = {}
    for pid, start, end in timeline:
        first.setdefault(pid, start)
        done[pid] = max(done.get(pid, 0), end)
    result: dict[str, dict[str, float]] = {}
    for pid, p in by_pid.items():
        if pid not in done:
            raise ValueError(f"{pid} never ran")
        turnaround = done[pid] - p.arrival
        result[pid] = {
            "completion": done[pid],
            "turnaround": turnaround,
            "waiting": turnaround - p.burst,
            "response": first[pid] - p.arrival,
        }
    n = len(by_pid)
    result["avg"] = {k: sum(r[k] for r in result.values()) / n for k in ("turnaround", "waiting", "response")}
    return result
