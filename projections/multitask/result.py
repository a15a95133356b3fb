"""Result objects of the MTFL solver, the λ path and the DPC screening rule."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["MTFLPathResult", "MTFLResult", "ScreeningResult"]


@dataclass(frozen=True, eq=False)
class MTFLResult:
    """Outcome of :func:`~projections.multitask.mtfl` at one ``λ``.

    Attributes
    ----------
    coef : ndarray of float, shape (n_features, n_tasks)
        ``W``: column ``t`` is task ``t``'s weights, row ``ℓ`` feature ``ℓ`` across tasks.
    support : ndarray of bool, shape (n_features,)
        Rows of ``coef`` that are not all zero (the selected features).
    lam : float
        The penalty ``λ``.
    objective, dual_objective, gap : float
        ``P(W)``, ``D(θ)`` of the dual feasible point built from the residual, and the duality
        gap ``P(W) − D(θ)``, which bounds ``P(W) − P(W*)``.
    converged : bool
        Whether ``gap <= tol * ||y||² / 2`` was reached.
    status : str
        ``"converged"`` or ``"max_iter"`` (the words of
        :class:`~projections.solvers.SolverResult`).
    message : str
        One line on how the run ended.
    iterations : int
        Proximal gradient steps taken (0 when ``λ >= λ_max``: ``W = 0`` in closed form).
    n_restarts : int
        Times the momentum was reset by the adaptive restart test.
    seconds : float
        Wall time.
    gap_history, gap_iterations : ndarray, shape (n_checks,)
        The duality gap at every check and the iteration it was taken at.
    """

    coef: np.ndarray
    support: np.ndarray
    lam: float
    objective: float
    dual_objective: float
    gap: float
    converged: bool
    status: str
    message: str
    iterations: int
    n_restarts: int
    seconds: float
    gap_history: np.ndarray = field(default_factory=lambda: np.zeros(0))
    gap_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class ScreeningResult:
    """Outcome of :func:`~projections.multitask.dpc_screen`.

    Attributes
    ----------
    kept : ndarray of bool, shape (n_features,)
        Features that may be active at ``lam``; the others are zero in ``W*(lam)`` (safe).
    bounds : ndarray of float, shape (n_features,)
        ``max_{θ in ball} ||(⟨x_t^ℓ, θ_t⟩)_t||₂``, an upper bound on the feature's dual
        constraint at ``θ*(lam)``; a feature is discarded when its bound is below 1.
    center : ndarray of float, shape (n_tasks, max n_t)
        Centre of the ball that contains ``θ*(lam)``.
    radius : float
        Its radius.
    lam, lam0 : float
        The target ``λ`` and the ``λ₀`` whose solution the ball is built from.
    """

    kept: np.ndarray
    bounds: np.ndarray
    center: np.ndarray
    radius: float
    lam: float
    lam0: float


@dataclass(frozen=True, eq=False)
class MTFLPathResult:
    """Outcome of :func:`~projections.multitask.mtfl_path` over a decreasing ``λ`` grid.

    Attributes
    ----------
    lambdas : ndarray of float, shape (n_lambdas,)
    coefs : ndarray of float, shape (n_lambdas, n_features, n_tasks)
        ``W(λ_k)`` for every ``λ_k``.
    kept : ndarray of bool, shape (n_lambdas, n_features)
        Features handed to the solver at ``λ_k`` (those the screening did not discard, plus
        any put back by the final check); all True without screening, all False for
        ``λ_k >= λ_max``.
    gaps : ndarray of float, shape (n_lambdas,)
        Duality gap of ``coefs[k]`` on the **full** problem.
    iterations : ndarray of int, shape (n_lambdas,)
    converged : ndarray of bool, shape (n_lambdas,)
    n_readded : ndarray of int, shape (n_lambdas,)
        Discarded features that the full-problem check found violating ``||X^ℓᵀ R|| <= λ``
        and put back (0 when the screening was exact; only rounding or a loose ``tol`` can
        make it positive).
    screening : str or None
        ``"dpc"`` or None.
    screening_seconds, solver_seconds, seconds : float
        Time in the screening rule, in the solver (including the full-problem checks), and
        in all.
    """

    lambdas: np.ndarray
    coefs: np.ndarray
    kept: np.ndarray
    gaps: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    n_readded: np.ndarray
    screening: str | None
    screening_seconds: float
    solver_seconds: float
    seconds: float

    @property
    def supports(self) -> np.ndarray:
        """Non-zero rows of every ``W(λ_k)``, shape (n_lambdas, n_features)."""
        return np.any(self.coefs != 0, axis=2)

    @property
    def rejection_ratios(self) -> np.ndarray:
        """Discarded inactive features / all inactive features, per ``λ_k`` (the paper's
        rejection ratio, §5); ``nan`` where every feature is active."""
        inactive = ~self.supports
        discarded = inactive & ~self.kept
        n_inactive = inactive.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n_inactive > 0, discarded.sum(axis=1) / n_inactive, np.nan)
