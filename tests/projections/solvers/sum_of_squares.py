"""A loss with only ``value`` and ``gradient``: no ``lipschitz()``, no ``minimize_on_support``.

The minimal loss the solvers accept, for the tests of what they do without the optional methods.
"""

import numpy as np


class SumOfSquares:
    """``f(w) = ||w||^2`` over ``n_features`` weights (minimiser 0, curvature 2)."""

    def __init__(self, n_features: int) -> None:
        self.feature_shape = (n_features,)

    def value(self, w: np.ndarray) -> float:
        return float(w @ w)

    def gradient(self, w: np.ndarray) -> np.ndarray:
        return 2 * w
