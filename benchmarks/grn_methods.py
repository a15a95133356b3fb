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
import math
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from projections import TVCSStructure
from projections.cardinality import project_top_k
from projections.solvers import LeastSquares, gradmp, iht, tvcs_projection
from projections.tvcs import project

__all__ = [
    "MI_ESTIMATORS",
    "Inferred",
    "aracne",
    "aracne_from_mi",
    "clr",
    "clr_from_mi",
    "dbn_loss",
    "genie3",
    "lagged_correlation",
    "mrnet",
    "mrnet_from_mi",
    "mutual_information",
    "partial_correlation",
    "pearson_correlation",
    "stability_selection",
    "tigress",
    "top_scores",
    "true_support_loss",
    "tvcs_network",
    "tvcs_stability_network",
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
    return _dbn_loss_of(*_lagged(_check_series(series)))


def _dbn_loss_of(X: np.ndarray, Y: np.ndarray) -> LeastSquares:
    """:func:`dbn_loss` of the time steps ``X`` (levels at ``t``) and ``Y`` (at ``t + 1``),
    ``(m, n)`` each."""
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
    structure = _caps(n, max_regulators, max_targets, total)
    projection = _projection(structure, solver, caps)
    loss = dbn_loss(series)
    w, support = _fit(loss, projection, solver)
    g = np.abs(loss.gradient(w))
    outside = g / (g.max() + 1e-300)  # in [0, 1]
    scores = np.where(support, 2.0 + np.abs(w), outside)
    refit = loss.value(loss.minimize_on_support(w, support))
    return Inferred(_to_matrix(support, n), _to_matrix(scores, n), refit)


def _caps(n: int, max_regulators, max_targets, total) -> TVCSStructure:
    """The caps over the off-diagonal weights, after checking them."""
    max_regulators = _check_cap(max_regulators, "max_regulators")
    max_targets = _check_cap(max_targets, "max_targets")
    total = _check_cap(total, "total")
    rows, cols = _off_diagonal(n)
    return TVCSStructure.from_labels(
        rows, cols, caps1=[max_regulators] * n, caps2=[max_targets] * n, total=total
    )


def _projection(structure: TVCSStructure, solver: str, caps: str):
    """The solver's projection: the exact TVCS one, or top-k of the total (``caps="top-k"``)."""
    if solver not in ("iht", "gradmp"):
        raise ValueError(f"solver must be 'iht' or 'gradmp', got {solver!r}")
    if caps not in ("tvcs", "top-k"):
        raise ValueError(f"caps must be 'tvcs' or 'top-k', got {caps!r}")
    if caps == "tvcs":
        return tvcs_projection(structure)
    projection = functools.partial(project_top_k, k=structure.total)
    if solver == "gradmp":
        projection.doubled = lambda: functools.partial(project_top_k, k=2 * structure.total)
    return projection


def _fit(loss: LeastSquares, projection, solver: str) -> tuple[np.ndarray, np.ndarray]:
    """The solver's weights and support, flat."""
    result = iht(loss, projection) if solver == "iht" else gradmp(loss, projection)
    w = np.asarray(result.solution, dtype=np.float64).reshape(-1)
    return w, np.asarray(result.support).reshape(-1)


def tvcs_stability_network(
    series,
    *,
    max_regulators,
    max_targets,
    total,
    solver: str = "gradmp",
    n_runs: int = 25,
    levels=(1.0,),
    seed=0,
) -> Inferred:
    """The capped DBN regression with stability selection (Meinshausen & Buhlmann 2010).

    ``n_runs`` times the time steps are split at random into two halves, and the regression
    of :func:`tvcs_network` is solved on each half at every level of the cap ladder
    ``levels``: at level ``c`` every cap (regulators per target, targets per regulator, total)
    is ``c`` times the given one, rounded up. An edge's score is the fraction of the
    ``2 n_runs len(levels)`` solves (halves times levels) whose support holds it, ties broken
    by the full data's :func:`tvcs_network` score (scaled to ``[0, 1e-6]``, which never
    reorders two different fractions); the predicted network is the exact TVCS projection of
    the scores at the given caps (level 1), the most stable edges within the caps.

    With the one level ``(1.0,)`` (the default) the score is the share of halves selecting
    the edge, plain stability selection; a ladder of levels integrates it over the model's
    size, TIGRESS's *area* principle (Haury et al. 2012: the fraction of LARS runs in which an
    edge is among the first ``k`` selected, averaged over ``k = 1..5``) with the caps in place
    of LARS's steps. At one level most candidate edges are never selected and tie at 0,
    ordered only by the tie-break; supports at larger caps reach the next candidates,
    and an edge already selected at small caps (an early entrant) is counted at every larger
    level too, so it outranks one that enters late. With ``max_regulators = 3`` the ladder
    ``(1/3, 2/3, 1, 4/3, 5/3)`` gives each target 1 to 5 regulators, as TIGRESS's 5 LARS
    steps do, with the other caps in proportion. Unlike LARS's, the supports along the ladder
    need not be nested.

    Parameters
    ----------
    series : ndarray, shape (n_series, n_times, n_genes)
        At least 4 time steps in all.
    max_regulators, max_targets, total : int
        The caps of the prediction (level 1).
    solver : {"iht", "gradmp"}
    n_runs : int >= 1
    levels : sequence of float > 0, shape (n_levels,)
        The cap ladder, factors of the caps.
    seed : seed or numpy Generator
        Of the splits (the same splits at every level).

    Returns
    -------
    Inferred
        ``edges`` and ``scores`` of shape ``(n_genes, n_genes)``; ``loss`` is the full data's
        least-squares refit on the predicted edges.
    """
    series = _check_series(series)
    n = series.shape[2]
    structure = _caps(n, max_regulators, max_targets, total)
    projections = [
        _projection(_scaled_caps(n, max_regulators, max_targets, total, c), solver, "tvcs")
        for c in _check_levels(levels)
    ]
    n_runs = _check_cap(n_runs, "n_runs")
    X, Y = _lagged(series)
    if X.shape[0] < 4:
        raise ValueError(f"stability selection needs at least 4 time steps, got {X.shape[0]}")
    rng = np.random.default_rng(seed)
    counts = np.zeros(n * (n - 1))
    for _ in range(n_runs):
        order = rng.permutation(X.shape[0])
        for half in np.array_split(order, 2):
            loss = _dbn_loss_of(X[half], Y[half])
            for projection in projections:
                counts += _fit(loss, projection, solver)[1]
    full = tvcs_network(
        series, max_regulators=max_regulators, max_targets=max_targets, total=total, solver=solver
    )
    rows, cols = _off_diagonal(n)
    tie_break = full.scores[rows, cols] / max(float(full.scores.max()), 1e-300)  # in [0, 1]
    scores = counts / (2 * n_runs * len(projections)) + 1e-6 * tie_break
    edges = np.asarray(project(scores, structure).support).reshape(-1)
    loss = dbn_loss(series)
    refit = loss.value(loss.minimize_on_support(np.zeros(edges.size), edges))
    return Inferred(_to_matrix(edges, n), _to_matrix(scores, n), refit)


def _check_levels(levels) -> list[float]:
    """The cap ladder as floats, after checking it is a non-empty list of finite factors > 0."""
    out = np.asarray(levels, dtype=np.float64).reshape(-1)
    if out.size == 0 or not np.all(np.isfinite(out)) or np.any(out <= 0):
        raise ValueError(f"levels must be non-empty finite factors > 0, got {levels!r}")
    return out.tolist()


def _scaled_caps(n: int, max_regulators, max_targets, total, factor: float) -> TVCSStructure:
    """:func:`_caps` with every cap times ``factor``, rounded up (``1e-9`` absorbs the rounding
    of factors such as ``1/3``, so that ``factor = 1`` gives the caps themselves)."""

    def scale(cap) -> int:
        return max(1, math.ceil(factor * int(cap) - 1e-9))

    return _caps(n, scale(max_regulators), scale(max_targets), scale(total))


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
    least one delayed object"). Needs arboreto (in the ``dev`` extra).
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


# --- Mutual-information and stability-selection baselines (the paper's Table 1) -------------
#
# CLR, ARACNE and MRNET (the network method MINET, the R package the paper cites as "MINET",
# runs by default) score pairs of genes by their mutual information; TIGRESS by stability
# selection with randomised LARS. As published, all four score *simultaneous* expression (every
# series' time points pooled as samples), as GENIE3 and PCC do above; ``lag=True`` scores a
# target's level at ``t + 1`` against its candidate regulators' at ``t`` instead, the DBN's
# pairing (the benchmark runs both). Every score matrix has the target on rows and the regulator
# on columns, zero diagonal.

MI_ESTIMATORS = ("spearman", "gaussian", "miller-madow")


def _pairing(series, lag: bool) -> tuple[np.ndarray, np.ndarray]:
    """Regulators' levels ``X`` and targets' levels ``Y``, ``(m, n)`` each."""
    series = _check_series(series)
    if lag:
        return _lagged(series)
    levels = series.reshape(-1, series.shape[2])
    return levels, levels


def _gaussian_mi(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``-1/2 log(1 - rho^2)``, ``rho`` the Pearson correlation of ``Y[:, i]`` and ``X[:, j]``."""
    Xc = (X - X.mean(axis=0)) / X.std(axis=0)
    Yc = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    rho2 = np.minimum((Yc.T @ Xc / X.shape[0]) ** 2, 1.0 - 1e-12)
    return -0.5 * np.log1p(-rho2)


def _equal_frequency_bins(X: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin ``0..n_bins-1`` of each entry by its column rank (ties share the lowest rank's bin)."""
    from scipy.stats import rankdata

    ranks = rankdata(X, method="min", axis=0) - 1  # 0 .. m-1
    return np.minimum((ranks * n_bins) // X.shape[0], n_bins - 1).astype(np.int64)


def _miller_madow_entropy(counts: np.ndarray, m: int) -> np.ndarray:
    """Plug-in entropy (nats) plus ``(K - 1) / (2 m)``, ``K`` the non-empty cells; last axis."""
    p = counts / m
    with np.errstate(divide="ignore", invalid="ignore"):
        plug_in = -np.sum(np.where(counts > 0, p * np.log(p), 0.0), axis=-1)
    return plug_in + ((counts > 0).sum(axis=-1) - 1) / (2.0 * m)


def _miller_madow_mi(X: np.ndarray, Y: np.ndarray, n_bins: int) -> np.ndarray:
    m = X.shape[0]
    bx, by = _equal_frequency_bins(X, n_bins), _equal_frequency_bins(Y, n_bins)
    hx = _miller_madow_entropy(np.stack([np.bincount(c, minlength=n_bins) for c in bx.T]), m)
    hy = _miller_madow_entropy(np.stack([np.bincount(c, minlength=n_bins) for c in by.T]), m)
    out = np.empty((Y.shape[1], X.shape[1]))
    for i in range(Y.shape[1]):
        cells = by[:, i, None] * n_bins + bx  # (m, n_X): the joint cell of each sample
        joint = np.stack([np.bincount(c, minlength=n_bins * n_bins) for c in cells.T])
        out[i] = hy[i] + hx - _miller_madow_entropy(joint, m)
    return out


def mutual_information(X, Y=None, *, estimator: str = "spearman", n_bins=None) -> np.ndarray:
    """Mutual information (nats) of every column of ``Y`` with every column of ``X``.

    Parameters
    ----------
    X : ndarray, shape (m, n_X)
        Samples on rows (e.g. the regulators' levels).
    Y : ndarray, shape (m, n_Y), optional
        Defaults to ``X`` (then the result is symmetric; its diagonal is set to zero).
    estimator : {"spearman", "gaussian", "miller-madow"}
        ``"gaussian"``: the bivariate normal's closed form ``I = -1/2 log(1 - rho^2)`` with the
        Pearson correlation ``rho``; ``"spearman"``: the same with Spearman's rank correlation
        (MINET's default estimator, Meyer et al. 2008; invariant to monotone transforms; for a
        Gaussian pair Spearman's is ``(6 / pi) arcsin(rho / 2)``, so it reads a little low);
        ``"miller-madow"``: equal-frequency discretisation of each variable into ``n_bins``
        bins and ``I = H(X) + H(Y) - H(X, Y)``, each entropy the plug-in estimate plus the
        Miller-Madow bias correction ``(K - 1) / (2 m)``, ``K`` the non-empty cells (Paninski
        2003, Neural Computation 15:1191). It can be slightly negative.
    n_bins : int, optional
        For ``"miller-madow"``; default ``max(2, floor(sqrt(m)))`` (MINET's default).

    Returns
    -------
    ndarray, shape (n_Y, n_X)
        ``mi[i, j] = I(Y_i; X_j)``.
    """
    X = np.asarray(X, dtype=np.float64)
    same = Y is None
    Y = X if same else np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0] or X.shape[0] < 3:
        raise ValueError(
            "X and Y must be 2-D with the same number (>= 3) of samples on rows, "
            f"got shapes {X.shape} and {Y.shape}"
        )
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        raise ValueError("X and Y must be finite")
    if np.any(np.ptp(X, axis=0) == 0) or np.any(np.ptp(Y, axis=0) == 0):
        raise ValueError("every variable must vary: a constant column has no correlation")
    if estimator not in MI_ESTIMATORS:
        raise ValueError(f"estimator must be one of {MI_ESTIMATORS}, got {estimator!r}")
    m = X.shape[0]
    if estimator == "gaussian":
        mi = _gaussian_mi(X, Y)
    elif estimator == "spearman":
        from scipy.stats import rankdata

        mi = _gaussian_mi(rankdata(X, axis=0), rankdata(Y, axis=0))
    else:
        n_bins = max(2, int(np.sqrt(m))) if n_bins is None else n_bins
        if isinstance(n_bins, bool) or not isinstance(n_bins, Integral) or n_bins < 2:
            raise ValueError(f"n_bins must be an integer >= 2, got {n_bins!r}")
        mi = _miller_madow_mi(X, Y, int(n_bins))
    if same:
        mi = 0.5 * (mi + mi.T)
        np.fill_diagonal(mi, 0.0)
    return mi


def _check_square(matrix, name: str) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 3:
        raise ValueError(f"{name} must be a square matrix of at least 3 genes, got {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} must be finite")
    return matrix


def clr_from_mi(mi) -> np.ndarray:
    """CLR scores (Faith et al. 2007, PLoS Biology 5:e8) of a mutual-information matrix.

    ``mi[i, j]`` is z-scored against target ``i``'s background (the mean and sd of row ``i``,
    diagonal excluded) and against regulator ``j``'s (column ``j``), negative z-scores set to 0,
    and the two combined: ``sqrt(z_row^2 + z_col^2)``. For a symmetric ``mi`` row ``j`` is column
    ``j``, which is Faith et al.'s ``sqrt(z_i^2 + z_j^2)``. A background of zero spread gives 0.

    Parameters
    ----------
    mi : ndarray, shape (n, n)

    Returns
    -------
    ndarray, shape (n, n), zero diagonal.
    """
    mi = _check_square(mi, "mi")
    n = mi.shape[0]
    off = ~np.eye(n, dtype=bool)
    values = np.where(off, mi, np.nan)

    def z(axis):
        mean = np.nanmean(values, axis=axis, keepdims=True)
        sd = np.nanstd(values, axis=axis, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(sd > 0, (mi - mean) / sd, 0.0)
        return np.maximum(out, 0.0)

    return np.where(off, np.sqrt(z(1) ** 2 + z(0) ** 2), 0.0)


def aracne_from_mi(mi, *, eps: float = 0.0, redundancy=None) -> np.ndarray:
    """ARACNE (Margolin et al. 2006, BMC Bioinformatics 7:S7): the data processing inequality.

    For a chain ``j -> k -> i`` the mutual information of its ends is at most that of either
    link, so the edge ``(i, j)`` is removed when some third gene ``k`` has
    ``mi[i, j] < min(mi[i, k], redundancy[j, k]) - eps`` (MINET's tolerance convention; the
    default ``eps = 0`` is MINET's). Decisions are taken on the input matrix, not one after
    another, so the result does not depend on the order of the genes. No MI threshold is
    applied before (MINET's ``aracne`` has none).

    Parameters
    ----------
    mi : ndarray, shape (n, n)
        ``mi[i, j]``: target ``i`` against regulator ``j``.
    eps : float >= 0
    redundancy : ndarray, shape (n, n), optional
        The regulators' mutual information among themselves (symmetric); defaults to ``mi``
        (then, for a symmetric ``mi``, the weakest edge of every triangle goes, as published).

    Returns
    -------
    ndarray, shape (n, n)
        ``mi`` on the kept edges, 0 on the removed ones and the diagonal.
    """
    mi = _check_square(mi, "mi")
    red = mi if redundancy is None else _check_square(redundancy, "redundancy")
    if red.shape != mi.shape:
        raise ValueError(f"redundancy must have the shape of mi {mi.shape}, got {red.shape}")
    if not np.isfinite(eps) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    n = mi.shape[0]
    # path[i, j, k] = min(mi[i, k], red[j, k]): the weaker link of the chain j -> k -> i
    path = np.minimum(mi[:, None, :], red[None, :, :])
    idx = np.arange(n)
    path[idx, :, idx] = -np.inf  # k = i
    path[:, idx, idx] = -np.inf  # k = j
    removed = mi < path.max(axis=2) - eps
    out = np.where(removed, 0.0, mi)
    np.fill_diagonal(out, 0.0)
    return out


def mrnet_from_mi(mi, *, redundancy=None) -> np.ndarray:
    """MRNET (Meyer et al. 2007, EURASIP J. Bioinf. Syst. Biol. 79879), MINET's default method.

    For each target ``i``, a forward selection over the other genes by maximum relevance minimum
    redundancy: the first pick maximises ``mi[i, j]``; each next one maximises
    ``mi[i, j] - mean_{k selected} redundancy[j, k]``. Gene ``j``'s score for target ``i`` is
    that value when it is picked (every gene is ranked; later scores can be negative). For a
    symmetric input without ``redundancy`` the network is undirected and the weight of a pair is
    the larger of its two scores (as MINET); with ``redundancy`` it stays directed.

    Parameters
    ----------
    mi : ndarray, shape (n, n)
        ``mi[i, j]``: target ``i`` against regulator ``j`` (relevance).
    redundancy : ndarray, shape (n, n), optional
        The regulators' mutual information among themselves; defaults to ``mi``.

    Returns
    -------
    ndarray, shape (n, n), zero diagonal.
    """
    mi = _check_square(mi, "mi")
    directed = redundancy is not None
    red = _check_square(redundancy, "redundancy") if directed else mi
    if red.shape != mi.shape:
        raise ValueError(f"redundancy must have the shape of mi {mi.shape}, got {red.shape}")
    n = mi.shape[0]
    scores = np.zeros((n, n))
    for i in range(n):
        left = np.ones(n, dtype=bool)
        left[i] = False
        red_sum = np.zeros(n)
        for picked in range(n - 1):
            value = mi[i] - (red_sum / picked if picked else 0.0)
            j = int(np.flatnonzero(left)[np.argmax(value[left])])
            scores[i, j] = value[j]
            left[j] = False
            red_sum += red[:, j]
    return scores if directed else np.maximum(scores, scores.T)


def _mi_inputs(series, lag: bool, estimator: str):
    X, Y = _pairing(series, lag)
    if not lag:
        return mutual_information(X, estimator=estimator), None
    return mutual_information(X, Y, estimator=estimator), mutual_information(X, estimator=estimator)


def clr(series, *, lag: bool = False, estimator: str = "spearman") -> np.ndarray:
    """CLR scores (:func:`clr_from_mi`) of :func:`mutual_information` on the series."""
    relevance, _ = _mi_inputs(series, lag, estimator)
    return clr_from_mi(relevance)


def aracne(series, *, lag: bool = False, eps: float = 0.0, estimator: str = "spearman"):
    """ARACNE scores (:func:`aracne_from_mi`); lagged: relevance at ``t -> t + 1``, redundancy
    among the regulators at ``t``."""
    relevance, redundancy = _mi_inputs(series, lag, estimator)
    return aracne_from_mi(relevance, eps=eps, redundancy=redundancy)


def mrnet(series, *, lag: bool = False, estimator: str = "spearman") -> np.ndarray:
    """MRNET scores (:func:`mrnet_from_mi`); lagged as :func:`aracne`."""
    relevance, redundancy = _mi_inputs(series, lag, estimator)
    return mrnet_from_mi(relevance, redundancy=redundancy)


def stability_selection(
    X, y, *, n_runs: int = 100, n_steps: int = 5, alpha: float = 0.2, rng=None
) -> np.ndarray:
    """TIGRESS's area score (Haury et al. 2012, BMC Systems Biology 6:145) of each feature.

    ``n_runs`` times, the samples are split at random into two halves; on each half the
    centred, unit-norm features are multiplied by weights drawn uniformly from ``[alpha, 1]``
    (randomised LASSO) and ``n_steps`` steps of LARS are run
    (:func:`sklearn.linear_model.lars_path`, ``method="lar"``). ``F(j, k)`` is the fraction of
    the ``2 n_runs`` halves in which feature ``j`` is among the first ``k`` selected; the score
    is the area ``(1 / n_steps) sum_{k=1}^{n_steps} F(j, k)``, in ``[0, 1]``.

    Parameters
    ----------
    X : ndarray, shape (m, p)
    y : ndarray, shape (m,)
    n_runs, n_steps : int >= 1
    alpha : float in (0, 1]
    rng : seed or numpy Generator

    Returns
    -------
    ndarray, shape (p,)
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import lars_path

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],) or X.shape[0] < 4:
        raise ValueError(f"X must be (m >= 4, p) and y (m,), got shapes {X.shape} and {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("X and y must be finite")
    n_runs = _check_cap(n_runs, "n_runs")
    n_steps = _check_cap(n_steps, "n_steps")
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
    rng = np.random.default_rng(rng)
    m, p = X.shape
    counts = np.zeros(p)
    for _ in range(n_runs):
        order = rng.permutation(m)
        for half in (order[: m // 2], order[m // 2 :]):
            A = X[half] - X[half].mean(axis=0)
            norms = np.linalg.norm(A, axis=0)
            A = np.divide(A, norms, out=np.zeros_like(A), where=norms > 0)
            A *= rng.uniform(alpha, 1.0, size=p)
            b = y[half] - y[half].mean()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                _, active, _ = lars_path(A, b, method="lar", max_iter=n_steps)
            # active lists the features in their order of entry; LARS may stop before
            # n_steps entries (residual exhausted), then the later steps add nothing
            for k, j in enumerate(active[:n_steps]):
                counts[j] += n_steps - k  # among the first k' selected for k' = k+1..n_steps
    return counts / (2 * n_runs * n_steps)


def tigress(
    series, *, lag: bool = False, n_runs: int = 100, n_steps: int = 5, alpha: float = 0.2, seed=0
) -> np.ndarray:
    """TIGRESS: :func:`stability_selection` of each target's regulators among the other genes.

    Simultaneous (``lag=False``, as published): target ``x_i`` on the other genes at the same
    time points. Lagged: ``x_i(t + 1)`` on the other genes at ``t``, both first replaced by
    their residuals on ``x_i(t)`` (the target's own persistence profiled out, as in
    :func:`dbn_loss`). Defaults: ``alpha = 0.2`` and ``n_steps = 5`` (TIGRESS's DREAM5
    settings), ``n_runs = 100`` (TIGRESS used 1,000 to 4,000; fewer to fit the time budget).

    Returns
    -------
    ndarray, shape (n, n)
        ``scores[i, j]`` for target ``i``, regulator ``j``; zero diagonal.
    """
    X, Y = _pairing(series, lag)
    n = X.shape[1]
    rng = np.random.default_rng(seed)
    scores = np.zeros((n, n))
    for i in range(n):
        others = np.flatnonzero(np.arange(n) != i)
        A, y = X[:, others], Y[:, i]
        if lag:
            own = X[:, i] - X[:, i].mean()
            scale = max(own @ own, 1e-300)
            y = y - (own @ y / scale) * own
            A = A - np.outer(own, own @ A / scale)
        scores[i, others] = stability_selection(
            A, y, n_runs=n_runs, n_steps=n_steps, alpha=alpha, rng=rng
        )
    return scores
