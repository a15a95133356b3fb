"""The MTFL solution along a decreasing ``λ`` grid, with warm starts and sequential DPC.

At each ``λ_k`` the sequential rule (Wang & Ye, ICML 2015, Corollary 8) screens with the
dual point of the solution at ``λ_{k−1}``, the solver runs on the kept features from the
previous solution, and a check on the full problem puts back any discarded feature whose
constraint ``||X^ℓᵀ R|| <= λ`` the solution violates (none in exact arithmetic; the rule
assumes the exact ``θ*(λ_{k−1})`` and the solver only gets within ``tol`` of it). Every
returned ``W(λ_k)`` thus has a full-problem duality gap within ``tol``.
See docs/design.md#multi-task-feature-learning-and-dpc-screening.
"""

from __future__ import annotations

import math
import time

import numpy as np

from projections.multitask.dpc import screen
from projections.multitask.fista import check_positive, mtfl
from projections.multitask.problem import MultiTaskProblem
from projections.multitask.result import MTFLPathResult
from projections.solvers._common import check_choice, check_int

__all__ = ["lambda_grid", "mtfl_path"]

SCREENINGS = ("dpc", None)


def lambda_grid(lambda_max: float, n_lambdas: int = 100, min_ratio: float = 0.01) -> np.ndarray:
    """``n_lambdas`` values from ``lambda_max`` down to ``min_ratio * lambda_max``, evenly
    spaced in ``log λ`` (the paper's 100 values of ``λ/λ_max`` from 1 to 0.01, §5).

    Parameters
    ----------
    lambda_max : float
        The largest ``λ``, ``> 0`` (usually ``problem.lambda_max``).
    n_lambdas : int, default 100
        Number of values, ``>= 1``.
    min_ratio : float, default 0.01
        The smallest ``λ / λ_max``: in ``(0, 1)``, or ``(0, 1]`` for a single value (a
        ratio of 1 would repeat ``λ_max``, as ``lambdas=`` with duplicates, which
        :func:`mtfl_path` refuses).

    Returns
    -------
    ndarray of float, shape (n_lambdas,)
        Strictly decreasing when ``n_lambdas > 1``, first ``lambda_max``.

    Raises
    ------
    ValueError
        Naming ``lambda_max``, ``n_lambdas`` or ``min_ratio``.
    """
    lambda_max = check_positive(lambda_max, "lambda_max")
    n_lambdas = check_int(n_lambdas, "n_lambdas", minimum=1)
    min_ratio = check_positive(min_ratio, "min_ratio")
    if min_ratio > 1.0 or (min_ratio == 1.0 and n_lambdas > 1):
        raise ValueError(
            f"min_ratio must be in (0, 1) for n_lambdas = {n_lambdas} > 1 (1 repeats "
            f"lambda_max), or in (0, 1] for one value; got {min_ratio}"
        )
    return lambda_max * np.logspace(0.0, math.log10(min_ratio), n_lambdas)


