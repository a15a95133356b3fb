"""Accelerated proximal gradient (FISTA) for multi-task feature learning with the ℓ2,1 penalty.

Beck & Teboulle's FISTA with a constant step ``1/L`` (``L = max_t ||X_t||₂²``; the loss is a
sum over tasks, so its Hessian is block diagonal) and O'Donoghue & Candès's gradient restart:
the momentum is reset whenever the step ``W_{k+1} − W_k`` points against the proximal
gradient step taken from the extrapolated point. The proximal map of ``λ Σ_ℓ ||W[ℓ, :]||₂``
shrinks each row towards zero:

    prox(V)[ℓ] = max(0, 1 − s λ / ||V[ℓ]||₂) V[ℓ]        (step s = 1/L).

The loop stops on the duality gap (:meth:`MultiTaskProblem.certificate`), checked every
``check_every`` steps. See docs/design.md#multi-task-feature-learning-and-dpc-screening.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from projections.multitask.problem import MultiTaskProblem
from projections.multitask.result import MTFLResult
from projections.solvers._common import check_int

__all__ = ["mtfl"]

logger = logging.getLogger("projections.multitask")


def mtfl(
    problem: MultiTaskProblem,
    lam: float,
    *,
    coef0: np.ndarray | None = None,
    tol: float = 1e-8,
    max_iter: int = 20_000,
    check_every: int = 10,
) -> MTFLResult:
    """Solve ``min_W 1/2 Σ_t ||y_t − X_t w_t||² + λ Σ_ℓ ||W[ℓ, :]||₂`` (Wang & Ye 2015, eq. 1).

    Parameters
    ----------
    problem : MultiTaskProblem
        The tasks' designs and responses.
    lam : float
        ``λ > 0``. For ``λ >= problem.lambda_max`` the solution is ``W = 0`` (their Theorem 1)
        and no iteration runs.
    coef0 : ndarray of float, shape (n_features, n_tasks), optional
        Starting point (a warm start, e.g. the solution at a nearby ``λ``); zeros by default.
    tol : float
        Stop when the duality gap is at most ``tol * ||y||² / 2`` (``||y||² / 2 = P(0)``).
    max_iter : int
        Maximum number of proximal gradient steps.
    check_every : int
        Steps between two duality-gap evaluations (each costs two products with the ``X_t``).

    Returns
    -------
    MTFLResult
        ``coef`` of shape (n_features, n_tasks), the gap, status and counters.

    Raises
    ------
    ValueError
        Naming the argument: ``problem`` not a :class:`MultiTaskProblem`, ``lam`` or ``tol``
        not positive and finite, ``coef0`` of the wrong shape or not finite, ``max_iter`` or
        ``check_every`` not a positive integer.
    """
    start = time.perf_counter()
    _check_problem(problem)
    lam = check_positive(lam, "lam")
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    check_every = check_int(check_every, "check_every", minimum=1)
    W = check_coef(coef0, problem)
    if lam >= problem.lambda_max:
        return _closed_form_zero(problem, lam, start)
    return _fista(problem, lam, W, tol * 0.5 * problem.y_norm2, max_iter, check_every, start)


def _fista(problem, lam, W, tol_abs, max_iter, check_every, start) -> MTFLResult:
    step = 1.0 / problem.lipschitz()
    Z, momentum, restarts = W.copy(), 1.0, 0
    cert = problem.certificate(W, lam)
    gaps, gap_its = [cert.gap], [0]
    it = 0
    while cert.gap > tol_abs and it < max_iter:
        it += 1
        gradient = -problem.correlations(problem.y - problem.predict(Z))
        W_new = group_soft_threshold(Z - step * gradient, step * lam)
        if np.vdot(Z - W_new, W_new - W) > 0:
            Z, momentum, restarts = W_new, 1.0, restarts + 1
        else:
            following = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * momentum * momentum))
            Z = W_new + ((momentum - 1.0) / following) * (W_new - W)
            momentum = following
        W = W_new
        if it % check_every == 0 or it == max_iter:
            cert = problem.certificate(W, lam)
            gaps.append(cert.gap)
            gap_its.append(it)
    converged = cert.gap <= tol_abs
    status = "converged" if converged else "max_iter"
    message = (
        f"{'converged' if converged else 'max_iter reached'} after {it} steps: "
        f"duality gap {cert.gap:.3g} (target {tol_abs:.3g}), {restarts} restarts"
    )
    if not converged:
        logger.warning("mtfl at lam=%.4g: %s", lam, message)
    return MTFLResult(
        coef=W,
        support=np.any(W != 0, axis=1),
        lam=lam,
        objective=cert.primal,
        dual_objective=cert.dual,
        gap=cert.gap,
        converged=converged,
        status=status,
        message=message,
        iterations=it,
        n_restarts=restarts,
        seconds=time.perf_counter() - start,
        gap_history=np.asarray(gaps),
        gap_iterations=np.asarray(gap_its, dtype=np.int64),
    )


def _closed_form_zero(problem: MultiTaskProblem, lam: float, start: float) -> MTFLResult:
    W = np.zeros((problem.n_features, problem.n_tasks))
    cert = problem.certificate(W, lam)
    return MTFLResult(
        coef=W,
        support=np.zeros(problem.n_features, dtype=bool),
        lam=lam,
        objective=cert.primal,
        dual_objective=cert.dual,
        gap=cert.gap,
        converged=True,
        status="converged",
        message=f"lam >= lambda_max = {problem.lambda_max:.6g}: W = 0 in closed form",
        iterations=0,
        n_restarts=0,
        seconds=time.perf_counter() - start,
        gap_history=np.asarray([cert.gap]),
        gap_iterations=np.zeros(1, dtype=np.int64),
    )


def group_soft_threshold(V: np.ndarray, threshold: float) -> np.ndarray:
    """Row-wise shrinkage ``max(0, 1 − threshold / ||V[ℓ]||) V[ℓ]``: the proximal map of
    ``threshold Σ_ℓ ||V[ℓ]||₂``."""
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > threshold, 1.0 - threshold / norms, 0.0)
    return V * scale


def _check_problem(problem) -> None:
    if not isinstance(problem, MultiTaskProblem):
        raise ValueError(
            f"problem must be a MultiTaskProblem (MultiTaskProblem(X, Y)), "
            f"got {type(problem).__name__}"
        )


def check_positive(value, name: str) -> float:
    """``value`` as a float if it is a finite number > 0, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")
    return value


def check_coef(coef, problem: MultiTaskProblem) -> np.ndarray:
    """A fresh float copy of ``coef`` (shape (n_features, n_tasks)), zeros when None."""
    shape = (problem.n_features, problem.n_tasks)
    if coef is None:
        return np.zeros(shape)
    arr = np.asarray(coef)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) or arr.shape != shape:
        raise ValueError(
            f"coef0 must be a real array of shape {shape}, got {arr.dtype} {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError("coef0 must be finite, got NaN or infinity")
    return np.array(arr, dtype=np.float64, copy=True)
