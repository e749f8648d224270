"""Smoothing and ranking of series."""
from __future__ import annotations

from typing import Sequence


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """Trailing simple moving average; output has ``len(values) - window + 1`` items."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if window > len(values):
        return []
    total = sum(values[:window])
    out = [total / window]
    for i in range(window, len(values)):
        total += values[i] - values[i - window]
        out.append(total / window)
    return out


def ewma(values: Sequence[float], alpha: float) -> list[float]:
    """Exponentially weighted moving average, ``s_t = alpha*x_t + (1-alpha)*s_{t-1}``, ``s_0 = x_0``."""
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    out: list[float] = []
    for i, v in enumerate(values):
        if i == 0:
            out.append(float(v))
        else:
            out.append(alpha * v + (1 - alpha) * out[-1])
    return out


def rank(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties get the average of the ranks they span (``[10, 20, 20] -> [1, 2.5, 2.5]``)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        avg = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = avg
        i = j + 1
    return ranks
