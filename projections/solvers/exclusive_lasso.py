"""Exclusive LASSO: the convex relaxation of per-group cardinality caps, and its solver.

The exclusive LASSO penalty over disjoint groups ``G`` (Zhou, Jin & Hoi, AISTATS 2010; Kong et
al., NIPS 2014, the baseline of Yang et al., ICML 2017, section 5.1) is

    Omega(w) = (1/2) * sum_g ||w_g||_1^2,

an l_{1,2} norm squared: l1 inside a group (few entries per group), l2 across groups (every
group keeps some). :func:`prox_exclusive_lasso` is its proximal operator in closed form and
:func:`exclusive_lasso` minimises ``f(w) + lam * Omega(w)`` by accelerated proximal gradient
(FISTA, Beck & Teboulle 2009) for any smooth loss of :mod:`projections.solvers.losses`.

Elements labelled ``-1`` belong to no group and are not penalised.
"""

from __future__ import annotations

import math

import numpy as np

from projections.solvers._common import (
    Deadline,
    Objective,
    check_callback,
    check_int,
    check_methods,
    check_nonneg_float,
    check_step,
    check_time_limit,
    initial_point,
    lipschitz_step,
    new_counters,
    small_change,
)
from projections.solvers._loop import Steps, run
from projections.solvers.result import SolverResult

__all__ = ["exclusive_lasso", "exclusive_lasso_penalty", "prox_exclusive_lasso"]


def _check_labels(labels, size: int) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.size != size or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"labels must be integer group labels, one per coefficient ({size}), "
            f"got shape {arr.shape} and dtype {arr.dtype}"
        )
    arr = arr.reshape(-1).astype(np.int64)
    if np.any(arr < -1):
        raise ValueError(f"labels must be >= -1 (-1 = no group), got {int(arr.min())}")
    return arr


def exclusive_lasso_penalty(w, labels) -> float:
    """``Omega(w) = (1/2) sum_g ||w_g||_1^2`` over the groups of ``labels`` (``-1``: none).

    Parameters
    ----------
    w : array-like of float, any shape (p elements)
    labels : array-like of int, shape (p,) or the shape of ``w``
    """
    flat = np.asarray(w, dtype=np.float64).reshape(-1)
    lab = _check_labels(labels, flat.size)
    grouped = lab >= 0
    sums = np.bincount(lab[grouped], weights=np.abs(flat[grouped]))
    return 0.5 * float(np.dot(sums, sums))


def prox_exclusive_lasso(v, labels, lam: float) -> np.ndarray:
    """``argmin_x (1/2)||x - v||^2 + (lam/2) sum_g ||x_g||_1^2``, in closed form.

    Group by group the optimality condition is ``x_i = sign(v_i) max(|v_i| - tau_g, 0)`` with
    ``tau_g = lam ||x_g||_1``: a soft threshold whose level depends on the result. With the
    group's magnitudes sorted, ``u_1 >= u_2 >= ...``, and ``S_k = u_1 + ... + u_k``, the kept
    entries are the first ``k`` with ``u_k (1 + lam k) > lam S_k`` (a prefix, since
    ``u_k + lam (k u_k - S_k)`` never increases in ``k``) and ``tau_g = lam S_k / (1 + lam k)``.
    Cost: one sort, ``O(p log p)``.

    Parameters
    ----------
    v : array-like of float, any shape (p elements)
    labels : array-like of int, shape (p,) or the shape of ``v``
        Disjoint groups numbered from 0; ``-1`` = no group (returned unchanged).
    lam : float
        Non-negative weight of the penalty.

    Returns
    -------
    ndarray of float, shape of ``v``
    """
    arr = np.asarray(v, dtype=np.float64)
    lam = check_nonneg_float(lam, "lam")
    if not np.all(np.isfinite(arr)):
        raise ValueError("v must be finite, got NaN or infinity")
    flat = arr.reshape(-1)
    lab = _check_labels(labels, flat.size)
    mag = np.abs(flat)
    order = np.lexsort((-mag, lab))
    lab_s, u = lab[order], mag[order]
    start = np.searchsorted(lab_s, lab_s, side="left")
    rank = np.arange(1, flat.size + 1) - start  # 1-based rank inside the group
    cums = np.cumsum(u)
    before = np.where(start > 0, cums[start - 1], 0.0)
    partial = cums - before  # S_k for the element of rank k
    keep = u * (1.0 + lam * rank) > lam * partial
    n_groups = int(lab.max(initial=-1)) + 1
    grouped = lab_s >= 0
    k = np.bincount(lab_s[grouped & keep], minlength=n_groups)
    s = np.bincount(lab_s[grouped & keep], weights=u[grouped & keep], minlength=n_groups)
    tau = lam * s / (1.0 + lam * k)
    level = np.zeros(flat.size)
    level[lab >= 0] = tau[lab[lab >= 0]]
    return (np.sign(flat) * np.maximum(mag - level, 0.0)).reshape(arr.shape)


