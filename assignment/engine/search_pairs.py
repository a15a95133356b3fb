"""The (worker, task) pairs tvcs-iht's steps search: all of them, or candidates on large problems.

The steps keep a few numbers per pair searched (the iterate, the step, the projection input,
log-odds and answer thresholds: about 100 bytes per pair at their peak, 90 measured at
200 x 10,000). Up to ``MAX_SEARCH_PAIRS`` (30 million, about 3 GB) every pair is searched.
Above it the steps search a candidate set of about that size instead:

* every pair of the start (greedy's assignment), so the start is a point of the search;
* for each task, its ``k`` most reliable eligible workers (``|2 Q_ij - 1|``, ties to the
  lower worker), with ``k = max(2 s, MAX_SEARCH_PAIRS // m - s)`` where ``s`` is the largest
  task cap (at most ``MAX_EXACT_WORKERS``).

Both the exact TVCS projection and the answer kernels take a set of pairs as they take the full
matrix: the projection's two views are the pairs' workers and tasks
(:meth:`projections.TVCSStructure.from_labels`) and the answers of pair ``(i, j)`` come from its
flat index ``i * m + j`` (:mod:`assignment.engine._sampled_votes`), so a pair gets the same
answers whichever set it is in. On a problem given by category the ranking is made once per
category and the dense matrix is never built.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from assignment.engine.accuracy import MAX_EXACT_WORKERS
from assignment.engine.problem import AssignmentProblem
from projections import TVCSStructure

__all__ = ["MAX_SEARCH_PAIRS", "SearchPairs", "exact_workers_limit", "search_pairs"]

#: Above this many (worker, task) pairs the steps search a candidate set of about this size.
MAX_SEARCH_PAIRS = 30_000_000


def exact_workers_limit(problem: AssignmentProblem) -> int:
    """The most workers a task takes during the search, so that every support is evaluated
    exactly: ``MAX_EXACT_WORKERS`` for two labels, else the K-class greedy's limit
    (:func:`~assignment.engine._greedy_multiclass.max_exact_workers`: 12 for three labels, 10
    for four)."""
    if problem.n_labels == 2:
        return MAX_EXACT_WORKERS
    from assignment.engine._greedy_multiclass import max_exact_workers  # a heavier import

    return max_exact_workers(problem.n_labels)


@dataclass(frozen=True, eq=False)
class SearchPairs:
    """A set of pairs of an ``n x m`` problem, as flat indices ``i * m + j``.

    Attributes
    ----------
    problem : AssignmentProblem
    entries : ndarray of int64, shape (p,), or None
        The pairs' flat indices, ascending; None for every pair (``p = n m``, row-major).
    """

    problem: AssignmentProblem
    entries: np.ndarray | None

    @property
    def size(self) -> int:
        """``p``, the number of pairs."""
        n, m = self.problem.shape
        return n * m if self.entries is None else int(self.entries.shape[0])

    @property
    def workers(self) -> np.ndarray:
        """Each pair's worker, shape (p,)."""
        return self._indices()[0]

    @property
    def tasks(self) -> np.ndarray:
        """Each pair's task, shape (p,)."""
        return self._indices()[1]

    def _indices(self) -> tuple[np.ndarray, np.ndarray]:
        m = self.problem.n_tasks
        entries = np.arange(self.size) if self.entries is None else self.entries
        return np.divmod(entries, m)

    def quality(self) -> np.ndarray:
        """``Q`` at every pair, shape (p,)."""
        if self.entries is None:
            return self.problem.quality.reshape(-1)
        return self.problem.quality_at(self.workers, self.tasks)

    def eligible(self) -> np.ndarray | None:
        """The eligibility of every pair, shape (p,); None when every pair is eligible."""
        if self.problem.eligible is None:
            return None
        if self.entries is None:
            return self.problem.eligible.reshape(-1)
        return self.problem.eligible.reshape(-1)[self.entries]

    @cached_property
    def structure(self) -> TVCSStructure:
        """The caps over these pairs, with at most ``MAX_EXACT_WORKERS`` workers per task
        (:func:`exact_workers_limit` for ``K > 2`` labels)."""
        problem = self.problem
        per_task = np.minimum(problem.max_workers_per_task, exact_workers_limit(problem))
        if self.entries is None:
            return TVCSStructure.from_matrix(
                problem.shape,
                max_per_row=problem.max_tasks_per_worker,
                max_per_col=per_task,
                total=problem.budget,
            )
        return TVCSStructure.from_labels(
            self.workers,
            self.tasks,
            caps1=problem.max_tasks_per_worker,
            caps2=per_task,
            total=problem.budget,
        )

    def restrict(self, assignment: np.ndarray) -> np.ndarray:
        """An ``(n, m)`` array's values at these pairs, shape (p,)."""
        flat = np.ascontiguousarray(assignment).reshape(-1)
        return flat if self.entries is None else flat[self.entries]

    def expand(self, values: np.ndarray) -> np.ndarray:
        """A bool ``(p,)`` array of these pairs as an ``(n, m)`` assignment."""
        if self.entries is None:
            return values.reshape(self.problem.shape)
        out = np.zeros(self.problem.shape, dtype=bool)
        out.reshape(-1)[self.entries[values]] = True
        return out


def _reliability(problem: AssignmentProblem, quality: np.ndarray) -> np.ndarray:
    """How reliable a worker is, to rank candidates: ``|2 Q - 1|`` for two labels, the
    effective quality ``max(Q, 1 - (K - 1) Q)`` for ``K > 2`` (the upper bound's ranking)."""
    if problem.n_labels == 2:
        return np.abs(2.0 * quality - 1.0)
    from assignment.engine.upper_bound import effective_quality

    return effective_quality(quality, problem.n_labels)


def search_pairs(problem: AssignmentProblem, start: np.ndarray) -> SearchPairs:
    """Every pair, or the candidate set of the module docstring around ``start``.

    Parameters
    ----------
    problem : AssignmentProblem
    start : ndarray of bool, shape (n_workers, n_tasks)
        The assignment the steps start from; its pairs are always searched.
    """
    n, m = problem.shape
    if n * m <= MAX_SEARCH_PAIRS:
        return SearchPairs(problem, None)
    per_task = np.minimum(problem.max_workers_per_task, exact_workers_limit(problem))
    k = int(min(n, max(2 * per_task.max(initial=0), MAX_SEARCH_PAIRS // m - per_task.max())))
    if problem.eligible is None:  # rank each column of the quality table once
        table = problem.quality_table
        ranked = np.argsort(-_reliability(problem, table), axis=0, kind="stable")[:k]
        workers = ranked[:, problem.task_column]  # (k, m)
        tasks = np.broadcast_to(np.arange(m), workers.shape)
    else:
        reliability = np.where(problem.eligible, _reliability(problem, problem.quality), -1.0)
        workers = np.argsort(-reliability, axis=0, kind="stable")[:k]
        tasks = np.broadcast_to(np.arange(m), workers.shape)
        keep = np.take_along_axis(reliability, workers, axis=0) >= 0
        workers, tasks = workers[keep], tasks[keep]
    start_workers, start_tasks = np.nonzero(start)
    entries = np.union1d(
        (workers.astype(np.int64) * m + tasks).reshape(-1),
        start_workers.astype(np.int64) * m + start_tasks,
    )
    return SearchPairs(problem, entries)
