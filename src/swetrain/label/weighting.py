"""Class weights shared by the learned labeler's linear models and its fine-tuned encoder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def sqrt_class_weights(labels: Sequence[str], classes: Sequence[str]) -> np.ndarray:
    """Per class ``(n / (k * n_class)) ** 0.5``, half way between none and balanced (0 for a class with no rows)."""
    counts = np.array([sum(1 for v in labels if v == c) for c in classes], dtype=np.float64)
    present = counts > 0
    out = np.zeros(len(classes))
    out[present] = (len(labels) / (present.sum() * counts[present])) ** 0.5
    return out
