"""The largest entries of every column (private numba kernel).

:mod:`assignment.engine.upper_bound` ranks each task's workers by reliability but reads only
the ``top`` best (``top`` is the largest per-task cap, at most 20): a full sort of every
column, ``O(n log n)`` per task, did far more work than keeping the ``top`` best in one pass.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def top_rows(values, top):
    """Row indices of the ``top`` largest entries of each column of ``values`` (n, m), shape
    (top, m): largest first, equal values in increasing row order, i.e. the first ``top`` rows
    of ``np.argsort(-values, axis=0, kind="stable")``. Needs ``0 <= top <= n`` and no NaN."""
    n, m = values.shape
    best = np.empty((top, m))
    rows = np.zeros((top, m), dtype=np.int64)
    filled = np.zeros(m, dtype=np.int64)
    for i in range(n):  # rows in order: a later row never displaces an equal earlier one
        for j in range(m):
            v = values[i, j]
            k = filled[j]
            if k == top:
                if top == 0 or v <= best[top - 1, j]:
                    continue
                k -= 1
            else:
                filled[j] += 1
            while k > 0 and v > best[k - 1, j]:
                best[k, j] = best[k - 1, j]
                rows[k, j] = rows[k - 1, j]
                k -= 1
            best[k, j] = v
            rows[k, j] = i
    return rows
