"""Min-cost circulation by cost-scaling push-relabel (private kernel).

Goldberg (1997), "An efficient implementation of a scaling minimum-cost flow algorithm",
J. Algorithms 22(1). Integer capacities and costs (int64); with every cost a multiple of
``n_nodes + 1``, an ``eps = 1`` optimal circulation is optimal (Goldberg & Tarjan 1990).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def build_residual_graph(n_nodes, tails, heads, caps, costs):
    """Return the CSR residual graph (first, head, rescap, cost, rev, arc_of_input).

    Arc ``k`` of the input becomes the forward residual arc ``arc_of_input[k]``; its paired
    reverse arc (capacity 0, cost ``-costs[k]``) is ``rev[arc_of_input[k]]``.
    """
    n_arcs = tails.shape[0]
    degree = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_arcs):
        degree[tails[k] + 1] += 1
        degree[heads[k] + 1] += 1
    first = np.cumsum(degree)
    fill = first[:-1].copy()
    head = np.empty(2 * n_arcs, dtype=np.int64)
    rescap = np.empty(2 * n_arcs, dtype=np.int64)
    cost = np.empty(2 * n_arcs, dtype=np.int64)
    rev = np.empty(2 * n_arcs, dtype=np.int64)
    arc_of_input = np.empty(n_arcs, dtype=np.int64)
    for k in range(n_arcs):
        u = tails[k]
        v = heads[k]
        a = fill[u]
        fill[u] += 1
        b = fill[v]
        fill[v] += 1
        head[a] = v
        rescap[a] = caps[k]
        cost[a] = costs[k]
        rev[a] = b
        head[b] = u
        rescap[b] = 0
        cost[b] = -costs[k]
        rev[b] = a
        arc_of_input[k] = a
    return first, head, rescap, cost, rev, arc_of_input


@njit(cache=True)
def _refine(first, head, rescap, cost, rev, price, eps):
    n_nodes = first.shape[0] - 1
    excess = np.zeros(n_nodes, dtype=np.int64)
    # Saturate every residual arc of negative reduced cost: the result is 0-optimal but
    # leaves excesses and deficits.
    for v in range(n_nodes):
        pv = price[v]
        for a in range(first[v], first[v + 1]):
            r = rescap[a]
            if r > 0 and cost[a] + pv - price[head[a]] < 0:
                rescap[a] = 0
                rescap[rev[a]] += r
                excess[v] -= r
                excess[head[a]] += r
    queue = np.empty(n_nodes + 1, dtype=np.int64)
    in_queue = np.zeros(n_nodes, dtype=np.bool_)
    q_head = 0
    q_tail = 0
    size = n_nodes + 1
    for v in range(n_nodes):
        if excess[v] > 0:
            queue[q_tail] = v
            q_tail += 1
            in_queue[v] = True
    current = first[:-1].copy()
    pushes = 0
    relabels = 0
    while q_head != q_tail:
        v = queue[q_head]
        q_head += 1
        if q_head == size:
            q_head = 0
        in_queue[v] = False
        end = first[v + 1]
        pv = price[v]
        a = current[v]
        while excess[v] > 0:
            if a == end:
                # Relabel: lower the price as far as eps-optimality allows, and restart the
                # scan at the arc that became admissible.
                best = np.iinfo(np.int64).min
                best_arc = -1
                for b in range(first[v], end):
                    if rescap[b] > 0:
                        cand = price[head[b]] - cost[b]
                        if cand > best:
                            best = cand
                            best_arc = b
                pv = best - eps
                price[v] = pv
                a = best_arc
                relabels += 1
                continue
            r = rescap[a]
            if r > 0:
                w = head[a]
                if cost[a] + pv - price[w] < 0:
                    d = excess[v] if excess[v] < r else r
                    rescap[a] = r - d
                    rescap[rev[a]] += d
                    excess[v] -= d
                    excess[w] += d
                    pushes += 1
                    if excess[w] > 0 and not in_queue[w]:
                        queue[q_tail] = w
                        q_tail += 1
                        if q_tail == size:
                            q_tail = 0
                        in_queue[w] = True
                    if rescap[a] > 0:
                        continue
            a += 1
        current[v] = a
    return pushes, relabels


@njit(cache=True)
def min_cost_circulation(first, head, rescap, cost, rev, price, eps_start, alpha):
    """Make the circulation in ``rescap`` optimal; ``price`` is updated in place.

    The circulation must be ``eps_start``-optimal for ``price`` on entry (for example the zero
    circulation with ``eps_start = max |cost|``). Returns (refines, pushes, relabels).
    """
    eps = eps_start
    refines = 0
    pushes = 0
    relabels = 0
    while eps > 1:
        eps = max(1, eps // alpha)
        p, r = _refine(first, head, rescap, cost, rev, price, eps)
        refines += 1
        pushes += p
        relabels += r
    return refines, pushes, relabels