def mtfl_path(
    problem: MultiTaskProblem,
    lambdas=None,
    *,
    n_lambdas: int = 100,
    min_ratio: float = 0.01,
    screening: str | None = "dpc",
    tol: float = 1e-8,
    max_iter: int = 20_000,
    check_every: int = 10,
) -> MTFLPathResult:
    """Solve the MTFL problem at every ``λ`` of a decreasing grid.

    Parameters
    ----------
    problem : MultiTaskProblem
    lambdas : array_like of float, shape (n_lambdas,), optional
        Strictly decreasing positive values; :func:`lambda_grid` of ``problem.lambda_max``,
        ``n_lambdas`` and ``min_ratio`` when None.
    n_lambdas, min_ratio
        The default grid's size and its smallest ``λ / λ_max``.
    screening : {"dpc", None}
        Sequential DPC (Corollary 8) before each solve, or no screening.
    tol, max_iter, check_every
        Passed to :func:`~projections.multitask.mtfl` at every ``λ``.

    Returns
    -------
    MTFLPathResult
        The solutions, the kept features, gaps, timings and the rejection ratios.

    Raises
    ------
    ValueError
        Naming the argument: ``lambdas`` not positive and strictly decreasing, ``screening``
        unknown, or any argument :func:`lambda_grid` or :func:`mtfl` refuses.

    References
    ----------
    Wang & Ye, "Safe screening for multi-task feature learning with multiple data
    matrices", ICML 2015 (§5: the grid; Corollary 8: sequential DPC).
    """
    start = time.perf_counter()
    if not isinstance(problem, MultiTaskProblem):
        raise ValueError(f"problem must be a MultiTaskProblem, got {type(problem).__name__}")
    screening = check_choice(screening, "screening", SCREENINGS)
    grid = _check_lambdas(lambdas) if lambdas is not None else None
    if grid is None:
        grid = lambda_grid(problem.lambda_max, n_lambdas, min_ratio)
    options = {"tol": check_positive(tol, "tol"), "max_iter": max_iter, "check_every": check_every}
    d, T, K = problem.n_features, problem.n_tasks, grid.size
    coefs, kept = np.zeros((K, d, T)), np.zeros((K, d), dtype=bool)
    gaps, iterations = np.zeros(K), np.zeros(K, dtype=np.int64)
    converged, readded = np.ones(K, dtype=bool), np.zeros(K, dtype=np.int64)
    W, lam0, theta0 = np.zeros((d, T)), problem.lambda_max, None
    seconds = {"screening": 0.0, "solver": 0.0}
    for k, lam in enumerate(grid):
        if lam >= problem.lambda_max:
            continue  # W = 0, every feature discarded (Theorem 1)
        tick = time.perf_counter()
        keep = np.ones(d, dtype=bool)
        if screening == "dpc":
            keep = screen(problem, lam, lam0, theta0).kept
        tock = time.perf_counter()
        W, cert, result, keep, readded[k] = _solve_kept(problem, lam, keep, W, options)
        seconds["screening"] += tock - tick
        seconds["solver"] += time.perf_counter() - tock
        coefs[k], kept[k], gaps[k] = W, keep, cert.gap
        iterations[k], converged[k] = result.iterations, result.converged
        lam0, theta0 = lam, cert.theta
    return MTFLPathResult(
        lambdas=grid,
        coefs=coefs,
        kept=kept,
        gaps=gaps,
        iterations=iterations,
        converged=converged,
        n_readded=readded,
        screening=screening,
        screening_seconds=seconds["screening"],
        solver_seconds=seconds["solver"],
        seconds=time.perf_counter() - start,
    )


def _solve_kept(problem: MultiTaskProblem, lam: float, keep: np.ndarray, W0, options):
    """Solve on the features ``keep`` from ``W0``, then put back violators until none is left.

    Returns ``(W, certificate on the full problem, last MTFLResult, keep, n put back)``.
    """
    readded = 0
    while True:
        reduced = problem if keep.all() else problem.restrict(keep)
        result = mtfl(reduced, lam, coef0=W0[keep], **options)
        W = np.zeros_like(W0)
        W[keep] = result.coef
        cert = problem.certificate(W, lam)
        violators = ~keep & (np.linalg.norm(cert.correlations, axis=1) > lam)
        if not violators.any():
            return W, cert, result, keep, readded
        readded += int(violators.sum())
        keep, W0 = keep | violators, W


def _check_lambdas(lambdas) -> np.ndarray:
    grid = np.asarray(lambdas, dtype=np.float64) if _is_real_sequence(lambdas) else None
    if grid is None or grid.ndim != 1 or grid.size == 0:
        raise ValueError(f"lambdas must be a non-empty 1-d sequence of numbers, got {lambdas!r}")
    if not (np.all(np.isfinite(grid)) and np.all(grid > 0)):
        raise ValueError("lambdas must be finite and positive")
    if np.any(np.diff(grid) >= 0):
        raise ValueError("lambdas must be strictly decreasing (the path goes down from λ_max)")
    return grid


def _is_real_sequence(value) -> bool:
    arr = np.asarray(value)
    real = np.issubdtype(arr.dtype, np.number) and not np.iscomplexobj(arr)
    return real and arr.dtype != np.bool_
