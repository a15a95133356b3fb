"""Element loops: the input's weights, each element's arc ends and integer cost.

A matrix structure (``labels1`` empty) numbers element ``i * n_cols + j`` in row ``i`` and
column ``j``; otherwise ``labels1`` / ``labels2`` give the groups (-1: none). An element is
*usable* when its weight ``v[e] ** 2`` is positive and none of its groups has cap 0. The
weights are never stored: every loop squares ``v`` as it reads it. An element's arc goes from
its view-1 group's node ``g`` (the source ``g1 + g2`` if none) to its view-2 group's node
``g1 + h`` (the sink ``g1 + g2 + 1`` if none), with cost ``-round(w * factor) * multiplier``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: No octave counts (see :func:`weight_range`).
NO_OCTAVES = np.zeros(0, dtype=np.int64)


@njit(cache=True)
def weight_range(values, labels1, labels2, n_cols, caps1, caps2, octaves):
    """Largest and smallest usable weight (0, 0 if there is none), and whether all are finite.

    The weight of an element is the square of its value. ``octaves`` (2048 counters, or
    empty: none) counts the usable weights by binary exponent.
    """
    count = octaves.shape[0] > 0
    finite = True
    top = 0.0
    low = np.inf
    if labels1.shape[0] == 0:  # matrix: row by row
        for g in range(caps1.shape[0]):
            base = g * n_cols
            usable = caps1[g] > 0
            for h in range(n_cols):
                y = values[base + h]
                finite &= y - y == 0.0  # False for NaN and infinity
                x = y * y
                if usable and x > 0 and caps2[h] > 0:
                    top = max(top, x)
                    low = min(low, x)
                    if count:
                        octaves[np.float64(x).view(np.int64) >> 52] += 1
    else:
        for e in range(values.shape[0]):
            g = labels1[e]
            h = labels2[e]
            y = values[e]
            finite &= y - y == 0.0
            x = y * y
            if x > 0 and (g < 0 or caps1[g] > 0) and (h < 0 or caps2[h] > 0):
                top = max(top, x)
                low = min(low, x)
                if count:
                    octaves[np.float64(x).view(np.int64) >> 52] += 1
    if top == 0.0:
        low = 0.0
    return top, low, finite


# Large outputs are allocated by NumPy, outside the kernels: NumPy asks for transparent huge
# pages, and first touching Numba's own allocations (4 KiB pages) costs several times more.


def empty(n):
    """An uninitialised int64 array of ``n`` (NumPy's allocation: huge pages)."""
    return np.empty(n, dtype=np.int64)


def arc_ends(elements, labels1, labels2, n_cols, g1, g2):
    """Tail and head node of the arc of each element."""
    tails = empty(elements.shape[0])
    heads = empty(elements.shape[0])
    fill_ends(elements, labels1, labels2, n_cols, g1, g2, tails, heads)
    return tails, heads


@njit(cache=True)
def element_ends(e, labels1, labels2, n_cols, g1, g2, g, base):
    """Tail and head node of element ``e``'s arc, and the row state ``(g, base)`` for the next.

    Matrix: ``g`` is the row of the previous element and ``base = g * n_cols``; a division
    only when the row changes (they are slow, and elements come row by row).
    """
    if labels1.shape[0] == 0:
        if e < base or e >= base + n_cols:
            g = e // n_cols
            base = g * n_cols
        h = e - base
        return g, g1 + h, g, base
    g = labels1[e]
    h = labels2[e]
    return (g if g >= 0 else g1 + g2), (g1 + h if h >= 0 else g1 + g2 + 1), g, base


@njit(cache=True)
def fill_ends(elements, labels1, labels2, n_cols, g1, g2, tails, heads):
    """:func:`arc_ends` into ``tails`` and ``heads``."""
    g = 0
    base = 0
    for t in range(elements.shape[0]):
        tails[t], heads[t], g, base = element_ends(
            elements[t], labels1, labels2, n_cols, g1, g2, g, base
        )


def arc_costs(values, elements, factor, multiplier, sign=1):
    """Integer arc costs: ``sign * round(w * factor) * multiplier``, half up."""
    out = empty(elements.shape[0])
    _fill_costs(values, elements, factor, multiplier * sign, out)
    return out


@njit(cache=True)
def _fill_costs(values, elements, factor, multiplier, out):
    for t in range(elements.shape[0]):
        x = values[elements[t]]
        out[t] = np.int64(x * x * factor + 0.5) * multiplier


@njit(cache=True)
def groups_of(e, labels1, labels2, n_cols):
    """Element ``e``'s group in view 1 and in view 2 (-1: none); a matrix has no labels."""
    if labels1.shape[0] == 0:
        g = e // n_cols
        return g, e - g * n_cols
    return labels1[e], labels2[e]
