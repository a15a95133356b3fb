"""Warm start: an earlier call's support and prices in place of candidate selection.

A warm start (:class:`ExactState` from an earlier call on the same structure) replaces the
histograms and the coordinate descent when it is good enough. At the earlier prices (rescaled
to this call's units), the earlier support's own reduced costs give a first bound on how far
it is from eps-optimal; if that one passes, one pass over the input computes the exact
distance; if it is at most ``max cost / START`` the candidates are the earlier support and the
elements with reduced cost below a margin (``POOL`` times that eps), the earlier support is the
starting flow, scaling starts at that eps, and the certificate starts from an (empty) pool with
that margin. Otherwise (or when the earlier prices are off this call's scale) the call starts
cold. Inside IHT, whose iterates converge, this saves most of the passes over the input.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from projections._exact import levers
from projections._exact.elements import arc_costs, arc_ends, empty
from projections._exact.problem import Problem

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExactState:
    """Warm-start state: the optimal support and the node prices in weight units."""

    structure: object
    support: np.ndarray
    prices: np.ndarray


class WarmStart(NamedTuple):
    """A warm start that was taken.

    Attributes
    ----------
    candidates : ndarray of int64, shape (n,)
        The earlier support's usable elements and those with reduced cost below ``margin``.
    selected : ndarray of bool, shape (n,)
        Which candidates the earlier support selected: the starting flow.
    price : ndarray of int64, shape (n_nodes,)
        The earlier prices in this call's integer units.
    margin : int
        Every non-candidate has reduced cost at least this at ``price``.
    """

    candidates: np.ndarray
    selected: np.ndarray
    price: np.ndarray
    margin: int


def take_warm_start(problem: Problem, structure, state, clock: float) -> WarmStart | None:
    """The warm start from ``state`` (any object; an :class:`ExactState` of the same
    structure is used), or None: start cold."""
    if not (isinstance(state, ExactState) and _same_structure(state.structure, structure)):
        return None
    top_cost = problem.top_cost
    price = _warm_prices(state.prices, problem.state_unit, problem.n_nodes, top_cost)
    if price is None:
        return None
    if _support_violation(problem, state.support, price) > top_cost // levers.START:
        logger.debug("exact warm start: the earlier support is far from optimal; cold")
        return None
    values = problem.values
    before = state.support & (values != 0)
    near, reduced = empty(values.shape[0]), empty(values.shape[0])
    n_near, eps = _warm_candidates(
        values,
        *problem.groups,
        before,
        price,
        problem.factor,
        problem.multiplier,
        top_cost // levers.POOL_WINDOW,
        near,
        reduced,
    )
    near, reduced = near[:n_near], reduced[:n_near]
    if eps > top_cost // levers.START:
        logger.debug("exact warm start: prices off by %d, starting cold", eps)
        return None
    margin = min(max(levers.POOL * eps, top_cost >> 24), top_cost // levers.POOL_WINDOW)
    candidates = near[(reduced < margin) | before[near]]
    logger.debug(
        "exact warm start: starting flow %d-optimal, %d candidates: %.3f s",
        eps,
        candidates.size,
        time.perf_counter() - clock,
    )
    return WarmStart(candidates, before[candidates], price, margin)


def _same_structure(a, b) -> bool:
    """Whether two structures have the same elements, groups and caps."""
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


def _support_violation(problem: Problem, support, price) -> int:
    """Largest reduced cost of an element of ``support`` at ``price`` (0 if none is positive).

    A cheap first look at a warm start: the flow through ``support`` is at best that far from
    optimal, without a pass over the other elements.
    """
    values = problem.values
    chosen = np.flatnonzero(support)
    chosen = chosen[values[chosen] != 0]
    if chosen.size == 0:
        return 0
    tails, heads = arc_ends(chosen, *problem.groups[:3], problem.g1, problem.g2)
    costs = arc_costs(values, chosen, problem.factor, problem.multiplier)
    reduced = price[tails] - price[heads] - costs
    return max(0, int(reduced.max()))


def _warm_prices(prices, unit, n_nodes, max_cost):
    """Earlier prices (in weight units) in this call's integer units, or None.

    Prices only matter up to a common shift. When the new weights are on a very different
    scale, the old prices would be enormous in the new units (beyond what the overflow
    analysis of :func:`~projections._exact.problem.scale_bits` allows, or not even finite):
    the warm start is then dropped.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = prices * unit
    if np.all(np.isfinite(scaled)):
        scaled = scaled - scaled.max()
        if -scaled.min() <= n_nodes * max_cost:
            return np.round(scaled).astype(np.int64)
    logger.debug("exact: warm-start prices are off this call's scale; starting cold")
    return None


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
