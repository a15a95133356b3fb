"""An upper bound on the expected accuracy any assignment can reach (for evaluation).

Drop the per-worker caps (a worker whose cap is 0 stays out): tasks no longer compete, and task
``j`` given ``k`` workers does best with its ``k`` most reliable eligible ones, reaching
``a_j(k)``. What is left is a multiple-choice knapsack, one ``k_j <= max_workers_per_task[j]``
per task with ``sum_j k_j <= budget``, maximising ``sum_j a_j(k_j)``. Its LP relaxation, solved
exactly by walking the upper concave envelopes of the ``a_j`` by decreasing slope (Sinha &
Zoltners 1979), is the bound; stopping before the one segment that does not fit gives an
integral solution less than ``1 / n_tasks`` below it. Workers are ranked and, for ``K > 2``
labels (the one-coin model), evaluated by their effective quality ``max(Q, 1 - (K - 1) Q)``
(:func:`effective_quality`; ``max(Q, 1 - Q)`` at ``K = 2``).

Entry points: :func:`accuracy_upper_bound`, :func:`accuracy_upper_bounds` (a curve over
budgets), :class:`UpperBound`. Why the ranking gives a bound, and when it is exact:
docs/design.md#the-upper-bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assignment.engine.accuracy import MAX_EXACT_WORKERS, _task_accuracy
from assignment.engine.multiclass import (
    MAX_EXACT_STATES,
    _exact_state_counts,
    _log_prior,
    _task_accuracy_multiclass,
)
from assignment.engine.problem import AssignmentProblem

__all__ = ["UpperBound", "accuracy_upper_bound", "accuracy_upper_bounds", "effective_quality"]


@dataclass(frozen=True)
class _Segments:
    """The envelope segments, steepest first, shape (s,) each: ``slope = gain / size``, the
    ``task``, its ``size`` in workers and its ``gain`` in accuracy."""

    slope: np.ndarray
    task: np.ndarray
    size: np.ndarray
    gain: np.ndarray


@dataclass(frozen=True)
class UpperBound:
    """``value``: the bound (mean accuracy over tasks); ``integral``: a knapsack solution's
    value below it; ``workers_per_task``: that solution's ``k_j``, shape (n_tasks,)."""

    value: float
    integral: float
    workers_per_task: np.ndarray


def effective_quality(quality, n_labels: int = 2) -> np.ndarray:
    """``max(Q, 1 - (K - 1) Q)``: the quality of the weakest ordinary worker (``Q' >= 1 / K``)
    of whom a worker of quality ``Q`` is a garbling (docs/design.md#the-upper-bound);
    ``max(Q, 1 - Q)`` for two labels. The bound ranks workers by it and, for ``K > 2``,
    evaluates them with it."""
    q = np.asarray(quality, dtype=np.float64)
    return np.maximum(q, 1.0 - (n_labels - 1) * q)


def accuracy_upper_bound(problem: AssignmentProblem) -> UpperBound:
    """The per-worker-cap-free bound of the module docstring (docs/design.md#the-upper-bound).

    Raises
    ------
    ValueError
        If a task may take more than ``MAX_EXACT_WORKERS`` workers (two labels), or its best
        workers have more than ``MAX_EXACT_STATES`` answer states (``K > 2``): its ``a_j(k)``
        would not be exact.
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
    # For two labels workers enter with their own quality (Q and 1 - Q are the same channel);
    # for K > 2 with their effective quality (docs/design.md#the-upper-bound).
    working = (problem.max_tasks_per_worker > 0)[:, None]
    binary = problem.n_labels == 2
    if problem.eligible is None:
        q, column = problem.quality_table, problem.task_column
        usable = working
    else:
        q, column = problem.quality, slice(None)
        usable = problem.eligible & working
    effective = effective_quality(q, problem.n_labels)
    reliability = np.where(usable, effective, -1.0)
    n_eligible = np.broadcast_to((reliability >= 0).sum(axis=0)[column], (problem.n_tasks,))
    m = problem.n_tasks
    k_max = np.minimum(problem.max_workers_per_task, n_eligible)
    top = int(k_max.max(initial=0))
    if binary and top > MAX_EXACT_WORKERS:
        raise ValueError(
            f"the upper bound needs exact accuracies of up to {top} workers on a task; "
            f"at most {MAX_EXACT_WORKERS} are supported"
        )
    from assignment.engine._hull import hull_segments  # (numba: not on the engine's import)
    from assignment.engine._top_rows import top_rows

    order = top_rows(np.ascontiguousarray(reliability, dtype=np.float64), top)  # best first
    ranked = np.take_along_axis(q if binary else effective, order, axis=0)[:, column]
    if binary:  # (top, m): best first; the problem's qualities, checked: the kernel
        acc = np.empty((top + 1, m))
        for k in range(top + 1):
            acc[k] = _task_accuracy(ranked[:k], np.ones((k, m), bool), problem.prior)
    else:
        acc = _multiclass_accuracies(ranked, k_max, problem)
    slope, task, size, gain = hull_segments(acc, k_max.astype(np.int64))
    order = np.lexsort((task, -slope))  # steepest first, ties to the lower task
    return float(acc[0].sum()), _Segments(slope[order], task[order], size[order], gain[order]), m


def _multiclass_accuracies(ranked: np.ndarray, k_max: np.ndarray, problem) -> np.ndarray:
    """``a_j(k)`` for ``k <= k_max[j]`` (repeated beyond: those are never read) of the ranked
    effective qualities ``ranked`` (top, m), by the exact K-class accuracy (its kernel: they
    and the prior are the problem's, checked)."""
    top, m = ranked.shape
    log_prior = _log_prior(problem.prior_distribution)
    full = np.arange(top)[:, None] < k_max[None, :]
    states = _exact_state_counts(ranked, full, problem.n_labels)
    if states.max(initial=1.0) > MAX_EXACT_STATES:
        j = int(np.argmax(states))
        raise ValueError(
            f"the upper bound needs the exact accuracy of the {int(k_max[j])} best workers on "
            f"task {j}: {states[j]:,.0f} answer states with {problem.n_labels} labels, more "
            f"than MAX_EXACT_STATES = {MAX_EXACT_STATES}"
        )
    acc = np.empty((top + 1, m))
    for k in range(top + 1):
        acc[k] = _task_accuracy_multiclass(ranked, full & (np.arange(top)[:, None] < k), log_prior)
    return acc


def _walk(base: float, segments: _Segments, m: int, budget: int) -> UpperBound:
    """Take the segments in order while they fit ``budget``; the next one fractionally."""
    fit = int(np.searchsorted(np.cumsum(segments.size), budget, side="right"))
    k_chosen = np.bincount(segments.task[:fit], weights=segments.size[:fit], minlength=m)
    # (summed in order, as the walk takes them)
    integral = float(np.cumsum(np.concatenate(([base], segments.gain[:fit])))[-1])
    fractional = 0.0
    if fit < segments.size.size:
        fractional = segments.slope[fit] * (budget - int(segments.size[:fit].sum()))
    return UpperBound(
        value=(integral + fractional) / m,
        integral=integral / m,
        workers_per_task=k_chosen.astype(np.int64),
    )
