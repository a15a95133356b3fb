"""Writes: every change to a project's data goes through one of these functions.

Each takes keyword-only arguments, validates, raises a :mod:`assignment.errors` domain error when
the user must correct something, and returns what it created.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import secrets
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import BinaryIO

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone
from rest_framework.authtoken.models import Token

from assignment.answers import answers_in_hand
from assignment.data_files import open_data_file
from assignment.engine import (
    AssignmentProblem,
    NextRound,
    accuracy_upper_bounds,
    check_options,
    estimate_from_answers,
    solve,
)
from assignment.engine import rounds as engine_rounds
from assignment.engine.answer_quality import MODELS
from assignment.engine.distributions import assignment_distributions
from assignment.engine.quality import (
    DEFAULT_CATEGORY_STRENGTH,
    DEFAULT_WORKER_STRENGTH,
    estimate_quality,
)
from assignment.errors import (
    AnswersError,
    ProjectAlreadyExistsError,
    ProjectValidationError,
    QualityEstimationError,
    RunLimitError,
    RunStateError,
    RunValidationError,
)
from assignment.importers import KINDS, ImportResult, import_data_file
from assignment.models import (
    Answer,
    AssignmentRun,
    Comparison,
    EstimateSource,
    GoldAnswer,
    GoldItem,
    Method,
    Project,
    QualityMatrix,
    QualitySource,
    RunStatus,
    Task,
    Worker,
    default_labels,
)
from assignment.selectors import (
    api_token_expiry,
    run_readiness,
)

__all__ = [
    "demo_project_create",
    "project_create",
    "project_data_import",
    "quality_estimate",
    "run_cancel",
    "run_claim",
    "run_create",
    "run_execute",
    "run_fail",
    "runs_recover_stale",
]

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
    default_prior: float | None = None,
    default_max_workers_per_task: int | None = None,
    default_max_tasks_per_worker: int | None = None,
    default_budget: int | None = None,
) -> Project:
    """A new project of ``owner`` called ``name`` (trimmed), with its defaults.

    ``labels`` is the label set (default ``["0", "1"]``); the second label is the one whose
    probability a task's prior gives. A default left None keeps the model's (prior 0.5, 3
    workers per task, 100 tasks per worker, a budget of as many pairs as the caps allow).
    Raises :class:`ProjectAlreadyExistsError` if the owner has a project of that name,
    :class:`ProjectValidationError` for invalid fields; nothing is written then.
    """
    defaults = {
        name: value
        for name, value in (
            ("default_prior", default_prior),
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


#: At most this many EM iterations for an estimate from answers; one that stops there is
#: stored with ``converged: false`` in its details (and a warning in the log), not refused.
EM_MAX_ITERATIONS = 100


def quality_estimate(
    *,
    project: Project,
    source: str = EstimateSource.GOLD,
    model: str | None = None,
    worker_strength: float | str = DEFAULT_WORKER_STRENGTH,
    category_strength: float | str = DEFAULT_CATEGORY_STRENGTH,
    max_iterations: int = EM_MAX_ITERATIONS,
) -> QualityMatrix:
    """Estimate the project's workers × tasks quality matrix and store it.

    ``source`` (:class:`~assignment.models.EstimateSource`) says what it learns from:

    * ``"gold"`` (default): the gold answers, counted. A gold answer is correct when it equals
      its item's true label; each worker's accuracy on a category is shrunk towards its overall
      accuracy and that towards the population (DESIGN.md §5,
      :func:`assignment.engine.quality.estimate_quality`, whose strengths the arguments are:
      numbers or ``"auto"``). Stored with ``source=estimated`` and ``gold_counts``.
    * ``"answers"``: the collected answers alone, by EM (:func:`_quality_by_em`), each task's
      true label a latent variable. Stored with ``source=from_answers``.
    * ``"both"``: the collected answers and the gold answers by EM, each gold item an extra item
      whose truth is known (clamped): workers' gold answers count as evidence with certainty,
      the rest in expectation. Stored with ``source=gold_and_answers`` and ``gold_counts``.

    ``model`` is the EM's worker model, one of :data:`assignment.engine.answer_quality.MODELS`
    (default ``"one-coin"``); giving one for ``"gold"`` is an error. EM takes numeric strengths
    only (not ``"auto"``) and at most ``max_iterations`` iterations; an estimate that has not
    converged by then is stored all the same, ``converged: false`` in its details, and logged as
    a warning.

    Every worker and every task of the project gets a row / column (in primary-key order); the
    matrix is stored by category (:meth:`QualityMatrix.set_by_category`): the worker x category
    table and each task's category, never the dense workers x tasks matrix. ``details`` says how
    it was made (strengths, population accuracy, counts; for EM also the model, iterations,
    convergence and log-likelihood).

    Raises :class:`QualityEstimationError` if the project has no workers or no tasks, if the
    source has no data (no gold answers; no collected answers), if an answer or a gold item has
    a label outside the project's label set, or for a model or ``"auto"`` strength the source
    does not take.
    """
    if source not in EstimateSource.values:
        raise ValueError(f"source must be one of {EstimateSource.values}, got {source!r}")
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
    if source == EstimateSource.GOLD:
        if model is not None:
            raise QualityEstimationError(
                f"model {model!r} is the worker model of an estimate from answers by EM "
                "(source 'answers' or 'both'); an estimate from gold answers counts them"
            )
        return _quality_from_gold(
            project=project,
            workers=workers,
            tasks=tasks,
            worker_strength=worker_strength,
            category_strength=category_strength,
        )
    return _quality_by_em(
        project=project,
        workers=workers,
        tasks=tasks,
        use_gold=source == EstimateSource.BOTH,
        model=MODELS[0] if model is None else model,
        worker_strength=worker_strength,
        category_strength=category_strength,
        max_iterations=max_iterations,
    )


def _quality_from_gold(
    *,
    project: Project,
    workers: list[int],
    tasks: list[tuple[int, str]],
    worker_strength: float | str,
    category_strength: float | str,
) -> QualityMatrix:
    """The estimate of :func:`quality_estimate` from gold answers, counted."""
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
            + (
                ", or estimate from the collected answers (source 'answers')"
                if Answer.objects.filter(worker__project=project).exists()
                else ""
            )
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
    matrix.set_by_category(
        table=estimate.by_category,
        table_categories=categories,
        worker_ids=workers,
        task_ids=[pk for pk, _ in tasks],
        task_categories=task_categories,
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


def _quality_by_em(
    *,
    project: Project,
    workers: list[int],
    tasks: list[tuple[int, str]],
    use_gold: bool,
    model: str,
    worker_strength: float | str,
    category_strength: float | str,
    max_iterations: int,
) -> QualityMatrix:
    """The estimate of :func:`quality_estimate` from collected answers (and gold) by EM.

    The items of the EM are the project's tasks (``0 .. m-1``, in primary-key order) and, with
    ``use_gold``, after them the gold items that have answers (``m .. m+g-1``), each with its
    category and its true label as ``gold_task_truth`` (``-1`` for the tasks): the engine clamps
    a known item's posterior to its truth, so a worker's gold answers count as certainly right
    or wrong and its other answers in expectation, in one fit of
    :func:`~assignment.engine.answer_quality.estimate_from_answers`. Gold items nobody answered
    are left out: they say nothing about a worker and would only pull the learnt class prior
    towards the gold set's mix of labels. Answers are mapped to label indices in the project's
    label set (``K = len(project.labels)``).
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    source = "both" if use_gold else "answers"
    for name, value in (
        ("worker_strength", worker_strength),
        ("category_strength", category_strength),
    ):
        if value == "auto":
            raise QualityEstimationError(
                f"{name} 'auto' is fitted only for an estimate from gold answers (source "
                f"'gold'); give a number for source {source!r}"
            )
    labels = list(project.labels)
    answers = Answer.objects.filter(worker__project=project, task__project=project)
    worker_pk, task_pk, label = _labelled_answers(
        project=project, answers=answers, item="task", label_field="label", labels=labels
    )
    if not worker_pk.size:
        raise QualityEstimationError(
            f"project {project.name!r} has no collected answers; upload answers (python "
            "manage.py import_data --kind answers) or estimate from gold (source 'gold')"
        )
    worker_pks = np.asarray(workers, dtype=np.int64)
    task_pks = np.asarray([pk for pk, _ in tasks], dtype=np.int64)
    task_categories = [category for _, category in tasks]
    item_categories = list(task_categories)
    worker_index = np.searchsorted(worker_pks, worker_pk)
    item_index = np.searchsorted(task_pks, task_pk)
    truth = np.full(len(tasks), -1, dtype=np.int64)
    gold_counts = None
    n_gold_answers = 0
    if use_gold:
        gold_worker, gold_item, gold_label = _labelled_answers(
            project=project,
            answers=GoldAnswer.objects.filter(worker__project=project, item__project=project),
            item="item",
            label_field="answer",
            labels=labels,
        )
        if not gold_worker.size:
            raise QualityEstimationError(
                f"project {project.name!r} has no gold answers; import gold_items and "
                "gold_answers first, or estimate from the collected answers alone (source "
                "'answers')"
            )
        gold_pks, gold_categories, gold_truth = _gold_items(
            project=project, item_pks=np.unique(gold_item), labels=labels
        )
        gold_index = np.searchsorted(worker_pks, gold_worker)
        worker_index = np.concatenate([worker_index, gold_index])
        item_index = np.concatenate([item_index, len(tasks) + np.searchsorted(gold_pks, gold_item)])
        label = np.concatenate([label, gold_label])
        item_categories += gold_categories
        truth = np.concatenate([truth, gold_truth])
        gold_counts = np.bincount(gold_index, minlength=len(workers))
        n_gold_answers = int(gold_worker.size)
    categories = sorted(set(item_categories))
    category_index = {category: c for c, category in enumerate(categories)}
    estimate = estimate_from_answers(
        worker_index=worker_index,
        task_index=item_index,
        label=label,
        n_workers=len(workers),
        n_tasks=len(item_categories),
        n_labels=len(labels),
        model=model,
        gold_task_truth=truth,
        task_categories=[category_index[category] for category in item_categories],
        n_categories=len(categories),
        worker_strength=worker_strength,
        category_strength=category_strength,
        max_iterations=max_iterations,
    )
    n_answers = int(worker_pk.size)
    matrix = QualityMatrix(
        project=project,
        source=QualitySource.GOLD_AND_ANSWERS if use_gold else QualitySource.FROM_ANSWERS,
        details={
            "model": estimate.model,
            "iterations": estimate.iterations,
            "converged": estimate.converged,
            "log_likelihood": estimate.log_likelihood,
            "n_answers": n_answers,
            "n_gold_answers": n_gold_answers,
            "labels": len(labels),
            "population_accuracy": estimate.population_accuracy,
            "worker_strength": estimate.strengths[0],
            "category_strength": estimate.strengths[1],
            "categories": len(categories),
            "workers_without_answers": int(np.sum(estimate.answer_counts == 0)),
        },
    )
    matrix.set_by_category(
        table=estimate.by_category,
        table_categories=categories,
        worker_ids=workers,
        task_ids=task_pks,
        task_categories=task_categories,
        gold_counts=gold_counts,
    )
    matrix.save()
    if not estimate.converged:
        logger.warning(
            "quality matrix %s of project %s: EM (%s) did not converge in %d iterations; "
            "stored with converged=false",
            matrix.pk,
            project.pk,
            model,
            estimate.iterations,
        )
    logger.info(
        "estimated quality matrix %s of project %s by EM (%s): %d x %d from %d answers and %d "
        "gold answers, %d iterations",
        matrix.pk,
        project.pk,
        model,
        len(workers),
        len(tasks),
        n_answers,
        n_gold_answers,
        estimate.iterations,
    )
    return matrix


