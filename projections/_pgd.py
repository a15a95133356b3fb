"""``method="pgd"``: the paper's projected gradient on the primal-dual feasibility problem.

Yang et al., "On the projection operator to a three-view cardinality constrained set",
ICML 2017, §4.2 ("Equivalent Feasibility Problem Formulation" and "Iterative Algorithm").
The LP relaxation (5) of the projection and its dual (6) are glued into one feasibility
problem, which is solved as the box-constrained least-squares problem (7) by projected
gradient descent; the primal iterate is then rounded. The footnote's small random
perturbation of the weights makes the optimum a vertex with probability 1.

This is kept as a baseline for comparison: it converges linearly in theory, but the rate
depends on a Hoffman constant and on a Lipschitz constant dominated by ``||s||^2`` (the caps),
so it is slow in practice and often stops unfinished (``converged=False``) with the best
feasible rounded support it saw.
"""

from __future__ import annotations

import logging
import math
import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from projections.result import MethodOutput

__all__ = ["solve"]

logger = logging.getLogger(__name__)


def _check_options(max_iter, time_limit, tol, seed, check_every, accelerated) -> None:
    """Raise ValueError naming the valid range of any invalid option."""
    if isinstance(max_iter, bool) or not isinstance(max_iter, Integral) or max_iter < 0:
        raise ValueError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, Real)
        or math.isnan(time_limit)
        or not time_limit > 0
    ):
        raise ValueError(
            f"time_limit must be a positive number of seconds (inf allowed), got {time_limit!r}"
        )
    if (
        isinstance(tol, bool)
        or not isinstance(tol, Real)
        or not math.isfinite(tol)
        or not 0 <= tol < 1
    ):
        raise ValueError(f"tol must be a relative duality-gap tolerance in [0, 1), got {tol!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    if isinstance(check_every, bool) or not isinstance(check_every, Integral) or check_every < 1:
        raise ValueError(f"check_every must be a positive integer, got {check_every!r}")
    if not isinstance(accelerated, bool | np.bool_):
        raise ValueError(f"accelerated must be True or False, got {accelerated!r}")


def _constraints(structure, elements: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """The matrix ``A`` and caps ``s`` of LP (5), restricted to ``elements``.

    The rows are the total cap, then one indicator row per view-1 group and per view-2 group.
    A row whose cap is at least its number of elements can never bind on ``0 <= x <= 1``
    (this includes empty groups), so it is left out: the LP and its optimum are unchanged,
    while the dual loses a degenerate direction and ``||s||`` (which dominates the Lipschitz
    constant) does not grow with caps that do not matter. ``A`` may end up with no rows.
    """
    k = elements.shape[0]
    cols = np.arange(k)
    rows = []
    columns = []
    caps = []
    n_rows = 0
    if structure.total < k:
        rows.append(np.zeros(k, dtype=np.int64))
        columns.append(cols)
        caps.append(np.array([structure.total], dtype=np.float64))
        n_rows = 1
    for labels, group_caps in (
        (structure.labels1[elements], structure.caps1),
        (structure.labels2[elements], structure.caps2),
    ):
        sizes = np.bincount(labels[labels >= 0], minlength=group_caps.shape[0])
        binding = np.flatnonzero(group_caps < sizes)
        row_of_group = np.full(group_caps.shape[0] + 1, -1, dtype=np.int64)
        row_of_group[binding] = n_rows + np.arange(binding.shape[0])
        row = row_of_group[labels]  # label -1 picks the trailing -1
        member = row >= 0
        rows.append(row[member])
        columns.append(cols[member])
        caps.append(group_caps[binding].astype(np.float64))
        n_rows += binding.shape[0]
    r = np.concatenate(rows)
    c = np.concatenate(columns)
    A = sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=(n_rows, k))
    return A, np.concatenate(caps)


def _keep_top(chosen: np.ndarray, labels: np.ndarray, caps: np.ndarray, order_key) -> np.ndarray:
    """Among ``chosen`` (local indices), keep the ``caps[g]`` heaviest members of each group ``g``.

    ``order_key`` is the weight array; ``labels == -1`` means no group (nothing dropped).
    """
    lab = labels[chosen]
    # Sort by group, then by decreasing weight; rank inside the group decides who stays.
    order = np.lexsort((-order_key[chosen], lab))
    lab_sorted = lab[order]
    starts = np.flatnonzero(np.r_[True, lab_sorted[1:] != lab_sorted[:-1]])
    sizes = np.diff(np.r_[starts, lab_sorted.shape[0]])
    rank = np.arange(lab_sorted.shape[0]) - np.repeat(starts, sizes)
    keep_sorted = (lab_sorted < 0) | (rank < caps[np.maximum(lab_sorted, 0)])
    return np.sort(chosen[order[keep_sorted]])


def _round_and_repair(x, elements, structure, w) -> tuple[np.ndarray, bool]:
    """Round ``x > 0.5``; if that breaks a cap, drop the lightest elements of over-cap groups.

    Returns the local indices of a feasible support and whether the plain rounding was
    already feasible. The repair goes view 1, view 2, then the total: each pass only removes
    elements, so it never re-breaks an earlier view, and it removes exactly the surplus of
    each over-cap group (the lightest members).
    """
    chosen = np.flatnonzero(x > 0.5)
    before = chosen.shape[0]
    chosen = _keep_top(chosen, structure.labels1[elements], structure.caps1, w)
    chosen = _keep_top(chosen, structure.labels2[elements], structure.caps2, w)
    if chosen.shape[0] > structure.total:
        heaviest = np.argsort(-w[chosen], kind="stable")[: structure.total]
        chosen = np.sort(chosen[heaviest])
    return chosen, chosen.shape[0] == before


def solve(
    weights,
    structure,
    *,
    warm_start=None,
    max_iter: int = 20_000,
    time_limit: float = 10.0,
    tol: float = 1e-9,
    seed: int | None = 0,
    check_every: int = 50,
    accelerated: bool = False,
) -> MethodOutput:
    r"""Projected gradient descent on the primal-dual feasibility problem (7) of §4.2.

    With ``w = v ** 2`` (restricted to the elements with ``w > 0``; the others are never
    selected), ``A`` stacking the all-ones row (total cap) and one indicator row per view-1
    and view-2 group (each column has at most 3 nonzeros), and ``s`` the caps, LP (5) is
    ``max <w, x>  s.t.  A x <= s, 0 <= x <= 1`` and its dual (6) is
    ``min <[s; 1], y>  s.t.  [A^T I] y >= w, y >= 0`` with ``y = [u; z]``. Problem (7) is

    .. math::

        \min_{0 \le x \le 1,\; u \ge 0,\; z \ge 0}\;
        \tfrac12 \big(\langle s, u\rangle + \langle 1, z\rangle - \langle w, x\rangle\big)^2
        + \tfrac12 \big\| [\,w - A^\top u - z\,]_+ \big\|^2
        + \tfrac12 \big\| [\,A x - s\,]_+ \big\|^2 ,

    whose zero set is exactly {primal optimal x} x {dual optimal y}. Each step is
    ``z <- P_box(z - grad f(z) / L)`` with the safe Lipschitz bound
    ``L = ||[-w; s; 1]||^2 + ||A||^2 + 1`` and ``||A||^2 <= max(A A^T 1)`` (Gershgorin; ``A``
    is non-negative). The start is ``x = 0, y = 0``.

    Every ``check_every`` iterations (and at the end) ``x`` is rounded (``x > 0.5``); an
    infeasible rounding is repaired by dropping the lightest elements of every over-cap group
    (view 1, then view 2, then the total). The dual iterate is made dual feasible for the
    *unperturbed* weights, ``z' = max(z, w - A^T u)``, so ``D = <s, u> + <1, z'>`` is a valid
    upper bound on the optimum. The run stops with ``optimal=True`` as soon as the best
    feasible support ``S`` found satisfies ``D_best - w(S) <= tol * D_best``.

    Parameters
    ----------
    weights : ndarray of float64, shape (p,)
        ``v ** 2``, non-negative and finite. Not modified.
    structure : TVCSStructure
        Groups and caps over the ``p`` elements.
    warm_start : object, optional
        Accepted for a uniform kernel signature and ignored.
    max_iter : int, default 20_000
        Maximum number of gradient steps (``>= 0``).
    time_limit : float, default 10.0
        Wall-clock limit in seconds (``> 0``, ``inf`` allowed).
    tol : float, default 1e-9
        Relative duality gap, in ``[0, 1)``, at which the rounded support counts as optimal.
        The footnote's perturbation is ``w_i * (1 + (tol / 4) * U_i)`` with ``U_i ~ U[0, 1)``:
        upward, so that a dual-optimal point of the perturbed problem is dual feasible for
        ``w`` and certifies a relative gap ``<= tol / 2`` (plus the iterate's own error).
    seed : int or None, default 0
        Seed of the perturbation's random generator.
    check_every : int, default 50
        Iterations between two roundings / gap checks (``>= 1``).
    accelerated : bool, default False
        Use FISTA momentum (Beck & Teboulle 2009) with gradient-based adaptive restart
        (O'Donoghue & Candès 2015). **A deviation from the paper**, which uses plain
        projected gradient; off by default.

    Returns
    -------
    MethodOutput
        ``support`` (bool, shape (p,)) is always feasible. ``optimal`` and ``converged`` are
        both True only when the gap closed; otherwise the best feasible rounded support is
        returned and ``message`` says why the run stopped, whether the last rounding was
        feasible before repair and the relative duality gap reached; ``details`` say the same
        as ``stopped``, ``rounding_feasible`` and ``duality_gap``
        (:attr:`~projections.result.ProjectionResult.details`).

    Raises
    ------
    ValueError
        For an invalid option value or weights of the wrong shape.

    Notes
    -----
    Implementation choices not fixed by the paper: the weights scaled to a root mean square
    of 1 (so that the run does not depend on the scale of ``v``), the start point ``0``, the
    step ``1 / L``, dropping zero-weight elements and the rows of ``A`` that cannot bind (cap
    >= number of elements in the row) before building ``A`` (neither changes the LP; the
    second removes dual degeneracy that otherwise stalls the iteration when every cap is
    exactly the group size), selecting every element at once when no row is left (nothing
    binds), and the repair of infeasible roundings.
    """
    del warm_start  # accepted and ignored
    _check_options(max_iter, time_limit, tol, seed, check_every, accelerated)
    w_all = np.asarray(weights, dtype=np.float64)
    p = structure.n_elements
    if w_all.shape != (p,):
        raise ValueError(f"weights must have shape ({p},), got {w_all.shape}")
    if not np.all(np.isfinite(w_all)) or np.any(w_all < 0):
        raise ValueError("weights must be finite and non-negative (they are v ** 2)")

    support = np.zeros(p, dtype=bool)
    elements = np.flatnonzero(w_all > 0)
    if elements.size == 0 or structure.total == 0:
        return MethodOutput(
            support=support,
            optimal=True,
            iterations=0,
            converged=True,
            message="nothing to select",
        )

    start = time.perf_counter()
    w = _unit_rms(w_all[elements])  # a copy: the caller's array is never aliased
    A, s = _constraints(structure, elements)
    if s.size == 0:  # no cap binds: every element of positive weight is selected
        support[elements] = True
        return MethodOutput(support=support, optimal=True, message="no cap binds: all selected")
    problem = _Problem(w, A, s, tol=tol, seed=seed)
    descent = _Descent(problem, accelerated=accelerated)
    best = _Best(problem, elements, structure)
    iterations, stopped, certified = _iterate(
        descent,
        best,
        max_iter=max_iter,
        start=start,
        time_limit=time_limit,
        tol=tol,
        check_every=check_every,
    )
    support[elements[best.chosen]] = True
    seconds = time.perf_counter() - start
    reason = {
        "max_iter": f"reached max_iter={max_iter}",
        "time_limit": f"hit the time limit of {time_limit:g} s",
    }[stopped]
    message = _message(best, iterations, reason, certified, tol)
    details = {
        "stopped": "converged" if certified else stopped,
        "duality_gap": best.gap(),
        "rounding_feasible": bool(best.last_rounding_feasible),
    }
    logger.debug(
        "pgd: %s (%.3f s, L = %.3g, %d elements, %d rows)",
        message,
        seconds,
        problem.lipschitz,
        problem.w.shape[0],
        problem.s.shape[0],
    )
    return MethodOutput(
        support=support,
        optimal=certified,
        iterations=iterations,
        converged=certified,
        message=message,
        details=details,
    )


def _unit_rms(w: np.ndarray) -> np.ndarray:
    """``w`` (positive, shape (k,)) scaled to a root mean square of 1.

    The Lipschitz bound of :func:`solve` mixes ``||w||^2`` with the caps and the number of
    elements, so unscaled weights made the run depend on the scale of ``v`` (``10 v`` stalled
    on an empty support where ``v`` converged). Supports and relative gaps are unchanged by
    the scale; of the scales tried (largest, mean or root mean square of 1) this one left the
    smallest gaps on small Gaussian instances. The largest weight is divided out first, so
    the squares cannot overflow.
    """
    w = w / w.max()
    return w / math.sqrt(float(np.mean(w * w)))


class _Problem:
    """Problem (7) on the elements of positive weight: ``A`` (and ``A^T``), the caps ``s``, the
    weights ``w``, their perturbation ``wp`` and the step ``1 / L`` (see :func:`solve`)."""

    def __init__(self, w, A, s, *, tol: float, seed) -> None:
        self.w, self.A, self.AT, self.s = w, A, A.T.tocsr(), s
        k, m = w.shape[0], s.shape[0]
        rng = np.random.default_rng(seed)
        self.wp = w * (1.0 + 0.25 * tol * rng.random(k))  # the footnote's random perturbation
        norm_a_sq = float(np.max(A @ (self.AT @ np.ones(m)), initial=0.0))
        self.lipschitz = float(self.wp @ self.wp + s @ s + k) + norm_a_sq + 1.0
        self.step = 1.0 / self.lipschitz


class _Descent:
    """The iterate ``(x, u, z)`` of projected gradient on (7), from 0, with FISTA momentum and
    gradient-based restart when ``accelerated`` (see :func:`solve`)."""

    def __init__(self, problem: _Problem, *, accelerated: bool) -> None:
        k, m = problem.w.shape[0], problem.s.shape[0]
        self.problem, self.accelerated = problem, accelerated
        self.x, self.u, self.z = np.zeros(k), np.zeros(m), np.zeros(k)
        if accelerated:
            self.x_prev, self.u_prev, self.z_prev = self.x.copy(), self.u.copy(), self.z.copy()
            self.t_k = 1.0

    def step(self) -> None:
        """One projected gradient step, from the extrapolated point when accelerated."""
        x, u, z = self.x, self.u, self.z
        if self.accelerated:
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * self.t_k * self.t_k))
            beta = (self.t_k - 1.0) / t_next
            xa = x + beta * (x - self.x_prev)
            ua = u + beta * (u - self.u_prev)
            za = z + beta * (z - self.z_prev)
            self.x_prev, self.u_prev, self.z_prev = x, u, z
        else:
            xa, ua, za = x, u, z
        self.x, self.u, self.z = self._projected_gradient_step(xa, ua, za)
        if self.accelerated:
            # Restart the momentum when the step goes against the previous direction.
            moved = (
                (xa - self.x) @ (self.x - self.x_prev)
                + (ua - self.u) @ (self.u - self.u_prev)
                + (za - self.z) @ (self.z - self.z_prev)
            )
            self.t_k = 1.0 if moved > 0 else t_next

    def _projected_gradient_step(self, xa, ua, za):
        """``P_box((xa, ua, za) - grad f / L)`` for the objective ``f`` of (7)."""
        pb = self.problem
        A, AT, s, wp, step = pb.A, pb.AT, pb.s, pb.wp, pb.step
        excess = np.maximum(A @ xa - s, 0.0)
        shortfall = np.maximum(wp - AT @ ua - za, 0.0)
        r0 = float(s @ ua + za.sum() - wp @ xa)
        x = np.clip(xa - step * (AT @ excess - r0 * wp), 0.0, 1.0)
        u = np.maximum(ua - step * (r0 * s - A @ shortfall), 0.0)
        z = np.maximum(za - step * (r0 - shortfall), 0.0)
        return x, u, z


