"""Helpers of the app's tests: projects (from text imports, or with random quality), runs
computed in-process and their answers, database snapshots."""

from __future__ import annotations

import io

import numpy as np
from django.contrib.auth import get_user_model

from assignment import services
from assignment.importers import ImportResult
from assignment.models import (
    Answer,
    AssignmentRun,
    GoldAnswer,
    GoldItem,
    Project,
    QualityMatrix,
    QualitySource,
    RunStatus,
    Task,
    Worker,
)
from assignment.services import project_create, project_data_import

WORKERS_CSV = "worker_id,name,max_tasks\nw1,Ann,10\nw2,Bob,\nw3,,5\n"
TASKS_CSV = (
    "task_id,category,max_workers,prior,payload\n"
    't1,birds,3,0.3,"{""url"": ""https://example.org/1.jpg""}"\n'
    "t2,birds,,,\n"
    "t3,cars,2,0.5,\n"
)
GOLD_ITEMS_CSV = "item_id,category,true_label\ng1,birds,1\ng2,birds,0\ng3,cars,1\n"
GOLD_ANSWERS_CSV = (
    "worker_id,item_id,answer\nw1,g1,1\nw1,g2,0\nw1,g3,1\nw2,g1,0\nw2,g3,1\nw3,g2,1\n"
)
ANSWERS_CSV = "worker_id,task_id,answer\nw1,t1,1\nw2,t1,0\nw2,t2,1\nw3,t3,0\n"
QUALITY_BY_TASK_CSV = "worker_id,task_id,quality\n" + "".join(
    f"w{i},t{j},{0.5 + 0.1 * i + 0.01 * j:.2f}\n" for i in (1, 2, 3) for j in (1, 2, 3)
)
QUALITY_BY_CATEGORY_CSV = "worker_id,category,quality\n" + "".join(
    f"w{i},{category},{0.6 + 0.1 * i - 0.05 * c:.2f}\n"
    for i in (1, 2, 3)
    for c, category in enumerate(("birds", "cars"))
)

#: A complete project, in the order the kinds must be imported.
ALL_CSV = {
    "workers": WORKERS_CSV,
    "tasks": TASKS_CSV,
    "gold_items": GOLD_ITEMS_CSV,
    "gold_answers": GOLD_ANSWERS_CSV,
    "answers": ANSWERS_CSV,
    "quality": QUALITY_BY_TASK_CSV,
}


def make_project(name: str = "demo", username: str = "owner", **fields) -> Project:
    user_model = get_user_model()
    owner = user_model.objects.filter(username=username).first()
    if owner is None:
        owner = user_model.objects.create_user(username, password="x")
    return project_create(owner=owner, name=name, **fields)


def project_with_random_quality(
    *,
    n_workers: int,
    n_tasks: int,
    max_tasks_per_worker: int,
    categories: int = 1,
    name: str = "p",
    seed: int = 0,
    quality: tuple[float, float] = (0.5, 0.9),
    **defaults,
) -> Project:
    """User "pm"'s project ``name``: ``n_workers`` workers, ``n_tasks`` tasks in ``categories``
    categories (task ``j`` in ``c{j % categories}``, or "c"), 3 workers per task and
    ``max_tasks_per_worker`` tasks per worker by default (and any other project ``defaults``,
    e.g. ``default_budget``), and an uploaded quality matrix drawn from U[``quality``] with
    ``seed``."""
    owner = get_user_model().objects.create_user("pm", password="x")
    project = Project.objects.create(
        owner=owner,
        name=name,
        default_max_workers_per_task=3,
        default_max_tasks_per_worker=max_tasks_per_worker,
        **defaults,
    )
    rng = np.random.default_rng(seed)
    workers = [
        Worker.objects.create(project=project, external_id=f"w{i}") for i in range(n_workers)
    ]
    tasks = [
        Task.objects.create(
            project=project,
            external_id=f"t{j}",
            category=f"c{j % categories}" if categories > 1 else "c",
        )
        for j in range(n_tasks)
    ]
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
    matrix.set_arrays(
        values=rng.uniform(*quality, (n_workers, n_tasks)),
        worker_ids=[w.pk for w in workers],
        task_ids=[t.pk for t in tasks],
        task_categories=[t.category for t in tasks],
    )
    matrix.save()
    return project


def project_for_rounds(*, name: str = "rounds") -> Project:
    """8 workers, 20 tasks in one category, quality from U[0.55, 0.95] (seed 1), up to 6 tasks
    per worker and 3 workers per task, and a default budget (40) and prior (0.4) for rounds to
    take (:func:`project_with_random_quality`)."""
    return project_with_random_quality(
        n_workers=8,
        n_tasks=20,
        max_tasks_per_worker=6,
        name=name,
        seed=1,
        quality=(0.55, 0.95),
        default_budget=40,
        default_prior=0.4,
    )


def queued_round(project: Project, *, method: str = "greedy", **options) -> AssignmentRun:
    """A next round of ``project`` by ``method`` with ``options`` (``run_create``'s), queued
    without a broker: compute it with :func:`executed`."""
    return services.run_create(
        project=project, method=method, next_round=True, enqueue=False, **options
    )


def executed(run: AssignmentRun) -> AssignmentRun:
    """``run`` claimed and computed in this process; it must succeed."""
    assert services.run_claim(run_id=run.pk)
    run = services.run_execute(run_id=run.pk)
    assert run.status == RunStatus.SUCCEEDED, run.error
    return run


