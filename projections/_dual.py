"""Approximate dual prices for the TVCS flow by coordinate descent (private kernel).

The LP dual of the projection (see :mod:`projections._exact`) is::

    minimise  total * lam + sum_g caps1[g] * u[g] + sum_h caps2[h] * v[h]
              + sum_e max(0, w[e] - u[g(e)] - v[h(e)] - lam)          over u, v, lam >= 0

Minimising over one group's ``u[g]`` with the rest fixed puts it between the ``caps1[g]``-th
and the ``caps1[g] + 1``-th largest of ``w[e] - v[h(e)] - lam`` over the group's elements
(0 if that is negative); likewise for ``v[h]`` and for ``lam`` over every element. A few
sweeps from a good ``lam`` (:func:`projections._exact.solve` takes it from its weight
histograms) give prices close enough to optimal that cost scaling can start at a small
``eps``. They are only a starting point: optimality is still proved by the flow.

The sweeps run on the residual graph of :mod:`projections._mincostflow` as built by
:func:`projections._exact.solve` (node ``g < g1`` is view-1 group ``g``, ``g1 + h`` view-2
group ``h``, then the source and the sink; the input arcs numbered ``n_fixed`` and up are the
elements, with cost ``-c[e]``), over the element arcs in it, in integer cost units.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Above this many values, :func:`_threshold` selects through a bucket count (a row's
#: ~1,800 candidates at 1000 x 10000 already gain from it; a column's ~180 do not).
LARGE = 1024


@njit(cache=True)
def _kth_largest(buf, n, k):
    """The ``k``-th largest (``1 <= k <= n``) of ``buf[:n]``, which is partly reordered.

    Afterwards ``buf[:k - 1]`` holds values at least as large. Quickselect with a
    median-of-three pivot and branch-free partitions (a Lomuto pass that always swaps): the
    values are in no order, so a branch on each comparison would be mispredicted half the
    time. Each round puts the values above the pivot first, then, if the rank lies beyond
    them, those equal to it.
    """
    lo = 0
    hi = n
    target = k - 1
    while hi - lo > 2:
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
def _two_largest_ranks(buf, n, k):
    """The ``k``-th and ``k + 1``-th largest of ``buf[:n]`` (``1 <= k < n``), reordering it.

    For large ``n``: one pass finds the range, one counts the values in 4096 buckets, and the
    quickselect runs only on the (one or two) buckets holding those ranks, compacted to the
    front of ``buf``. The same values as :func:`_kth_largest`, in two or three linear passes.
    """
    lo = buf[0]
    hi = buf[0]
    for t in range(1, n):
        x = buf[t]
        if x < lo:
            lo = x
        elif x > hi:
            hi = x
    shift = 0
    while ((hi - lo) >> shift) >= 4096:
        shift += 1
    counts = np.zeros(4096, dtype=np.int64)
    for t in range(n):
        counts[(buf[t] - lo) >> shift] += 1
    # Buckets from the top: rank k falls in bucket top_k, rank k + 1 in top_k1.
    above = 0  # values in buckets above the current one
    top_k = -1
    top_k1 = -1
    above_k = 0
    for bucket in range(4095, -1, -1):
        c = counts[bucket]
        if top_k < 0 and above + c >= k:
            top_k = bucket
            above_k = above
        if above + c >= k + 1:
            top_k1 = bucket
            break
        above += c
    # Compact the values of buckets top_k1 .. top_k (adjacent or equal) to the front.
    m = 0
    for t in range(n):
        x = buf[t]
        bucket = (x - lo) >> shift
        if bucket >= top_k1 and bucket <= top_k:
            buf[t] = buf[m]
            buf[m] = x
            m += 1
    # In the compacted part, the ranks shift by the count above bucket top_k.
    if top_k == top_k1:
        kth = _kth_largest(buf, m, k - above_k)
        below = _kth_largest(buf, m, k + 1 - above_k)
    else:  # rank k is the smallest of bucket top_k, rank k + 1 the largest of top_k1
        kth = hi
        below = lo
        first = True
        for t in range(m):
            x = buf[t]
            if (x - lo) >> shift == top_k:
                if first or x < kth:
                    kth = x
                    first = False
            elif x > below:
                below = x
    return kth, below


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
    if k > 0 and n > LARGE:
        above, below = _two_largest_ranks(buf, n, k)
        mid = below + (above - below) // 2
        return mid if mid > 0 else 0
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
