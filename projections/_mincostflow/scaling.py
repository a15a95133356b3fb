"""Cost scaling on a :class:`~projections._mincostflow.graph.ResidualGraph`.

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

from projections._mincostflow.graph import swap


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
            swap(head, rescap, cost, rev, ident, lo, hi - 1)
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
def _saturate_negative(first, act, head, rescap, cost, rev, price, excess):
    """Saturate every active residual arc of negative reduced cost (refine's first phase).

    The pseudoflow becomes 0-optimal on the active arcs but keeps excesses and deficits.
    """
    for v in range(first.shape[0] - 1):
        pv = price[v]
        for a in range(first[v], act[v]):
            r = rescap[a]
            if r > 0 and cost[a] + pv - price[head[a]] < 0:
                rescap[a] = 0
                rescap[rev[a]] += r
                excess[v] -= r
                excess[head[a]] += r


@njit(cache=True)
def _excess_queue(n_nodes, excess):
    """``(queue, in_queue, tail)``: a circular FIFO of ``n_nodes + 1`` slots holding every node
    with excess, in node order."""
    queue = np.empty(n_nodes + 1, dtype=np.int64)
    in_queue = np.zeros(n_nodes, dtype=np.bool_)
    tail = 0
    for v in range(n_nodes):
        if excess[v] > 0:
            queue[tail] = v
            tail += 1
            in_queue[v] = True
    return queue, in_queue, tail


@njit(cache=True)
def _update_period(first, act):
    """Relabels between two global price updates: ``max(n_nodes, active slots / 2)``.

    Each update reads the residual capacity of active arcs' reverses, scattered over the
    graph, so updates are spaced by the number of active arcs: rare in the first refines
    (~250k active slots), frequent in the later ones, where a few active arcs would otherwise
    walk their prices down eps by eps (100k relabels in one refine).
    """
    n_nodes = first.shape[0] - 1
    n_active = 0
    for v in range(n_nodes):
        n_active += act[v] - first[v]
    return max(n_nodes, n_active // 2)


@njit(cache=True, inline="always")  # as a call, slower on rank-one weights (refine-split.md)
def _activate_near_best(
    v, end, best, best_arc, last, act, head, rescap, cost, rev, ident, guard, price, eps, listed
):
    """Activate, with their pairs, node ``v``'s inactive residual arcs within eps of the best
    value ``price[head] - cost`` over all its residual arcs; returns ``(end, best, best_arc)``.

    Called by a relabel when an inactive arc may be admissible at the new price (``guard``),
    or when no active arc is residual (an excess left by a stopped refine, whose arcs were
    then switched off). ``end`` is ``act[v]`` and ``(best, best_arc)`` the best over the
    active arcs. One pass over the inactive arcs lists those within eps of the best so far
    (in slot order, in ``listed``); the others bound the new guard.
    """
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
    # Activate the listed arcs within eps of the final best. Each swap moves the arc at
    # ``end`` (never a listed slot still to come: those lie beyond it) to slot b.
    for t in range(n_listed):
        b = listed[t]
        value = price[head[b]] - cost[b]
        if value > top - eps:
            swap(head, rescap, cost, rev, ident, b, end)
            end += 1
            w = head[end - 1]
            swap(head, rescap, cost, rev, ident, rev[end - 1], act[w])
            act[w] += 1
            if value > best:
                best = value
                best_arc = end - 1
        elif value > bound:
            bound = value
    act[v] = end
    guard[v] = bound
    return end, best, best_arc


@njit(cache=True)
def _start_refine(first, act, head, rescap, cost, rev, guard, price, eps, excess):
    """Refine's set-up: saturate, queue the nodes with excess, one global price update.

    Returns ``(queue, in_queue, q_tail, current, listed, work, period)``: the FIFO of nodes
    with excess (:func:`_excess_queue`), each node's current arc (its first), room for one
    node's arcs, :func:`price_update`'s work arrays and :func:`_update_period`.
    """
    n_nodes = first.shape[0] - 1
    _saturate_negative(first, act, head, rescap, cost, rev, price, excess)
    queue, in_queue, q_tail = _excess_queue(n_nodes, excess)
    current = first[:-1].copy()
    listed = np.empty(np.max(first[1:] - first[:-1]), dtype=np.int64)
    work = np.empty((5, n_nodes + 1), dtype=np.int64)
    if q_tail > 0:
        price_update(first, act, head, rescap, cost, rev, guard, price, eps, excess, work)
    return queue, in_queue, q_tail, current, listed, work, _update_period(first, act)


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

    The phases: saturate the arcs of negative reduced cost, queue the nodes with excess, one
    global price update, then the FIFO discharge loop (push along admissible arcs, relabel
    when a node's arcs run out, a global update every :func:`_update_period` relabels). The
    discharge loop stays whole in this function: it is the hot path, and only the rare
    activation of inactive arcs is a call.
    """
    queue, in_queue, q_tail, current, listed, work, period = _start_refine(
        first, act, head, rescap, cost, rev, guard, price, eps, excess
    )
    q_head = 0
    size = queue.shape[0]
    pushes = 0
    relabels = 0
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
                    end, best, best_arc = _activate_near_best(
                        v,
                        end,
                        best,
                        best_arc,
                        last,
                        act,
                        head,
                        rescap,
                        cost,
                        rev,
                        ident,
                        guard,
                        price,
                        eps,
                        listed,
                    )
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
