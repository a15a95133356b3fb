"""The assignment problem: quality matrix, caps, budget, prior and eligibility.

``n`` workers (rows ``i``) and ``m`` tasks (columns ``j``); ``quality[i, j]`` is the probability
that worker ``i`` labels task ``j`` correctly. An assignment is a bool matrix ``X`` with

* at most ``budget`` pairs in all (the paper's ``s^total``),
* at most ``max_tasks_per_worker[i]`` tasks in row ``i`` (``s^task``),
* at most ``max_workers_per_task[j]`` workers in column ``j`` (``s^worker``),
* no pair outside ``eligible``.

These are the three views of a TVCS (Yang et al., ICML 2017, eq. 8) with rows as view 1 and
columns as view 2; ineligible pairs are never selected because the projection gets weight 0
there.

Quality comes in one of two forms:

* a dense ``(n, m)`` matrix, or
* :class:`QualityByCategory`: a worker x category table ``T`` (``n x C``) and each task's
  category ``c_j``, with ``Q[i, j] = T[i, c_j]`` (what :mod:`~assignment.engine.quality`
  estimates from gold questions). A problem of 2,000 workers x 200,000 tasks in 20 categories
  then holds 40,000 qualities instead of 400 million.

Internally both are a *table* and a *column per task*: ``Q[i, j] = quality_table[i,
task_column[j]]`` (the dense form is its own table, with ``task_column = arange(m)``). Methods
that scale read qualities through :meth:`AssignmentProblem.quality_at` and the table; the dense
:attr:`AssignmentProblem.quality` is built (``8 n m`` bytes) only when a method asks for it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cached_property
from numbers import Integral, Real

import numpy as np

from projections import TVCSStructure

__all__ = ["AssignmentProblem", "QualityByCategory"]

#: The structure's fields under the problem's names, so its one check speaks the user's words.
_STRUCTURE_NAMES = {
    "max_per_row": "max_tasks_per_worker",
    "max_per_col": "max_workers_per_task",
    "total": "budget",
    "row": "worker",
    "col": "task",
}


def _quality_values(values, name: str) -> np.ndarray:
    """``values`` as a float64 2-D array, checked finite and in [0, 1] (a copy)."""
    column = "category" if name == "table" else "task"
    q = np.asarray(values)
    if q.ndim != 2:
        columns = "categories" if name == "table" else "tasks"
        raise ValueError(f"{name} must be a 2-D workers x {columns} matrix, got shape {q.shape}")
    if not (np.issubdtype(q.dtype, np.floating) or np.issubdtype(q.dtype, np.integer)):
        raise ValueError(f"{name} must hold numbers, got dtype {q.dtype}")
    q = q.astype(np.float64)  # a copy: the problem owns its data
    if not np.all(np.isfinite(q)):
        i, j = np.argwhere(~np.isfinite(q))[0]
        raise ValueError(f"{name} must be finite, got {q[i, j]} at worker {i}, {column} {j}")
    if np.any((q < 0) | (q > 1)):
        i, j = np.argwhere((q < 0) | (q > 1))[0]
        raise ValueError(f"{name} must be in [0, 1], got {q[i, j]} at worker {i}, {column} {j}")
    return q


#: Rows of a prior distribution must sum to 1 within this.
PRIOR_SUM_ATOL = 1e-9


def _prior_one(value, m: int) -> np.ndarray:
    """A two-label prior ``P(y = 1)``: a number or one per task, in the open interval (0, 1)."""
    pr = np.asarray(value, dtype=np.float64) if np.ndim(value) else np.asarray(value)
    if not (np.issubdtype(pr.dtype, np.floating) or np.issubdtype(pr.dtype, np.integer)):
        raise ValueError(f"prior must be a number or one per task, got {value!r}")
    pr = np.broadcast_to(pr.astype(np.float64), (m,)) if pr.ndim == 0 else pr
    if pr.shape != (m,):
        raise ValueError(
            f"prior must be a number or one per task (length {m}), or one distribution over "
            f"the 2 labels per task, shape ({m}, 2); got shape {pr.shape}"
        )
    if not np.all((pr > 0) & (pr < 1)):
        bad = int(np.flatnonzero(~((pr > 0) & (pr < 1)))[0])
        raise ValueError(f"prior must be in the open interval (0, 1), got {pr[bad]} at task {bad}")
    return np.array(pr, dtype=np.float64)


def _prior_rows(value, m: int, n_labels: int) -> np.ndarray:
    """A prior distribution of shape (m, K) (or (K,) for every task when K > 2), checked:
    finite, positive, rows summing to 1 within ``PRIOR_SUM_ATOL``. Returned as given (a copy,
    (m, K)), not normalised."""
    try:
        p = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"prior must be numbers: a distribution over the {n_labels} labels per task"
        ) from exc
    one_row = p.ndim == 1
    if p.shape != ((n_labels,) if one_row else (m, n_labels)):
        raise ValueError(
            f"prior must be a distribution over the {n_labels} labels, shape ({m}, {n_labels}) "
            f"(one per task) or ({n_labels},) (every task); got shape {p.shape}"
        )
    rows = p.reshape(-1, n_labels)
    bad = ~(np.isfinite(rows) & (rows > 0.0))
    if bad.any():
        j, label = np.argwhere(bad)[0]
        where = f"label {label}" if one_row else f"task {j}, label {label}"
        raise ValueError(
            f"prior must be finite and positive (a distribution in the open simplex), got "
            f"{rows[j, label]} at {where}"
        )
    sums = rows.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > PRIOR_SUM_ATOL)
    if bad.size:
        j = int(bad[0])
        where = "" if one_row else f" at task {j}"
        raise ValueError(
            f"prior must sum to 1 over the {n_labels} labels (within {PRIOR_SUM_ATOL:g}), got "
            f"{float(sums[j])!r}{where}"
        )
    return np.array(np.broadcast_to(rows, (m, n_labels)))


def _priors(value, m: int, n_labels: int) -> tuple[np.ndarray | None, np.ndarray]:
    """``(P(y = 1) or None, distribution)`` of a prior: (m,) for two labels (else None) and
    (m, K), both float64."""
    if n_labels == 2:
        if value is None:
            value = 0.5
        if np.ndim(value) == 2:  # [1 - p, p] per task: read as p (1 - p only checked)
            one = _prior_one(_prior_rows(value, m, 2)[:, 1], m)
        else:
            one = _prior_one(value, m)
        return one, np.column_stack([1.0 - one, one])
    if value is None:
        return None, np.full((m, n_labels), 1.0 / n_labels)
    number = np.ndim(value) == 0 and isinstance(value, Real | np.number)
    if number or (np.ndim(value) == 1 and np.shape(value) == (m,) and m != n_labels):
        raise ValueError(
            f"prior as P(y = 1) (a number or one per task) is for two labels; with "
            f"n_labels={n_labels} give a distribution over the labels, shape ({m}, {n_labels}) "
            f"or ({n_labels},)"
        )
    rows = _prior_rows(value, m, n_labels)
    return None, rows / rows.sum(axis=1, keepdims=True)


#: Rows of a confusion matrix must sum to 1 within this (as in :mod:`~assignment.engine.confusion`).
CONFUSION_SUM_ATOL = 1e-6


def _confusion(value, n: int, n_labels: int) -> np.ndarray:
    """Dawid–Skene confusion matrices, shape (n, K, K), checked: finite, in [0, 1], every row
    (a worker, a true label) summing to 1 within ``CONFUSION_SUM_ATOL``. A float64 copy."""
    try:
        c = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("confusion must be numbers, shape (n_workers, K, K)") from exc
    if c.shape != (n, n_labels, n_labels):
        raise ValueError(
            f"confusion must have shape (n_workers, n_labels, n_labels) = ({n}, {n_labels}, "
            f"{n_labels}); got {c.shape}"
        )
    bad = ~(np.isfinite(c) & (c >= 0.0) & (c <= 1.0))
    if bad.any():
        i, t, a = np.argwhere(bad)[0]
        raise ValueError(
            f"confusion must hold probabilities in [0, 1], got {c[i, t, a]} at worker {i}, "
            f"true label {t}, answer {a}"
        )
    sums = c.sum(axis=2)
    off = np.argwhere(np.abs(sums - 1.0) > CONFUSION_SUM_ATOL)
    if off.size:
        i, t = off[0]
        raise ValueError(
            f"confusion's rows must be distributions over the answers (sum 1 within "
            f"{CONFUSION_SUM_ATOL:g}), got {float(sums[i, t])!r} at worker {i}, true label {t}"
        )
    return c


@dataclass(frozen=True, eq=False, init=False)
class QualityByCategory:
    """Quality that depends on the worker and the task's category only.

    Parameters
    ----------
    table : array-like of float, shape (n_workers, n_categories)
        ``T[i, c]``: ``P(worker i labels a task of category c correctly)``, in [0, 1].
    task_category : array-like of int, shape (n_tasks,)
        ``c_j`` in ``[0, n_categories)``.

    The quality matrix it stands for is ``Q[i, j] = T[i, c_j]``, shape (n_workers, n_tasks);
    :meth:`dense` builds it.

    Raises
    ------
    ValueError
        Naming the field and the first bad position.
    """

    table: np.ndarray
    task_category: np.ndarray

    def __init__(self, table, task_category) -> None:
        t = _quality_values(table, "table")
        c = np.asarray(task_category)
        if c.ndim != 1:
            raise ValueError(f"task_category must be 1-D (one per task), got shape {c.shape}")
        if c.size and not np.issubdtype(c.dtype, np.integer):
            raise ValueError(f"task_category must hold integers, got dtype {c.dtype}")
        c = c.astype(np.int64)
        bad = np.flatnonzero((c < 0) | (c >= t.shape[1]))
        if bad.size:
            raise ValueError(
                f"task_category must be in [0, {t.shape[1]}) (the table's categories), "
                f"got {c[bad[0]]} at task {bad[0]}"
            )
        for name, value in (("table", t), ("task_category", c)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_workers, n_tasks)`` of the matrix it stands for."""
        return self.table.shape[0], self.task_category.shape[0]

    def dense(self) -> np.ndarray:
        """The quality matrix ``T[:, c]``, shape (n_workers, n_tasks): ``8 n m`` bytes."""
        return self.table[:, self.task_category]


