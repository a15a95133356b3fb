"""DPC: safe screening for multi-task feature learning (Wang & Ye, ICML 2015, §4).

Feature ``ℓ`` is zero in every task at ``λ`` when its dual constraint is slack at the dual
optimum, ``||(⟨x_t^ℓ, θ_t*(λ)⟩)_t||₂ < 1`` (the KKT conditions). DPC bounds the left side
over a ball that contains ``θ*(λ)``, built from the dual optimum ``θ₀ = θ*(λ₀)`` at a larger
``λ₀`` (their Theorem 4, the EDPP construction on the MTFL dual):

    n = y/λ₀ − θ₀   (for λ₀ = λ_max: n_t = ⟨x_t^*, y_t⟩/λ_max · x_t^*, the gradient of the
                     active constraint of the feature ℓ* that attains λ_max)
    r = y/λ − θ₀,   r⊥ = r − ⟨r, n⟩/||n||² n
    θ*(λ) ∈ B(θ₀ + r⊥/2, ||r⊥||/2).

Maximising ``||(⟨x_t^ℓ, θ_t⟩)_t||₂`` over a ball ``B(o, ρ)`` is non-convex, but with
``a_t = |⟨x_t^ℓ, o_t⟩|`` and ``d_t = ρ ||x_t^ℓ||`` it equals (Cauchy-Schwarz in each task)

    s_ℓ² = max_{||τ|| ≤ 1} Σ_t (a_t + d_t τ_t)²,

a quadratic over one quadratic constraint (their Theorem 6), whose Lagrangian dual is exact:

    s_ℓ² = min_{μ > max_t d_t²} q(μ),    q(μ) = μ (1 + Σ_t a_t² / (μ − d_t²)).

Every ``μ`` gives an upper bound, so the rule stays safe however accurately the minimiser is
found; Newton's method on the secular equation ``1/||τ(μ)|| = 1`` (concave in ``μ``, started
left of the root, so its iterates stay left of it) finds it in a few steps. Feature ``ℓ``
is discarded when ``s_ℓ < 1`` (their Theorem 7; Corollary 8 applies it along a path).
See docs/design.md#multi-task-feature-learning-and-dpc-screening.
"""

from __future__ import annotations

import numpy as np

from projections.multitask.fista import check_coef, check_positive
from projections.multitask.problem import MultiTaskProblem
from projections.multitask.result import ScreeningResult

__all__ = ["dpc_screen"]

#: Newton steps on the secular equation, at most (each is O(n_features * n_tasks)).
NEWTON_STEPS = 50


def dpc_screen(
    problem: MultiTaskProblem,
    lam: float,
    *,
    lam0: float | None = None,
    coef0: np.ndarray | None = None,
) -> ScreeningResult:
    """Features that are zero in ``W*(lam)``, found from the solution at ``lam0 >= lam``.

    Parameters
    ----------
    problem : MultiTaskProblem
    lam : float
        The ``λ`` to screen for, ``0 < lam <= lam0``; any ``lam >= problem.lambda_max`` is
        allowed too, where ``W* = 0`` and every feature is discarded.
    lam0 : float, optional
        A ``λ₀`` whose solution is known; ``problem.lambda_max`` (where ``W* = 0``) when None.
    coef0 : ndarray of float, shape (n_features, n_tasks), optional
        The solution ``W*(lam0)`` (required when ``lam0 < lambda_max``). The rule is safe
        for the exact solution; ``θ₀`` is built from its residual, scaled to be dual feasible.

    Returns
    -------
    ScreeningResult
        ``kept`` (the features that may be active), the bounds ``s_ℓ``, the ball.

    Raises
    ------
    ValueError
        Naming the argument: ``lam`` or ``lam0`` not positive, ``lam > lam0`` below
        ``lambda_max``, ``coef0`` missing or of the wrong shape.

    References
    ----------
    Wang & Ye, "Safe screening for multi-task feature learning with multiple data
    matrices", ICML 2015 (Theorems 4, 6 and 7; Corollary 8 along a path).
    """
    if not isinstance(problem, MultiTaskProblem):
        raise ValueError(f"problem must be a MultiTaskProblem, got {type(problem).__name__}")
    lam = check_positive(lam, "lam")
    lam0 = problem.lambda_max if lam0 is None else check_positive(lam0, "lam0")
    if lam > lam0 and lam < problem.lambda_max:  # above lambda_max, W* = 0 whatever lam0
        raise ValueError(f"lam must be <= lam0 (screening goes down the path), got {lam} > {lam0}")
    theta0 = None
    if lam0 < problem.lambda_max:
        if coef0 is None:
            raise ValueError("coef0 (the solution at lam0) is required when lam0 < lambda_max")
        theta0 = problem.certificate(check_coef(coef0, problem), lam0).theta
    return screen(problem, lam, lam0, theta0)


