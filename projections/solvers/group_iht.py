"""IHT and IHT-FC with greedy projections onto (sparse) overlapping group sparsity.

Jain, Rao & Dhillon, "Structured sparse regression via greedy hard-thresholding", NIPS 2016:
Algorithm 1 (IHT for group sparsity, ``w <- P_hat(w - step * grad f(w))`` with the greedy
projection ``P_hat`` of Algorithm 2, or Algorithm 3 for sparse overlapping groups) and its
"fully corrective" variant IHT-FC (section 2.2), which after each projection replaces ``w`` by
the minimiser of ``f`` on the projection's support. The default step follows the local
curvature (the paper's ``1 / L`` with ``L`` the *restricted* smoothness, estimated as
:func:`~projections.solvers.iht` does).
"""

from __future__ import annotations

import numpy as np

from projections.groups import (
    OverlappingGroups,
    _as_groups,
    project_overlapping_groups,
    project_sparse_overlapping_groups,
)
from projections.solvers._common import (
    Deadline,
    Objective,
    Projector,
    StepRule,
    check_bool,
    check_callback,
    check_int,
    check_methods,
    check_nonneg_float,
    check_step,
    check_time_limit,
    initial_point,
    lipschitz_step,
    small_change,
)
from projections.solvers._escape import ESCAPE_DOUBLINGS, FixedPointEscape
from projections.solvers._loop import Steps, run
from projections.solvers.result import SolverResult

__all__ = ["group_iht", "group_projection"]


def group_projection(groups, *, k: int, per_group: int | None = None, n_features=None):
    """The greedy projection onto ``k``-group sparsity (or SoG) as a one-argument callable.

    Parameters
    ----------
    groups : OverlappingGroups or sequence of array-like of int
        The groups. A sequence lists each group's coordinates and is checked and turned into
        an :class:`~projections.groups.OverlappingGroups` once, here.
    k : int
        Maximum number of groups, ``>= 0``.
    per_group : int, optional
        Also keep at most this many coordinates per chosen group (sparse overlapping groups,
        :func:`~projections.groups.project_sparse_overlapping_groups`); None (the default)
        keeps whole groups (:func:`~projections.groups.project_overlapping_groups`).
    n_features : int, optional
        ``p``, the length of the vectors to project, for groups given as a sequence; default
        one more than the largest index in the groups. Must not be given with an
        :class:`~projections.groups.OverlappingGroups` (it has its own).

    Returns
    -------
    callable
        ``projection(v) -> GroupProjectionResult`` for ``v`` of shape ``(p,)``, ready for
        :func:`group_iht` or :func:`~projections.solvers.iht`.

    Raises
    ------
    ValueError
        Naming ``groups`` (an empty group, a repeated or out-of-range index), ``k``,
        ``per_group`` or ``n_features``.
    """
    groups = _checked_groups(groups, n_features)
    k = check_int(k, "k", minimum=0)
    if per_group is None:
        return lambda v: project_overlapping_groups(v, groups, k=k)
    per_group = check_int(per_group, "per_group", minimum=1)
    return lambda v: project_sparse_overlapping_groups(v, groups, k=k, per_group=per_group)


def _checked_groups(groups, n_features) -> OverlappingGroups:
    """:func:`group_projection`'s ``groups`` as :class:`OverlappingGroups`, over ``n_features``
    coordinates (default: up to the largest index of a group given as a sequence)."""
    if isinstance(groups, OverlappingGroups):
        if n_features is not None:
            raise ValueError(
                f"n_features must not be given with an OverlappingGroups (it has "
                f"n_features={groups.n_features}), got {n_features!r}"
            )
        return groups
    if n_features is None:
        try:
            n_features = 1 + max(int(np.max(group, initial=0)) for group in groups)
        except (TypeError, ValueError):
            n_features = 1  # not a sequence of index lists: _as_groups says what is wrong
    return _as_groups(groups, n_features)


