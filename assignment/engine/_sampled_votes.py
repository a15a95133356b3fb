"""Numba kernels of tvcs-iht's step: sampled answers, the surrogate's gradient and the next
projection input, in one pass over the pairs searched (every one of the ``n x m``, or a
candidate set: :mod:`assignment.engine.search_pairs`; see :mod:`assignment.engine.surrogate`).

Answers come from a counter-based generator: the ``d``-th draw of pair ``e = i * m + j``
(``d = label * b + sample``, ``b`` samples per label) is 16 bits of
``splitmix64(seed + (e * words + d // 4 + 1) * golden)``, where ``words = ceil(2 b / 4)``, and
the answer is correct when those bits are below ``threshold_ij = round(Q_ij * 2^16)`` (so a
correct answer has probability ``Q_ij`` to within ``2^-17``). Any pair's draws can thus be made
again from the seed alone: the sums over the assigned pairs and the gradient at every pair see
the same answers without storing ``2 b n m`` of them. ``splitmix64`` is Steele, Lea & Flood's
finaliser (OOPSLA 2014), a good counter-based generator.

The draws of pair ``(i, j)`` give ``sigma1_k, sigma0_k`` in ``{+1, -1}`` (correct or not, given
label 1 and label 0, sample ``k``): ``Z1 = sigma1 L`` and ``Z0 = -sigma0 L``, so that with the
per-task slopes ``d1_kj = pi_j S'(s1_kj - r_j)`` and ``d0_kj = (1 - pi_j) S'(r_j - s0_kj)``
the gradient is ``L_ij / b * sum_k (d1_kj sigma1_k + d0_kj sigma0_k)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_LOW16 = np.uint64(0xFFFF)

#: Answer probabilities are represented in units of 2^-16.
RESOLUTION = 1 << 16


def thresholds(quality: np.ndarray) -> np.ndarray:
    """``round(Q * 2^16)`` as uint32, shape of ``quality``: the answer is correct below it."""
    return np.rint(np.asarray(quality) * RESOLUTION).astype(np.uint32)


@njit(cache=True, inline="always")
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def _signs(seed, entry, b, threshold, out):
    """``out[d] = +1`` if draw ``d`` of pair ``entry`` is a correct answer, else -1."""
    words = (2 * b + 3) // 4
    base = np.uint64(entry) * np.uint64(words)
    word = np.uint64(0)
    for d in range(2 * b):
        lane = d & 3
        if lane == 0:
            word = _mix(np.uint64(seed) + (base + np.uint64(d // 4 + 1)) * _GOLDEN)
        bits = (word >> np.uint64(16 * lane)) & _LOW16
        out[d] = 2.0 * np.float64(bits < np.uint64(threshold)) - 1.0


@njit(cache=True, inline="always")
def _entry(entries, p):
    """Pair ``p``'s flat index ``i * m + j``: ``entries[p]``, or ``p`` when every pair is in."""
    return p if entries.shape[0] == 0 else entries[p]


@njit(cache=True)
def draws(seed, threshold, entries, b):
    """The signs of every pair searched: shape ``(2, b, p)`` (label 1, label 0). For tests."""
    p = threshold.shape[0]
    out = np.empty((2, b, p))
    sig = np.empty(2 * b)
    for x in range(p):
        _signs(seed, _entry(entries, x), b, threshold[x], sig)
        for k in range(b):
            out[0, k, x] = sig[k]
            out[1, k, x] = sig[b + k]
    return out


@njit(cache=True)
def support_sums(seed, x, entries, m, log_odds, threshold, b):
    """``s1, s0`` of shape ``(b, m)``: the sampled vote sums ``sum_i Z X_ij`` of every task.

    ``x``, ``log_odds``, ``threshold``: one value per pair searched, shape ``(p,)``; pair ``p``
    is ``(i, j)`` with ``i * m + j = entries[p]`` (``entries`` of shape ``(0,)``: every pair,
    in row-major order).
    """
    s1 = np.zeros((b, m))
    s0 = np.zeros((b, m))
    sig = np.empty(2 * b)
    for p in range(x.shape[0]):
        xv = x[p]
        if xv == 0.0:
            continue
        e = _entry(entries, p)
        _signs(seed, e, b, threshold[p], sig)
        j = e % m
        lx = log_odds[p] * xv
        for k in range(b):
            s1[k, j] += sig[k] * lx
            s0[k, j] -= sig[b + k] * lx
    return s1, s0


@njit(cache=True)
def gradient_step(seed, x, entries, m, log_odds, threshold, slopes, step, eligible):
    """The step ``y = x + step * gradient`` and the projection input ``sqrt(gain(y))``.

    Pairs as in :func:`support_sums`. ``slopes``: shape ``(m, 2 b)``, ``d1_kj`` then ``d0_kj``
    of each task. ``eligible``: a bool ``(p,)`` mask, or shape ``(0,)`` when every pair is
    eligible; ineligible pairs get input 0. ``gain(y)`` is ``y^2`` on ``(0, 1]``, ``2 y - 1``
    above 1 and 0 below 0 (see :mod:`assignment.engine.tvcs_iht`).
    """
    p_count = x.shape[0]
    b = slopes.shape[1] // 2
    masked = eligible.shape[0] > 0
    y = np.empty(p_count)
    v = np.empty(p_count)
    sig = np.empty(2 * b)
    for p in range(p_count):
        e = _entry(entries, p)
        _signs(seed, e, b, threshold[p], sig)
        j = e % m
        acc = 0.0
        for d in range(2 * b):
            acc += slopes[j, d] * sig[d]
        yv = x[p] + step * log_odds[p] * acc / b
        y[p] = yv
        v[p] = projection_input(yv, masked and not eligible[p])
    return y, v


@njit(cache=True, inline="always")
def projection_input(y, ineligible):
    """A pair's projection input ``sqrt(gain(y))`` after the step to ``y``: ``y`` on
    ``(0, 1]``, ``sqrt(2 y - 1)`` above 1, 0 below 0 and for an ineligible pair."""
    if ineligible:
        return 0.0
    if y > 1.0:
        return np.sqrt(2.0 * y - 1.0)
    if y > 0.0:
        return y
    return 0.0


@njit(cache=True)
def clip_to_support(y, support):
    """``where(support, clip(y, 0, 1), 0)`` of flat arrays."""
    x = np.zeros(y.shape[0])
    for p in range(y.shape[0]):
        if support[p]:
            x[p] = min(1.0, max(0.0, y[p]))
    return x
