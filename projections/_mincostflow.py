"""Min-cost circulation by cost-scaling push-relabel (private kernel).

Goldberg (1997), "An efficient implementation of a scaling minimum-cost flow algorithm",
J. Algorithms 22(1). Integer capacities and costs (costs and prices int64; heads, residual
capacities and arc numbers int32 when they fit, which halves the memory the graph touches);
with every cost a multiple of ``n_nodes + 1``, an ``eps = 1`` optimal circulation is optimal
(Goldberg & Tarjan 1990).

Graph layout: a CSR array of residual arcs with spare room after every node's arcs. Node ``v``
owns slots ``first[v]`` to ``first[v + 1]``; ``first[v]`` to ``last[v]`` are in use, and the
*active* ones, ``first[v]`` to ``act[v]``, come first. ``ident[a]`` is ``k`` for the forward arc
of input arc ``k`` and ``-1 - k`` for its reverse; it moves with the arc.

Only active arcs take part in a refine; an inactive pair keeps its flow. :func:`select_active`
keeps active the pairs whose residual reduced cost is small compared with eps (far from the
boundary, an arc's flow no longer changes) and first saturates the residual arcs far below it,
as the refine would (after good starting prices, most of the flow is set that way and the
refine pushes only the resulting excesses); :func:`worst_inactive` checks that the inactive
arcs are still eps-optimal, which makes the result optimal on the whole graph. ``refine``
starts from any pseudoflow (it saturates every active arc of negative reduced cost), so arcs
may be added between refines with any reduced cost, and it may stop early (a relabel budget)
and be resumed at another eps. Global price updates (:func:`price_update`, Goldberg 1997 §5)
set prices to eps times the distance to a deficit, at the start of every refine and then every
``max(n_nodes, active slots / 2)`` relabels.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def build_residual_graph(n_nodes, tails, heads, caps, costs, flows, unit_arcs=None):
    """Return the graph ``(first, last, act, head, rescap, cost, rev, ident, guard)``, all active.

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
    return first, last, last.copy(), head, rescap, cost, rev, ident, guard


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
    return first, last, last.copy(), head, rescap, cost, rev, ident, guard


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
    """Lay out a skeleton graph as :func:`select_active` would leave it at ``threshold``.

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
def _swap(head, rescap, cost, rev, ident, x, y):
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
        _swap(head, rescap, cost, rev, ident, a, act[u])
        act[u] += 1
        _swap(head, rescap, cost, rev, ident, b, act[v])
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


@njit(cache=True)
def start_eps(first, last, head, rescap, cost, price):
    """Smallest eps (at least 1) for which the pseudoflow is eps-optimal for ``price``."""
    worst = 1
    for v in range(first.shape[0] - 1):
        for a in range(first[v], last[v]):
            if rescap[a] > 0:
                reduced = cost[a] + price[v] - price[head[a]]
                if -reduced > worst:
                    worst = -reduced
    return worst


def select_active(
    first, last, act, head, rescap, cost, rev, ident, guard, price, threshold, excess
):
    """Make active exactly the pairs with a residual arc of reduced cost in ``(-threshold,
    threshold)``, after saturating the residual arcs of reduced cost ``<= -threshold``.

    A saturated arc's flow is settled at this scale (:func:`refine` would saturate it first
    thing); it leaves a pair whose residual arc has reduced cost ``>= threshold``, which stays
    out of the refine, and its units join ``excess``. ``guard[v]`` is an upper bound on
    ``price[head] - cost`` over the inactive residual arcs of ``v`` (it stays one: prices only
    fall). It lets :func:`refine` notice when a relabel would break eps-optimality on an
    inactive arc, and lets this function skip the inactive arcs of every node whose guard
    shows none of them can be below the threshold. Returns the number of active slots.
    """
    mark = np.zeros(head.shape[0], dtype=np.bool_)  # NumPy's allocation: huge pages
    return _select_active(
        first, last, act, head, rescap, cost, rev, ident, guard, price, threshold, excess, mark
    )


@njit(cache=True)
def _select_active(
    first, last, act, head, rescap, cost, rev, ident, guard, price, threshold, excess, mark
):
    n_nodes = first.shape[0] - 1
    dirty = np.zeros(n_nodes, dtype=np.bool_)  # some inactive slot of the node is marked
    for v in range(n_nodes):
        pv = price[v]
        stop = last[v] if pv - guard[v] < threshold else act[v]
        bound = np.iinfo(np.int64).min if stop == last[v] else guard[v]
        for a in range(first[v], stop):
            r = rescap[a]
            if r > 0:
                value = price[head[a]] - cost[a]
                if pv - value <= -threshold:
                    # Saturate; the reverse arc, residual now, may be inactive: raise the
                    # guard of its node (a node scanned later recomputes it with this arc).
                    w = head[a]
                    rescap[a] = 0
                    rescap[rev[a]] += r
                    excess[v] -= r
                    excess[w] += r
                    if pv + cost[a] > guard[w]:
                        guard[w] = pv + cost[a]
                elif pv - value < threshold:
                    mark[a] = True
                    if a >= act[v]:
                        dirty[v] = True
                    b = rev[a]
                    mark[b] = True
                    w = head[a]
                    if b >= act[w]:
                        dirty[w] = True
                elif value > bound:
                    bound = value
        guard[v] = bound
    total = 0
    for v in range(n_nodes):
        lo = first[v]
        hi = last[v] if dirty[v] else act[v]
        while True:
            while lo < hi and mark[lo]:
                lo += 1
            while lo < hi and not mark[hi - 1]:
                hi -= 1
            if lo >= hi:
                break
            # slot lo is inactive and slot hi - 1 active: exchange them (marks included)
            _swap(head, rescap, cost, rev, ident, lo, hi - 1)
            mark[lo] = True
            mark[hi - 1] = False
            lo += 1
            hi -= 1
        act[v] = lo
        total += lo - first[v]
    return total


@njit(cache=True)
def worst_inactive(first, last, act, head, rescap, cost, price, guard):
    """Largest ``-reduced cost`` over inactive residual arcs (0 if none is negative).

    A node whose price is at least its guard has none below 0 (the guard bounds ``price[head]
    - cost`` over them) and is not scanned; after a refine that is every node.
    """
    worst = 0
    for v in range(first.shape[0] - 1):
        pv = price[v]
        if pv >= guard[v]:
            continue
        for a in range(act[v], last[v]):
            if rescap[a] > 0:
                reduced = cost[a] + pv - price[head[a]]
                if -reduced > worst:
                    worst = -reduced
    return worst


@njit(cache=True)
def _bucket_insert(bucket, nxt, prv, d, v):
    """Put node ``v`` first in the doubly linked list of bucket ``d``."""
    nxt[v] = bucket[d]
    prv[v] = -1
    if bucket[d] >= 0:
        prv[bucket[d]] = v
    bucket[d] = v


@njit(cache=True)
def price_update(first, act, head, rescap, cost, rev, guard, price, eps, excess, work):
    """Goldberg's global price update: lower every price by eps times its distance to a deficit.

    The length of a residual active arc is ``reduced // eps + 1`` (``>= 0`` when the pseudoflow
    is eps-optimal), so the new prices are eps-optimal on the active arcs and every node with
    excess gets a path of admissible arcs to a deficit. A node's distance is also capped where
    a lower price would break ``price >= guard`` (its inactive arcs), and distances are found
    only up to ``n_nodes`` by Dial's buckets: the search stops once every node with excess is
    settled, and the unsettled nodes all fall by the level reached (no more than their distance,
    no less than any settled neighbour's). Goldberg (1997), section 5. Returns the number of
    nodes whose price fell. ``work``: five int64 arrays of ``n_nodes + 1``.
    """
    n_nodes = first.shape[0] - 1
    n_levels = n_nodes + 1
    dist, bucket, nxt, prv, settled = work
    bucket[:] = -1
    remaining = 0
    for v in range(n_nodes):
        d = n_levels  # beyond every bucket
        if excess[v] < 0:
            d = 0
        else:
            if excess[v] > 0:
                remaining += 1
            if guard[v] != np.iinfo(np.int64).min and price[v] - guard[v] < n_levels * eps:
                d = max(0, (price[v] - guard[v]) // eps)
        dist[v] = d
        settled[v] = 0
        if d < n_levels:
            _bucket_insert(bucket, nxt, prv, d, v)
    level = 0
    while remaining > 0 and level < n_levels:
        w = bucket[level]
        if w < 0:
            level += 1
            continue
        bucket[level] = nxt[w]
        if nxt[w] >= 0:
            prv[nxt[w]] = -1
        settled[w] = 1
        if excess[w] > 0:
            remaining -= 1
        pw = price[w]
        for b in range(first[w], act[w]):
            # The arc into w is rev[b], from u = head[b], with cost -cost[b]. Its residual
            # capacity lies elsewhere in the graph: read it last, only for an improvement.
            u = head[b]
            if settled[u] == 0:
                length = (price[u] - cost[b] - pw) // eps + 1
                if length < dist[u] - level and rescap[rev[b]] > 0:
                    if dist[u] < n_levels:  # unlink from its bucket
                        if prv[u] >= 0:
                            nxt[prv[u]] = nxt[u]
                        else:
                            bucket[dist[u]] = nxt[u]
                        if nxt[u] >= 0:
                            prv[nxt[u]] = prv[u]
                    dist[u] = level + length
                    _bucket_insert(bucket, nxt, prv, dist[u], u)
    moved = 0
    for v in range(n_nodes):
        d = dist[v] if settled[v] else level
        if d > 0:
            price[v] -= d * eps
            moved += 1
    return moved


@njit(cache=True)
def refine(
    first, last, act, head, rescap, cost, rev, ident, guard, price, eps, excess, max_relabels
):
    """Turn the pseudoflow into an eps-optimal circulation, working on the active arcs.

    A relabel that would make an inactive residual arc violate eps-optimality (``guard``)
    activates it first, so the circulation is eps-optimal on every arc. ``price`` and
    ``excess`` (the pseudoflow's excess per node, zero for a circulation) are updated in
    place. After ``max_relabels`` relabels it gives up, leaving an eps-optimal pseudoflow and
    its excesses: a later call (at a larger eps, where fewer relabels are needed) carries on
    from there. Returns (pushes, relabels, finished).
    """
    n_nodes = first.shape[0] - 1
    # Saturate every residual arc of negative reduced cost: the result is 0-optimal but
    # leaves excesses and deficits.
    for v in range(n_nodes):
        pv = price[v]
        for a in range(first[v], act[v]):
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
    listed = np.empty(np.max(first[1:] - first[:-1]), dtype=np.int64)
    pushes = 0
    relabels = 0
    # Global price updates: one up front, then one per max(n_nodes, active slots / 2)
    # relabels. Each reads the residual capacity of active arcs' reverses, scattered over the
    # graph, so they are spaced by the number of active arcs: rare in the first refines
    # (~250k active slots), frequent in the later ones, where a few active arcs would
    # otherwise walk their prices down eps by eps (100k relabels in one refine).
    work = np.empty((5, n_nodes + 1), dtype=np.int64)
    if q_tail > 0:
        price_update(first, act, head, rescap, cost, rev, guard, price, eps, excess, work)
    n_active = 0
    for v in range(n_nodes):
        n_active += act[v] - first[v]
    period = max(n_nodes, n_active // 2)
    next_update = period
    while q_head != q_tail:
        if relabels >= max_relabels:
            return pushes, relabels, False
        if relabels >= next_update:
            price_update(first, act, head, rescap, cost, rev, guard, price, eps, excess, work)
            current[:] = first[:-1]
            next_update = relabels + period
        v = queue[q_head]
        q_head += 1
        if q_head == size:
            q_head = 0
        in_queue[v] = False
        end = act[v]
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
                if best_arc < 0 or guard[v] > best - eps:
                    # An inactive arc may be admissible at the new price, or no active arc
                    # is residual (an excess left by a stopped refine, whose arcs were then
                    # switched off): activate, with their pairs, the inactive residual arcs
                    # within eps of the best value over all of them, and rescan. One pass
                    # over the inactive arcs lists those within eps of the best so far (in
                    # slot order); the others bound the guard.
                    top = best
                    bound = np.iinfo(np.int64).min
                    n_listed = 0
                    for b in range(end, last[v]):
                        if rescap[b] > 0:
                            value = price[head[b]] - cost[b]
                            if value > top:  # (first: top may be INT64_MIN, no top - eps)
                                top = value
                                listed[n_listed] = b
                                n_listed += 1
                            elif value > top - eps:
                                listed[n_listed] = b
                                n_listed += 1
                            elif value > bound:
                                bound = value
                    # Activate the listed arcs within eps of the final best. Each swap moves
                    # the arc at ``end`` (never a listed slot still to come: those lie
                    # beyond it) to slot b.
                    for t in range(n_listed):
                        b = listed[t]
                        value = price[head[b]] - cost[b]
                        if value > top - eps:
                            _swap(head, rescap, cost, rev, ident, b, end)
                            end += 1
                            w = head[end - 1]
                            _swap(head, rescap, cost, rev, ident, rev[end - 1], act[w])
                            act[w] += 1
                            if value > best:
                                best = value
                                best_arc = end - 1
                        elif value > bound:
                            bound = value
                    act[v] = end
                    guard[v] = bound
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
    return pushes, relabels, True