def group_iht(
    loss,
    projection,
    *,
    fully_corrective: bool = False,
    w0=None,
    step=None,
    max_iter: int = 500,
    tol: float = 1e-6,
    callback=None,
    time_limit: float | None = None,
    escape: int = ESCAPE_DOUBLINGS,
) -> SolverResult:
    """IHT (Algorithm 1 of Jain, Rao & Dhillon, NIPS 2016) and, optionally, IHT-FC.

    Each iteration computes::

        g       = w_t - step * grad f(w_t)
        w_{t+1} = P_hat(g)                                        (IHT)
        w_{t+1} = argmin { f(u) : supp(u) in supp(P_hat(g)) }    (IHT-FC)

    Parameters
    ----------
    loss : Loss
        ``value(w)`` and ``gradient(w)``; IHT-FC also needs ``minimize_on_support(w,
        support)`` (e.g. :class:`~projections.solvers.LeastSquares`, whose refit is a
        least-squares solve on the support's columns).
    projection : callable
        ``projection(v) -> result`` with ``result.x`` and ``result.support`` of ``v``'s shape;
        the paper's is :func:`group_projection`, greedy and so approximate.
    fully_corrective : bool, default False
        IHT-FC: refit on every projection's support.
    w0 : array-like of float, optional
        Start, shape ``loss.feature_shape``; default zeros (0 is ``k``-group sparse).
    step : float, optional
        A constant ``eta > 0``. Default: the adaptive rule (see Notes), which needs no
        constant: each iteration tries twice the step it accepted last (the first from ``1 /
        loss.lipschitz()`` if the loss has it, else from a gradient difference at ``w0``) and
        halves it until ``f(w+) <= f(w) + <grad f(w), w+ - w> + ||w+ - w||^2 / (2 step)``,
        never below ``1 / loss.lipschitz()``, where the test always holds.
    max_iter : int, default 500
        Number of iterations ``T`` at most (``>= 0``).
    tol : float, default 1e-6
        Converged when ``||w_{t+1} - w_t|| <= tol * max(||w_{t+1}||, ||w_t||)``.
    callback : callable, optional
        ``callback(iteration, w, value)`` after each iteration; True stops the run.
    time_limit : float, optional
        Stop (not converged) after this many seconds.
    escape : int, default 8
        When an iteration barely moves (the ``tol`` test), try the steps ``step * 2^k`` for
        ``k = 1 .. escape`` from the same ``w`` (each candidate refit on its support for
        IHT-FC) and go on from the first that lowers ``f`` by more than a relative ``1e-9``;
        if none does, the run has converged. ``0``: the paper's Algorithm 1 as written. As in
        :func:`~projections.solvers.iht` (Notes there).

    Returns
    -------
    SolverResult
        ``solution`` is the last iterate ``w_T`` as in the paper (with a greedy projection
        ``f`` need not decrease monotonically); ``history`` holds ``f(w_0), f(w_1), ...``;
        ``details["step_rule"]`` is ``"constant"`` or ``"adaptive"`` and ``details["escapes"]``
        the fixed-point escapes taken; ``step`` is the last step.

    Raises
    ------
    ValueError
        A bad ``step``, ``max_iter``, ``tol``, ``time_limit`` or ``w0``.
    TypeError
        ``loss`` lacks a method it needs, or ``projection``/``callback`` is not callable.

    Notes
    -----
    Theorem 3.1: under restricted strong convexity/smoothness (``alpha``, ``L``) and with
    ``k = O((L / alpha)^2 k* log(L / alpha * ||w*|| / eps))`` greedy groups, ``eta = 1 / L``,
    ``f(w_T) <= f(w*) + eps + O(gamma)`` after ``T = O(L / alpha * log(f(w_0) / eps))``
    iterations; for the linear model (Theorem 3.2) ``||w_T - w*||`` is of order ``lambda
    sqrt((s + kappa^2 k* log M) / n)``, consistent as ``n`` grows.

    *The step.* The theorem's ``L`` is the smoothness over ``k'``-group-sparse directions. For
    least squares with correlated features it is far below ``loss.lipschitz()``, the largest
    eigenvalue of ``X^T X / n``: with an AR(1) covariance of condition number ``kappa`` the
    largest eigenvalue is about ``(1 + rho) / (1 - rho)`` while a few contiguous groups see
    much less of it. The constant ``1 / loss.lipschitz()`` is then many times too short: on
    the paper's phase-transition instances (``benchmarks/overlapping_groups.py
    --paper-scale``) IHT with it, or with any constant step up to it, ends far from ``w*``
    from ``kappa = 50`` on, where the paper reports recovery up to ``kappa = 200``. The
    adaptive rule (Nesterov, "Gradient methods for minimizing composite functions", Math.
    Program., 2013: his estimate of ``L``) measures the curvature along each step, so the
    step is the restricted ``1 / L`` the theorem wants; it costs one extra projection in each
    iteration whose doubled step fails.

    *The escape.* IHT-FC refits on each support, so the gradient vanishes there and a step
    that is short for the curvature off the support keeps the support: the first support is
    then a fixed point, and the run stops on it (on the paper's phase-transition instances
    with condition number 50 and more, IHT-FC with any constant step up to ``1 /
    loss.lipschitz()`` recovered ``w*`` in at most one run of three). The escape tries longer
    steps at such a point only, keeping the refit, so ``f`` still decreases from it.
    """
    needed = ("value", "gradient") + (("minimize_on_support",) if fully_corrective else ())
    check_methods(loss, "loss", needed)
    fully_corrective = check_bool(fully_corrective, "fully_corrective")
    step = check_step(step)
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    tol = check_nonneg_float(tol, "tol")
    callback = check_callback(callback)
    time_limit = check_time_limit(time_limit)
    escape = check_int(escape, "escape", minimum=0)
    w = initial_point(loss, w0)
    proj = Projector(projection, warm_start=False)
    obj = Objective(loss, maximize=False, shape=w.shape)
    deadline = Deadline(time_limit)
    refit = loss.minimize_on_support if fully_corrective else None
    floor = lipschitz_step(loss) if step is None else None  # a constant step needs no 1 / L
    steps = _GroupIHTSteps(obj, proj, w, step, refit, tol, floor=floor, escape=escape, loss=loss)
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)


