"""Location and spread of a sample."""
from __future__ import annotations

from typing import Sequence


def _check(values: Sequence[float], name: str = "values", minimum: int = 1) -> None:
    if len(values) < minimum:
        raise ValueError(f"{name} needs at least {minimum} item(s), got {len(values)}")


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; raises ``ValueError`` on an empty sample."""
    _check(values)
    return sum(values) / len(values)


def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    """Mean of ``values`` weighted by non-negative ``weights`` (same length, positive total)."""
    if len(values) != len(weights):
        raise ValueError("values and weights differ in length")
    if any(w < 0 for w in weights):
        raise ValueError("weights must be non-negative")
    total = sum(weights)
    if total <= 0:
        raise ValueError("weights sum to zero")
    return sum(v * w for v, w in zip(values, weights)) / total


def median(values: Sequence[float]) -> float:
    """Middle value; the mean of the two middle values for an even-sized sample."""
    _check(values)
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2 == 1:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2


def mode(values: Sequence[float]) -> list[float]:
    """All most-frequent values, in ascending order."""
    _check(values)
    counts: dict[float, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    top = max(counts.values())
    return sorted(v for v, c in counts.items() if c == top)


def variance(values: Sequence[float], sample: bool = True) -> float:
    """Variance; ``sample=True`` divides by ``n - 1`` (needs two values), else by ``n``."""
    _check(values, minimum=2 if sample else 1)
    m = mean(values)
    ss = sum((v - m) ** 2 for v in values)
    return ss / (len(values) - 1 if sample else len(values))


def stdev(values: Sequence[float], sample: bool = True) -> float:
    """Square root of ``variance``."""
    return variance(values, sample) ** 0.5


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0..100) with linear interpolation between closest ranks."""
    _check(values)
    if p < 0 or p > 100:
        raise ValueError(f"percentile must be within 0..100, got {p}")
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    pos = (len(ordered) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    frac = pos - lo
    return ordered[lo] + (ordered[hi] - ordered[lo]) * frac


def describe(values: Sequence[float]) -> dict[str, float]:
    """Summary with count, mean, std (sample; 0 for one value), min, 25%, 50%, 75%, max."""
    _check(values)
    return {
        "count": len(values),
        "mean": mean(values),
        "std": stdev(values) if len(values) > 1 else 0.0,
        "min": float(min(values)),
        "25%": percentile(values, 25),
        "50%": percentile(values, 50),
        "75%": percentile(values, 75),
        "max": float(max(values)),
    }
