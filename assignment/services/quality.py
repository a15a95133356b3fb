"""Quality matrices estimated from gold answers, collected answers or both."""

from __future__ import annotations

import logging

import numpy as np
from django.db.models import Count, F, Q

from assignment.answers import labelled_answers
from assignment.engine import (
    estimate_from_answers,
)
from assignment.engine.answer_quality import MODELS
from assignment.engine.quality import (
    DEFAULT_CATEGORY_STRENGTH,
    DEFAULT_WORKER_STRENGTH,
    estimate_quality_from_counts,
)
from assignment.errors import (
    AnswersError,
    QualityEstimationError,
)
from assignment.models import (
    Answer,
    EstimateSource,
    GoldAnswer,
    GoldItem,
    Project,
    QualityMatrix,
    QualitySource,
    Task,
    Worker,
)

logger = logging.getLogger(__name__)


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
      accuracy and that towards the population (docs/design.md#worker-quality,
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
    # answer, and the engine takes the counts as they are.
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

    answered = np.zeros((len(workers), len(categories)), dtype=np.int64)
    correct = np.zeros_like(answered)
    for worker, category, n, right in cells:  # one row per cell
        answered[row_of[worker], category_index[category]] = n
        correct[row_of[worker], category_index[category]] = right
    estimate = estimate_quality_from_counts(
        answered=answered,
        correct=correct,
        task_categories=[category_index[category] for category in task_categories],
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
    worker_pk, task_pk, label = _answers_as_indices(
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
        gold_worker, gold_item, gold_label = _answers_as_indices(
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
    if estimate.model == "dawid-skene":  # one-coin's matrices say no more than its accuracies
        matrix.set_confusion(estimate.confusion)
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


def _answers_as_indices(**kwargs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~assignment.answers.labelled_answers`, its refusal a quality-estimate error."""
    try:
        return labelled_answers(**kwargs)
    except AnswersError as exc:
        raise QualityEstimationError(str(exc)) from exc


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