def _labelled_answers(
    *, project: Project, answers, item: str, label_field: str, labels: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``answers`` (a queryset of Answer or GoldAnswer) as three int64 arrays: the worker's
    primary key, the ``item``'s (task or gold item) and the label's index in ``labels``.

    Raises :class:`QualityEstimationError` naming the first answer (worker, item, label) whose
    label is not in the set.
    """
    rows = list(answers.order_by("pk").values_list("worker_id", f"{item}_id", label_field))
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    worker_pk, item_pk, given = zip(*rows, strict=True)
    index_of = {name: k for k, name in enumerate(labels)}
    label = np.fromiter((index_of.get(name, -1) for name in given), np.int64, len(given))
    unknown = np.flatnonzero(label < 0)
    if unknown.size:
        at = int(unknown[0])
        worker, thing = (
            answers.filter(worker_id=worker_pk[at], **{f"{item}_id": item_pk[at]})
            .values_list("worker__external_id", f"{item}__external_id")
            .get()
        )
        noun = "task" if item == "task" else "gold item"
        raise QualityEstimationError(
            f"an answer of worker {worker!r} on {noun} {thing!r} has the label {given[at]!r}, "
            f"which is not in project {project.name!r}'s label set {labels!r}; fix the answer "
            "or the label set"
        )
    return (
        np.asarray(worker_pk, dtype=np.int64),
        np.asarray(item_pk, dtype=np.int64),
        label,
    )


def _gold_items(
    *, project: Project, item_pks: np.ndarray, labels: list[str]
) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The gold items ``item_pks`` (sorted): their keys, categories and true labels' indices.

    Raises :class:`QualityEstimationError` naming an item whose true label is not in the set.
    """
    found = list(
        GoldItem.objects.filter(project=project, pk__in=item_pks.tolist())
        .order_by("pk")
        .values_list("pk", "category", "true_label", "external_id")
    )
    index_of = {name: k for k, name in enumerate(labels)}
    bad = next((row for row in found if row[2] not in index_of), None)
    if bad is not None:
        raise QualityEstimationError(
            f"gold item {bad[3]!r} has the true label {bad[2]!r}, which is not in project "
            f"{project.name!r}'s label set {labels!r}; fix the item or the label set"
        )
    return (
        np.asarray([row[0] for row in found], dtype=np.int64),
        [row[1] for row in found],
        np.asarray([index_of[row[2]] for row in found], dtype=np.int64),
    )


# --- assignment runs ---------------------------------------------------------------------------
#
# Lifecycle: queued -> running -> succeeded | failed | cancelled, and queued -> cancelled. Every
# transition is one conditional UPDATE on the status it leaves, so two workers (or a worker and
# a cancel request) can never both move a run on: the loser's update changes no row.


class _RunStopped(Exception):
    """The run left ``running`` (cancelled, or failed by recovery) while it was computing."""


class _RunInterrupted(Exception):
    """The worker computing the run is shutting down (``run_execute``'s ``should_stop``)."""


def _run_problem(run: AssignmentRun) -> AssignmentProblem:
    """The engine problem of ``run``: the project's problem, or for a next round that problem
    conditioned on the answers the round counts (:func:`~assignment.engine.next_round`)."""
    problem = _project_problem(
        project=run.project,
        matrix=run.quality_matrix,
        budget=run.budget,
        max_workers_per_task=run.max_workers_per_task,
        max_tasks_per_worker=run.max_tasks_per_worker,
    )
    if not run.next_round:
        return problem
    return _next_round(
        problem=problem,
        project=run.project,
        matrix=run.quality_matrix,
        through=run.answers_through or 0,
        budget=run.budget,
        target_posterior=run.target_posterior,
    )[0].problem


@dataclasses.dataclass(frozen=True)
class _RoundPlan:
    """The answers in hand as a next round sees them (shared by a comparison's runs)."""

    round: NextRound  # with the default budget: what remains of the project's
    last_id: int | None
    project_budget: int


def _round_plan(
    *,
    project: Project,
    matrix: QualityMatrix,
    project_budget: int,
    max_workers_per_task: int,
    max_tasks_per_worker: int,
    target_posterior: float | None,
) -> _RoundPlan:
    problem = _project_problem(
        project=project,
        matrix=matrix,
        budget=project_budget,
        max_workers_per_task=max_workers_per_task,
        max_tasks_per_worker=max_tasks_per_worker,
    )
    nxt, last_id = _next_round(
        problem=problem,
        project=project,
        matrix=matrix,
        through=None,
        budget=None,
        target_posterior=target_posterior,
    )
    return _RoundPlan(round=nxt, last_id=last_id, project_budget=project_budget)


def _round_start(run: AssignmentRun, *, plan: _RoundPlan, round_budget: int | None) -> None:
    """Set a next round's budget, ``answers_through`` and ``round_start`` from ``plan``, or
    raise :class:`RunValidationError` if the round has nothing to do."""
    nxt = plan.round
    budget = nxt.budget if round_budget is None else round_budget
    if run.target_accuracy is not None and nxt.accuracy_now >= run.target_accuracy:
        raise RunValidationError(
            f"the {nxt.n_answers} answers in hand already give an expected accuracy of "
            f"{nxt.accuracy_now:.4f}, at least the target_accuracy {run.target_accuracy}: "
            "the project is done (or raise the target)"
        )
    if budget == 0:
        raise RunValidationError(
            f"nothing left to spend: {nxt.n_answers} answers are in hand of the project's "
            f"budget of {plan.project_budget} pairs; give this round a budget"
        )
    if not nxt.open_tasks.any():
        raise RunValidationError(
            "every task is at its target_posterior or has as many answers as its cap allows: "
            "a next round has nothing to assign"
        )
    if not nxt.worker_room.any():
        raise RunValidationError(
            "every active worker has answered as many tasks as its cap allows "
            f"(max_tasks_per_worker {run.max_tasks_per_worker} unless the worker has its own): "
            "a next round has nobody to assign; raise the cap or add workers"
        )
    run.budget = budget
    run.answers_through = plan.last_id
    run.round_start = {
        "answers": nxt.n_answers,
        "accuracy_now": nxt.accuracy_now,
        "open_tasks": int(nxt.open_tasks.sum()),
        "tasks": int(nxt.open_tasks.size),
        "project_budget": plan.project_budget,
    }


def _next_round(
    *,
    problem: AssignmentProblem,
    project: Project,
    matrix: QualityMatrix,
    through: int | None,
    budget: int | None,
    target_posterior: float | None,
) -> tuple[NextRound, int | None]:
    """``problem`` after the project's answers with id up to ``through`` (all if None), and
    the last answer id counted (None without answers)."""
    try:
        answers = answers_in_hand(project=project, matrix=matrix, through=through)
    except AnswersError as exc:
        raise RunValidationError(str(exc)) from exc
    nxt = engine_rounds.next_round(
        problem,
        worker_index=answers.rows,
        task_index=answers.columns,
        said_one=answers.said_one,
        budget=budget,
        target_posterior=target_posterior,
    )
    return nxt, answers.last_id


def _project_problem(
    *,
    project: Project,
    matrix: QualityMatrix,
    budget: int,
    max_workers_per_task: int,
    max_tasks_per_worker: int,
) -> AssignmentProblem:
    """The engine problem of ``matrix`` with per-worker and per-task data.

    Quality is the matrix's :meth:`~QualityMatrix.quality_form` (the table of a matrix stored
    by category, never expanded). Workers who cannot work (inactive, or deleted since the
    matrix was made) get a per-worker cap of 0 and tasks deleted since a per-task cap of 0: the
    feasible assignments of an eligibility mask, without a workers x tasks array (the upper
    bound, which drops the per-worker caps, leaves workers with a cap of 0 out). Workers' and
    tasks' own caps and priors override the given defaults.
    """
    worker_ids, task_ids = matrix.worker_ids, matrix.task_ids
    workers = {
        pk: (max_tasks, active)
        for pk, max_tasks, active in Worker.objects.filter(pk__in=worker_ids.tolist()).values_list(
            "pk", "max_tasks", "active"
        )
    }
    tasks = {
        pk: (max_workers, prior)
        for pk, max_workers, prior in Task.objects.filter(pk__in=task_ids.tolist()).values_list(
            "pk", "max_workers", "prior"
        )
    }
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
        [
            max_workers_per_task if tasks.get(pk, (None,))[0] is None else tasks[pk][0]
            for pk in task_ids.tolist()
        ],
        dtype=np.int64,
    )
    per_task[[pk not in tasks for pk in task_ids.tolist()]] = 0
    default_prior = project.default_prior
    prior = np.array(
        [
            default_prior if tasks.get(pk, (None, None))[1] is None else tasks[pk][1]
            for pk in task_ids.tolist()
        ]
    )
    return AssignmentProblem(
        matrix.quality_form(),
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        prior=prior,
    )


