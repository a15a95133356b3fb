"""The exact projection, top to bottom: :func:`solve`."""

from __future__ import annotations

import logging
import time

import numpy as np

from projections._dual import dual_prices
from projections._exact import levers
from projections._exact.candidates import cold_candidates
from projections._exact.certificate import empty_pool
from projections._exact.graph import CandidateGraph, candidate_graph
from projections._exact.phases import Scaling, admit, scale_to_optimum
from projections._exact.problem import Problem, load
from projections._exact.support import read_support
from projections._exact.warm_start import ExactState, WarmStart, take_warm_start
from projections._mincostflow import layout, start_eps
from projections.result import MethodOutput

logger = logging.getLogger(__name__)


def solve(values, structure, *, warm_start=None) -> MethodOutput:
    """Exact projection; see :mod:`projections._exact`.

    Parameters
    ----------
    values : ndarray, shape (p,)
        ``v`` (real; converted to float64). The weights ``v ** 2`` are computed on the fly,
        never stored.
    structure : TVCSStructure
    warm_start : ExactState, optional
        From an earlier call with the same structure.

    Returns
    -------
    MethodOutput
        The optimal support, shape (p,), an :class:`ExactState` for the next call, and
        ``details`` (:attr:`~projections.result.ProjectionResult.details`).
    """
    clock = time.perf_counter()
    support = np.zeros(structure.n_elements, dtype=bool)
    problem = load(values, structure)
    if problem is None:
        return MethodOutput(support=support, optimal=True, message="nothing to select")
    warm = take_warm_start(problem, structure, warm_start, clock)
    if warm is None:
        cg, scaling = _cold_start(problem, clock)
    else:
        cg, scaling = _warm_start(problem, warm)
    logger.debug("exact setup and candidate graph: %.3f s", time.perf_counter() - clock)
    scale_to_optimum(problem, cg, scaling)
    read_support(problem, cg, support)
    prices = scaling.price.astype(np.float64) / problem.state_unit
    details = {
        "candidate_rounds": int(scaling.rounds),
        "candidate_elements": int(cg.elements.size),
        "warm_started": warm is not None,
    }
    return MethodOutput(
        support=support,
        optimal=True,
        iterations=scaling.refines,
        message=f"optimal: {'warm start, ' if warm is not None else ''}{scaling.rounds} "
        f"candidate round(s), {cg.elements.size} candidate elements of {support.size}, "
        "certificate on all",
        warm_start=ExactState(structure, support.copy(), prices),
        details=details,
    )


def _warm_start(problem: Problem, warm: WarmStart) -> tuple[CandidateGraph, Scaling]:
    """The graph with the earlier support's flow; the first phase runs ``ALPHA`` times below
    its eps-optimality, and the certificate starts from the (empty) pool of the candidate
    pass: every element with reduced cost below the margin is a candidate."""
    cg = candidate_graph(problem, warm.candidates, warm.selected)
    graph, price = cg.graph, warm.price
    eps = start_eps(graph.first, graph.last, graph.head, graph.rescap, graph.cost, price)
    pool = empty_pool(price.copy(), warm.margin)
    excess = np.zeros(problem.n_nodes, dtype=np.int64)
    return cg, Scaling(price, excess, eps, pool, levers.RELABELS)


def _cold_start(problem: Problem, clock: float) -> tuple[CandidateGraph, Scaling]:
    """Candidates from the histograms, starting prices from coordinate descent on the LP dual
    (:mod:`projections._dual`), the near-admissible non-candidates added, and the skeleton
    graph laid out for the first phase."""
    candidates, lam = cold_candidates(problem, clock)
    cg = candidate_graph(problem, candidates)
    logger.debug("exact setup and skeleton graph: %.3f s", time.perf_counter() - clock)
    price = _dual_start(problem, cg, lam)
    # The first phase runs at scale // START, where the scale is that of the costs that are
    # close calls: top_cost, unless most prices are far below it (heavy tails: the heaviest
    # weights are then selected anyway, and an eps set by them would leave every decision
    # near the prices unresolved in the first phases). The total cap's price ``lam`` (the
    # source's) counts too: when the budget binds, most group prices are 0 and ``lam`` alone
    # says where the close calls are.
    g1, g2 = problem.g1, problem.g2
    close = max(
        int(np.percentile(np.abs(price[:g1]), 90)) if g1 else 0,
        int(np.percentile(np.abs(price[g1 : g1 + g2]), 90)) if g2 else 0,
        int(price[g1 + g2]),
    )
    scale = min(problem.top_cost, 4 * close)
    eps = max(1, scale // levers.START) * levers.ALPHA
    excess = np.zeros(problem.n_nodes, dtype=np.int64)
    scaling = Scaling(price, excess, eps, None, levers.RELABELS)
    logger.debug("exact dual prices: %.3f s", time.perf_counter() - clock)
    step = eps // levers.ALPHA  # the first phase's eps
    if levers.AHEAD:
        clock = time.perf_counter()
        n_near, _ = admit(problem, cg, scaling, -int(levers.AHEAD * step), levers.POOL * step)
        logger.debug(
            "exact: %d near-admissible elements added in %.3f s",
            n_near,
            time.perf_counter() - clock,
        )
    # The graph is a skeleton without flow (the near-admissible arcs included): saturate and
    # lay out its arcs as the first phase's select_active would.
    layout(cg.graph, price, levers.ACTIVE * step, excess, cg.fixed.caps)
    return cg, scaling


def _dual_start(problem: Problem, cg: CandidateGraph, lam: float) -> np.ndarray:
    """Node prices (int64, shape (n_nodes,)) from ``SWEEPS`` sweeps of coordinate descent
    over the candidate graph, from the total cap's price ``lam`` (weight units)."""
    graph, groups = cg.graph, problem.groups
    _, price = dual_prices(
        graph.first,
        graph.last,
        graph.head,
        graph.cost,
        graph.ident,
        problem.n_fixed,
        groups.caps1,
        groups.caps2,
        problem.total,
        np.zeros(problem.g1 + 1, dtype=np.int64),
        np.zeros(problem.g2 + 1, dtype=np.int64),
        np.int64(round(lam * problem.unit)),
        levers.SWEEPS,
    )
    return price
