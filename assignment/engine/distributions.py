"""How an assignment spreads: workers per task, tasks per worker, accuracy per task.

Small, JSON-ready summaries of one assignment that a page can draw without the assignment or
the quality matrix: counts by value for the two cap views, and a histogram of each task's
exact expected accuracy.
"""

from __future__ import annotations

import numpy as np

from assignment.engine.accuracy import MAX_EXACT_WORKERS, task_accuracy
from assignment.engine.problem import AssignmentProblem

__all__ = ["ACCURACY_BINS", "assignment_distributions"]

#: Edges of the per-task accuracy histogram: a Bayes vote is right at least as often as the
#: likelier label alone, so accuracies lie in [0.5, 1].
ACCURACY_BINS = np.linspace(0.5, 1.0, 21)


def assignment_distributions(problem: AssignmentProblem, assignment: np.ndarray) -> dict:
    """Distributions of ``assignment`` (bool, shape (n_workers, n_tasks)) under ``problem``.

    Returns
    -------
    dict
        ``workers_per_task``: ``counts[k]`` = number of tasks with ``k`` workers;
        ``tasks_per_worker``: ``counts[k]`` = number of workers with ``k`` tasks;
        ``task_accuracy``: ``{"edges": [...], "counts": [...]}``, the histogram of each
        task's exact expected accuracy over :data:`ACCURACY_BINS`, or None when a task has
        more than ``MAX_EXACT_WORKERS`` workers (its accuracy is only estimated).
    """
    assignment = np.asarray(assignment, dtype=bool)
    per_task = assignment.sum(axis=0)
    per_worker = assignment.sum(axis=1)
    accuracy = None
    if per_task.max(initial=0) <= MAX_EXACT_WORKERS:
        values = task_accuracy(problem.quality_form, assignment, prior=problem.prior)
        counts, _ = np.histogram(np.clip(values, 0.5, 1.0), bins=ACCURACY_BINS)
        accuracy = {
            "edges": [round(float(edge), 6) for edge in ACCURACY_BINS],
            "counts": counts.tolist(),
        }
    return {
        "workers_per_task": np.bincount(per_task).tolist(),
        "tasks_per_worker": np.bincount(per_worker).tolist(),
        "task_accuracy": accuracy,
    }
