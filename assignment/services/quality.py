"""Quality matrices estimated from gold answers, collected answers or both."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, F, Q

from assignment.answers import labelled_answers
from assignment.engine import (
    estimate_from_answers,
)
from assignment.engine.answer_quality import MODELS, answers_overlap
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
    max_iterations: int | None = None,
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
    (default ``"one-coin"``); giving one for ``"gold"`` is an error, and so is
    ``max_iterations``. EM takes numeric strengths only (not ``"auto"``) and at most
    ``max_iterations`` iterations (default :data:`EM_MAX_ITERATIONS`); an estimate that has not
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
            f"project {project.name!r} has no {missing}; import them first (the project's "
            f"Data page, POST /api/projects/{project.pk}/data/{missing}/, or manage.py "
            f"import_data --kind {missing})"
        )
    if source == EstimateSource.GOLD:
        if model is not None:
            raise QualityEstimationError(
                f"model {model!r} is the worker model of an estimate from answers by EM "
                "(source 'answers' or 'both'); an estimate from gold answers counts them"
            )
        if max_iterations is not None:
            raise QualityEstimationError(
                f"max_iterations {max_iterations!r} bounds the EM of an estimate from answers "
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
        max_iterations=EM_MAX_ITERATIONS if max_iterations is None else max_iterations,
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
            # how "auto" set each strength (fitted, floor, ceiling, default), given ones left out
            "strength_fits": {
                name: how
                for name, how in zip(("worker", "category"), estimate.strength_fits, strict=True)
                if how != "given"
            },
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
    _check_em_options(
        model=model,
        source="both" if use_gold else "answers",
        worker_strength=worker_strength,
        category_strength=category_strength,
    )
    labels = list(project.labels)
    items = _collected_items(project=project, workers=workers, tasks=tasks, labels=labels)
    if use_gold:
        items = _with_gold_items(items, project=project, workers=workers, labels=labels)
    _check_answers_overlap(items, project=project)
    categories = sorted(set(items.categories))
    category_index = {category: c for c, category in enumerate(categories)}
    estimate = estimate_from_answers(
        worker_index=items.worker_index,
        task_index=items.item_index,
        label=items.label,
        n_workers=len(workers),
        n_tasks=len(items.categories),
        n_labels=len(labels),
        model=model,
        gold_task_truth=items.truth,
        task_categories=[category_index[category] for category in items.categories],
        n_categories=len(categories),
        worker_strength=worker_strength,
        category_strength=category_strength,
        max_iterations=max_iterations,
    )
    matrix = _em_matrix_save(
        project=project,
        estimate=estimate,
        items=items,
        use_gold=use_gold,
        workers=workers,
        tasks=tasks,
        categories=categories,
    )
    _log_em(matrix=matrix, estimate=estimate, items=items, workers=workers, tasks=tasks)
    return matrix


def _check_answers_overlap(items: _EMItems, *, project: Project) -> None:
    """Refuse answers that cannot teach EM anything
    (:func:`~assignment.engine.answer_quality.answers_overlap`)."""
    if answers_overlap(items.item_index, items.truth):
        return
    raise QualityEstimationError(
        f"project {project.name!r}: no task has two answers and no gold item has one, so EM "
        "cannot tell a worker's right answers from wrong ones (it would call every worker "
        "right); collect a second answer on some tasks (a next round), or estimate from gold "
        "answers (source 'gold' or 'both')"
    )


def _check_em_options(
    *, model: str, source: str, worker_strength: float | str, category_strength: float | str
) -> None:
    """Refuse a model the engine does not know, and strengths ``"auto"`` (gold only)."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    for name, value in (
        ("worker_strength", worker_strength),
        ("category_strength", category_strength),
    ):
        if value == "auto":
            raise QualityEstimationError(
                f"{name} 'auto' is fitted only for an estimate from gold answers (source "
                f"'gold'); give a number for source {source!r}"
            )


@dataclass(frozen=True)
class _EMItems:
    """The observations of one EM fit, as indices into the workers and the items.

    ``worker_index``, ``item_index`` and ``label`` (label indices), one entry per answer;
    ``truth`` and ``categories``, one per item (``truth`` is ``-1`` for a task, the true label's
    index for a gold item); ``gold_counts`` the gold answers per worker (``None`` without gold);
    ``n_answers`` and ``n_gold_answers`` the collected and gold answers among the entries.
    """

    worker_index: np.ndarray
    item_index: np.ndarray
    label: np.ndarray
    truth: np.ndarray
    categories: list[str]
    gold_counts: np.ndarray | None
    n_answers: int
    n_gold_answers: int


