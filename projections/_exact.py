"""``method="exact"``: the TVCS projection as a min-cost flow, proved optimal on the full input.

The projection maximises ``sum(w[S])`` over supports ``S`` that respect every cap, with
``w = v ** 2 >= 0``. It is a maximum-weight b-matching with a cardinality bound, i.e. a
min-cost circulation on::

    S --(cap caps1[g], cost 0)--> view-1 group g
    view-1 group g --(cap 1, cost -w[e])--> view-2 group h      one arc per element e in (g, h)
    view-2 group h --(cap caps2[h], cost 0)--> T
    T --(cap total, cost 0)--> S

An element in no group of view 1 leaves from ``S`` directly; one in no group of view 2 enters
``T`` directly. The constraint matrix is totally unimodular (Yang et al., ICML 2017, Theorem 2),
so an integral optimal circulation is an optimal support.

Algorithm
---------
1. *Candidate graph.* One pass builds, per row and per column (per group of either view), a
   histogram of the weights in bins of 1/8 octave. Each group keeps the elements of the bins that
   hold its ``cap + 2`` heaviest, and elements lighter than the bin from which the caps alone
   would still allow ``1.5 * total`` selections are dropped. The pass also records every
   element's bin in a byte, so that collecting the candidates reads that instead of ``v``.
   Most of a large instance never enters the flow problem (at 1,000 x 10,000 with the small
   budget, 253k of 10M elements). The bins cover 16 octaves below the largest weight; when
   heavy tails put most groups' ``cap + 2``-th weight below that window (so that they would
   keep its whole catch-all bin), one more pass counts the weights per octave and the window
   moves down to where the caps bite, everything heavier falling in its first bin
   (``WINDOW_MOVES`` tries at most).
2. *Starting prices.* The same histograms place the total cap's dual price ``lam`` at the
   bin where the caps alone would allow ``total`` elements; ``SWEEPS`` rounds of coordinate
   descent on the LP dual over the candidate graph (:mod:`projections._dual`) then give
   every group a price. One full pass adds the non-candidates with reduced cost below
   ``AHEAD * eps`` at these prices to the graph and keeps those below ``POOL * eps`` in a
   certificate pool (``eps``: the first phase's).
3. *Flow.* The candidate problem is solved by cost-scaling push-relabel
   (:mod:`projections._mincostflow`) on integer costs: ``w`` is scaled so that its maximum is
   ``2**bits`` (``bits`` as large as int64 prices allow, 33 for 11,000 nodes, 40 at most),
   rounded, and multiplied by ``n_nodes + 1`` so that the final ``eps = 1`` phase is optimal.
   Thanks to the starting prices, the first phase runs at ``eps = scale / START`` instead
   of near the largest cost, where the scale is the largest cost or, if smaller, four times
   the 90th percentile of the group prices (with heavy tails the heaviest weights are far
   above every close call). Each refine starts with a global price update and repeats it
   every ``max(n_nodes, active slots / 2)`` relabels. A refine that needs more than
   ``RELABELS`` relabels per node (prices far from optimal for its ``eps``) stops and resumes
   ``ALPHA`` times coarser, with twice the allowance from then on. Each refine works only on
   the arcs whose reduced cost is within a few ``eps`` of zero (residual arcs further below are
   saturated beforehand; on a cold start the graph is first built as a skeleton for the
   coordinate descent, and one node-local pass then lays out the first phase's flow and
   active arcs in place); a relabel that would break eps-optimality of an inactive arc, or
   that finds no active residual arc, switches the best inactive arcs back on first.
4. *Certificate.* The node prices ``pi`` are dual variables. After every phase, every element
   outside the candidate graph must have reduced cost ``-c[e] + pi[tail] - pi[head] >= -eps``.
   As prices only fall, a check scans only the pool while no tail price has fallen (and no
   head price risen) by more than the pool's margin; otherwise a full pass refills the pool
   (margin ``POOL * eps``, none while that exceeds ``max cost / POOL_WINDOW``). Violators
   join the graph in place and scaling resumes from the larger of ``eps`` and the worst
   violation; after the ``eps = 1`` phase no element violates, so the circulation is optimal
   on the full graph.

A warm start (``ExactState`` from an earlier call on the same structure) replaces steps 1 and
2 when it is good enough. At the earlier prices (rescaled to this call's units), the earlier
support's own reduced costs give a first bound on how far it is from eps-optimal; if that one
passes, one pass over the input computes the exact distance; if it is at most
``max cost / START`` the candidates are the earlier support and the elements with reduced cost
below a margin (``POOL`` times that eps), the earlier support is the starting flow, scaling
starts at that eps, and the certificate starts from an (empty) pool with that margin. Otherwise
(or when the earlier prices are off this call's scale) the call starts cold. Inside IHT,
whose iterates converge, this saves most of the passes over the input.

The weights are never stored: every pass squares ``v`` as it reads it, and the first one also
checks that ``v`` is finite. The result is optimal for the rounded weights; its true objective
is within ``2 * |S| * max(w) * 2**-bits`` of the true optimum (a relative error below ``1e-9``
on every instance the tests and benchmarks use). Weights that round to zero are added
afterwards, heaviest first, wherever the caps still allow (subnormal weights are first scaled
exactly by ``2**600``, ``v`` by ``2**300``). The method is deterministic: the same input gives
the same support.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from projections._dual import dual_prices
from projections._mincostflow import (
    add_arcs,
    build_residual_graph,
    flows_by_ident,
    layout,
    refine,
    select_active,
    skeleton_graph,
    start_eps,
    worst_inactive,
)
from projections.result import MethodOutput

logger = logging.getLogger(__name__)

#: No octave counts (see :func:`_weight_range`).
NO_OCTAVES = np.zeros(0, dtype=np.int64)
#: Extra elements kept per group beyond its cap when building the candidate graph.
SLACK = 2
#: The candidate graph keeps elements at least as heavy as the lightest weight bin from which
#: the caps alone would still allow ``BUDGET_MARGIN * total`` elements.
BUDGET_MARGIN = 1.5
#: Weight bins per octave (a power of two, at most 2**52) and number of bins.
BINS_PER_OCTAVE = 8
N_BINS = 8 * 16 + 1
#: How often the 16-octave weight window may move down (heavy tails; see _cold_candidates).
WINDOW_MOVES = 4
#: The bin recorded for unusable elements (above every bin; ``N_BINS`` fits in a byte).
UNUSABLE = 255
#: Coordinate-descent sweeps for the starting prices of a cold start, and the first phase's
#: ``eps`` as a fraction of the largest cost (a warm start whose flow is further from optimal
#: than that starts cold).
SWEEPS = 2
START = 1024
#: Before the first phase, the non-candidates with reduced cost below ``AHEAD * eps`` at the
#: starting prices join the candidate graph.
AHEAD = 0.5
#: A refine gives up after ``RELABELS * n_nodes`` relabels and resumes at a larger eps (and
#: the allowance doubles, so that scaling always ends).
RELABELS = 64
#: Cost-scaling factor between phases.
ALPHA = 16
#: The certificate pass keeps the non-candidates with reduced cost below ``POOL * eps`` in a
#: pool, and later passes scan only the pool, as long as prices have not moved too far; no
#: pool while ``POOL * eps`` exceeds ``max cost / POOL_WINDOW`` (it would hold most elements).
POOL = 16
POOL_WINDOW = 64
#: A refine at ``eps`` works on the arcs whose residual reduced cost is below ``ACTIVE * eps``.
ACTIVE = 8


@dataclass(frozen=True)
class ExactState:
    """Warm-start state: the optimal support and the node prices in weight units."""

    structure: object
    support: np.ndarray
    prices: np.ndarray


# Element loops: a matrix structure (``labels1`` empty) numbers element ``i * n_cols + j`` in
# row ``i`` and column ``j``; otherwise ``labels1`` / ``labels2`` give the groups (-1: none).
# An element is *usable* when its weight is positive and none of its groups has cap 0.


@njit(cache=True)
def _weight_range(values, labels1, labels2, n_cols, caps1, caps2, octaves):
    """Largest and smallest usable weight (0, 0 if there is none), and whether all are finite.

    The weight of an element is the square of its value. ``octaves`` (2048 counters, or
    empty: none) counts the usable weights by binary exponent.
    """
    count = octaves.shape[0] > 0
    finite = True
    top = 0.0
    low = np.inf
    if labels1.shape[0] == 0:  # matrix: row by row
        for g in range(caps1.shape[0]):
            base = g * n_cols
            usable = caps1[g] > 0
            for h in range(n_cols):
                y = values[base + h]
                finite &= y - y == 0.0  # False for NaN and infinity
                x = y * y
                if usable and x > 0 and caps2[h] > 0:
                    top = max(top, x)
                    low = min(low, x)
                    if count:
                        octaves[np.float64(x).view(np.int64) >> 52] += 1
    else:
        for e in range(values.shape[0]):
            g = labels1[e]
            h = labels2[e]
            y = values[e]
            finite &= y - y == 0.0
            x = y * y
            if x > 0 and (g < 0 or caps1[g] > 0) and (h < 0 or caps2[h] > 0):
                top = max(top, x)
                low = min(low, x)
                if count:
                    octaves[np.float64(x).view(np.int64) >> 52] += 1
    if top == 0.0:
        low = 0.0
    return top, low, finite


@njit(cache=True)
def _bin(x, key_top, shift, n_bins):
    """Weight bin of ``x > 0``: 0 for the heaviest (and any above the window), ``n_bins - 1``
    for everything light."""
    b = key_top - (np.int64(np.float64(x).view(np.int64)) >> shift)
    return min(max(b, 0), n_bins - 1)


@njit(cache=True)
def _histograms(
    values, labels1, labels2, n_cols, caps1, caps2, key_top, shift, n_bins, hist1, hist2, bins
):
    """Count usable elements per bin: ``hist1[g, bin]``, ``hist2[bin, h]`` (g1, g2: no group).

    Also writes every element's bin to ``bins`` (``UNUSABLE`` for the unusable ones), so that
    :func:`_collect` reads one byte per element instead of squaring and binning it again.
    """
    g1 = caps1.shape[0]
    g2 = caps2.shape[0]
    if labels1.shape[0] == 0:  # matrix: row by row
        usable2 = caps2 > 0
        for g in range(g1):
            base = g * n_cols
            row = bins[base : base + n_cols]
            if caps1[g] == 0:
                row[:] = UNUSABLE
                continue
            # Bin the row first (a loop without branches that the compiler vectorises), then
            # count: twice as fast as one loop that does both.
            for h in range(n_cols):
                x = values[base + h] * values[base + h]
                b = key_top - (np.int64(np.float64(x).view(np.int64)) >> shift)
                b = min(max(b, 0), n_bins - 1)
                row[h] = b if (x > 0) & usable2[h] else UNUSABLE
            for h in range(n_cols):
                b = row[h]
                if b != UNUSABLE:
                    hist1[g, b] += 1
                    hist2[b, h] += 1
        return
    for e in range(values.shape[0]):
        g = labels1[e]
        h = labels2[e]
        x = values[e] * values[e]
        if x > 0 and (g < 0 or caps1[g] > 0) and (h < 0 or caps2[h] > 0):
            b = _bin(x, key_top, shift, n_bins)
            hist1[g if g >= 0 else g1, b] += 1
            hist2[b, h if h >= 0 else g2] += 1
            bins[e] = b
        else:
            bins[e] = UNUSABLE


@njit(cache=True)
def _keeps(hist, caps, total):
    """Per group, the bin that completes its ``cap + SLACK`` heaviest elements; per bin, room.

    ``hist[b, g]`` counts a view's group ``g`` (column ``len(caps)``: no group) in bin ``b``.
    ``keep[g]`` is the first bin where the group's running count reaches ``caps[g] + SLACK``
    (``total + SLACK`` for no group; the last bin if never), and ``room[b]`` how many elements
    of bins ``<= b`` the view's caps would allow.
    """
    n_bins, width = hist.shape
    n_groups = width - 1
    keep = np.full(width, n_bins - 1, dtype=np.int64)
    room = np.zeros(n_bins, dtype=np.int64)
    count = np.zeros(width, dtype=np.int64)
    for b in range(n_bins):
        allowed = 0
        for g in range(width):
            count[g] += hist[b, g]
            cap = caps[g] if g < n_groups else total
            if count[g] >= cap + SLACK and keep[g] == n_bins - 1 and b < n_bins - 1:
                keep[g] = b
            allowed += min(count[g], cap) if g < n_groups else count[g]
        room[b] = allowed
    return keep, room


@njit(cache=True)
def _collect(bins, labels1, labels2, n_cols, g1, g2, keep1, keep2, floor, out):
    """Usable elements in bin ``<= floor`` and in bin ``<= keep`` of a group of either view.

    ``bins`` is from :func:`_histograms` (``floor < UNUSABLE``). Writes their indices to
    ``out`` (as long as ``bins``; untouched pages cost nothing) and returns how many.
    """
    # Every index is written and the count advances only for the kept ones: no branch to
    # mispredict on an element that is kept with probability ~0.2.
    n_out = 0
    if labels1.shape[0] == 0:  # matrix: row by row, a column's limit is min(floor, keep2[h])
        limit2 = np.minimum(keep2[:g2], floor)
        for g in range(g1):
            limit1 = min(keep1[g], floor)
            base = g * n_cols
            for h in range(n_cols):
                b = bins[base + h]
                out[n_out] = base + h
                n_out += (b <= limit1) | (b <= limit2[h])
        return n_out
    for e in range(bins.shape[0]):
        g = labels1[e]
        h = labels2[e]
        b = bins[e]
        out[n_out] = e
        n_out += (b <= floor) & (
            (b <= keep1[g if g >= 0 else g1]) | (b <= keep2[h if h >= 0 else g2])
        )
    return n_out


# Large outputs are allocated by NumPy, outside the kernels: NumPy asks for transparent huge
# pages, and in this VM first touching Numba's own (4 KiB page) allocations costs several
# times more (~25 ms per 80 MB).


def _empty(n):
    return np.empty(n, dtype=np.int64)


def _ends(elements, labels1, labels2, n_cols, g1, g2):
    """Tail and head node of the arc of each element."""
    tails = _empty(elements.shape[0])
    heads = _empty(elements.shape[0])
    _fill_ends(elements, labels1, labels2, n_cols, g1, g2, tails, heads)
    return tails, heads


@njit(cache=True)
def _element_ends(e, labels1, labels2, n_cols, g1, g2, g, base):
    """Tail and head node of element ``e``'s arc, and the row state ``(g, base)`` for the next.

    Matrix: ``g`` is the row of the previous element and ``base = g * n_cols``; a division
    only when the row changes (they are slow, and elements come row by row).
    """
    if labels1.shape[0] == 0:
        if e < base or e >= base + n_cols:
            g = e // n_cols
            base = g * n_cols
        h = e - base
        return g, g1 + h, g, base
    g = labels1[e]
    h = labels2[e]
    return (g if g >= 0 else g1 + g2), (g1 + h if h >= 0 else g1 + g2 + 1), g, base


@njit(cache=True)
def _fill_ends(elements, labels1, labels2, n_cols, g1, g2, tails, heads):
    g = 0
    base = 0
    for t in range(elements.shape[0]):
        tails[t], heads[t], g, base = _element_ends(
            elements[t], labels1, labels2, n_cols, g1, g2, g, base
        )


@njit(cache=True)
def _element_degrees(elements, labels1, labels2, n_cols, g1, g2, degree):
    """Add one to ``degree`` at both ends of every element's arc."""
    g = 0
    base = 0
    for t in range(elements.shape[0]):
        tail, head, g, base = _element_ends(elements[t], labels1, labels2, n_cols, g1, g2, g, base)
        degree[tail] += 1
        degree[head] += 1


