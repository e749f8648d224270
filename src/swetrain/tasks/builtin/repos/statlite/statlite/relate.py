"""Relationships between two samples."""
from __future__ import annotations

from typing import Sequence

from .describe import mean, stdev


def _pair(xs: Sequence[float], ys: Sequence[float], minimum: int = 2) -> None:
    if len(xs) != len(ys):
        raise ValueError(f"samples differ in length: {len(xs)} vs {len(ys)}")
    if len(xs) < minimum:
        raise ValueError(f"need at least {minimum} pairs, got {len(xs)}")


def covariance(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Sample covariance (divides by ``n - 1``)."""
    _pair(xs, ys)
    mx, my = mean(xs), mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (len(xs) - 1)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson correlation coefficient in [-1, 1]; raises ``ValueError`` if a sample is constant."""
    _pair(xs, ys)
    sx, sy = stdev(xs), stdev(ys)
    if sx == 0 or sy == 0:
        raise ValueError("correlation undefined for a constant sample")
    r = covariance(xs, ys) / (sx * sy)
    return max(-1.0, min(1.0, r))


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares line ``y = slope * x + intercept``; returns ``(slope, intercept)``."""
    _pair(xs, ys)
    mx, my = mean(xs), mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("all x values are equal; slope undefined")
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    return slope, my - slope * mx


def zscores(values: Sequence[float]) -> list[float]:
    """Standard scores using the sample standard deviation; all zeros for a constant sample."""
    m = mean(values)
    s = stdev(values) if len(values) > 1 else 0.0
    if s == 0:
        return [0.0 for _ in values]
    return [(v - m) / s for v in values]
