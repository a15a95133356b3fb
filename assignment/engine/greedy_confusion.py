"""Greedy under Dawid–Skene's confusion matrices (docs/design.md#under-confusion-matrices).

The moves, their worth, the lazy queue and every tie rule are those of
:mod:`assignment.engine.greedy` (its :func:`~assignment.engine.greedy.fill` runs this state);
the gain of a move is the exact increase of the Dawid–Skene vote's accuracy (Dawid & Skene
1979), ``A_j(S) = sum_a max_c pi_jc prod_{i in S} C_i[c, a_i]``, computed from the task's joint
table ``P_S(c, a)``, shape ``(K, K^|S|)``, rebuilt from its workers when the task is evaluated.
A task takes at most :func:`max_confusion_workers` workers, so every accuracy is exact. The
gains are not submodular; the lazy queue needs only that a task's options shrink until a move
is made on it (the argument is in the design document).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from numba import njit

from assignment.engine._move_scores import first_best, top_positions
from assignment.engine._problem_accuracy import confusion_accuracy_of
from assignment.engine.confusion import MAX_EXACT_PATTERNS
from assignment.engine.greedy import (
    GAIN_TOL,
    PAIR_EXHAUSTIVE_MAX,
    PAIR_TOP_GAIN,
    PAIR_TOP_RELIABLE,
    GreedyState,
    fill,
    fill_message,
    why_fill_stopped,
)
from assignment.engine.method_output import MethodOutput
from assignment.engine.problem import AssignmentProblem

__all__ = [
    "ConfusionGreedyState",
    "greedy_confusion",
    "max_confusion_workers",
    "removal_losses_confusion",
]


def max_confusion_workers(n_labels: int) -> int:
    """The most workers ``k`` with ``K^k <= MAX_EXACT_PATTERNS`` answer patterns: 12 for two
    labels, 7 for three, 6 for four, 5 for five."""
    k = 0
    while n_labels ** (k + 1) <= MAX_EXACT_PATTERNS:
        k += 1
    return k


@njit(cache=True)
def joint_table(prior_row, confusion, members):
    """``P_S(c, a) = pi_c prod_s C_{members[s]}[c, a_s]``, shape (K, K^|S|); the pattern
    ``a`` is indexed ``sum_s a_s K^(|S| - 1 - s)`` (the last worker varies fastest)."""
    k = prior_row.shape[0]
    table = np.empty((k, 1))
    table[:, 0] = prior_row
    for i in members:
        table = _extend(table, confusion[i])
    return table


@njit(cache=True)
def _extend(table, c_new):
    """The table with one more worker of confusion ``c_new`` (K, K): shape (K, K M)."""
    k, size = table.shape
    out = np.empty((k, size * k))
    for x in range(size):
        for a in range(k):
            for c in range(k):
                out[c, x * k + a] = table[c, x] * c_new[c, a]
    return out


@njit(cache=True)
def table_accuracy(table):
    """``sum_a max_c P(c, a)``: the Dawid–Skene vote's accuracy."""
    total = 0.0
    for x in range(table.shape[1]):
        total += table[:, x].max()
    return total


@njit(cache=True)
def accuracy_without(table, position, n_members):
    """``A(S - s)`` for the member at ``position`` of the ``n_members`` of ``table``:
    ``sum_{a_-s} max_c sum_{a_s} P_S(c, a)`` (a row of a confusion matrix sums to 1, so
    summing its answer out of the joint table leaves the table of the others)."""
    k = table.shape[0]
    after = k ** (n_members - 1 - position)
    block = after * k
    total = 0.0
    for start in range(0, table.shape[1], block):
        for r in range(after):
            best = 0.0
            for c in range(k):
                v = 0.0
                for a in range(k):
                    v += table[c, start + a * after + r]
                if v > best:
                    best = v
            total += best
    return total