@njit(cache=True)
def _fill_element_skeleton(
    last,
    head,
    cost,
    ident,
    id0,
    elements,
    values,
    labels1,
    labels2,
    n_cols,
    g1,
    g2,
    factor,
    multiplier,
):
    """:func:`projections._mincostflow.fill_skeleton` of the elements' arcs (cost ``-c[e]``),
    their ends and costs computed on the way."""
    g = 0
    base = 0
    for t in range(elements.shape[0]):
        e = elements[t]
        u, v, g, base = _element_ends(e, labels1, labels2, n_cols, g1, g2, g, base)
        c = -np.int64(values[e] * values[e] * factor + 0.5) * multiplier
        a = last[u]
        last[u] += 1
        b = last[v]
        last[v] += 1
        head[a] = v
        cost[a] = c
        ident[a] = id0 + t
        head[b] = u
        cost[b] = -c
        ident[b] = -1 - (id0 + t)


def _costs(values, elements, factor, multiplier, sign=1):
    """Integer arc costs: ``sign * round(w * factor) * multiplier``, half up."""
    out = _empty(elements.shape[0])
    _fill_costs(values, elements, factor, multiplier * sign, out)
    return out


@njit(cache=True)
def _fill_costs(values, elements, factor, multiplier, out):
    for t in range(elements.shape[0]):
        x = values[elements[t]]
        out[t] = np.int64(x * x * factor + 0.5) * multiplier


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


