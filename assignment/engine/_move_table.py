"""Numba kernels of the greedy's move tables (see :mod:`assignment.engine.greedy`).

A task whose atoms are too many to cache (17 to 20 workers) would be rebuilt from its workers,
an enumeration of ``2^k`` patterns, at every evaluation, although nothing the kernel
:func:`~assignment.engine._move_scores.task_best_move` computes for it changes while its
workers do not: each candidate's single gain ``g1`` and each pair's gain ``g2`` depend only on
the atoms and the two workers. Which workers are open (and ``budget_left``, ``room``) decides
only which of those numbers the kernel compares. So the greedy builds the task's atoms once per
change of its workers and keeps a *move table* (:func:`build_table`):

* ``g1[i]`` for every eligible worker ``i`` not on the task, open or not (shape (n,));
* ``slot[i]``: -2 for a worker that is never a candidate (on the task, or not eligible), -1
  for a candidate outside the pool, else its position in ``pool``;
* ``pool``: the top ``top_k`` open candidates by ``g1`` and the top ``top_k`` by ``|w|`` when
  the table is built, ascending, and ``g2[x, y]`` (``x < y``) for every pair of them.

:func:`pick_move` then finds the kernel's move from the table by the kernel's own rules and
helpers (:func:`~assignment.engine._move_scores.first_best`,
:func:`~assignment.engine._move_scores.pair_positions`), the same numbers in the same order,
so the same move bit for bit; if a pair the kernel would score lies outside the pool it says so
and the greedy builds the atoms and the table again.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from assignment.engine._move_scores import (
    _pair,
    _single,
    first_best,
    pair_positions,
    top_positions,
)

#: :func:`pick_move`'s status: the move is found, ...
FOUND = 0
#: ... the task has no candidate (no room, or no open eligible worker), ...
NO_CANDIDATE = -1
#: ... or a pair the kernel would score is outside the table's pool (build it again).
MISS = 1


@njit(cache=True)
def _single_gains(s, tail, prior, r, abs_sum, acc, w_row, q_row, members, eligible_row, tie_rtol):
    """``(g1, slot)`` of :func:`build_table`, ``slot`` -1 or -2 (no pool yet): the operations of
    :func:`~assignment.engine._move_scores._scan_singles` for every worker."""
    n = w_row.shape[0]
    g1 = np.zeros(n)
    slot = np.full(n, -1, dtype=np.int32)
    for x in range(members.shape[0]):
        slot[members[x]] = -2
    masked = eligible_row.shape[0] > 0
    base = 1.0 + abs(r) + abs_sum
    for i in range(n):
        if masked and not eligible_row[i]:
            slot[i] = -2
        if slot[i] == -1:
            w = w_row[i]
            tol = tie_rtol * (base + abs(w))
            g1[i] = _single(s, tail, prior, r, tol, w, q_row[i]) - acc
    return g1, slot


@njit(cache=True)
def _pool(g1, slot, w_row, open_worker, top_k):
    """The open candidates among the ``top_k`` best by ``g1`` and the ``top_k`` most reliable,
    ascending; marks their positions in ``slot``."""
    cand = np.flatnonzero(open_worker & (slot == -1))
    chosen = np.zeros(cand.shape[0], dtype=np.bool_)
    top_positions(g1[cand], top_k, chosen)
    top_positions(np.abs(w_row[cand]), top_k, chosen)
    pool = cand[chosen]
    for x in range(pool.shape[0]):
        slot[pool[x]] = x
    return pool


@njit(cache=True)
def build_table(
    s,
    tail,
    prior,
    r,
    abs_sum,
    acc,
    w_row,
    q_row,
    open_worker,
    members,
    eligible_row,
    tie_rtol,
    top_k,
):
    """The move table ``(g1, slot, g2)`` of a task with atoms ``(s, tail)`` (module docstring).

    ``g2[x, y]`` for ``x < y`` is the gain of adding ``pool[x]`` and ``pool[y]``, the operations
    of :func:`~assignment.engine._move_scores.pair_accuracies` minus ``acc`` (the lower worker
    first, as the kernel lists its pairs); ``g2[y, x]`` is not set.
    """
    g1, slot = _single_gains(
        s, tail, prior, r, abs_sum, acc, w_row, q_row, members, eligible_row, tie_rtol
    )
    pool = _pool(g1, slot, w_row, open_worker, top_k)
    size = pool.shape[0]
    g2 = np.zeros((size, size))
    base = 1.0 + abs(r) + abs_sum
    for x in range(size):
        wa, qa = w_row[pool[x]], q_row[pool[x]]
        for y in range(x + 1, size):
            wb, qb = w_row[pool[y]], q_row[pool[y]]
            tol = tie_rtol * (base + abs(wa) + abs(wb))
            g2[x, y] = _pair(s, tail, prior, r, tol, wa, qa, wb, qb) - acc
    return g1, slot, g2


@njit(cache=True)
def _candidates(g1_all, slot, w_row, open_worker, cand, g1, reliability):
    """The kernel's candidates (open, eligible, not on the task; ascending), their gains and
    ``|w|`` written into ``cand``, ``g1``, ``reliability``; returns how many."""
    size = 0
    for i in range(open_worker.shape[0]):
        if open_worker[i] and slot[i] >= -1:
            cand[size] = i
            g1[size] = g1_all[i]
            reliability[size] = abs(w_row[i])
            size += 1
    return size


@njit(cache=True)
def pick_move(
    g1_all,
    slot,
    g2_table,
    w_row,
    open_worker,
    room,
    budget_left,
    acc,
    gain_tol,
    exhaustive_max,
    top_gain,
    top_reliable,
    scratch,
):
    """:func:`~assignment.engine._move_scores.task_best_move` of a task from its move table.

    Returns ``(worth, first, second, gain, status)``: the kernel's result when ``status`` is
    :data:`FOUND` or :data:`NO_CANDIDATE`; :data:`MISS` when a pair it would score is outside
    the table's pool. ``scratch``: float64 of shape (3, n).
    """
    if room < 1 or budget_left < 1:
        return -1.0, -1, -1, 0.0, NO_CANDIDATE
    cand = scratch[0].view(np.int64)
    g1, reliability = scratch[1], scratch[2]
    size = _candidates(g1_all, slot, w_row, open_worker, cand, g1, reliability)
    if size == 0:
        return -1.0, -1, -1, 0.0, NO_CANDIDATE
    best = first_best(g1[:size], gain_tol)
    worth = g1[best]
    gain = worth
    a, b = best, -1
    if room >= 2 and budget_left >= 2 and size >= 2 and worth + gain_tol < 0.5 * (1.0 - acc):
        pa, pb = pair_positions(g1, reliability, size, exhaustive_max, top_gain, top_reliable)
        g2 = np.empty(pa.shape[0])
        for e in range(pa.shape[0]):
            x, y = slot[cand[pa[e]]], slot[cand[pb[e]]]
            if x < 0 or y < 0:
                return -1.0, -1, -1, 0.0, MISS
            g2[e] = g2_table[x, y]
        e = first_best(g2, gain_tol)
        if 0.5 * g2[e] > worth + gain_tol:
            worth, gain, a, b = 0.5 * g2[e], g2[e], pa[e], pb[e]
    return worth, cand[a], (cand[b] if b >= 0 else -1), gain, FOUND