def _check_options(method: str, options: dict) -> dict:
    if not isinstance(options, dict):
        raise RunValidationError(f"options must be an object of method options, got {options!r}")
    try:
        check_options(method, options)
    except ValueError as exc:
        raise RunValidationError(str(exc)) from exc
    return dict(options)


def run_create(
    *,
    project: Project,
    method: str,
    budget: int | None = None,
    max_workers_per_task: int | None = None,
    max_tasks_per_worker: int | None = None,
    seed: int | None = None,
    options: dict | None = None,
    next_round: bool = False,
    target_posterior: float | None = None,
    target_accuracy: float | None = None,
    enqueue: bool = True,
) -> AssignmentRun:
    """Queue a run of ``method`` on the project's latest quality matrix.

    Caps and budget default to the project's defaults (the budget to as many pairs as the caps
    allow); workers' and tasks' own caps and priors override them when the run computes. The
    run is handed to a Celery worker once the surrounding transaction commits (``enqueue``).

    A ``next_round`` run conditions on the answers collected so far (those up to now: later
    answers wait for the round after): each task's prior becomes its posterior under the
    matrix, answered pairs are not assigned again, the caps count the answers (they are caps
    over all rounds), and ``budget`` is this round's, by default what remains of the
    project's budget after the answers. Tasks whose likelier label has a posterior of at least
    ``target_posterior`` get nobody; the round is refused once the answers' expected accuracy
    reaches ``target_accuracy``, or when it has nothing to assign. ``round_start`` records
    what the round started from (see ``docs/design.md``, "Rounds").

    Raises :class:`RunValidationError` for an unknown method, an invalid option or target, a
    round with nothing to do, or a project whose runs would be wrong
    (:func:`~assignment.selectors.run_readiness`).
    """
    _check_method(method)
    _check_round_targets(next_round, target_posterior, target_accuracy)
    return _run_new(
        project=project,
        matrix=_quality_matrix_for_runs(project=project),
        method=method,
        budget=budget,
        max_workers_per_task=max_workers_per_task,
        max_tasks_per_worker=max_tasks_per_worker,
        seed=seed,
        options=options,
        enqueue=enqueue,
        round_targets=(target_posterior, target_accuracy) if next_round else None,
    )


