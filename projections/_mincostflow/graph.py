"""The residual graph of a min-cost circulation: layout, building, added arcs, flows.

Integer capacities and costs (costs int64; heads, residual capacities and arc numbers int32
when they fit, which halves the memory the graph touches).

Layout: a CSR array of residual arcs with spare room after every node's arcs. Node ``v`` owns
slots ``first[v]`` to ``first[v + 1]``; ``first[v]`` to ``last[v]`` are in use, and the
*active* ones, ``first[v]`` to ``act[v]``, come first. ``ident[a]`` is ``k`` for the forward arc
of input arc ``k`` and ``-1 - k`` for its reverse; it moves with the arc. ``guard[v]`` bounds
``price[head] - cost`` over the inactive residual arcs of ``v`` (see
:mod:`projections._mincostflow.scaling`, which works on this graph).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


class ResidualGraph(NamedTuple):
    """A residual graph's slot arrays (see the module docstring).

    A tuple, so that ``kernel(*graph, ...)`` passes the arrays to a Numba kernel in this order.

    Attributes
    ----------
    first : ndarray of int64, shape (n_nodes + 1,)
        Node ``v``'s slots start at ``first[v]``.
    last : ndarray of int64, shape (n_nodes,)
        End of the slots in use.
    act : ndarray of int64, shape (n_nodes,)
        End of the active slots (``first[v] <= act[v] <= last[v]``).
    head, rescap, rev, ident : ndarray of int32 or int64, shape (n_slots,)
        Head node, residual capacity, slot of the reverse arc, input arc number (``k`` forward,
        ``-1 - k`` reverse) of every slot.
    cost : ndarray of int64, shape (n_slots,)
    guard : ndarray of int64, shape (n_nodes,)
        Upper bound on ``price[head] - cost`` over each node's inactive residual arcs.
    """

    first: np.ndarray
    last: np.ndarray
    act: np.ndarray
    head: np.ndarray
    rescap: np.ndarray
    cost: np.ndarray
    rev: np.ndarray
    ident: np.ndarray
    guard: np.ndarray


def build_residual_graph(n_nodes, tails, heads, caps, costs, flows, unit_arcs=None):
    """Return the :class:`ResidualGraph` of these arcs with these flows, all arcs active.

    Input arc ``k`` goes from ``tails[k]`` to ``heads[k]`` with capacity ``caps[k]``, cost
    ``costs[k]`` and ``flows[k]`` units. ``unit_arcs``, optionally ``(tails, heads, costs,
    flows)``, adds arcs of capacity 1 numbered after those (``flows`` 0 or 1, any integer or
    bool dtype), without the caller concatenating them. Every node gets spare room for about
    an eighth more arcs (see :func:`add_arcs`). Slot arrays are int32 (``cost`` int64) when
    they fit.
    """
    if unit_arcs is None:
        empty = np.zeros(0, dtype=np.int64)
        unit_arcs = (empty, empty, empty, empty)
    u_tails, u_heads, u_costs, u_flows = unit_arcs
    degree = np.bincount(u_tails, minlength=n_nodes) + np.bincount(u_heads, minlength=n_nodes)
    first, last, head, rescap, cost, rev, ident = _allocate(
        n_nodes, tails, heads, caps, degree, u_tails.shape[0]
    )
    _fill(last, head, rescap, cost, rev, ident, 0, tails, heads, caps, costs, flows)
    ones = np.ones(1, dtype=np.int64)
    _fill(
        last,
        head,
        rescap,
        cost,
        rev,
        ident,
        tails.shape[0],
        u_tails,
        u_heads,
        ones,
        u_costs,
        u_flows,
    )
    guard = np.full(n_nodes, np.iinfo(np.int64).min, dtype=np.int64)
    return ResidualGraph(first, last, last.copy(), head, rescap, cost, rev, ident, guard)


def skeleton_graph(n_nodes, tails, heads, caps, costs, unit_degree, n_units, fill_units):
    """:func:`build_residual_graph` without flow, filling only ``head``, ``cost`` and ``ident``.

    Enough for :func:`projections._dual.dual_prices`; :func:`layout` must then fill the rest.
    The ``n_units`` unit arcs are not passed as arrays: ``unit_degree`` counts the arcs at each
    node, and ``fill_units(last, head, cost, ident, id0)`` places them as :func:`fill_skeleton`
    would (the caller computes their ends and costs as it goes, with no arrays of them).
    """
    first, last, head, rescap, cost, rev, ident = _allocate(
        n_nodes, tails, heads, caps, unit_degree, n_units
    )
    fill_skeleton(last, head, cost, ident, 0, tails, heads, costs)
    fill_units(last, head, cost, ident, tails.shape[0])
    guard = np.full(n_nodes, np.iinfo(np.int64).min, dtype=np.int64)
    return ResidualGraph(first, last, last.copy(), head, rescap, cost, rev, ident, guard)


def _allocate(n_nodes, tails, heads, caps, unit_degree, n_units):
    """Empty slot arrays for these arcs and ``n_units`` unit arcs (``unit_degree`` per node)."""
    degree = np.bincount(tails, minlength=n_nodes) + np.bincount(heads, minlength=n_nodes)
    degree += unit_degree
    first = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(degree + degree // 8 + 4, out=first[1:])
    size = int(first[-1])
    n_arcs = tails.shape[0] + n_units
    big = max(size, n_arcs + 1, int(np.max(caps, initial=0)) + 1) >= 2**31 - 1
    index = np.int64 if big else np.int32
    head = np.zeros(size, dtype=index)
    rescap = np.zeros(size, dtype=index)
    cost = np.zeros(size, dtype=np.int64)
    rev = np.zeros(size, dtype=index)
    ident = np.zeros(size, dtype=index)
    return first, first[:-1].copy(), head, rescap, cost, rev, ident


@njit(cache=True)
def fill_skeleton(last, head, cost, ident, id0, tails, heads, costs):
    """:func:`_fill` of ``head``, ``cost`` and ``ident`` only (a skeleton graph's arcs)."""
    for k in range(tails.shape[0]):
        u = tails[k]
        v = heads[k]
        a = last[u]
        last[u] += 1
        b = last[v]
        last[v] += 1
        head[a] = v
        cost[a] = costs[k]
        ident[a] = id0 + k
        head[b] = u
        cost[b] = -costs[k]
        ident[b] = -1 - (id0 + k)


@njit(cache=True)
def _fill(last, head, rescap, cost, rev, ident, id0, tails, heads, caps, costs, flows):
    """Place arcs ``id0, id0 + 1, ...`` and their reverses (``caps`` of length 1: all equal)."""
    same = caps.shape[0] == 1
    for k in range(tails.shape[0]):
        u = tails[k]
        v = heads[k]
        a = last[u]
        last[u] += 1
        b = last[v]
        last[v] += 1
        f = np.int64(flows[k])
        head[a] = v
        rescap[a] = (caps[0] if same else caps[k]) - f
        cost[a] = costs[k]
        rev[a] = b
        ident[a] = id0 + k
        head[b] = u
        rescap[b] = f
        cost[b] = -costs[k]
        rev[b] = a
        ident[b] = -1 - (id0 + k)


def layout(graph, price, threshold, excess, fixed_caps):
    """Lay out a skeleton graph as
    :func:`~projections._mincostflow.scaling.select_active` would leave it at ``threshold``.

    ``graph`` comes from :func:`skeleton_graph` (no flow):
    input arcs ``0, ..., len(fixed_caps) - 1`` have capacities ``fixed_caps``, the others 1.
    Residual arcs of reduced cost ``<= -threshold`` are saturated (their units join
    ``excess``), the pairs with reduced cost in ``(-threshold, threshold)`` come first in
    their nodes' slots (active), and ``guard`` is the largest ``price[head] - cost`` over each
    node's inactive residual arcs (exact, where select_active's may be looser). Without flow,
    every decision is local to a node, so one pass rewrites each node's slots in place (in the
    order select_active's exchanges would leave them) and a second sets ``rev``: none of its
    scattered saturations and swaps, and the skeleton never filled ``rescap`` and ``rev``.
    The graph, flows and excesses are then exactly those of select_active.
    """
    first, last, act, head, rescap, cost, rev, ident, guard = graph
    n_arcs = (int(np.sum(last - first[:-1])) // 2) + 1
    fpos = np.empty(n_arcs, dtype=rev.dtype)  # slot of each forward arc; NumPy: huge pages
    rpos = np.empty(n_arcs, dtype=rev.dtype)  # ... of each reverse arc
    _layout(
        first,
        last,
        act,
        head,
        rescap,
        cost,
        rev,
        ident,
        guard,
        price,
        threshold,
        excess,
        fixed_caps,
        fpos,
        rpos,
    )


@njit(cache=True)
def _layout(
    first,
    last,
    act,
    head,
    rescap,
    cost,
    rev,
    ident,
    guard,
    price,
    threshold,
    excess,
    fixed_caps,
    fpos,
    rpos,
):
    n_nodes = first.shape[0] - 1
    n_fixed = fixed_caps.shape[0]
    width = 1
    for v in range(n_nodes):
        if last[v] - first[v] > width:
            width = last[v] - first[v]
    on = np.empty(width, dtype=np.bool_)
    for v in range(n_nodes):
        lo = first[v]
        n = last[v] - lo
        pv = price[v]
        bound = np.iinfo(np.int64).min
        n_on = 0
        for t in range(n):
            a = lo + t
            w = head[a]
            c = cost[a]
            k = np.int64(ident[a])
            kk = k if k >= 0 else -1 - k
            cap = np.int64(fixed_caps[kk]) if kk < n_fixed else np.int64(1)
            rc = c + pv - price[w]
            res = np.int64(0)
            if k >= 0:  # forward arc, no flow: residual cap, saturated if far below
                res = cap
                if cap > 0 and rc <= -threshold:
                    res = 0
                    excess[v] -= cap
            elif cap > 0 and rc >= threshold:  # its forward arc is saturated
                res = cap
                excess[v] += cap
            active = cap > 0 and -threshold < rc and rc < threshold
            if not active and res > 0 and price[w] - c > bound:
                bound = price[w] - c
            rescap[a] = res
            on[t] = active
            n_on += active
        guard[v] = bound
        act[v] = lo + n_on
        # The order select_active's exchanges would give: scanning from both ends, each
        # inactive slot from the front trades places with an active one from the back.
        x = 0
        y = n
        while True:
            while x < y and on[x]:
                x += 1
            while x < y and not on[y - 1]:
                y -= 1
            if x >= y:
                break
            a = lo + x
            b = lo + y - 1
            head[a], head[b] = head[b], head[a]
            cost[a], cost[b] = cost[b], cost[a]
            ident[a], ident[b] = ident[b], ident[a]
            rescap[a], rescap[b] = rescap[b], rescap[a]
            x += 1
            y -= 1
        for a in range(lo, lo + n):
            k = ident[a]
            if k >= 0:
                fpos[k] = a
            else:
                rpos[-1 - k] = a
    for v in range(n_nodes):
        for a in range(first[v], last[v]):
            k = ident[a]
            rev[a] = rpos[k] if k >= 0 else fpos[-1 - k]


@njit(cache=True)
def swap(head, rescap, cost, rev, ident, x, y):
    """Exchange the arcs in slots ``x`` and ``y`` of one node, keeping ``rev`` consistent."""
    if x == y:
        return
    rx = rev[x]
    ry = rev[y]
    head[x], head[y] = head[y], head[x]
    rescap[x], rescap[y] = rescap[y], rescap[x]
    cost[x], cost[y] = cost[y], cost[x]
    ident[x], ident[y] = ident[y], ident[x]
    rev[x] = ry
    rev[y] = rx
    rev[ry] = x
    rev[rx] = y


@njit(cache=True)
def add_arcs(
    first, last, act, head, rescap, cost, rev, ident, guard, tails, heads, caps, costs, id0
):
    """Add active arcs with zero flow, numbered from ``id0``, in the spare room.

    Returns False and changes nothing when some node lacks the room.
    """
    n_nodes = first.shape[0] - 1
    n_arcs = tails.shape[0]
    need = np.zeros(n_nodes, dtype=np.int64)
    for k in range(n_arcs):
        need[tails[k]] += 1
        need[heads[k]] += 1
    for v in range(n_nodes):
        if last[v] + need[v] > first[v + 1]:
            return False
    for k in range(n_arcs):
        u = tails[k]
        v = heads[k]
        a = last[u]
        last[u] += 1
        b = last[v]
        last[v] += 1
        head[a] = v
        rescap[a] = caps[k]
        cost[a] = costs[k]
        rev[a] = b
        ident[a] = id0 + k
        head[b] = u
        rescap[b] = 0
        cost[b] = -costs[k]
        rev[b] = a
        ident[b] = -1 - (id0 + k)
        swap(head, rescap, cost, rev, ident, a, act[u])
        act[u] += 1
        swap(head, rescap, cost, rev, ident, b, act[v])
        act[v] += 1
    return True


def flows_by_ident(first, last, rescap, ident, n_arcs):
    """Flow on every input arc."""
    flows = np.zeros(n_arcs, dtype=np.int64)  # NumPy's allocation: huge pages, fewer faults
    _fill_flows(first, last, rescap, ident, flows)
    return flows


@njit(cache=True)
def _fill_flows(first, last, rescap, ident, flows):
    for v in range(first.shape[0] - 1):
        for a in range(first[v], last[v]):
            k = ident[a]
            if k < 0:
                flows[-1 - k] = rescap[a]
