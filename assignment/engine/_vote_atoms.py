"""Numba kernels of a task's vote-sum distribution for the greedy (see
:mod:`assignment.engine.greedy`): adding workers to a task's atoms.

A task's atoms are its sorted distinct vote sums ``s`` with probabilities ``p`` (stored as the
tail ``T[x] = P(S >= s[x])``, ``T[len(s)] = 0``). Adding a worker of log-odds ``w`` and
quality ``q`` maps them to ``s + w`` with probability ``p q`` and ``s - w`` with ``p (1 - q)``:
two sorted runs, merged in linear time (ties: the ``s + w`` run first, as a stable sort of the
two runs concatenated), after which atoms closer than ``merge_rtol * (1 + sum |w|)`` to the
previous one are merged into the first of their run. The same operations in the same order
as the numpy version they replace, so the greedy's choices do not change.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from assignment.engine._move_scores import _first_above, _first_at_least


@njit(cache=True)
def extend(s, p, w, q, abs_sum, merge_rtol):
    """Atoms ``(s, p)`` after adding a worker ``(w, q)``; ``abs_sum`` includes ``|w|``."""
    k = s.shape[0]
    s2 = np.empty(2 * k)
    p2 = np.empty(2 * k)
    a = b = 0
    for x in range(2 * k):
        if b >= k or (a < k and s[a] + w <= s[b] - w):
            s2[x] = s[a] + w
            p2[x] = p[a] * q
            a += 1
        else:
            s2[x] = s[b] - w
            p2[x] = p[b] * (1.0 - q)
            b += 1
    tol = merge_rtol * (1.0 + abs_sum)
    size = 0
    for x in range(2 * k):
        if x > 0 and s2[x] - s2[x - 1] <= tol:
            p2[size - 1] += p2[x]
        else:
            s2[size] = s2[x]
            p2[size] = p2[x]
            size += 1
    return s2[:size].copy(), p2[:size].copy()


@njit(cache=True)
def tail(p):
    """``T`` with ``T[x] = sum(p[x:])`` and ``T[len(p)] = 0``."""
    t = np.zeros(p.shape[0] + 1)
    acc = 0.0
    for x in range(p.shape[0] - 1, -1, -1):
        acc += p[x]
        t[x] = acc
    return t


@njit(cache=True)
def add_workers(s, t, w, q, abs_sum, merge_rtol, prior, r, tie_rtol):
    """A task's atoms ``(s, t)`` after adding workers ``(w[k], q[k])`` in order.

    Returns ``(s, t, abs_sum, accuracy)``: the new atoms and tail, ``sum |w|`` of all the
    task's workers, and the task's expected accuracy (the Bayes vote's, with the tie tolerance
    ``tie_rtol * (1 + |r| + sum |w|)``).
    """
    p = t[:-1] - t[1:]
    for k in range(w.shape[0]):
        abs_sum += abs(w[k])
        s, p = extend(s, p, w[k], q[k], abs_sum, merge_rtol)
    t = tail(p)
    tol = tie_rtol * (1.0 + abs(r) + abs_sum)
    p1 = t[_first_at_least(s, r - tol)]
    p0 = t[_first_above(s, tol - r)]
    return s, t, abs_sum, prior * p1 + (1.0 - prior) * p0


@njit(cache=True)
def extend_all(s, p, w, q, abs_sum, merge_rtol):
    """Atoms ``(s, p)`` (probabilities, not tail) after adding workers ``(w[k], q[k])`` in order,
    as :func:`add_workers` adds them: ``(s, p, abs_sum)``, ``abs_sum`` with their ``|w|``."""
    for k in range(w.shape[0]):
        abs_sum += abs(w[k])
        s, p = extend(s, p, w[k], q[k], abs_sum, merge_rtol)
    return s, p, abs_sum


@njit(cache=True)
def _extend_both(s, p, p_other, w, q, abs_sum, merge_rtol):
    """:func:`extend` of ``(s, p)`` and of ``(s, p_other)`` at once: the sums and the merges
    depend on ``s`` only, so both are the ones :func:`extend` gives, bit for bit."""
    k = s.shape[0]
    s2 = np.empty(2 * k)
    p2 = np.empty(2 * k)
    o2 = np.empty(2 * k)
    a = b = 0
    for x in range(2 * k):
        if b >= k or (a < k and s[a] + w <= s[b] - w):
            s2[x] = s[a] + w
            p2[x] = p[a] * q
            o2[x] = p_other[a] * q
            a += 1
        else:
            s2[x] = s[b] - w
            p2[x] = p[b] * (1.0 - q)
            o2[x] = p_other[b] * (1.0 - q)
            b += 1
    tol = merge_rtol * (1.0 + abs_sum)
    size = 0
    for x in range(2 * k):
        if x > 0 and s2[x] - s2[x - 1] <= tol:
            p2[size - 1] += p2[x]
            o2[size - 1] += o2[x]
        else:
            s2[size] = s2[x]
            p2[size] = p2[x]
            o2[size] = o2[x]
            size += 1
    return s2[:size].copy(), p2[:size].copy(), o2[:size].copy()


@njit(cache=True)
def add_workers_carried(s, t, p_fresh, w, q, abs_sum, merge_rtol, prior, r, tie_rtol):
    """:func:`add_workers` of ``(s, t)``, and the same workers added to ``(s, p_fresh)``.

    ``(s, p_fresh)`` are a task's atoms as built from its workers in one :func:`add_workers`
    call, with probabilities ``p_fresh`` (``t`` is their tail). Returns ``(s, t, abs_sum,
    accuracy, p_fresh)``: :func:`add_workers`'s result, and the probabilities of the atoms the
    task's workers and ``w`` would give in one call, as :func:`extend_all` gives them.
    """
    p = t[:-1] - t[1:]
    for k in range(w.shape[0]):
        abs_sum += abs(w[k])
        s, p, p_fresh = _extend_both(s, p, p_fresh, w[k], q[k], abs_sum, merge_rtol)
    t = tail(p)
    tol = tie_rtol * (1.0 + abs(r) + abs_sum)
    p1 = t[_first_at_least(s, r - tol)]
    p0 = t[_first_above(s, tol - r)]
    return s, t, abs_sum, prior * p1 + (1.0 - prior) * p0, p_fresh


@njit(cache=True)
def _extend_into(s, p, k, w, q, tol, s2, p2):
    """:func:`extend` of the atoms ``(s[:k], p[:k])`` into ``s2``, ``p2`` (room ``2 k``), the
    merge done in the same pass (against the previous unmerged sum, as :func:`extend`'s second
    pass): the same operations in the same order. Returns the new number of atoms."""
    a = b = 0
    size = 0
    last = 0.0
    for x in range(2 * k):
        if b >= k or (a < k and s[a] + w <= s[b] - w):
            value, mass = s[a] + w, p[a] * q
            a += 1
        else:
            value, mass = s[b] - w, p[b] * (1.0 - q)
            b += 1
        if x > 0 and value - last <= tol:
            p2[size - 1] += mass
        else:
            s2[size] = value
            p2[size] = mass
            size += 1
        last = value
    return size


@njit(cache=True)
def build_atoms(w, q, merge_rtol):
    """The atoms of workers ``(w[k], q[k])`` from none: ``(s, p, abs_sum)`` of
    :func:`extend_all` from ``([0], [1], 0)``, bit for bit, in two buffers reused from worker
    to worker instead of new arrays at each."""
    room = 1 << w.shape[0]
    s, p = np.zeros(room), np.zeros(room)
    s2, p2 = np.empty(room), np.empty(room)
    p[0] = 1.0
    k = 1
    abs_sum = 0.0
    for x in range(w.shape[0]):
        abs_sum += abs(w[x])
        k = _extend_into(s, p, k, w[x], q[x], merge_rtol * (1.0 + abs_sum), s2, p2)
        s, p, s2, p2 = s2, p2, s, p
    return s[:k].copy(), p[:k].copy(), abs_sum
