"""Random multi-task instances and slow, obviously correct references for the MTFL tests."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from projections.multitask import MultiTaskProblem


def random_tasks(
    seed: int,
    *,
    samples=(6, 9, 4),
    n_features: int = 8,
    active: int = 2,
    correlation: float = 0.0,
    noise: float = 0.1,
):
    """Tasks with their own ``n_t`` (``samples``), Gaussian designs whose columns have
    correlation ``correlation^|i-j|``, and a row-sparse ``W`` with ``active`` non-zero rows.

    Returns ``(X, Y, W_true)``: lists of ``(n_t, d)`` and ``(n_t,)`` arrays, and ``(d, T)``.
    """
    rng = np.random.default_rng(seed)
    d = n_features
    cov = correlation ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    factor = np.linalg.cholesky(cov)
    W_true = np.zeros((d, len(samples)))
    W_true[rng.choice(d, size=active, replace=False)] = rng.standard_normal((active, len(samples)))
    X = [rng.standard_normal((n, d)) @ factor.T for n in samples]
    Y = [x @ W_true[:, t] + noise * rng.standard_normal(x.shape[0]) for t, x in enumerate(X)]
    return X, Y, W_true


def objective(X, Y, W: np.ndarray, lam: float) -> float:
    """``1/2 Σ_t ||y_t − X_t w_t||² + λ Σ_ℓ ||W[ℓ]||``, task by task."""
    loss = sum(
        0.5 * float(np.sum((y - x @ W[:, t]) ** 2))
        for t, (x, y) in enumerate(zip(X, Y, strict=True))
    )
    return loss + lam * float(np.linalg.norm(W, axis=1).sum())


def gradient(X, Y, W: np.ndarray) -> np.ndarray:
    """The loss's gradient, shape (d, T), task by task."""
    return np.stack(
        [x.T @ (x @ W[:, t] - y) for t, (x, y) in enumerate(zip(X, Y, strict=True))], axis=1
    )


def smoothed_reference(X, Y, lam: float, eps: float = 1e-7) -> np.ndarray:
    """L-BFGS on the smooth ``1/2 Σ||y_t − X_t w_t||² + λ Σ_ℓ (sqrt(||W[ℓ]||² + eps²) − eps)``,
    whose optimal value is within ``λ d eps`` of the MTFL optimum. Returns ``W``, shape (d, T)."""
    d, T = X[0].shape[1], len(X)

    def fun(z):
        W = z.reshape(d, T)
        smooth = np.sqrt(np.sum(W**2, axis=1) + eps**2)
        value = objective(X, Y, W, 0.0) + lam * float(np.sum(smooth - eps))
        return value, (gradient(X, Y, W) + lam * W / smooth[:, None]).ravel()

    res = minimize(
        fun,
        np.zeros(d * T),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20_000, "maxfun": 40_000, "ftol": 1e-15, "gtol": 1e-12},
    )
    return res.x.reshape(d, T)


def ista_reference(X, Y, lam: float, steps: int = 20_000) -> np.ndarray:
    """Plain proximal gradient with step ``1 / max_t ||X_t||²``, run for ``steps`` steps or
    until a step changes nothing."""
    step = 1.0 / max(np.linalg.norm(x, 2) ** 2 for x in X)
    W = np.zeros((X[0].shape[1], len(X)))
    for _ in range(steps):
        V = W - step * gradient(X, Y, W)
        norms = np.linalg.norm(V, axis=1, keepdims=True)
        W, previous = V * np.maximum(0.0, 1.0 - step * lam / np.maximum(norms, 1e-300)), W
        if np.array_equal(W, previous):
            break
    return W


def assert_kkt(X, Y, W: np.ndarray, lam: float, *, atol: float) -> None:
    """Gradient rows equal ``−λ W[ℓ]/||W[ℓ]||`` on non-zero rows, norm ``<= λ`` on zero rows."""
    G = gradient(X, Y, W)
    norms = np.linalg.norm(W, axis=1)
    nonzero = norms > 0
    expected = -lam * W[nonzero] / norms[nonzero, None]
    np.testing.assert_allclose(G[nonzero], expected, atol=atol * lam, rtol=0)
    assert np.all(np.linalg.norm(G[~nonzero], axis=1) <= lam * (1 + atol))


def problem_of(seed: int, **kwargs) -> tuple[MultiTaskProblem, list, list]:
    X, Y, _ = random_tasks(seed, **kwargs)
    return MultiTaskProblem(X, Y), X, Y
