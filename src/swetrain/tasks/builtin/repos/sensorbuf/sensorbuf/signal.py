"""Conditioning of noisy digital and analogue signals."""
from __future__ import annotations


class Debouncer:
    """Report a new digital state only after it has been read ``stable_reads`` times in a row."""

    def __init__(self, stable_reads: int = 3, initial: bool = False) -> None:
        if stable_reads < 1:
            raise ValueError("stable_reads must be >= 1")
        self.stable_reads = stable_reads
        self.state = initial
        self._candidate = initial
        self._count = 0
        self.changes = 0

    def update(self, raw: bool) -> bool:
        """Feed one raw reading; return the debounced state."""
        if raw == self.state:
            self._candidate = raw
            self._count = 0
            return self.state
        if raw != self._candidate:
            self._candidate = raw
            self._count = 0
        self._count += 1
        if self._count >= self.stable_reads:
            self.state = raw
            self._count = 0
            self.changes += 1
        return self.state


class Hysteresis:
    """Switch on when the value rises to ``high`` or above, off when it falls to ``low`` or below."""

    def __init__(self, low: float, high: float, initial: bool = False) -> None:
        if low >= high:
            raise ValueError(f"low ({low}) must be below high ({high})")
        self.low, self.high = low, high
        self.on = initial

    def update(self, value: float) -> bool:
        if not self.on and value >= self.high:
            self.on = True
        elif self.on and value <= self.low:
            self.on = False
        return self.on


def median_filter(values: list[float], window: int) -> list[float]:
    """Centred median filter of odd ``window``; edges use the samples available (shrunken window)."""
    if window < 1 or window % 2 == 0:
        raise ValueError("window must be a positive odd number")
    half = window // 2
    out = []
    for i in range(len(values)):
        lo, hi = max(0, i - half), min(len(values), i + half + 1)
        chunk = sorted(values[lo:hi])
        m = len(chunk)
        out.append(chunk[m // 2] if m % 2 else (chunk[m // 2 - 1] + chunk[m // 2]) / 2)
    return out