def screen(problem: MultiTaskProblem, lam: float, lam0: float, theta0) -> ScreeningResult:
    """The rule without argument checks; ``theta0`` None means ``lam0 >= lambda_max``."""
    if lam >= problem.lambda_max:
        kept = np.zeros(problem.n_features, dtype=bool)  # W* = 0 (Theorem 1); θ* = y / lam
        bounds = np.linalg.norm(problem.XTy, axis=1) / lam
        return ScreeningResult(kept, bounds, problem.y / lam, 0.0, lam, lam0)
    center, radius = dual_ball(problem, lam, lam0, theta0)
    a = np.abs(problem.correlations(center))
    bounds = np.sqrt(ball_maximum_squared(a, radius * problem.column_norms))
    return ScreeningResult(bounds >= 1.0, bounds, center, radius, lam, lam0)


def dual_ball(problem: MultiTaskProblem, lam: float, lam0: float, theta0):
    """Centre (shape (n_tasks, max n_t)) and radius of a ball that contains ``θ*(lam)``."""
    normal = None
    if theta0 is not None and lam0 < problem.lambda_max:
        normal = problem.y / lam0 - theta0
        if not np.any(normal):
            normal = None  # W(λ₀) = 0: use the exact θ*(λ_max) instead
    if normal is None:
        theta0 = problem.y / problem.lambda_max
        best = int(np.argmax(np.linalg.norm(problem.XTy, axis=1)))
        weights = problem.XTy[best] / problem.lambda_max
        normal = weights[:, None] * problem.X[:, :, best]
    r = problem.y / lam - theta0
    r_perp = r - (np.vdot(r, normal) / np.vdot(normal, normal)) * normal
    return theta0 + 0.5 * r_perp, 0.5 * float(np.linalg.norm(r_perp))


def ball_maximum_squared(a: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Upper bound, tight to rounding, on ``max_{||τ|| <= 1} Σ_t (a_t + d_t τ_t)²`` per row.

    Parameters
    ----------
    a, d : ndarray of float >= 0, shape (n_rows, n_tasks)

    Returns
    -------
    ndarray of float, shape (n_rows,)
        ``q(μ)`` at the Newton estimate of its minimiser over ``μ > max_t d_t²``; rows with
        ``d = 0`` get ``Σ_t a_t²`` exactly.
    """
    a2, d2 = a * a, d * d
    d2max = d2.max(axis=1)
    trivial = d2max == 0.0
    mu = np.maximum((d2 + d * a).max(axis=1), d2max * (1.0 + 1e-12))
    mu[trivial] = 1.0
    weight = d2 * a2
    for _ in range(NEWTON_STEPS):
        gaps = mu[:, None] - d2
        s = (weight / gaps**2).sum(axis=1)
        active = (s > 0.0) & ~trivial
        with np.errstate(divide="ignore", invalid="ignore"):
            phi = 1.0 / np.sqrt(s) - 1.0
            slope = (weight / gaps**3).sum(axis=1) / s**1.5
            step = np.where(active & (phi < 0.0), -phi / slope, 0.0)
        if not np.any(step > 1e-15 * mu):
            break
        mu = mu + np.maximum(step, 0.0)
    q = mu * (1.0 + (a2 / (mu[:, None] - d2)).sum(axis=1))
    return np.where(trivial, a2.sum(axis=1), q)
