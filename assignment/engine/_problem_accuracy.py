"""The exact accuracy of a problem's assignments, by the unchecked kernels (issue 14).

Validation at the edge, once: :class:`~assignment.engine.problem.AssignmentProblem` checked its
quality and prior when it was made, so the solvers score their assignments with the private
kernels behind the public functions of :mod:`~assignment.engine.accuracy` (two labels) and
:mod:`~assignment.engine.multiclass` (``K`` labels) instead of checking the whole quality
matrix again on every call. The public functions are those kernels after the checks: the
numbers are the same to the bit. The assignments given here are the solvers' own (bool
matrices of the problem's shape, or distinct pairs in range). A problem with
:attr:`~assignment.engine.problem.AssignmentProblem.confusion` is scored the same way by
:func:`confusion_accuracy_of`, the kernel of
:func:`~assignment.engine.confusion.confusion_accuracy`.
"""

from __future__ import annotations

import numpy as np

from assignment.engine.accuracy import (
    _clip,
    _removal_losses,
    _sorted_pairs,
    _task_accuracy,
    _task_accuracy_sorted,
)
from assignment.engine.confusion import (
    DEFAULT_SAMPLES,
    ConfusionAccuracy,
    _confusion_accuracy,
    _log_probabilities,
)
from assignment.engine.multiclass import _log_prior, _removal_losses_multiclass, _units_accuracy
from assignment.engine.problem import AssignmentProblem


def accuracy_of_pairs(problem: AssignmentProblem, workers, tasks) -> float:
    """Exact mean expected accuracy of the assignment of pairs ``(workers[e], tasks[e])``.

    Parameters
    ----------
    problem : AssignmentProblem
    workers, tasks : ndarray of int, shape (pairs,)
        Distinct pairs in range, in any order.

    Returns
    -------
    float
        :func:`~assignment.engine.accuracy.expected_accuracy` (two labels) or
        :func:`~assignment.engine.multiclass.expected_accuracy_multiclass` of the matching
        bool matrix, from the pairs (no dense matrix).
    """
    if problem.n_labels == 2:
        workers, tasks = _sorted_pairs(workers, tasks)
    return accuracy_of_sorted_pairs(problem, workers, tasks)


def accuracy_of_sorted_pairs(problem: AssignmentProblem, workers, tasks) -> float:
    """:func:`accuracy_of_pairs` of pairs the caller has sorted by task, then worker (as
    :func:`~assignment.engine.accuracy._validate_pairs` returns them): not sorted again.

    Parameters
    ----------
    problem : AssignmentProblem
    workers, tasks : ndarray of int64, shape (pairs,)
        Distinct pairs in range, sorted by task, then worker (for ``K`` labels any order).

    Returns
    -------
    float
        The same number as :func:`accuracy_of_pairs`, to the bit.
    """
    if problem.n_labels == 2:
        return float(
            _task_accuracy_sorted(problem.quality_form, workers, tasks, problem.prior).mean()
        )
    # Every task is a unit (those without workers are empty), grouped and summed as the dense
    # assignment's tasks are.
    quality = _clip(problem.quality_at(workers, tasks))
    log_prior = _log_prior(problem.prior_distribution)
    return float(_units_accuracy(np.asarray(tasks, dtype=np.intp), quality, log_prior).mean())


def accuracy_of(problem: AssignmentProblem, assignment: np.ndarray) -> float:
    """Exact mean expected accuracy of the bool ``assignment``, shape (n_workers, n_tasks):
    :func:`~assignment.engine.accuracy.expected_accuracy` (two labels) or
    :func:`~assignment.engine.multiclass.expected_accuracy_multiclass`."""
    if problem.n_labels == 2:
        return float(_task_accuracy(problem.quality_form, assignment, problem.prior).mean())
    return accuracy_of_pairs(problem, *np.nonzero(assignment))


def task_accuracies_of(
    problem: AssignmentProblem, assignment: np.ndarray, tasks: np.ndarray | None = None
) -> np.ndarray:
    """Exact expected accuracy of each task of ``tasks`` (ascending, distinct; default all)
    under the bool ``assignment``, shape (n_workers, n_tasks), two labels: shape
    (len(tasks),), or (n_tasks,).

    A task's number depends on its own workers alone, to the bit: the mean of
    ``task_accuracies_of(problem, x)`` is :func:`accuracy_of` ``(problem, x)``, and a task's
    entry is the same whichever other tasks are asked for with it.
    """
    if problem.n_labels != 2:
        raise ValueError("task_accuracies_of takes two labels")
    if tasks is None:
        return _task_accuracy(problem.quality_form, assignment, problem.prior)
    tasks = np.asarray(tasks, dtype=np.intp)
    local, workers = np.nonzero(assignment[:, tasks].T)  # by task, then worker
    per_task = _task_accuracy_sorted(problem.quality_form, workers, tasks[local], problem.prior)
    return per_task[tasks]


def pair_losses(problem: AssignmentProblem, assignment: np.ndarray, tasks: np.ndarray):
    """Exact leave-one-out losses of the assigned pairs of ``tasks``.

    Parameters
    ----------
    problem : AssignmentProblem
    assignment : ndarray of bool, shape (n_workers, n_tasks)
    tasks : ndarray of int, shape (k,)
        Ascending, distinct task indices.

    Returns
    -------
    workers, tasks, loss : ndarray, shape (n_assigned,)
        As :func:`~assignment.engine.accuracy.removal_losses` (two labels) or
        :func:`~assignment.engine.multiclass.removal_losses_multiclass` return them.
    """
    if problem.n_labels == 2:
        return _removal_losses(problem.quality_form, assignment, problem.prior, tasks)
    log_prior = _log_prior(problem.prior_distribution)
    return _removal_losses_multiclass(problem.quality_form, assignment, log_prior, tasks)


def confusion_accuracy_of(
    problem: AssignmentProblem, workers, tasks, *, seed=0
) -> ConfusionAccuracy:
    """The Dawid–Skene vote's expected accuracy per task of the pairs, under the problem's
    confusion matrices and prior.

    Parameters
    ----------
    problem : AssignmentProblem
        With ``confusion``, shape (n_workers, K, K).
    workers, tasks : ndarray of int, shape (pairs,)
        Distinct pairs in range, in any order (a task's workers are summed in this order).
    seed : int, default 0
        Seed of the Monte Carlo sums beyond ``MAX_EXACT_PATTERNS`` answer patterns.

    Returns
    -------
    ConfusionAccuracy
        :func:`~assignment.engine.confusion.confusion_accuracy` of the same arguments.
    """
    log_prior = _log_probabilities(problem.prior_distribution)
    log_c = _log_probabilities(problem.confusion)
    vote = (None, log_prior)
    return _confusion_accuracy(log_c, log_prior, workers, tasks, vote, DEFAULT_SAMPLES, seed)
