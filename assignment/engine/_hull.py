"""The upper concave envelopes of the upper bound's accuracy curves (private numba kernel).

:mod:`assignment.engine.upper_bound` walks the segments of every task's envelope of
``k -> a_j(k)`` in order of decreasing slope; this kernel finds them for every task at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def hull_segments(acc, k_max):
    """The segments of every task's upper concave envelope of the points ``(k, acc[k, j])``,
    ``k <= k_max[j]``, that gain: ``(slope, task, workers, gain)``, arrays of shape (s,), tasks
    in order. A point on or below the chord of its neighbours is not a vertex."""
    top1, m = acc.shape
    slope = np.empty(m * top1)
    task = np.empty(m * top1, dtype=np.int64)
    size = np.empty(m * top1, dtype=np.int64)
    gain = np.empty(m * top1)
    hull = np.empty(top1, dtype=np.int64)
    s = 0
    for j in range(m):
        h = 0
        for k in range(k_max[j] + 1):
            while h >= 2:
                a, b = hull[h - 2], hull[h - 1]
                if (acc[b, j] - acc[a, j]) * (k - a) <= (acc[k, j] - acc[a, j]) * (b - a):
                    h -= 1
                else:
                    break
            hull[h] = k
            h += 1
        for t in range(h - 1):
            a, b = hull[t], hull[t + 1]
            g = acc[b, j] - acc[a, j]
            if g > 0:
                slope[s], task[s], size[s], gain[s] = g / (b - a), j, b - a, g
                s += 1
    return slope[:s], task[:s], size[:s], gain[:s]