def exclusive_lasso(
    loss,
    labels,
    *,
    lam: float,
    w0=None,
    step=None,
    max_iter: int = 1000,
    tol: float = 1e-7,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """Minimise ``F(w) = f(w) + lam * (1/2) sum_g ||w_g||_1^2`` by FISTA.

    Iteration (Beck & Teboulle 2009, with the closed-form prox above)::

        w_{t+1} = prox_{step lam}(y_t - step grad f(y_t))
        y_{t+1} = w_{t+1} + (t_k - 1) / t_{k+1} (w_{t+1} - w_t)

    restarted (``y = w``, momentum reset) whenever ``F`` increases (O'Donoghue & Candes 2015),
    so ``F(w_t)`` never increases. A point ``w`` is optimal iff
    ``w = prox_{step lam}(w - step grad f(w))`` for any ``step > 0``.

    Parameters
    ----------
    loss : Loss
        Smooth loss with ``value(w)`` and ``gradient(w)`` (e.g.
        :class:`~projections.solvers.LeastSquares`, :class:`~projections.solvers.SquaredHinge`).
    labels : array-like of int, shape (p,) or the loss's ``feature_shape``
        Disjoint groups; ``-1`` = not penalised. For a matrix ``w`` with row groups:
        ``np.repeat(np.arange(n_rows), n_cols)``.
    lam : float
        Non-negative weight of the penalty.
    w0 : array-like of float, optional
        Starting point; default zeros of ``loss.feature_shape``.
    step : float, optional
        Default ``1 / loss.lipschitz()`` (the loss must then have ``lipschitz``).
    max_iter : int, default 1000
    tol : float, default 1e-7
        Converged when ``||w_{t+1} - w_t|| <= tol * max(||w_{t+1}||, ||w_t||)``.
    callback : callable, optional
        ``callback(iteration, w, F(w))``; returning True stops the run.
    time_limit : float, optional
        Stop (not converged) after this many seconds.

    Returns
    -------
    SolverResult
        ``history`` holds ``F(w_0), F(w_1), ...`` (penalty included); ``support`` is
        ``solution != 0``; ``n_projections`` is 0 (no projection is used).
    """
    check_methods(loss, "loss", ("value", "gradient"))
    lam = check_nonneg_float(lam, "lam")
    step = check_step(step)
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    tol = check_nonneg_float(tol, "tol")
    callback = check_callback(callback)
    time_limit = check_time_limit(time_limit)
    w = initial_point(loss, w0)
    lab = _check_labels(labels, w.size)
    if step is None:
        step = lipschitz_step(loss)
        if step is None:
            raise ValueError(f"step is required: {type(loss).__name__} has no lipschitz()")
    obj = Objective(loss, maximize=False, shape=w.shape)
    deadline = Deadline(time_limit)
    steps = _FistaSteps(obj, lab, lam, w, step, tol)
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)


class _FistaSteps(Steps):
    """FISTA with function-value restart, :func:`exclusive_lasso`'s side of the shared loop:
    the extrapolated point ``y``, the momentum ``t_k`` and the value ``F`` of the iterate."""

    name = "exclusive_lasso"

    def __init__(self, obj: Objective, lab, lam, w, step, tol) -> None:
        self.obj, self.lab, self.lam, self.step, self.tol = obj, lab, lam, step, tol
        self.convergence = f"relative change <= tol={tol:g}"
        self.counters = new_counters()
        self.y, self.t_k, self.n_restarts = w.copy(), 1.0, 0
        self.F = self._total(w)

    def _total(self, x) -> float:
        return self.obj.f(x) + self.lam * exclusive_lasso_penalty(x, self.lab)

    def _prox_step(self, z):
        return prox_exclusive_lasso(
            z - self.step * self.obj.grad_phi(z), self.lab, self.step * self.lam
        )

    def initial_value(self, w, support) -> float:
        return self.F

    def advance(self, it, w, support):
        x = self._prox_step(self.y)
        new = self._total(x)
        if new > self.F and not np.array_equal(self.y, w):  # momentum overshot: restart from w
            self.n_restarts += 1
            self.y, self.t_k = w.copy(), 1.0
            x = self._prox_step(w)
            new = self._total(x)
        t_next = (1.0 + math.sqrt(1.0 + 4.0 * self.t_k * self.t_k)) / 2.0
        self.y = x + ((self.t_k - 1.0) / t_next) * (x - w)
        self.converged = small_change(x, w, self.tol)
        self.F, self.t_k = new, t_next
        return x, x != 0

    def value(self, it, w, support) -> float:
        return self.F

    def describe(self) -> str:
        return f"{self.n_restarts} momentum restarts"

    def step_size(self) -> float:
        return self.step
