"""Local improvement of an assignment by exact expected accuracy: prune, and destroy-and-repair.

The final pass of ``tvcs-iht`` (:mod:`assignment.engine.tvcs_iht`): under prior 0.5 a second
worker on a task only ties the first, which the smooth surrogate does not see, so a support good
for the surrogate spends budget on workers that add nothing. Every move is scored by the exact
accuracy (:mod:`assignment.engine.accuracy`; under confusion matrices the Dawid–Skene vote's,
:func:`~assignment.engine.confusion.confusion_accuracy`, with a task taking at most
:func:`~assignment.engine.greedy_confusion.max_confusion_workers` workers).

* :func:`prune` removes, task by task, every worker whose removal does not lower the task's
  exact accuracy: it never lowers the accuracy and frees budget and caps.
* :func:`improve` prunes and refills with greedy's moves (round 0), then alternates pair rounds
  (remove the ``removal_fraction`` of the pairs of smallest exact removal loss) and worker
  rounds (remove every pair of a block of ``worker_fraction`` of the workers), each followed by
  prune and refill, keeping a round only if it raises the accuracy, so the result is never
  worse than the input. The blocks double, up to ``max_worker_fraction``, when the search
  stalls (two rounds gaining less than ``min_gain``).

The rules (orders, ties, when round 0 is skipped, when the search stops) and why:
docs/design.md#tvcs-iht, step 6; under confusion matrices,
docs/design.md#under-confusion-matrices.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from assignment.engine._problem_accuracy import (
    accuracy_of,
    confusion_accuracy_of,
    pair_losses,
    task_accuracies_of,
)
from assignment.engine.accuracy import _validate_tasks
from assignment.engine.confusion import solo_accuracy
from assignment.engine.greedy import GreedyState, fill
from assignment.engine.greedy_confusion import ConfusionGreedyState, removal_losses_confusion
from assignment.engine.problem import AssignmentProblem
from assignment.engine.upper_bound import effective_quality

__all__ = ["STOP_REASONS", "ImproveResult", "improve", "prune"]

logger = logging.getLogger(__name__)

#: A removal that lowers the task's accuracy by at most this counts as free.
FREE_LOSS = 1e-12

#: Why :func:`improve` stopped (:attr:`ImproveResult.stopped`), and how its message says it:
#: it ran every round, the ``deadline`` passed, or the last two rounds gained less than
#: ``min_gain`` with the largest worker blocks.
STOP_REASONS = {
    "max_rounds": "{rounds} round(s)",
    "time_limit": "stopped by the time limit after {rounds} round(s)",
    "stalled": "rounds {before_last}-{last} gained less than {min_gain:g}",
}


@dataclass(frozen=True)
class _Model:
    """What the final pass scores and refills by, under one worker model.

    Attributes
    ----------
    accuracy : callable
        ``accuracy(problem, assignment)``: the exact mean accuracy (float) of a bool
        assignment, shape (n_workers, n_tasks).
    losses : callable
        ``losses(problem, assignment, tasks)``: ``(workers, tasks, loss)``, each of shape
        (n_assigned,), the exact leave-one-out losses of the assigned pairs of ``tasks``
        (ascending task indices).
    reliability : callable
        ``reliability(problem, workers, tasks)``: shape (pairs,), how reliable each pair's
        worker is on its task; :func:`prune` removes the least reliable free worker first.
    state : callable
        ``state(problem)``: an empty greedy state of the model, which :func:`fill` runs.
    """

    accuracy: Callable
    losses: Callable
    reliability: Callable
    state: Callable


def _symmetric_reliability(problem: AssignmentProblem, workers, tasks) -> np.ndarray:
    """``|Q - 0.5|`` (two labels) or the effective quality (``K`` labels) of each pair."""
    q_pairs = problem.quality_at(workers, tasks)
    if problem.n_labels == 2:
        return np.abs(q_pairs - 0.5)
    return effective_quality(q_pairs, problem.n_labels)


def _solo_accuracy(problem: AssignmentProblem, workers, tasks) -> np.ndarray:
    """Each pair's worker's Dawid–Skene accuracy alone on its task, ``sum_a max_c pi_c
    C_i[c, a]`` (:func:`~assignment.engine.confusion.solo_accuracy`)."""
    return solo_accuracy(problem.confusion[workers], problem.prior_distribution[tasks])


def _dawid_skene_accuracy(problem: AssignmentProblem, assignment: np.ndarray) -> float:
    """The Dawid–Skene vote's exact accuracy by the unchecked kernel: the problem and its
    matrices were validated once, at the edge."""
    workers, tasks = np.nonzero(assignment)
    return confusion_accuracy_of(problem, workers, tasks).expected_accuracy


def _dawid_skene_losses(problem: AssignmentProblem, assignment: np.ndarray, tasks):
    return removal_losses_confusion(problem, assignment, tasks=tasks)


_SYMMETRIC = _Model(accuracy_of, pair_losses, _symmetric_reliability, GreedyState)
_DAWID_SKENE = _Model(
    _dawid_skene_accuracy, _dawid_skene_losses, _solo_accuracy, ConfusionGreedyState
)


def _model_of(problem: AssignmentProblem) -> _Model:
    """The Dawid–Skene model for a problem with confusion matrices, else the symmetric one."""
    return _SYMMETRIC if problem.confusion is None else _DAWID_SKENE


def prune(problem: AssignmentProblem, assignment: np.ndarray, *, tasks=None) -> np.ndarray:
    """Drop every worker whose removal does not lower its task's exact accuracy.

    Parameters
    ----------
    problem : AssignmentProblem
    assignment : ndarray of bool, shape (n_workers, n_tasks)
        Not modified.
    tasks : array_like of int, optional
        Only these tasks (default: all), for when the others are known to be pruned already.

    Returns
    -------
    ndarray of bool, shape (n_workers, n_tasks)
        A subset of ``assignment`` in which each removal lowered its task's exact accuracy (the
        Dawid–Skene vote's when the problem has confusion matrices) by
        at most ``FREE_LOSS`` (most raise it or leave it exactly unchanged), and removing any
        single worker from a task with two or more would lower it by more than ``FREE_LOSS``.

    Raises
    ------
    ValueError
        If ``assignment`` does not have the problem's shape or ``tasks`` are not its tasks, or
        (under confusion matrices) a task has more workers than
        :func:`~assignment.engine.greedy_confusion.max_confusion_workers`.
    """
    model = _model_of(problem)
    out = np.array(assignment, dtype=bool)
    if out.shape != problem.shape:
        raise ValueError(
            f"assignment must have the problem's shape {problem.shape}, got {out.shape}"
        )
    tasks = _validate_tasks(tasks, problem.n_tasks)
    tasks = tasks[out[:, tasks].sum(axis=0) >= 2]
    while tasks.size:
        workers, cols, loss = model.losses(problem, out, tasks)
        free = loss <= FREE_LOSS
        if not free.any():
            break
        workers, cols = workers[free], cols[free]
        reliability = model.reliability(problem, workers, cols)
        order = np.lexsort((workers, reliability, cols))
        workers, cols = workers[order], cols[order]
        first = np.ones(cols.shape[0], dtype=bool)
        first[1:] = cols[1:] != cols[:-1]
        out[workers[first], cols[first]] = False
        tasks = cols[first]
        tasks = tasks[out[:, tasks].sum(axis=0) >= 2]
    return out


@dataclass(frozen=True)
class ImproveResult:
    """Outcome of :func:`improve`.

    Attributes
    ----------
    assignment : ndarray of bool, shape (n_workers, n_tasks)
        Feasible, pruned, and at least as accurate as the input.
    accuracy : float
        Its exact expected accuracy.
    rounds : int
        Rounds run (including one that was not kept).
    history : list of float
        Accuracy of the pruned input, then after every kept round.
    stopped : str
        Why the search stopped: a key of :data:`STOP_REASONS`.
    changed : int
        Pairs of the result that differ from the input's.
    message : str
        Why the search stopped, and what it changed, for people (built from the fields).
    """

    assignment: np.ndarray
    accuracy: float
    rounds: int
    history: list
    stopped: str
    changed: int
    message: str


def _smallest_losses(model: _Model, problem, assignment: np.ndarray, fraction: float):
    """The ``ceil(fraction * n_assigned)`` assigned pairs of smallest removal loss."""
    workers, cols, loss = model.losses(problem, assignment, np.arange(problem.n_tasks))
    count = math.ceil(fraction * workers.shape[0])
    order = np.lexsort((cols, workers, loss))[:count]
    return workers[order], cols[order]


def _changed_tasks(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    return np.flatnonzero((before != after).any(axis=0))


def _prune_state(problem: AssignmentProblem, state: GreedyState, before, since) -> np.ndarray:
    """:func:`prune` the state's tasks whose workers differ from ``since``'s, in place;
    ``before`` is the state's assignment (dense, as :attr:`GreedyState.assignment` gives it,
    built once by the caller). Returns the state's assignment after."""
    tasks = _changed_tasks(since, before)
    after = prune(problem, before, tasks=tasks)
    workers, cols = np.nonzero(before[:, tasks] & ~after[:, tasks])  # prune changed these only
    state.remove(workers, tasks[cols])
    return after


