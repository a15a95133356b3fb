"""Numba kernels of the K-class surrogate's step (:mod:`assignment.engine.surrogate_multiclass`):
sampled answers, the per-task vote sums, the gradient and the next projection input, in one
pass over the pairs searched, as :mod:`assignment.engine._sampled_votes` does for two labels.

Draws. Pair ``e = i * m + j`` has ``K b`` draws, ``d = (K - 1 - y) b + k`` for true label ``y``
and sample ``k`` (so that for ``K = 2`` draw ``d`` is the binary kernel's: label 1 first). The
answer is correct when 16 bits of the same counter-based words as the binary kernel
(``words = ceil(K b / 4)`` per pair) are below ``round(Q * 2^16)``: for ``K = 2`` these are the
binary kernel's bits, word for word, and the wrong answer is the other label. For ``K > 2`` a
wrong answer's label is uniform over the ``K - 1`` others, from an independent word
``splitmix64((seed ^ SALT) + (e K b + d + 1) * golden)`` (its high 32 bits times ``K - 1``,
shifted down 32: uniform to within ``2^-32``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from assignment.engine._sampled_votes import _GOLDEN, _LOW16, _entry, _mix, projection_input

_SALT = np.uint64(0x5851F42D4C957F2D)
_S32 = np.uint64(32)


@njit(cache=True, inline="always")
def _answers(seed, entry, n_labels, b, threshold, out):
    """``out[d]``: the label answered in draw ``d`` of pair ``entry`` (see the module)."""
    n_draws = n_labels * b
    words = (n_draws + 3) // 4
    base = np.uint64(entry) * np.uint64(words)
    word = np.uint64(0)
    for d in range(n_draws):
        lane = d & 3
        if lane == 0:
            word = _mix(np.uint64(seed) + (base + np.uint64(d // 4 + 1)) * _GOLDEN)
        bits = (word >> np.uint64(16 * lane)) & _LOW16
        y = n_labels - 1 - d // b
        if bits < np.uint64(threshold):
            out[d] = y
        elif n_labels == 2:
            out[d] = 1 - y
        else:
            counter = np.uint64(entry) * np.uint64(n_draws) + np.uint64(d + 1)
            extra = _mix((np.uint64(seed) ^ _SALT) + counter * _GOLDEN)
            u = np.int64(((extra >> _S32) * np.uint64(n_labels - 1)) >> _S32)
            out[d] = u + 1 if u >= y else u


@njit(cache=True)
def draws(seed, threshold, entries, n_labels, b):
    """The answers of every pair searched: int shape ``(K b, p)``, rows in draw order. For
    tests and the reference formula."""
    p = threshold.shape[0]
    out = np.empty((n_labels * b, p), np.int64)
    ans = np.empty(n_labels * b, np.int64)
    for x in range(p):
        _answers(seed, _entry(entries, x), n_labels, b, threshold[x], ans)
        for d in range(n_labels * b):
            out[d, x] = ans[d]
    return out


@njit(cache=True)
def vote_sums(seed, x, entries, m, weight, threshold, n_labels, b):
    """``V`` of shape ``(m, K b, K)``: ``V[j, d, l] = sum_i X_ij w_ij [a_ij^(d) = l]``.

    ``x``, ``weight``, ``threshold``: one value per pair searched (``entries`` as in
    :func:`assignment.engine._sampled_votes.support_sums`).
    """
    n_draws = n_labels * b
    v = np.zeros((m, n_draws, n_labels))
    ans = np.empty(n_draws, np.int64)
    for p in range(x.shape[0]):
        xv = x[p]
        if xv == 0.0:
            continue
        e = _entry(entries, p)
        _answers(seed, e, n_labels, b, threshold[p], ans)
        j = e % m
        lx = weight[p] * xv
        for d in range(n_draws):
            v[j, d, ans[d]] += lx
    return v


@njit(cache=True)
def gradient_step(seed, x, entries, m, weight, threshold, slopes, step, eligible):
    """The step ``y = x + step * gradient`` and the projection input ``sqrt(gain(y))``.

    ``slopes``: shape ``(m, K b, K)``, ``c[j, d, l]`` such that the gradient at pair ``(i, j)``
    is ``w_ij / b * sum_d c[j, d, a_ij^(d)]``. ``eligible`` and ``gain`` as in
    :func:`assignment.engine._sampled_votes.gradient_step`.
    """
    p_count = x.shape[0]
    n_draws, n_labels = slopes.shape[1], slopes.shape[2]
    b = n_draws // n_labels
    masked = eligible.shape[0] > 0
    y = np.empty(p_count)
    v = np.empty(p_count)
    ans = np.empty(n_draws, np.int64)
    for p in range(p_count):
        e = _entry(entries, p)
        _answers(seed, e, n_labels, b, threshold[p], ans)
        j = e % m
        acc = 0.0
        for d in range(n_draws):
            acc += slopes[j, d, ans[d]]
        yv = x[p] + step * weight[p] * acc / b
        y[p] = yv
        v[p] = projection_input(yv, masked and not eligible[p])
    return y, v