def _check_round_targets(
    next_round: bool, target_posterior: float | None, target_accuracy: float | None
) -> None:
    if not next_round and (target_posterior is not None or target_accuracy is not None):
        raise RunValidationError(
            "target_posterior and target_accuracy are stopping rules of a next round: "
            "set next_round (the API's round) too"
        )


def _check_method(method: str) -> None:
    if method not in Method.values:
        raise RunValidationError(
            f"method must be one of {', '.join(Method.values)}, got {method!r}"
        )


def _quality_matrix_for_runs(*, project: Project) -> QualityMatrix:
    """The latest quality matrix, or :class:`RunValidationError` saying why a run would be
    wrong (:func:`~assignment.selectors.run_readiness`)."""
    readiness = run_readiness(project=project)
    if not readiness.ready:
        raise RunValidationError(readiness.refusal)
    return readiness.matrix


def _caps_or_defaults(
    project: Project, max_workers_per_task: int | None, max_tasks_per_worker: int | None
) -> tuple[int, int]:
    """The caps asked for, or the project's default caps."""
    return (
        project.default_max_workers_per_task
        if max_workers_per_task is None
        else max_workers_per_task,
        project.default_max_tasks_per_worker
        if max_tasks_per_worker is None
        else max_tasks_per_worker,
    )


def _project_budget(project: Project, matrix: QualityMatrix, per_task: int, per_worker: int) -> int:
    """The project's budget: its default, else as many pairs as the caps allow."""
    if project.default_budget is not None:
        return project.default_budget
    return min(matrix.n_tasks * per_task, matrix.n_workers * per_worker)


def _run_new(
    *,
    project: Project,
    matrix: QualityMatrix,
    method: str,
    budget: int | None,
    max_workers_per_task: int | None,
    max_tasks_per_worker: int | None,
    seed: int | None,
    options: dict | None,
    enqueue: bool,
    comparison: Comparison | None = None,
    round_targets: tuple[float | None, float | None] | None = None,
    round_plan: _RoundPlan | None = None,
) -> AssignmentRun:
    """Validate and queue a run; ``round_targets`` = ``(target_posterior, target_accuracy)``
    of a next round, None for a run on the whole project; ``round_plan`` the answers in hand
    when the caller has read them already (a comparison's runs share them)."""
    requested_budget = budget
    per_task, per_worker = _caps_or_defaults(project, max_workers_per_task, max_tasks_per_worker)
    project_budget = _project_budget(project, matrix, per_task, per_worker)
    if budget is None:
        budget = project_budget
    run = AssignmentRun(
        project=project,
        comparison=comparison,
        quality_matrix=matrix,
        method=method,
        budget=budget,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        seed=seed,
        options=_check_options(method, options or {}),
        enqueued_at=timezone.now() if enqueue else None,
    )
    if round_targets is not None:
        run.next_round = True
        run.target_posterior, run.target_accuracy = round_targets
    try:
        run.full_clean()
    except ValidationError as exc:
        problems = "; ".join(
            f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items()
        )
        raise RunValidationError(problems) from None
    if run.next_round:
        if round_plan is None:
            round_plan = _round_plan(
                project=project,
                matrix=matrix,
                project_budget=project_budget,
                max_workers_per_task=per_task,
                max_tasks_per_worker=per_worker,
                target_posterior=run.target_posterior,
            )
        _round_start(run, plan=round_plan, round_budget=requested_budget)
    with transaction.atomic():
        if enqueue:
            _check_active_runs(owner_id=project.owner_id, adding=1)
        run.save()
    if enqueue:
        _enqueue_after_commit(run.pk)
    logger.info("queued run %s (%s) of project %s", run.pk, method, project.pk)
    return run