@njit(cache=True)
def _removal_losses_kernel(prior, confusion, task, workers, starts):
    """Each pair's leave-one-out loss; the pairs of task ``task[g]`` are ``workers[starts[g]:
    starts[g + 1]]``."""
    out = np.empty(workers.shape[0])
    for g in range(task.shape[0]):
        members = workers[starts[g] : starts[g + 1]]
        table = joint_table(prior[task[g]], confusion, members)
        full = table_accuracy(table)
        for p in range(members.shape[0]):
            out[starts[g] + p] = full - accuracy_without(table, p, members.shape[0])
    return out


def removal_losses_confusion(
    problem: AssignmentProblem, assignment: np.ndarray, *, tasks: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact accuracy each assigned worker adds to its task under the confusion matrices.

    The loss of pair ``(i, j)`` is ``A_j(S) - A_j(S - i)``, ``A_j`` the Dawid–Skene vote's
    exact accuracy (module docstring) and ``S`` the task's workers; from the task's joint
    table ``P_S`` (:func:`joint_table`) with worker ``i``'s answer summed out
    (:func:`accuracy_without`): ``O(|S| K^(|S| + 1))`` per task. Non-negative up to rounding
    (the Dawid–Skene vote is the Bayes-optimal vote, and one more answer never lowers it).

    Parameters
    ----------
    problem : AssignmentProblem
        With :attr:`~AssignmentProblem.confusion` (n_workers, K, K).
    assignment : ndarray of bool, shape (n_workers, n_tasks)
    tasks : ndarray of int, shape (k,), optional
        Only the pairs of these tasks (default: every task).

    Returns
    -------
    workers, tasks : ndarray of int64, shape (n_assigned,)
        The assigned pairs (of ``tasks``), sorted by task, then worker.
    loss : ndarray of float64, shape (n_assigned,)

    Raises
    ------
    ValueError
        If ``problem`` has no matrices, or a task has more workers than
        :func:`max_confusion_workers` (its accuracy would not be exact).
    """
    if problem.confusion is None:
        raise ValueError("problem.confusion is None: use assignment.engine.accuracy")
    chosen = np.asarray(assignment, dtype=bool)
    if tasks is not None:
        chosen = chosen & np.isin(np.arange(problem.n_tasks), tasks)[None, :]
    tasks, workers = np.nonzero(chosen.T)
    tasks, workers = tasks.astype(np.int64), workers.astype(np.int64)
    counts = np.bincount(tasks, minlength=problem.n_tasks)
    limit = max_confusion_workers(problem.n_labels)
    if counts.max(initial=0) > limit:
        j = int(np.argmax(counts))
        raise ValueError(
            f"task {j} has {int(counts[j])} workers: leave-one-out losses under the confusion "
            f"matrices are exact for at most {limit} workers a task with {problem.n_labels} "
            f"labels (K^k <= {MAX_EXACT_PATTERNS} answer patterns)"
        )
    task = np.flatnonzero(counts)
    starts = np.concatenate([[0], np.cumsum(counts[task])]).astype(np.int64)
    loss = _removal_losses_kernel(
        np.ascontiguousarray(problem.prior_distribution),
        np.ascontiguousarray(problem.confusion),
        task.astype(np.int64),
        workers,
        starts,
    )
    return workers, tasks, loss


@njit(cache=True)
def _single_accuracy_two(table, c_new):
    """:func:`single_accuracy` for two labels: the same products, maxima and sum in the same
    order (so the same bits), the loops over the labels unrolled (about twice as fast)."""
    c00, c01, c10, c11 = c_new[0, 0], c_new[0, 1], c_new[1, 0], c_new[1, 1]
    total = 0.0
    for x in range(table.shape[1]):
        t0, t1 = table[0, x], table[1, x]
        v = t0 * c00
        best = v if v > 0.0 else 0.0
        v = t1 * c10
        if v > best:
            best = v
        total += best
        v = t0 * c01
        best = v if v > 0.0 else 0.0
        v = t1 * c11
        if v > best:
            best = v
        total += best
    return total


@njit(cache=True)
def single_accuracy(table, c_new):
    """``A(S + i) = sum_{a, a'} max_c P_S(c, a) C_i[c, a']``, without building the table."""
    k, size = table.shape
    if k == 2:
        return _single_accuracy_two(table, c_new)
    total = 0.0
    for x in range(size):
        for a in range(k):
            best = 0.0
            for c in range(k):
                v = table[c, x] * c_new[c, a]
                if v > best:
                    best = v
            total += best
    return total


@njit(cache=True)
def pair_accuracy(table, c_one, c_two):
    """``A(S + i + l) = sum_{a, a', a''} max_c P_S(c, a) C_i[c, a'] C_l[c, a'']``."""
    return single_accuracy(_extend(table, c_one), c_two)


@njit(cache=True)
def _solo_accuracies(n_labels, confusion, cand):
    """Each candidate's accuracy alone on a task in doubt, ``sum_a max_c C_i[c, a] / K``: the
    uniform prior, not the task's (under a confident prior every worker too weak to overturn
    it alone ties with the prior's accuracy, which would rank them by index)."""
    out = np.empty(cand.shape[0])
    base = np.full((n_labels, 1), 1.0 / n_labels)
    for e in range(cand.shape[0]):
        out[e] = single_accuracy(base, confusion[cand[e]])
    return out


@njit(cache=True)
def _best_pair(table, acc, prior_row, confusion, cand, g1, consts):
    """The best pair among the candidates: ``(g2, a, b)``, positions ``a < b`` in ``cand``
    (exhaustive up to ``consts[1]`` candidates, else the top ``consts[2]`` by ``g1`` and the
    top ``consts[3]`` alone on a task in doubt); within ``consts[0]`` of the best, the lowest."""
    size = cand.shape[0]
    if size <= consts[1]:
        sub = np.arange(size)
    else:
        chosen = np.zeros(size, dtype=np.bool_)
        top_positions(g1, int(consts[2]), chosen)
        top_positions(_solo_accuracies(prior_row.shape[0], confusion, cand), int(consts[3]), chosen)
        sub = np.flatnonzero(chosen)
    n_sub = sub.shape[0]
    pa = np.empty(n_sub * (n_sub - 1) // 2, dtype=np.int64)
    pb = np.empty_like(pa)
    g2 = np.empty(pa.shape[0])
    e = 0
    for x in range(n_sub):
        wider = _extend(table, confusion[cand[sub[x]]])
        for y in range(x + 1, n_sub):
            pa[e], pb[e] = sub[x], sub[y]
            g2[e] = single_accuracy(wider, confusion[cand[sub[y]]]) - acc
            e += 1
    e = first_best(g2, consts[0])
    return g2[e], pa[e], pb[e]


@njit(cache=True)
def task_best_move(table, acc, prior_row, confusion, cand, room, budget_left, consts):
    """A task's best move over the candidates ``cand`` (ascending): ``(worth, first, second,
    gain)`` with ``second`` -1 for a single, ``first`` -1 when there is no move.

    ``consts``: ``GAIN_TOL``, ``PAIR_EXHAUSTIVE_MAX``, ``PAIR_TOP_GAIN``, ``PAIR_TOP_RELIABLE``.
    """
    size = cand.shape[0]
    if room < 1 or budget_left < 1 or size == 0:
        return -1.0, -1, -1, 0.0
    gain_tol = consts[0]
    g1 = np.empty(size)
    for e in range(size):
        g1[e] = single_accuracy(table, confusion[cand[e]]) - acc
    best = first_best(g1, gain_tol)
    worth = g1[best]
    gain = worth
    first, second = cand[best], -1
    if room >= 2 and budget_left >= 2 and size >= 2 and worth + gain_tol < 0.5 * (1.0 - acc):
        g2, pa, pb = _best_pair(table, acc, prior_row, confusion, cand, g1, consts)
        if 0.5 * g2 > worth + gain_tol:
            worth, gain, first, second = 0.5 * g2, g2, cand[pa], cand[pb]
    return worth, first, second, gain


@njit(cache=True)
def open_candidates(open_worker, eligible_row, members):
    """The open workers not in ``members`` and eligible by ``eligible_row`` (empty: every
    worker is), ascending."""
    ok = open_worker.copy()
    if eligible_row.shape[0] > 0:
        ok &= eligible_row
    for i in members:
        ok[i] = False
    return np.flatnonzero(ok)


@njit(cache=True)
def evaluate_task(
    prior_row, confusion, members, open_worker, eligible_row, acc, room, budget_left, consts
):
    """:func:`task_best_move` of a task with workers ``members`` over its
    :func:`open_candidates`, its table built here: one call from Python per evaluation."""
    table = joint_table(prior_row, confusion, members)
    cand = open_candidates(open_worker, eligible_row, members)
    return task_best_move(table, acc, prior_row, confusion, cand, room, budget_left, consts)


_CONSTS = np.array([GAIN_TOL, PAIR_EXHAUSTIVE_MAX, PAIR_TOP_GAIN, PAIR_TOP_RELIABLE], dtype=float)
_EVERY_WORKER = np.zeros(0, dtype=np.bool_)  # an eligibility row of no mask


class ConfusionGreedyState:
    """Loads, each task's workers and Dawid–Skene accuracy, and a task's best move under the
    confusion matrices; the interface :func:`~assignment.engine.greedy.fill` uses.

    Like :class:`~assignment.engine.greedy.GreedyState` it can start from a given assignment
    (:meth:`start_from`, :meth:`start_from_pairs`), lose pairs (:meth:`remove`) and be copied,
    which tvcs-iht's final pass under the matrices needs
    (:mod:`assignment.engine.local_search`); those methods are greedy's own, over this state's
    :meth:`_rebuild` (a task's accuracy from its joint table)."""

    still_feasible = GreedyState.still_feasible
    any_feasible = GreedyState.any_feasible
    pairs = GreedyState.pairs
    budget_left = GreedyState.budget_left
    assignment = GreedyState.assignment
    start_from = GreedyState.start_from
    start_from_pairs = GreedyState.start_from_pairs
    remove = GreedyState.remove

    def __init__(self, problem: AssignmentProblem) -> None:
        if problem.confusion is None:
            raise ValueError("problem.confusion is None: use assignment.engine.greedy")
        n, m = problem.shape
        self.confusion = np.ascontiguousarray(problem.confusion)
        self.prior = np.ascontiguousarray(problem.prior_distribution)
        self.eligible = (
            None if problem.eligible is None else np.ascontiguousarray(problem.eligible.T)
        )
        self.task_cap = np.minimum(
            problem.max_workers_per_task, max_confusion_workers(problem.n_labels)
        )
        self.budget = problem.budget
        self.worker_cap = problem.max_tasks_per_worker
        self.load = np.zeros(n, dtype=np.int64)
        self.open_worker = self.load < self.worker_cap
        self.workers: list[list[int]] = [[] for _ in range(m)]
        self.acc = self.prior.max(axis=1)
        self.evaluations = 0
        self._version = 0  # moves are memoised while the open workers stay the same
        self._memo: dict = {}
        self._memo_version = 0

    def _eligible_row(self, j: int) -> np.ndarray:
        return _EVERY_WORKER if self.eligible is None else self.eligible[j]

    def _candidates(self, j: int) -> np.ndarray:
        """The open workers not on task ``j`` (and eligible for it), ascending."""
        members = np.array(self.workers[j], dtype=np.int64)
        return open_candidates(self.open_worker, self._eligible_row(j), members)

    def evaluate(self, j: int, budget_left: int):
        """The best move on task ``j``: ``(worth, workers, gain)``, or None if none helps.

        Without an eligibility mask the move depends only on the task's prior, workers and
        room and on the open workers, so tasks alike share it until a worker fills up."""
        room = int(self.task_cap[j]) - len(self.workers[j])
        key = None
        if self.eligible is None:
            if self._memo_version != self._version:
                self._memo.clear()
                self._memo_version = self._version
            key = (self.prior[j].tobytes(), tuple(self.workers[j]), room, min(budget_left, 2))
            if key in self._memo:
                return self._memo[key]
        worth, a, b, gain = evaluate_task(
            self.prior[j],
            self.confusion,
            np.array(self.workers[j], dtype=np.int64),
            self.open_worker,
            self._eligible_row(j),
            self.acc[j],
            room,
            budget_left,
            _CONSTS,
        )
        self.evaluations += 1
        best = None
        if a >= 0 and worth > GAIN_TOL:
            best = float(worth), ((int(a),) if b < 0 else (int(a), int(b))), float(gain)
        if key is not None:
            self._memo[key] = best
        return best

    def evaluate_all(self, budget_left: int) -> list:
        """:meth:`evaluate` of every task: ``[(task, best), ...]`` for those with a move."""
        found = ((j, self.evaluate(j, budget_left)) for j in range(len(self.workers)))
        return [(j, best) for j, best in found if best is not None]

    def apply(self, j: int, move: tuple[int, ...]) -> None:
        """Add the workers of ``move`` to task ``j``."""
        for i in move:
            self.load[i] += 1
            if self.load[i] >= self.worker_cap[i]:
                self.open_worker[i] = False
                self._version += 1
            self.workers[j].append(i)
        self._rebuild([j])

    def _rebuild(self, tasks) -> None:
        """The Dawid–Skene accuracy of ``tasks`` from their workers' joint tables."""
        for j in np.asarray(tasks, dtype=np.int64).tolist():
            members = np.array(self.workers[j], dtype=np.int64)
            self.acc[j] = table_accuracy(joint_table(self.prior[j], self.confusion, members))

    def copy(self) -> ConfusionGreedyState:
        """An independent copy (the matrices, priors and caps are shared: never changed)."""
        twin = object.__new__(ConfusionGreedyState)
        twin.__dict__.update(self.__dict__)
        for name in ("load", "open_worker", "acc"):
            setattr(twin, name, getattr(self, name).copy())
        twin.workers = [list(ws) for ws in self.workers]
        twin._memo = {}
        twin._memo_version = twin._version
        return twin


def greedy_confusion(
    problem: AssignmentProblem, *, progress: Callable[[float, str], object] | None = None
) -> MethodOutput:
    """Greedy with pair lookahead on the exact accuracy of the Dawid–Skene vote.

    Parameters
    ----------
    problem : AssignmentProblem
        With :attr:`~AssignmentProblem.confusion` (n_workers, K, K).
    progress : callable, optional
        ``progress(fraction, message)`` about every 1% of the budget.

    Returns
    -------
    MethodOutput
        Feasible pairs; ``message`` why it stopped (``"budget spent"``, ``"no positive gain"``
        or ``"no feasible addition"``, with the exact limit of workers per task when it
        lowered a cap, :func:`~assignment.engine.greedy.fill_message`); ``details``:
        ``steps``, ``singles_added``, ``pairs_added``, ``assigned``, ``stopped``,
        ``accuracy`` (the Dawid–Skene vote's exact accuracy of the pairs,
        :func:`~assignment.engine.confusion.confusion_accuracy`), ``worker_limit`` (workers
        a task takes at most here), ``evaluations`` and ``seconds``.

    Raises
    ------
    ValueError
        If ``problem`` has no confusion matrices.
    """
    start = time.perf_counter()
    state = ConfusionGreedyState(problem)
    steps, pairs = fill(state, progress=progress)
    budget_left = state.budget_left
    stopped = why_fill_stopped(state)
    workers, tasks = state.pairs()
    accuracy = confusion_accuracy_of(problem, workers, tasks).expected_accuracy
    details = {
        "steps": steps,
        "singles_added": steps - pairs,
        "pairs_added": pairs,
        "assigned": problem.budget - budget_left,
        "stopped": stopped,
        "accuracy": accuracy,
        "worker_limit": max_confusion_workers(problem.n_labels),
        "evaluations": state.evaluations,
        "seconds": time.perf_counter() - start,
    }
    message = fill_message(problem, state, stopped)
    return MethodOutput(workers, tasks, problem.shape, message, steps, details=details)
