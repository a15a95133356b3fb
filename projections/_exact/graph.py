"""Arc building: the candidate graph of the flow problem, and candidates added to it.

The graph (:class:`~projections._mincostflow.ResidualGraph`) has the fixed arcs
(:class:`FixedArcs`) and one arc of capacity 1 per candidate element, from its view-1 group to
its view-2 group with cost ``-c[e]`` (see :mod:`projections._exact.elements`). A cold start
builds it as a skeleton without flow, for the coordinate descent and
:func:`~projections._mincostflow.layout`; a warm start builds it with the earlier support's
flow. Candidates added later (near-admissible elements, certificate violators) go into the
graph's spare room, or the graph is rebuilt with its flow when some node lacks the room.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from projections._exact.elements import arc_costs, arc_ends, element_ends
from projections._exact.problem import Problem
from projections._mincostflow import (
    ResidualGraph,
    add_arcs,
    build_residual_graph,
    flows_by_ident,
    skeleton_graph,
)


class FixedArcs(NamedTuple):
    """Input arcs ``0, ..., n_fixed - 1``: source to each view-1 group (cap ``caps1``), each
    view-2 group to the sink (cap ``caps2``), sink to source (cap ``total``), all of cost 0.

    Attributes
    ----------
    tails, heads, caps, costs : ndarray of int64, shape (n_fixed,)
    """

    tails: np.ndarray
    heads: np.ndarray
    caps: np.ndarray
    costs: np.ndarray


@dataclass(slots=True)
class CandidateGraph:
    """The flow problem on the candidate elements (grows as candidates are added).

    Attributes
    ----------
    elements : ndarray of int64, shape (n_candidates,)
        The candidates; input arc ``n_fixed + t`` is ``elements[t]``'s.
    in_graph : ndarray of bool, shape (p,)
        Whether each element is a candidate.
    graph : ResidualGraph
    fixed : FixedArcs
    """

    elements: np.ndarray
    in_graph: np.ndarray
    graph: ResidualGraph
    fixed: FixedArcs


def fixed_arcs(problem: Problem) -> FixedArcs:
    """The fixed arcs of ``problem``."""
    g1, g2 = problem.g1, problem.g2
    source, sink = g1 + g2, g1 + g2 + 1
    return FixedArcs(
        np.concatenate([np.full(g1, source), g1 + np.arange(g2), [sink]]),
        np.concatenate([np.arange(g1), np.full(g2, sink), [source]]),
        np.concatenate([problem.groups.caps1, problem.groups.caps2, [problem.total]]),
        np.zeros(problem.n_fixed, np.int64),
    )


def candidate_graph(problem: Problem, candidates, selected=None) -> CandidateGraph:
    """The graph of ``candidates`` (element indices, shape (n,)).

    ``selected`` (bool, shape (n,)): the graph routes one unit through every selected
    candidate (a warm start's flow). None: a skeleton without flow (a cold start).
    """
    in_graph = np.zeros(problem.values.shape[0], dtype=bool)
    in_graph[candidates] = True
    fixed = fixed_arcs(problem)
    if selected is None:
        graph = _skeleton(problem, fixed, candidates)
    else:
        graph = _with_flow(problem, fixed, candidates, None, selected)
    return CandidateGraph(candidates, in_graph, graph, fixed)


def add_candidates(problem: Problem, cg: CandidateGraph, new) -> None:
    """Add the elements ``new`` (shape (n,), not yet candidates) to ``cg`` with zero flow."""
    values, groups = problem.values, problem.groups
    n_fixed = problem.n_fixed
    new_costs = arc_costs(values, new, problem.factor, problem.multiplier, -1)
    new_tails, new_heads = arc_ends(new, *groups[:3], problem.g1, problem.g2)
    ones = np.ones(new.size, np.int64)
    id0 = n_fixed + cg.elements.size
    added = add_arcs(*cg.graph, new_tails, new_heads, ones, new_costs, id0)
    cg.elements = np.concatenate([cg.elements, new])
    cg.in_graph[new] = True
    if not added:  # no room left: rebuild, keeping the flow
        graph = cg.graph
        flows = flows_by_ident(graph.first, graph.last, graph.rescap, graph.ident, id0)
        unit_flows = np.concatenate([flows[n_fixed:], np.zeros(new.size, np.int64)])
        cg.graph = _with_flow(problem, cg.fixed, cg.elements, flows[:n_fixed], unit_flows)


def _with_flow(problem: Problem, fixed: FixedArcs, elements, fixed_flows, flows) -> ResidualGraph:
    """The graph of the fixed arcs and ``elements`` with these flows.

    ``flows``: 0 or 1 per element; ``fixed_flows=None``: those that route ``flows``.
    """
    g1, g2 = problem.g1, problem.g2
    tails, heads = arc_ends(elements, *problem.groups[:3], g1, g2)
    costs = arc_costs(problem.values, elements, problem.factor, problem.multiplier, -1)
    if fixed_flows is None:
        sel_t, sel_h = tails[flows], heads[flows]
        fixed_flows = np.concatenate(
            [
                np.bincount(sel_t[sel_t < g1], minlength=g1),
                np.bincount(sel_h[sel_h < g1 + g2] - g1, minlength=g2),
                [sel_t.size],
            ]
        )
    return build_residual_graph(problem.n_nodes, *fixed, fixed_flows, (tails, heads, costs, flows))


def _skeleton(problem: Problem, fixed: FixedArcs, elements) -> ResidualGraph:
    """The graph without flow, for the dual sweeps and :func:`~projections._mincostflow.layout`."""
    g1, g2 = problem.g1, problem.g2
    labels1, labels2, n_cols = problem.groups[:3]
    degree = np.zeros(problem.n_nodes, dtype=np.int64)
    _element_degrees(elements, labels1, labels2, n_cols, g1, g2, degree)

    def fill_units(last, head, cost, ident, id0):
        _fill_element_skeleton(
            last,
            head,
            cost,
            ident,
            id0,
            elements,
            problem.values,
            labels1,
            labels2,
            n_cols,
            g1,
            g2,
            problem.factor,
            problem.multiplier,
        )

    return skeleton_graph(problem.n_nodes, *fixed, degree, elements.size, fill_units)


@njit(cache=True)
def _element_degrees(elements, labels1, labels2, n_cols, g1, g2, degree):
    """Add one to ``degree`` at both ends of every element's arc."""
    g = 0
    base = 0
    for t in range(elements.shape[0]):
        tail, head, g, base = element_ends(elements[t], labels1, labels2, n_cols, g1, g2, g, base)
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
        u, v, g, base = element_ends(e, labels1, labels2, n_cols, g1, g2, g, base)
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
