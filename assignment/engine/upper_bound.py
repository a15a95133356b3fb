"""An upper bound on the expected accuracy any assignment can reach (for evaluation).

Drop the per-worker caps (a worker whose cap is 0 stays out: it takes no task). Then tasks no
longer compete for workers, and task ``j`` given ``k``
workers does best with its ``k`` most reliable eligible ones (reliability ``max(Q, 1 - Q)``:
a more informative worker never lowers the Bayes vote's accuracy), reaching ``a_j(k)``. What is
left is a multiple-choice knapsack: pick one ``k_j <= max_workers_per_task[j]`` per task with
``sum_j k_j <= budget`` to maximise ``sum_j a_j(k_j)``.

Its LP relaxation is solved exactly by walking the upper concave envelopes of the ``a_j`` in
order of decreasing slope (Sinha & Zoltners 1979); that value is the bound returned. Stopping
before the one segment that does not fit gives an integral knapsack solution, so the exact
knapsack optimum lies between the two, which differ by less than ``1 / n_tasks``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from assignment.engine.accuracy import MAX_EXACT_WORKERS, task_accuracy
from assignment.engine.problem import AssignmentProblem

__all__ = ["UpperBound", "accuracy_upper_bound", "accuracy_upper_bounds"]


@dataclass(frozen=True)
class UpperBound:
    """``value``: the bound (mean accuracy over tasks); ``integral``: a knapsack solution's
    value below it; ``workers_per_task``: that solution's ``k_j``, shape (n_tasks,)."""

    value: float
    integral: float
    workers_per_task: np.ndarray


def _upper_hull(acc: np.ndarray) -> list[int]:
    """Indices of the upper concave envelope of the points ``(k, acc[k])``."""
    hull: list[int] = []
    for k in range(acc.shape[0]):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # drop b when it lies on or below the chord from a to k
            if (acc[b] - acc[a]) * (k - a) <= (acc[k] - acc[a]) * (b - a):
                hull.pop()
            else:
                break
        hull.append(k)
    return hull


def accuracy_upper_bound(problem: AssignmentProblem) -> UpperBound:
    """The per-worker-cap-free bound described in the module docstring.

    Raises
    ------
    ValueError
        If a task may take more than ``MAX_EXACT_WORKERS`` workers (its ``a_j(k)`` would not
        be exact).
    """
    return accuracy_upper_bounds(problem, budgets=[problem.budget])[0]


def accuracy_upper_bounds(problem: AssignmentProblem, *, budgets) -> list[UpperBound]:
    """:func:`accuracy_upper_bound` at each of ``budgets`` (the problem's own is ignored).

    The accuracies ``a_j(k)`` and the envelope segments are computed once, so a curve over
    many budgets costs little more than one bound.
    """
    base, segments, m = _segments(problem)
    return [_walk(base, segments, m, int(budget)) for budget in budgets]


def _segments(problem: AssignmentProblem) -> tuple[float, list, int]:
    """``sum_j a_j(0)`` and the envelope segments ``(slope, task, workers, gain)``, steepest
    first."""
    # Without an eligibility mask, tasks that share a column of the quality table (a
    # category) share their ranking: rank the table's columns, then give each task its own.
    # A worker whose cap is 0 takes no task: it counts as ineligible everywhere.
    working = (problem.max_tasks_per_worker > 0)[:, None]
    if problem.eligible is None:
        q, column = problem.quality_table, problem.task_column
        reliability = np.where(working, np.maximum(q, 1.0 - q), -1.0)
        n_eligible = np.full(problem.n_tasks, int(working.sum()))
    else:
        q, column = problem.quality, slice(None)
        reliability = np.where(problem.eligible & working, np.maximum(q, 1.0 - q), -1.0)
        n_eligible = (reliability >= 0).sum(axis=0)
    m = problem.n_tasks
    k_max = np.minimum(problem.max_workers_per_task, n_eligible)
    top = int(k_max.max(initial=0))
    if top > MAX_EXACT_WORKERS:
        raise ValueError(
            f"the upper bound needs exact accuracies of up to {top} workers on a task; "
            f"at most {MAX_EXACT_WORKERS} are supported"
        )
    order = np.argsort(-reliability, axis=0, kind="stable")[:top]
    ranked = np.take_along_axis(q, order, axis=0)[:, column]  # (top, m): best first
    acc = np.empty((top + 1, m))
    for k in range(top + 1):
        acc[k] = task_accuracy(ranked[:k], np.ones((k, m), bool), prior=problem.prior)
    segments = []
    for j in range(m):
        hull = _upper_hull(acc[: k_max[j] + 1, j])
        for a, b in itertools.pairwise(hull):
            gain = acc[b, j] - acc[a, j]
            if gain > 0:
                segments.append((gain / (b - a), j, b - a, gain))
    segments.sort(key=lambda s: (-s[0], s[1]))
    return float(acc[0].sum()), segments, m


def _walk(base: float, segments: list, m: int, budget: int) -> UpperBound:
    """Take the segments in order while they fit ``budget``; the next one fractionally."""
    left = budget
    k_chosen = np.zeros(m, dtype=np.int64)
    integral = base
    fractional = 0.0
    for slope, j, size, gain in segments:
        if size <= left:
            left -= size
            k_chosen[j] += size
            integral += gain
        else:
            fractional = slope * left
            break
    return UpperBound(
        value=(integral + fractional) / m, integral=integral / m, workers_per_task=k_chosen
    )
