"""The scaling phases: refines from the starting eps down to 1, the certificate after each.

The candidate problem is solved by cost-scaling push-relabel (:mod:`projections._mincostflow`)
on integer costs (see :class:`~projections._exact.problem.Problem`). Each phase divides eps by
``ALPHA`` and refines on the arcs whose reduced cost is within ``ACTIVE * eps`` of zero (residual
arcs further below are saturated beforehand). A refine that needs more than ``RELABELS``
relabels per node (prices far from optimal for its eps) stops and resumes ``ALPHA`` times
coarser, with twice the allowance from then on. After every phase the certificate
(:mod:`projections._exact.certificate`) adds the violators to the graph, and scaling resumes
from the larger of eps and the worst violation; it ends when, after an ``eps = 1`` phase,
neither an inactive arc nor an element outside the graph violates 1-optimality.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from projections._exact import levers
from projections._exact.certificate import Pool, check
from projections._exact.elements import arc_costs, arc_ends
from projections._exact.graph import CandidateGraph, add_candidates
from projections._exact.problem import Problem
from projections._mincostflow import refine, select_active, worst_inactive

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Scaling:
    """What the phases change as they go.

    Attributes
    ----------
    price : ndarray of int64, shape (n_nodes,)
        Node prices (refines lower them in place).
    excess : ndarray of int64, shape (n_nodes,)
        The pseudoflow's excess at every node.
    eps : int
        The next phase runs at ``eps // ALPHA`` (at least 1).
    pool : Pool or None
        The certificate's pool.
    per_node : int
        Relabels allowed per node in a refine.
    rounds : int
        Candidate rounds: 1 plus how often candidates were added.
    refines : int
    """

    price: np.ndarray
    excess: np.ndarray
    eps: int
    pool: Pool | None
    per_node: int
    rounds: int = 1
    refines: int = 0


def admit(problem: Problem, cg: CandidateGraph, s: Scaling, slack, margin=None) -> tuple[int, int]:
    """Add the non-candidates with reduced cost below ``-slack`` to the graph (see
    :func:`~projections._exact.certificate.check`); return how many and the worst violation.

    At most ``ADMIT * (graph size + n_nodes)`` of them, the most violating: prices far from
    optimal (early phases, rank-one weights) make most elements violate, and the optimum
    needs few of them. The others stay outside, and the next check is a full pass (no pool),
    which finds them again if they still violate."""
    bad, worst, s.pool = check(problem, cg, s.price, s.pool, slack, margin)
    limit = int(levers.ADMIT * (cg.elements.size + problem.n_nodes))
    if bad.size > limit:
        bad = _most_violating(problem, bad, s.price, limit)
        s.pool = None
    if bad.size:
        add_candidates(problem, cg, bad)
        s.rounds += 1
    return bad.size, worst


def _most_violating(problem: Problem, bad: np.ndarray, price: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` elements of ``bad`` with the lowest reduced cost at ``price``, in order of
    index."""
    tails, heads = arc_ends(bad, *problem.groups[:3], problem.g1, problem.g2)
    reduced = (
        price[tails]
        - price[heads]
        - arc_costs(problem.values, bad, problem.factor, problem.multiplier)
    )
    return np.sort(bad[np.argpartition(reduced, k - 1)[:k]])


def scale_to_optimum(problem: Problem, cg: CandidateGraph, s: Scaling) -> None:
    """Run phases until the circulation is optimal on the full graph, with its certificate."""
    while True:
        _phases(problem, cg, s)
        graph = cg.graph
        worst = worst_inactive(
            graph.first,
            graph.last,
            graph.act,
            graph.head,
            graph.rescap,
            graph.cost,
            s.price,
            graph.guard,
        )
        if worst > 1:
            logger.debug("exact restart at eps %d: inactive arcs not 1-optimal", worst)
            s.eps = worst
            continue
        n_bad, worst = admit(problem, cg, s, 1)
        if n_bad == 0:
            return
        s.eps = worst
        logger.debug("exact restart at eps %d after %d violators", worst, n_bad)


def _phases(problem: Problem, cg: CandidateGraph, s: Scaling) -> None:
    """Refine from ``s.eps`` down to eps 1, adding the certificate's violators after each."""
    # Locals bound once: this loop runs some ten times per call and a pass can be short
    # enough on small inputs for attribute look-ups to show.
    n_nodes, top_cost = problem.n_nodes, problem.top_cost
    alpha, active = levers.ALPHA, levers.ACTIVE
    price, excess = s.price, s.excess  # (updated in place; cg.graph may be rebuilt)
    eps = s.eps
    clock = time.perf_counter()
    while eps > 1:
        eps = max(1, eps // alpha)
        n_active = select_active(*cg.graph, price, active * eps, excess)
        selected = time.perf_counter()
        # A refine that needs many relabels per node is far from its prices' optimum
        # (starting prices that were off): it stops and resumes at a larger eps.
        budget = s.per_node * n_nodes if eps < top_cost else np.iinfo(np.int64).max
        pushes, relabels, finished = refine(*cg.graph, price, eps, excess, budget)
        s.refines += 1
        solved = time.perf_counter()
        if not finished:
            logger.debug(
                "exact refine eps %d stopped after %d relabels (%.3f s): resuming at %d",
                eps,
                relabels,
                solved - selected,
                eps * alpha,
            )
            eps *= alpha * alpha
            s.per_node = 2 * max(1, s.per_node)  # (so that scaling always ends)
            clock = time.perf_counter()
            continue
        n_bad, worst = admit(problem, cg, s, eps)
        logger.debug(
            "exact refine eps %d: %d active arcs in %.3f s, %d pushes, %d relabels, %.3f s; "
            "%d violators (worst %d) added, %d candidates, in %.3f s",
            eps,
            n_active // 2,
            selected - clock,
            pushes,
            relabels,
            solved - selected,
            n_bad,
            worst,
            cg.elements.size,
            time.perf_counter() - solved,
        )
        if n_bad:  # the flow is only worst-optimal on the new graph: rescale from there
            eps = max(eps, worst)
        clock = time.perf_counter()
    s.eps = eps
