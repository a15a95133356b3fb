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
    Breakdown,
    Deadline,
    Objective,
    Projector,
    StepRule,
    check_bool,
    check_callback,
    check_choice,
    check_finite_float,
    check_int,
    check_methods,
    check_nonneg_float,
    check_step,
    check_time_limit,
    initial_point,
    lipschitz_step,
    readonly,
    small_change,
)
from projections.solvers._escape import ESCAPE_DOUBLINGS, FixedPointEscape, can_debias
from projections.solvers._loop import History, Steps, run
from projections.solvers.result import SolverResult

__all__ = ["SCHEDULES", "SCHEDULE_SHIFT", "iht", "stochastic_iht"]

logger = logging.getLogger(__name__)

#: Step schedules of :func:`stochastic_iht`.
SCHEDULES = ("constant", "inv_sqrt", "inv_sqrt_shifted")

#: ``"inv_sqrt_shifted"`` steps ``step / sqrt(1 + t / SCHEDULE_SHIFT)``: the decay of
#: ``"inv_sqrt"`` without its fast start, for runs of a few tens of steps (the tenth step is
#: still ``step / sqrt(2)``, where ``"inv_sqrt"`` is down to ``step / 3.2``).
SCHEDULE_SHIFT = 10.0


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
    escape: int = ESCAPE_DOUBLINGS,
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
        Constant step size ``> 0``. Default: the adaptive rule (see Notes): each iteration
        first tries twice the step it accepted last (the first one starts from ``1 /
        loss.lipschitz()`` if the loss has that method, else from ``1 / L_local``, a gradient
        difference at ``w0``) and halves it until ``phi(w+) <= phi(w) + <grad phi(w), w+ - w>
        + ||w+ - w||^2 / (2 step)`` holds (``phi = f``, or ``-f`` when maximising); with a
        ``lipschitz()`` it never goes below ``1 / L``, where the test always holds.
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
    escape : int, default 8
        Escape from fixed points (see Notes): when an iteration barely moves (the ``tol``
        test) or, for a loss with ``minimize_on_support`` when minimising, keeps a support
        it can debias (at most half as many elements as the loss has samples), try the
        steps ``step * 2^k`` for ``k = 1 .. escape``; the first whose candidate lowers
        ``phi`` (``f``, or ``-f`` when maximising) by more than a relative ``1e-9`` becomes
        the next iterate and the run goes on; if none does and the iteration barely moved,
        the run has converged. ``0`` turns it off (plain Algorithm 1).

    Returns
    -------
    SolverResult
        ``history`` holds ``f(w_0), f(w_1), ...``; ``details`` hold ``step_rule``
        (``"constant"`` or ``"adaptive"``) and ``escapes`` (fixed-point escapes taken), besides
        ``returned_iteration``; ``step`` is the last step taken.

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
    (the adaptive rule enforces the same bound). With an approximate projection (e.g.
    ``"greedy"``) this can fail. Under RIP-type conditions the iterates converge linearly to
    a ball around the true sparse model (Yang et al., 2017, section 3; Nguyen et al., 2014).
    If the loss or the projection produces NaN or infinity the run stops and returns the
    last finite iterate.

    *The adaptive step.* ``1 / L`` is the worst curvature of ``f`` over all directions and
    points; along sparse directions, and for the squared hinge wherever few samples are inside
    the margin, the curvature is much smaller, so ``1 / L`` creeps (issue 15: on Figure 3's
    instances IHT under TVCS caps had not converged after 500 iterations, and on load_digits
    it ended on supports whose best loss was several times GradMP's). The rule tries twice
    the last step and halves it until the quadratic upper-bound test above passes (Nesterov,
    "Gradient methods for minimizing composite functions", Math. Program., 2013: his adaptive
    estimate of ``L``), so the step follows the local curvature and ``phi`` still never
    increases. It costs one extra projection in each iteration whose doubled step fails.

    *Fixed points and the escape.* A feasible ``w`` with ``P(w - step * g) = w`` need not be
    optimal. With ``g`` zero on ``supp(w)`` (``w`` is the minimiser on its support), the
    projection compares ``|w_i|`` on the support with ``step * |g_j|`` off it. Top-k brings
    ``j`` in as soon as ``step * |g_j|`` beats the smallest ``|w_i|`` anywhere; a TVCS
    projection with ``j``'s row and column full can only bring it in by dropping an entry of
    that row or column (or a chain of exchanges), so ``step * |g_j|`` must beat the smallest
    ``|w_i|`` there, which can be much larger (issue 15's instance at n = 400: ``step *
    |g_j|`` up to 0.20 off the support, 0.042 the smallest kept ``|w_i|``, and yet no
    exchange). The Lipschitz step ``1 / L`` is the worst case over all directions (``L =
    sigma_max(A)^2 / n``, about 4 for a square Gaussian design) while on sparse directions
    the curvature is near 1 (the restricted-isometry scale), so ``1 / L`` is up to 4 times
    too short to make the exchanges and IHT stops on a wrong support (issue 15,
    ``docs/benchmarks/figure2.md``). The escape tries longer steps ``step * 2^k`` only at
    such a point (or, with debiasing, once an iteration keeps the support, so that the run
    does not first creep to the fixed point at the rate of ``1 / L``), and not again from
    the same ``w`` once it found nothing; each candidate is ``P(w - step_k * g)``, replaced,
    when minimising a loss with ``minimize_on_support`` (e.g.
    :class:`~projections.solvers.LeastSquares`), by the minimiser on that candidate's
    support, the debiasing step of hard thresholding pursuit (Foucart, "Hard thresholding
    pursuit: an algorithm for compressive sensing", SIAM J. Numer. Anal., 2011). A candidate
    is taken only if it lowers ``phi``, so ``phi`` still never increases. Normalised IHT
    (Blumensath & Davies, "Normalized iterative hard thresholding: guaranteed stability and
    performance", IEEE J. Sel. Topics Signal Process., 2010) adapts the step to the same
    restricted curvature at every iteration.
    """
    check_methods(loss, "loss", ("value", "gradient"))
    step = check_step(step)
    maximize = check_bool(maximize, "maximize")
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    tol = check_nonneg_float(tol, "tol")
    warm_start = check_bool(warm_start, "warm_start")
    callback = check_callback(callback)
    time_limit = check_time_limit(time_limit)
    escape = check_int(escape, "escape", minimum=0)
    w = initial_point(loss, w0)
    proj = Projector(projection, warm_start=warm_start)
    obj = Objective(loss, maximize=maximize, shape=w.shape)
    deadline = Deadline(time_limit)
    steps = _IHTSteps(loss, proj, obj, w, step=step, tol=tol, escape=escape, maximize=maximize)
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)


class _IHTSteps(Steps):
    """IHT's side of the shared loop (see :func:`iht`): the step and its rule, the value of the
    iterate, and the escape's state (how many, and whether the last one from this ``w`` failed).
    """

    name = "iht"

    def __init__(self, loss, proj: Projector, obj: Objective, w, *, step, tol, escape, maximize):
        self.loss, self.proj, self.obj, self.tol = loss, proj, obj, tol
        self.counters = proj.counters
        self.convergence = f"relative change <= tol={tol:g}"
        self.steps = StepRule(step, lipschitz_step(loss) if step is None else None)
        self.f = obj.f(w)
        self.debias = not maximize and callable(getattr(loss, "minimize_on_support", None))
        self.escape = FixedPointEscape(escape, loss if self.debias else None)

    def initial_value(self, w, support) -> float:
        return self.f

    def advance(self, it, w, support):
        g = self.obj.grad_phi(w)
        x, sup, f_new = self.steps.take(self.obj, self.proj, w, self.obj.sign * self.f, g)
        small = small_change(x, w, self.tol)
        stalled = small or (
            self.debias and can_debias(self.loss, sup) and np.array_equal(sup, support)
        )
        phi_w, step = self.obj.sign * self.f, self.steps.step
        found = self.escape.attempt(self.obj, self.proj, w, phi_w, g, step) if stalled else None
        if found is not None:
            (x, sup, f_new), small = found, False
        self.escape.moved(x, w)
        self.f, self.converged = f_new, small
        logger.debug("iht iteration %d: f=%.6g step=%.3g", it, f_new, self.steps.step)
        return x, sup

    def value(self, it, w, support) -> float:
        return self.f

    def describe(self) -> str:
        return f"step rule: {self.steps.rule}; {self.escape.count} fixed-point escapes"

    def details(self) -> dict:
        return {"step_rule": self.steps.rule, "escapes": self.escape.count}

    def step_size(self) -> float | None:
        return self.steps.step


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
    evaluate=None,
    w0_value: float | None = None,
    n_evals_no_change: int | None = None,
    min_improvement: float = 0.0,
    seed=None,
    warm_start: bool = True,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """Stochastic IHT: IHT with a stochastic gradient estimate.

    Each iteration (Yang et al., ICML 2017, section 3; Nguyen, Needell & Woolf 2014)::

        g       = oracle.stochastic_gradient(w_t, rng)     (E[g] = grad f(w_t))
        w_{t+1} = P(w_t - step_t * g)                      (+ step_t * g when maximize=True)

    or, when the oracle has ``proposal``, ``(z, y) = oracle.proposal(w_t, rng, step_t)`` and
    ``w_{t+1}`` is ``y`` on the support of ``P(z)`` and 0 elsewhere.

    Parameters
    ----------
    oracle : StochasticOracle
        Any object with ``stochastic_gradient(w, rng) -> ndarray`` (same shape as ``w``), or
        with ``proposal(w, rng, step) -> (z, y)``, both of ``w``'s shape: the point to project
        and the unprojected next iterate, a step of size ``step`` in the direction of
        optimisation (ascent when ``maximize=True``); it must not modify ``w``. A proposal
        lets the oracle project something other than the step itself: for a projection onto
        a box intersected with a sparsity set, ``z`` scores each coordinate's gain from being
        kept and ``y`` is the step clipped to the box. When it has both, ``proposal`` is used.
        Optional: ``value(w)`` (recorded in ``history`` and used to keep the best iterate),
        ``stochastic_lipschitz()`` (default step), ``feature_shape`` (default ``w0``).
    projection : callable
        As for :func:`iht`.
    w0 : array-like of float, optional
        Starting point; default zeros of ``oracle.feature_shape``. Not modified.
    step : float, optional
        Base step ``> 0``. Default ``1 / oracle.stochastic_lipschitz()``; required when the
        oracle has no such method (backtracking on noisy gradients is unsound).
    schedule : {"constant", "inv_sqrt", "inv_sqrt_shifted"}, default "constant"
        ``step_t = step``, ``step / sqrt(t)`` or ``step / sqrt(1 + t / SCHEDULE_SHIFT)``
        (:data:`SCHEDULE_SHIFT` is 10) for iteration ``t = 1, 2, ...``.
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
        Evaluate the iterate at iteration 0, every ``eval_every`` iterations, and at the last
        one (a full evaluation can cost as much as a full gradient).
    keep_best : bool, default True
        Return the evaluated iterate with the best value (lowest, or highest when
        maximising; the earliest of equal ones) instead of the last one. Needs a value
        (``oracle.value`` or ``evaluate``).
    evaluate : callable, optional
        ``evaluate(w, support) -> float``, the value of an iterate and of the support the
        projection chose for it (read-only views), used instead of ``oracle.value`` wherever
        the solver evaluates: for a caller that scores iterates by something other than the
        objective it steps on (e.g. the exact objective of the support, when the oracle's is
        a smooth surrogate). Larger is better when maximising.
    w0_value : float, optional
        The value of ``w0`` when the caller already knows it: recorded at iteration 0
        without evaluating ``w0``. Needs a value.
    n_evals_no_change : int, optional
        Stop (not converged) after this many evaluations in a row that found no value
        strictly better than the best so far (``w0``'s included), before ``max_iter``.
        Needs a value. Default: never.
    min_improvement : float, default 0.0
        For ``n_evals_no_change``: an evaluation found something better only when it beats
        the best so far by more than this (``>= 0``, in the value's units), as scikit-learn's
        ``tol`` with ``n_iter_no_change``. The best iterate is still kept by strict
        comparison.
    seed : int, numpy.random.Generator or None
        Randomness of the mini-batches; a fixed int makes the run reproducible. A Generator
        is used as it is: the solver draws from it only through the oracle.
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
        value of ``solution``, and ``details["returned_iteration"]`` its iteration (the best
        evaluated iterate's when it is kept).

    Raises
    ------
    ValueError
        Bad ``schedule``, non-positive ``step``, negative ``max_iter``, no ``step`` and no
        ``stochastic_lipschitz``, bad ``seed``, wrong shapes, ``w0_value`` or
        ``n_evals_no_change`` without a value to compare.
    TypeError
        ``oracle`` lacks both ``stochastic_gradient`` and ``proposal``, or a non-callable
        projection/callback/evaluate.
    """
    if not any(callable(getattr(oracle, n, None)) for n in ("stochastic_gradient", "proposal")):
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
    step = step if step is not None else _stochastic_lipschitz_step(oracle)
    proj = Projector(projection, warm_start=warm_start)
    obj = Objective(oracle, maximize=maximize, shape=w.shape)
    min_improvement = check_nonneg_float(min_improvement, "min_improvement")
    evals = _Evaluations(
        obj,
        evaluate,
        keep_best=keep_best,
        patience=n_evals_no_change,
        min_improvement=min_improvement,
    )
    w0_value = evals.check_w0_value(w0_value)
    deadline = Deadline(time_limit)
    steps = _StochasticSteps(
        _Move(oracle, obj, proj, rng),
        evals,
        w0_value=w0_value,
        schedule=schedule,
        step=step,
        tol=tol,
        patience=patience,
        eval_every=eval_every,
        max_iter=max_iter,
    )
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)


class _StochasticSteps(Steps):
    """Stochastic IHT's side of the shared loop (see :func:`stochastic_iht`): the scheduled
    step, the run of small changes the ``tol`` test counts, and the evaluations."""

    name = "stochastic_iht"

    def __init__(
        self, move, evals, *, w0_value, schedule, step, tol, patience, eval_every, max_iter
    ):
        self.move, self.evals, self.w0_value = move, evals, w0_value
        self.schedule, self.step = schedule, step
        self.tol, self.patience, self.eval_every, self.max_iter = (
            tol,
            patience,
            eval_every,
            max_iter,
        )
        self.counters = move.proj.counters
        self.convergence = f"relative change <= tol={tol} for {patience} iterations"
        self.step_t = step
        self.quiet = 0  # consecutive iterations that passed the tol test

    def initial_value(self, w, support) -> float | None:
        return self.evals.record(0, w, support, self.w0_value) if self.evals.enabled else None

    def advance(self, it, w, support):
        self.step_t = scheduled_step(self.schedule, self.step, it)
        x, sup = self.move(w, self.step_t)
        small = self.tol is not None and small_change(x, w, self.tol)
        self.quiet = self.quiet + 1 if small else 0
        self.converged = self.tol is not None and self.quiet >= self.patience
        return x, sup

    def value(self, it, w, support) -> float | None:
        if self.evals.enabled and (it % self.eval_every == 0 or it == self.max_iter):
            return self.evals.record(it, w, support)
        return None

    def stalled(self) -> str | None:
        return self.evals.stalled()

    def final_value(self, it, w, support) -> float | None:
        return self.evals.record(it, w, support) if self.evals.enabled else None

    def returned(self, w, support, done, history):
        return self.evals.returned(w, support, done, history)

    def describe(self) -> str:
        return f"schedule: {self.schedule}, base step {self.step:.3g}"

    def step_size(self) -> float:
        return self.step_t


def _stochastic_lipschitz_step(oracle) -> float:
    step = lipschitz_step(oracle, "stochastic_lipschitz")
    if step is None:
        raise ValueError(
            f"step is required: {type(oracle).__name__} has no stochastic_lipschitz() "
            f"to derive a default step from"
        )
    return step


def scheduled_step(schedule: str, step: float, t: int) -> float:
    """The step of iteration ``t >= 1`` under ``schedule`` (see :func:`stochastic_iht`)."""
    if schedule == "constant":
        return step
    if schedule == "inv_sqrt":
        return step / math.sqrt(t)
    return step / math.sqrt(1.0 + t / SCHEDULE_SHIFT)


class _Move:
    """One stochastic IHT move ``w -> (w_next, support)``: a gradient step and its projection,
    or the oracle's proposal, its projection's support and the iterate on that support."""

    def __init__(self, oracle, obj: Objective, proj: Projector, rng) -> None:
        self.proposal = getattr(oracle, "proposal", None)
        self.obj, self.proj, self.rng = obj, proj, rng

    def __call__(self, w: np.ndarray, step_t: float) -> tuple[np.ndarray, np.ndarray]:
        if not callable(self.proposal):
            return self.proj(w - step_t * self.obj.stochastic_grad_phi(w, self.rng))
        proposed = self.proposal(w, self.rng, step_t)
        if not isinstance(proposed, tuple) or len(proposed) != 2:
            raise TypeError(
                f"oracle.proposal must return a pair (point to project, iterate), "
                f"got {type(proposed).__name__}"
            )
        z = self.obj.check_array(proposed[0], "the proposal's point to project")
        y = self.obj.check_array(proposed[1], "the proposal's iterate")
        support = self.proj.support(z)
        return y * support, support  # y is finite: 0 off the support, twice as fast as where


class _Evaluations:
    """What stochastic IHT's evaluations found: the best evaluated iterate and how many
    evaluations in a row found nothing strictly better than the best before them (the history
    of values is the shared loop's).

    ``obj`` gives the direction and ``oracle.value``; ``evaluate(w, support)`` replaces it. An
    evaluation counts as better, for ``patience``, when it beats the best by more than
    ``min_improvement``."""

    def __init__(
        self, obj: Objective, evaluate, *, keep_best: bool, patience, min_improvement=0.0
    ) -> None:
        if evaluate is not None and not callable(evaluate):
            raise TypeError(f"evaluate must be callable or None, got {type(evaluate).__name__}")
        self.obj, self.evaluate, self.keep_best = obj, evaluate, keep_best
        self.enabled = evaluate is not None or callable(getattr(obj.loss, "value", None))
        if patience is not None:
            self._need_values("n_evals_no_change")
            patience = check_int(patience, "n_evals_no_change", minimum=1)
        self.patience = patience
        self.min_improvement = min_improvement
        self.best = None  # (phi, iteration, w, support, f)
        self.best_phi = math.inf
        self.stale = 0

    def _need_values(self, option: str) -> None:
        if not self.enabled:
            raise ValueError(f"{option} needs oracle.value or evaluate to compare with")

    def check_w0_value(self, value) -> float | None:
        if value is None:
            return None
        self._need_values("w0_value")
        return check_finite_float(value, "w0_value")

    def stalled(self) -> str | None:
        """Why to stop for want of improvement, or None."""
        if self.patience is None or self.stale < self.patience:
            return None
        if self.min_improvement > 0:
            return (
                f"the last {self.stale} evaluations improved on the best by at most "
                f"{self.min_improvement:g}"
            )
        return f"the last {self.stale} evaluations found nothing better"

    def record(self, it: int, w: np.ndarray, support: np.ndarray, value=None) -> float:
        """Evaluate iterate ``it`` (or take its known ``value``) and keep what it changes."""
        if value is None and self.evaluate is not None:
            value = self.evaluate(readonly(w), readonly(support))
            value = float(value)
            if not math.isfinite(value):
                raise Breakdown("the evaluation is not finite")
        elif value is None:
            value = self.obj.f(w)
        phi = self.obj.sign * value
        self.stale = 0 if phi < self.best_phi - self.min_improvement else self.stale + 1
        self.best_phi = min(self.best_phi, phi)
        if self.keep_best and (self.best is None or phi < self.best[0]):
            self.best = (phi, it, w, support, value)
        return value

    def returned(self, w: np.ndarray, support: np.ndarray, done: int, history: History):
        """``(solution, support, objective, iteration)``: the best iterate when kept, else the
        last one ``w`` (iteration ``done``) with its value if ``history`` has it."""
        if self.best is not None:
            _, it, w_best, support_best, value = self.best
            return w_best, support_best, value, it
        return w, support, history.value_at(done), done
