"""The greedy's state for tasks with ``K > 2`` labels (see :mod:`assignment.engine.greedy`).

:class:`MulticlassGreedyState` has the interface of :class:`~assignment.engine.greedy.GreedyState`
that :func:`~assignment.engine.greedy.fill` uses (``evaluate_all``, ``evaluate``,
``still_feasible``, ``apply``, ``budget``, ``budget_left``, ``acc``), so the loop, the lazy
queue, the moves (singles, and pairs at half their gain), their tie rules and the stopping rules
are the binary greedy's. What differs is the scoring: each candidate set is scored by the exact
K-class accuracy, bit for bit that of
:func:`~assignment.engine.multiclass.set_accuracy_multiclass`, in one numba call per task
(:mod:`~assignment.engine._multiclass_moves`), which skips the candidates that a more reliable
one's gain bounds below the best. A task gets at most :func:`max_exact_workers` workers, so
every set scored is exact. Why and how: docs/design.md#greedy-with-lookahead.
"""

from __future__ import annotations

import numpy as np

from assignment.engine._multiclass_moves import best_moves, new_scratch, set_accuracies
from assignment.engine.accuracy import EPS, TIE_RTOL
from assignment.engine.greedy import (
    GAIN_TOL,
    PAIR_EXHAUSTIVE_MAX,
    PAIR_TOP_GAIN,
    PAIR_TOP_RELIABLE,
    GreedyState,
)
from assignment.engine.multiclass import (
    MAX_EXACT_STATES,
    _composition_tables,
    _log_prior,
    _weights,
)
from assignment.engine.problem import AssignmentProblem

__all__ = ["MulticlassGreedyState", "max_exact_workers"]

_CONSTS = np.array(
    [TIE_RTOL, GAIN_TOL, PAIR_EXHAUSTIVE_MAX, PAIR_TOP_GAIN, PAIR_TOP_RELIABLE], dtype=np.float64
)


def max_exact_workers(n_labels: int) -> int:
    """The most workers ``k`` whose ``K^k`` answer states (distinct qualities) the exact K-class
    accuracy accepts: 20 for two labels, 12 for three, 10 for four."""
    k = 0
    while n_labels ** (k + 1) <= MAX_EXACT_STATES:
        k += 1
    return k


