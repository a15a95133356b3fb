"""Approximate dual prices for the TVCS flow by coordinate descent (private kernel).

The LP dual of the projection (see :mod:`projections._exact`) is::

    minimise  total * lam + sum_g caps1[g] * u[g] + sum_h caps2[h] * v[h]
              + sum_e max(0, w[e] - u[g(e)] - v[h(e)] - lam)          over u, v, lam >= 0

Minimising over one group's ``u[g]`` with the rest fixed puts it between the ``caps1[g]``-th
and the ``caps1[g] + 1``-th largest of ``w[e] - v[h(e)] - lam`` over the group's elements
(0 if that is negative); likewise for ``v[h]`` and for ``lam`` over every element. A few
sweeps from a good ``lam`` (:func:`projections._exact.candidates.cold_candidates` takes it
from its weight histograms) give prices close enough to optimal that cost scaling can start at
a small ``eps``. They are only a starting point: optimality is still proved by the flow.

The sweeps run on the residual graph of :mod:`projections._mincostflow` as built by
:mod:`projections._exact.graph` (node ``g < g1`` is view-1 group ``g``, ``g1 + h`` view-2
group ``h``, then the source and the sink; the input arcs numbered ``n_fixed`` and up are the
elements, with cost ``-c[e]``), over the element arcs in it, in integer cost units.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _kth_largest(buf, n, k, max_rounds=-1):
    """The ``k``-th largest (``1 <= k <= n``) of ``buf[:n]``, which is partly reordered.

    Afterwards ``buf[:k - 1]`` holds values at least as large. Quickselect with a
    median-of-three pivot and branch-free partitions (a Lomuto pass that always swaps): the
    values are in no order, so a branch on each comparison would be mispredicted half the
    time. Each round puts the values above the pivot first, then, if the rank lies beyond
    them, those equal to it. Linear on average, also for a row of 1,800 values or all 1.8M
    elements (faster there than counting buckets); after ``max_rounds`` rounds (default
    ``2 * log2(n) + 16``: pivots that keep failing) it sorts what is left.
    """
    lo = 0
    hi = n
    target = k - 1
    if max_rounds < 0:
        max_rounds = 16
        size = n
        while size > 1:
            max_rounds += 2
            size >>= 1
    rounds = 0
    while hi - lo > 2:
        if rounds == max_rounds:
            rest = np.sort(buf[lo:hi])
            buf[lo:hi] = rest[::-1]
            return buf[target]
        rounds += 1
        mid = (lo + hi) >> 1
        x, y, z = buf[lo], buf[mid], buf[hi - 1]
        if x < y:
            x, y = y, x
        if y < z:
            y = z
            if x < y:
                y = x
        pivot = y  # the median of the three
        j = lo
        for i in range(lo, hi):
            x = buf[i]
            buf[i] = buf[j]
            buf[j] = x
            j += x > pivot
        if target < j:
            hi = j  # (the pivot itself is not above the pivot: the range shrinks)
            continue
        e = j
        for i in range(j, hi):
            x = buf[i]
            buf[i] = buf[e]
            buf[e] = x
            e += x == pivot
        if target < e:
            return pivot
        lo = e  # (at least the pivot was equal to it)
    if hi - lo == 2 and buf[lo] < buf[lo + 1]:
        buf[lo], buf[lo + 1] = buf[lo + 1], buf[lo]
    return buf[target]


@njit(cache=True)
def _threshold(buf, n, k):
    """A non-negative value between the ``k``-th and ``k + 1``-th largest of ``buf[:n]``.

    The midpoint, or 0 when it is negative or there are at most ``k`` values (``k == 0``:
    the largest value).
    """
    if n <= k:
        return 0
    positive = 0
    for t in range(n):
        positive += buf[t] > 0
    if positive < k:  # the k-th largest is <= 0, and so is the midpoint (a slack cap)
        return 0
    below = _kth_largest(buf, n, k + 1)
    if k == 0:
        return below if below > 0 else 0  # nothing may pass: at least the largest value
    above = buf[0]
    for t in range(1, k):
        if buf[t] < above:
            above = buf[t]
    mid = below + (above - below) // 2
    return mid if mid > 0 else 0


def dual_prices(first, last, head, cost, ident, n_fixed, caps1, caps2, total, u, v, lam, sweeps):
    """Node prices from ``sweeps`` rounds of coordinate descent from ``u``, ``v``, ``lam``.

    ``u`` (length ``g1 + 1``) and ``v`` (``g2 + 1``) are updated in place; their last entry
    stands for "no group" and stays 0. Each round updates every ``u[g]``, then every
    ``v[h]``, then ``lam``. Returns ``lam`` and the prices ``u[g] + lam`` (view-1 groups),
    ``-v[h]`` (view-2 groups), ``lam`` (source) and 0 (sink): the reduced cost of element
    ``e``'s arc is then ``-(c[e] - u - v - lam)``.
    """
    buf = np.empty(head.shape[0], dtype=np.int64)  # NumPy's allocation: huge pages
    return _dual_prices(
        first, last, head, cost, ident, n_fixed, caps1, caps2, total, u, v, lam, sweeps, buf
    )


@njit(cache=True)
def _dual_prices(
    first, last, head, cost, ident, n_fixed, caps1, caps2, total, u, v, lam, sweeps, buf
):
    g1 = caps1.shape[0]
    g2 = caps2.shape[0]
    source = g1 + g2
    sink = source + 1
    n_nodes = g1 + g2 + 2
    for _ in range(sweeps):
        # A view-1 group's slots hold its elements' arcs and the reverse of source -> group.
        for g in range(g1):
            nb = 0
            for a in range(first[g], last[g]):
                h = head[a]
                if h != source:
                    buf[nb] = -cost[a] - v[h - g1 if h < source else g2] - lam
                    nb += 1
            u[g] = _threshold(buf, nb, caps1[g])
        # A view-2 group's slots hold its elements' reverse arcs and group -> sink.
        for h in range(g2):
            x = g1 + h
            nb = 0
            for a in range(first[x], last[x]):
                g = head[a]
                if g != sink:
                    buf[nb] = cost[a] - u[g if g < g1 else g1] - lam
                    nb += 1
            v[h] = _threshold(buf, nb, caps2[h])
        nb = 0
        for g in range(g1):
            ug = u[g]
            for a in range(first[g], last[g]):
                h = head[a]
                if h != source:
                    buf[nb] = -cost[a] - ug - v[h - g1 if h < source else g2]
                    nb += 1
        for a in range(first[source], last[source]):
            if ident[a] >= n_fixed:
                h = head[a]
                buf[nb] = -cost[a] - v[h - g1 if h < source else g2]
                nb += 1
        lam = _threshold(buf, nb, total)
    price = np.zeros(n_nodes, dtype=np.int64)
    for g in range(g1):
        price[g] = u[g] + lam
    for h in range(g2):
        price[g1 + h] = -v[h]
    price[source] = lam
    return lam, price
