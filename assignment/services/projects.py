"""Projects and their data: create, import, change, delete."""

from __future__ import annotations

import copy
import dataclasses
import logging
import unicodedata
from typing import BinaryIO

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from assignment.data_files import invisible_character, open_data_file
from assignment.engine.multiclass import MAX_LABELS
from assignment.errors import (
    ProjectAlreadyExistsError,
    ProjectValidationError,
    full_clean_or_raise,
)
from assignment.importers import KINDS, ImportResult, import_data_file
from assignment.importers import _show as show_value  # quoted as import messages quote
from assignment.models import (
    Answer,
    GoldAnswer,
    GoldItem,
    Project,
    RunStatus,
    Task,
    Worker,
    default_labels,
)
from assignment.priors import label_prior_from_mapping
from assignment.selectors import pending_pair_count, rounds_counted

logger = logging.getLogger(__name__)


_MAX_LABEL_LENGTH = 100


def _clean_labels(labels: list[str]) -> list[str]:
    if not isinstance(labels, list | tuple):
        raise ProjectValidationError(f"labels must be a list of strings, got {labels!r}")
    if len(labels) > MAX_LABELS:
        raise ProjectValidationError(
            f"a project may have at most {MAX_LABELS} labels (the exact accuracy of K labels "
            f"enumerates K^k answers of k workers), got {len(labels):,}"
        )
    cleaned = []
    for number, label in enumerate(labels, start=1):
        if not isinstance(label, str) or not label.strip():
            raise ProjectValidationError(
                f"labels: every label must be a non-empty string, got {label!r}"
            )
        label = label.strip()
        unseen = invisible_character(label) or (
            "contains a line break or another control character"
            if any(unicodedata.category(char) == "Cc" for char in label)
            else ""
        )
        if unseen:
            raise ProjectValidationError(
                f"the label {label!r} {unseen}: remove it, or answers typed with the label "
                "will not match it"
            )
        if len(label) > _MAX_LABEL_LENGTH:
            raise ProjectValidationError(
                f"labels: label {number} of {len(labels)} is {len(label):,} characters long, "
                f"and a label may have at most {_MAX_LABEL_LENGTH}: {show_value(label)}"
            )
        if label in cleaned:
            raise ProjectValidationError(f"labels: the label {label!r} is given twice")
        cleaned.append(label)
    if len(cleaned) < 2:
        raise ProjectValidationError(
            f"labels: a project needs at least two labels, got {cleaned!r}"
        )
    return cleaned


def project_create(
    *,
    owner: AbstractBaseUser,
    name: str,
    description: str = "",
    labels: list[str] | None = None,
    default_prior: float | None = None,
    default_label_prior: dict[str, float] | None = None,
    default_max_workers_per_task: int | None = None,
    default_max_tasks_per_worker: int | None = None,
    default_budget: int | None = None,
) -> Project:
    """A new project of ``owner`` called ``name`` (trimmed), with its defaults.

    ``labels`` is the label set (default ``["0", "1"]``); the second label is the one whose
    probability a binary project's prior gives (``default_prior``); a project of more than two
    labels takes a distribution instead (``default_label_prior``: each label to its
    probability, :mod:`assignment.priors`). A default left None keeps the model's (prior 0.5,
    or uniform; 3 workers per task, 100 tasks per worker, a budget of as many pairs as the caps
    allow).
    Raises :class:`ProjectAlreadyExistsError` if the owner has a project of that name,
    :class:`ProjectValidationError` for invalid fields; nothing is written then.
    """
    defaults = {
        name: value
        for name, value in (
            ("default_prior", default_prior),
            ("default_label_prior", default_label_prior),
            ("default_max_workers_per_task", default_max_workers_per_task),
            ("default_max_tasks_per_worker", default_max_tasks_per_worker),
            ("default_budget", default_budget),
        )
        if value is not None
    }
    with transaction.atomic():
        project = _project_insert(owner=owner, name=name, description=description, labels=labels)
        if defaults:
            project_update(project=project, **defaults)
    return project


def _project_insert(
    *, owner: AbstractBaseUser, name: str, description: str, labels: list[str] | None
) -> Project:
    name = name.strip()
    labels = default_labels() if labels is None else _clean_labels(labels)
    if Project.objects.filter(owner=owner, name=name).exists():
        raise ProjectAlreadyExistsError(
            f"user {owner.get_username()!r} already has a project {name!r}"
        )
    project = Project(owner=owner, name=name, description=description, labels=labels)
    full_clean_or_raise(project, ProjectValidationError)
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
    rows_of_kind = _ROWS_OF_KIND.get(kind)
    with transaction.atomic():
        # One import per project at a time (PostgreSQL; SQLite serialises all writers anyway).
        locked = Project.objects.select_for_update().get(pk=project.pk)
        before = None if rows_of_kind is None else rows_of_kind(locked).count()
        result = import_data_file(project=locked, kind=kind, data=data)
        if before is None:
            return result
        return dataclasses.replace(result, added=rows_of_kind(locked).count() - before)


#: The stored rows of each kind of data file, per project (a quality file makes a new matrix).
_ROWS_OF_KIND = {
    "workers": lambda project: Worker.objects.filter(project=project),
    "tasks": lambda project: Task.objects.filter(project=project),
    "gold_items": lambda project: GoldItem.objects.filter(project=project),
    "gold_answers": lambda project: GoldAnswer.objects.filter(worker__project=project),
    "answers": lambda project: Answer.objects.filter(worker__project=project),
}


