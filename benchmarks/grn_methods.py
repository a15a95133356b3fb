"""Network inference from time series: the DBN regression with TVCS caps, and baselines.

The dynamic Bayesian network of the TVCS paper (Yang et al., ICML 2017, section 5.3; Zou &
Conzen 2005): each gene's level at ``t + 1`` is regressed on every gene's level at ``t``,

    minimise  f(W) = 1/(2n) sum_t || x_{t+1} - D x_t - W x_t ||^2
    over W with zero diagonal, at most ``max_regulators`` non-zeros per row (a target's
    regulators), ``max_targets`` per column (a regulator's targets) and ``total`` in all,

``D`` a free diagonal (each gene's self-persistence, not an edge and not capped). ``D`` is
profiled out exactly (Frisch-Waugh-Lovell): for target ``i`` the target and the other genes'
levels are replaced by their residuals on gene ``i``'s own level, which leaves an ordinary
least-squares problem in the ``n (n - 1)`` off-diagonal weights, solved with
:class:`projections.solvers.LeastSquares` (one sample per time step and target gene) by
:func:`projections.solvers.iht` or :func:`~projections.solvers.gradmp` and the exact TVCS
projection. (The paper regresses ``x_{t+1} - x_t`` and drops the diagonal; the free diagonal
is that model's ``P - I`` diagonal, fitted rather than left out.)

Edge scores for the AUC: the support's entries rank above every other entry, by ``|w|``; the
entries outside the support rank below, by the magnitude of the final gradient, ``|grad f(w)|``
(how much one more IHT step would move them: ``step |g|``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from projections import TVCSStructure
from projections.cardinality import project_top_k
from projections.solvers import LeastSquares, gradmp, iht, tvcs_projection

__all__ = [
    "Inferred",
    "dbn_loss",
    "genie3",
    "lagged_correlation",
    "partial_correlation",
    "pearson_correlation",
    "top_scores",
    "true_support_loss",
    "tvcs_network",
]


@dataclass(frozen=True)
class Inferred:
    """An inferred network: ``edges`` (bool) and ``scores`` (float), both ``(n, n)``.

    ``loss`` is, for the regressions, the DBN loss of the least-squares refit on the final
    support (how well the support explains the data), ``None`` otherwise.
    """

    edges: np.ndarray
    scores: np.ndarray
    loss: float | None = None


def _check_series(series) -> np.ndarray:
    series = np.asarray(series, dtype=np.float64)
    if series.ndim != 3 or series.shape[1] < 2 or series.shape[2] < 2:
        raise ValueError(
            "series must have shape (n_series, n_times >= 2, n_genes >= 2), "
            f"got shape {series.shape}"
        )
    if not np.all(np.isfinite(series)):
        raise ValueError("series must be finite")
    return series


def _lagged(series: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Regressors ``X`` (levels at ``t``) and targets ``Y`` (at ``t + 1``), ``(m, n)`` each."""
    n = series.shape[2]
    return series[:, :-1].reshape(-1, n), series[:, 1:].reshape(-1, n)


def _off_diagonal(n: int) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = np.nonzero(~np.eye(n, dtype=bool))
    return rows, cols


def dbn_loss(series) -> LeastSquares:
    """The DBN least-squares loss over the off-diagonal weights, self-persistence profiled out.

    Parameters
    ----------
    series : ndarray, shape (n_series, n_times, n_genes)

    Returns
    -------
    LeastSquares
        Features of shape ``(m * n_genes, n_genes * (n_genes - 1))`` (``m = n_series *
        (n_times - 1)``), one sample per time step and target; the weight vector lists the
        off-diagonal entries of ``W`` row by row (``numpy.nonzero(~eye)`` order).
    """
    X, Y = _lagged(_check_series(series))
    m, n = X.shape
    rows, cols = _off_diagonal(n)
    own = np.maximum(np.einsum("ti,ti->i", X, X), 1e-300)
    A = np.zeros((m, n, rows.size))
    y = np.empty((m, n))
    for i in range(n):
        xi = X[:, i]
        y[:, i] = Y[:, i] - (xi @ Y[:, i] / own[i]) * xi
        block = rows == i
        others = X[:, cols[block]]
        A[:, i, block] = others - np.outer(xi, xi @ others / own[i])
    return LeastSquares(A.reshape(m * n, rows.size), y.reshape(-1))


def _to_matrix(flat: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n, n), dtype=flat.dtype)
    rows, cols = _off_diagonal(n)
    out[rows, cols] = flat
    return out


