"""Greedy marginal gain with a two-step (pair) lookahead, any number of labels.

From the empty assignment (or ``initial=``), repeat the move of largest worth until the budget
is spent (``"budget spent"``), no move is worth more than :data:`GAIN_TOL`
(``"no positive gain"``) or none is feasible (``"no feasible addition"``). A move adds to one
task ``j`` a single worker, worth its exact gain ``g1`` of ``A_j`` (the task's expected
accuracy, :mod:`assignment.engine.accuracy`), or a pair of workers, worth ``g2 / 2`` (the exact
gain of adding both), made only if ``g2 / 2 > g1 + GAIN_TOL`` for the task's best single: under
prior 0.5 a second worker adds exactly nothing, so only a pair shows what a majority of three is
worth. With more than :data:`PAIR_EXHAUSTIVE_MAX` feasible workers, pairs are scored among the
:data:`PAIR_TOP_GAIN` best by single gain and the :data:`PAIR_TOP_RELIABLE` most reliable. Ties
go to the lowest task, then worker index: the result is a deterministic function of the
problem. :class:`GreedyState` keeps each task's exact vote-sum distribution (sorted atoms with
tail probabilities; for tasks with too many atoms to cache, a table of their moves' gains,
:mod:`assignment.engine._move_table`) and a lazy priority queue over tasks picks the moves
(:func:`fill`); for
``K > 2`` labels the state is
:class:`~assignment.engine._greedy_multiclass.MulticlassGreedyState`, with the same moves.

Entry points: :func:`greedy_assignment`, :func:`greedy_pairs` (the assignment as pairs, no
``(n, m)`` matrix), :func:`greedy_run`, :func:`fill`, :func:`why_fill_stopped`. The tie
rules, the atoms and the gain formula, the queue, memory and memo, and the limitations:
docs/design.md#greedy-with-lookahead.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable

import numpy as np

from assignment.engine._move_scores import best_moves, task_best_move
from assignment.engine._move_table import MISS, build_table, pick_move
from assignment.engine._problem_accuracy import accuracy_of_pairs
from assignment.engine._vote_atoms import (
    add_workers,
    add_workers_carried,
    build_atoms,
    extend_all,
)
from assignment.engine._vote_atoms import tail as tail_of
from assignment.engine.accuracy import (
    EPS,
    MAX_EXACT_WORKERS,
    TIE_RTOL,
    _enumerate,
)
from assignment.engine.method_output import MethodOutput
from assignment.engine.problem import AssignmentProblem

__all__ = [
    "GAIN_TOL",
    "PAIR_EXHAUSTIVE_MAX",
    "PAIR_TOP_GAIN",
    "PAIR_TOP_RELIABLE",
    "GreedyState",
    "fill",
    "fill_message",
    "greedy_assignment",
    "greedy_pairs",
    "greedy_run",
    "why_fill_stopped",
]

#: Moves worth at most this (accuracy of one task per assignment) are no improvement; a pair
#: must beat the task's best single by more than this.
GAIN_TOL = 1e-12
#: Up to this many feasible workers for a task, every pair is scored.
PAIR_EXHAUSTIVE_MAX = 16
#: Otherwise pairs are scored within this many best workers by single gain ...
PAIR_TOP_GAIN = 8
#: ... together with this many most reliable workers.
PAIR_TOP_RELIABLE = 8

# Atoms whose sums differ by at most this times (1 + sum |w|) are merged.
_MERGE_RTOL = 1e-12
# A task's atoms are cached if there are at most _ATOM_CACHE_MAX of them (1 MiB of sums and
# tail) and all cached atoms stay within _ATOM_CACHE_TOTAL (128 MiB); otherwise they are rebuilt
# from the task's workers whenever needed (an enumeration of 2^k patterns, k = 17 to 20).
_ATOM_CACHE_MAX = 1 << 16
_ATOM_CACHE_TOTAL = 1 << 23
# A task whose atoms are not cached keeps a move table (_move_table.py) while its workers do
# not change: the gains of every worker alone (12 n bytes with its slots) and of every pair
# among the _MOVE_TABLE_TOP best by gain and most reliable of its open candidates when it is
# built (8 (2 _MOVE_TABLE_TOP)^2 bytes at most), all tables within _MOVE_TABLE_BYTES (128
# MiB); a task without one has its atoms rebuilt at every evaluation. _MOVE_TABLES False
# switches them off (the tests compare both ways).
_MOVE_TABLES = True
# apply() on such a task also extends the atoms it rebuilt by the move, and keeps them until
# the evaluation that follows (one task's at a time: up to 2^21 atoms, 48 MiB with their
# probabilities and tail), instead of that evaluation rebuilding them. False: rebuild.
_CARRY_ATOMS = True
_MOVE_TABLE_TOP = 16  # at least PAIR_EXHAUSTIVE_MAX: a fresh table holds the kernel's pairs
_MOVE_TABLE_BYTES = 1 << 27
# An initial assignment's tasks with at most this many workers are enumerated all at once.
_LOAD_ENUMERATE_MAX = 12


# --------------------------------------------------------------------------- task distribution


def _members(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, members)`` of per-task lists of workers: each list's length (int64, shape
    ``(len(lists),)``) and all their workers (int64), one list after the other, each in its
    order."""
    counts = np.fromiter(map(len, lists), np.int64, len(lists))
    members = np.fromiter(itertools.chain.from_iterable(lists), np.int64, int(counts.sum()))
    return counts, members


