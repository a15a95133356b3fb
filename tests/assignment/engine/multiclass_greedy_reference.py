"""The K-class greedy's state before its moves were scored in numba: a plain reference.

:class:`ReferenceMulticlassState` is ``MulticlassGreedyState`` of commit 2a6314a verbatim (only
renamed), and :func:`reference_greedy_pairs` runs it through the shared loop
:func:`~assignment.engine.greedy.fill`. The tests check that the fast state makes the same moves,
bit for bit (``benchmarks/multiclass_greedy.py`` times the same old state, read from git).
Not a test module.
"""

from __future__ import annotations

import itertools

import numpy as np

from assignment.engine._greedy_multiclass import max_exact_workers
from assignment.engine.accuracy import EPS
from assignment.engine.greedy import (
    GAIN_TOL,
    PAIR_EXHAUSTIVE_MAX,
    PAIR_TOP_GAIN,
    PAIR_TOP_RELIABLE,
    GreedyState,
    fill,
)
from assignment.engine.multiclass import _units_accuracy, _validate_log_prior
from assignment.engine.problem import AssignmentProblem
from assignment.engine.upper_bound import effective_quality


def reference_greedy_pairs(problem: AssignmentProblem, initial=None):
    """The old K-class greedy on ``problem`` from the pairs ``initial`` (or empty).

    Returns
    -------
    workers, tasks : ndarray of int64, shape (pairs,)
        Sorted by worker, then task (as :func:`~assignment.engine.greedy.greedy_pairs`).
    acc : ndarray of float64, shape (n_tasks,)
        The state's accuracy of every task at the end.
    steps, pairs, evaluations : int
    """
    state = ReferenceMulticlassState(problem)
    if initial is not None:
        dense = np.zeros(problem.shape, dtype=bool)
        dense[initial] = True
        state.start_from(dense)
    steps, pairs = fill(state)
    return (*state.pairs(), state.acc.copy(), steps, pairs, state.evaluations)


def _first_best(gains: np.ndarray) -> int:
    """The lowest position whose gain is within ``GAIN_TOL`` of the largest."""
    return int(np.flatnonzero(gains >= gains.max() - GAIN_TOL)[0])


