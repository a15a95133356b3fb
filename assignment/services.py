"""Writes: every change to a project's data goes through one of these functions.

Each takes keyword-only arguments, validates, raises a :mod:`assignment.errors` domain error when
the user must correct something, and returns what it created.
"""

from __future__ import annotations

import logging
from typing import BinaryIO

import numpy as np
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Q

from assignment.data_files import open_data_file
from assignment.engine.quality import (
    DEFAULT_CATEGORY_STRENGTH,
    DEFAULT_WORKER_STRENGTH,
    estimate_quality,
)
from assignment.errors import (
    ProjectAlreadyExistsError,
    ProjectValidationError,
    QualityEstimationError,
)
from assignment.importers import KINDS, ImportResult, import_data_file
from assignment.models import (
    GoldAnswer,
    Project,
    QualityMatrix,
    QualitySource,
    Task,
    Worker,
    default_labels,
)

__all__ = ["project_create", "project_data_import", "quality_estimate"]

logger = logging.getLogger(__name__)

_MAX_LABEL_LENGTH = 100


def _clean_labels(labels: list[str]) -> list[str]:
    if not isinstance(labels, list | tuple):
        raise ProjectValidationError(f"labels must be a list of strings, got {labels!r}")
    cleaned = []
    for label in labels:
        if not isinstance(label, str) or not label.strip():
            raise ProjectValidationError(f"every label must be a non-empty string, got {label!r}")
        label = label.strip()
        if len(label) > _MAX_LABEL_LENGTH:
            raise ProjectValidationError(
                f"labels must be at most {_MAX_LABEL_LENGTH} characters long, got {label!r}"
            )
        if label in cleaned:
            raise ProjectValidationError(f"the label {label!r} is given twice")
        cleaned.append(label)
    if len(cleaned) < 2:
        raise ProjectValidationError(f"a project needs at least two labels, got {cleaned!r}")
    return cleaned


def project_create(
    *,
    owner: AbstractBaseUser,
    name: str,
    description: str = "",
    labels: list[str] | None = None,
) -> Project:
    """A new project of ``owner`` called ``name`` (trimmed).

    ``labels`` is the label set (default ``["0", "1"]``); the second label is the one whose
    probability a task's prior gives. Raises :class:`ProjectAlreadyExistsError` if the owner
    has a project of that name, :class:`ProjectValidationError` for invalid fields.
    """
    name = name.strip()
    labels = default_labels() if labels is None else _clean_labels(labels)
    if Project.objects.filter(owner=owner, name=name).exists():
        raise ProjectAlreadyExistsError(
            f"user {owner.get_username()!r} already has a project {name!r}"
        )
    project = Project(owner=owner, name=name, description=description, labels=labels)
    try:
        project.full_clean()
    except ValidationError as exc:
        problems = "; ".join(
            f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items()
        )
        raise ProjectValidationError(problems) from None
    project.save()
    logger.info("created project %s (%r) of %s", project.pk, name, owner.get_username())
    return project


