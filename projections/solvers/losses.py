"""Smooth losses for the IHT-family solvers, and the protocols any loss must follow.

A *loss* is any object with ``value(w)`` and ``gradient(w)`` (:class:`Loss`, checked by duck
typing). A *stochastic oracle* is any object with ``stochastic_gradient(w, rng)``
(:class:`StochasticOracle`); :func:`~projections.solvers.stochastic_iht` also uses its
``value`` (to keep the best iterate) and ``stochastic_lipschitz`` (default step) if present.

Optional methods the solvers use when they exist:

``lipschitz()``
    A Lipschitz constant ``L`` of the gradient; the default step is ``1 / L``.
``stochastic_lipschitz()``
    The same for the mini-batch gradient; the default step of stochastic IHT.
``proposal(w, rng, step)``
    Instead of ``stochastic_gradient``: stochastic IHT's whole step, ``(z, y)``, the point it
    projects and the iterate it keeps on the projection's support (for a projection onto a box
    intersected with a sparsity set, where what decides the support is not the step itself).
``sample_gradient(w, index)``
    The gradient of one sample's loss (unscaled), for the online solvers of
    :mod:`projections.solvers.dual_averaging`, which visit the samples in order.
``minimize_on_support(w, support)``
    The exact minimiser of the loss over vectors supported on ``support`` (GradMP's subspace
    optimisation).
``restricted(index)``
    The same loss as a function of the coordinates ``index`` alone, the others held at 0
    (CoGEnT's enhancement, which moves ``w`` on the selected atoms' coordinates only).
``feature_shape``
    Shape of ``w``; lets the solvers start from zero when no ``w0`` is given.

:class:`LeastSquares` and :class:`SquaredHinge` are Yang et al.'s (ICML 2017, §5.1),
:class:`Logistic` GraphDA's (KDD 2019, §5.3); all take features ``A`` of shape
``(n_samples, *feature_shape)`` (docs/design.md#iht-family-solvers).
"""

from __future__ import annotations

import copy
from numbers import Integral, Real
from typing import Protocol, runtime_checkable

import numpy as np

from projections.tvcs import _as_real

__all__ = ["LeastSquares", "Logistic", "Loss", "SquaredHinge", "StochasticOracle"]

REDUCTIONS = ("mean", "sum")


