"""Histogram binning."""
from __future__ import annotations

from typing import Sequence

from .describe import percentile


def bin_edges(lo: float, hi: float, bins: int) -> list[float]:
    """``bins + 1`` equally spaced edges from ``lo`` to ``hi`` (``hi > lo``, ``bins >= 1``)."""
    if bins < 1:
        raise ValueError(f"bins must be >= 1, got {bins}")
    if hi <= lo:
        raise ValueError(f"empty range: lo={lo}, hi={hi}")
    width = (hi - lo) / bins
    edges = [lo + i * width for i in range(bins)]
    edges.append(hi)
    return edges


def histogram(values: Sequence[float], bins: int = 10, range_: tuple[float, float] | None = None) -> tuple[list[int], list[float]]:
    """Count ``values`` into equal-width bins; returns ``(counts, edges)``.

    Bins are half-open ``[a, b)`` except the last, which includes its right edge. Values outside
    ``range_`` are ignored. Without ``range_`` the data's min/max are used (a constant sample gets
    the range ``[v - 0.5, v + 0.5]``).
    """
    if range_ is None:
        if not values:
            raise ValueError("cannot infer a range from no values")
        lo, hi = float(min(values)), float(max(values))
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
    else:
        lo, hi = range_
    edges = bin_edges(lo, hi, bins)
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        if v < lo or v > hi:
            continue
        index = int((v - lo) / width)
        if index >= bins:
            index = bins - 1
        counts[index] += 1
    return counts, edges


def quantile_bins(values: Sequence[float], q: int) -> list[int]:
    """Assign each value to one of ``q`` quantile bins (0-based), by its position among the cut points."""
    if q < 1:
        raise ValueError(f"q must be >= 1, got {q}")
    cuts = [percentile(values, 100 * k / q) for k in range(1, q)]
    labels = []
    for v in values:
        label = 0
        while label < len(cuts) and v > cuts[label]:
            label += 1
        labels.append(label)
    return labels