@njit(cache=True)
def _warm_candidates(
    values,
    labels1,
    labels2,
    n_cols,
    caps1,
    caps2,
    selected,
    price,
    factor,
    multiplier,
    margin,
    out,
    reduced_out,
):
    """Usable elements that are selected or have reduced cost below ``margin``.

    Returns them, their reduced costs, and the smallest eps (at least 1) for which the flow
    through the selected elements is eps-optimal on every element arc.
    """
    matrix = labels1.shape[0] == 0
    g1 = caps1.shape[0]
    g2 = caps2.shape[0]
    top_head = price[g1 + g2 + 1]
    for h in range(g1, g1 + g2):
        if price[h] > top_head:
            top_head = price[h]
    unit = factor * multiplier
    limit = np.empty(g1 + 1)  # per tail: unselected weights below this have reduced >= margin
    for t in range(g1 + 1):
        tail = t if t < g1 else g1 + g2
        limit[t] = (price[tail] - top_head - margin - 2 * multiplier) / unit
    n_out = 0
    worst = 1
    g = 0
    h = 0
    lim = limit[0]
    for e in range(values.shape[0]):
        if matrix:
            if e > 0:
                h += 1
                if h == n_cols:
                    h = 0
                    g += 1
                    lim = limit[g]
        else:
            g = labels1[e]
            h = labels2[e]
            lim = limit[g if g >= 0 else g1]
        x = values[e] * values[e]
        chosen = selected[e]
        if (x <= lim and not chosen) or x <= 0:
            continue
        if (g < 0 or caps1[g] > 0) and (h < 0 or caps2[h] > 0):
            c = np.int64(x * factor + 0.5) * multiplier
            tail = g if g >= 0 else g1 + g2
            head = g1 + h if h >= 0 else g1 + g2 + 1
            reduced = -c + price[tail] - price[head]
            if chosen:
                if reduced > worst:  # the reverse arc is residual
                    worst = reduced
            elif -reduced > worst:
                worst = -reduced
            if chosen or reduced < margin:
                out[n_out] = e
                reduced_out[n_out] = reduced
                n_out += 1
    return n_out, worst