class MulticlassGreedyState:
    """Loads, each task's workers and accuracy, and the evaluation of a task's best move, for
    ``K > 2`` labels (module docstring); :func:`~assignment.engine.greedy.greedy_pairs`
    builds it."""

    # The bookkeeping is the binary state's: these read only the attributes set below.
    still_feasible = GreedyState.still_feasible
    any_feasible = GreedyState.any_feasible
    assignment = GreedyState.assignment
    pairs = GreedyState.pairs
    budget_left = GreedyState.budget_left

    def __init__(self, problem: AssignmentProblem) -> None:
        n, m = problem.shape
        n_labels = problem.n_labels
        # One row per column of the quality table: Q[i, j] = q[row[j], i] (as GreedyState).
        q = np.clip(np.ascontiguousarray(problem.quality_table.T), EPS, 1.0 - EPS)
        w, log_wrong = _weights(q, n_labels)
        self.row = problem.task_column
        self.eligible = (
            None if problem.eligible is None else np.ascontiguousarray(problem.eligible.T)
        )
        log_prior = np.ascontiguousarray(_log_prior(problem.prior_distribution))  # checked
        self.task_cap = np.minimum(problem.max_workers_per_task, max_exact_workers(n_labels))
        self.budget = problem.budget
        self.worker_cap = problem.max_tasks_per_worker
        self.load = np.zeros(n, dtype=np.int64)
        self.open_worker = self.load < self.worker_cap
        self.workers: list[list[int]] = [[] for _ in range(m)]
        self.acc = np.zeros(m)
        self.evaluations = 0
        largest = int(self.task_cap.max(initial=0))
        self._state = (
            self.task_cap.astype(np.int64),
            self.acc,
            self.row.astype(np.int64),
            log_prior,
            np.ptp(log_prior, axis=-1),
        )
        self._tables = (
            q,
            w,
            log_wrong,
            _composition_tables(np.arange(1, largest + 1), n_labels),
        )
        pool = max(PAIR_EXHAUSTIVE_MAX, PAIR_TOP_GAIN + PAIR_TOP_RELIABLE)
        self._scratch = new_scratch(n, largest, n_labels, pool)
        self._eligible_or_empty = (
            np.zeros((0, 0), dtype=bool) if self.eligible is None else self.eligible
        )
        self.acc[:] = self._accuracies(np.arange(m))
        # Best moves by _memo_key, valid while the open workers do not change (_version): only
        # where tasks share a quality row (a problem by category) and everyone is eligible.
        self._memo_on = self.eligible is None and q.shape[0] < m
        self._prior_id = np.unique(log_prior, axis=0, return_inverse=True)[1].reshape(-1)
        self._version = 0
        self._memo_version = 0
        self._memo_moves: dict = {}
        # The last best move found on each task and the task's accuracy after it: what apply
        # sets when it makes that move (the task has not changed since, or it would have been
        # evaluated again).
        self._after: dict[int, tuple[tuple[int, ...], float]] = {}

    def _members(self, tasks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The workers of ``tasks`` concatenated, and where each task's start, shape (t + 1,)."""
        counts = np.fromiter((len(self.workers[j]) for j in tasks.tolist()), np.int64, tasks.size)
        starts = np.zeros(tasks.size + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        members = np.fromiter(
            (i for j in tasks.tolist() for i in self.workers[j]), np.int64, int(starts[-1])
        )
        return members, starts

    def _accuracies(self, tasks: np.ndarray) -> np.ndarray:
        """Exact accuracy of ``tasks`` with their current workers."""
        tasks = np.asarray(tasks, dtype=np.int64)
        return set_accuracies(
            tasks, *self._members(tasks), self._state, self._tables, TIE_RTOL, self._scratch
        )

    # -- moves

    def _memo_key(self, j: int, budget_left: int) -> tuple:
        """What task ``j``'s best move depends on besides the open workers: its quality row,
        prior, cap and set of workers (its accuracy is a function of these), and whether one
        or two more pairs fit the budget. Tasks of one category with the same workers have the
        same candidates and so the same best move, bit for bit."""
        return (
            int(self.row[j]),
            int(self._prior_id[j]),
            int(self.task_cap[j]),
            tuple(sorted(self.workers[j])),
            min(budget_left, 2),
        )

    def _best_moves(self, tasks: np.ndarray, budget_left: int) -> list[tuple[int, tuple]]:
        """The best move of each of ``tasks`` that has one worth more than ``GAIN_TOL``:
        ``[(task, (worth, workers, gain)), ...]``, in the order of ``tasks``; each distinct
        :meth:`_memo_key` evaluated once (when memoised)."""
        tasks = np.asarray(tasks, dtype=np.int64)
        if not self._memo_on:
            moves = self._kernel_moves(tasks, budget_left)
        else:
            if self._memo_version != self._version:
                self._memo_moves.clear()
                self._memo_version = self._version
            memo = self._memo_moves
            keys = [self._memo_key(j, budget_left) for j in tasks.tolist()]
            new: dict = {}
            for j, key in zip(tasks.tolist(), keys, strict=True):
                if key not in memo:
                    new.setdefault(key, j)
            if new:
                fresh = self._kernel_moves(np.fromiter(new.values(), np.int64), budget_left)
                memo.update(zip(new, fresh, strict=True))
            moves = [memo[key] for key in keys]
        found = []
        for j, move in zip(tasks.tolist(), moves, strict=True):
            if move is not None:
                worth, workers, gain, after = move
                self._after[j] = (workers, after)
                if worth > GAIN_TOL:
                    found.append((j, (worth, workers, gain)))
        return found

    def _kernel_moves(self, tasks: np.ndarray, budget_left: int) -> list:
        """``(worth, workers, gain, accuracy after)`` of each of ``tasks``' best move, or None
        for a task no worker may join; in one kernel call."""
        worth, gain, after, first, second, evaluated = best_moves(
            tasks,
            *self._members(tasks),
            self._state,
            self._tables,
            self.open_worker,
            self._eligible_or_empty,
            budget_left,
            _CONSTS,
            self._scratch,
        )
        self.evaluations += int(evaluated)
        moves: list = [None] * tasks.size
        for x in np.flatnonzero(first >= 0).tolist():
            workers = (int(first[x]),) if second[x] < 0 else (int(first[x]), int(second[x]))
            moves[x] = (float(worth[x]), workers, float(gain[x]), float(after[x]))
        return moves

    def evaluate(self, j: int, budget_left: int):
        """The best move on task ``j``: ``(worth, workers, gain)`` or None if none helps."""
        found = self._best_moves(np.array([j]), budget_left)
        return found[0][1] if found else None

    def evaluate_all(self, budget_left: int) -> list[tuple[int, tuple]]:
        """:meth:`evaluate` of every task, in one kernel call: ``[(task, best), ...]`` for the
        tasks with a move that helps."""
        return self._best_moves(np.arange(len(self.workers)), budget_left)

    def apply(self, j: int, move: tuple[int, ...]) -> None:
        for i in move:
            self.load[i] += 1
            if self.load[i] >= self.worker_cap[i]:
                self.open_worker[i] = False
                self._version += 1
            self.workers[j].append(i)
        after = self._after.pop(j, None)
        if after is not None and after[0] == tuple(move):
            self.acc[j] = after[1]
        else:
            self.acc[j] = self._accuracies(np.array([j]))[0]

    def start_from_pairs(self, workers: np.ndarray, tasks: np.ndarray) -> None:
        """Start from the feasible assignment of pairs ``(workers[e], tasks[e])`` (distinct)
        instead of the empty one."""
        workers = np.asarray(workers, dtype=np.int64)
        tasks = np.asarray(tasks, dtype=np.int64)
        order = np.lexsort((workers, tasks))  # by task, then worker
        workers, tasks = workers[order], tasks[order]
        self.load += np.bincount(workers, minlength=self.load.shape[0])
        self.open_worker[:] = self.load < self.worker_cap
        self._version += 1
        self._after.clear()
        counts = np.bincount(tasks, minlength=len(self.workers))
        starts = np.zeros(counts.shape[0] + 1, dtype=np.intp)
        np.cumsum(counts, out=starts[1:])
        changed = np.flatnonzero(counts)
        for j in changed.tolist():
            self.workers[j] = workers[starts[j] : starts[j + 1]].tolist()
        if changed.size:
            self.acc[changed] = self._accuracies(changed)
