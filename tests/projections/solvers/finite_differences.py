"""Central finite differences: the reference the losses' gradients are checked against."""

import numpy as np


def central_differences(f, w: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """``(f(w + h e_k) - f(w - h e_k)) / 2h`` for every entry ``k`` of ``w``: shape of ``w``."""
    g = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        e = np.zeros_like(w)
        e[idx] = h
        g[idx] = (f(w + e) - f(w - e)) / (2 * h)
    return g