@njit(cache=True)
def _zero_cost(values, labels1, labels2, n_cols, caps1, caps2, factor, out):
    """Usable elements whose weight rounds to cost 0 (written to ``out``; returns how many)."""
    n_out = 0
    for e in range(values.shape[0]):
        x = values[e] * values[e]
        if x > 0 and x * factor + 0.5 < 1.0:
            g, h = _groups_of(e, labels1, labels2, n_cols)
            if (g < 0 or caps1[g] > 0) and (h < 0 or caps2[h] > 0):
                out[n_out] = e
                n_out += 1
    return n_out


@njit(cache=True)
def _groups_of(e, labels1, labels2, n_cols):
    """Element ``e``'s group in view 1 and in view 2 (-1: none); a matrix has no labels."""
    if labels1.shape[0] == 0:
        g = e // n_cols
        return g, e - g * n_cols
    return labels1[e], labels2[e]


@njit(cache=True)
def _complete(order, selected, labels1, labels2, n_cols, left1, left2, room):
    """Add elements of ``order`` (heaviest first) while the remaining caps allow."""
    for e in order:
        if room == 0:
            break
        if selected[e]:
            continue
        g, h = _groups_of(e, labels1, labels2, n_cols)
        if (g < 0 or left1[g] > 0) and (h < 0 or left2[h] > 0):
            selected[e] = True
            room -= 1
            if g >= 0:
                left1[g] -= 1
            if h >= 0:
                left2[h] -= 1


