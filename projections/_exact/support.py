"""Reading the support off the optimal circulation, and weights that round to zero cost.

The circulation is optimal for the rounded weights. Usable weights that round to cost 0 are
added afterwards, heaviest first, wherever the caps still allow.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from projections._exact.elements import empty, groups_of
from projections._exact.graph import CandidateGraph
from projections._exact.problem import Problem
from projections._mincostflow import flows_by_ident


def read_support(problem: Problem, cg: CandidateGraph, support) -> None:
    """Set ``support`` (bool, shape (p,), all False) to the circulation's selected elements,
    completed with the zero-cost weights that fit."""
    graph = cg.graph
    n_fixed = problem.n_fixed
    g1, g2 = problem.g1, problem.g2
    flows = flows_by_ident(
        graph.first, graph.last, graph.rescap, graph.ident, n_fixed + cg.elements.size
    )
    support[cg.elements[flows[n_fixed:] > 0]] = True
    room = problem.total - int(flows[g1 + g2])  # flows[:g1 + g2]: each group's selections
    if problem.low * problem.factor < 0.5 and room > 0:  # some usable weights round to zero
        values, groups = problem.values, problem.groups
        zero_cost = empty(values.shape[0])
        zero_cost = zero_cost[: _zero_cost(values, *groups, problem.factor, zero_cost)]
        order = zero_cost[np.argsort(-np.square(values[zero_cost]), kind="stable")]
        left1 = groups.caps1 - flows[:g1]
        left2 = groups.caps2 - flows[g1 : g1 + g2]
        _complete(order, support, *groups[:3], left1, left2, room)


@njit(cache=True)
def _zero_cost(values, labels1, labels2, n_cols, caps1, caps2, factor, out):
    """Usable elements whose weight rounds to cost 0 (written to ``out``; returns how many)."""
    n_out = 0
    for e in range(values.shape[0]):
        x = values[e] * values[e]
        if x > 0 and x * factor + 0.5 < 1.0:
            g, h = groups_of(e, labels1, labels2, n_cols)
            if (g < 0 or caps1[g] > 0) and (h < 0 or caps2[h] > 0):
                out[n_out] = e
                n_out += 1
    return n_out


@njit(cache=True)
def _complete(order, selected, labels1, labels2, n_cols, left1, left2, room):
    """Add elements of ``order`` (heaviest first) while the remaining caps allow."""
    for e in order:
        if room == 0:
            break
        if selected[e]:
            continue
        g, h = groups_of(e, labels1, labels2, n_cols)
        if (g < 0 or left1[g] > 0) and (h < 0 or left2[h] > 0):
            selected[e] = True
            room -= 1
            if g >= 0:
                left1[g] -= 1
            if h >= 0:
                left2[h] -= 1
