"""Page-replacement policies; each returns the number of page faults."""
from __future__ import annotations

from collections import OrderedDict, deque


def _check(frames: int) -> None:
    if frames < 1:
        raise ValueError("need at least one frame")


def fifo_faults(refs: list[int], frames: int) -> int:
    """Evict the page that was loaded earliest."""
    _check(frames)
    resident: set[int] = set()
    order: deque[int] = deque()
    faults = 0
    for page in refs:
        if page in resident:
            continue
        faults += 1
        if len(resident) == frames:
            resident.discard(order.popleft())
        resident.add(page)
        order.append(page)
    return faults


def lru_faults(refs: list[int], frames: int) -> int:
    """Evict the least recently used page."""
    _check(frames)
    cache: OrderedDict[int, None] = OrderedDict()
    faults = 0
    for page in refs:
        if page in cache:
            cache.move_to_end(page)
            continue
        faults += 1
        if len(cache) == frames:
            cache.popitem(last=False)
        cache[page] = None
    return faults


def optimal_faults(refs: list[int], frames: int) -> int:
    """Belady's optimal policy: evict the page used farthest in the future (never-used first;
    ties broken by the smallest page number)."""
    _check(frames)
    resident: set[int] = set()
    faults = 0
    for i, page in enumerate(refs):
        if page in resident:
            continue
        faults += 1
        if len(resident) == frames:
            def next_use(p: int) -> float:
                for j in range(i + 1, len(refs)):
                    if refs[j] == p:
                        return j
                return float("inf")
            victim = max(sorted(resident), key=next_use)
            resident.remove(victim)
        resident.add(page)
    return faults