def _same_structure(a, b) -> bool:
    return a is b or (
        a.n_elements == b.n_elements
        and a.total == b.total
        and a.shape == b.shape
        and np.array_equal(a.caps1, b.caps1)
        and np.array_equal(a.caps2, b.caps2)
        and (
            a.shape is not None
            or (np.array_equal(a.labels1, b.labels1) and np.array_equal(a.labels2, b.labels2))
        )
    )


def _support_violation(values, support, everything, price, factor, multiplier) -> int:
    """Largest reduced cost of an element of ``support`` at ``price`` (0 if none is positive).

    A cheap first look at a warm start: the flow through ``support`` is at best that far from
    optimal, without a pass over the other elements.
    """
    labels1, labels2, n_cols, caps1, caps2 = everything
    chosen = np.flatnonzero(support)
    chosen = chosen[values[chosen] != 0]
    if chosen.size == 0:
        return 0
    tails, heads = _ends(chosen, labels1, labels2, n_cols, caps1.shape[0], caps2.shape[0])
    reduced = price[tails] - price[heads] - _costs(values, chosen, factor, multiplier)
    return max(0, int(reduced.max()))


def _warm_prices(prices, unit, n_nodes, max_cost):
    """Earlier prices (in weight units) in this call's integer units, or None.

    Prices only matter up to a common shift. When the new weights are on a very different
    scale, the old prices would be enormous in the new units (beyond what the overflow analysis
    of ``_scale_bits`` allows, or not even finite): the warm start is then dropped.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = prices * unit
    if np.all(np.isfinite(scaled)):
        scaled = scaled - scaled.max()
        if -scaled.min() <= n_nodes * max_cost:
            return np.round(scaled).astype(np.int64)
    logger.debug("exact: warm-start prices are off this call's scale; starting cold")
    return None


def _cold_candidates(values, structure, everything, top, low, clock):
    """Candidate elements from weight histograms, and a first value of the total cap's price.

    Bins are 1/BINS_PER_OCTAVE octave wide. Every group keeps the bins that hold its
    ``cap + SLACK`` heaviest elements; overall, only bins above the lightest one where the caps
    would still allow ``BUDGET_MARGIN * total`` elements count. The price (in weight units) is
    the lower edge of the bin where the caps alone would allow ``total`` elements (0 if they
    never reach it: the total cap is slack). The bins span 16 octaves from the top weight down,
    unless heavy tails make the window move (see the loop).
    """
    caps1, caps2 = structure.caps1, structure.caps2
    g1, g2 = caps1.shape[0], caps2.shape[0]
    per_octave = int(math.log2(BINS_PER_OCTAVE))
    shift = 52 - per_octave
    key_top = int(np.float64(top).view(np.int64)) >> shift
    key_low = int(np.float64(low).view(np.int64)) >> shift
    count = np.int32 if structure.n_elements < 2**31 else np.int64
    last = N_BINS - 1
    octaves = None
    for attempt in range(WINDOW_MOVES + 1):
        hist1 = np.zeros((g1 + 1, N_BINS), dtype=count)
        hist2 = np.zeros((N_BINS, g2 + 1), dtype=count)  # columns vary fastest in a matrix
        bins = np.empty(values.shape[0], dtype=np.uint8)
        _histograms(values, *everything, key_top, shift, N_BINS, hist1, hist2, bins)
        keep1, room1 = _keeps(hist1.T, caps1, structure.total)
        keep2, room2 = _keeps(hist2, caps2, structure.total)
        room = np.minimum(room1, room2)
        wanted = BUDGET_MARGIN * min(structure.total, int(room[-1]))
        floor = min(int(np.searchsorted(room, wanted)), last)
        # Groups whose cap + SLACK heaviest reach below the window keep all of its catch-all
        # bin (unless the floor cuts it): with heavy tails (v = exp(2 z) spans ~60 octaves)
        # that is nearly every element. Then move the window down: its bottom an octave
        # below where the usable weights reach the sum of all caps (a few octaves lower at
        # each further try); what lies above it falls in bin 0.
        lost = np.sum(hist1[:, last], where=keep1 == last) + np.sum(
            hist2[last, :], where=keep2 == last
        )
        if floor < last or lost <= structure.total // 8 or key_top - (last - 1) <= key_low:
            break
        if attempt == WINDOW_MOVES:
            break
        if octaves is None:
            octaves = np.zeros(2048, dtype=np.int64)
            _weight_range(values, *everything, octaves)
        reach = np.cumsum(octaves[::-1])[::-1]  # usable weights in this octave or above
        needed = min(int(caps1.sum()) + int(caps2.sum()), int(reach[0]))
        bottom = int(np.flatnonzero(reach >= needed)[-1]) - 1 - 4 * attempt
        moved = ((max(bottom, 0) + last // BINS_PER_OCTAVE) << per_octave) - 1
        if moved >= key_top:
            break
        logger.debug("exact: weight window moved down %d bins", key_top - moved)
        key_top = moved
    at_total = int(np.searchsorted(room, structure.total))
    lam0 = 0.0
    if at_total < last:
        lam0 = float(np.int64((key_top - at_total) << shift).view(np.float64))
    logger.debug("exact histograms: %.3f s", time.perf_counter() - clock)
    out = _empty(values.shape[0])
    labels1, labels2, n_cols = everything[:3]
    cand = out[: _collect(bins, labels1, labels2, n_cols, g1, g2, keep1, keep2, floor, out)]
    logger.debug("exact collected %d candidates: %.3f s", cand.size, time.perf_counter() - clock)
    return cand, lam0


def _scale_bits(n_nodes: int) -> int:
    # Prices fall by at most ~3.3 * n_nodes * max|cost| over all phases (Goldberg 1997), and a
    # reduced cost adds two prices to a cost: keep 2 * 3.3 * n_nodes**2 * 2**bits below 2**62.
    return int(min(40, math.floor(62 - math.log2(6.6) - 2 * math.log2(n_nodes + 1))))


def solve(values, structure, *, warm_start=None) -> MethodOutput:
    """Exact projection; see the module docstring.

    Parameters
    ----------
    values : ndarray, shape (p,)
        ``v`` (real; converted to float64). The weights ``v ** 2`` are computed on the fly,
        never stored.
    structure : TVCSStructure
    warm_start : ExactState, optional
        From an earlier call with the same structure.
    """
    clock = time.perf_counter()
    p = structure.n_elements
    support = np.zeros(p, dtype=bool)
    caps1 = structure.caps1
    caps2 = structure.caps2
    g1 = caps1.shape[0]
    g2 = caps2.shape[0]
    if structure.shape is not None and structure._labels1 is None:
        n_cols = structure.shape[1]
        labels1 = labels2 = np.empty(0, dtype=np.int64)  # matrix: groups from the index
    else:
        n_cols = 0
        labels1 = structure.labels1
        labels2 = structure.labels2
    everything = (labels1, labels2, n_cols, caps1, caps2)
    values = np.ascontiguousarray(values, dtype=np.float64)
    top, low, finite = _weight_range(values, *everything, NO_OCTAVES)
    if not finite:
        raise ValueError("v must be finite, got NaN or infinity")
    scale = 1.0
    if 0.0 < top < 2.0**-500:  # 2**bits / top would overflow: work on exactly scaled values
        scale = 2.0**600
        values = values * 2.0**300
        top, low, _ = _weight_range(values, *everything, NO_OCTAVES)
    if top == 0.0 or structure.total == 0:
        return MethodOutput(support=support, optimal=True, message="nothing to select")
    source, sink = g1 + g2, g1 + g2 + 1
    n_nodes = g1 + g2 + 2

    bits = _scale_bits(n_nodes)
    factor = 2.0**bits / top
    multiplier = np.int64(n_nodes + 1)
    unit = factor * float(multiplier)  # integer price units per unit of weight
    state_unit = unit * scale  # ... per unit of the caller's weight (ExactState.prices)

    top_cost = int(np.int64(top * factor + 0.5) * multiplier)
    in_graph = np.zeros(p, dtype=bool)

    # A warm start whose prices are nearly optimal for this call skips the histograms and the
    # coordinate descent: its support is the starting flow, and the candidates are that
    # support and the elements close to admissible at its prices.
    cand = None
    pool_base = None
    if isinstance(warm_start, ExactState) and _same_structure(warm_start.structure, structure):
        price = _warm_prices(warm_start.prices, state_unit, n_nodes, top_cost)
        if (
            price is not None
            and _support_violation(
                values, warm_start.support, everything, price, factor, multiplier
            )
            > top_cost // START
        ):
            logger.debug("exact warm start: the earlier support is far from optimal; cold")
            price = None
        if price is not None:
            before = warm_start.support & (values != 0)
            near, reduced = _empty(p), _empty(p)
            n_near, eps = _warm_candidates(
                values,
                *everything,
                before,
                price,
                factor,
                multiplier,
                top_cost // POOL_WINDOW,
                near,
                reduced,
            )
            near, reduced = near[:n_near], reduced[:n_near]
            if eps <= top_cost // START:
                margin = min(max(POOL * eps, top_cost >> 24), top_cost // POOL_WINDOW)
                cand = near[(reduced < margin) | before[near]]
                loaded = before[cand]
                pool_base = (price.copy(), margin)  # every other element: reduced >= margin
                logger.debug(
                    "exact warm start: starting flow %d-optimal, %d candidates: %.3f s",
                    eps,
                    cand.size,
                    time.perf_counter() - clock,
                )
            else:
                logger.debug("exact warm start: prices off by %d, starting cold", eps)
    if cand is None:
        cand, lam0 = _cold_candidates(values, structure, everything, top, low, clock)
        loaded = np.zeros(cand.size, dtype=bool)
    in_graph[cand] = True

    # The fixed arcs S -> view-1 groups, view-2 groups -> T and T -> S, then one arc per
    # candidate element; a warm start routes one unit through every element it selected.
    fixed_tails = np.concatenate([np.full(g1, source), g1 + np.arange(g2), [sink]])
    fixed_heads = np.concatenate([np.arange(g1), np.full(g2, sink), [source]])
    fixed_caps = np.concatenate([structure.caps1, structure.caps2, [structure.total]])
    fixed_costs = np.zeros(g1 + g2 + 1, np.int64)

    def element_graph(fixed_flows, flows):
        """The graph of the fixed arcs and the candidates with these flows.

        ``fixed_flows=None``: those that route ``flows`` (0 or 1 per candidate).
        """
        tails, heads = _ends(cand, labels1, labels2, n_cols, g1, g2)
        costs = _costs(values, cand, factor, multiplier, -1)
        if fixed_flows is None:
            sel_t, sel_h = tails[flows], heads[flows]
            fixed_flows = np.concatenate(
                [
                    np.bincount(sel_t[sel_t < g1], minlength=g1),
                    np.bincount(sel_h[sel_h < g1 + g2] - g1, minlength=g2),
                    [sel_t.size],
                ]
            )
        return build_residual_graph(
            n_nodes,
            fixed_tails,
            fixed_heads,
            fixed_caps,
            fixed_costs,
            fixed_flows,
            (tails, heads, costs, flows),
        )

    def skeleton():
        """The cold start's graph without flow, for the dual sweeps and :func:`layout`."""
        degree = np.zeros(n_nodes, dtype=np.int64)
        _element_degrees(cand, labels1, labels2, n_cols, g1, g2, degree)

        def fill_units(last, head, cost, ident, id0):
            _fill_element_skeleton(
                last,
                head,
                cost,
                ident,
                id0,
                cand,
                values,
                *everything[:3],
                g1,
                g2,
                factor,
                multiplier,
            )

        return skeleton_graph(
            n_nodes,
            fixed_tails,
            fixed_heads,
            fixed_caps,
            fixed_costs,
            degree,
            cand.size,
            fill_units,
        )

    n_fixed = g1 + g2 + 1
    excess = np.zeros(n_nodes, dtype=np.int64)
    graph = element_graph(None, loaded) if pool_base is not None else skeleton()
    first, last, _, head, rescap, cost, _, ident, _ = graph
    if pool_base is not None:
        # Warm: the first phase runs ALPHA times below the starting flow's eps-optimality,
        # and the certificate starts from the pool of the candidate pass (empty: every
        # element with reduced cost below the margin is a candidate).
        eps = start_eps(first, last, head, rescap, cost, price)
        pool = (np.empty(0, np.int64),) * 4 + pool_base
    else:
        u = np.zeros(g1 + 1, dtype=np.int64)
        v = np.zeros(g2 + 1, dtype=np.int64)
        logger.debug("exact setup and skeleton graph: %.3f s", time.perf_counter() - clock)
        _, price = dual_prices(
            first,
            last,
            head,
            cost,
            ident,
            n_fixed,
            caps1,
            caps2,
            structure.total,
            u,
            v,
            np.int64(round(lam0 * unit)),
            SWEEPS,
        )
        # The first phase runs at scale // START, where the scale is that of the costs that
        # are close calls: top_cost, unless most prices are far below it (heavy tails: the
        # heaviest weights are then selected anyway, and an eps set by them would leave
        # every decision near the prices unresolved in the first phases).
        scale = min(top_cost, 4 * int(np.percentile(np.abs(price[: g1 + g2]), 90)))
        eps = max(1, scale // START) * ALPHA
        pool = None
        logger.debug("exact dual prices: %.3f s", time.perf_counter() - clock)

    def add_candidates(bad):
        nonlocal graph, cand
        new_costs = _costs(values, bad, factor, multiplier, -1)
        new_tails, new_heads = _ends(bad, labels1, labels2, n_cols, g1, g2)
        ones = np.ones(bad.size, np.int64)
        id0 = n_fixed + cand.size
        added = add_arcs(*graph, new_tails, new_heads, ones, new_costs, id0)
        cand = np.concatenate([cand, bad])
        in_graph[bad] = True
        if not added:  # no room left: rebuild, keeping the flow
            first, last, _, _, rescap, _, _, ident, _ = graph
            flows = flows_by_ident(first, last, rescap, ident, id0)
            unit_flows = np.concatenate([flows[n_fixed:], np.zeros(bad.size, np.int64)])
            graph = element_graph(flows[:n_fixed], unit_flows)

    def check(slack, margin=None):
        """Non-candidates with reduced cost below -slack (from the pool while it holds).

        A full pass keeps those below ``margin`` (default ``POOL * slack``) in the pool.
        """
        nonlocal pool
        if pool is not None and _pool_holds(pool[4], price, g1, g2, pool[5], slack):
            return _pool_violations(*pool[:4], in_graph, price, slack)
        margin = POOL * slack if margin is None else margin
        if margin > top_cost // POOL_WINDOW:  # early phases: the pool would hold most elements
            margin = -slack  # (empty pool, never holds)
        bad, members = _empty(p), _empty(p)
        n_bad, worst, n_members = _violations(
            values, *everything, in_graph, price, factor, multiplier, slack, margin, bad, members
        )
        bad, members = bad[:n_bad], members[:n_members]
        if margin < 0:
            pool = None
            return bad, worst
        m_tails, m_heads = _ends(members, labels1, labels2, n_cols, g1, g2)
        m_costs = _costs(values, members, factor, multiplier)
        pool = (members, m_tails, m_heads, m_costs, price.copy(), margin)
        return bad, worst

    logger.debug("exact setup and candidate graph: %.3f s", time.perf_counter() - clock)
    clock = time.perf_counter()
    rounds = 1
    refines = 0
    if AHEAD and pool is None:
        near, _ = check(-int(AHEAD * (eps // ALPHA)), POOL * (eps // ALPHA))
        if near.size:
            add_candidates(near)
            rounds += 1
        logger.debug(
            "exact: %d near-admissible elements added in %.3f s",
            near.size,
            time.perf_counter() - clock,
        )
        clock = time.perf_counter()
    if pool_base is None:
        # Cold: the graph is a skeleton without flow (the near-admissible arcs included).
        # Saturate and lay out its arcs as the first phase's select_active would.
        layout(graph, price, ACTIVE * (eps // ALPHA), excess, fixed_caps)
        logger.debug("exact layout: %.3f s", time.perf_counter() - clock)
        clock = time.perf_counter()
    per_node = RELABELS
    while True:
        while eps > 1:
            eps = max(1, eps // ALPHA)
            n_active = select_active(*graph, price, ACTIVE * eps, excess)
            selected = time.perf_counter()
            # A refine that needs many relabels per node is far from its prices' optimum
            # (starting prices that were off): it stops and resumes at a larger eps.
            budget = per_node * n_nodes if eps < top_cost else np.iinfo(np.int64).max
            pushes, relabels, finished = refine(*graph, price, eps, excess, budget)
            refines += 1
            solved = time.perf_counter()
            if not finished:
                logger.debug(
                    "exact refine eps %d stopped after %d relabels (%.3f s): resuming at %d",
                    eps,
                    relabels,
                    solved - selected,
                    eps * ALPHA,
                )
                eps *= ALPHA * ALPHA
                per_node = 2 * max(1, per_node)  # (so that scaling always ends)
                clock = time.perf_counter()
                continue
            bad, worst = check(eps)
            logger.debug(
                "exact refine eps %d: %d active arcs in %.3f s, %d pushes, %d relabels, %.3f s; "
                "%d violators (worst %d) added to %d candidates in %.3f s",
                eps,
                n_active // 2,
                selected - clock,
                pushes,
                relabels,
                solved - selected,
                bad.size,
                worst,
                cand.size,
                time.perf_counter() - solved,
            )
            if bad.size:
                add_candidates(bad)
                rounds += 1
                # The flow is only worst-optimal on the new graph: rescale from there.
                eps = max(eps, worst)
            clock = time.perf_counter()
        first, last, act, head, rescap, cost, _, _, guard = graph
        worst = worst_inactive(first, last, act, head, rescap, cost, price, guard)
        if worst > 1:
            logger.debug("exact restart at eps %d: inactive arcs not 1-optimal", worst)
            eps = worst
            continue
        bad, worst = check(1)
        if bad.size == 0:
            break
        add_candidates(bad)
        rounds += 1
        eps = worst
        logger.debug("exact restart at eps %d after %d violators", eps, bad.size)

    first, last, _, _, rescap, _, _, ident, _ = graph
    flows = flows_by_ident(first, last, rescap, ident, n_fixed + cand.size)
    support[cand[flows[n_fixed:] > 0]] = True
    room = structure.total - int(flows[g1 + g2])  # flows[:g1 + g2]: each group's selections
    if low * factor < 0.5 and room > 0:  # some usable weights round to zero cost: add them,
        zero_cost = _empty(p)  # heaviest first, where caps allow
        zero_cost = zero_cost[: _zero_cost(values, *everything, factor, zero_cost)]
        order = zero_cost[np.argsort(-np.square(values[zero_cost]), kind="stable")]
        left1 = caps1 - flows[:g1]
        left2 = caps2 - flows[g1 : g1 + g2]
        _complete(order, support, labels1, labels2, n_cols, left1, left2, room)
    state = ExactState(structure, support.copy(), price.astype(np.float64) / state_unit)
    return MethodOutput(
        support=support,
        optimal=True,
        iterations=refines,
        message=f"optimal: {'warm start, ' if pool_base is not None else ''}{rounds} candidate "
        f"round(s), {cand.size} candidate elements of {p}, certificate on all",
        warm_start=state,
    )
