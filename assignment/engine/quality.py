"""Worker quality from gold questions: hierarchical Beta-binomial shrinkage.

A gold question has a known answer and a category. From each worker's gold answers this module
estimates ``Q[i, j]``, the probability that worker ``i`` answers task ``j`` correctly, as the
worker's estimated accuracy on task ``j``'s category (docs/design.md#worker-quality). Counts
are small (a worker may
have answered three gold questions of a category, or none), so raw fractions correct are useless on
their own: 1/1 would give ``Q = 1`` and infinite log-odds in the Bayes vote. Each estimate is
therefore shrunk towards the level above it,

    population  →  worker overall  →  worker on one category,

the standard hierarchical Beta-binomial model of empirical Bayes (Efron & Morris 1975; Gelman et
al., *Bayesian Data Analysis*, 3rd ed., ch. 5, the rat-tumour example). Gold questions as the
measurement of worker skill for task assignment come from Ho, Jabbari & Vaughan (ICML 2013).

The one public function is :func:`estimate_quality`; it returns a :class:`QualityEstimate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from numbers import Integral, Real

import numpy as np

from assignment.engine.problem import QualityByCategory

__all__ = [
    "DEFAULT_CATEGORY_STRENGTH",
    "DEFAULT_WORKER_STRENGTH",
    "STRENGTH_FITS",
    "QualityEstimate",
    "estimate_quality",
    "estimate_quality_from_counts",
]

#: Pseudo-counts of the Beta prior that pulls a worker's overall accuracy towards the population.
#: Ten gold answers weigh as much as the prior: a worker with 1 gold answer is estimated at
#: roughly the population accuracy (1/11 of the way to its raw 0 or 1), one with 10 lies halfway,
#: and one with 100 or more is essentially its own fraction correct. Observed spreads of worker
#: accuracy in crowdsourcing (standard deviation roughly 0.1 around a mean of 0.7–0.8) correspond
#: to Beta priors of strength ``mu (1 - mu) / sd**2 - 1`` ≈ 10–20, so 10 is the cautious
#: (less shrinking) end. Use ``worker_strength="auto"`` to fit it to the data instead.
DEFAULT_WORKER_STRENGTH = 10.0

#: Pseudo-counts of the Beta prior that pulls a worker's accuracy on one category towards the
#: worker's overall accuracy. Smaller than the worker strength because gold answers are split
#: across categories (so each category has fewer of them) and because a worker's skill differs
#: less between categories than between workers: 5 lets a category with 5 gold answers move
#: halfway from the worker's overall accuracy. Use ``category_strength="auto"`` to fit it.
DEFAULT_CATEGORY_STRENGTH = 5.0

# Range of strengths that ``"auto"`` may return. Below 0.1 there is no shrinkage worth the name;
# above 1e4 every worker with fewer than ~1,000 gold answers is pooled completely.
_AUTO_MIN_STRENGTH = 0.1
_AUTO_MAX_STRENGTH = 1e4

#: How a strength of :class:`QualityEstimate` was set (its ``strength_fits``).
STRENGTH_FITS = ("given", "fitted", "floor", "ceiling", "default")


@dataclass(frozen=True, eq=False)
class QualityEstimate:
    """Worker accuracies estimated from gold answers by :func:`estimate_quality`.

    All arrays are read-only (copy them to modify). Every accuracy lies strictly inside (0, 1)
    (see :func:`estimate_quality`); clipping further away from 0 and 1 is the consumer's choice.

    Attributes
    ----------
    by_category : ndarray of float64, shape (n_workers, n_categories)
        ``q_ic``, worker ``i``'s shrunk accuracy on category ``c``.
    worker_accuracy : ndarray of float64, shape (n_workers,)
        ``a_i``, worker ``i``'s shrunk overall accuracy.
    population_accuracy : float
        ``mu0``, the accuracy of a worker about whom nothing is known.
    gold_counts : ndarray of int64, shape (n_workers,)
        Number of gold answers of each worker.
    strengths : tuple of (float, float)
        ``(worker_strength, category_strength)`` used: the given values, or the fitted ones when
        ``"auto"`` was asked for.
    strength_fits : tuple of (str, str)
        How each strength was set, one of :data:`STRENGTH_FITS`: ``"given"``; for ``"auto"``
        ``"fitted"``, ``"floor"`` (fitted below 0.1 and raised to it: each worker's (or
        category's) accuracy then follows its own gold answers almost alone, a sign of too few
        of them), ``"ceiling"`` (no spread beyond chance: pooled completely, 1e4) or
        ``"default"`` (the data cannot identify it: the default was used).
    task_categories : ndarray of int64, shape (m,)
        Each task's category.
    """

    by_category: np.ndarray
    worker_accuracy: np.ndarray
    population_accuracy: float
    gold_counts: np.ndarray
    strengths: tuple[float, float]
    task_categories: np.ndarray
    strength_fits: tuple[str, str] = ("given", "given")

    @property
    def quality(self) -> QualityByCategory:
        """The estimate as the assignment problem takes it, without the dense matrix."""
        return QualityByCategory(self.by_category, self.task_categories)

    @cached_property
    def matrix(self) -> np.ndarray:
        """``Q[i, j] = by_category[i, task_categories[j]]``, shape (n_workers, m): the dense
        quality matrix (docs/design.md#the-assignment-problem), built on first use (``8 n m``
        bytes)."""
        matrix = self.by_category[:, self.task_categories]
        matrix.flags.writeable = False
        return matrix


def estimate_quality(
    *,
    worker_index,
    item_category,
    correct,
    n_workers: int,
    task_categories,
    n_categories: int | None = None,
    worker_strength: float | str = DEFAULT_WORKER_STRENGTH,
    category_strength: float | str = DEFAULT_CATEGORY_STRENGTH,
) -> QualityEstimate:
    r"""Estimate the worker × task quality matrix from gold answers.

    Parameters
    ----------
    worker_index : array_like of int, shape (k,)
        Worker of each gold answer, in ``[0, n_workers)``.
    item_category : array_like of int, shape (k,)
        Category of the gold question of each answer, in ``[0, n_categories)``.
    correct : array_like of bool, shape (k,)
        Whether each gold answer was correct (bool, or integers / floats equal to 0 or 1).
    n_workers : int
        Number of workers ``n`` (rows of the result). Workers without gold answers are allowed.
    task_categories : array_like of int, shape (m,)
        Category of each task, in ``[0, n_categories)``.
    n_categories : int, optional
        Number of categories. Default: one more than the largest category in ``item_category``
        and ``task_categories`` (0 if both are empty).
    worker_strength : float or "auto", default 10
        ``s``, pseudo-counts of the Beta prior of a worker's overall accuracy (centred on the
        population). ``"auto"`` fits it by the method of moments (Notes).
    category_strength : float or "auto", default 5
        ``t``, pseudo-counts of the Beta prior of a worker's accuracy on one category (centred on
        the worker's overall estimate). ``"auto"`` fits it by the method of moments (Notes).

    Returns
    -------
    QualityEstimate
        ``by_category`` (n, n_categories), ``task_categories`` (m,), ``quality`` (the two as a
        :class:`~assignment.engine.problem.QualityByCategory`), ``matrix`` (n, m, built on
        demand), ``worker_accuracy`` (n,),
        ``population_accuracy``, ``gold_counts`` (n,) and the ``strengths`` used.

    Raises
    ------
    ValueError
        If an argument is malformed; the message starts with the argument's name and gives the
        first bad position.

    Notes
    -----
    With ``n_i`` / ``x_i`` the number of gold answers / correct ones of worker ``i``, ``n_ic`` /
    ``x_ic`` the same within category ``c``, and ``N`` / ``X`` the totals over everyone, the
    estimates are posterior means of the hierarchical Beta-binomial model:

    .. math::

        \mu_0 = \frac{X + 1}{N + 2}, \qquad
        a_i = \frac{x_i + s\,\mu_0}{n_i + s}, \qquad
        q_{ic} = \frac{x_{ic} + t\,a_i}{n_{ic} + t}, \qquad
        Q_{ij} = q_{i,\,\mathrm{category}(j)}.

    * The population accuracy ``mu0`` is the fraction correct pooled over all gold answers, with
      Laplace's rule of succession (a uniform prior, worth two answers) so that it is defined
      with no gold at all (0.5) and is never exactly 0 or 1. Pooling weights workers by their
      number of gold answers; with ``N`` in the thousands the +1/+2 is negligible.
    * A worker with no gold answers gets ``a_i = mu0`` and ``q_ic = mu0`` for every category.
    * A category in which worker ``i`` has no gold answers gets ``q_ic = a_i``; in particular a
      task whose category has no gold questions at all gets each worker's overall accuracy.
    * Each estimate is a weighted mean of a fraction correct in [0, 1] and a prior mean in
      (0, 1) with positive weight, so every output is strictly inside (0, 1). No clipping is
      done here: how far from 0 and 1 to keep Q is the consumer's decision (the
      expected-accuracy code clips at 1e-6).

    **Fitting the strengths** (``"auto"``). Under the model, workers' accuracies ``p_i`` are
    ``Beta`` with mean ``mu`` and strength ``s`` (variance ``mu (1 - mu) / (s + 1)``), and a
    worker's category accuracies are ``Beta`` with mean ``p_i`` and strength ``t``. Both are
    fitted by the method of moments, with ``rho = 1 / (strength + 1)`` the intraclass
    correlation of the answers (Kleinman 1973; the ANOVA estimator of Ridout, Demétrio & Firth
    1999):

    * ``t``, within each worker with gold answers in at least two categories: with
      ``SSB_i = sum_c n_ic (x_ic / n_ic - x_i / n_i)**2``,
      ``W_i = sum_c x_ic (1 - x_ic / n_ic) / (n_i - C_i)`` (``C_i`` categories answered) and
      ``n0_i = n_i - sum_c n_ic**2 / n_i``, ``E SSB_i = v_i (1 - rho) (C_i - 1) + v_i rho n0_i`` and
      ``E W_i = v_i (1 - rho)`` for ``v_i = p_i (1 - p_i)``, so
      ``t = sum_i n0_i W_i / (sum_i SSB_i - sum_i (C_i - 1) W_i)``. Differences between workers
      cancel, so this does not depend on ``s``.
    * ``s``, across workers: with ``SSB = sum_i n_i (x_i / n_i - X / N)**2``, ``g_i = n_i -
      n_i**2 / N`` and ``h_i = rho_c sum_c (n_ic / n_i)**2 + (1 - rho_c) / n_i`` (the variance
      of a worker's fraction correct around its accuracy, per unit ``p_i (1 - p_i)``, including
      the spread between its categories, ``rho_c = 1 / (t + 1)``),
      ``E SSB ≈ mu (1 - mu) sum_i g_i (rho + (1 - rho) h_i)``; solved for ``rho`` with
      ``mu (1 - mu)`` estimated by ``(X / N)(1 - X / N)``.

    A fitted strength is clamped to [0.1, 1e4] (1e4 when the data show no spread beyond the
    binomial noise). When the data cannot identify it (fewer than two workers with gold, no
    worker with two categories and more answers than categories, every answer the same) the
    default (10, resp. 5) is used; ``strengths`` says what was used. The fit is noisy with few
    workers: rely on it with dozens of workers and a few hundred gold answers, not five.

    Cost: three ``np.bincount`` passes over the ``k`` answers and O(n × n_categories) work (the
    (n, m) matrix is gathered only if ``matrix`` is asked for); no Python loop over answers,
    workers or tasks.

    References
    ----------
    B. Efron and C. Morris, "Data analysis using Stein's estimator and its generalizations",
    JASA 70 (1975) 311–319.
    A. Gelman et al., *Bayesian Data Analysis*, 3rd ed., CRC Press 2013, §5.1–5.3.
    C.-J. Ho, S. Jabbari and J. W. Vaughan, "Adaptive task assignment for crowdsourced
    classification", ICML 2013.
    J. C. Kleinman, "Proportions with extraneous variance: single and independent samples",
    JASA 68 (1973) 46–54.
    M. S. Ridout, C. G. B. Demétrio and D. Firth, "Estimating intraclass correlation for binary
    data", Biometrics 55 (1999) 137–148.

    Examples
    --------
    >>> est = estimate_quality(
    ...     worker_index=[0, 0, 0, 1], item_category=[0, 0, 1, 1], correct=[1, 1, 0, 1],
    ...     n_workers=3, task_categories=[1, 0, 1],
    ... )
    >>> est.matrix.shape, est.gold_counts.tolist()
    ((3, 3), [3, 1, 0])
    >>> bool(est.matrix[2, 0] == est.population_accuracy)
    True
    """
    n_workers = _as_count(n_workers, "n_workers")
    if n_categories is not None:
        n_categories = _as_count(n_categories, "n_categories")
    s_arg = _as_strength(worker_strength, "worker_strength")
    t_arg = _as_strength(category_strength, "category_strength")

    workers = _as_indices(worker_index, "worker_index", n_workers, "n_workers")
    k = workers.shape[0]
    items = _as_indices(item_category, "item_category", n_categories, "n_categories", length=k)
    right = _as_correct(correct, k)
    tasks = _as_indices(task_categories, "task_categories", n_categories, "n_categories")
    if n_categories is None:
        n_categories = int(max(items.max(initial=-1), tasks.max(initial=-1))) + 1

    # Counts per (worker, category) cell: one bincount over all answers, one over correct ones.
    n_cells = n_workers * n_categories
    cell = workers * n_categories + items
    n_ic = np.bincount(cell, minlength=n_cells).reshape(n_workers, n_categories)
    x_ic = np.bincount(cell[right], minlength=n_cells).reshape(n_workers, n_categories)
    return _estimate_from_cells(n_ic, x_ic, tasks, s_arg, t_arg)


def estimate_quality_from_counts(
    *,
    answered,
    correct,
    task_categories,
    worker_strength: float | str = DEFAULT_WORKER_STRENGTH,
    category_strength: float | str = DEFAULT_CATEGORY_STRENGTH,
) -> QualityEstimate:
    """:func:`estimate_quality` of gold answers already counted per (worker, category) cell, as
    a database aggregate gives them: no per-answer arrays.

    Parameters
    ----------
    answered, correct : array_like of int, shape (n_workers, n_categories)
        Each worker's gold answers in each category, and how many of them were correct
        (``0 <= correct <= answered``).
    task_categories : array_like of int, shape (n_tasks,)
        Category of each task, in ``[0, n_categories)``.
    worker_strength, category_strength : float or "auto"
        As in :func:`estimate_quality`.

    Returns
    -------
    QualityEstimate
        The same, to the bit, as :func:`estimate_quality` of answers with these counts.

    Raises
    ------
    ValueError
        Naming the argument: counts that are not 2-D non-negative integers of one shape, more
        correct answers than answers in a cell, task categories out of range, or a bad strength.
    """
    s_arg = _as_strength(worker_strength, "worker_strength")
    t_arg = _as_strength(category_strength, "category_strength")
    n_ic, x_ic = _as_cell_counts(answered, correct)
    tasks = _as_indices(task_categories, "task_categories", n_ic.shape[1], "n_categories")
    return _estimate_from_cells(n_ic, x_ic, tasks, s_arg, t_arg)


def _estimate_from_cells(n_ic, x_ic, tasks, s_arg, t_arg) -> QualityEstimate:
    """The estimate from checked counts per (worker, category) cell, ``n_ic`` answers and
    ``x_ic`` correct ones (int64, shape (n_workers, n_categories)), and the task categories."""
    n_i = n_ic.sum(axis=1)

    t, t_fit = t_arg, "given"
    if t_arg == "auto":
        t, t_fit = _how_fitted(_fit_category_strength(n_ic, x_ic), DEFAULT_CATEGORY_STRENGTH)
    s, s_fit = s_arg, "given"
    if s_arg == "auto":
        fitted = _fit_worker_strength(n_ic, x_ic, rho_category=1.0 / (t + 1.0))
        s, s_fit = _how_fitted(fitted, DEFAULT_WORKER_STRENGTH)

    mu0, a, q = _shrink(n_ic, x_ic, s, t)
    for arr in (q, a, n_i, tasks):
        arr.flags.writeable = False
    return QualityEstimate(
        by_category=q,
        worker_accuracy=a,
        population_accuracy=float(mu0),
        gold_counts=n_i.astype(np.int64, copy=False),
        strengths=(float(s), float(t)),
        task_categories=tasks,
        strength_fits=(s_fit, t_fit),
    )


def _how_fitted(fitted: float | None, default: float) -> tuple[float, str]:
    """The strength ``"auto"`` uses and how it was set (:data:`STRENGTH_FITS`)."""
    if fitted is None:
        return default, "default"
    if fitted <= _AUTO_MIN_STRENGTH:
        return fitted, "floor"
    if fitted >= _AUTO_MAX_STRENGTH:
        return fitted, "ceiling"
    return fitted, "fitted"


# --------------------------------------------------------------------------------------------
# The shrinkage itself (also the M-step of assignment.engine.answer_quality, on soft counts)


def _shrink(
    n_ic: np.ndarray, x_ic: np.ndarray, s: float, t: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """Posterior means ``(mu0, a, q)`` of the hierarchical Beta-binomial model.

    ``n_ic`` / ``x_ic``, shape (n_workers, n_categories), are answers / correct ones per cell:
    integers for gold answers, or non-negative floats (expected counts) for the EM of
    :mod:`assignment.engine.answer_quality`. ``s, t >= 0``; with a strength of 0, a worker (or
    cell) without answers takes the level above (``0 / 0`` is never evaluated). The formulas
    are those of the Notes of :func:`estimate_quality`.
    """
    n_i = n_ic.sum(axis=1)
    x_i = x_ic.sum(axis=1)
    mu0 = (float(x_i.sum()) + 1.0) / (float(n_i.sum()) + 2.0)
    den = n_i + s
    a = np.divide(x_i + s * mu0, den, out=np.full(n_i.shape, mu0), where=den > 0)
    den = n_ic + t
    q = np.divide(
        x_ic + t * a[:, None], den, out=np.repeat(a[:, None], n_ic.shape[1], axis=1), where=den > 0
    )
    return mu0, a, q


# --------------------------------------------------------------------------------------------
# Method-of-moments fits of the prior strengths


def _strength_from_rho(num: float, den: float) -> float | None:
    """``1 / rho - 1`` for ``rho = num / den``, clamped; None if ``den <= 0`` (unidentified)."""
    if not den > 0:
        return None
    if num <= 0:  # no spread beyond the binomial noise: pool completely
        return _AUTO_MAX_STRENGTH
    strength = (den - num) / num
    return float(np.clip(strength, _AUTO_MIN_STRENGTH, _AUTO_MAX_STRENGTH))


def _fit_category_strength(n_ic: np.ndarray, x_ic: np.ndarray) -> float | None:
    """Method-of-moments ``t`` from the spread of each worker's categories (see Notes)."""
    n_i = n_ic.sum(axis=1)
    c_i = np.count_nonzero(n_ic, axis=1)
    use = (c_i >= 2) & (n_i > c_i)
    if not np.any(use):
        return None
    n = n_ic[use].astype(np.float64)
    x = x_ic[use].astype(np.float64)
    tot = n_i[use].astype(np.float64)
    cats = c_i[use].astype(np.float64)
    p_worker = x.sum(axis=1) / tot
    p_cell = np.divide(x, n, out=np.zeros_like(x), where=n > 0)
    ssb = (n * (p_cell - p_worker[:, None]) ** 2).sum(axis=1)
    within = (x * (1.0 - p_cell)).sum(axis=1) / (tot - cats)
    n0 = tot - (n**2).sum(axis=1) / tot
    # rho / (1 - rho) = (sum SSB - sum (C - 1) W) / sum n0 W, and t = (1 - rho) / rho.
    excess = float(ssb.sum() - ((cats - 1.0) * within).sum())
    scale = float((n0 * within).sum())
    if scale <= 0:
        # Every answered cell is all-correct or all-wrong: infinite within-cell precision.
        return _AUTO_MIN_STRENGTH if excess > 0 else None
    if excess <= 0:
        return _AUTO_MAX_STRENGTH
    return float(np.clip(scale / excess, _AUTO_MIN_STRENGTH, _AUTO_MAX_STRENGTH))


