"""Numba kernels of the K-class greedy's moves (see :mod:`assignment.engine._greedy_multiclass`).

A task's best move is found in one call, without numpy calls per candidate: every candidate set
(the task's workers plus one candidate, or plus two) is grouped by equal quality and ordered by
decreasing influence exactly as :func:`assignment.engine.multiclass._groups_accuracy` groups and
orders a unit, its tie tolerance and remaining influence are summed in the same order, and its
accuracy is the same pruned depth-first sum
(:func:`assignment.engine._multiclass_kernels._unit_accuracy`): the same floating-point
operations in the same order, so the same accuracy bit for bit.

Most candidate sets are not scored at all. Candidates are scored in decreasing reliability
(effective quality), and an ordinary candidate's (``Q >= 1 / K``) gain bounds the gain of every
less reliable one, since adding a garbling of a worker never helps the Bayes vote more than
adding the worker (:mod:`assignment.engine.upper_bound`); likewise for pairs, componentwise. A
set is skipped only when that bound, plus a slack for the tie rule and rounding (see
:func:`_singles`), is below what the greedy's rules need (the best gain minus ``GAIN_TOL``, or
the pair pool's ``PAIR_TOP_GAIN``-th gain), so the moves are those of scoring every set. At 200
workers, a task's best single is typically found after scoring a handful of its 200 candidates.

Arrays ``q`` (clipped qualities), ``w`` and ``log_wrong`` (of
:func:`assignment.engine.multiclass._weights`) have one row per column of the problem's quality
table (shape (C, n)) and ``row[j]`` is task ``j``'s row, as in
:class:`~assignment.engine.greedy.GreedyState`: 24 bytes per (row, worker), and no
(n_workers, n_tasks) array unless the table is one. ``scratch`` is :func:`new_scratch`'s.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from assignment.engine._multiclass_kernels import _unit_accuracy


def new_scratch(n_workers: int, max_set: int, n_labels: int, max_pool: int) -> tuple:
    """Work arrays of the kernels for ``n_workers`` workers, sets of at most ``max_set`` and
    pairs among at most ``max_pool`` candidates.

    Returns ``(per_set, per_set_int, scores, members, per_candidate, candidates, pair_gains,
    mark)``: floats of shape (9, max_set + 1), ints of shape (3, max_set + 1), the depth-first
    scores (max_set + 1, K), a set's qualities, weights and log wrongs (3, max_set + 1), each
    candidate's single gain and accuracy (2, n_workers), the candidates (n_workers,), pairs'
    gains and accuracies (2, max_pool (max_pool - 1) / 2), and who is on the task
    (n_workers,) of bool.
    """
    return (
        np.empty((9, max_set + 1)),
        np.empty((3, max_set + 1), dtype=np.int64),
        np.empty((max_set + 1, n_labels)),
        np.empty((3, max_set + 1)),
        np.empty((2, n_workers)),
        np.empty(n_workers, dtype=np.int64),
        np.empty((2, max(1, max_pool * (max_pool - 1) // 2))),
        np.zeros(n_workers, dtype=np.bool_),
    )


@njit(cache=True)
def _set_accuracy(count, q, w, lw, log_prior, ptp, tie_rtol, comp_tables, floats, ints, scores):
    """Exact accuracy of the set of ``count`` workers whose clipped qualities, weights and
    ``log((1 - Q) / (K - 1))`` are ``q[:count]``, ``w[:count]``, ``lw[:count]``: grouped,
    ordered and summed as ``_groups_accuracy`` does one unit (module docstring)."""
    comp, comp_log_mult, comp_start, comp_len = comp_tables
    order, size, perm = ints[0], ints[1], ints[2]
    gq, gw, glw, influence = floats[0], floats[1], floats[2], floats[3]
    weight, log_wrong, ordered_influence, remaining = floats[4], floats[5], floats[6], floats[7]
    for a in range(count):  # members by ascending quality (insertion sort: a few workers)
        b = a
        while b > 0 and q[order[b - 1]] > q[a]:
            order[b] = order[b - 1]
            b -= 1
        order[b] = a
    n_groups = 0
    for t in range(count):  # equal qualities form a group
        a = order[t]
        if n_groups > 0 and gq[n_groups - 1] == q[a]:
            size[n_groups - 1] += 1
        else:
            gq[n_groups], gw[n_groups], glw[n_groups] = q[a], w[a], lw[a]
            size[n_groups] = 1
            n_groups += 1
    for g in range(n_groups):  # then by decreasing influence, stable (np.lexsort's order)
        influence[g] = float(size[g]) * abs(gw[g])
        b = g
        while b > 0 and influence[perm[b - 1]] < influence[g]:
            perm[b] = perm[b - 1]
            b -= 1
        perm[b] = g
    total_influence = 0.0
    for d in range(n_groups):
        g = perm[d]
        weight[d], log_wrong[d], ordered_influence[d] = gw[g], glw[g], influence[g]
        order[d] = size[g]  # order is free again: the sizes in influence order
        total_influence += influence[g]
    acc = 0.0
    for d in range(n_groups - 1, -1, -1):
        acc += ordered_influence[d]
        remaining[d] = acc
    tol = tie_rtol * (1.0 + ptp + total_influence)
    log_weight = floats[8]
    return _unit_accuracy(
        n_groups, weight, log_wrong, order, remaining, log_prior, tol,
        comp, comp_log_mult, comp_start, comp_len, scores, log_weight, ints[1],
    )  # fmt: skip


@njit(cache=True)
def _score_set(k, extra, log_prior, ptp, tie_rtol, comp_tables, scratch):
    """Accuracy of the set in ``scratch``'s member rows: the task's ``k`` workers (rows filled
    by the caller) plus ``extra`` more at positions ``k``, ``k + 1``."""
    per_set, per_set_int, scores, members = scratch[0], scratch[1], scratch[2], scratch[3]
    return _set_accuracy(
        k + extra, members[0], members[1], members[2], log_prior, ptp, tie_rtol, comp_tables,
        per_set, per_set_int, scores,
    )  # fmt: skip


@njit(cache=True)
def _put(members, at, i, q, w, lw):
    """Worker ``i``'s quality, weight and log wrong (of the task's row) at position ``at``."""
    members[0, at], members[1, at], members[2, at] = q[i], w[i], lw[i]


@njit(cache=True)
def _reliability(q, n_labels):
    """The effective quality ``max(Q, 1 - (K - 1) Q)`` of
    :func:`assignment.engine.upper_bound.effective_quality`, by the same operations."""
    return max(q, 1.0 - (n_labels - 1) * q)


@njit(cache=True)
def _first_best(gains, count, gain_tol):
    """The lowest position of ``gains[:count]`` within ``gain_tol`` of the largest."""
    top = gains[0]
    for x in range(1, count):
        top = max(top, gains[x])
    for x in range(count):
        if gains[x] >= top - gain_tol:
            return x
    return 0


@njit(cache=True)
def _top(values, count, how_many, chosen):
    """Mark in ``chosen`` the ``how_many`` largest of ``values[:count]``, ties to the lowest
    position (the first ``how_many`` of a stable argsort of ``-values``)."""
    taken = np.zeros(count, dtype=np.bool_)
    for _ in range(min(how_many, count)):
        best = -1
        for x in range(count):
            if not taken[x] and (best < 0 or values[x] > values[best]):
                best = x
        taken[best] = True
        chosen[best] = True


@njit(cache=True)
def _candidates(on_task, open_worker, eligible_row, scratch):
    """Workers who may join the task, ascending, into ``scratch[5]``: open, not on it
    (``on_task``), eligible (``eligible_row`` empty: everyone). Returns how many."""
    mark, out = scratch[7], scratch[5]
    for i in on_task:
        mark[i] = True
    count = 0
    for i in range(open_worker.shape[0]):
        if open_worker[i] and not mark[i] and (eligible_row.shape[0] == 0 or eligible_row[i]):
            out[count] = i
            count += 1
    for i in on_task:
        mark[i] = False
    return count


@njit(cache=True)
def _pool(n_cand, gains, q, n_labels, limits, scratch):
    """Positions among the candidates (``scratch[5]``) of the pair search's pool, ascending:
    all of them up to ``limits[0]``, else the ``limits[1]`` best by single gain and the
    ``limits[2]`` most reliable."""
    if n_cand <= limits[0]:
        return np.arange(n_cand)
    chosen = np.zeros(n_cand, dtype=np.bool_)
    _top(gains, n_cand, limits[1], chosen)
    cand = scratch[5]
    reliability = np.empty(n_cand)
    for x in range(n_cand):
        reliability[x] = _reliability(q[cand[x]], n_labels)
    _top(reliability, n_cand, limits[2], chosen)
    return np.flatnonzero(chosen)


@njit(cache=True)
def _task_move(task, tables, open_worker, eligible_row, room, acc, budget_left, consts, scratch):
    """The best move on one task (the rules of ``MulticlassGreedyState._best_moves``).

    ``task``: (its workers (k,), its log prior (K,), the range of its log prior); ``tables``:
    the task's rows of (q, w, log_wrong) and the composition tables; ``consts``:
    (TIE_RTOL, GAIN_TOL, PAIR_EXHAUSTIVE_MAX, PAIR_TOP_GAIN, PAIR_TOP_RELIABLE). Returns
    ``(worth, first, second, gain, accuracy after, evaluated)``: ``first = -1`` when no worker
    may join, ``second = -1`` for a single.
    """
    on_task = task[0]
    q, w, lw = tables[0], tables[1], tables[2]
    n_labels = task[1].shape[0]
    gain_tol = consts[1]
    n_cand = _candidates(on_task, open_worker, eligible_row, scratch)
    if n_cand == 0:
        return 0.0, -1, -1, 0.0, 0.0, 0
    members, cand = scratch[3], scratch[5]
    gains, single = scratch[4][0], scratch[4][1]
    k = on_task.shape[0]
    for t in range(k):
        _put(members, t, on_task[t], q, w, lw)
    by_reliability = _by_reliability(n_cand, q, n_labels, scratch)
    gains[:n_cand] = -np.inf  # not scored (yet)
    done = _singles(by_reliability, 0, -1, task, tables, acc, consts, scratch)
    x = _first_best(gains, n_cand, gain_tol)
    worth, first, second, gain, after = gains[x], cand[x], -1, gains[x], single[x]
    if room < 2 or budget_left < 2 or n_cand < 2:
        return worth, first, second, gain, after, 1
    if gains[x] + gain_tol >= 0.5 * (1.0 - acc):
        return worth, first, second, gain, after, 1  # no pair can be worth more
    limits = (int(consts[2]), int(consts[3]), int(consts[4]))
    if n_cand > limits[0]:  # the pool takes the best by gain: score until they are known
        _singles(by_reliability, done, limits[1], task, tables, acc, consts, scratch)
    pool = _pool(n_cand, gains, q, n_labels, limits, scratch)
    pair_gains, pair_acc = scratch[6][0], scratch[6][1]
    n_pairs = _pairs(pool, task, tables, acc, consts, scratch)
    y = _first_best(pair_gains, n_pairs, gain_tol)
    if 0.5 * pair_gains[y] > worth + gain_tol:
        a, b = _pair_at(y, pool.shape[0])
        worth, first, second = 0.5 * pair_gains[y], cand[pool[a]], cand[pool[b]]
        gain, after = pair_gains[y], pair_acc[y]
    return worth, first, second, gain, after, 1


@njit(cache=True)
def _pair_at(index, size):
    """The positions ``(a, b)``, ``a < b < size``, of the ``index``-th pair in
    lexicographic order (``itertools.combinations``)."""
    a = 0
    while index >= size - 1 - a:
        index -= size - 1 - a
        a += 1
    return a, a + 1 + index


@njit(cache=True)
def best_moves(tasks, members, member_starts, state, tables, open_worker, eligible, budget_left,
               consts, scratch):  # fmt: skip
    """The best move of each of ``tasks``.

    Parameters
    ----------
    tasks : int64, shape (t,)
    members, member_starts : int64, shape (pairs,) and (t + 1,)
        The workers of ``tasks[x]`` are ``members[member_starts[x]:member_starts[x + 1]]``.
    state : tuple
        ``(task_cap, acc, row, log_prior, ptp)`` of every task: shapes (m,), (m,), (m,),
        (m, K), (m,).
    tables : tuple
        ``(q, w, log_wrong)``, shape (C, n) each, and the composition tables
        ``(comp, comp_log_mult, comp_start, comp_len)`` of
        :func:`assignment.engine.multiclass._composition_tables`.
    open_worker : bool, shape (n,)
    eligible : bool, shape (m, n), or (0, 0) when everyone is eligible
    budget_left : int
    consts : float64, shape (5,)
        ``TIE_RTOL, GAIN_TOL, PAIR_EXHAUSTIVE_MAX, PAIR_TOP_GAIN, PAIR_TOP_RELIABLE``.
    scratch : tuple
        :func:`new_scratch`'s arrays.

    Returns
    -------
    worth, gain, after : float64, shape (t,)
        The best move's worth, gain and the task's accuracy after it.
    first, second : int64, shape (t,)
        Its workers (``-1``: no move; ``second = -1``: a single).
    evaluated : int
        Tasks that had room and a worker who may join (the greedy's count of evaluations).
    """
    task_cap, acc, row, log_prior, ptp = state
    q, w, lw, comp_tables = tables
    n = tasks.shape[0]
    worth, gain, after = np.zeros(n), np.zeros(n), np.zeros(n)
    first, second = np.full(n, -1), np.full(n, -1)
    evaluated = 0
    if budget_left < 1:
        return worth, gain, after, first, second, evaluated
    everyone = np.zeros(0, dtype=np.bool_)
    for x in range(n):
        j = tasks[x]
        on_task = members[member_starts[x] : member_starts[x + 1]]
        room = task_cap[j] - on_task.shape[0]
        if room < 1:
            continue
        r = row[j]
        found = _task_move(
            (on_task, log_prior[j], ptp[j]),
            (q[r], w[r], lw[r], comp_tables),
            open_worker,
            everyone if eligible.shape[0] == 0 else eligible[j],
            room,
            acc[j],
            budget_left,
            consts,
            scratch,
        )
        worth[x], first[x], second[x], gain[x], after[x] = found[:5]
        evaluated += found[5]
    return worth, gain, after, first, second, evaluated


@njit(cache=True)
def set_accuracies(tasks, members, member_starts, state, tables, tie_rtol, scratch):
    """Exact accuracy of each of ``tasks`` with its workers (arguments as :func:`best_moves`),
    shape (t,)."""
    _, _, row, log_prior, ptp = state
    q, w, lw, comp_tables = tables
    out = np.empty(tasks.shape[0])
    set_members = scratch[3]
    for x in range(tasks.shape[0]):
        j = tasks[x]
        r = row[j]
        k = member_starts[x + 1] - member_starts[x]
        for t in range(k):
            _put(set_members, t, members[member_starts[x] + t], q[r], w[r], lw[r])
        out[x] = _score_set(k, 0, log_prior[j], ptp[j], tie_rtol, comp_tables, scratch)
    return out


@njit(cache=True)
def _by_reliability(n_cand, q, n_labels, scratch):
    """Positions among the candidates (``scratch[5]``) by decreasing reliability, shape
    (n_cand,)."""
    reliability = np.empty(n_cand)
    for x in range(n_cand):
        reliability[x] = -_reliability(q[scratch[5][x]], n_labels)
    return np.argsort(reliability, kind="mergesort")


@njit(cache=True)
def _singles(by_reliability, done, top, task, tables, acc, consts, scratch):
    """Score single candidates in decreasing reliability, from the ``done``-th on, until those
    left cannot matter; returns how many of ``by_reliability`` are scored.

    Scored gains and accuracies go to ``scratch[4]``; unscored gains stay ``-inf``. Those left
    cannot matter when their gain is certainly below ``max gain - GAIN_TOL`` (``top = -1``: for
    the best single) or below the ``top``-th largest gain scored (for the pair pool, at least
    ``top`` scored). Certainly: a worker of quality ``Q >= 1 / K`` is at least as good for the
    Bayes vote as any worker of effective quality at most ``Q`` (a garbling of him; see
    :mod:`assignment.engine.upper_bound`), so his exact gain bounds the exact gain of every
    candidate after him. The computed accuracy is below the exact one by at most the tie
    tolerance (the tie rule may pick a label whose score is within ``tol`` of the best), plus
    rounding; ``slack`` covers both, twice over.
    """
    on_task, log_prior, ptp = task
    q, w, lw, comp_tables = tables
    tie_rtol, gain_tol = consts[0], consts[1]
    members, cand = scratch[3], scratch[5]
    gains, single = scratch[4][0], scratch[4][1]
    n_cand = by_reliability.shape[0]
    k = on_task.shape[0]
    influence = 0.0
    for t in range(k):
        influence += abs(members[1, t])
    n_labels = log_prior.shape[0]
    bound = np.inf
    best = -np.inf
    largest = np.full(max(top, 1), -np.inf)  # the `top` largest gains scored, decreasing
    for d in range(n_cand):
        x = by_reliability[d]
        if d >= done:
            i = cand[x]
            _put(members, k, i, q, w, lw)
            single[x] = _score_set(k, 1, log_prior, ptp, tie_rtol, comp_tables, scratch)
            gains[x] = single[x] - acc
        best = max(best, gains[x])
        _keep_largest(largest, gains[x])
        i = cand[x]
        if q[i] >= 1.0 / n_labels:  # an ordinary worker: his gain bounds those after him
            slack = 2.0 * (tie_rtol * (1.0 + ptp + influence + abs(w[i])) + 1e-9)
            bound = min(bound, gains[x] + slack)
        if top < 0:
            if bound < best - gain_tol:
                return d + 1
        elif bound < largest[top - 1]:  # -inf until `top` are scored
            return d + 1
    return n_cand


@njit(cache=True)
def _keep_largest(largest, value):
    """Insert ``value`` into ``largest`` (decreasing), dropping its smallest entry."""
    x = largest.shape[0] - 1
    if value <= largest[x]:
        return
    while x > 0 and largest[x - 1] < value:
        largest[x] = largest[x - 1]
        x -= 1
    largest[x] = value


@njit(cache=True)
def _pairs(pool, task, tables, acc, consts, scratch):
    """Score the pairs of ``pool`` (positions among the candidates) that can matter, into
    ``scratch[6]`` (gains, accuracies) in lexicographic order of positions, ``-inf`` gains for
    the others; returns the number of pairs.

    The pairs are visited by the reliability ranks ``(u, v)`` of their workers, ``u < v``, row
    by row. A pair whose two workers are ordinary (``Q >= 1 / K``) bounds the exact gain of every
    pair of ranks ``(u', v') >= (u, v)`` componentwise (both replaced by garblings; see
    :func:`_singles`), so ``bound[u, v]``, the least such bound over the pairs scored at or
    before ``(u, v)`` componentwise, skips a pair certainly below the largest gain scored
    (minus ``GAIN_TOL``), which can be neither the best pair nor within ``GAIN_TOL`` of it.
    """
    on_task, log_prior, ptp = task
    q, w, lw, comp_tables = tables
    tie_rtol, gain_tol = consts[0], consts[1]
    members, cand = scratch[3], scratch[5]
    pair_gains, pair_acc = scratch[6][0], scratch[6][1]
    size = pool.shape[0]
    k = on_task.shape[0]
    influence = 0.0
    for t in range(k):
        influence += abs(members[1, t])
    rel = np.empty(size)
    for a in range(size):
        rel[a] = -_reliability(q[cand[pool[a]]], log_prior.shape[0])
    rank = np.argsort(rel, kind="mergesort")  # pool positions by decreasing reliability
    ordinary = 1.0 / log_prior.shape[0]
    bound = np.full((size, size), np.inf)
    best = -np.inf
    n_pairs = size * (size - 1) // 2
    pair_gains[:n_pairs] = -np.inf
    for u in range(size):
        for v in range(u + 1, size):
            dominated = min(
                bound[u - 1, v] if u > 0 else np.inf, bound[u, v - 1] if v - 1 > u else np.inf
            )
            bound[u, v] = dominated
            if dominated < best - gain_tol:
                continue
            a, b = min(rank[u], rank[v]), max(rank[u], rank[v])
            i, j = cand[pool[a]], cand[pool[b]]
            _put(members, k, i, q, w, lw)
            _put(members, k + 1, j, q, w, lw)
            at = a * size - a * (a + 1) // 2 + (b - a - 1)
            pair_acc[at] = _score_set(k, 2, log_prior, ptp, tie_rtol, comp_tables, scratch)
            pair_gains[at] = pair_acc[at] - acc
            best = max(best, pair_gains[at])
            if q[i] >= ordinary and q[j] >= ordinary:
                slack = 2.0 * (tie_rtol * (1.0 + ptp + influence + abs(w[i]) + abs(w[j])) + 1e-9)
                bound[u, v] = min(dominated, pair_gains[at] + slack)
    return n_pairs