class _GroupIHTSteps(Steps):
    """Algorithm 1 (with IHT-FC's refit when ``refit`` is given), :func:`group_iht`'s side of
    the shared loop; it reports as it always has: no settings in the message."""

    name = "group_iht"
    max_iter_message = "stopped after max_iter={max_iter} iterations"
    breakdown_message = "numerical breakdown at iteration {it}: {exc}"

    def __init__(
        self, obj: Objective, proj: Projector, w, step, refit, tol, *, floor, escape, loss
    ) -> None:
        self.obj, self.proj, self.refit, self.tol = obj, proj, refit, tol
        self.escape = FixedPointEscape(escape, loss if refit is not None else None)
        self.steps = StepRule(step, floor)
        self.convergence = f"relative change <= tol={tol:g}"
        self.counters = proj.counters
        self.f = obj.f(w)

    def initial_value(self, w, support) -> float:
        return self.f

    def advance(self, it, w, support):
        g = self.obj.grad_phi(w)
        w_new, support_new, f_new = self._step(w, g)
        small = small_change(w_new, w, self.tol)
        step = self.steps.step
        found = self.escape.attempt(self.obj, self.proj, w, self.f, g, step) if small else None
        if found is not None:
            (w_new, support_new, f_new), small = found, False
        self.escape.moved(w_new, w)
        self.f, self.converged = f_new, small
        return w_new, support_new

    def _step(self, w, g):
        """``P(w - step g)`` by the step rule (refit on its support for IHT-FC), and ``f`` of
        it."""
        w_new, support_new, f_new = self.steps.take(self.obj, self.proj, w, self.f, g)
        if self.refit is not None:
            w_new = self.obj.check_array(self.refit(w_new, support_new), "minimize_on_support")
            f_new = self.obj.f(w_new)
        return w_new, support_new, f_new

    def value(self, it, w, support) -> float:
        return self.f

    def describe(self) -> str:
        return ""

    def details(self) -> dict:
        return {"step_rule": self.steps.rule, "escapes": self.escape.count}

    def step_size(self) -> float:
        return self.steps.step