class _Best:
    """The best feasible rounded support seen, its weight and the best dual bound (see
    :func:`solve`), with whether the last rounding was feasible before its repair."""

    def __init__(self, problem: _Problem, elements: np.ndarray, structure) -> None:
        self.problem, self.elements, self.structure = problem, elements, structure
        self.chosen = np.zeros(0, dtype=np.int64)
        self.primal = 0.0
        self.dual = math.inf
        self.last_rounding_feasible = True

    def check(self, descent: _Descent) -> None:
        """Round ``descent``'s ``x`` and bound the optimum by its dual iterate."""
        pb = self.problem
        chosen, self.last_rounding_feasible = _round_and_repair(
            descent.x, self.elements, self.structure, pb.w
        )
        primal = float(pb.w[chosen].sum())
        if primal > self.primal or self.chosen.size == 0:
            self.chosen, self.primal = chosen, primal
        dual = float(pb.s @ descent.u + np.maximum(descent.z, pb.w - pb.AT @ descent.u).sum())
        self.dual = min(self.dual, dual)

    def gap(self) -> float:
        """The relative duality gap of the best support against the best bound."""
        return max(self.dual - self.primal, 0.0) / self.dual if self.dual > 0 else 0.0


def _iterate(descent: _Descent, best: _Best, *, max_iter, start, time_limit, tol, check_every):
    """Step until the gap closes (checked every ``check_every`` steps and at the end),
    ``max_iter`` or ``time_limit`` seconds after ``start`` (a ``time.perf_counter()`` value).

    Returns ``(iterations, stopped, certified)``, ``stopped`` why it stopped if not certified:
    ``"max_iter"`` or ``"time_limit"``.
    """
    iterations = 0
    stopped = "max_iter"
    while True:
        if iterations % check_every == 0:
            best.check(descent)
            if best.gap() <= tol:
                return iterations, stopped, True
        if iterations >= max_iter:
            break
        if time.perf_counter() - start >= time_limit:
            stopped = "time_limit"
            break
        descent.step()
        iterations += 1
    if iterations % check_every != 0:
        best.check(descent)  # the last iterate has not been looked at yet
        return iterations, stopped, best.gap() <= tol
    return iterations, stopped, False


def _message(best: _Best, iterations: int, reason: str, certified: bool, tol: float) -> str:
    rounding = "feasible" if best.last_rounding_feasible else "infeasible, repaired"
    if certified:
        return (
            f"converged after {iterations} iterations: rounded support {rounding}, "
            f"relative duality gap {best.gap():.1e} <= tol {tol:g}"
        )
    return (
        f"stopped after {iterations} iterations ({reason}): rounded support {rounding}, "
        f"relative duality gap {best.gap():.1e}"
    )
