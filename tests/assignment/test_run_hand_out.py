"""A comparison's run handed out to the workers counts from then on like a round started on its
own: its unanswered pairs are pending (budget, caps, never assigned again), and it can be
withdrawn. It is refused whenever it would be infeasible or count twice."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone
from project_data import answer_every_pair, executed, queued_round

from assignment import selectors, services
from assignment.errors import RunStateError, RunValidationError
from assignment.models import AssignmentRun, Project, Task, Worker
from assignment.services import runs as runs_module

pytestmark = pytest.mark.django_db

N_WORKERS, N_TASKS = 8, 20


def compared(project, *, methods=("greedy", "random"), budgets=(20,), **options):
    """A comparison of ``methods`` at ``budgets`` (``comparison_create``'s ``options``), every
    run computed here; its runs by method."""
    comparison = services.comparison_create(
        project=project,
        methods=list(methods),
        budgets=list(budgets),
        seed=0,
        enqueue=False,
        **options,
    )
    return {run.method: executed(run) for run in comparison.runs.order_by("pk")}


def pairs_grid(*runs):
    """The pairs of ``runs`` as an (n, m) count grid (a pair in two runs counts 2)."""
    counts = np.zeros((N_WORKERS, N_TASKS), int)
    for run in runs:
        np.add.at(counts, tuple(run.pairs.T), 1)
    return counts


@pytest.mark.parametrize("in_rounds", [False, True], ids=["whole project", "in rounds"])
def test_a_handed_out_comparison_run_counts_like_a_round_in_budget_caps_and_pending(
    project_with_round_defaults, in_rounds
):
    runs = compared(project_with_round_defaults, next_round=in_rounds)
    assert runs["greedy"].n_assigned == 20
    handed = services.run_hand_out(run=runs["greedy"])
    assert handed.handed_out_at is not None
    assert list(selectors.rounds_counted(project=project_with_round_defaults)) == [handed]
    nxt = queued_round(project_with_round_defaults)
    assert nxt.round_start["pending"] == 20
    assert nxt.round_start["pending_runs"] == [handed.pk]
    assert nxt.budget == 40 - 20  # its pending pairs used the project's budget
    nxt = executed(nxt)
    both = pairs_grid(handed, nxt)
    assert both.max() == 1, "a pending pair was assigned again"
    assert (both.sum(axis=0) <= 3).all()  # the task caps count its pairs
    assert (both.sum(axis=1) <= 6).all()  # and so do the worker caps


def test_answers_to_a_handed_out_runs_pairs_leave_only_the_rest_pending(
    project_with_round_defaults,
):
    handed = services.run_hand_out(run=compared(project_with_round_defaults)["greedy"])
    half = AssignmentRun.objects.get(pk=handed.pk)
    half.set_pairs(*handed.pairs[::2].T)
    answer_every_pair(half, seed=2)
    nxt = queued_round(project_with_round_defaults)
    assert nxt.round_start["answers"] == 10
    assert nxt.round_start["pending"] == 10
    assert nxt.budget == 40 - 10 - 10


def test_a_handed_out_run_is_withdrawn_like_a_round_and_another_alternative_may_go_out(
    project_with_round_defaults,
):
    runs = compared(project_with_round_defaults)
    services.run_hand_out(run=runs["greedy"])
    withdrawn = services.run_withdraw(run=runs["greedy"])
    assert withdrawn.withdrawn_at is not None
    assert withdrawn.handed_out_at is not None  # it was out, then withdrawn
    assert not selectors.rounds_counted(project=project_with_round_defaults).exists()
    other = services.run_hand_out(run=runs["random"])
    assert other.handed_out_at is not None
    assert queued_round(project_with_round_defaults).round_start["pending_runs"] == [other.pk]


@pytest.mark.parametrize(
    "kind", ["round of its own", "whole project", "queued", "handed out", "sibling", "withdrawn"]
)
def test_hand_out_is_refused_for_a_run_it_does_not_apply_to(project_with_round_defaults, kind):
    project = project_with_round_defaults
    if kind == "round of its own":
        run = executed(queued_round(project, budget=5))
        reason = "is not a comparison's run: a round started on its own counts as handed out"
    elif kind == "whole project":
        run = executed(services.run_create(project=project, method="greedy", enqueue=False))
        reason = "is not a comparison's run"
    elif kind == "queued":
        comparison = services.comparison_create(project=project, methods=["greedy"], enqueue=False)
        run = comparison.runs.get()
        reason = "is queued: only a succeeded run has pairs to hand out"
    elif kind == "handed out":
        run = compared(project)["greedy"]  # kept as it was: the service reads the run anew
        services.run_hand_out(run=AssignmentRun.objects.get(pk=run.pk))
        reason = "was handed out already, at"
    elif kind == "sibling":
        runs = compared(project)
        services.run_hand_out(run=runs["random"])
        run = runs["greedy"]
        reason = rf"run #{runs['random'].pk} of comparison #{run.comparison_id} was handed out"
    else:
        run = services.run_withdraw(run=services.run_hand_out(run=compared(project)["greedy"]))
        reason = "was handed out and withdrawn, at .*: withdrawing is final"
    before = AssignmentRun.objects.get(pk=run.pk).handed_out_at
    with pytest.raises(RunStateError, match=reason):
        services.run_hand_out(run=run)
    assert AssignmentRun.objects.get(pk=run.pk).handed_out_at == before


def test_hand_out_is_refused_while_a_round_is_queued(project_with_round_defaults):
    runs = compared(project_with_round_defaults)
    queued = queued_round(project_with_round_defaults, budget=5)
    with pytest.raises(
        RunStateError, match=rf"cannot be handed out now: run #{queued.pk}, a round"
    ):
        services.run_hand_out(run=runs["greedy"])
    assert AssignmentRun.objects.get(pk=runs["greedy"].pk).handed_out_at is None


def test_a_comparison_older_than_a_round_started_since_is_refused_as_stale(
    project_with_round_defaults,
):
    runs = compared(project_with_round_defaults, next_round=True, budgets=(10,))
    assert runs["greedy"].round_start["pending_runs"] == []
    since = executed(queued_round(project_with_round_defaults, budget=10))
    with pytest.raises(
        RunStateError,
        match=rf"computed counting the pending pairs of no round, and the project now counts "
        rf"those of round #{since.pk} \(rounds were started, handed out or withdrawn since\)",
    ):
        services.run_hand_out(run=runs["greedy"])


def test_a_comparison_that_counted_a_round_withdrawn_since_is_refused_as_stale(
    project_with_round_defaults,
):
    first = executed(queued_round(project_with_round_defaults, budget=10))
    runs = compared(project_with_round_defaults, next_round=True, budgets=(10,))
    assert runs["greedy"].round_start["pending_runs"] == [first.pk]
    services.run_withdraw(run=first)
    with pytest.raises(
        RunStateError,
        match=rf"pending pairs of round #{first.pk}, and the project now counts those of no round",
    ):
        services.run_hand_out(run=runs["greedy"])


def test_two_comparisons_from_the_same_state_cannot_both_be_handed_out(
    project_with_round_defaults,
):
    one = compared(project_with_round_defaults)["greedy"]
    two = compared(project_with_round_defaults)["greedy"]
    services.run_hand_out(run=one)
    with pytest.raises(
        RunStateError,
        match=rf"its comparison was on the whole project, not a next round, so its pairs count "
        rf"neither the answers in hand nor the pending pairs of round #{one.pk}",
    ):
        services.run_hand_out(run=two)
    assert AssignmentRun.objects.get(pk=two.pk).handed_out_at is None


def _answer_one_pair(run):
    """An answer to ``run``'s first pair (as if its worker had it from elsewhere)."""
    row, column = run.pairs[0].tolist()
    answered = AssignmentRun.objects.get(pk=run.pk)
    answered.set_pairs([row], [column])
    answer_every_pair(answered)
    return Worker.objects.get(pk=run.quality_matrix.worker_ids[row]).external_id


def _first_worker_off(run):
    Worker.objects.filter(pk=run.quality_matrix.worker_ids[run.pairs[0][0]]).update(active=False)


def _first_task_capped(run):
    Task.objects.filter(pk=run.quality_matrix.task_ids[run.pairs[0][1]]).update(max_workers=0)


def _budget_lowered(run):
    Project.objects.filter(pk=run.project_id).update(default_budget=10)


@pytest.mark.parametrize(
    ("change", "budgets", "reason"),
    [
        (_answer_one_pair, (20,), r"1 of its pairs have an answer already \(e.g. worker 'w\d+'"),
        (
            _first_worker_off,
            (20,),
            r"worker 'w\d+' has room for 0 more tasks \(its cap less",
        ),
        (_first_task_capped, (20,), r"task 't\d+' has room for 0 more workers \(its cap less"),
        (_budget_lowered, (), r"it assigns 40 pairs and what remains of the project's budget "),
    ],
    ids=["answered", "worker cap", "task cap", "budget"],
)
def test_a_run_whose_pairs_no_longer_fit_the_round_plan_is_refused_saying_why(
    project_with_round_defaults, change, budgets, reason
):
    run = compared(project_with_round_defaults, budgets=budgets)["greedy"]
    assert run.n_assigned == (budgets[0] if budgets else 40)
    change(run)
    with pytest.raises(RunStateError, match=f"run #{run.pk} cannot be handed out now: {reason}"):
        services.run_hand_out(run=run)
    assert AssignmentRun.objects.get(pk=run.pk).handed_out_at is None


@pytest.mark.parametrize(
    ("change", "budgets", "reason"),
    [
        (_answer_one_pair, (20,), r"1 of its pairs have an answer already"),
        (_budget_lowered, (), r"it assigns 40 pairs and what remains of the project's budget "),
    ],
    ids=["answered", "budget"],
)
def test_the_refusal_a_page_shows_is_the_one_hand_out_gives_and_it_changes_nothing(
    project_with_round_defaults, change, budgets, reason
):
    run = compared(project_with_round_defaults, budgets=budgets)["greedy"]
    assert services.run_hand_out_refusal(run=run) == ""
    change(run)
    refusal = services.run_hand_out_refusal(run=run)
    assert re.match(f"run #{run.pk} cannot be handed out now: {reason}", refusal)
    with pytest.raises(RunStateError) as refused:
        services.run_hand_out(run=run)
    assert str(refused.value) == refusal
    assert AssignmentRun.objects.get(pk=run.pk).handed_out_at is None
    whole = executed(services.run_create(project=run.project, method="random", enqueue=False))
    assert "is not a comparison's run" in services.run_hand_out_refusal(run=whole)


def test_a_run_of_a_comparison_given_budgets_is_held_to_its_own_budget_as_a_round_is(
    project_with_round_defaults,
):
    run = compared(project_with_round_defaults, budgets=(20,))["greedy"]
    _budget_lowered(run)  # 10 left of the project's budget, as a round given 20 may spend
    assert services.run_hand_out(run=run).handed_out_at is not None


def test_a_round_planned_while_a_run_was_handed_out_is_refused(
    project_with_round_defaults, monkeypatch
):
    run = compared(project_with_round_defaults)["greedy"]
    planned = runs_module._round_start

    def hand_out_meanwhile(*args, **kwargs):
        planned(*args, **kwargs)
        services.run_hand_out(run=run)  # between the round's plan and its save

    monkeypatch.setattr(runs_module, "_round_start", hand_out_meanwhile)
    with pytest.raises(RunValidationError, match="changed while this one was planned"):
        queued_round(project_with_round_defaults)
    assert not AssignmentRun.objects.filter(comparison__isnull=True).exists()


def test_the_database_allows_one_handed_out_run_per_comparison_and_only_a_succeeded_one(
    project_with_round_defaults,
):
    runs = compared(project_with_round_defaults)
    now = timezone.now()
    AssignmentRun.objects.filter(pk=runs["greedy"].pk).update(handed_out_at=now)
    with pytest.raises(IntegrityError), transaction.atomic():
        AssignmentRun.objects.filter(pk=runs["random"].pk).update(handed_out_at=now)
    own = queued_round(project_with_round_defaults, budget=5)
    with pytest.raises(IntegrityError), transaction.atomic():
        AssignmentRun.objects.filter(pk=own.pk).update(handed_out_at=now)
