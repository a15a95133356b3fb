"""An unpenalised intercept for the solvers: projections that leave the last weight free.

A linear model with an intercept, margins ``<a_i, w> + b``, is the model without one on the
samples ``[a_i, 1]``: :func:`with_intercept_column` appends that column of ones to the design,
and the solvers fit ``p + 1`` weights, the last one ``b``. The sparsity set constrains the ``p``
feature weights only, so the projection must act on the first ``p`` entries and pass the last
one through: :class:`FreeIntercept` wraps any projection to do that. This is how the code of
Zhou, Chen & Ying (KDD 2019) fits its online logistic regressions (its weight vector has
``p + 1`` entries and the head and tail projections see the first ``p``);
:func:`~projections.solvers.graph_da` takes ``fit_intercept=True`` for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from projections.solvers._common import accepts_warm_start
from projections.tvcs import _as_real

__all__ = ["FreeIntercept", "InterceptProjectionResult", "with_intercept_column"]


def with_intercept_column(A) -> np.ndarray:
    """The design ``A`` with a column of ones appended, for a model with an intercept.

    Parameters
    ----------
    A : array-like of float, shape (n_samples, p)
        The design, one row per sample (real numbers; complex is refused).

    Returns
    -------
    ndarray of float64, shape (n_samples, p + 1)
        ``A`` then a column of ones: the last weight fitted on it is the intercept.

    Raises
    ------
    ValueError
        If ``A`` is not two-dimensional or not real-valued.
    """
    A = _as_real(A, "A").astype(np.float64)
    if A.ndim != 2:
        raise ValueError(f"A must have shape (n_samples, n_features), got shape {A.shape}")
    return np.hstack([A, np.ones((A.shape[0], 1))])


@dataclass(frozen=True)
class InterceptProjectionResult:
    """The projection of ``v`` (shape ``(p + 1,)``) with a free last entry.

    Attributes
    ----------
    x : ndarray of float, shape (p + 1,)
        The inner projection of ``v[:p]``, then ``v[p]`` unchanged.
    support : ndarray of bool, shape (p + 1,)
        The inner support, then True: the intercept is always in the model.
    warm_start : object or None
        The inner projection's ``warm_start``, for its next call.
    inner : object
        The inner projection's result (its ``message``, ``details``, ...).
    """

    x: np.ndarray
    support: np.ndarray
    warm_start: object
    inner: object


class FreeIntercept:
    """A projection acting on all entries but the last, which it passes through.

    ``FreeIntercept(projection)(v)`` for ``v`` of shape ``(p + 1,)`` is ``projection(v[:p])``
    followed by ``v[p]``: the Euclidean projection onto ``C x R`` when ``projection`` is the one
    onto ``C``, since the squared distance splits into the ``p`` entries' and the last one's.
    A ``warm_start`` is handed to ``projection`` when it takes one.

    Parameters
    ----------
    projection : callable
        ``projection(u) -> result`` with ``.x`` and ``.support`` of ``u``'s shape ``(p,)``.

    Raises
    ------
    TypeError
        If ``projection`` is not callable.
    """

    def __init__(self, projection) -> None:
        if not callable(projection):
            raise TypeError(f"projection must be callable, got {type(projection).__name__}")
        self.projection = projection
        self._warm = accepts_warm_start(projection)

    def __call__(self, v, warm_start=None) -> InterceptProjectionResult:
        """Project ``v[:p]`` with the wrapped projection and pass ``v[p]`` through.

        Parameters
        ----------
        v : array-like of float, shape (p + 1,)
            The ``p`` feature weights, then the intercept. Not modified.
        warm_start : object, optional
            Handed to the wrapped projection when it takes one (and this is not None).

        Returns
        -------
        InterceptProjectionResult
            ``x`` and ``support`` of shape ``(p + 1,)``, the last entry ``v[p]`` and True.

        Raises
        ------
        ValueError
            ``v`` not a real vector of at least two entries.
        """
        v = _as_real(v).astype(np.float64)
        if v.ndim != 1 or v.size < 2:
            raise ValueError(
                f"v must be a vector of the p features' weights and the intercept, shape "
                f"(p + 1,) with p >= 1; got shape {v.shape}"
            )
        kwargs = {"warm_start": warm_start} if self._warm and warm_start is not None else {}
        inner = self.projection(v[:-1], **kwargs)
        x = np.append(np.asarray(inner.x, dtype=np.float64).reshape(-1), v[-1])
        support = np.append(np.asarray(inner.support, dtype=bool).reshape(-1), True)
        return InterceptProjectionResult(x, support, getattr(inner, "warm_start", None), inner)
