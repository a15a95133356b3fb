"""Comparisons: several methods (and budgets) queued together, and their upper bound."""

from __future__ import annotations

import logging

from django.db import transaction

from assignment.engine import (
    accuracy_upper_bounds,
)
from assignment.errors import (
    RunValidationError,
)
from assignment.models import (
    MAX_COUNT,
    AssignmentRun,
    Comparison,
    Method,
    Project,
)
from assignment.services.runs import (
    _check_active_runs,
    _check_round_targets,
    _fitting_confusion,
    _next_round_plan,
    _quality_matrix_for_runs,
    _run_new,
    _run_problem,
)

logger = logging.getLogger(__name__)


#: Most runs one comparison may queue (methods × budgets).
MAX_COMPARISON_RUNS = 60


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
    rounds_left: int | None = None,
    shards: int = 1,
    enqueue: bool = True,
) -> Comparison:
    """A comparison of ``methods`` on the project's latest quality matrix: one run per method
    and budget (per method with the default budget when ``budgets`` is empty), all queued at
    once and handed to the workers after the transaction commits, so they run in parallel.
    With ``next_round`` every run is the next round (see :func:`run_create`), all from the
    same answers in hand, read once; the upper bound is then the round's. With ``shards`` > 1
    every run is solved in that many shards (see :func:`run_create`).

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
        lambda budget: (
            isinstance(budget, int) and not isinstance(budget, bool) and 1 <= budget <= MAX_COUNT
        ),
        f"an integer from 1 to {MAX_COUNT:,}",
    )
    n_runs = len(methods) * max(1, len(budgets))
    if n_runs > MAX_COMPARISON_RUNS:
        raise RunValidationError(
            f"a comparison queues at most {MAX_COMPARISON_RUNS} runs (methods x budgets), "
            f"this one {n_runs}"
        )
    matrix = _quality_matrix_for_runs(project=project)
    _check_round_targets(
        next_round, target_posterior, target_accuracy, rounds_left, len(project.labels)
    )
    round_plan = None
    if next_round:
        round_plan = _next_round_plan(
            project=project,
            matrix=matrix,
            max_workers_per_task=max_workers_per_task,
            max_tasks_per_worker=max_tasks_per_worker,
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
                    round_targets=(
                        (target_posterior, target_accuracy, rounds_left) if next_round else None
                    ),
                    round_plan=round_plan,
                    shards=shards,
                )
        if enqueue:
            from assignment.tasks import comparison_upper_bound_task

            comparison_id = comparison.pk
            transaction.on_commit(lambda: comparison_upper_bound_task.delay(comparison_id))
    logger.info(
        "comparison %s of project %s: %d runs of %s", comparison.pk, project.pk, n_runs, methods
    )
    return comparison


_NO_BOUND_UNDER_CONFUSION = (
    "the runs are chosen and scored under the quality's Dawid\u2013Skene confusion matrices; the "
    "upper bound is written for the symmetric worker model, not for them"
)


def comparison_upper_bound_compute(*, comparison_id: int) -> dict | None:
    """Compute and store the accuracy upper bound at each budget of a comparison's runs.

    The bound drops the per-worker caps (:func:`assignment.engine.accuracy_upper_bounds`), so
    every method's curve lies below it. Stored in ``comparison.upper_bound`` as
    ``{"status": "done", "points": [[budget, value], ...]}``, or ``"not applicable"`` with a
    message when a task may take more workers than exact accuracies allow or when the runs are
    chosen under Dawid–Skene confusion matrices (the bound is the symmetric model's). Only a
    ``pending`` bound is computed and stored (a duplicate delivery does nothing); returns what
    was stored, or None.
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
    if _fitting_confusion(run) is not None:
        upper_bound = {"status": "not applicable", "message": _NO_BOUND_UNDER_CONFUSION}
    else:
        upper_bound = _upper_bound_points(run, budgets)
    if not pending.update(upper_bound=upper_bound):
        return None
    logger.info("comparison %s: upper bound %s", comparison_id, upper_bound["status"])
    return upper_bound


def _upper_bound_points(run: AssignmentRun, budgets: list[int]) -> dict:
    """The symmetric model's upper bound at each budget, or why it does not apply."""
    try:
        bounds = accuracy_upper_bounds(_run_problem(run), budgets=budgets)
    except ValueError as exc:
        return {"status": "not applicable", "message": str(exc)}
    points = [[budget, bound.value] for budget, bound in zip(budgets, bounds, strict=True)]
    return {"status": "done", "points": points}


def comparison_upper_bound_fail(*, comparison_id: int, reason: str) -> bool:
    """Mark a pending upper bound as failed with ``reason``; False if it was not pending."""
    return bool(
        Comparison.objects.filter(pk=comparison_id, upper_bound__status="pending").update(
            upper_bound={"status": "failed", "message": reason}
        )
    )