def _check_active_runs(*, owner_id: int, adding: int) -> None:
    """Raise :class:`RunLimitError` if ``adding`` more queued runs would give the owner more
    than ``TVCS_MAX_ACTIVE_RUNS`` queued or running: one user cannot hold every worker.

    Call it inside the transaction that saves the runs: it locks the owner's row, so that two
    requests of one user at once count each other's runs (PostgreSQL; SQLite's writers are
    serial anyway).
    """
    get_user_model().objects.select_for_update().filter(pk=owner_id).exists()
    active = AssignmentRun.objects.filter(
        project__owner_id=owner_id, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
    ).count()
    limit = settings.TVCS_MAX_ACTIVE_RUNS
    if active + adding > limit:
        raise RunLimitError(
            f"you have {active} runs queued or running and may have at most {limit}; "
            f"this request adds {adding}: wait for some to end (or cancel them) and ask again"
        )


def _enqueue_after_commit(run_id: int) -> None:
    from assignment.tasks import run_execute_task

    transaction.on_commit(lambda: run_execute_task.delay(run_id))


def run_claim(*, run_id: int, worker: str = "") -> bool:
    """Move a queued run to running on ``worker`` (a Celery hostname; empty in this process);
    False if it was not queued (someone else has it)."""
    now = timezone.now()
    claimed = AssignmentRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING,
        worker=worker,
        started_at=now,
        heartbeat_at=now,
        attempts=F("attempts") + 1,
        progress=0,
        progress_message="started",
    )
    return claimed == 1


class _Heartbeat(threading.Thread):
    """Touches ``heartbeat_at`` of a running run every few seconds from a side thread, so long
    stretches without progress callbacks (an LP solve) do not look like a dead worker."""

    def __init__(self, run_id: int, every: float) -> None:
        super().__init__(name=f"heartbeat-run-{run_id}", daemon=True)
        self.run_id = run_id
        self.every = every
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            while not self.stop.wait(self.every):
                self.beat()
        finally:
            connection.close()

    def beat(self) -> None:
        """One heartbeat; a database that refuses it (locked, or gone for a moment) is
        logged and tried again at the next beat, so the thread never dies while its run
        computes (a dead heartbeat would let recovery re-queue a run that is alive)."""
        try:
            AssignmentRun.objects.filter(pk=self.run_id, status=RunStatus.RUNNING).update(
                heartbeat_at=timezone.now()
            )
        except DatabaseError as exc:
            logger.warning("run %s: heartbeat not written, retried: %s", self.run_id, exc)
            connection.close()  # a broken connection is opened anew at the next beat


def run_execute(
    *, run_id: int, should_stop: Callable[[], bool] | None = None
) -> AssignmentRun | None:
    """Compute a claimed (running) run and store its result with one conditional UPDATE.

    Progress goes to the row at most once a second; if the run stopped being ``running``
    meanwhile (cancelled, or handed back by :func:`runs_hand_back`), the computation stops and
    nothing is stored. So it does, leaving the row as it is, at the first progress report after
    ``should_stop()`` turns true (its worker is shutting down: the worker hands the run back).
    An engine error marks the run failed with the error's text. Returns the run as stored, or
    None if it was deleted (with its project) while computing.
    """
    run = (
        AssignmentRun.objects.select_related("project", "quality_matrix").filter(pk=run_id).first()
    )
    if run is None:
        logger.info("run %s was deleted before it could compute", run_id)
        return None
    last = [0.0]

    def progress(fraction: float, message: str) -> None:
        if should_stop is not None and should_stop():
            raise _RunInterrupted
        now = time.monotonic()
        if now - last[0] < 1.0 and fraction < 1.0:
            return
        last[0] = now
        alive = AssignmentRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            progress=max(0, min(99, int(100 * fraction))),
            progress_message=message[:300],
            heartbeat_at=timezone.now(),
        )
        if not alive:
            raise _RunStopped

    heartbeat = _Heartbeat(run_id, every=max(1.0, settings.TVCS_RUN_STALE_AFTER / 6))
    heartbeat.start()
    try:
        problem = _run_problem(run)
        result = solve(problem, method=run.method, seed=run.seed, progress=progress, **run.options)
    except _RunStopped:
        logger.info("run %s stopped while computing: it is no longer running", run_id)
        return AssignmentRun.objects.filter(pk=run_id).first()
    except _RunInterrupted:
        logger.info("run %s stopped while computing: its worker is shutting down", run_id)
        return AssignmentRun.objects.filter(pk=run_id).first()
    except (ValueError, RuntimeError, MemoryError) as exc:
        logger.exception("run %s failed", run_id)
        run_fail(run_id=run_id, reason=f"{type(exc).__name__}: {exc}")
        return AssignmentRun.objects.filter(pk=run_id).first()
    finally:
        heartbeat.stop.set()
        heartbeat.join()
    rows, cols = np.nonzero(result.assignment)
    summary = assignment_distributions(problem, result.assignment)
    stored = AssignmentRun(pk=run_id)
    stored.set_pairs(rows, cols)
    finished = AssignmentRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.SUCCEEDED,
        finished_at=timezone.now(),
        seconds=result.seconds,
        expected_accuracy=result.expected_accuracy,
        accuracy_standard_error=result.accuracy_standard_error,
        n_assigned=stored.n_assigned,
        assignment_blob=stored.assignment_blob,
        progress=100,
        progress_message=result.message[:300],
        summary=summary,
    )
    if not finished:
        logger.info("run %s finished computing but is no longer running; result dropped", run_id)
    return AssignmentRun.objects.filter(pk=run_id).first()


