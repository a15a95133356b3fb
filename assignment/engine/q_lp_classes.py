"""The q-lp baseline's LP by task classes: one variable per worker and class of like tasks.

Two tasks are *alike* when every worker has the same quality on both (the same column of the
quality table: a category, or equal columns of a dense matrix) and they have the same cap, and
no eligibility mask tells them apart. The LP of :mod:`~assignment.engine.q_lp` (Ho et al.,
2013),

    max sum_ij w_ij x_ij   s.t.   sum_i w_ij x_ij <= C,   sum_i x_ij <= s_j,
                                  sum_j x_ij <= t_i,   sum_ij x_ij <= B,   0 <= x <= 1,

is then unchanged by any permutation of a class's tasks, so the average of an optimal ``x``
over those permutations is optimal too: some optimum gives every task of a class ``c`` the
same value ``z_ic`` from worker ``i``. With ``m_c`` tasks in class ``c`` and weight ``w_ic``
the LP over ``z`` (shape: ``n`` workers x ``k`` classes) is

    max sum_ic m_c w_ic z_ic   s.t.   sum_i w_ic z_ic <= C,   sum_i z_ic <= s_c,
                                      sum_c m_c z_ic <= t_i,   sum_ic m_c z_ic <= B,
                                      0 <= z <= 1,

whose optimum is the pair LP's (``n k`` variables: 40,000 at 2,000 workers x 200,000 tasks in
20 categories, against the 400 million pairs column generation prices).

Rounding: worker ``i`` takes ``y_ic = floor(m_c z_ic)`` tasks of class ``c`` (a vertex of the
LP has few fractional values; the floors keep every cap and the budget), dealt out in turn
(McNaughton's wrap-around rule): the class's workers, heaviest first, each repeated ``y_ic``
times, fill its tasks in index order, round after round. A worker's ``y_ic <= m_c`` slots are
consecutive, so he gets distinct tasks; every task gets ``floor`` or ``ceil`` of
``sum_i y_ic / m_c <= s_c`` workers, so every task cap holds, and each round of the deal gives
every task one worker of about the same weight, so the tasks' credits stay close to their mean.

The argument and when the engine takes this form: docs/design.md#q-lp-by-task-classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from assignment.engine.problem import AssignmentProblem
from assignment.engine.q_lp import _equal_columns, _highs, q_lp_weights

__all__ = [
    "CLASS_LP_MAX_VARIABLES",
    "MIN_TASKS_PER_CLASS",
    "ClassLPSolution",
    "TaskClasses",
    "solve_class_lp",
    "task_classes",
]

#: The class LP is taken when it has at most this many variables (workers x classes), 500,000
#: at 10,000 workers x 50 categories, ...
CLASS_LP_MAX_VARIABLES = 1_000_000
#: ... and its classes hold at least this many tasks on average: HiGHS takes some 230 bytes
#: per variable (measured, 1,000 workers x 400 categories), column generation 12-200 bytes
#: per pair (docs/benchmarks/budgets.md), so fewer tasks per class would not pay.
MIN_TASKS_PER_CLASS = 16
#: ``m_c z_ic`` this close below an integer counts as that integer (HiGHS's tolerances).
ROUNDING_SLACK = 1e-6


@dataclass(frozen=True)
class TaskClasses:
    """The tasks grouped into classes of alike tasks.

    Attributes
    ----------
    of_task : ndarray of int64, shape (m,)
        Each task's class, numbered by first task (class 0 holds task 0).
    column : ndarray of int64, shape (k,)
        A quality-table column of each class.
    cap : ndarray of int64, shape (k,)
        The cap ``s_c`` of the class's tasks.
    size : ndarray of int64, shape (k,)
        ``m_c``, the number of tasks in the class.
    """

    of_task: np.ndarray
    column: np.ndarray
    cap: np.ndarray
    size: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(self.size.shape[0])


def task_classes(problem: AssignmentProblem) -> TaskClasses | None:
    """The classes of alike tasks, or None where the class LP does not apply or pay: an
    eligibility mask, fewer than ``MIN_TASKS_PER_CLASS`` tasks per class on average, or more
    than ``CLASS_LP_MAX_VARIABLES`` variables."""
    n, m = problem.shape
    if problem.eligible is not None or m == 0:
        return None
    table = problem.quality_table
    group, _ = _equal_columns(table)
    caps = problem.max_workers_per_task.astype(np.int64)
    key = group[problem.task_column].astype(np.int64) * (int(caps.max()) + 1) + caps
    _, first, raw = np.unique(key, return_index=True, return_inverse=True)
    k = first.size
    if k * MIN_TASKS_PER_CLASS > m or n * k > CLASS_LP_MAX_VARIABLES:
        return None
    rank = np.empty(k, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(k)  # classes in order of first task
    of_task = rank[raw.reshape(-1)]
    first_task = np.sort(first)
    return TaskClasses(
        of_task=of_task,
        column=problem.task_column[first_task].astype(np.int64),
        cap=caps[first_task],
        size=np.bincount(of_task, minlength=k).astype(np.int64),
    )


@dataclass(frozen=True)
class ClassLPSolution:
    """The class LP's optimum, its rounding, and how it went.

    Attributes
    ----------
    workers, tasks : ndarray of int64, shape (p,)
        The rounded assignment's pairs.
    objective : float
        The LP optimum ``sum_ic m_c w_ic z_ic``: the pair LP's.
    n_variables : int
        The LP's variables (usable worker, class pairs).
    fractional : int
        Variables whose ``m_c z_ic`` is not an integer (their fractions are dropped).
    message : str
        HiGHS's last message.
    """

    workers: np.ndarray
    tasks: np.ndarray
    objective: float
    n_variables: int
    fractional: int
    message: str


def solve_class_lp(
    problem: AssignmentProblem, classes: TaskClasses, credit_cap: float
) -> ClassLPSolution:
    """Solve the LP over (worker, class) and round it (module docstring).

    Parameters
    ----------
    problem : AssignmentProblem
        Without an eligibility mask.
    classes : TaskClasses
        :func:`task_classes` of ``problem``.
    credit_cap : float
        ``C``.
    """
    weights = q_lp_weights(problem.quality_table[:, classes.column], problem.n_labels)  # (n, k)
    workers, cls = np.nonzero(weights > 0)
    if workers.size == 0 or problem.budget == 0:
        empty = np.zeros(0, np.int64)
        return ClassLPSolution(empty, empty, 0.0, 0, 0, "nothing to assign")
    w = weights[workers, cls]
    z, objective, message = _class_lp(problem, classes, workers, cls, w, credit_cap)
    slots = classes.size[cls] * z
    counts = np.floor(slots + ROUNDING_SLACK).astype(np.int64)
    fractional = int(np.sum(np.abs(slots - np.round(slots)) > ROUNDING_SLACK))
    pair_workers, pair_tasks = _deal(classes, workers, cls, w, counts)
    return ClassLPSolution(pair_workers, pair_tasks, objective, w.size, fractional, message)


def _class_lp(problem, classes: TaskClasses, workers, cls, w, credit_cap):
    """``(z, objective, message)``: HiGHS on the class LP; its rows, in order, are the
    classes' credits and caps, the workers' caps and the budget."""
    n, k = problem.n_workers, classes.n_classes
    size = classes.size[cls].astype(np.float64)
    var = np.arange(w.size)
    rows = np.concatenate([cls, k + cls, 2 * k + workers, np.full(w.size, 2 * k + n)])
    values = np.concatenate([w, np.ones(w.size), size, size])
    A = sp.csc_matrix((values, (rows, np.tile(var, 4))), shape=(2 * k + n + 1, w.size))
    b = np.concatenate(
        [
            np.full(k, credit_cap),
            classes.cap.astype(np.float64),
            problem.max_tasks_per_worker.astype(np.float64),
            [float(problem.budget)],
        ]
    )
    z, _, objective, message = _highs(size * w, A, b)
    return z, objective, message


def _deal(classes: TaskClasses, workers, cls, w, counts):
    """The pairs of McNaughton's wrap-around deal: per class, its workers heaviest first
    (ties to the lower index), each ``counts`` times, over its tasks in index order."""
    order = np.lexsort((workers, -w, cls))
    workers, cls, counts = workers[order], cls[order], counts[order]
    keep = counts > 0
    workers, cls, counts = workers[keep], cls[keep], counts[keep]
    slot_worker = np.repeat(workers, counts)
    slot_class = np.repeat(cls, counts)
    per_class = np.bincount(slot_class, minlength=classes.n_classes)
    start = np.cumsum(per_class) - per_class
    slot = np.arange(slot_worker.size) - start[slot_class]  # position within its class
    tasks_by_class = np.argsort(classes.of_task, kind="stable")
    class_start = np.cumsum(classes.size) - classes.size
    task = tasks_by_class[class_start[slot_class] + slot % classes.size[slot_class]]
    return slot_worker, task.astype(np.int64)
