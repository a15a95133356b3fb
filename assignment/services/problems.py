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
            "pk", "max_tasks", "active"
        )
    }
    tasks = dict(Task.objects.filter(pk__in=task_ids.tolist()).values_list("pk", "max_workers"))
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