#: Project fields :func:`project_update` changes (the label set is fixed once a project exists:
#: answers and gold items are stored as labels of it).
PROJECT_UPDATABLE_FIELDS = (
    "name",
    "description",
    "default_prior",
    "default_label_prior",
    "default_max_workers_per_task",
    "default_max_tasks_per_worker",
    "default_budget",
)


def project_update(*, project: Project, **fields) -> Project:
    """Change some of :data:`PROJECT_UPDATABLE_FIELDS` of ``project`` and save it.

    Raises what :func:`project_update_check` raises, and writes nothing then.
    """
    fields = project_update_check(project=project, **fields)
    for name, value in fields.items():
        setattr(project, name, value)
    project.save(update_fields=[*fields, "updated_at"])
    logger.info("updated project %s: %s", project.pk, ", ".join(sorted(fields)))
    return project


def project_update_check(*, project: Project, **fields) -> dict:
    """The changes :func:`project_update` would make to ``project``, checked; writes nothing
    (the admin's form checks with it before it saves).

    Raises :class:`ProjectAlreadyExistsError` if the new name is taken by another project of
    the owner, :class:`ProjectValidationError` for invalid values (a prior outside (0, 1), a
    negative cap, the prior of the other kind of label set: ``default_prior`` for more than
    two labels, ``default_label_prior`` for two; a budget of 0, or below the answers already
    collected and the pairs of earlier rounds awaiting answers, which it counts).
    """
    unknown = sorted(set(fields) - set(PROJECT_UPDATABLE_FIELDS))
    if unknown:
        raise ValueError(f"cannot update {', '.join(unknown)} of a project")
    fields = dict(fields)
    if "name" in fields:
        fields["name"] = fields["name"].strip()
        taken = Project.objects.filter(owner_id=project.owner_id, name=fields["name"])
        if taken.exclude(pk=project.pk).exists():
            raise ProjectAlreadyExistsError(
                f"user {project.owner.get_username()!r} already has a project {fields['name']!r}"
            )
    if "default_prior" in fields and len(project.labels) > 2:
        raise ProjectValidationError(
            f"default_prior is P(second label) of a binary project; this project has "
            f"{len(project.labels)} labels: give default_label_prior, a distribution over them"
        )
    prior = fields.get("default_prior", 0.5)
    if isinstance(prior, bool) or not isinstance(prior, int | float) or not 0 < prior < 1:
        raise ProjectValidationError(
            f"default_prior must be a probability strictly between 0 and 1, got {prior!r}"
        )
    if "default_label_prior" in fields:
        fields["default_label_prior"] = _label_prior(project, fields["default_label_prior"])
    changed = copy.copy(project)
    for name, value in fields.items():
        setattr(changed, name, value)
    full_clean_or_raise(changed, ProjectValidationError, validate_unique=False)
    _check_budget_covers_answers(project, fields.get("default_budget"))
    return fields


def _check_budget_covers_answers(project: Project, budget: int | None) -> None:
    """Refuse a budget of 0 (no run or round could spend it) and a budget below what the
    project's rounds count as spent: the answers, the pairs of earlier rounds awaiting
    answers (:func:`~assignment.selectors.pending_pair_count`) and the budgets of rounds
    queued or computing (their pairs are not known yet; they will be pending)."""
    if budget is None:
        return
    answers = Answer.objects.filter(task__project=project).count()
    pending = pending_pair_count(project=project)
    computing = dict(
        rounds_counted(project=project)
        .filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING])
        .values_list("pk", "budget")
    )
    if budget == 0 and not answers + pending + sum(computing.values()):
        raise ProjectValidationError(
            "default_budget 0 has nothing to spend: give at least 1 pair, or none (as many as "
            "the caps allow)"
        )
    floor = answers + pending + sum(computing.values())
    if budget < floor:
        parts = [f"the {answers:,} answers already collected"]
        if pending:
            parts.append(
                f"{pending:,} pair{'s' if pending != 1 else ''} of earlier rounds awaiting answers"
            )
        if computing:
            ids = ", ".join(f"#{pk}" for pk in sorted(computing))
            parts.append(
                f"the {sum(computing.values()):,} pairs round {ids} may assign (computing now)"
            )
        raise ProjectValidationError(
            f"default_budget {budget:,} is below {' and '.join(parts)}, which the project's "
            f"rounds count as spent: give at least {floor:,} pairs, or none (as many as the "
            "caps allow)"
        )


def _label_prior(project: Project, value: dict[str, float] | None) -> list[float] | None:
    """A project's default distribution over its labels, as stored (None: uniform)."""
    if value is None:
        return None
    if len(project.labels) == 2:
        raise ProjectValidationError(
            "default_label_prior is for projects of more than two labels; a binary project's "
            "prior is default_prior, P(second label)"
        )
    try:
        return label_prior_from_mapping(value, list(project.labels))
    except ValueError as exc:
        raise ProjectValidationError(f"default_label_prior: {exc}") from None


def project_delete(*, project: Project) -> None:
    """Delete ``project`` with everything in it: data, quality matrices, runs, comparisons.

    A quality matrix that runs were computed from is deleted only with them (``RESTRICT``), as
    here. A run still computing on a worker finds its row gone and stores nothing; cancel runs
    first to stop their computations early.
    """
    project_id = project.pk
    with transaction.atomic():
        project.delete()
    logger.info("deleted project %s", project_id)
