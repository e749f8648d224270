"""Clocks: the store never reads wall time directly, so tests can drive time by hand."""
from __future__ import annotations


class ManualClock:
    """A clock whose time only moves when ``advance`` is called."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (must be non-negative) and return the new time."""
        if seconds < 0:
            raise ValueError(f"cannot move a clock backwards: {seconds}")
        self.now += seconds
        return self.now
