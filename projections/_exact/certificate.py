"""The certificate pass: non-candidates whose reduced cost violates eps-optimality.

The node prices ``pi`` are dual variables. After every phase, every element outside the
candidate graph must have reduced cost ``-c[e] + pi[tail] - pi[head] >= -eps``. As prices
only fall, a check scans only a *pool* while no tail price has fallen (and no head price
risen) by more than the pool's margin; otherwise a full pass refills the pool (margin
``POOL * eps``, none while that exceeds ``max cost / POOL_WINDOW``). Violators join the graph
(:func:`projections._exact.graph.add_candidates`); after the ``eps = 1`` phase no element
violates, so the circulation is optimal on the full graph.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from projections._exact import levers
from projections._exact.elements import arc_costs, arc_ends, empty
from projections._exact.graph import CandidateGraph
from projections._exact.problem import Problem


class Pool(NamedTuple):
    """Non-candidates that were close to violating when the pool was made.

    Every non-candidate outside the pool had reduced cost ``>= margin`` at prices ``base``.

    Attributes
    ----------
    members : ndarray of int64, shape (m,)
        Element indices.
    tails, heads, costs : ndarray of int64, shape (m,)
        Their arcs' ends and (positive) costs ``c[e]``.
    base : ndarray of int64, shape (n_nodes,)
        The node prices when the pool was made.
    margin : int
    """

    members: np.ndarray
    tails: np.ndarray
    heads: np.ndarray
    costs: np.ndarray
    base: np.ndarray
    margin: int


def empty_pool(base, margin) -> Pool:
    """A pool without members: every non-candidate had reduced cost ``>= margin`` at ``base``."""
    none = np.empty(0, np.int64)
    return Pool(none, none, none, none, base, margin)


def check(problem: Problem, cg: CandidateGraph, price, pool, slack, margin=None):
    """Non-candidates with reduced cost below ``-slack`` (from ``pool`` while it holds).

    A full pass keeps those below ``margin`` (default ``POOL * slack``) in a new pool.

    Parameters
    ----------
    problem : Problem
    cg : CandidateGraph
    price : ndarray of int64, shape (n_nodes,)
    pool : Pool or None
    slack, margin : int

    Returns
    -------
    violators : ndarray of int64, shape (n,)
        Element indices.
    worst : int
        The largest ``-reduced cost`` among them (0 if none).
    pool : Pool or None
        The pool for the next check.
    """
    g1, g2 = problem.g1, problem.g2
    if pool is not None and _pool_holds(pool.base, price, g1, g2, pool.margin, slack):
        bad, worst = _pool_violations(*pool[:4], cg.in_graph, price, slack)
        return bad, worst, pool
    margin = levers.POOL * slack if margin is None else margin
    if margin > problem.top_cost // levers.POOL_WINDOW:  # early phases: most elements
        margin = -slack  # (empty pool, never holds)
    values, factor, multiplier = problem.values, problem.factor, problem.multiplier
    p = values.shape[0]
    bad, members = empty(p), empty(p)
    n_bad, worst, n_members = _violations(
        values, *problem.groups, cg.in_graph, price, factor, multiplier, slack, margin, bad, members
    )
    bad, members = bad[:n_bad], members[:n_members]
    if margin < 0:
        return bad, worst, None
    m_tails, m_heads = arc_ends(members, *problem.groups[:3], g1, g2)
    m_costs = arc_costs(values, members, factor, multiplier)
    return bad, worst, Pool(members, m_tails, m_heads, m_costs, price.copy(), margin)


@njit(cache=True)
def _violations(
    values,
    labels1,
    labels2,
    n_cols,
    caps1,
    caps2,
    in_graph,
    price,
    factor,
    multiplier,
    slack,
    margin,
    bad,
    pool,
):
    """Usable non-candidates with reduced cost below ``-slack``, and the worst violation.

    Also returns a *pool* for :func:`_pool_violations`: the other non-candidates with reduced
    cost below ``margin`` (their indices). An element is skipped at once when its weight is
    below what its tail's price and the largest head price would need (a float bound with
    room for the rounding), so most elements cost one comparison.
    """
    matrix = labels1.shape[0] == 0
    g1 = caps1.shape[0]
    g2 = caps2.shape[0]
    top_head = price[g1 + g2 + 1]
    for h in range(g1, g1 + g2):
        if price[h] > top_head:
            top_head = price[h]
    unit = factor * multiplier
    limit = np.empty(g1 + 1)  # per tail: weights below this are neither bad nor pooled
    for t in range(g1 + 1):
        tail = t if t < g1 else g1 + g2
        bound = price[tail] - top_head - max(margin, -slack) - 2 * multiplier
        limit[t] = bound / unit
    n_bad = 0
    n_pool = 0
    worst = 0
    if matrix:  # row by row (the same test as below, with g >= 0 and h >= 0)
        # The bound with the element's own head price: limit[g] + lift[h] (the slack of
        # 2 * multiplier covers the rounding of both terms many times over).
        lift = np.empty(n_cols)
        for h in range(n_cols):
            lift[h] = (top_head - price[g1 + h]) / unit if caps2[h] > 0 else np.inf
        near = np.empty(n_cols, dtype=np.int64)
        for g in range(g1):
            if caps1[g] == 0:
                continue
            lim = limit[g]
            pg = price[g]
            base = g * n_cols
            # Most elements fail the float bound: list the others first, in a loop without
            # branches (three times faster than testing and branching element by element).
            n_near = 0
            for h in range(n_cols):
                x = values[base + h] * values[base + h]
                near[n_near] = h
                n_near += (x > lim + lift[h]) & (x > 0.0) & ~in_graph[base + h]
            for t in range(n_near):
                h = near[t]
                e = base + h
                x = values[e] * values[e]
                reduced = -np.int64(x * factor + 0.5) * multiplier + pg - price[g1 + h]
                n_bad, worst, n_pool = _sort_out(
                    e, reduced, slack, margin, bad, n_bad, worst, pool, n_pool
                )
        return n_bad, worst, n_pool
    for e in range(values.shape[0]):
        g = labels1[e]
        h = labels2[e]
        lim = limit[g if g >= 0 else g1]
        x = values[e] * values[e]
        if x <= lim or x <= 0 or in_graph[e]:
            continue
        if (g < 0 or caps1[g] > 0) and (h < 0 or caps2[h] > 0):
            c = np.int64(x * factor + 0.5) * multiplier
            tail = g if g >= 0 else g1 + g2
            head = g1 + h if h >= 0 else g1 + g2 + 1
            reduced = -c + price[tail] - price[head]
            n_bad, worst, n_pool = _sort_out(
                e, reduced, slack, margin, bad, n_bad, worst, pool, n_pool
            )
    return n_bad, worst, n_pool


@njit(cache=True)
def _sort_out(e, reduced, slack, margin, bad, n_bad, worst, pool, n_pool):
    """:func:`_violations`' verdict on element ``e``: a violator (below ``-slack``; the worst
    kept), a pool member (below ``margin``) or neither. Returns the updated counts and worst."""
    if reduced < -slack:
        bad[n_bad] = e
        n_bad += 1
        worst = max(worst, -reduced)
    elif reduced < margin:
        pool[n_pool] = e
        n_pool += 1
    return n_bad, worst, n_pool


@njit(cache=True)
def _pool_violations(pool, tails, heads, costs, in_graph, price, slack):
    """:func:`_violations` restricted to a pool (candidates in it are skipped)."""
    bad = np.empty(pool.shape[0], dtype=np.int64)
    n_bad = 0
    worst = 0
    for t in range(pool.shape[0]):
        if in_graph[pool[t]]:
            continue
        reduced = -costs[t] + price[tails[t]] - price[heads[t]]
        if reduced < -slack:
            bad[n_bad] = pool[t]
            n_bad += 1
            if -reduced > worst:
                worst = -reduced
    return bad[:n_bad].copy(), worst


@njit(cache=True)
def _pool_holds(base, price, g1, g2, margin, slack):
    """Whether every non-candidate outside the pool still has reduced cost ``>= -slack``.

    When the pool was made at prices ``base``, those had reduced cost ``>= margin``; a
    reduced cost ``-c + price[tail] - price[head]`` has since fallen by at most the largest
    fall of a tail price (view-1 groups and the source) plus the largest rise of a head price
    (view-2 groups and the sink).
    """
    fall = 0
    for t in range(g1 + 1):
        tail = t if t < g1 else g1 + g2
        if base[tail] - price[tail] > fall:
            fall = base[tail] - price[tail]
    rise = 0
    for head in range(g1, g1 + g2 + 2):
        if head != g1 + g2 and price[head] - base[head] > rise:
            rise = price[head] - base[head]
    return fall + rise <= margin + slack
