"""A fixed-capacity ring buffer that overwrites its oldest sample."""
from __future__ import annotations

from typing import Iterator


class RingBuffer:
    """Holds the last ``capacity`` samples in insertion order."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._data: list[float] = [0.0] * capacity
        self._start = 0
        self._count = 0
        self.dropped = 0

    def push(self, value: float) -> None:
        """Append a sample, overwriting (and counting as dropped) the oldest when full."""
        end = (self._start + self._count) % self.capacity
        self._data[end] = value
        if self._count < self.capacity:
            self._count += 1
        else:
            self._start = (self._start + 1) % self.capacity
            self.dropped += 1

    def __len__(self) -> int:
        return self._count

    @property
    def full(self) -> bool:
        return self._count == self.capacity

    def __iter__(self) -> Iterator[float]:
        for k in range(self._count):
            yield self._data[(self._start + k) % self.capacity]

    def __getitem__(self, index: int) -> float:
        """0 is the oldest sample, -1 the newest."""
        if index < 0:
            index += self._count
        if index < 0 or index >= self._count:
            raise IndexError("ring buffer index out of range")
        return self._data[(self._start + index) % self.capacity]

    def latest(self, n: int) -> list[float]:
        """The newest ``n`` samples, oldest first (fewer if not enough)."""
        items = list(self)
        return items[max(0, len(items) - n):]

    def pop_oldest(self) -> float:
        if self._count == 0:
            raise IndexError("pop from empty ring buffer")
        value = self._data[self._start]
        self._start = (self._start + 1) % self.capacity
        self._count -= 1
        return value

    def mean(self) -> float:
        if self._count == 0:
            raise ValueError("no samples")
        return sum(self) / self._count

    def spread(self) -> float:
        """max - min of the stored samples."""
        if self._count == 0:
            raise ValueError("no samples")
        items = list(self)
        return max(items) - min(items)
