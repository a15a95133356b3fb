"""How an assignment spreads: workers per task, tasks per worker, accuracy per task.

Small, JSON-ready summaries of one assignment that a page can draw without the assignment or
the quality matrix: counts by value for the two cap views, and a histogram of each task's
exact expected accuracy.
"""

from __future__ import annotations

import numpy as np

from assignment.engine._problem_accuracy import confusion_accuracy_of
from assignment.engine.accuracy import (
    MAX_EXACT_WORKERS,
    _task_accuracy_sorted,
    _validate_assignment,
    _validate_pairs,
)
from assignment.engine.confusion import confusion_accuracy
from assignment.engine.multiclass import (
    MAX_EXACT_STATES,
    _exact_state_counts,
    _log_prior,
    _task_accuracy_multiclass,
)
from assignment.engine.problem import AssignmentProblem

__all__ = [
    "accuracy_bins",
    "accuracy_histogram",
    "accuracy_under_confusion",
    "assignment_distributions",
]


def accuracy_bins(n_labels: int) -> np.ndarray:
    """Edges of the per-task accuracy histogram: 20 bins over ``[1/K, 1]``. A Bayes vote is
    right at least as often as the likeliest label alone, so accuracies lie there."""
    return np.linspace(1.0 / n_labels, 1.0, 21)


#: An accuracy this close below a bin edge is counted from the edge up: a sum of products that
#: is 0.8 in exact arithmetic may come out as 0.7999999999999999.
_EDGE_SLACK = 1e-9


def accuracy_histogram(values, n_labels: int) -> dict:
    """The histogram of task accuracies ``values`` over :func:`accuracy_bins`:
    ``{"edges": [...], "counts": [...]}``, edges rounded to 6 decimals. A value within
    ``_EDGE_SLACK`` below an edge counts in the bin above it (rounding, not a lower accuracy);
    values outside ``[1/K, 1]`` count in the end bins."""
    bins = accuracy_bins(n_labels)
    counts, _ = np.histogram(np.clip(np.asarray(values) + _EDGE_SLACK, bins[0], 1.0), bins=bins)
    return {"edges": [round(float(edge), 6) for edge in bins], "counts": counts.tolist()}


def assignment_distributions(problem: AssignmentProblem, assignment) -> dict:
    """Distributions of ``assignment`` under ``problem``: a bool matrix of shape
    (n_workers, n_tasks), or pairs ``(workers, tasks)`` (int arrays, no dense matrix built for
    two labels).

    Returns
    -------
    dict
        ``workers_per_task``: ``counts[k]`` = number of tasks with ``k`` workers;
        ``tasks_per_worker``: ``counts[k]`` = number of workers with ``k`` tasks;
        ``task_accuracy``: ``{"edges": [...], "counts": [...]}``, the histogram of each
        task's exact expected accuracy over :func:`accuracy_bins` (``[1/K, 1]``), or None
        when a task is beyond the exact computation (its accuracy is only estimated); for a
        problem with ``confusion``, the Dawid–Skene vote's accuracy under the matrices.

    Raises
    ------
    ValueError
        If ``assignment`` is neither a bool (or 0/1) matrix of the problem's shape nor
        distinct pairs in range (1-D integers of one length).
    """
    n, m = problem.shape
    if isinstance(assignment, tuple):
        workers, tasks = (np.asarray(v) for v in assignment)
        by_task = _validate_pairs(workers, tasks, problem.shape)
        workers, tasks = workers.astype(np.int64), tasks.astype(np.int64)
    else:
        x = _validate_assignment(assignment, problem.shape)
        workers, tasks = np.nonzero(x)
        by_task = np.nonzero(x.T)[::-1]
    per_task = np.bincount(tasks, minlength=m)
    per_worker = np.bincount(workers, minlength=n)
    accuracy = None
    values = _task_accuracies(problem, (workers, tasks), by_task, per_task)
    if values is not None:
        accuracy = accuracy_histogram(values, problem.n_labels)
    return {
        "workers_per_task": np.bincount(per_task).tolist(),
        "tasks_per_worker": np.bincount(per_worker).tolist(),
        "task_accuracy": accuracy,
    }


def _task_accuracies(problem: AssignmentProblem, pairs, by_task, per_task) -> np.ndarray | None:
    """Every task's exact expected accuracy, or None when one is beyond the exact limit; under
    the problem's confusion matrices, if it has them, the Dawid–Skene vote's.

    ``pairs`` are checked distinct pairs in range, ``(workers, tasks)`` of shape (pairs,) each,
    in the caller's order (a task's workers are summed in it under the matrices); ``by_task``
    the same pairs sorted by task, then worker; ``per_task`` the workers of each task, shape
    (n_tasks,). The problem's arrays were checked when it was made: the kernels score them.
    """
    if problem.confusion is not None:
        result = confusion_accuracy_of(problem, *pairs)
        return None if np.any(result.task_standard_error) else result.task_accuracy
    if problem.n_labels == 2:
        if per_task.max(initial=0) > MAX_EXACT_WORKERS:
            return None
        return _task_accuracy_sorted(problem.quality_form, *by_task, problem.prior)
    assignment = np.zeros(problem.shape, dtype=bool)
    assignment[pairs] = True
    states = _exact_state_counts(problem.quality_form, assignment, problem.n_labels)
    if states.max(initial=1.0) > MAX_EXACT_STATES:
        return None
    log_prior = _log_prior(problem.prior_distribution)
    return _task_accuracy_multiclass(problem.quality_form, assignment, log_prior)


def accuracy_under_confusion(
    problem: AssignmentProblem,
    assignment: tuple,
    confusion: np.ndarray,
    *,
    seed: int = 0,
    vote_prior: np.ndarray | None = None,
) -> dict:
    """The expected accuracy of ``assignment`` (pairs ``(workers, tasks)``) if the workers
    answer as Dawid–Skene's confusion matrices say, for the two votes the labels offer.

    The engine optimised under the symmetric model with ``problem``'s quality; with quality
    estimated by Dawid–Skene EM, the full matrices say how the assignment fares under the
    model that was fitted (:mod:`assignment.engine.confusion`).

    Parameters
    ----------
    problem : AssignmentProblem
    assignment : tuple of two int arrays, shape (pairs,) each
    confusion : ndarray, shape (n_workers, K, K)
        ``C[i, c, a] = P(worker i answers a | true label c)``, labels in the problem's order.
    seed : int, default 0
        Seed of the Monte Carlo sums beyond the exact limit.
    vote_prior : ndarray, shape (n_tasks, K), optional
        The prior the Bayes vote scores from, default the problem's: in a next round chosen
        under the matrices, the symmetric posterior after the answers in hand (the problem's
        prior is then Dawid–Skene's posterior).

    Returns
    -------
    dict
        ``dawid_skene_vote`` and ``bayes_vote`` (the symmetric model's vote with the
        problem's quality), each ``{"expected_accuracy": float, "standard_error": float}``
        (standard error 0 when every task was summed exactly).
    """
    workers, tasks = (np.asarray(v, dtype=np.int64) for v in assignment)
    prior = problem.prior_distribution
    votes = {"dawid_skene_vote": None, "bayes_vote": problem.quality_at(workers, tasks)}
    out = {}
    for name, vote_quality in votes.items():
        result = confusion_accuracy(
            confusion,
            workers,
            tasks,
            prior=prior,
            vote_quality=vote_quality,
            vote_prior=None if vote_quality is None else vote_prior,
            seed=seed,
        )
        out[name] = {
            "expected_accuracy": result.expected_accuracy,
            "standard_error": result.standard_error,
        }
    return out