def project_data_import(
    *,
    project: Project,
    kind: str,
    file: BinaryIO,
    file_name: str,
    format: str | None = None,
) -> ImportResult:
    """Import a data file of ``kind`` into ``project``, all of it or nothing.

    ``file`` is a binary stream (an open file, an upload) read once, row by row; ``file_name``
    names it in messages and, unless ``format`` ("csv" / "json") is given, its suffix says the
    format. One transaction: the first problem raises :class:`ImportValidationError` (file,
    line, column, message) and nothing is written. Files larger than
    ``settings.TVCS_MAX_IMPORT_BYTES`` are rejected. Rows whose id (or pair of ids) exists are
    updated, so importing the same file again changes nothing. See README, "Data files".
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    data = open_data_file(
        file=file, name=file_name, max_bytes=settings.TVCS_MAX_IMPORT_BYTES, format=format
    )
    with transaction.atomic():
        # One import per project at a time (PostgreSQL; SQLite serialises all writers anyway).
        locked = Project.objects.select_for_update().get(pk=project.pk)
        return import_data_file(project=locked, kind=kind, data=data)


def quality_estimate(
    *,
    project: Project,
    worker_strength: float | str = DEFAULT_WORKER_STRENGTH,
    category_strength: float | str = DEFAULT_CATEGORY_STRENGTH,
) -> QualityMatrix:
    """Estimate the project's workers × tasks quality matrix from its gold answers and store it.

    A gold answer is correct when it equals its item's true label. Every worker and every task
    of the project gets a row / column (in primary-key order); the estimate shrinks each
    worker's accuracy on a category towards its overall accuracy and that towards the population
    (DESIGN.md §5, :func:`assignment.engine.quality.estimate_quality`, whose strengths the
    arguments are: numbers or ``"auto"``). The stored matrix has ``source=estimated``,
    ``gold_counts`` (each worker's number of gold answers) and ``details`` (the strengths used,
    the population accuracy, the numbers of gold answers and categories).

    Raises :class:`QualityEstimationError` if the project has no workers, no tasks or no gold
    answers.
    """
    workers = list(
        Worker.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)
    )
    tasks = list(Task.objects.filter(project=project).order_by("pk").values_list("pk", "category"))
    if not workers or not tasks:
        missing = "workers" if not workers else "tasks"
        raise QualityEstimationError(
            f"project {project.name!r} has no {missing}; import them first "
            f"(python manage.py import_data --kind {missing})"
        )
    # Gold answers counted per (worker, category) by the database: one row per cell, not per
    # answer, then expanded to the per-answer arrays the engine takes (bytes per answer).
    cells = list(
        GoldAnswer.objects.filter(worker__project=project, item__project=project)
        .values("worker_id", "item__category")
        .annotate(answers=Count("pk"), correct=Count("pk", filter=Q(answer=F("item__true_label"))))
        .order_by()
        .values_list("worker_id", "item__category", "answers", "correct")
    )
    if not cells:
        raise QualityEstimationError(
            f"project {project.name!r} has no gold answers; import gold_items and gold_answers "
            "first, or import a quality file"
        )
    row_of = {pk: i for i, pk in enumerate(workers)}
    task_categories = [category for _, category in tasks]
    categories = sorted(set(task_categories) | {category for _, category, _, _ in cells})
    category_index = {category: c for c, category in enumerate(categories)}

    cell_worker = np.array([row_of[worker] for worker, _, _, _ in cells], dtype=np.int64)
    cell_category = np.array([category_index[cat] for _, cat, _, _ in cells], dtype=np.int64)
    answered = np.array([n for _, _, n, _ in cells], dtype=np.int64)
    correct = np.array([x for _, _, _, x in cells], dtype=np.int64)
    # Each cell becomes its correct answers, then its wrong ones.
    repeats = np.stack([correct, answered - correct], axis=1).ravel()
    estimate = estimate_quality(
        worker_index=np.repeat(np.repeat(cell_worker, 2), repeats),
        item_category=np.repeat(np.repeat(cell_category, 2), repeats),
        correct=np.repeat(np.tile([True, False], len(cells)), repeats),
        n_workers=len(workers),
        task_categories=[category_index[category] for category in task_categories],
        n_categories=len(categories),
        worker_strength=worker_strength,
        category_strength=category_strength,
    )
    matrix = QualityMatrix(
        project=project,
        source=QualitySource.ESTIMATED,
        details={
            "worker_strength": estimate.strengths[0],
            "category_strength": estimate.strengths[1],
            "population_accuracy": estimate.population_accuracy,
            "gold_answers": int(answered.sum()),
            "categories": len(categories),
        },
    )
    matrix.set_arrays(
        values=estimate.matrix,
        worker_ids=workers,
        task_ids=[pk for pk, _ in tasks],
        gold_counts=estimate.gold_counts,
    )
    matrix.save()
    logger.info(
        "estimated quality matrix %s of project %s: %d x %d from %d gold answers",
        matrix.pk,
        project.pk,
        len(workers),
        len(tasks),
        int(answered.sum()),
    )
    return matrix