def run_fail(*, run_id: int, reason: str) -> bool:
    """Mark a queued or running run failed with ``reason``; False if it had already ended."""
    return bool(
        AssignmentRun.objects.filter(
            pk=run_id, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
        ).update(status=RunStatus.FAILED, error=reason, finished_at=timezone.now())
    )


def run_cancel(*, run: AssignmentRun) -> AssignmentRun:
    """Cancel a queued or running run (a running one stops at its next progress report).

    Raises :class:`RunStateError` if the run has already ended.
    """
    cancelled = AssignmentRun.objects.filter(
        pk=run.pk, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
    ).update(status=RunStatus.CANCELLED, finished_at=timezone.now(), progress_message="cancelled")
    run.refresh_from_db()
    if not cancelled:
        raise RunStateError(
            f"run {run.pk} is {run.status}: only queued or running runs can be cancelled"
        )
    return run


def runs_recover_stale(*, now=None) -> dict[str, list[int]]:
    """Re-queue (or, after ``TVCS_RUN_MAX_ATTEMPTS``, fail) runs whose worker went silent, and
    hand the broker again the queued runs whose message was lost.

    A running run whose heartbeat is older than ``TVCS_RUN_STALE_AFTER`` seconds lost its
    worker (killed, out of memory, machine gone). Each transition is conditional on the stale
    heartbeat, so a worker that is merely slow and reports meanwhile keeps its run.

    A run still queued ``TVCS_RUN_LOST_AFTER`` seconds after it was handed to the broker may
    have lost its message (a worker that failed to claim it on a locked database, a broker
    restarted without persistence): it is enqueued once more, at most once a period. Should the
    first message still be waiting, whichever comes second finds the run claimed and does
    nothing.
    """
    now = timezone.now() if now is None else now
    reenqueued = _runs_reenqueue_lost(now=now)
    cutoff = now - timedelta(seconds=settings.TVCS_RUN_STALE_AFTER)
    requeued, failed = [], []
    stale = AssignmentRun.objects.filter(status=RunStatus.RUNNING, heartbeat_at__lt=cutoff)
    for run_id, attempts, heartbeat in stale.values_list("pk", "attempts", "heartbeat_at"):
        same = AssignmentRun.objects.filter(
            pk=run_id, status=RunStatus.RUNNING, heartbeat_at=heartbeat
        )
        if attempts < settings.TVCS_RUN_MAX_ATTEMPTS:
            if same.update(
                status=RunStatus.QUEUED,
                enqueued_at=now,
                progress=0,
                progress_message=f"re-queued: its worker stopped responding (attempt {attempts})",
            ):
                requeued.append(run_id)
                _enqueue_after_commit(run_id)
        elif same.update(
            status=RunStatus.FAILED,
            finished_at=now,
            error=(
                f"its worker stopped responding {attempts} time(s); last heartbeat at "
                f"{heartbeat.isoformat()}"
            ),
        ):
            failed.append(run_id)
    if requeued or failed:
        logger.warning("stale runs: re-queued %s, failed %s", requeued, failed)
    return {"requeued": requeued, "failed": failed, "reenqueued": reenqueued}


def runs_hand_back(*, worker: str) -> list[int]:
    """Hand back the runs ``worker`` is computing, because it is shutting down: queued again
    at once (not running with a heartbeat about to go stale), for :func:`runs_enqueue` to give
    to the broker once the worker has stopped taking messages.

    The computation still under way sees at its next progress report that the run is no
    longer its own, stops and stores nothing. The attempt is not counted against the run:
    nothing failed. Should the worker die before :func:`runs_enqueue`, the lost-message sweep
    of :func:`runs_recover_stale` enqueues them.
    """
    running = AssignmentRun.objects.filter(status=RunStatus.RUNNING, worker=worker)
    handed_back = [
        run_id
        for run_id in running.values_list("pk", flat=True)
        if AssignmentRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, worker=worker).update(
            status=RunStatus.QUEUED,
            enqueued_at=timezone.now(),
            attempts=F("attempts") - 1,
            progress=0,
            progress_message="re-queued: its worker shut down",
        )
    ]
    if handed_back:
        logger.warning("worker %s shutting down: runs %s queued again", worker, handed_back)
    return handed_back


def runs_reclaim(*, worker: str) -> list[int]:
    """At the start of ``worker``: the runs an earlier worker of that name left behind, queued
    and given to the broker at once; returns them.

    A worker that ended without its shutdown handlers (SIGKILL, a crash, out of memory) leaves
    its runs ``running`` with a heartbeat that stops; one ended by a cold shutdown hands them
    back but never gives them to the broker. The stale-run recovery and the lost-message sweep
    find both, after ``TVCS_RUN_STALE_AFTER`` seconds and 10 minutes. A worker restarted under
    the same name (a container restarted, a service restarted by systemd) takes them back now.
    Should a worker of that name still be computing one (two workers of one name at once is a
    misconfiguration Celery warns about), it stops at its next progress report, as after any
    hand-back; a message of the earlier worker still on the broker makes no difference either:
    a run is claimed once.
    """
    handed_back = runs_hand_back(worker=worker)
    queued = AssignmentRun.objects.filter(status=RunStatus.QUEUED, worker=worker)
    run_ids = sorted(set(handed_back) | set(queued.values_list("pk", flat=True)))
    return runs_enqueue(run_ids=run_ids) if run_ids else []