@runtime_checkable
class Loss(Protocol):
    """What the deterministic solvers need: ``f(w)`` and ``grad f(w)`` (same shape as ``w``)."""

    def value(self, w: np.ndarray) -> float: ...

    def gradient(self, w: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class StochasticOracle(Protocol):
    """What stochastic IHT needs: an unbiased estimate of ``grad f(w)`` drawn with ``rng``."""

    def stochastic_gradient(self, w: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


def _power_iteration(A: np.ndarray, *, max_iter: int = 500, rtol: float = 1e-9) -> float:
    """Largest eigenvalue of ``A.T @ A`` (``sigma_max(A) ** 2``) by power iteration.

    Deterministic (fixed start vector). The Rayleigh quotient approaches the eigenvalue from
    below, so callers add a small safety margin.
    """
    n_cols = A.shape[1]
    if A.size == 0:
        return 0.0
    x = np.random.default_rng(0).standard_normal(n_cols)
    x /= np.linalg.norm(x)
    estimate = 0.0
    for _ in range(max_iter):
        y = A.T @ (A @ x)
        new = float(x @ y)
        norm = float(np.linalg.norm(y))
        if norm == 0.0:
            return 0.0
        x = y / norm
        if abs(new - estimate) <= rtol * max(new, 1e-300):
            return new
        estimate = new
    return estimate


class _LinearModelLoss:
    """Shared data handling of the losses ``sum_i loss(<A_i, w>, y_i)`` (scaled)."""

    #: Curvature factor: the per-sample loss has second derivative at most ``_CURVATURE``.
    _CURVATURE = 1.0
    #: Safety margin on power-iteration estimates (they approach the truth from below).
    _MARGIN = 1.01

    def __init__(self, A, y, *, reduction: str = "mean", batch_size: int = 32) -> None:
        A = _as_real(A, "A")
        y = np.asarray(y)
        if A.ndim < 2:
            raise ValueError(
                f"A must have shape (n_samples, *feature_shape) with at least 2 dimensions, "
                f"got shape {A.shape}"
            )
        if y.ndim != 1 or y.shape[0] != A.shape[0]:
            raise ValueError(
                f"y must have shape ({A.shape[0]},) to match A's n_samples, got shape {y.shape}"
            )
        if A.shape[0] == 0:
            raise ValueError("A must have at least one sample")
        y = _as_real(y, "y")
        if not np.all(np.isfinite(A)) or not np.all(np.isfinite(y)):
            raise ValueError("A and y must be finite, got NaN or infinity")
        if reduction not in REDUCTIONS:
            raise ValueError(
                f"reduction must be one of {', '.join(map(repr, REDUCTIONS))}; got {reduction!r}"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, Integral) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self._feature_shape = tuple(int(d) for d in A.shape[1:])
        matrix = A.reshape(A.shape[0], -1).astype(np.float64, copy=False).view()
        matrix.flags.writeable = False
        target = y.astype(np.float64, copy=False).view()
        target.flags.writeable = False
        self._A = matrix
        self._y = target
        self.reduction = reduction
        self.batch_size = int(min(batch_size, A.shape[0]))
        self._lipschitz: float | None = None

    # -- shapes ---------------------------------------------------------------------------

    @property
    def n_samples(self) -> int:
        """Number of samples ``n``."""
        return int(self._A.shape[0])

    @property
    def n_features(self) -> int:
        """Number of coefficients ``p = prod(feature_shape)``."""
        return int(self._A.shape[1])

    @property
    def feature_shape(self) -> tuple[int, ...]:
        """Shape of ``w``: ``A.shape[1:]``. Flat vectors of length ``n_features`` also work."""
        return self._feature_shape

    @property
    def _scale(self) -> float:
        return 1.0 / self.n_samples if self.reduction == "mean" else 1.0

    def _flat(self, w) -> np.ndarray:
        """``w`` (real; complex is refused, not truncated) as a flat float64 array."""
        arr = _as_real(w, "w").astype(np.float64, copy=False)
        if arr.shape != self._feature_shape and arr.shape != (self.n_features,):
            raise ValueError(
                f"w has shape {arr.shape}, expected {self._feature_shape} or ({self.n_features},)"
            )
        return arr.reshape(-1)

    def restricted(self, index) -> _LinearModelLoss:
        """The same loss on the flat coordinates ``index`` alone: ``f_S(z) = f(w)`` for the
        ``w`` equal to ``z`` on ``index`` and 0 elsewhere, shape ``(len(index),)``.

        Its products read only ``A[:, index]`` (copied once), so a solver that moves ``w`` on a
        few coordinates (CoGEnT's enhancement) pays ``O(n_samples |index|)`` a value or a
        gradient instead of ``O(n_samples p)``. The ridge term of
        :class:`SquaredHinge` carries over unchanged: it is 0 off ``index``.

        Parameters
        ----------
        index : ndarray of int, shape (m,)
            Flat coordinates, each in ``[0, n_features)``.
        """
        index = np.asarray(index)
        if index.ndim != 1 or not np.issubdtype(index.dtype, np.integer):
            raise ValueError(f"index must be a 1-d array of integers, got {index!r}")
        if index.size and (index.min() < 0 or index.max() >= self.n_features):
            raise ValueError(f"index must lie in [0, {self.n_features}), got {index!r}")
        sub = copy.copy(self)
        columns = self._A[:, index]
        columns.flags.writeable = False
        sub._A, sub._feature_shape, sub._lipschitz = columns, (int(index.size),), None
        return sub

    # -- per-sample pieces, implemented by subclasses ---------------------------------------

    def _losses(self, margins: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _derivatives(self, margins: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # -- the loss protocol ----------------------------------------------------------------

    def value(self, w) -> float:
        """``f(w)``; ``w`` has shape ``feature_shape`` or ``(n_features,)``."""
        margins = self._A @ self._flat(w)
        return float(self._scale * self._losses(margins, self._y).sum())

    def gradient(self, w) -> np.ndarray:
        """``grad f(w)``, same shape as ``w``."""
        flat = self._flat(w)
        d = self._derivatives(self._A @ flat, self._y)
        return (self._scale * (self._A.T @ d)).reshape(np.shape(w))

    def stochastic_gradient(self, w, rng: np.random.Generator) -> np.ndarray:
        """Unbiased mini-batch estimate of ``grad f(w)``, same shape as ``w``.

        Draws ``batch_size`` samples without replacement with ``rng`` and returns
        ``(scale * n_samples / batch_size) * sum_{i in batch} grad loss_i(w)``, whose
        expectation is :meth:`gradient`.
        """
        flat = self._flat(w)
        idx = rng.choice(self.n_samples, size=self.batch_size, replace=False)
        rows = self._A[idx]
        d = self._derivatives(rows @ flat, self._y[idx])
        factor = self._scale * self.n_samples / self.batch_size
        return (factor * (rows.T @ d)).reshape(np.shape(w))

    def sample_gradient(self, w, index: int) -> np.ndarray:
        """Gradient of sample ``index``'s own loss ``loss(<A_i, w>, y_i)``, shape of ``w``.

        Unscaled (no ``1 / n_samples``): the loss ``f_t`` an online learner suffers at step ``t``.
        """
        if isinstance(index, bool) or not isinstance(index, Integral | np.integer):
            raise ValueError(f"index must be an integer, got {index!r}")
        if not 0 <= index < self.n_samples:
            raise ValueError(f"index must be in [0, {self.n_samples}), got {index!r}")
        row = self._A[index]
        d = self._derivatives(np.atleast_1d(row @ self._flat(w)), self._y[index : index + 1])
        return (d[0] * row).reshape(np.shape(w))

    def lipschitz(self) -> float:
        """Lipschitz constant of :meth:`gradient`: ``c * scale * sigma_max(A)^2``.

        ``c`` is the per-sample curvature bound (1 for least squares, 2 for the squared hinge);
        ``sigma_max(A)^2`` comes from power iteration on ``A.T @ A`` with a 1% safety margin.
        Cached.
        """
        return self._data_lipschitz()

    def _data_lipschitz(self) -> float:
        """:meth:`lipschitz` of the data part alone (a subclass's penalty term excluded)."""
        if self._lipschitz is None:
            sigma2 = _power_iteration(self._A) * self._MARGIN
            self._lipschitz = self._CURVATURE * self._scale * sigma2
        return self._lipschitz

    def stochastic_lipschitz(self) -> float:
        """Expected-smoothness constant of :meth:`stochastic_gradient` (``1 / step`` default).

        For ``b``-nice sampling (``b`` samples without replacement) of ``F = (1/n) sum f_i``
        this is ``n (b - 1) / (b (n - 1)) L + (n - b) / (b (n - 1)) L_max`` (Gower et al.,
        "SGD: general analysis and improved rates", ICML 2019), where ``L`` is the constant of
        ``F`` and ``L_max = c max_i ||A_i||^2`` the largest per-sample constant; scaled like
        :meth:`lipschitz`. Equals :meth:`lipschitz` when ``b = n``.
        """
        n, b = self.n_samples, self.batch_size
        full = self._data_lipschitz() / (self._scale * n)  # constant of the mean loss F
        per_sample = self._CURVATURE * float(np.max(np.einsum("ij,ij->i", self._A, self._A)))
        if n == 1:
            expected = per_sample
        else:
            expected = n * (b - 1) / (b * (n - 1)) * full + (n - b) / (b * (n - 1)) * per_sample
        return self._scale * n * expected


class LeastSquares(_LinearModelLoss):
    """Least squares ``f(w) = (scale / 2) * sum_i (<A_i, w> - y_i)^2``.

    ``scale`` is ``1 / n_samples`` (``reduction="mean"``, the default) or ``1``
    (``reduction="sum"``, the paper's form up to the factor 1/2). The gradient is
    ``scale * A.T @ (A w - y)``.

    Parameters
    ----------
    A : array-like of float, shape (n_samples, *feature_shape)
        Features; ``A[i]`` is the paper's ``X_i``. Not copied, never modified.
    y : array-like of float, shape (n_samples,)
        Targets.
    reduction : {"mean", "sum"}, default "mean"
    batch_size : int, default 32
        Samples per :meth:`stochastic_gradient` call (capped at ``n_samples``).

    Notes
    -----
    :meth:`minimize_on_support` solves the restricted least-squares problem exactly with
    :func:`numpy.linalg.lstsq` (minimum-norm solution when the support has more columns
    than the problem has rank), as GradMP/CoSaMP prescribe (Needell & Tropp 2009).
    """

    _CURVATURE = 1.0

    def _losses(self, margins, y):
        return 0.5 * np.square(margins - y)

    def _derivatives(self, margins, y):
        return margins - y

    def minimize_on_support(self, w, support) -> np.ndarray:
        """``argmin f(z)`` over ``z`` with ``z = 0`` outside ``support``; shape of ``w``.

        Parameters
        ----------
        w : ndarray, shape ``feature_shape`` or ``(n_features,)``
            Only its shape is used.
        support : ndarray of bool, same shape as ``w``
        """
        flat = self._flat(w)
        mask = np.asarray(support, dtype=bool).reshape(-1)
        if mask.shape != flat.shape:
            raise ValueError(f"support has {mask.size} elements, w has {flat.size}")
        z = np.zeros_like(flat)
        if mask.any():
            z[mask] = np.linalg.lstsq(self._A[:, mask], self._y, rcond=None)[0]
        return z.reshape(np.shape(w))

    def values_after_removing(self, w, parts) -> np.ndarray:
        """``f(w - u)`` for each ``(index, u)`` of ``parts``, ``u`` on the flat coordinates
        ``index``: one product ``A w``, then ``O(n_samples |index|)`` per part instead of a
        whole :meth:`value` (CoGEnT's backward step tries removing every selected group).

        Parameters
        ----------
        w : ndarray, shape ``feature_shape`` or ``(n_features,)``
        parts : sequence of (ndarray of int, ndarray of float)
            Each ``(index, u)`` with ``index`` and ``u`` of the same length.

        Returns
        -------
        ndarray of float, shape (len(parts),)
        """
        residual = self._A @ self._flat(w) - self._y
        return np.array(
            [
                0.5 * self._scale * float(np.sum(np.square(residual - self._A[:, index] @ u)))
                for index, u in parts
            ]
        )


class SquaredHinge(_LinearModelLoss):
    """Squared hinge ``f(w) = scale * sum_i max(0, 1 - y_i <A_i, w>)^2 + (l2 / 2) ||w||^2``.

    Labels are -1 or 1. ``scale`` is ``1 / n_samples`` (``reduction="mean"``, the default) or
    ``1`` (``reduction="sum"``, the paper's form). The gradient is
    ``-2 scale * sum_i y_i max(0, 1 - y_i <A_i, w>) A_i + l2 w``; it is Lipschitz with constant
    ``2 scale sigma_max(A)^2 + l2``. The ridge term (``l2 > 0``) is an option, off by
    default: with ``l2 = 0`` every method returns exactly what it returns without it.

    Parameters
    ----------
    A : array-like of float, shape (n_samples, *feature_shape)
    y : array-like, shape (n_samples,)
        Labels, each -1 or 1.
    reduction : {"mean", "sum"}, default "mean"
    batch_size : int, default 32
        Samples per :meth:`stochastic_gradient` call (capped at ``n_samples``).
    l2 : float, default 0.0
        Weight ``>= 0`` of the ridge term ``(l2 / 2) ||w||^2``, added to ``f`` whatever the
        ``reduction``. On separable data the unpenalised loss has many minimisers (every
        ``w`` with all margins ``>= 1``); the ridge term picks the one of smallest norm, which
        also changes the direction of ``w`` and so its predictions.

    Notes
    -----
    There is no closed-form subspace minimiser; GradMP falls back to gradient steps
    restricted to the support.

    The per-sample pieces split the ridge term evenly, ``f = scale * sum_i f_i`` with
    ``f_i(w) = max(0, 1 - y_i <A_i, w>)^2 + l2 / (2 scale n_samples) ||w||^2``, so
    :meth:`stochastic_gradient` (``... + l2 w``, exact in the ridge part) stays unbiased and
    :meth:`sample_gradient` is the gradient of ``f_i``.
    """

    _CURVATURE = 2.0

    def __init__(
        self, A, y, *, reduction: str = "mean", batch_size: int = 32, l2: float = 0.0
    ) -> None:
        super().__init__(A, y, reduction=reduction, batch_size=batch_size)
        if not np.all(np.isin(self._y, (-1.0, 1.0))):
            bad = self._y[~np.isin(self._y, (-1.0, 1.0))][0]
            raise ValueError(f"y must hold labels -1 and 1 only, got {bad!r}")
        if isinstance(l2, bool) or not isinstance(l2, Real) or not (0.0 <= float(l2) < np.inf):
            raise ValueError(f"l2 must be a finite number >= 0, got {l2!r}")
        self.l2 = float(l2)

    # The ridge term is added only when l2 > 0, so that l2 = 0 is today's loss bit for bit.

    def value(self, w) -> float:
        """``f(w)``; ``w`` has shape ``feature_shape`` or ``(n_features,)``."""
        data = super().value(w)
        if self.l2:
            flat = self._flat(w)
            data += 0.5 * self.l2 * float(flat @ flat)
        return data

    def gradient(self, w) -> np.ndarray:
        """``grad f(w)``, same shape as ``w``."""
        g = super().gradient(w)
        if self.l2:
            g = g + self.l2 * np.asarray(w, dtype=np.float64)
        return g

    def stochastic_gradient(self, w, rng: np.random.Generator) -> np.ndarray:
        """Unbiased mini-batch estimate of ``grad f(w)`` (the ridge part exact), shape of ``w``."""
        g = super().stochastic_gradient(w, rng)
        if self.l2:
            g = g + self.l2 * np.asarray(w, dtype=np.float64)
        return g

    def sample_gradient(self, w, index: int) -> np.ndarray:
        """Gradient of ``f_i`` (see Notes), unscaled, shape of ``w``."""
        g = super().sample_gradient(w, index)
        if self.l2:
            g = g + self.l2 / (self._scale * self.n_samples) * np.asarray(w, dtype=np.float64)
        return g

    def lipschitz(self) -> float:
        """Lipschitz constant of :meth:`gradient`: ``2 scale sigma_max(A)^2 + l2`` (cached)."""
        data = super().lipschitz()
        return data + self.l2 if self.l2 else data

    def stochastic_lipschitz(self) -> float:
        """The data part's expected-smoothness constant (see the base class) plus ``l2``.

        Each ``f_i`` of the Notes gains curvature ``l2 / (scale n_samples)`` from the ridge
        term, the mean of the ``f_i`` as much, so the constant, scaled like :meth:`lipschitz`,
        gains ``l2``.
        """
        data = super().stochastic_lipschitz()
        return data + self.l2 if self.l2 else data

    def _losses(self, margins, y):
        return np.square(np.maximum(0.0, 1.0 - y * margins))

    def _derivatives(self, margins, y):
        return -2.0 * y * np.maximum(0.0, 1.0 - y * margins)

    def predict(self, w) -> np.ndarray:
        """Predicted labels ``sign(<A_i, w>)`` (0 counted as 1), shape (n_samples,)."""
        return np.where(self._A @ self._flat(w) >= 0.0, 1.0, -1.0)

    def error_rate(self, w) -> float:
        """Fraction of training samples misclassified by ``w``."""
        return float(np.mean(self.predict(w) != self._y))


class Logistic(_LinearModelLoss):
    """Logistic loss ``f(w) = scale * sum_i log(1 + exp(-y_i <A_i, w>))``, labels in {-1, 1}.

    The loss of online logistic regression in Zhou, Chen & Ying, "Dual averaging method for
    online graph-structured sparsity", KDD 2019, section 5.3. ``scale`` is ``1 / n_samples``
    (``reduction="mean"``, the default) or ``1`` (``"sum"``). The gradient is
    ``-scale * sum_i y_i sigma(-y_i <A_i, w>) A_i`` with ``sigma`` the logistic function; it is
    Lipschitz with constant ``scale * sigma_max(A)^2 / 4``.

    Parameters
    ----------
    A : array-like of float, shape (n_samples, *feature_shape)
    y : array-like, shape (n_samples,)
        Labels, each -1 or 1.
    reduction : {"mean", "sum"}, default "mean"
    batch_size : int, default 32
        Samples per :meth:`stochastic_gradient` call (capped at ``n_samples``).
    """

    _CURVATURE = 0.25

    def __init__(self, A, y, *, reduction: str = "mean", batch_size: int = 32) -> None:
        super().__init__(A, y, reduction=reduction, batch_size=batch_size)
        if not np.all(np.isin(self._y, (-1.0, 1.0))):
            bad = self._y[~np.isin(self._y, (-1.0, 1.0))][0]
            raise ValueError(f"y must hold labels -1 and 1 only, got {bad!r}")

    def _losses(self, margins, y):
        return np.logaddexp(0.0, -y * margins)

    def _derivatives(self, margins, y):
        # -y * sigma(-y m), written with exp of a non-positive number only
        z = -y * margins
        e = np.exp(-np.abs(z))
        return -y * np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    def predict(self, w) -> np.ndarray:
        """Predicted labels ``sign(<A_i, w>)`` (0 counted as 1), shape (n_samples,)."""
        return np.where(self._A @ self._flat(w) >= 0.0, 1.0, -1.0)
