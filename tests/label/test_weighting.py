"""Square-root class weights (the learned labeler's Task Type models)."""

import numpy as np

from swetrain.label.weighting import sqrt_class_weights


def test_sqrt_class_weights_are_half_way_to_balanced_and_zero_for_absent_classes() -> None:
    w = sqrt_class_weights(["a", "a", "a", "b"], ["a", "b", "c"])
    # balanced would be n / (k * n_class) = 4/6 and 4/2 over the k = 2 present classes
    assert np.allclose(w, [(4 / 6) ** 0.5, 2 ** 0.5, 0.0])
