"""Iterative hard thresholding (IHT) and its stochastic variant onto a structured-sparsity set.

Algorithm 1 of Yang et al., "On the projection operator to a three-view cardinality
constrained set", ICML 2017: ``w <- P(w - step * grad f(w))`` with ``P`` the Euclidean
projection onto the constraint set (for example :func:`~projections.solvers.tvcs_projection`).
The stochastic variant replaces the gradient by a stochastic estimate (Nguyen, Needell &
Woolf, "Linear convergence of stochastic iterative greedy algorithms with sparse
constraints", 2014).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from projections.solvers._common import (
    MAX_HALVINGS,
    Breakdown,
    Deadline,
    Objective,
    Projector,
    check_bool,
    check_callback,
    check_choice,
    check_int,
    check_methods,
    check_nonneg_float,
    check_step,
    check_time_limit,
    initial_backtracking_step,
    initial_point,
    lipschitz_step,
    small_change,
    stop_reason,
    sufficient_decrease,
)
from projections.solvers.result import SolverResult

__all__ = ["SCHEDULES", "iht", "stochastic_iht"]

logger = logging.getLogger(__name__)

#: Step schedules of :func:`stochastic_iht`.
SCHEDULES = ("constant", "inv_sqrt")


def iht(
    loss,
    projection,
    *,
    w0=None,
    step=None,
    maximize: bool = False,
    max_iter: int = 500,
    tol: float = 1e-6,
    warm_start: bool = True,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """Iterative hard thresholding: minimise (or maximise) ``f`` over a structured-sparsity set.

    Each iteration (Yang et al., ICML 2017, Algorithm 1) computes::

        g       = grad f(w_t)
        z_t     = w_t - step * g        (w_t + step * g when maximize=True)
        w_{t+1} = P(z_t)

    Parameters
    ----------
    loss : Loss
        Any object with ``value(w) -> float`` and ``gradient(w) -> ndarray`` (same shape as
        ``w``); see :mod:`projections.solvers.losses`. Optional ``lipschitz()`` sets the
        default step and ``feature_shape`` the default ``w0``.
    projection : callable
        ``projection(v) -> result`` with ``result.x`` and ``result.support`` of ``v``'s
        shape, e.g. :func:`~projections.solvers.tvcs_projection`. If it accepts a
        ``warm_start`` keyword, see ``warm_start`` below.
    w0 : array-like of float, optional
        Starting point, shape ``loss.feature_shape`` (or flat). Default: zeros of
        ``loss.feature_shape``. Not modified and not projected: start from a feasible point
        (zero is) for the monotonicity property below.
    step : float, optional
        Constant step size ``> 0``. Default: ``1 / loss.lipschitz()`` if the loss has that
        method; otherwise a backtracking rule: the first trial is ``1 / L_local`` from a
        gradient difference at ``w0``, and a trial ``w+`` is accepted when
        ``phi(w+) <= phi(w) + <grad phi(w), w+ - w> + ||w+ - w||^2 / (2 step)`` (``phi = f``,
        or ``-f`` when maximising), else the step is halved (it never grows again).
    maximize : bool, default False
        Ascend ``f`` instead of descending it.
    max_iter : int, default 500
        Maximum number of iterations (``>= 0``; 0 returns ``w0``).
    tol : float, default 1e-6
        Converged when ``||w_{t+1} - w_t|| <= tol * max(||w_{t+1}||, ||w_t||)``.
    warm_start : bool, default True
        Pass the previous projection's ``result.warm_start`` to the next call as
        ``projection(z, warm_start=...)`` (only if the projection accepts that keyword).
    callback : callable, optional
        ``callback(iteration, w, value)`` after every iteration (``iteration`` from 1, ``w`` a
        read-only view, ``value = f(w)``); returning True stops the run.
    time_limit : float, optional
        Stop (not converged) after this many seconds.

    Returns
    -------
    SolverResult
        ``history`` holds ``f(w_0), f(w_1), ...``.

    Raises
    ------
    ValueError
        Non-positive ``step``, negative ``max_iter`` or ``tol``, a ``w0`` of the wrong shape,
        or a gradient of the wrong shape.
    TypeError
        ``loss`` lacks ``value``/``gradient``, or ``projection``/``callback`` is not callable.

    Notes
    -----
    With an exact projection, a feasible ``w_t`` and ``step <= 1 / L``, ``w_{t+1}`` minimises
    the quadratic upper bound of ``f`` at ``w_t`` over the set, so ``f`` never increases
    (the backtracking rule enforces the same bound). With an approximate projection (e.g.
    ``"greedy"``) this can fail. Under RIP-type conditions the iterates converge linearly to
    a ball around the true sparse model (Yang et al., 2017, section 3; Nguyen et al., 2014).
    If the loss or the projection produces NaN or infinity the run stops and returns the
    last finite iterate.
    """
    check_methods(loss, "loss", ("value", "gradient"))
    step = check_step(step)
    maximize = check_bool(maximize, "maximize")
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    tol = check_nonneg_float(tol, "tol")
    warm_start = check_bool(warm_start, "warm_start")
    callback = check_callback(callback)
    time_limit = check_time_limit(time_limit)
    w = initial_point(loss, w0)
    proj = Projector(projection, warm_start=warm_start)
    obj = Objective(loss, maximize=maximize, shape=w.shape)
    deadline = Deadline(time_limit)

    rule = "constant"
    if step is None:
        step = lipschitz_step(loss)
        rule = "1/L" if step is not None else "backtracking"
    backtracking = step is None

    f = obj.f(w)
    history = [f]
    support = w != 0
    converged = False
    message = f"max_iter ({max_iter}) reached"
    done = 0
    try:
        for it in range(1, max_iter + 1):
            g = obj.grad_phi(w)
            if backtracking:
                if step is None:
                    step = initial_backtracking_step(obj, w, g)
                x, sup, f_new, step = _backtracking_step(obj, proj, w, obj.sign * f, g, step)
            else:
                x, sup = proj(w - step * g)
                f_new = obj.f(x)
            history.append(f_new)
            small = small_change(x, w, tol)
            w, support, f, done = x, sup, f_new, it
            logger.debug("iht iteration %d: f=%.6g step=%.3g", it, f, step)
            reason, converged = stop_reason(
                it=it,
                w=w,
                value=f,
                callback=callback,
                converged=small,
                convergence=f"relative change <= tol={tol:g}",
                deadline=deadline,
                time_limit=time_limit,
            )
            if reason is not None:
                message = reason
                break
    except Breakdown as exc:
        message = f"stopped at iteration {done + 1}: {exc}; returned the last finite iterate"
        logger.warning("iht: %s", message)

    result = SolverResult(
        solution=w,
        support=support,
        iterations=done,
        history=np.asarray(history, dtype=np.float64),
        history_iterations=np.arange(len(history), dtype=np.int64),
        converged=converged,
        message=f"{message} (step rule: {rule})",
        seconds=deadline.elapsed(),
        projection_seconds=proj.counters["seconds"],
        n_projections=proj.counters["calls"],
        n_warm_started=proj.counters["warm_started"],
        step=step,
        objective=f,
    )
    logger.info("iht: %s; f=%.6g after %d iterations", result.message, f, done)
    return result


def _backtracking_step(obj: Objective, proj: Projector, w, phi_w: float, g, step: float):
    """One IHT step with the quadratic-upper-bound backtracking rule (see :func:`iht`)."""
    for _ in range(MAX_HALVINGS):
        x, sup = proj(w - step * g)
        try:
            f_x = obj.f(x)
        except Breakdown:
            step *= 0.5
            continue
        if sufficient_decrease(obj.sign * f_x, phi_w, g, x - w, step):
            return x, sup, f_x, step
        step *= 0.5
    raise Breakdown(f"backtracking found no acceptable step after {MAX_HALVINGS} halvings")


def _make_rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise ValueError(f"seed must be None, an int or a numpy Generator, got {seed!r}")
    if seed is not None and seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed!r}")
    return np.random.default_rng(seed)


def stochastic_iht(
    oracle,
    projection,
    *,
    w0=None,
    step=None,
    schedule: str = "constant",
    maximize: bool = False,
    max_iter: int = 1000,
    tol: float | None = None,
    patience: int = 10,
    eval_every: int = 1,
    keep_best: bool = True,
    seed=None,
    warm_start: bool = True,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """Stochastic IHT: IHT with a stochastic gradient estimate.

    Each iteration (Yang et al., ICML 2017, section 3; Nguyen, Needell & Woolf 2014)::

        g       = oracle.stochastic_gradient(w_t, rng)     (E[g] = grad f(w_t))
        w_{t+1} = P(w_t - step_t * g)                      (+ step_t * g when maximize=True)

    Parameters
    ----------
    oracle : StochasticOracle
        Any object with ``stochastic_gradient(w, rng) -> ndarray`` (same shape as ``w``).
        Optional: ``value(w)`` (recorded in ``history`` and used to keep the best iterate),
        ``stochastic_lipschitz()`` (default step), ``feature_shape`` (default ``w0``).
    projection : callable
        As for :func:`iht`.
    w0 : array-like of float, optional
        Starting point; default zeros of ``oracle.feature_shape``. Not modified.
    step : float, optional
        Base step ``> 0``. Default ``1 / oracle.stochastic_lipschitz()``; required when the
        oracle has no such method (backtracking on noisy gradients is unsound).
    schedule : {"constant", "inv_sqrt"}, default "constant"
        ``step_t = step`` or ``step / sqrt(t)`` for iteration ``t = 1, 2, ...``.
    maximize : bool, default False
        Ascend instead of descend.
    max_iter : int, default 1000
        Number of iterations (``>= 0``).
    tol : float, optional
        If given, converged once ``||w_{t+1} - w_t|| <= tol * max(||w_{t+1}||, ||w_t||)``
        has held for ``patience`` consecutive iterations. Default: run ``max_iter``
        iterations (a single small step may just be a lucky mini-batch).
    patience : int, default 10
        See ``tol``.
    eval_every : int, default 1
        Evaluate ``oracle.value`` at iteration 0, every ``eval_every`` iterations, and at the
        last one (a full evaluation can cost as much as a full gradient).
    keep_best : bool, default True
        Return the evaluated iterate with the best value (lowest, or highest when
        maximising) instead of the last one. Needs ``oracle.value``.
    seed : int, numpy.random.Generator or None
        Randomness of the mini-batches; a fixed int makes the run reproducible.
    warm_start : bool, default True
        As for :func:`iht`.
    callback : callable, optional
        ``callback(iteration, w, value)`` after every iteration; ``value`` is ``None`` when
        not evaluated at that iteration. Returning True stops the run.
    time_limit : float, optional
        Stop (not converged) after this many seconds.

    Returns
    -------
    SolverResult
        ``history`` / ``history_iterations`` hold the evaluated values; ``objective`` is the
        value of ``solution``.

    Raises
    ------
    ValueError
        Bad ``schedule``, non-positive ``step``, negative ``max_iter``, no ``step`` and no
        ``stochastic_lipschitz``, bad ``seed``, wrong shapes.
    TypeError
        ``oracle`` lacks ``stochastic_gradient``, or a non-callable projection/callback.
    """
    check_methods(oracle, "oracle", ("stochastic_gradient",))
    step = check_step(step)
    schedule = check_choice(schedule, "schedule", SCHEDULES)
    maximize = check_bool(maximize, "maximize")
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    tol = check_nonneg_float(tol, "tol", allow_none=True)
    patience = check_int(patience, "patience", minimum=1)
    eval_every = check_int(eval_every, "eval_every", minimum=1)
    keep_best = check_bool(keep_best, "keep_best")
    warm_start = check_bool(warm_start, "warm_start")
    callback = check_callback(callback)
    time_limit = check_time_limit(time_limit)
    rng = _make_rng(seed)
    w = initial_point(oracle, w0)
    if step is None:
        step = lipschitz_step(oracle, "stochastic_lipschitz")
        if step is None:
            raise ValueError(
                f"step is required: {type(oracle).__name__} has no stochastic_lipschitz() "
                f"to derive a default step from"
            )
    proj = Projector(projection, warm_start=warm_start)
    obj = Objective(oracle, maximize=maximize, shape=w.shape)
    deadline = Deadline(time_limit)
    has_value = callable(getattr(oracle, "value", None))

    history: list[float] = []
    history_it: list[int] = []
    support = w != 0
    best = None  # (phi, iteration, w, support, f)

    def record(it: int, w_it, sup_it) -> float:
        nonlocal best
        f_it = obj.f(w_it)
        history.append(f_it)
        history_it.append(it)
        if keep_best and (best is None or obj.sign * f_it < best[0]):
            best = (obj.sign * f_it, it, w_it, sup_it, f_it)
        return f_it

    converged = False
    message = f"max_iter ({max_iter}) reached"
    done = 0
    quiet = 0
    step_t = step
    try:
        if has_value:
            record(0, w, support)
        for it in range(1, max_iter + 1):
            step_t = step if schedule == "constant" else step / math.sqrt(it)
            g = obj.stochastic_grad_phi(w, rng)
            x, sup = proj(w - step_t * g)
            quiet = quiet + 1 if tol is not None and small_change(x, w, tol) else 0
            w, support, done = x, sup, it
            value = None
            if has_value and (it % eval_every == 0 or it == max_iter):
                value = record(it, w, support)
            reason, converged = stop_reason(
                it=it,
                w=w,
                value=value,
                callback=callback,
                converged=tol is not None and quiet >= patience,
                convergence=f"relative change <= tol={tol} for {patience} iterations",
                deadline=deadline,
                time_limit=time_limit,
            )
            if reason is not None:
                message = reason
                break
        if has_value and (not history_it or history_it[-1] != done):
            record(done, w, support)
    except Breakdown as exc:
        message = f"stopped at iteration {done + 1}: {exc}; returned the last finite iterate"
        logger.warning("stochastic_iht: %s", message)

    objective = history[-1] if history and history_it[-1] == done else float("nan")
    if best is not None and best[1] != done:
        _, best_it, w, support, objective = best
        message = f"{message}; returned the best iterate, from iteration {best_it}"
    result = SolverResult(
        solution=w,
        support=support,
        iterations=done,
        history=np.asarray(history, dtype=np.float64),
        history_iterations=np.asarray(history_it, dtype=np.int64),
        converged=converged,
        message=f"{message} (schedule: {schedule}, base step {step:.3g})",
        seconds=deadline.elapsed(),
        projection_seconds=proj.counters["seconds"],
        n_projections=proj.counters["calls"],
        n_warm_started=proj.counters["warm_started"],
        step=step_t,
        objective=objective,
    )
    logger.info("stochastic_iht: %s", result.message)
    return result