def _fit_worker_strength(
    n_ic: np.ndarray, x_ic: np.ndarray, *, rho_category: float
) -> float | None:
    """Method-of-moments ``s`` from the spread of workers' fractions correct (see Notes)."""
    n_i = n_ic.sum(axis=1)
    use = n_i > 0
    if np.count_nonzero(use) < 2:
        return None
    n = n_i[use].astype(np.float64)
    x = x_ic[use].sum(axis=1).astype(np.float64)
    total = n.sum()
    p_bar = x.sum() / total
    var = p_bar * (1.0 - p_bar)
    if var <= 0:
        return None
    ssb = float((n * (x / n - p_bar) ** 2).sum())
    g = n - n**2 / total
    share_sq = ((n_ic[use].astype(np.float64) / n[:, None]) ** 2).sum(axis=1)
    h = rho_category * share_sq + (1.0 - rho_category) / n
    # SSB / var = sum g h + rho sum g (1 - h)
    return _strength_from_rho(ssb / var - float((g * h).sum()), float((g * (1.0 - h)).sum()))


# --------------------------------------------------------------------------------------------
# Validation at the edge


def _as_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _as_strength(value, name: str) -> float | str:
    if isinstance(value, str) and value == "auto":
        return "auto"
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, Real | np.number)
        or not np.isfinite(value)
        or not value > 0
    ):
        raise ValueError(f"{name} must be a positive finite number or 'auto', got {value!r}")
    return float(value)


