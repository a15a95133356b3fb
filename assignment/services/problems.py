"""The engine's assignment problem of a project's quality matrix, caps and priors."""

from __future__ import annotations

import numpy as np

from assignment.engine import (
    AssignmentProblem,
)
from assignment.models import (
    Project,
    QualityMatrix,
    Task,
    Worker,
)
from assignment.priors import task_priors

#: The columns of a project's workers that its problem reads (:func:`_project_problem`), and of
#: its tasks but their prior (:func:`_task_columns`): a column added to what the problem reads
#: belongs here too, for :func:`_problem_input_rows`.
WORKER_COLUMNS = ("pk", "max_tasks", "active")
TASK_COLUMNS = ("pk", "max_workers")


def _task_columns(project: Project) -> tuple[str, ...]:
    """:data:`TASK_COLUMNS` and the prior column the problem reads for the project's labels
    (:func:`~assignment.priors.task_priors`: ``prior`` for two, ``label_prior`` for more)."""
    return (*TASK_COLUMNS, "prior" if len(project.labels) == 2 else "label_prior")


def _problem_input_rows(*, project: Project) -> tuple[list, list]:
    """The project's workers' :data:`WORKER_COLUMNS` and tasks' :func:`_task_columns`, by
    primary key: every per-worker and per-task value its problem reads (not the quality
    matrix), for a cache key that changes whenever the problem may (the round preview's)."""
    workers = Worker.objects.filter(project=project).order_by("pk").values_list(*WORKER_COLUMNS)
    tasks = Task.objects.filter(project=project).order_by("pk")
    return list(workers), list(tasks.values_list(*_task_columns(project)))


def _project_problem(
    *,
    project: Project,
    matrix: QualityMatrix,
    budget: int,
    max_workers_per_task: int,
    max_tasks_per_worker: int,
    confusion: np.ndarray | None = None,
) -> AssignmentProblem:
    """The engine problem of ``matrix`` with per-worker and per-task data.

    Quality is the matrix's :meth:`~QualityMatrix.quality_form` (the table of a matrix stored
    by category, never expanded). Workers who cannot work (inactive, or deleted since the
    matrix was made) get a per-worker cap of 0 and tasks deleted since a per-task cap of 0: the
    feasible assignments of an eligibility mask, without a workers x tasks array (the upper
    bound, which drops the per-worker caps, leaves workers with a cap of 0 out). Workers' and
    tasks' own caps and priors override the given defaults. With ``confusion`` (the matrix's
    Dawid–Skene matrices, shape (n_workers, K, K)) the problem is chosen and scored under them
    (docs/design.md#under-confusion-matrices).
    """
    worker_ids, task_ids = matrix.worker_ids, matrix.task_ids
    workers = {
        pk: (max_tasks, active)
        for pk, max_tasks, active in Worker.objects.filter(pk__in=worker_ids.tolist()).values_list(
            *WORKER_COLUMNS
        )
    }
    tasks = dict(Task.objects.filter(pk__in=task_ids.tolist()).values_list(*TASK_COLUMNS))
    usable = np.array([workers.get(pk, (None, False))[1] for pk in worker_ids.tolist()], bool)
    per_worker = np.array(
        [
            max_tasks_per_worker if workers.get(pk, (None,))[0] is None else workers[pk][0]
            for pk in worker_ids.tolist()
        ],
        dtype=np.int64,
    )
    per_worker[~usable] = 0
    per_task = np.array(
        [max_workers_per_task if tasks.get(pk) is None else tasks[pk] for pk in task_ids.tolist()],
        dtype=np.int64,
    )
    per_task[[pk not in tasks for pk in task_ids.tolist()]] = 0
    return AssignmentProblem(
        matrix.quality_form(),
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        prior=task_priors(project=project, task_ids=task_ids),
        n_labels=len(project.labels),
        confusion=confusion,
    )
