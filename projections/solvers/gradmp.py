"""Gradient matching pursuit (GradMP) onto a structured-sparsity set.

Algorithm 2 of Yang et al., "On the projection operator to a three-view cardinality
constrained set", ICML 2017, i.e. GradMP (Nguyen, Needell & Woolf 2014), the generalisation of
CoSaMP (Needell & Tropp, "CoSaMP: iterative signal recovery from incomplete and inaccurate
samples", 2009) to general losses and structured sparsity.
"""

from __future__ import annotations

import logging

import numpy as np

from projections.solvers._common import (
    MAX_HALVINGS,
    Breakdown,
    Deadline,
    Objective,
    Projector,
    check_bool,
    check_callback,
    check_int,
    check_methods,
    check_nonneg_float,
    check_step,
    check_time_limit,
    initial_backtracking_step,
    initial_point,
    lipschitz_step,
    new_counters,
    readonly,
    small_change,
)
from projections.solvers._loop import Steps, run
from projections.solvers.result import SolverResult

__all__ = ["gradmp"]

logger = logging.getLogger(__name__)


def gradmp(
    loss,
    projection,
    *,
    w0=None,
    step=None,
    maximize: bool = False,
    max_iter: int = 100,
    tol: float = 1e-6,
    inner_iter: int = 20,
    head_projection=None,
    warm_start: bool = True,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """Gradient matching pursuit: minimise (or maximise) ``f`` over a structured-sparsity set.

    Each iteration (Yang et al., ICML 2017, Algorithm 2)::

        g       = grad f(w_t)
        Gamma   = supp(P_2s(g))                      (the set with every cap doubled)
        Gamma^  = Gamma  U  supp(w_t)
        z_t     = argmin_{supp(z) in Gamma^} f(z)    (argmax when maximize=True)
        w_{t+1} = P_s(z_t)

    Parameters
    ----------
    loss : Loss
        Any object with ``value(w)`` and ``gradient(w)``. If it has
        ``minimize_on_support(w, support)`` (e.g. :class:`~projections.solvers.LeastSquares`,
        exact least squares on the support) that solves the subspace problem when minimising;
        otherwise (and always when maximising) ``inner_iter`` gradient steps restricted to
        ``Gamma^``, started from ``w_t``, approximate it.
    projection : callable
        ``P_s``: ``projection(v) -> result`` with ``.x`` and ``.support``, e.g.
        :func:`~projections.solvers.tvcs_projection`. Unless ``head_projection`` is given it
        must have ``.doubled()`` returning ``P_2s``.
    w0 : array-like of float, optional
        Starting point; default zeros of ``loss.feature_shape``. Not modified.
    step : float, optional
        Step of the restricted gradient steps (unused with ``minimize_on_support``). Default
        ``1 / loss.lipschitz()`` if available, else Armijo backtracking: a trial ``z - t g``
        is accepted when ``phi`` drops by at least ``t ||g||^2 / 2``, else ``t`` is halved;
        each subspace solve starts from twice the last accepted ``t``.
    maximize : bool, default False
        Ascend ``f`` instead of descending it.
    max_iter : int, default 100
        Maximum number of iterations (``>= 0``).
    tol : float, default 1e-6
        Converged when ``||w_{t+1} - w_t|| <= tol * max(||w_{t+1}||, ||w_t||)``.
    inner_iter : int, default 20
        Restricted gradient steps per subspace solve in the generic fallback (``>= 1``).
    head_projection : callable, optional
        ``P_2s``, the projection with doubled caps; default ``projection.doubled()``.
    warm_start : bool, default True
        Thread ``result.warm_start`` between consecutive calls of ``P_s``, as for
        :func:`~projections.solvers.iht`. ``P_2s`` is always called cold: it projects the
        gradient, whose magnitude changes by orders of magnitude between iterations (it
        vanishes at a solution), so the previous call's state says little about the next.
    callback : callable, optional
        ``callback(iteration, w, value)`` after every iteration; returning True stops the run.
    time_limit : float, optional
        Stop (not converged) after this many seconds.

    Returns
    -------
    SolverResult
        ``history`` holds ``f(w_0), f(w_1), ...``; ``n_projections`` counts both projections.

    Raises
    ------
    ValueError
        Non-positive ``step``, negative ``max_iter``, ``inner_iter < 1``, wrong shapes.
    TypeError
        ``loss`` lacks ``value``/``gradient``; ``projection`` has no ``doubled()`` and no
        ``head_projection`` was given; a non-callable projection or callback.
    """
    check_methods(loss, "loss", ("value", "gradient"))
    step = check_step(step)
    maximize = check_bool(maximize, "maximize")
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    tol = check_nonneg_float(tol, "tol")
    inner_iter = check_int(inner_iter, "inner_iter", minimum=1)
    warm_start = check_bool(warm_start, "warm_start")
    callback = check_callback(callback)
    time_limit = check_time_limit(time_limit)
    if head_projection is None:
        doubled = getattr(projection, "doubled", None)
        if not callable(doubled):
            raise TypeError(
                "gradmp needs the projection with doubled caps: pass a projection with "
                ".doubled() (see tvcs_projection) or head_projection="
            )
        head_projection = doubled()
    w = initial_point(loss, w0)
    counters = new_counters()
    proj = Projector(projection, warm_start=warm_start, counters=counters)
    head = Projector(head_projection, warm_start=False, counters=counters)
    obj = Objective(loss, maximize=maximize, shape=w.shape)
    deadline = Deadline(time_limit)
    steps = _GradMPSteps(
        loss, proj, head, obj, w, step=step, tol=tol, inner_iter=inner_iter, maximize=maximize
    )
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)