class _Score:
    """The exact accuracy of the search's assignments. Two labels without confusion matrices:
    the mean of per-task accuracies, of which only the tasks whose workers differ from the
    best assignment's are computed again (the same number, to the bit, as scoring all of them:
    :func:`~assignment.engine._problem_accuracy.task_accuracies_of`); otherwise the model's
    accuracy of the whole assignment."""

    def __init__(self, problem: AssignmentProblem, model: _Model, best: np.ndarray) -> None:
        self.problem, self.model = problem, model
        self.per_task = None
        if model is _SYMMETRIC and problem.n_labels == 2:
            self.per_task = task_accuracies_of(problem, best)
            self.best = float(self.per_task.mean())
        else:
            self.best = model.accuracy(problem, best)
        self._trial = None

    def of(self, assignment: np.ndarray, *, since: np.ndarray) -> float:
        """The accuracy of ``assignment``, which differs from ``since`` (the best) on some
        tasks."""
        if self.per_task is None:
            return self.model.accuracy(self.problem, assignment)
        changed = _changed_tasks(since, assignment)
        self._trial = self.per_task.copy()
        self._trial[changed] = task_accuracies_of(self.problem, assignment, changed)
        return float(self._trial.mean())

    def keep(self) -> None:
        """The last assignment scored is the best now."""
        if self.per_task is not None:
            self.per_task = self._trial