def _check_cap(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def tvcs_network(
    series, *, max_regulators, max_targets, total, solver: str = "iht", caps: str = "tvcs"
) -> Inferred:
    """Infer the network by the capped DBN regression.

    Parameters
    ----------
    series : ndarray, shape (n_series, n_times, n_genes)
    max_regulators, max_targets, total : int
        Caps: regulators per target (rows), targets per regulator (columns), edges in all.
    solver : {"iht", "gradmp"}
    caps : {"tvcs", "top-k"}
        ``"top-k"`` keeps only the total (plain sparsity, the baseline).

    Returns
    -------
    Inferred
        ``edges`` is the final support; ``scores`` as the module docstring says.
    """
    series = _check_series(series)
    n = series.shape[2]
    max_regulators = _check_cap(max_regulators, "max_regulators")
    max_targets = _check_cap(max_targets, "max_targets")
    total = _check_cap(total, "total")
    if solver not in ("iht", "gradmp"):
        raise ValueError(f"solver must be 'iht' or 'gradmp', got {solver!r}")
    if caps not in ("tvcs", "top-k"):
        raise ValueError(f"caps must be 'tvcs' or 'top-k', got {caps!r}")
    loss = dbn_loss(series)
    rows, cols = _off_diagonal(n)
    if caps == "tvcs":
        structure = TVCSStructure.from_labels(
            rows, cols, caps1=[max_regulators] * n, caps2=[max_targets] * n, total=total
        )
        projection = tvcs_projection(structure)
    else:
        projection = functools.partial(project_top_k, k=total)
        if solver == "gradmp":
            projection.doubled = lambda: functools.partial(project_top_k, k=2 * total)
    result = iht(loss, projection) if solver == "iht" else gradmp(loss, projection)
    w = np.asarray(result.solution, dtype=np.float64).reshape(-1)
    support = np.asarray(result.support).reshape(-1)
    g = np.abs(loss.gradient(w))
    outside = g / (g.max() + 1e-300)  # in [0, 1]
    scores = np.where(support, 2.0 + np.abs(w), outside)
    refit = loss.value(loss.minimize_on_support(w, support))
    return Inferred(_to_matrix(support, n), _to_matrix(scores, n), refit)


def true_support_loss(series, edges) -> float:
    """The DBN loss of the least-squares fit on the true edges (``edges``, bool ``(n, n)``)."""
    loss = dbn_loss(series)
    edges = np.asarray(edges, dtype=bool)
    flat = edges[~np.eye(edges.shape[0], dtype=bool)]
    return loss.value(loss.minimize_on_support(np.zeros(flat.size), flat))


def top_scores(scores, total) -> np.ndarray:
    """The ``total`` off-diagonal entries of largest score, as a boolean ``(n, n)`` matrix."""
    scores = np.asarray(scores, dtype=np.float64)
    total = _check_cap(total, "total")
    n = scores.shape[0]
    rows, cols = _off_diagonal(n)
    flat = scores[rows, cols]
    keep = np.argsort(-flat, kind="stable")[:total]
    chosen = np.zeros(flat.size, dtype=bool)
    chosen[keep] = True
    return _to_matrix(chosen, n)


def pearson_correlation(series) -> np.ndarray:
    """``|corr(x_i, x_j)|`` over all time points (symmetric; PCC), shape ``(n, n)``."""
    series = _check_series(series)
    levels = series.reshape(-1, series.shape[2])
    return np.abs(np.corrcoef(levels, rowvar=False))


def partial_correlation(series) -> np.ndarray:
    """``|-Theta_ij / sqrt(Theta_ii Theta_jj)|``, ``Theta`` the inverse correlation matrix."""
    series = _check_series(series)
    levels = series.reshape(-1, series.shape[2])
    theta = np.linalg.pinv(np.corrcoef(levels, rowvar=False))
    d = np.sqrt(np.abs(np.diag(theta)))
    return np.abs(theta / np.outer(d, d))


def lagged_correlation(series) -> np.ndarray:
    """``|corr(x_j(t), x_i(t + 1))|`` at ``[i, j]`` (target ``i``, regulator ``j``)."""
    X, Y = _lagged(_check_series(series))
    Xc = (X - X.mean(axis=0)) / X.std(axis=0)
    Yc = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    return np.abs(Yc.T @ Xc / X.shape[0])


def genie3(series, *, n_trees: int = 100, seed: int = 0) -> np.ndarray:
    """GENIE3 importances (Huynh-Thu et al. 2010) by arboreto's per-target random forest.

    Each gene's level is regressed on every other gene's at the same time point (all series'
    points pooled) with ``n_trees`` trees; ``scores[i, j]`` is regulator ``j``'s importance for
    target ``i``. Calls ``arboreto.core.infer_partial_network`` one target at a time, without
    arboreto's dask graph (``arboreto.algo.genie3`` fails under dask 2026: "Must supply at
    least one delayed object"). Needs ``pip install arboreto``.
    """
    from arboreto.core import RF_KWARGS, infer_partial_network

    series = _check_series(series)
    levels = series.reshape(-1, series.shape[2])
    n = levels.shape[1]
    names = [str(j) for j in range(n)]
    scores = np.zeros((n, n))
    kwargs = {**RF_KWARGS, "n_estimators": int(n_trees)}
    for i in range(n):
        links = infer_partial_network(
            "RF", kwargs, levels, names, names[i], levels[:, i], seed=seed
        )
        scores[i, links["TF"].astype(int).to_numpy()] = links["importance"].to_numpy()
    return scores
