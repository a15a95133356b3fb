"""Numba kernels that score the greedy's moves on one task (see :mod:`assignment.engine.greedy`).

A task's current vote-sum distribution is given by its atoms: sorted sums ``s`` and the tail
``tail[x] = P(S >= s[x])`` (``tail[len(s)] = 0``). With the threshold ``r`` of the prior and
the tie tolerance ``tol``, adding workers whose joint sum is ``shift`` with probability ``prob``
gives the accuracy ::

    A' = prior * sum prob * P(S >= (r - tol) - shift)
         + (1 - prior) * sum prob * P(S > (tol - r) - shift)

one binary search in ``s`` per term. These kernels compute exactly what the module's docstring
states, in the same order of floating-point operations as a vectorised numpy version, without
numpy's per-call overhead (the greedy scores every task with room after each round of the
local search: tens of thousands of calls).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _first_at_least(s, value):
    """``np.searchsorted(s, value, side="left")``."""
    lo, hi = 0, s.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if s[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _first_above(s, value):
    """``np.searchsorted(s, value, side="right")``."""
    lo, hi = 0, s.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if s[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _single(s, tail, prior, r, tol, w, q):
    """Accuracy after adding one worker ``(w, q)``."""
    ge = r - tol
    gt = tol - r
    p1 = q * tail[_first_at_least(s, ge - w)] + (1.0 - q) * tail[_first_at_least(s, ge + w)]
    p0 = q * tail[_first_above(s, gt - w)] + (1.0 - q) * tail[_first_above(s, gt + w)]
    return prior * p1 + (1.0 - prior) * p0


@njit(cache=True)
def _pair(s, tail, prior, r, tol, wa, qa, wb, qb):
    """Accuracy after adding two workers ``(wa, qa)`` and ``(wb, qb)``."""
    ge = r - tol
    gt = tol - r
    fa = 1.0 - qa
    fb = 1.0 - qb
    pab = qa * qb
    paf = qa * fb
    pfb = fa * qb
    pff = fa * fb
    up = wa + wb
    mixed = wa - wb
    mixed2 = wb - wa
    down = -wa - wb
    p1 = pab * tail[_first_at_least(s, ge - up)]
    p1 = p1 + paf * tail[_first_at_least(s, ge - mixed)]
    p1 = p1 + pfb * tail[_first_at_least(s, ge - mixed2)]
    p1 = p1 + pff * tail[_first_at_least(s, ge - down)]
    p0 = pab * tail[_first_above(s, gt - up)]
    p0 = p0 + paf * tail[_first_above(s, gt - mixed)]
    p0 = p0 + pfb * tail[_first_above(s, gt - mixed2)]
    p0 = p0 + pff * tail[_first_above(s, gt - down)]
    return prior * p1 + (1.0 - prior) * p0


@njit(cache=True)
def single_accuracies(s, tail, prior, r, abs_sum, w, q, tie_rtol):
    """Accuracy of the task after adding each candidate ``(w[c], q[c])`` alone."""
    out = np.empty(w.shape[0])
    base = 1.0 + abs(r) + abs_sum
    for c in range(w.shape[0]):
        tol = tie_rtol * (base + abs(w[c]))
        out[c] = _single(s, tail, prior, r, tol, w[c], q[c])
    return out


@njit(cache=True)
def pair_accuracies(s, tail, prior, r, abs_sum, wa, qa, wb, qb, tie_rtol):
    """Accuracy of the task after adding both ``(wa[c], qa[c])`` and ``(wb[c], qb[c])``."""
    out = np.empty(wa.shape[0])
    base = 1.0 + abs(r) + abs_sum
    for c in range(wa.shape[0]):
        tol = tie_rtol * (base + abs(wa[c]) + abs(wb[c]))
        out[c] = _pair(s, tail, prior, r, tol, wa[c], qa[c], wb[c], qb[c])
    return out


@njit(cache=True)
def first_best(gains, gain_tol):
    """The lowest position whose gain is within ``gain_tol`` of the largest."""
    top = gains.max()
    for c in range(gains.shape[0]):
        if gains[c] >= top - gain_tol:
            return c
    return 0


@njit(cache=True)
def top_positions(values, k, chosen):
    """Mark in ``chosen`` the ``k`` positions of largest ``values``, ties to the lowest position.

    The first ``k`` of ``np.argsort(-values, kind="mergesort")``, found in one pass with a
    sorted list of ``k`` entries instead of sorting all ``c`` values (the pair search runs
    it over every candidate worker of a task: thousands of them at 10,000 workers).
    """
    size = min(k, values.shape[0])
    if size <= 0:
        return
    top = np.empty(size, dtype=np.int64)
    filled = 0
    for c in range(values.shape[0]):
        v = values[c]
        if filled == size:
            if not v > values[top[size - 1]]:
                continue
            filled -= 1  # the last entry drops out
        x = filled  # insert after every entry of value >= v (earlier positions win ties)
        while x > 0 and values[top[x - 1]] < v:
            top[x] = top[x - 1]
            x -= 1
        top[x] = c
        filled += 1
    for x in range(filled):
        chosen[top[x]] = True


@njit(cache=True)
def _scan_singles(
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
    cand,
    g1,
    reliability,
    mark,
):
    """Candidates of a task and their single gains, in one pass over the workers.

    Candidates are the open workers not among ``members`` (the task's current workers) and
    eligible (unless ``eligible_row`` has shape (0,)), ascending. Writes their workers into
    ``cand``, their gains (accuracy after adding the worker minus ``acc``, the operations of
    :func:`single_accuracies`) into ``g1`` and ``|w|`` into ``reliability``; returns how
    many. ``mark`` is a scratch bool buffer of shape (n,), all False on entry and on return:
    the task's workers are marked in it for the scan (no (m, n) matrix of who is on which
    task, and no gathered copies of the task's qualities).
    """
    for x in range(members.shape[0]):
        mark[members[x]] = True
    masked = eligible_row.shape[0] > 0
    base = 1.0 + abs(r) + abs_sum
    size = 0
    for i in range(open_worker.shape[0]):
        if open_worker[i] and not mark[i] and (not masked or eligible_row[i]):
            w = w_row[i]
            tol = tie_rtol * (base + abs(w))
            cand[size] = i
            g1[size] = _single(s, tail, prior, r, tol, w, q_row[i]) - acc
            reliability[size] = abs(w)
            size += 1
    for x in range(members.shape[0]):
        mark[members[x]] = False
    return size


@njit(cache=True)
def pair_positions(g1, reliability, size, exhaustive_max, top_gain, top_reliable):
    """The pairs ``(pa[e], pb[e])`` of positions in ``cand[:size]`` that :func:`_best_pair`
    scores, in its order: every pair if ``size <= exhaustive_max``, else those among the
    ``top_gain`` best by ``g1`` and the ``top_reliable`` best by ``reliability``; ``x < y``,
    ascending by ``x``, then ``y`` (the order :func:`first_best`'s ties follow)."""
    if size <= exhaustive_max:
        sub = np.arange(size)
    else:
        chosen = np.zeros(size, dtype=np.bool_)
        top_positions(g1[:size], top_gain, chosen)
        top_positions(reliability[:size], top_reliable, chosen)
        sub = np.flatnonzero(chosen)
    k = sub.shape[0]
    pa = np.empty(k * (k - 1) // 2, dtype=np.int64)
    pb = np.empty_like(pa)
    e = 0
    for x in range(k):
        for y in range(x + 1, k):
            pa[e] = sub[x]
            pb[e] = sub[y]
            e += 1
    return pa, pb


@njit(cache=True)
def _best_pair(
    s,
    tail,
    prior,
    r,
    abs_sum,
    acc,
    w_row,
    q_row,
    cand,
    g1,
    reliability,
    size,
    tie_rtol,
    gain_tol,
    exhaustive_max,
    top_gain,
    top_reliable,
):
    """The best pair among the candidates ``cand[:size]`` as :func:`task_best_move` scores it:
    ``(g2, a, b)`` with positions ``a < b`` in ``cand``."""
    pa, pb = pair_positions(g1, reliability, size, exhaustive_max, top_gain, top_reliable)
    wa, qa = w_row[cand[pa]], q_row[cand[pa]]
    wb, qb = w_row[cand[pb]], q_row[cand[pb]]
    g2 = pair_accuracies(s, tail, prior, r, abs_sum, wa, qa, wb, qb, tie_rtol)
    g2 -= acc
    e = first_best(g2, gain_tol)
    return g2[e], pa[e], pb[e]


@njit(cache=True)
def task_best_move(
    sums,
    tails,
    room,
    prior,
    r,
    abs_sum,
    acc,
    w_row,
    q_row,
    open_worker,
    members,
    eligible_row,
    budget_left,
    tie_rtol,
    gain_tol,
    exhaustive_max,
    top_gain,
    top_reliable,
    scratch,
    mark,
):
    """The best move on one task: its best single worker, or its best pair when the pair's
    gain per answer (half its accuracy gain) is larger, among its candidates: the open workers
    not on it (and eligible, unless ``eligible_row`` has shape (0,)), ascending, as the
    greedy's ``candidates``. Pairs are those of :func:`pair_positions`, tried only when the
    task and the budget have room for two and the best single gains less than half of the
    task's error ``1 - acc`` (a pair gains at most all of it, so at most half per answer).
    ``w_row``, ``q_row``: the task's, shape (n,); ``members``: the task's current workers,
    shape (k,); ``scratch``: float64 of shape (3, n) and ``mark``: bool of shape (n,), all
    False: scratch buffers.

    Returns ``(worth, first, second, gain)``: the move's workers (``second`` -1 for a single;
    ``first`` -1 and ``worth`` -1 when the task has no room or no candidate).
    """
    if room < 1 or budget_left < 1:
        return -1.0, -1, -1, 0.0
    cand = scratch[0].view(np.int64)
    g1, reliability = scratch[1], scratch[2]
    size = _scan_singles(
        sums,
        tails,
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
        cand,
        g1,
        reliability,
        mark,
    )
    if size == 0:
        return -1.0, -1, -1, 0.0
    best = first_best(g1[:size], gain_tol)
    worth = g1[best]
    gain = worth
    a, b = best, -1
    if room >= 2 and budget_left >= 2 and size >= 2 and worth + gain_tol < 0.5 * (1.0 - acc):
        g2, pa, pb = _best_pair(
            sums,
            tails,
            prior,
            r,
            abs_sum,
            acc,
            w_row,
            q_row,
            cand,
            g1,
            reliability,
            size,
            tie_rtol,
            gain_tol,
            exhaustive_max,
            top_gain,
            top_reliable,
        )
        if 0.5 * g2 > worth + gain_tol:
            worth, gain, a, b = 0.5 * g2, g2, pa, pb
    return worth, cand[a], (cand[b] if b >= 0 else -1), gain


@njit(cache=True)
def best_moves(
    tasks,
    sums,
    tails,
    sum_starts,
    tail_starts,
    counts,
    task_cap,
    prior,
    r,
    abs_sum,
    acc,
    w,
    q,
    row,
    open_worker,
    members,
    member_starts,
    eligible,
    budget_left,
    tie_rtol,
    gain_tol,
    exhaustive_max,
    top_gain,
    top_reliable,
):
    """:func:`task_best_move` of every task of ``tasks`` in one call.

    Task ``tasks[x]`` has atoms ``sums[sum_starts[x]:sum_starts[x + 1]]``, tail
    ``tails[tail_starts[x]:tail_starts[x + 1]]`` and workers
    ``members[member_starts[x]:member_starts[x + 1]]``. ``w``, ``q``: shape (rows, n), task
    ``j``'s workers in row ``row[j]``; ``eligible``: shape (m, n), or (0, 0) when every pair is.

    Returns ``(worth, first, second, gain, evaluated)``: per task as :func:`task_best_move`,
    and how many tasks had candidates.
    """
    k = tasks.shape[0]
    n = w.shape[1]
    worth = np.full(k, -1.0)
    first = np.full(k, -1, dtype=np.int64)
    second = np.full(k, -1, dtype=np.int64)
    gain = np.zeros(k)
    scratch = np.empty((3, n))
    mark = np.zeros(n, dtype=np.bool_)
    everyone = np.zeros(0, dtype=np.bool_)
    masked = eligible.shape[0] > 0
    evaluated = 0
    for x in range(k):
        j = tasks[x]
        worth[x], first[x], second[x], gain[x] = task_best_move(
            sums[sum_starts[x] : sum_starts[x + 1]],
            tails[tail_starts[x] : tail_starts[x + 1]],
            task_cap[j] - counts[x],
            prior[j],
            r[j],
            abs_sum[j],
            acc[j],
            w[row[j]],
            q[row[j]],
            open_worker,
            members[member_starts[x] : member_starts[x + 1]],
            eligible[j] if masked else everyone,
            budget_left,
            tie_rtol,
            gain_tol,
            exhaustive_max,
            top_gain,
            top_reliable,
            scratch,
            mark,
        )
        evaluated += first[x] >= 0
    return worth, first, second, gain, evaluated