def _start(problem: AssignmentProblem, model: _Model, assignment, state):
    """The pruned ``assignment`` and a state holding it: ``state`` moved to it, or a new one."""
    if state is None:
        best = prune(problem, assignment)
        state = model.state(problem)
        state.start_from(best)
        return best, state
    if type(state) is not GreedyState or model is not _SYMMETRIC:
        raise ValueError(
            "state must be a GreedyState, and only for a problem without confusion matrices; "
            f"got {type(state).__name__}"
        )
    after = prune(problem, np.asarray(assignment, dtype=bool))
    state.move_to_pairs(*np.nonzero(after))  # rebuilds each changed task once, pruned
    return after, state


def improve(
    problem: AssignmentProblem,
    assignment: np.ndarray,
    *,
    rng: np.random.Generator,
    max_rounds: int = 12,
    removal_fraction: float = 0.025,
    worker_fraction: float = 0.05,
    max_worker_fraction: float = 0.4,
    min_gain: float = 2e-5,
    deadline: float | None = None,
    progress: Callable[[int, float], object] | None = None,
    filled: bool = False,
    state: GreedyState | None = None,
) -> ImproveResult:
    """Prune, refill and destroy-and-repair; see the module docstring.

    Parameters
    ----------
    problem : AssignmentProblem
    assignment : ndarray of bool, shape (n_workers, n_tasks)
        A feasible assignment (not modified).
    rng : numpy.random.Generator
        Orders the workers for the worker rounds.
    max_rounds : int
        Destroy-and-repair rounds after round 0 (0: prune and refill only).
    removal_fraction : float
        Share of the assigned pairs a pair round removes, in ``(0, 1]``.
    worker_fraction, max_worker_fraction : float
        Share of the workers whose pairs a worker round removes at first, and at most, in
        ``(0, 1]``. The share doubles each time the search stalls.
    min_gain : float
        The search has stalled when the last two rounds (one of each kind) together raised the
        mean accuracy by less than this; it stops when it stalls with the largest share.
    deadline : float, optional
        A ``time.perf_counter()`` value; no round starts after it.
    progress : callable, optional
        ``progress(round, accuracy)`` after every round.
    filled : bool
        ``assignment`` is greedy's own: no move of greedy's adds to it. When pruning it
        changes nothing, round 0 (prune and refill) is skipped: it would only find that again.
    state : GreedyState, optional
        A state of the problem (without confusion matrices) holding another feasible
        assignment, such as the one :func:`~assignment.engine.greedy.greedy_run` ends with:
        taken over (and changed) instead of a new one, so only the tasks whose workers differ
        from its assignment get their atoms built again.

    Returns
    -------
    ImproveResult
        Its accuracies are the Dawid–Skene vote's when the problem has confusion matrices.

    Raises
    ------
    ValueError
        If ``max_rounds`` is negative or a fraction is outside ``(0, 1]``, ``state`` is given
        for a problem with confusion matrices or is not a ``GreedyState``, or (under
        confusion matrices) a task of ``assignment`` has more workers than
        :func:`~assignment.engine.greedy_confusion.max_confusion_workers`.
    """
    _check_rounds_and_fractions(
        max_rounds,
        removal_fraction=removal_fraction,
        worker_fraction=worker_fraction,
        max_worker_fraction=max_worker_fraction,
    )
    n = problem.n_workers
    order = np.tile(rng.permutation(n), 2)  # blocks wrap around
    block = max(1, round(worker_fraction * n))
    largest_block = max(block, round(max_worker_fraction * n))
    cursor = 0
    last_change = 0
    model = _model_of(problem)
    best, state = _start(problem, model, assignment, state)
    score = _Score(problem, model, best)
    best_acc = score.best
    history = [best_acc]
    gains = [0.0, 0.0]
    start_pairs = int(np.asarray(assignment).sum())
    stopped = "max_rounds"
    rounds = 0
    first = 1 if filled and int(best.sum()) == start_pairs else 0  # round 0 would change nothing
    for rnd in range(first, max_rounds + 1):
        if deadline is not None and time.perf_counter() > deadline:
            stopped = "time_limit"
            break
        rounds = rnd + 1 - first
        trial = state.copy()
        if rnd % 2 == 1:  # a pair round
            trial.remove(*_smallest_losses(model, problem, best, removal_fraction))
        elif rnd > 0:  # a worker round
            workers = np.sort(order[cursor : cursor + block])
            rows, tasks = np.nonzero(best[workers])
            trial.remove(workers[rows], tasks)
            cursor = (cursor + block) % n
        candidate = _prune_state(problem, trial, trial.assignment, best)
        fill(trial)
        refilled = _prune_state(problem, trial, trial.assignment, candidate)
        acc = score.of(refilled, since=best)
        gain = max(0.0, acc - best_acc)
        logger.debug("local search round %d: %.6f (%+.6f)", rnd, acc, acc - best_acc)
        if gain > 0.0:
            best, best_acc, state = refilled, acc, trial
            score.keep()
            history.append(acc)
        if progress is not None:
            progress(rnd, best_acc)
        gains = [gains[1], gain]
        if rnd >= last_change + 2 and sum(gains) < min_gain:
            if block >= largest_block:
                stopped = "stalled"
                break
            block, last_change = min(2 * block, largest_block), rnd  # stalled: destroy more
    changed = int((best != np.asarray(assignment, dtype=bool)).sum())
    why = STOP_REASONS[stopped].format(
        rounds=rounds, before_last=first + rounds - 2, last=first + rounds - 1, min_gain=min_gain
    )
    message = (
        f"{why}; {changed} pair(s) changed, {start_pairs} -> {int(best.sum())} assigned, "
        f"{100 * (best_acc - history[0]):+.2f} points"
    )
    return ImproveResult(best, best_acc, rounds, history, stopped, changed, message)


def _check_rounds_and_fractions(max_rounds, **fractions: float) -> None:
    """Refuse a ``max_rounds`` that is not a non-negative integer, or a fraction outside
    ``(0, 1]`` (by its keyword's name)."""
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 0:
        raise ValueError(f"max_rounds must be a non-negative integer, got {max_rounds!r}")
    for name, value in fractions.items():
        if not 0.0 < value <= 1.0:
            raise ValueError(f"{name} must be in (0, 1], got {value!r}")