class ReferenceMulticlassState:
    """The K-class greedy state as it was before its numba kernel (commit 2a6314a), unchanged:
    every candidate set scored through ``_units_accuracy``, dense ``(m, n)`` bookkeeping."""

    # The bookkeeping is the binary state's: these read only the attributes set below.
    still_feasible = GreedyState.still_feasible
    any_feasible = GreedyState.any_feasible
    assignment = GreedyState.assignment
    pairs = GreedyState.pairs
    budget_left = GreedyState.budget_left

    def __init__(self, problem: AssignmentProblem) -> None:
        n, m = problem.shape
        self.n_labels = problem.n_labels
        # One row per column of the quality table: Q[i, j] = q[row[j], i] (as GreedyState).
        self.q = np.clip(np.ascontiguousarray(problem.quality_table.T), EPS, 1.0 - EPS)
        self.reliability = effective_quality(self.q, self.n_labels)
        self.row = problem.task_column
        self.eligible = (
            None if problem.eligible is None else np.ascontiguousarray(problem.eligible.T)
        )
        self.log_prior = np.ascontiguousarray(
            _validate_log_prior(problem.prior_distribution, m, self.n_labels)
        )
        self.task_cap = np.minimum(problem.max_workers_per_task, max_exact_workers(self.n_labels))
        self.budget = problem.budget
        self.worker_cap = problem.max_tasks_per_worker
        self.assigned = np.zeros((m, n), dtype=bool)  # transposed assignment
        self.load = np.zeros(n, dtype=np.int64)
        self.open_worker = self.load < self.worker_cap
        self.workers: list[list[int]] = [[] for _ in range(m)]
        self.acc = self._accuracies(np.arange(m))
        self.evaluations = 0
        # The last best move found on each task and the task's accuracy after it: what apply
        # sets when it makes that move (the task has not changed since, or it would have been
        # evaluated again).
        self._after: dict[int, tuple[tuple[int, ...], float]] = {}

    # -- accuracy

    def _score(self, blocks) -> np.ndarray:
        """Exact accuracy of sets of workers (as
        :func:`~assignment.engine.multiclass.set_accuracy_multiclass`), in one kernel call.

        ``blocks``: ``[(task, extra), ...]`` with ``extra`` an int array of shape (s, a): ``s``
        sets on ``task``, each its current workers plus one row of ``extra``. Returns the
        accuracies of all sets, block after block.
        """
        set_index, quality, tasks = [], [], []
        first = 0
        for j, extra in blocks:
            current = self.workers[j]
            size = len(current) + extra.shape[1]
            members = np.empty((extra.shape[0], size), dtype=np.intp)
            members[:, : len(current)] = current
            members[:, len(current) :] = extra
            quality.append(self.q[self.row[j]][members].ravel())
            set_index.append(np.repeat(np.arange(first, first + extra.shape[0]), size))
            tasks.append(np.full(extra.shape[0], j))
            first += extra.shape[0]
        log_prior = self.log_prior[np.concatenate(tasks)]
        return _units_accuracy(
            np.concatenate(set_index), np.concatenate(quality), log_prior, lambda s: f"set {s}"
        )

    def _accuracies(self, tasks: np.ndarray) -> np.ndarray:
        """Exact accuracy of ``tasks`` with their current workers."""
        nobody = np.zeros((1, 0), dtype=np.intp)
        return self._score([(j, nobody) for j in tasks.tolist()])

    # -- moves

    def _candidates(self, j: int) -> np.ndarray:
        """Workers who may join task ``j``: open, not on it, eligible; ascending."""
        ok = self.open_worker & ~self.assigned[j]
        if self.eligible is not None:
            ok &= self.eligible[j]
        return np.flatnonzero(ok)

    def _best_moves(self, tasks, budget_left: int) -> list[tuple[int, tuple]]:
        """The best move of each of ``tasks`` that has one worth more than ``GAIN_TOL``:
        ``[(task, (worth, workers, gain)), ...]``, in the order of ``tasks``."""
        if budget_left < 1:
            return []
        open_tasks, candidates = [], []
        for j in tasks:
            if len(self.workers[j]) < self.task_cap[j]:
                c = self._candidates(j)
                if c.size:
                    open_tasks.append(j)
                    candidates.append(c)
        if not open_tasks:
            return []
        self.evaluations += len(open_tasks)
        # Singles: every candidate of every task, in one call.
        single = self._score([(j, c[:, None]) for j, c in zip(open_tasks, candidates, strict=True)])
        best, pair_sets = {}, []
        start = 0
        for j, c in zip(open_tasks, candidates, strict=True):
            g1 = single[start : start + c.size] - self.acc[j]
            start += c.size
            x = _first_best(g1)
            best[j] = (float(g1[x]), (int(c[x]),), float(g1[x]))
            self._after[j] = ((int(c[x]),), float(single[start - c.size + x]))
            room = int(self.task_cap[j]) - len(self.workers[j])
            if room < 2 or budget_left < 2 or c.size < 2:
                continue
            if g1[x] + GAIN_TOL >= 0.5 * (1.0 - self.acc[j]):
                continue  # no pair can be worth more than half of what is left
            pool = self._pair_pool(j, c, g1)
            pair_sets.append((j, list(itertools.combinations(pool.tolist(), 2))))
        if pair_sets:
            both = self._score([(j, np.array(pairs, dtype=np.intp)) for j, pairs in pair_sets])
            start = 0
            for j, pairs in pair_sets:
                g2 = both[start : start + len(pairs)] - self.acc[j]
                start += len(pairs)
                x = _first_best(g2)
                if 0.5 * g2[x] > best[j][0] + GAIN_TOL:
                    best[j] = (0.5 * float(g2[x]), pairs[x], float(g2[x]))
                    self._after[j] = (pairs[x], float(both[start - len(pairs) + x]))
        return [(j, best[j]) for j in open_tasks if best[j][0] > GAIN_TOL]

    def _pair_pool(self, j: int, c: np.ndarray, g1: np.ndarray) -> np.ndarray:
        """Candidates among which pairs are scored (ascending): all of them up to
        ``PAIR_EXHAUSTIVE_MAX``, else the best by single gain and the most reliable."""
        if c.size <= PAIR_EXHAUSTIVE_MAX:
            return c
        chosen = np.zeros(c.size, dtype=bool)
        chosen[np.argsort(-g1, kind="stable")[:PAIR_TOP_GAIN]] = True
        reliability = self.reliability[self.row[j], c]
        chosen[np.argsort(-reliability, kind="stable")[:PAIR_TOP_RELIABLE]] = True
        return c[chosen]

    def evaluate(self, j: int, budget_left: int):
        """The best move on task ``j``: ``(worth, workers, gain)`` or None if none helps."""
        found = self._best_moves([j], budget_left)
        return found[0][1] if found else None

    def evaluate_all(self, budget_left: int) -> list[tuple[int, tuple]]:
        """:meth:`evaluate` of every task, batched: ``[(task, best), ...]`` for the tasks with
        a move that helps."""
        return self._best_moves(range(len(self.workers)), budget_left)

    def apply(self, j: int, move: tuple[int, ...]) -> None:
        for i in move:
            self.assigned[j, i] = True
            self.load[i] += 1
            if self.load[i] >= self.worker_cap[i]:
                self.open_worker[i] = False
            self.workers[j].append(i)
        after = self._after.pop(j, None)
        if after is not None and after[0] == tuple(move):
            self.acc[j] = after[1]
        else:
            self.acc[j] = self._accuracies(np.array([j]))[0]

    def start_from(self, assignment: np.ndarray) -> None:
        """Start from a feasible ``assignment`` (n, m) instead of the empty one."""
        xt = np.ascontiguousarray(assignment.T)  # (m, n)
        self.assigned |= xt
        self.load += xt.sum(axis=0)
        self.open_worker = self.load < self.worker_cap
        self._after.clear()
        tasks = np.flatnonzero(xt.any(axis=1))
        for j in tasks.tolist():
            self.workers[j] = np.flatnonzero(xt[j]).tolist()
        if tasks.size:
            self.acc[tasks] = self._accuracies(tasks)