@dataclass(frozen=True, eq=False, init=False)
class AssignmentProblem:
    """A validated assignment problem.

    Parameters
    ----------
    quality : array-like of float, shape (n_workers, n_tasks), or QualityByCategory
        ``P(worker i labels task j correctly)``, finite, in [0, 1]. Values below 0.5 are legal
        (the Bayes vote then inverts that worker's answers). A :class:`QualityByCategory` is
        kept as its table: the dense matrix is never built unless a method asks for
        :attr:`quality`.
    max_workers_per_task : int or array-like of int, shape (n_tasks,)
    max_tasks_per_worker : int or array-like of int, shape (n_workers,)
    budget : int
        Total number of (worker, task) pairs at most.
    prior : float, or array-like of float of shape (n_tasks,), (n_tasks, K) or (K,), optional
        The tasks' labels before any answer. Two forms:

        * ``P(label of task j = 1)``: a number for every task or one per task, shape
          (n_tasks,), in the open interval (0, 1). Two labels only (``n_labels=2``).
        * a distribution over the ``K`` labels: one per task, shape (n_tasks, K), or one for
          every task, shape (K,) (``K > 2`` only: for two labels a 1-D prior is one
          ``P(y = 1)`` per task, as above; with ``K > 2`` a 1-D prior is always this form,
          also when ``n_tasks == K``). Every entry positive (rows in the open simplex),
          every row summing to 1 within ``1e-9``. For two labels the problem reads it as
          ``P(y = 1) = prior[:, 1]``, so ``[[1 - p, p], ...]`` is exactly ``[p, ...]``.

        Default: 0.5 for two labels, uniform for ``K``.
    eligible : array-like of bool, shape (n_workers, n_tasks), optional
        Pairs that may be assigned; default all.
    n_labels : int, default 2
        ``K >= 2``, the number of labels a task may have. With ``K > 2`` the worker model is
        the one-coin model of :mod:`~assignment.engine.multiclass` (right with probability
        ``Q[i, j]``, else one of the ``K - 1`` wrong labels uniformly), and :attr:`prior`
        (``P(y = 1)``) does not exist: read :attr:`prior_distribution`.
    confusion : array-like of float, shape (n_workers, n_labels, n_labels), optional
        Dawid–Skene's worker model (docs/design.md#under-confusion-matrices):
        ``confusion[i, c, a] = P(worker i answers a | true label c)``, each row a
        distribution. When given, :func:`~assignment.engine.solve.solve` chooses (greedy) or
        at least scores (every method) the assignment by the exact accuracy of the
        Dawid–Skene vote under these matrices; ``quality`` is then only the symmetric
        surrogate some methods search with (:mod:`~assignment.engine.under_confusion`).

    Raises
    ------
    ValueError
        Naming the field: shape mismatch, NaN, values outside their range, negative or
        fractional caps or budget, a prior that is not a distribution (naming the task and
        the label), a number or per-task ``P(y = 1)`` with ``K > 2``, ``n_labels < 2``, a
        ``confusion`` of the wrong shape or whose rows are not distributions; and no tasks
        (a mean accuracy over no tasks does not exist, so the kernels that score a problem
        never meet one).

    Attributes
    ----------
    prior_distribution : ndarray of float64, shape (n_tasks, K)
        Each task's prior distribution, for every ``K`` (for two labels ``[1 - p, p]`` of
        :attr:`prior` ``p``); read-only.
    structure : TVCSStructure
        The caps and the budget as a TVCS (workers are view 1, tasks view 2), built once by
        the constructor, whose check of the caps and the budget it is; ``structure.total`` is
        the budget clipped to ``n_workers * n_tasks``.
    """

    quality_table: np.ndarray
    task_column: np.ndarray
    max_workers_per_task: np.ndarray
    max_tasks_per_worker: np.ndarray
    budget: int
    structure: TVCSStructure
    n_labels: int
    prior_distribution: np.ndarray
    eligible: np.ndarray | None
    confusion: np.ndarray | None

    def __init__(
        self,
        quality,
        *,
        max_workers_per_task,
        max_tasks_per_worker,
        budget,
        prior=None,
        eligible=None,
        n_labels=2,
        confusion=None,
    ) -> None:
        if isinstance(quality, QualityByCategory):
            table, column, form = quality.table, quality.task_category, quality
        else:
            table = _quality_values(quality, "quality")
            column = np.arange(table.shape[1], dtype=np.int64)
            form = table
        object.__setattr__(self, "_form", form)
        n, m = table.shape[0], column.shape[0]
        if m == 0:
            raise ValueError(
                "quality must have at least one task (column): a problem's expected accuracy "
                "is a mean over its tasks"
            )
        # The caps and the budget are checked once, by the TVCS structure, in our names.
        structure = TVCSStructure.from_matrix(
            (n, m),
            max_per_row=max_tasks_per_worker,
            max_per_col=max_workers_per_task,
            total=budget,
            names=_STRUCTURE_NAMES,
        )
        if isinstance(n_labels, bool) or not isinstance(n_labels, Integral) or n_labels < 2:
            raise ValueError(f"n_labels must be an integer >= 2, got {n_labels!r}")
        n_labels = int(n_labels)
        prior_one, distribution = _priors(prior, m, n_labels)
        el = None
        if eligible is not None:
            el = np.asarray(eligible)
            if el.shape != (n, m):
                raise ValueError(
                    f"eligible must have the shape of quality {(n, m)}, got {el.shape}"
                )
            if el.dtype != np.bool_:
                if not np.all((el == 0) | (el == 1)):
                    raise ValueError("eligible must be a bool (or 0/1) matrix")
            el = el.astype(bool)
        conf = None if confusion is None else _confusion(confusion, n, n_labels)
        for name, value in (
            ("quality_table", table),
            ("task_column", column),
            ("max_workers_per_task", structure.caps2),
            ("max_tasks_per_worker", structure.caps1),
            ("budget", int(budget)),  # as given: structure.total is clipped to n * m
            ("structure", structure),
            ("n_labels", n_labels),
            ("_prior_one", prior_one),
            ("prior_distribution", distribution),
            ("eligible", el),
            ("confusion", conf),
        ):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def prior(self) -> np.ndarray:
        """``P(label of task j = 1)``, shape (n_tasks,), read-only: two labels only.

        Raises
        ------
        ValueError
            For ``n_labels > 2``, where the prior is :attr:`prior_distribution`.
        """
        if self._prior_one is None:
            raise ValueError(
                f"problem.prior is P(y = 1) of a two-label problem; this one has "
                f"{self.n_labels} labels: read problem.prior_distribution"
            )
        return self._prior_one

    def symmetric(self) -> AssignmentProblem:
        """The same problem without :attr:`confusion` (the symmetric worker model of
        ``quality``); ``self`` when it has none. Shares the read-only arrays."""
        if self.confusion is None:
            return self
        out = copy.copy(self)
        object.__setattr__(out, "confusion", None)
        return out

    @property
    def n_workers(self) -> int:
        return self.quality_table.shape[0]

    @property
    def n_tasks(self) -> int:
        return self.task_column.shape[0]

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_workers, n_tasks)``."""
        return self.n_workers, self.n_tasks

    @property
    def by_category(self) -> bool:
        """Whether quality came as a :class:`QualityByCategory` (a table, not a matrix)."""
        return isinstance(self._form, QualityByCategory)

    @property
    def quality_form(self) -> np.ndarray | QualityByCategory:
        """Quality as given: the dense matrix or the :class:`QualityByCategory`; what the
        accuracy functions take without building the dense matrix."""
        return self._form

    @cached_property
    def quality(self) -> np.ndarray:
        """The dense quality matrix, shape (n_workers, n_tasks), read-only.

        For a problem given by category this builds ``8 n m`` bytes, once; methods that scale
        use :attr:`quality_table`, :attr:`task_column` and :meth:`quality_at` instead.
        """
        if not self.by_category:
            return self.quality_table
        dense = self.quality_table[:, self.task_column]
        dense.setflags(write=False)
        return dense

    def quality_at(self, workers, tasks) -> np.ndarray:
        """``Q[workers, tasks]`` for index arrays of one shape, without the dense matrix."""
        return self.quality_table[workers, self.task_column[tasks]]

    def is_feasible(self, assignment) -> bool:
        """Whether a bool matrix respects every cap and the eligibility mask."""
        a = np.asarray(assignment, dtype=bool)
        if a.shape != self.shape:
            return False
        if self.eligible is not None and np.any(a & ~self.eligible):
            return False
        return self.structure.is_feasible(a)

    def is_feasible_pairs(self, workers, tasks) -> bool:
        """:meth:`is_feasible` of the assignment given as pairs ``(workers[e], tasks[e])``:
        in range, distinct, eligible, within every cap and the budget; memory
        ``O(pairs + n + m)``, no (n, m) matrix."""
        w = np.asarray(workers)
        t = np.asarray(tasks)
        if w.ndim != 1 or w.shape != t.shape:
            return False
        if w.size == 0:
            return True
        if not (np.issubdtype(w.dtype, np.integer) and np.issubdtype(t.dtype, np.integer)):
            return False
        n, m = self.shape
        if w.min() < 0 or w.max() >= n or t.min() < 0 or t.max() >= m:
            return False
        if np.unique(w.astype(np.int64) * m + t).size != w.size:
            return False
        if self.eligible is not None and not self.eligible[w, t].all():
            return False
        return bool(
            w.size <= self.budget
            and np.all(np.bincount(w, minlength=n) <= self.max_tasks_per_worker)
            and np.all(np.bincount(t, minlength=m) <= self.max_workers_per_task)
        )

    def mask(self, weights: np.ndarray) -> np.ndarray:
        """``weights`` with ineligible pairs set to 0, so projections never select them."""
        if self.eligible is None:
            return weights
        return np.where(self.eligible, weights, 0.0)