class _GradMPSteps(Steps):
    """GradMP's side of the shared loop (see :func:`gradmp`): both projections, how the
    subspace problem is solved (exactly, or by restricted gradient steps and their step), and
    the value of the iterate."""

    name = "gradmp"

    def __init__(self, loss, proj, head, obj, w, *, step, tol, inner_iter, maximize):
        self.loss, self.proj, self.head, self.obj, self.tol = loss, proj, head, obj, tol
        self.inner_iter = inner_iter
        self.counters = proj.counters
        self.convergence = f"relative change <= tol={tol:g}"
        self.exact = not maximize and callable(getattr(loss, "minimize_on_support", None))
        self.fixed_step = (
            step if step is not None else (None if self.exact else lipschitz_step(loss))
        )
        self.inner_step = self.fixed_step
        self.f = obj.f(w)

    def initial_value(self, w, support) -> float:
        return self.f

    def advance(self, it, w, support):
        g = self.obj.grad_phi(w)
        _, gamma = self.head(g)
        merged = gamma | support | (w != 0)
        x, sup = self.proj(self._subspace_minimiser(w, merged))
        self.f = self.obj.f(x)
        self.converged = small_change(x, w, self.tol)
        logger.debug("gradmp iteration %d: f=%.6g |merged|=%d", it, self.f, int(merged.sum()))
        return x, sup

    def _subspace_minimiser(self, w, merged):
        """``argmin phi`` over vectors supported on ``merged``, exact or approximate."""
        if self.exact:
            z = self.obj.check_array(
                self.loss.minimize_on_support(readonly(w), readonly(merged)),
                "minimize_on_support",
            )
            return np.where(merged, z, 0.0)
        z, self.inner_step = _restricted_descent(
            self.obj,
            w,
            merged,
            self.inner_step,
            fixed=self.fixed_step is not None,
            n_steps=self.inner_iter,
        )
        return z

    def value(self, it, w, support) -> float:
        return self.f

    def describe(self) -> str:
        if self.exact:
            rule = "exact subspace minimisation (minimize_on_support)"
        elif self.fixed_step is not None:
            rule = f"{self.inner_iter} restricted gradient steps, step {self.fixed_step:.3g}"
        else:
            rule = f"{self.inner_iter} restricted gradient steps, Armijo backtracking"
        return f"subspace: {rule}"

    def step_size(self) -> float | None:
        return None if self.exact else self.inner_step


def _restricted_descent(obj: Objective, w, mask, step, *, fixed: bool, n_steps: int):
    """Approximate ``argmin phi`` over vectors supported on ``mask`` by gradient steps from ``w``.

    Returns the point and the step to start from next time.
    """
    z = np.where(mask, w, 0.0)
    if fixed:
        for _ in range(n_steps):
            g = np.where(mask, obj.grad_phi(z), 0.0)
            if not np.any(g):
                break
            z = z - step * g
        return z, step
    phi_z = obj.phi(z)
    t = None if step is None else 2.0 * step
    for _ in range(n_steps):
        g = np.where(mask, obj.grad_phi(z), 0.0)
        gg = float(np.vdot(g, g))
        if gg == 0.0:
            break
        if t is None:
            t = initial_backtracking_step(obj, z, g)
        accepted = _armijo_step(obj, z, phi_z, g, gg, t)
        if accepted is None:
            break  # no decrease found: z is (numerically) stationary on the subspace
        z, phi_z, t = accepted
    return z, t if t is not None else step


def _armijo_step(obj: Objective, z, phi_z: float, g, gg: float, t: float):
    """``(z - t g, phi there, t)`` for the first ``t`` (halved from the given one) that lowers
    ``phi`` by ``t ||g||^2 / 2``; None when no trial does though some are finite (``z`` is
    stationary on the subspace).

    Raises
    ------
    Breakdown
        When ``phi`` is NaN or infinite at every trial, as :func:`~projections.solvers.iht`'s
        backtracking does: the run then ends in ``"breakdown"``, not ``"converged"``.
    """
    finite = False
    for _ in range(MAX_HALVINGS):
        cand = z - t * g
        try:
            phi_c = obj.phi(cand)
        except Breakdown:
            t *= 0.5
            continue
        finite = True
        if phi_c <= phi_z - 0.5 * t * gg:
            return cand, phi_c, t
        t *= 0.5
    if not finite:
        raise Breakdown(f"the loss is not finite at any of {MAX_HALVINGS} trial steps")
    return None