def _as_indices(
    values,
    name: str,
    upper: int | None,
    upper_name: str,
    *,
    length: int | None = None,
    per: str = "gold answer",
    length_name: str = "worker_index",
) -> np.ndarray:
    """1-D integer indices in ``[0, upper)`` (``upper=None``: ``>= 0``), as a new int64 array.

    With ``length``, the array must have one entry ``per`` item, as many as ``length_name``.
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(
            f"{name} must have one entry per {per} ({length}, the length of {length_name}), "
            f"got {arr.shape[0]}"
        )
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == np.bool_ or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if np.any(bad):
            pos = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} must hold integers, got {arr[pos].item()!r} at position {pos}"
            )
    bad = arr < 0
    if upper is not None:
        bad |= arr >= upper
    if np.any(bad):
        pos = int(np.flatnonzero(bad)[0])
        allowed = f"[0, {upper_name}={upper})" if upper is not None else "non-negative"
        raise ValueError(f"{name} must be in {allowed}, got {arr[pos].item()!r} at position {pos}")
    return arr.astype(np.int64)


def _as_cell_counts(answered, correct) -> tuple[np.ndarray, np.ndarray]:
    """``(answered, correct)`` per (worker, category) cell as new int64 arrays, checked: 2-D of
    one shape, whole numbers, ``0 <= correct <= answered``."""
    arrays = []
    for name, values in (("answered", answered), ("correct", correct)):
        arr = np.asarray(values)
        if arr.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-D array (workers x categories), got shape {arr.shape}"
            )
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
        arrays.append(arr.astype(np.int64))
    n_ic, x_ic = arrays
    if n_ic.shape != x_ic.shape:
        raise ValueError(
            f"answered and correct must have one shape, got {n_ic.shape} and {x_ic.shape}"
        )
    bad = (x_ic < 0) | (x_ic > n_ic)
    if np.any(bad):
        i, c = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"correct must be in [0, answered], got {x_ic[i, c]} of {n_ic[i, c]} answers at "
            f"(worker {i}, category {c})"
        )
    return n_ic, x_ic


def _as_correct(values, length: int) -> np.ndarray:
    """1-D bool of ``length`` from bools or numbers equal to 0 or 1, as a new array."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"correct must be a 1-D array, got shape {arr.shape}")
    if arr.shape[0] != length:
        raise ValueError(
            f"correct must have one entry per gold answer ({length}, the length of "
            f"worker_index), got {arr.shape[0]}"
        )
    if arr.size == 0:
        return np.zeros(0, dtype=np.bool_)
    if arr.dtype == np.bool_:
        return arr.copy()
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"correct must hold booleans or 0/1, got dtype {arr.dtype}")
    bad = (arr != 0) & (arr != 1)
    if np.any(bad):
        pos = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"correct must hold booleans or 0/1, got {arr[pos].item()!r} at position {pos}"
        )
    return arr == 1