def _collected_items(
    *, project: Project, workers: list[int], tasks: list[tuple[int, str]], labels: list[str]
) -> _EMItems:
    """The project's collected answers over its tasks (items ``0 .. m-1``), or a refusal."""
    worker_pk, task_pk, label = _answers_as_indices(
        project=project,
        answers=Answer.objects.filter(worker__project=project, task__project=project),
        item="task",
        label_field="label",
        labels=labels,
    )
    if not worker_pk.size:
        raise QualityEstimationError(
            f"project {project.name!r} has no collected answers; upload them (the project's "
            f"Data page, POST /api/projects/{project.pk}/data/answers/, or manage.py "
            "import_data --kind answers) or estimate from gold (source 'gold')"
        )
    task_pks = np.asarray([pk for pk, _ in tasks], dtype=np.int64)
    return _EMItems(
        worker_index=np.searchsorted(np.asarray(workers, dtype=np.int64), worker_pk),
        item_index=np.searchsorted(task_pks, task_pk),
        label=label,
        truth=np.full(len(tasks), -1, dtype=np.int64),
        categories=[category for _, category in tasks],
        gold_counts=None,
        n_answers=int(worker_pk.size),
        n_gold_answers=0,
    )


def _with_gold_items(
    items: _EMItems, *, project: Project, workers: list[int], labels: list[str]
) -> _EMItems:
    """``items`` followed by the answered gold items (``m .. m+g-1``) and their answers."""
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
    gold_index = np.searchsorted(np.asarray(workers, dtype=np.int64), gold_worker)
    m = len(items.truth)
    return _EMItems(
        worker_index=np.concatenate([items.worker_index, gold_index]),
        item_index=np.concatenate([items.item_index, m + np.searchsorted(gold_pks, gold_item)]),
        label=np.concatenate([items.label, gold_label]),
        truth=np.concatenate([items.truth, gold_truth]),
        categories=items.categories + gold_categories,
        gold_counts=np.bincount(gold_index, minlength=len(workers)),
        n_answers=items.n_answers,
        n_gold_answers=int(gold_worker.size),
    )


def _em_matrix_save(
    *,
    project: Project,
    estimate,
    items: _EMItems,
    use_gold: bool,
    workers: list[int],
    tasks: list[tuple[int, str]],
    categories: list[str],
) -> QualityMatrix:
    """Store the EM ``estimate`` as the project's new quality matrix (and its confusion
    matrices under Dawid–Skene), with the fit's figures in its details."""
    matrix = QualityMatrix(
        project=project,
        source=QualitySource.GOLD_AND_ANSWERS if use_gold else QualitySource.FROM_ANSWERS,
        details={
            "model": estimate.model,
            "iterations": estimate.iterations,
            "converged": estimate.converged,
            "log_likelihood": estimate.log_likelihood,
            "n_answers": items.n_answers,
            "n_gold_answers": items.n_gold_answers,
            "labels": len(project.labels),
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
        task_ids=np.asarray([pk for pk, _ in tasks], dtype=np.int64),
        task_categories=[category for _, category in tasks],
        gold_counts=items.gold_counts,
    )
    if estimate.model == "dawid-skene":  # one-coin's matrices say no more than its accuracies
        matrix.set_confusion(estimate.confusion)
    matrix.save()
    return matrix


def _log_em(
    *, matrix: QualityMatrix, estimate, items: _EMItems, workers: list, tasks: list
) -> None:
    """Log the stored EM estimate, with a warning when EM stopped before converging."""
    if not estimate.converged:
        logger.warning(
            "quality matrix %s of project %s: EM (%s) did not converge in %d iterations; "
            "stored with converged=false",
            matrix.pk,
            matrix.project_id,
            estimate.model,
            estimate.iterations,
        )
    logger.info(
        "estimated quality matrix %s of project %s by EM (%s): %d x %d from %d answers and %d "
        "gold answers, %d iterations",
        matrix.pk,
        matrix.project_id,
        estimate.model,
        len(workers),
        len(tasks),
        items.n_answers,
        items.n_gold_answers,
        estimate.iterations,
    )


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
