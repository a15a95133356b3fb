"""Numba kernel of the exact accuracy's enumeration (see :mod:`assignment.engine.accuracy`):
the probability that a task's vote sum clears each of its two thresholds, from all ``2^k``
correctness patterns of its ``k`` workers.

It does what the numpy version did with ``(g, 2^k)`` arrays, one task at a time and without
them: the patterns in :func:`~assignment.engine.accuracy._enumerate`'s order, by the same
operations, and each masked row summed as numpy's ``sum`` sums a contiguous row (its pairwise
summation, :func:`pairwise_sum`), so every accuracy is the same number to the bit. The final
pass of tvcs-iht scores every leave-one-out subset of every task this way
(:func:`~assignment.engine.accuracy._removal_losses`), where the numpy version spent most of its
time allocating and masking small arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: numpy's pairwise summation: blocks of at most this many values are summed in 8 lanes.
_PAIRWISE_BLOCK = 128


@njit(cache=True)
def pairwise_sum(a, n):
    """``a[0] + ... + a[n - 1]`` (float64, contiguous) in the order numpy's ``sum`` adds a
    contiguous row: sequentially below 8 values, in 8 interleaved partial sums up to
    ``_PAIRWISE_BLOCK`` values, else the two halves (the first a multiple of 8) recursively."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= _PAIRWISE_BLOCK:
        r = a[:8].copy()
        i = 8
        while i < n - n % 8:
            for lane in range(8):
                r[lane] += a[i + lane]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return pairwise_sum(a, half) + pairwise_sum(a[half:], n - half)


@njit(cache=True)
def tail_masses(w, q, t_ge, t_gt):
    """``P(S >= t_ge)`` and ``P(S > t_gt)`` of each task's vote sum ``S``.

    Parameters
    ----------
    w, q : ndarray, shape (g, k)
        Log-odds and clipped qualities of the ``k`` workers of ``g`` tasks.
    t_ge, t_gt : ndarray, shape (g,)
        Each task's two thresholds.

    Returns
    -------
    p_ge, p_gt : ndarray, shape (g,)
        ``sum_c p(c) [S(c) >= t_ge]`` and ``sum_c p(c) [S(c) > t_gt]`` over the ``2^k``
        patterns ``c``, equal to the bit to numpy's ``np.where(sums >= t_ge[:, None], probs,
        0.0).sum(axis=1)`` (and ``>``) of :func:`~assignment.engine.accuracy._enumerate`'s
        ``sums, probs``.
    """
    g, k = w.shape
    size = 1 << k
    sums = np.empty(size)
    probs = np.empty(size)
    masked = np.empty(size)
    p_ge = np.empty(g)
    p_gt = np.empty(g)
    for row in range(g):
        sums[0] = 0.0
        probs[0] = 1.0
        half = 1
        for i in range(k):  # as _enumerate: worker i right in the first half, wrong after it
            wi, qi = w[row, i], q[row, i]
            wrong = 1.0 - qi
            for x in range(half):
                sums[half + x] = sums[x] - wi
                sums[x] += wi
                probs[half + x] = probs[x] * wrong
                probs[x] *= qi
            half *= 2
        for x in range(size):
            masked[x] = probs[x] if sums[x] >= t_ge[row] else 0.0
        p_ge[row] = pairwise_sum(masked, size)
        for x in range(size):
            masked[x] = probs[x] if sums[x] > t_gt[row] else 0.0
        p_gt[row] = pairwise_sum(masked, size)
    return p_ge, p_gt