def runs_enqueue(*, run_ids: list[int]) -> list[int]:
    """Give the broker those of ``run_ids`` that are still queued; returns them."""
    queued = list(
        AssignmentRun.objects.filter(pk__in=run_ids, status=RunStatus.QUEUED)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for run_id in queued:
        _enqueue_after_commit(run_id)
    return queued


def _runs_reenqueue_lost(*, now) -> list[int]:
    """Enqueue again the runs queued for longer than ``TVCS_RUN_LOST_AFTER`` seconds."""
    cutoff = now - timedelta(seconds=settings.TVCS_RUN_LOST_AFTER)
    lost = AssignmentRun.objects.filter(status=RunStatus.QUEUED, enqueued_at__lt=cutoff)
    reenqueued = []
    for run_id, enqueued_at in lost.values_list("pk", "enqueued_at"):
        if AssignmentRun.objects.filter(
            pk=run_id, status=RunStatus.QUEUED, enqueued_at=enqueued_at
        ).update(enqueued_at=now):
            reenqueued.append(run_id)
            _enqueue_after_commit(run_id)
    if reenqueued:
        logger.warning("queued runs enqueued again (their message may be lost): %s", reenqueued)
    return reenqueued


# --- the demo project --------------------------------------------------------------------------

#: The demo user's password, kept in the data folder (readable by its owner only) so that it
#: stays the same across restarts of ``runproduct``.
DEMO_PASSWORD_FILE = "demo-password"


def demo_user_ensure(*, password_file: Path, username: str = "demo") -> tuple:
    """The demo user and its password, the same on every call.

    The first call creates the user with a random password and writes it to
    ``password_file`` (mode 0600); later calls read it back. If the user's password was
    changed since (in the admin), it is left alone and the password returned is None.
    """
    user, created = get_user_model().objects.get_or_create(username=username)
    if password_file.exists() and not created:
        password = password_file.read_text(encoding="utf-8").strip()
        return user, password if user.check_password(password) else None
    password = secrets.token_urlsafe(12)
    password_file.touch(mode=0o600)
    password_file.write_text(password + "\n", encoding="utf-8")
    user.set_password(password)
    user.save(update_fields=["password"])
    logger.info("demo user %r: new password in %s", username, password_file)
    return user, password


def demo_project_create(
    *, owner, name: str = "figure-4 demo", n_workers: int = 100, n_tasks: int = 1000, seed: int = 0
) -> Project:
    """A project shaped like the paper's Figure 4, filled through the real import path.

    ``n_workers`` workers and ``n_tasks`` tasks in 5 categories; every worker answers 20 gold
    questions per category with an accuracy drawn uniformly from [0.5, 0.9] per (worker,
    category); the quality matrix is then estimated from those gold answers. Caps follow the
    figure at ratio 0.03: 3 workers per task, 30 tasks per worker, budget 80% of the caps.
    Returns the existing project if ``owner`` already has one called ``name``.
    """
    existing = Project.objects.filter(owner=owner, name=name).first()
    if existing is not None:
        return existing
    rng = np.random.default_rng(seed)
    categories = [f"c{k}" for k in range(5)]
    per_task = max(1, round(0.03 * n_workers))
    per_worker = max(1, round(0.03 * n_tasks))
    accuracy = rng.uniform(0.5, 0.9, (n_workers, len(categories)))
    items = [
        (f"g{c}-{k}", c, str(rng.integers(0, 2))) for c in range(len(categories)) for k in range(20)
    ]

    def rows(header: str, lines) -> io.BytesIO:
        return io.BytesIO(("\n".join([header, *lines]) + "\n").encode())

    answers = []
    for i in range(n_workers):
        for item_id, c, label in items:
            right = rng.random() < accuracy[i, c]
            answers.append(f"w{i},{item_id},{label if right else str(1 - int(label))}")
    with transaction.atomic():
        project = project_create(
            owner=owner, name=name, description="Demo data shaped like Figure 4 of the TVCS paper"
        )
        project.default_max_workers_per_task = per_task
        project.default_max_tasks_per_worker = per_worker
        project.default_budget = int(0.8 * min(n_tasks * per_task, n_workers * per_worker))
        project.save()
        files = [
            ("workers", rows("worker_id", (f"w{i}" for i in range(n_workers)))),
            (
                "tasks",
                rows(
                    "task_id,category",
                    (f"t{j},{categories[j % len(categories)]}" for j in range(n_tasks)),
                ),
            ),
            (
                "gold_items",
                rows(
                    "item_id,category,true_label",
                    (f"{item_id},{categories[c]},{label}" for item_id, c, label in items),
                ),
            ),
            ("gold_answers", rows("worker_id,item_id,answer", answers)),
        ]
        for kind, data in files:
            project_data_import(project=project, kind=kind, file=data, file_name=f"{kind}.csv")
        quality_estimate(project=project)
    logger.info("created the demo project %s", project.pk)
    return project


# --- REST API ----------------------------------------------------------------------------------
# Writes the API needs beyond the ones above.

#: Project fields :func:`project_update` changes (the label set is fixed once a project exists:
#: answers and gold items are stored as labels of it).
PROJECT_UPDATABLE_FIELDS = (
    "name",
    "description",
    "default_prior",
    "default_max_workers_per_task",
    "default_max_tasks_per_worker",
    "default_budget",
)

#: Most runs one comparison may queue (methods × budgets).
MAX_COMPARISON_RUNS = 60


def project_update(*, project: Project, **fields) -> Project:
    """Change some of :data:`PROJECT_UPDATABLE_FIELDS` of ``project`` and save it.

    Raises :class:`ProjectAlreadyExistsError` if the new name is taken by another project of
    the owner, :class:`ProjectValidationError` for invalid values (a prior outside (0, 1), a
    negative cap).
    """
    unknown = sorted(set(fields) - set(PROJECT_UPDATABLE_FIELDS))
    if unknown:
        raise ValueError(f"cannot update {', '.join(unknown)} of a project")
    if "name" in fields:
        fields["name"] = fields["name"].strip()
        taken = Project.objects.filter(owner_id=project.owner_id, name=fields["name"])
        if taken.exclude(pk=project.pk).exists():
            raise ProjectAlreadyExistsError(
                f"user {project.owner.get_username()!r} already has a project {fields['name']!r}"
            )
    prior = fields.get("default_prior", 0.5)
    if isinstance(prior, bool) or not isinstance(prior, int | float) or not 0 < prior < 1:
        raise ProjectValidationError(
            f"default_prior must be a probability strictly between 0 and 1, got {prior!r}"
        )
    for name, value in fields.items():
        setattr(project, name, value)
    try:
        project.full_clean(validate_unique=False)
    except ValidationError as exc:
        project.refresh_from_db()
        problems = "; ".join(
            f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items()
        )
        raise ProjectValidationError(problems) from None
    project.save(update_fields=[*fields, "updated_at"])
    logger.info("updated project %s: %s", project.pk, ", ".join(sorted(fields)))
    return project


def project_delete(*, project: Project) -> None:
    """Delete ``project`` with everything in it: data, quality matrices, runs, comparisons.

    Runs go first (they protect the quality matrices they were computed from). A run still
    computing on a worker finds its row gone and stores nothing; cancel runs first to stop
    their computations early.
    """
    project_id = project.pk
    with transaction.atomic():
        AssignmentRun.objects.filter(project=project).delete()
        project.delete()
    logger.info("deleted project %s", project_id)


def _distinct_list(name: str, values: object, valid, what: str) -> list:
    """``values`` as a list whose members are all ``valid`` (``what`` says how) and distinct."""
    if not isinstance(values, list | tuple):
        raise RunValidationError(f"{name} must be a list, got {values!r}")
    for value in values:
        if not valid(value):
            raise RunValidationError(f"every one of {name} must be {what}, got {value!r}")
    if len(set(values)) != len(values):
        raise RunValidationError(f"{name} must not repeat a value, got {list(values)!r}")
    return list(values)


def comparison_create(
    *,
    project: Project,
    methods: list[str],
    budgets: list[int] | None = None,
    max_workers_per_task: int | None = None,
    max_tasks_per_worker: int | None = None,
    seed: int | None = None,
    next_round: bool = False,
    target_posterior: float | None = None,
    target_accuracy: float | None = None,
    enqueue: bool = True,
) -> Comparison:
    """A comparison of ``methods`` on the project's latest quality matrix: one run per method
    and budget (per method with the default budget when ``budgets`` is empty), all queued at
    once and handed to the workers after the transaction commits, so they run in parallel.
    With ``next_round`` every run is the next round (see :func:`run_create`), all from the
    same answers in hand, read once; the upper bound is then the round's.

    All of it or nothing: raises :class:`RunValidationError` (an unknown or repeated method, a
    repeated or invalid budget, more than :data:`MAX_COMPARISON_RUNS` runs, no quality matrix,
    a round with nothing to do) before any run is queued.
    """
    methods = _distinct_list(
        "methods",
        methods,
        lambda method: isinstance(method, str) and method in Method.values,
        f"one of {', '.join(Method.values)}",
    )
    if not methods:
        raise RunValidationError("methods must name at least one method")
    budgets = _distinct_list(
        "budgets",
        budgets or [],
        lambda budget: isinstance(budget, int) and not isinstance(budget, bool) and budget >= 1,
        "a positive integer",
    )
    n_runs = len(methods) * max(1, len(budgets))
    if n_runs > MAX_COMPARISON_RUNS:
        raise RunValidationError(
            f"a comparison queues at most {MAX_COMPARISON_RUNS} runs (methods x budgets), "
            f"this one {n_runs}"
        )
    matrix = _quality_matrix_for_runs(project=project)
    _check_round_targets(next_round, target_posterior, target_accuracy)
    round_plan = None
    if next_round:
        per_task, per_worker = _caps_or_defaults(
            project, max_workers_per_task, max_tasks_per_worker
        )
        round_plan = _round_plan(
            project=project,
            matrix=matrix,
            project_budget=_project_budget(project, matrix, per_task, per_worker),
            max_workers_per_task=per_task,
            max_tasks_per_worker=per_worker,
            target_posterior=target_posterior,
        )
    with transaction.atomic():
        if enqueue:
            _check_active_runs(owner_id=project.owner_id, adding=n_runs)
        comparison = Comparison.objects.create(
            project=project, methods=methods, budgets=budgets, upper_bound={"status": "pending"}
        )
        for method in methods:
            for budget in budgets or [None]:
                _run_new(
                    project=project,
                    matrix=matrix,
                    method=method,
                    budget=budget,
                    max_workers_per_task=max_workers_per_task,
                    max_tasks_per_worker=max_tasks_per_worker,
                    seed=seed,
                    options=None,
                    comparison=comparison,
                    enqueue=enqueue,
                    round_targets=(target_posterior, target_accuracy) if next_round else None,
                    round_plan=round_plan,
                )
        if enqueue:
            from assignment.tasks import comparison_upper_bound_task

            comparison_id = comparison.pk
            transaction.on_commit(lambda: comparison_upper_bound_task.delay(comparison_id))
    logger.info(
        "comparison %s of project %s: %d runs of %s", comparison.pk, project.pk, n_runs, methods
    )
    return comparison


def comparison_upper_bound_compute(*, comparison_id: int) -> dict | None:
    """Compute and store the accuracy upper bound at each budget of a comparison's runs.

    The bound drops the per-worker caps (:func:`assignment.engine.accuracy_upper_bounds`), so
    every method's curve lies below it. Stored in ``comparison.upper_bound`` as
    ``{"status": "done", "points": [[budget, value], ...]}``, or ``"not applicable"`` with a
    message when a task may take more workers than exact accuracies allow. Only a ``pending``
    bound is computed and stored (a duplicate delivery does nothing); returns what was stored,
    or None.
    """
    pending = Comparison.objects.filter(pk=comparison_id, upper_bound__status="pending")
    run = (
        AssignmentRun.objects.filter(comparison_id=comparison_id, comparison__in=pending)
        .select_related("project", "quality_matrix")
        .order_by("pk")
        .first()
    )
    if run is None:
        return None
    budgets = sorted(
        set(
            AssignmentRun.objects.filter(comparison_id=comparison_id).values_list(
                "budget", flat=True
            )
        )
    )
    try:
        bounds = accuracy_upper_bounds(_run_problem(run), budgets=budgets)
    except ValueError as exc:
        upper_bound = {"status": "not applicable", "message": str(exc)}
    else:
        points = [[budget, bound.value] for budget, bound in zip(budgets, bounds, strict=True)]
        upper_bound = {"status": "done", "points": points}
    if not pending.update(upper_bound=upper_bound):
        return None
    logger.info("comparison %s: upper bound %s", comparison_id, upper_bound["status"])
    return upper_bound


def comparison_upper_bound_fail(*, comparison_id: int, reason: str) -> bool:
    """Mark a pending upper bound as failed with ``reason``; False if it was not pending."""
    return bool(
        Comparison.objects.filter(pk=comparison_id, upper_bound__status="pending").update(
            upper_bound={"status": "failed", "message": reason}
        )
    )


def api_token_for_sign_in(*, user: AbstractBaseUser) -> str:
    """``user``'s API token, a new one if they had none or theirs expired."""
    token = Token.objects.filter(user=user).first()
    expiry = None if token is None else api_token_expiry(token=token)
    if token is not None and (expiry is None or expiry > timezone.now()):
        return token.key
    return api_token_renew(user=user)


def api_token_renew(*, user: AbstractBaseUser) -> str:
    """A new API token for ``user``, replacing any older one (which stops working at once)."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        token = Token.objects.create(user=user)
    logger.info("new API token for %s", user.get_username())
    return token.key
