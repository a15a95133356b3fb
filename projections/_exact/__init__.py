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
   the largest of the 90th percentiles of each view's group prices (with heavy tails the
   heaviest weights are far above every close call; each view on its own, since with few
   groups on one side and many on the other, as 200 workers and 10,000 tasks, one pooled
   percentile is the larger view's alone) and the total cap's price ``lam`` (when the budget
   binds on rank-one weights most group prices are 0). Each refine starts with a global
   price update and repeats it every ``max(n_nodes, active slots / 2)`` relabels. A refine
   that needs more than ``RELABELS`` relabels per node (prices far from optimal for its
   ``eps``) stops and resumes ``ALPHA`` times coarser, with twice the allowance from then on.
   Each refine works only on
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
   join the graph in place, at most ``ADMIT`` times the graph's size (plus the nodes) per
   pass, the worst first (the rest are found again by the next check, then a full pass), and
   scaling resumes from the larger of ``eps`` and the worst violation; after the
   ``eps = 1`` phase no element violates, so the circulation is optimal on the full graph.

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

Where things are
----------------
* :mod:`~projections._exact.projection`: :func:`solve`, the steps above top to bottom.
* :mod:`~projections._exact.problem`: the input, its groups and the integer cost scale.
* :mod:`~projections._exact.elements`: loops over the elements (weights, arc ends, costs).
* :mod:`~projections._exact.candidates`: step 1, candidate selection (histograms).
* :mod:`~projections._exact.graph`: arc building, the candidate graph and added candidates.
* :mod:`~projections._exact.phases`: step 3, the scaling phases.
* :mod:`~projections._exact.certificate`: step 4, the certificate pass and its pool.
* :mod:`~projections._exact.warm_start`: :class:`ExactState` and the warm start.
* :mod:`~projections._exact.support`: the support read off the flow, zero-cost weights.
* :mod:`~projections._exact.levers`: the tuning constants.
"""

from projections._exact.projection import solve
from projections._exact.warm_start import ExactState

__all__ = ["ExactState", "solve"]
