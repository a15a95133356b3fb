"""Numba kernel of the exact K-class expected accuracy (see :mod:`assignment.engine.multiclass`):
a depth-first sum over a task's states, pruned where the vote is already decided.

A *unit* (a set of workers on one task) is given as groups of equally good workers, ``G`` of
them, ordered by decreasing influence ``c_g |w_g|``. A node at depth ``d`` has chosen how the
first ``d`` groups split over the labels (one composition each) and carries

* ``scores[d, y] = log pi(y) + V_y`` over the workers chosen so far, and
* ``log_weight[d]``: the log of (the number of answer patterns of the chosen compositions
  times ``prod_{chosen workers} (1 - Q_i) / (K - 1)``),

so that ``exp(log_weight[d] + scores[d, y])`` is ``P(y, the answers chosen so far)``.

* A leaf (``d = G``) adds ``exp(log_weight + scores[vote])``, the vote being the highest label
  whose score is at least ``max - tol`` (the rule of the module).
* An inner node whose leader is ahead of every other label by more than
  ``R_d + tol``, where ``R_d = sum_{g >= d} c_g |w_g|`` bounds how far the remaining workers can
  move one label against another (each adds its weight to one label), has that leader as the
  vote of every leaf below it. The answers below sum to probability 1 given any label, so the
  subtree adds ``exp(log_weight + scores[leader])`` and is skipped.

Pruning makes the sum exact and usually much cheaper than the ``prod_g binom(c_g + K - 1, K - 1)``
leaves it would otherwise visit: confident workers who agree decide the vote early.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _last_worker(row, w, base, tol):
    """The leaves below a node whose one remaining group is one worker of weight ``w``: the sum
    over its ``K`` answers ``a`` of ``exp(base + score of the vote)``, the scores being ``row``
    with ``w`` added to label ``a`` (the same sums, bit for bit, as expanding them)."""
    n_labels = row.shape[0]
    total = 0.0
    for a in range(n_labels):
        top = row[a] + w
        for y in range(n_labels):
            if y != a and row[y] > top:
                top = row[y]
        vote = n_labels - 1
        score = row[vote] + w if vote == a else row[vote]
        while score < top - tol:
            vote -= 1
            score = row[vote] + w if vote == a else row[vote]
        total += math.exp(base + score)
    return total


@njit(cache=True)
def _unit_accuracy(
    n_groups,
    weight,
    log_wrong,
    size,
    remaining,
    log_prior,
    tol,
    comp,
    comp_log_mult,
    comp_start,
    comp_len,
    scores,
    log_weight,
    next_comp,
):
    """The pruned depth-first sum of one unit whose groups are ``weight[:n_groups]`` etc.;
    ``remaining[d]`` is ``R_d``; ``scores``, ``log_weight``, ``next_comp`` are scratch arrays
    with at least ``n_groups + 1`` rows."""
    n_labels = log_prior.shape[0]
    for y in range(n_labels):
        scores[0, y] = log_prior[y]
    log_weight[0] = 0.0
    total = 0.0
    depth = 0
    evaluate = True
    while True:
        if evaluate:  # a node just reached: add it if the vote is decided, else expand it
            evaluate = False
            top = -np.inf
            second = -np.inf
            for y in range(n_labels):
                s = scores[depth, y]
                if s > top:
                    second = top
                    top = s
                elif s > second:
                    second = s
            if depth == n_groups:
                vote = n_labels - 1
                while scores[depth, vote] < top - tol:
                    vote -= 1
                total += math.exp(log_weight[depth] + scores[depth, vote])
            elif top - second > remaining[depth] + tol:
                total += math.exp(log_weight[depth] + top)
            elif depth == n_groups - 1 and size[depth] == 1:
                base = log_weight[depth] + log_wrong[depth]
                total += _last_worker(scores[depth], weight[depth], base, tol)
            else:
                next_comp[depth] = 0
                continue
            if depth == 0:
                return total
            depth -= 1
            continue
        # the node at `depth` (< n_groups): its next child, or back up when it has no more
        g = depth
        c = size[g]
        if next_comp[depth] == comp_len[c]:
            if depth == 0:
                return total
            depth -= 1
            continue
        r = comp_start[c] + next_comp[depth]
        next_comp[depth] += 1
        w = weight[g]
        for y in range(n_labels):
            scores[depth + 1, y] = scores[depth, y] + comp[r, y] * w
        log_weight[depth + 1] = log_weight[depth] + comp_log_mult[r] + c * log_wrong[g]
        depth += 1
        evaluate = True


@njit(cache=True)
def unit_accuracies(
    group_start,
    weight,
    log_wrong,
    size,
    influence,
    log_prior,
    tol,
    comp,
    comp_log_mult,
    comp_start,
    comp_len,
):
    """Exact accuracy of every unit, shape (n_units,).

    Parameters
    ----------
    group_start : int64, shape (n_units + 1,)
        Unit ``u`` owns groups ``group_start[u]:group_start[u + 1]``.
    weight, log_wrong : float64, shape (n_groups,)
        ``w = log(Q (K - 1) / (1 - Q))`` and ``log((1 - Q) / (K - 1))`` of each group.
    size : int64, shape (n_groups,)
        Workers in each group.
    influence : float64, shape (n_groups,)
        ``c_g |w_g|``; a unit's groups come in decreasing influence.
    log_prior : float64, shape (n_units, K)
    tol : float64, shape (n_units,)
        The tie tolerance of each unit.
    comp, comp_log_mult : float64, shape (n_comp, K) and (n_comp,)
        Compositions of every group size ``c`` (rows ``comp_start[c]`` to
        ``comp_start[c] + comp_len[c]``) and the log of their numbers of answer patterns.
    comp_start, comp_len : int64, shape (max size + 1,)
    """
    n_units = log_prior.shape[0]
    depth_max = 0
    for u in range(n_units):
        depth_max = max(depth_max, group_start[u + 1] - group_start[u])
    scores = np.empty((depth_max + 1, log_prior.shape[1]))
    log_weight = np.empty(depth_max + 1)
    next_comp = np.empty(depth_max + 1, dtype=np.int64)
    remaining = np.empty(depth_max + 1)
    out = np.empty(n_units)
    for u in range(n_units):
        g0 = group_start[u]
        n_groups = group_start[u + 1] - g0
        acc = 0.0  # remaining[d]: sum of influence over the unit's groups d, d + 1, ...
        for d in range(n_groups - 1, -1, -1):
            acc += influence[g0 + d]
            remaining[d] = acc
        out[u] = _unit_accuracy(
            n_groups,
            weight[g0:],
            log_wrong[g0:],
            size[g0:],
            remaining,
            log_prior[u],
            tol[u],
            comp,
            comp_log_mult,
            comp_start,
            comp_len,
            scores,
            log_weight,
            next_comp,
        )
    return out