def _atoms(w: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted sums and tail of the vote-sum distribution of workers ``(w, q)`` (in order)."""
    s, t, _, _ = add_workers(
        np.zeros(1), np.array([1.0, 0.0]), w, q, 0.0, _MERGE_RTOL, 0.5, 0.0, TIE_RTOL
    )
    return s, t


# --------------------------------------------------------------------------- the greedy state


class GreedyState:
    """Per-task distributions, loads and the evaluation of a task's best move.

    Greedy fills it from empty; tvcs-iht's final pass (:mod:`assignment.engine.local_search`)
    keeps one across its rounds: it copies it, takes pairs out (:meth:`remove`, which rebuilds
    only the tasks that lost workers) and fills it again, instead of rebuilding every task's
    distribution from scratch each round.
    """

    def __init__(self, problem: AssignmentProblem) -> None:
        n, m = problem.shape
        # One row per column of the problem's quality table (per task, or per category), and
        # the row of each task: Q[i, j] = q[row[j], i]. A problem by category never becomes
        # an (m, n) matrix here.
        qt = np.clip(np.ascontiguousarray(problem.quality_table.T), EPS, 1.0 - EPS)
        self.q = qt
        self.w = np.log(qt) - np.log1p(-qt)
        self.row = problem.task_column
        self.eligible = (
            None if problem.eligible is None else np.ascontiguousarray(problem.eligible.T)
        )
        self._eligible_or_empty = (
            np.zeros((0, 0), dtype=bool) if self.eligible is None else self.eligible
        )
        self._everyone = np.zeros(0, dtype=bool)  # task_best_move's "every pair is eligible"
        self._scratch = np.empty((3, n))  # task_best_move's candidates, gains, |w|
        self._mark = np.zeros(n, dtype=bool)  # task_best_move's scratch: who is on the task
        self.prior = problem.prior
        self.r = np.log1p(-self.prior) - np.log(self.prior)
        self.task_cap = np.minimum(problem.max_workers_per_task, MAX_EXACT_WORKERS)
        self.budget = problem.budget
        self.worker_cap = problem.max_tasks_per_worker
        # Who is on which task: per-task lists of workers (no (m, n) matrix).
        self.load = np.zeros(n, dtype=np.int64)
        self.open_worker = self.load < self.worker_cap
        self.workers: list[list[int]] = [[] for _ in range(m)]
        self.abs_sum = np.zeros(m)
        self.cache: list[tuple[np.ndarray, np.ndarray] | None] = [
            (np.zeros(1), np.array([1.0, 0.0])) for _ in range(m)
        ]
        self.cached_atoms = m
        self.tables: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * m
        self.table_bytes = 0
        self.table_builds = 0  # move tables built (a measure of work, as evaluations)
        self._fresh: tuple | None = None  # _fresh_atoms: (task, its workers, s, p, tail, |w|)
        # Best moves by _memo_key, valid while the open workers do not change (_version).
        self._version = 0
        self._memo_version = 0
        self._memo_moves: dict = {}
        self._state_keys: list = [None] * m
        # Only tasks that share a quality row (a problem by category) can share a best move.
        self._memo_on = self.eligible is None and qt.shape[0] < m
        self.acc = self._accuracies(np.zeros((m, 1)), np.ones((m, 1)), self.abs_sum)
        self.evaluations = 0

    def _accuracies(self, sums, tails, abs_sum, tasks=slice(None)) -> np.ndarray:
        """Accuracy of ``tasks`` from sorted ``sums`` (rows) and their ``tails``.

        The same comparisons as :func:`~assignment.engine._vote_atoms.add_workers`, vectorised
        over tasks whose atoms have one length: ``tails[:, x]`` is ``P(S >= sums[:, x])``.
        """
        r = self.r[tasks]
        tol = TIE_RTOL * (1.0 + np.abs(r) + abs_sum)
        t1 = np.append(tails, np.zeros((tails.shape[0], 1)), axis=1)
        ge = (sums < (r - tol)[:, None]).sum(axis=1)  # first atom >= r - tol
        gt = (sums <= (tol - r)[:, None]).sum(axis=1)  # first atom > tol - r
        rows = np.arange(sums.shape[0])
        prior = self.prior[tasks]
        return prior * t1[rows, ge] + (1.0 - prior) * t1[rows, gt]

    # -- distributions

    def _dist(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        cached = self.cache[j]
        if cached is not None:
            return cached
        if _CARRY_ATOMS:
            fresh = self._fresh_atoms(j)
            return fresh[2], fresh[4]
        idx = np.array(self.workers[j], dtype=np.intp)
        row = self.row[j]
        return _atoms(self.w[row, idx], self.q[row, idx])

    def _fresh_atoms(self, j: int) -> tuple:
        """``(j, workers, s, p, tail, abs_sum)``: task ``j``'s atoms built from its workers as
        :func:`_atoms` builds them (sums, probabilities, tail, ``sum |w|`` in their order);
        the last ones built, or carried by :meth:`apply`, if they are task ``j``'s."""
        fresh = self._fresh
        if fresh is not None and fresh[0] == j and fresh[1] is self.workers[j]:
            return fresh
        idx = np.array(self.workers[j], dtype=np.intp)
        row = self.row[j]
        s, p, abs_sum = build_atoms(self.w[row, idx], self.q[row, idx], _MERGE_RTOL)
        self._fresh = (j, self.workers[j], s, p, tail_of(p), abs_sum)
        return self._fresh

    def _carry(self, j: int, fresh: tuple, move: tuple[int, ...]) -> None:
        """Keep task ``j``'s atoms built from its workers after ``move``: the atoms ``fresh``
        built before it, extended by the move's workers (the operations of :func:`_atoms`)."""
        idx = np.array(move, dtype=np.intp)
        row = self.row[j]
        s, p, abs_sum = extend_all(
            fresh[2], fresh[3], self.w[row, idx], self.q[row, idx], fresh[5], _MERGE_RTOL
        )
        self._fresh = (j, self.workers[j], s, p, tail_of(p), abs_sum)

    # -- moves

    def _memo_key(self, j: int, budget_left: int):
        """What task ``j``'s best move depends on besides the open workers, or None when it
        is not memoised (an eligibility mask, a quality row per task, or atoms not cached).

        Tasks of one category with the same workers added in the same order have the same
        atoms and candidates, so the same best move; greedy evaluates such tasks again and
        again (every task of a category wants that category's best workers, and is evaluated
        again when one of them fills up): at 10,000 workers x 20,000 tasks x 50 categories,
        91% of the evaluations. The key holds the atoms' bytes, so equal keys give equal
        kernel inputs, and the result is the same bit for bit."""
        cached = self.cache[j]
        if not self._memo_on or cached is None:
            return None
        state = self._state_keys[j]  # kept until the task's atoms change (_set_cache)
        if state is None:
            state = self._state_keys[j] = (
                int(self.row[j]),
                float(self.prior[j]),
                int(self.task_cap[j]),
                tuple(self.workers[j]),
                float(self.acc[j]),
                float(self.abs_sum[j]),
                cached[0].tobytes(),
                cached[1].tobytes(),
            )
        return state, min(budget_left, 2)  # the kernel reads only budget_left >= 1 and >= 2

    def _memo(self) -> dict:
        """The memo of best moves, emptied whenever the open workers changed."""
        if self._memo_version != self._version:
            self._memo_moves.clear()
            self._memo_version = self._version
        return self._memo_moves

    def evaluate(self, j: int, budget_left: int):
        """The best move on task ``j``: ``(worth, workers, gain)`` or None if none helps."""
        key = self._memo_key(j, budget_left)
        if key is None:
            return self._evaluate(j, budget_left)
        memo = self._memo()
        if key not in memo:
            memo[key] = self._evaluate(j, budget_left)
        return memo[key]

    def _evaluate(self, j: int, budget_left: int):
        """:meth:`evaluate` by the kernel."""
        room = int(self.task_cap[j]) - len(self.workers[j])
        if room < 1 or budget_left < 1:
            return None
        if self.cache[j] is None and _MOVE_TABLES:
            return self._result(*self._table_move(j, room, budget_left))
        return self._result(*self._kernel_move(j, room, budget_left, *self._dist(j)))

    def _result(self, worth: float, a: int, b: int, gain: float):
        """:meth:`evaluate`'s result from a kernel's ``(worth, first, second, gain)``."""
        if a < 0:
            return None
        self.evaluations += 1
        if worth <= GAIN_TOL:
            return None
        return float(worth), ((int(a),) if b < 0 else (int(a), int(b))), float(gain)

    def _kernel_move(self, j: int, room: int, budget_left: int, s, tail):
        """``task_best_move`` of task ``j`` with atoms ``(s, tail)``."""
        row = self.row[j]
        return task_best_move(
            s,
            tail,
            room,
            self.prior[j],
            self.r[j],
            self.abs_sum[j],
            self.acc[j],
            self.w[row],
            self.q[row],
            self.open_worker,
            np.array(self.workers[j], dtype=np.int64),
            self._everyone if self.eligible is None else self.eligible[j],
            budget_left,
            TIE_RTOL,
            GAIN_TOL,
            PAIR_EXHAUSTIVE_MAX,
            PAIR_TOP_GAIN,
            PAIR_TOP_RELIABLE,
            self._scratch,
            self._mark,
        )

    def _table_move(self, j: int, room: int, budget_left: int):
        """The kernel's move on task ``j`` (atoms not cached) from its move table, built (with
        its atoms) when missing or when a pair the kernel would score is outside it; the
        kernel itself when the tables' memory is spent."""
        table = self.tables[j]
        if table is not None:
            *move, status = self._pick(j, table, room, budget_left)
            if status != MISS:
                return move
        s, tail = self._dist(j)
        table = self._build_table(j, s, tail)
        if table is None:
            return self._kernel_move(j, room, budget_left, s, tail)
        *move, status = self._pick(j, table, room, budget_left)
        assert status != MISS  # the pool holds the kernel's pairs of the open workers
        return move

    def _pick(self, j: int, table, room: int, budget_left: int):
        """``pick_move`` of task ``j`` from ``table``."""
        return pick_move(
            *table,
            self.w[self.row[j]],
            self.open_worker,
            room,
            budget_left,
            self.acc[j],
            GAIN_TOL,
            PAIR_EXHAUSTIVE_MAX,
            PAIR_TOP_GAIN,
            PAIR_TOP_RELIABLE,
            self._scratch,
        )

    def _build_table(self, j: int, s, tail):
        """Task ``j``'s move table from its atoms ``(s, tail)``, kept if the tables' memory
        allows (else None)."""
        self._drop_table(j)
        bound = 12 * self.w.shape[1] + 8 * (2 * _MOVE_TABLE_TOP) ** 2
        if self.table_bytes + bound > _MOVE_TABLE_BYTES:
            return None
        row = self.row[j]
        table = build_table(
            s,
            tail,
            self.prior[j],
            self.r[j],
            self.abs_sum[j],
            self.acc[j],
            self.w[row],
            self.q[row],
            self.open_worker,
            np.array(self.workers[j], dtype=np.int64),
            self._everyone if self.eligible is None else self.eligible[j],
            TIE_RTOL,
            _MOVE_TABLE_TOP,
        )
        self.tables[j] = table
        self.table_bytes += sum(a.nbytes for a in table)
        self.table_builds += 1
        return table

    def _drop_table(self, j: int) -> None:
        """Forget task ``j``'s move table (its workers changed)."""
        old = self.tables[j]
        if old is not None:
            self.table_bytes -= sum(a.nbytes for a in old)
            self.tables[j] = None

    def evaluate_all(self, budget_left: int) -> list[tuple[int, tuple]]:
        """:meth:`evaluate` of every task, in one numba call for the tasks whose atoms are
        cached (once per distinct :meth:`_memo_key`: at the start, once per category and
        prior): ``[(task, best), ...]`` for the tasks with a move that helps."""
        cached = np.fromiter((c is not None for c in self.cache), bool, len(self.cache))
        tasks = np.flatnonzero(cached)
        if self._memo_on:
            keys = [self._memo_key(j, budget_left) or j for j in tasks.tolist()]
            index: dict = {}
            rep_of = np.fromiter((index.setdefault(k, len(index)) for k in keys), np.int64)
            firsts = np.unique(rep_of, return_index=True)[1] if keys else rep_of
            results = self._kernel_moves(tasks[firsts], budget_left)
            memo = self._memo()
            for key, x in index.items():
                if isinstance(key, tuple):
                    memo[key] = results[x]
            results = [results[x] for x in rep_of.tolist()]
        else:
            results = self._kernel_moves(tasks, budget_left)
        found = [(j, best) for j, best in zip(tasks.tolist(), results, strict=True) if best]
        for j in np.flatnonzero(~cached).tolist():  # many workers: atoms rebuilt one by one
            best = self.evaluate(j, budget_left)
            if best is not None:
                found.append((j, best))
        return found

    def _kernel_moves(self, tasks: np.ndarray, budget_left: int) -> list:
        """The best move (as :meth:`evaluate`'s, or None) of each of ``tasks`` (their atoms
        cached), in one numba call."""
        atoms = [self.cache[j] for j in tasks.tolist()]
        sum_starts = np.zeros(tasks.size + 1, dtype=np.int64)
        np.cumsum([a[0].shape[0] for a in atoms], out=sum_starts[1:])
        tail_starts = sum_starts + np.arange(tasks.size + 1)
        counts, members = _members([self.workers[j] for j in tasks.tolist()])
        member_starts = np.zeros(tasks.size + 1, dtype=np.int64)
        np.cumsum(counts, out=member_starts[1:])
        worth, first, second, gain, evaluated = best_moves(
            tasks,
            np.concatenate([a[0] for a in atoms]) if atoms else np.zeros(0),
            np.concatenate([a[1] for a in atoms]) if atoms else np.zeros(0),
            sum_starts,
            tail_starts,
            counts,
            self.task_cap,
            self.prior,
            self.r,
            self.abs_sum,
            self.acc,
            self.w,
            self.q,
            self.row,
            self.open_worker,
            members,
            member_starts,
            self._eligible_or_empty,
            budget_left,
            TIE_RTOL,
            GAIN_TOL,
            PAIR_EXHAUSTIVE_MAX,
            PAIR_TOP_GAIN,
            PAIR_TOP_RELIABLE,
        )
        self.evaluations += int(evaluated)
        results: list = [None] * tasks.size
        helps = np.flatnonzero(worth > GAIN_TOL).tolist()
        worth, first, second, gain = worth.tolist(), first.tolist(), second.tolist(), gain.tolist()
        for x in helps:  # Python numbers, as evaluate gives them
            move = (first[x],) if second[x] < 0 else (first[x], second[x])
            results[x] = (worth[x], move, gain[x])
        return results

    def still_feasible(self, move: tuple[int, ...], budget_left: int) -> bool:
        return budget_left >= len(move) and all(self.open_worker[i] for i in move)

    def apply(self, j: int, move: tuple[int, ...]) -> None:
        """Add the workers of ``move`` to task ``j``."""
        s, tail = self._dist(j)
        fresh = self._fresh if _CARRY_ATOMS and self.cache[j] is None else None
        for i in move:
            self.load[i] += 1
            if self.load[i] >= self.worker_cap[i]:
                self.open_worker[i] = False
                self._version += 1
        self.workers[j] = [*self.workers[j], *move]  # a new list: copies share the old ones
        idx = np.array(move, dtype=np.intp)
        row = self.row[j]
        args = (self.w[row, idx], self.q[row, idx], self.abs_sum[j], _MERGE_RTOL)
        args += (self.prior[j], self.r[j], TIE_RTOL)
        if fresh is not None and fresh[5] == self.abs_sum[j]:  # the same merges: one pass
            s, tail, self.abs_sum[j], self.acc[j], p = add_workers_carried(s, tail, fresh[3], *args)
            self._set_cache(j, s, tail)
            if self.cache[j] is None:
                self._fresh = (j, self.workers[j], s, p, tail_of(p), float(self.abs_sum[j]))
            return
        s, tail, self.abs_sum[j], self.acc[j] = add_workers(s, tail, *args)
        self._set_cache(j, s, tail)
        if fresh is not None and self.cache[j] is None:
            self._carry(j, fresh, move)

    def start_from(self, assignment: np.ndarray) -> None:
        """Start from a feasible ``assignment`` (n, m) instead of the empty one."""
        self.start_from_pairs(*np.nonzero(assignment))

    def start_from_pairs(self, workers: np.ndarray, tasks: np.ndarray) -> None:
        """Start from the feasible assignment of pairs ``(workers[e], tasks[e])`` (distinct)
        instead of the empty one."""
        workers = np.asarray(workers, dtype=np.int64)
        tasks = np.asarray(tasks, dtype=np.int64)
        order = np.lexsort((workers, tasks))  # by task, then worker
        workers, tasks = workers[order], tasks[order]
        self.load += np.bincount(workers, minlength=self.load.shape[0])
        self.open_worker = self.load < self.worker_cap
        self._version += 1
        counts = np.bincount(tasks, minlength=len(self.workers))
        starts = np.zeros(counts.shape[0] + 1, dtype=np.intp)
        np.cumsum(counts, out=starts[1:])
        for j in np.flatnonzero(counts).tolist():
            self.workers[j] = workers[starts[j] : starts[j + 1]].tolist()
        self._rebuild(np.flatnonzero(counts))

    def move_to_pairs(self, workers: np.ndarray, tasks: np.ndarray) -> None:
        """Hold the feasible assignment of pairs ``(workers[e], tasks[e])`` (distinct) instead
        of the current one, rebuilding only the tasks whose workers change."""
        workers = np.asarray(workers, dtype=np.int64)
        tasks = np.asarray(tasks, dtype=np.int64)
        n, m = self.load.shape[0], len(self.workers)
        order = np.lexsort((workers, tasks))  # by task, then worker
        workers, tasks = workers[order], tasks[order]
        counts = np.bincount(tasks, minlength=m)
        starts = np.zeros(m + 1, dtype=np.intp)
        np.cumsum(counts, out=starts[1:])
        held_counts, held = _members(self.workers)
        held += n * np.repeat(np.arange(m, dtype=np.int64), held_counts)  # pairs as task n + worker
        changed = np.unique(np.setxor1d(held, n * tasks + workers, assume_unique=True) // n)
        for j in changed.tolist():
            self.workers[j] = workers[starts[j] : starts[j + 1]].tolist()
        self.load = np.bincount(workers, minlength=n).astype(np.int64)
        self.open_worker = self.load < self.worker_cap
        self._version += 1
        self._rebuild(changed.astype(np.intp))

    def remove(self, workers: np.ndarray, tasks: np.ndarray) -> None:
        """Take the assigned pairs ``(workers[k], tasks[k])`` out of the state."""
        workers = np.asarray(workers, dtype=np.int64)
        for i, j in zip(workers.tolist(), np.asarray(tasks).tolist(), strict=True):
            ws = list(self.workers[j])  # a new list, as in apply
            ws.remove(i)
            self.workers[j] = ws
        self.load -= np.bincount(workers, minlength=self.load.shape[0])
        self.open_worker = self.load < self.worker_cap
        self._version += 1
        self._rebuild(np.unique(np.asarray(tasks, dtype=np.intp)))

    def copy(self) -> GreedyState:
        """An independent copy (atoms and each task's list of workers are shared: they are
        never changed in place, a change replaces them)."""
        twin = object.__new__(GreedyState)
        twin.__dict__.update(self.__dict__)
        for name in ("load", "open_worker", "abs_sum", "acc"):
            setattr(twin, name, getattr(self, name).copy())
        twin.workers = list(self.workers)
        twin.cache = list(self.cache)
        twin.tables = list(self.tables)  # never changed in place either
        twin._memo_moves = {}
        twin._state_keys = list(self._state_keys)
        twin._memo_version = twin._version
        return twin

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The current assignment as pairs ``(workers, tasks)``, int64 of shape (pairs,),
        sorted by worker, then task (the order of ``np.nonzero`` of the dense form)."""
        counts, workers = _members(self.workers)
        tasks = np.repeat(np.arange(len(self.workers), dtype=np.int64), counts)
        order = np.lexsort((tasks, workers))
        return workers[order], tasks[order]

    @property
    def assignment(self) -> np.ndarray:
        """The current assignment, shape (n_workers, n_tasks): ``n m`` bytes, for small
        problems (:meth:`pairs` is the same without the dense matrix)."""
        counts, workers = _members(self.workers)
        dense = np.zeros((self.load.shape[0], len(self.workers)), dtype=bool)
        dense[workers, np.repeat(np.arange(len(self.workers)), counts)] = True
        return dense

    @property
    def assigned(self) -> np.ndarray:
        """Who is on which task, shape (n_tasks, n_workers) (the transposed assignment), built
        from the per-task lists on demand: for small problems and tests."""
        return np.ascontiguousarray(self.assignment.T)

    @property
    def budget_left(self) -> int:
        return self.budget - int(self.load.sum())

    def _rebuild(self, tasks: np.ndarray) -> None:
        """Atoms, weight sums and accuracies of ``tasks`` from their workers.

        Tasks with at most ``_LOAD_ENUMERATE_MAX`` workers get their atoms from one enumeration
        of all ``2^k`` answer patterns per group of tasks with ``k`` workers (sorted, merged
        with the tolerance of the task's full weight sum); larger ones are built worker by
        worker.
        """
        tasks = np.asarray(tasks, dtype=np.intp)
        counts = np.array([len(self.workers[j]) for j in tasks.tolist()], dtype=np.intp)
        for k in np.unique(counts).tolist():
            group = tasks[counts == k]
            if k == 0:
                self.abs_sum[group] = 0.0
                for j in group.tolist():
                    self._set_cache(j, np.zeros(1), np.array([1.0, 0.0]))
                self.acc[group] = self._accuracies(
                    np.zeros((group.size, 1)), np.ones((group.size, 1)), self.abs_sum[group], group
                )
                continue
            if k > _LOAD_ENUMERATE_MAX:
                for j in group.tolist():
                    self._build_one_by_one(j)
                continue
            idx = np.array([self.workers[j] for j in group.tolist()], dtype=np.intp)
            rows = self.row[group][:, None]
            w, q = self.w[rows, idx], self.q[rows, idx]
            self.abs_sum[group] = np.abs(w).sum(axis=1)
            sums, probs = _enumerate(w, q)
            order = np.argsort(sums, axis=1, kind="stable")
            sums = np.take_along_axis(sums, order, axis=1)
            probs = np.take_along_axis(probs, order, axis=1)
            tails = np.zeros((group.size, sums.shape[1] + 1))  # and P(S > the largest sum) = 0
            tails[:, :-1] = np.cumsum(probs[:, ::-1], axis=1)[:, ::-1]
            keep = np.ones(tails.shape, dtype=bool)
            merge = _MERGE_RTOL * (1.0 + self.abs_sum[group])
            keep[:, 1:-1] = np.diff(sums, axis=1) > merge[:, None]
            self.acc[group] = self._accuracies(sums, tails[:, :-1], self.abs_sum[group], group)
            for row, j in enumerate(group.tolist()):
                kept = keep[row]
                self._set_cache(j, sums[row, kept[:-1]], tails[row, kept])

    def _build_one_by_one(self, j: int) -> None:
        """Atoms of task ``j`` by adding its workers one at a time (many workers)."""
        idx = np.array(self.workers[j], dtype=np.intp)
        row = self.row[j]
        s, tail, self.abs_sum[j], self.acc[j] = add_workers(
            np.zeros(1),
            np.array([1.0, 0.0]),
            self.w[row, idx],
            self.q[row, idx],
            0.0,
            _MERGE_RTOL,
            self.prior[j],
            self.r[j],
            TIE_RTOL,
        )
        self._set_cache(j, s, tail)

    def _set_cache(self, j: int, s: np.ndarray, tail: np.ndarray) -> None:
        """Task ``j``'s new atoms (its workers changed): cached if they fit, and its memo key
        and move table forgotten."""
        self._state_keys[j] = None
        self._drop_table(j)
        old = self.cache[j]
        self.cached_atoms -= 0 if old is None else old[0].shape[0]
        if s.shape[0] <= _ATOM_CACHE_MAX and self.cached_atoms + s.shape[0] <= _ATOM_CACHE_TOTAL:
            self.cache[j] = (s, tail)
            self.cached_atoms += s.shape[0]
        else:
            self.cache[j] = None

    def any_feasible(self) -> bool:
        """Whether some (worker, task) pair could still be added (ignoring the budget)."""
        counts = np.fromiter((len(ws) for ws in self.workers), np.int64, len(self.workers))
        room = np.flatnonzero(counts < self.task_cap)
        if self.eligible is None:  # some task with room lacks some open worker
            n_open = int(self.open_worker.sum())
            on_task = (sum(bool(self.open_worker[i]) for i in self.workers[j]) for j in room)
            return any(n_open > k for k in on_task)
        for j in room.tolist():
            ok = self.open_worker & self.eligible[j]
            ok[self.workers[j]] = False
            if ok.any():
                return True
        return False


# --------------------------------------------------------------------------- public API


def _entry(j: int, best: tuple[float, tuple[int, ...], float]):
    """Heap entry of task ``j``: worths are compared in units of ``GAIN_TOL`` (rounded), so
    worths equal up to rounding noise tie and go to the lowest task."""
    worth, move, gain = best
    return (-round(worth / GAIN_TOL), j, move, gain)


def fill(state: GreedyState, *, progress: Callable[[float, str], object] | None = None):
    """Make the best move (by worth, see the module docstring) until none is left.

    Parameters
    ----------
    state : GreedyState
        Changed in place.
    progress : callable, optional
        ``progress(fraction, message)`` about every 1% of the budget.

    Returns
    -------
    steps, pairs : int
        Moves made, and how many of them added a pair.
    """
    budget = state.budget
    budget_left = state.budget_left
    heap = [_entry(j, best) for j, best in state.evaluate_all(budget_left)]
    heapq.heapify(heap)
    steps = pairs = 0
    report_every = max(1, math.ceil(budget / 100))
    next_report = report_every
    while budget_left > 0 and heap:
        _, j, move, _ = heapq.heappop(heap)
        if not state.still_feasible(move, budget_left):
            best = state.evaluate(j, budget_left)
            if best is not None:
                heapq.heappush(heap, _entry(j, best))
            continue
        state.apply(j, move)
        budget_left -= len(move)
        steps += 1
        pairs += len(move) == 2
        best = state.evaluate(j, budget_left)
        if best is not None:
            heapq.heappush(heap, _entry(j, best))
        used = budget - budget_left
        if progress is not None and used >= next_report:
            progress(used / budget, f"{used}/{budget} assigned, accuracy {state.acc.mean():.4f}")
            next_report = (used // report_every + 1) * report_every
    return steps, pairs


def why_fill_stopped(state) -> str:
    """Why :func:`fill` stopped adding pairs to ``state``, in a run's words."""
    if state.budget_left == 0:
        return "budget spent"
    return "no positive gain" if state.any_feasible() else "no feasible addition"


def fill_message(problem: AssignmentProblem, state, stopped: str) -> str:
    """:func:`why_fill_stopped`'s ``stopped``, and when no addition was feasible because some
    task's cap is above the most workers the state scores exactly (``state.task_cap``), that
    limit: otherwise "no feasible addition" under a cap the user set higher reads false."""
    lowered = problem.max_workers_per_task > state.task_cap
    if stopped != "no feasible addition" or not lowered.any():
        return stopped
    limit = int(state.task_cap[lowered].max())
    return (
        f"{stopped} within {limit} workers per task, the most whose answers greedy scores "
        f"exactly with {problem.n_labels} labels ({int(lowered.sum()):,} task(s) have a higher "
        "cap; tvcs-iht tops such tasks up to their cap)"
    )


def greedy_pairs(
    problem: AssignmentProblem,
    *,
    initial=None,
    progress: Callable[[float, str], object] | None = None,
) -> MethodOutput:
    """:func:`greedy_assignment` with ``initial`` as pairs, never as an (n, m) matrix.

    Parameters
    ----------
    problem : AssignmentProblem
    initial : tuple (workers, tasks) of int arrays, shape (pairs,), optional
        A feasible assignment to extend, as distinct pairs.
    progress : callable, optional
        As in :func:`greedy_assignment`.

    Returns
    -------
    MethodOutput
        As :func:`greedy_assignment`'s. The run needs memory ``O(n C + m + pairs)`` for a
        problem by category (``C`` categories), for any number of labels: the workers of each
        task are lists, and accuracies are computed from the pairs.

    Raises
    ------
    TypeError, ValueError
        As :func:`greedy_assignment`.
    """
    return greedy_run(problem, initial=initial, progress=progress)[0]


def greedy_run(
    problem: AssignmentProblem,
    *,
    initial=None,
    progress: Callable[[float, str], object] | None = None,
) -> tuple[MethodOutput, GreedyState]:
    """:func:`greedy_pairs`, and the filled state it ends with: its output's assignment, its
    atoms built, which tvcs-iht's final pass takes over instead of building them again
    (:func:`~assignment.engine.local_search.improve`'s ``state``). Same parameters; the state
    is a ``MulticlassGreedyState`` for ``K > 2`` labels."""
    if not isinstance(problem, AssignmentProblem):
        raise TypeError(f"problem must be an AssignmentProblem, got {type(problem).__name__}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be callable or None, got {progress!r}")
    start = time.perf_counter()
    if problem.n_labels == 2:
        state = GreedyState(problem)
    else:
        from assignment.engine._greedy_multiclass import MulticlassGreedyState  # imports this

        state = MulticlassGreedyState(problem)
    first = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    if initial is not None:
        first = tuple(np.asarray(v) for v in initial)
        if not problem.is_feasible_pairs(*first):
            raise ValueError("initial must be a feasible assignment of the problem's shape")
        state.start_from_pairs(*first)
    initial_accuracy = accuracy_of_pairs(problem, *first)  # pairs checked feasible above
    budget = problem.budget
    steps, pairs = fill(state, progress=progress)
    budget_left = state.budget_left
    stopped = why_fill_stopped(state)
    workers, tasks = state.pairs()
    accuracy = accuracy_of_pairs(problem, workers, tasks)
    if progress is not None:
        progress(1.0, f"done ({stopped}), accuracy {accuracy:.4f}")
    details = {
        "steps": steps,
        "singles_added": steps - pairs,
        "pairs_added": pairs,
        "assigned": budget - budget_left,
        "stopped": stopped,
        "initial_accuracy": initial_accuracy,
        "accuracy": accuracy,
        "evaluations": state.evaluations,
        "seconds": time.perf_counter() - start,
    }
    message = fill_message(problem, state, stopped)
    output = MethodOutput(workers, tasks, problem.shape, message, steps, details=details)
    return output, state


def greedy_assignment(
    problem: AssignmentProblem,
    *,
    initial=None,
    progress: Callable[[float, str], object] | None = None,
) -> MethodOutput:
    """Greedy marginal gain with a two-step (pair) lookahead; see the module docstring.

    Parameters
    ----------
    problem : AssignmentProblem
    initial : array-like of bool, shape (n_workers, n_tasks), optional
        A feasible assignment to extend instead of starting empty (its pairs count against
        the budget and the caps). tvcs-iht's final pass uses this.
    progress : callable, optional
        ``progress(fraction, message)``, called about every 1% of the budget (fraction =
        assignments made / budget) and once at the end with fraction 1.

    Returns
    -------
    MethodOutput
        The assignment's pairs, feasible for ``problem`` and sorted by worker, then task
        (:attr:`~MethodOutput.assignment` is its (n, m) matrix); ``message`` is why it
        stopped (``"budget spent"``, ``"no positive gain"`` or ``"no feasible addition"``,
        with the exact limit of workers per task when it lowered a cap,
        :func:`fill_message`), ``iterations`` the moves made. ``details``: ``steps`` (moves
        made), ``singles_added``, ``pairs_added``, ``assigned`` (pairs (worker, task) in the
        assignment), ``stopped`` (why, one of the three), ``initial_accuracy`` and
        ``accuracy`` (exact expected accuracy of the empty and the returned assignment,
        :func:`~assignment.engine.accuracy.expected_accuracy`, or
        :func:`~assignment.engine.multiclass.expected_accuracy_multiclass` for ``K > 2``
        labels), ``evaluations`` (task evaluations, a measure of work) and ``seconds``.

    Raises
    ------
    TypeError
        If ``problem`` is not an :class:`AssignmentProblem`.
    ValueError
        If ``progress`` is neither None nor callable, or ``initial`` is not a feasible
        assignment of the problem's shape.
    """
    if not isinstance(problem, AssignmentProblem):
        raise TypeError(f"problem must be an AssignmentProblem, got {type(problem).__name__}")
    pairs = None
    if initial is not None:
        start_assignment = np.asarray(initial, dtype=bool)
        if start_assignment.shape != problem.shape or not problem.is_feasible(start_assignment):
            raise ValueError("initial must be a feasible assignment of the problem's shape")
        pairs = np.nonzero(start_assignment)
    return greedy_pairs(problem, initial=pairs, progress=progress)
