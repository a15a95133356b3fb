"""``method="greedy"``: sort by weight and accept an element while every cap allows it.

Approximate: with two overlapping views the greedy support is not optimal in general (it is a
1/3-approximation of the maximum weight, as for any intersection of three matroids).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from projections.result import MethodOutput


@njit(cache=True)
def _accept_in_order(order, labels1, labels2, caps1, caps2, total):
    left1 = caps1.copy()
    left2 = caps2.copy()
    chosen = np.zeros(labels1.shape[0], dtype=np.bool_)
    taken = 0
    for e in order:
        if taken == total:
            break
        g = labels1[e]
        h = labels2[e]
        if (g < 0 or left1[g] > 0) and (h < 0 or left2[h] > 0):
            chosen[e] = True
            taken += 1
            if g >= 0:
                left1[g] -= 1
            if h >= 0:
                left2[h] -= 1
    return chosen


def greedy_support(weights: np.ndarray, structure) -> np.ndarray:
    """Greedy support for non-negative ``weights`` (shape (p,)); ties go to the lower index."""
    positive = np.flatnonzero(weights > 0)
    order = positive[np.argsort(-weights[positive], kind="stable")]
    return _accept_in_order(
        order,
        structure.labels1,
        structure.labels2,
        structure.caps1,
        structure.caps2,
        structure.total,
    )


def solve(weights, structure, *, warm_start=None) -> MethodOutput:
    """Greedy support; see the module docstring. ``warm_start`` is ignored."""
    support = greedy_support(weights, structure)
    return MethodOutput(support=support, optimal=False, message="greedy (approximate)")