def answer_every_pair(run: AssignmentRun, *, seed: int = 0) -> None:
    """An answer for every pair of ``run``, right with the pair's quality (the truth: the
    second label on every task), drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    matrix = run.quality_matrix
    labels = run.project.labels
    for row, column in run.pairs.tolist():
        right = rng.random() < matrix.values[row, column]
        Answer.objects.create(
            worker_id=int(matrix.worker_ids[row]),
            task_id=int(matrix.task_ids[column]),
            label=labels[1 if right else 0],
        )


def project_nearly_settled(*, answers_per_task: int = 2) -> Project:
    """:func:`project_with_random_quality` of 6 workers of quality U[0.99, 0.995] and 10 tasks
    (3 workers a task, a default budget of 40) whose every task has ``answers_per_task``
    answers of its second label, by workers ``w0``, ``w1``, …: two agreeing answers outweigh
    any one answer more, so no pair a next round may assign changes a vote."""
    project = project_with_random_quality(
        n_workers=6,
        n_tasks=10,
        max_tasks_per_worker=10,
        name="settled",
        quality=(0.99, 0.995),
        default_budget=40,
    )
    workers = list(project.workers.order_by("pk")[:answers_per_task])
    for task in project.tasks.all():
        for worker in workers:
            Answer.objects.create(worker=worker, task=task, label=project.labels[1])
    return project


def project_with_gold_and_answers(
    owner,
    name: str,
    *,
    n_workers: int,
    n_tasks: int,
    categories: tuple[str, str],
    ids: tuple[str, str, str] = ("w", "t", "g"),
    second_answer_task: int = 0,
) -> Project:
    """``owner``'s project ``name``: ``n_workers`` workers (the last one inactive), ``n_tasks``
    tasks (task ``j`` in ``categories[j % 2]``), 2 gold items of ``categories[0]`` whose true
    label is "1", 3 gold answers (worker 0 on both items, worker 1 on the first) and 2 answers
    (worker 0 says "1" to task 0, worker 1 says "0" to task ``second_answer_task``). External
    ids are the ``ids`` prefixes of workers, tasks and gold items followed by their index."""
    worker_id, task_id, gold_id = ids
    project = Project.objects.create(owner=owner, name=name)
    workers = [
        Worker.objects.create(
            project=project, external_id=f"{worker_id}{i}", active=i != n_workers - 1
        )
        for i in range(n_workers)
    ]
    tasks = [
        Task.objects.create(
            project=project, external_id=f"{task_id}{j}", category=categories[j % 2]
        )
        for j in range(n_tasks)
    ]
    items = [
        GoldItem.objects.create(
            project=project, external_id=f"{gold_id}{k}", category=categories[0], true_label="1"
        )
        for k in range(2)
    ]
    GoldAnswer.objects.create(worker=workers[0], item=items[0], answer="1")
    GoldAnswer.objects.create(worker=workers[0], item=items[1], answer="0")
    GoldAnswer.objects.create(worker=workers[1], item=items[0], answer="1")
    Answer.objects.create(worker=workers[0], task=tasks[0], label="1")
    Answer.objects.create(worker=workers[1], task=tasks[second_answer_task], label="0")
    return project


def import_text(
    project: Project, kind: str, content: str | bytes, name: str | None = None
) -> ImportResult:
    """Import ``content`` (str: UTF-8) as a ``kind`` file called ``name`` (default kind.csv)."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    return project_data_import(
        project=project,
        kind=kind,
        file=io.BytesIO(data),
        file_name=name or f"{kind}.csv",
    )


def import_all(project: Project, files: dict[str, str] = ALL_CSV) -> None:
    for kind, content in files.items():
        import_text(project, kind, content)


def project_snapshot(project: Project) -> dict:
    """Everything imported into ``project``, by external ids (comparable across projects)."""
    matrices = []
    for matrix in QualityMatrix.objects.filter(project=project).order_by("pk"):
        workers = dict(Worker.objects.filter(project=project).values_list("pk", "external_id"))
        tasks = dict(Task.objects.filter(project=project).values_list("pk", "external_id"))
        values = matrix.values
        matrices.append(
            (
                matrix.source,
                sorted(
                    (workers[int(w)], tasks[int(t)], float(values[i, j]))
                    for i, w in enumerate(matrix.worker_ids)
                    for j, t in enumerate(matrix.task_ids)
                ),
            )
        )
    return {
        "workers": sorted(
            Worker.objects.filter(project=project).values_list(
                "external_id", "name", "max_tasks", "active"
            )
        ),
        "tasks": sorted(
            (external_id, category, max_workers, prior, sorted(payload.items()))
            for external_id, category, max_workers, prior, payload in Task.objects.filter(
                project=project
            ).values_list("external_id", "category", "max_workers", "prior", "payload")
        ),
        "gold_items": sorted(
            GoldItem.objects.filter(project=project).values_list(
                "external_id", "category", "true_label"
            )
        ),
        "gold_answers": sorted(
            GoldAnswer.objects.filter(worker__project=project).values_list(
                "worker__external_id", "item__external_id", "answer"
            )
        ),
        "answers": sorted(
            Answer.objects.filter(worker__project=project).values_list(
                "worker__external_id", "task__external_id", "label"
            )
        ),
        "quality": matrices,
    }


def row_counts() -> dict[str, int]:
    """Rows of every table the imports write, over all projects."""
    return {
        model.__name__: model.objects.count()
        for model in (Project, Worker, Task, GoldItem, GoldAnswer, Answer, QualityMatrix)
    }
