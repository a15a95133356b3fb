"""Runs in rounds: the next round conditions on the answers collected so far."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
from project_data import (
    answer_every_pair,
    executed,
    import_text,
    make_project,
    project_nearly_settled,
    queued_round,
)

from assignment import selectors, services
from assignment.engine import METHODS, expected_accuracy
from assignment.engine.aggregate import aggregate
from assignment.errors import ProjectValidationError, RunStateError, RunValidationError
from assignment.models import (
    Answer,
    AssignmentRun,
    Project,
    QualityMatrix,
    Task,
    Worker,
)

pytestmark = pytest.mark.django_db

N_WORKERS, N_TASKS = 8, 20


def grid(run):
    """The answers in the database as an (n, m) -1/0/1 grid over the run's matrix."""
    matrix = run.quality_matrix
    row = {int(pk): i for i, pk in enumerate(matrix.worker_ids)}
    column = {int(pk): j for j, pk in enumerate(matrix.task_ids)}
    out = np.full((N_WORKERS, N_TASKS), -1)
    for worker, task, label in Answer.objects.values_list("worker_id", "task_id", "label"):
        out[row[worker], column[task]] = run.project.labels.index(label)
    return out


def test_a_next_round_counts_the_answers_in_caps_budget_and_priors(project_with_round_defaults):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=20, enqueue=False
        )
    )
    answer_every_pair(first)
    second = services.run_create(
        project=project_with_round_defaults,
        method="tvcs-iht",
        seed=1,
        next_round=True,
        enqueue=False,
    )
    assert second.next_round
    assert second.budget == 40 - 20  # what remains of the project's budget
    assert second.answers_through == Answer.objects.latest("pk").pk
    assert second.round_start["answers"] == 20
    second = executed(second)
    before = np.zeros((N_WORKERS, N_TASKS), bool)
    before[tuple(first.pairs.T)] = True
    now = np.zeros_like(before)
    now[tuple(second.pairs.T)] = True
    assert not (before & now).any(), "an answered pair was assigned again"
    both = before | now
    assert both.sum(axis=0).max() <= 3
    assert both.sum(axis=1).max() <= 6
    assert both.sum() <= 40
    q = first.quality_matrix.values
    posterior = aggregate(grid(first), q, prior=0.4).posterior
    assert second.expected_accuracy == pytest.approx(
        expected_accuracy(q, now, prior=posterior), abs=1e-12
    )
    assert second.round_start["accuracy_now"] == pytest.approx(
        np.maximum(posterior, 1 - posterior).mean(), abs=1e-12
    )
    assert second.expected_accuracy > second.round_start["accuracy_now"]


@pytest.mark.parametrize("method", METHODS)
def test_every_method_runs_in_rounds_within_the_caps_over_all_rounds(
    project_with_round_defaults, method
):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="random", budget=15, seed=0, enqueue=False
        )
    )
    answer_every_pair(first, seed=1)
    second = executed(
        services.run_create(
            project=project_with_round_defaults,
            method=method,
            seed=2,
            next_round=True,
            budget=12,
            enqueue=False,
        )
    )
    assert second.n_assigned <= 12
    done = grid(first) >= 0
    x = np.zeros_like(done)
    x[tuple(second.pairs.T)] = True
    assert not (done & x).any()
    assert ((done | x).sum(axis=0) <= 3).all()
    assert ((done | x).sum(axis=1) <= 6).all()


def test_answers_that_arrive_after_a_round_is_queued_wait_for_the_next_one(
    project_with_round_defaults,
):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=10, enqueue=False
        )
    )
    answer_every_pair(first)
    second = queued_round(project_with_round_defaults)
    late_worker, late_task = (
        Worker.objects.get(external_id="w0"),
        Task.objects.get(external_id="t19"),
    )
    Answer.objects.filter(worker=late_worker, task=late_task).delete()
    Answer.objects.create(worker=late_worker, task=late_task, label="1")
    second = executed(second)
    assert second.round_start["answers"] == 10
    assert second.budget == 30


def test_tasks_at_the_target_posterior_get_nobody_in_the_round(project_with_round_defaults):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=40, enqueue=False
        )
    )
    answer_every_pair(first)
    q = first.quality_matrix.values
    posterior = aggregate(grid(first), q, prior=0.4).posterior
    confident = np.maximum(posterior, 1 - posterior) >= 0.9
    assert confident.any()
    assert not confident.all()
    Project.objects.filter(pk=project_with_round_defaults.pk).update(
        default_max_workers_per_task=5, default_budget=80
    )
    project_with_round_defaults.refresh_from_db()
    second = executed(queued_round(project_with_round_defaults, target_posterior=0.9))
    assert second.round_start["open_tasks"] == int((~confident).sum())
    assert set(second.pairs[:, 1].tolist()).isdisjoint(np.flatnonzero(confident).tolist())


def test_a_round_is_refused_once_the_target_accuracy_is_reached(project_with_round_defaults):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=30, enqueue=False
        )
    )
    answer_every_pair(first)
    with pytest.raises(
        RunValidationError, match=r"already give an expected accuracy of 0.*target_accuracy 0.5"
    ):
        queued_round(project_with_round_defaults, target_accuracy=0.5)
    assert AssignmentRun.objects.count() == 1


def test_a_round_with_the_budget_spent_is_refused_unless_given_one(project_with_round_defaults):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=40, enqueue=False
        )
    )
    answer_every_pair(first)
    with pytest.raises(
        RunValidationError,
        match="nothing left to spend of the project's budget of 40 pairs: 40 answers are in hand;",
    ):
        queued_round(project_with_round_defaults)
    Project.objects.filter(pk=project_with_round_defaults.pk).update(default_max_workers_per_task=4)
    project_with_round_defaults.refresh_from_db()
    extra = queued_round(project_with_round_defaults, budget=5)
    assert extra.budget == 5


@pytest.mark.parametrize("method", ["tvcs-iht", "greedy"])
@pytest.mark.parametrize("target_posterior", [None, 1.0])
def test_a_round_where_one_more_answer_changes_no_vote_assigns_nobody_and_says_why(
    method, target_posterior
):
    project = project_nearly_settled()
    run = executed(queued_round(project, method=method, target_posterior=target_posterior))
    assert run.round_start["open_tasks"] == 10  # below 1, so open even at the target 1
    assert run.n_assigned == 0
    assert run.expected_accuracy == pytest.approx(run.round_start["accuracy_now"], abs=1e-12)
    reason = {
        "tvcs-iht": "no pair the caps allow has a positive gain",
        "greedy": "no positive gain",
    }
    assert reason[method] in run.progress_message


def test_targets_without_a_round_are_refused(project_with_round_defaults):
    with pytest.raises(RunValidationError, match="stopping rules of a next round") as refused:
        services.run_create(
            project=project_with_round_defaults,
            method="greedy",
            target_posterior=0.9,
            enqueue=False,
        )
    assert '"round": true over the API, "Next round" on the page' in str(refused.value)


@pytest.mark.parametrize(("field", "value"), [("target_posterior", 0.5), ("target_accuracy", 1.5)])
def test_a_target_out_of_range_is_refused_naming_it(project_with_round_defaults, field, value):
    with pytest.raises(RunValidationError, match=field):
        services.run_create(
            project=project_with_round_defaults,
            method="greedy",
            next_round=True,
            enqueue=False,
            **{field: value},
        )


def test_an_answer_outside_the_label_set_makes_the_round_refuse(project_with_round_defaults):
    worker, task = Worker.objects.first(), Task.objects.first()
    Answer.objects.create(worker=worker, task=task, label="maybe")
    with pytest.raises(
        RunValidationError, match="label 'maybe', which is not in the project's label set"
    ):
        queued_round(project_with_round_defaults)


def test_a_first_round_without_answers_is_the_plain_run(project_with_round_defaults):
    plain = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=25, enqueue=False
        )
    )
    first = executed(
        services.run_create(
            project=project_with_round_defaults,
            method="greedy",
            budget=25,
            next_round=True,
            enqueue=False,
        )
    )
    assert first.round_start["answers"] == 0
    assert first.answers_through is None
    np.testing.assert_array_equal(first.pairs, plain.pairs)
    assert first.expected_accuracy == plain.expected_accuracy


def test_a_comparison_in_rounds_runs_every_method_from_the_same_answers_under_its_bound(
    project_with_round_defaults,
):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=20, enqueue=False
        )
    )
    answer_every_pair(first)
    comparison = services.comparison_create(
        project=project_with_round_defaults,
        methods=["tvcs-iht", "greedy", "random"],
        budgets=[6, 12],
        seed=0,
        next_round=True,
        enqueue=False,
    )
    runs = list(comparison.runs.order_by("pk"))
    assert len(runs) == 6
    assert {run.answers_through for run in runs} == {Answer.objects.latest("pk").pk}
    assert all(run.next_round and run.round_start["answers"] == 20 for run in runs)
    answered = grid(first) >= 0
    for run in runs:
        run = executed(run)
        x = np.zeros_like(answered)
        x[tuple(run.pairs.T)] = True
        assert not (x & answered).any()
        assert x.sum() <= run.budget
    bound = dict(
        (budget, value)
        for budget, value in services.comparison_upper_bound_compute(comparison_id=comparison.pk)[
            "points"
        ]
    )
    for run in AssignmentRun.objects.filter(comparison=comparison):
        assert run.expected_accuracy <= bound[run.budget] + 1e-12


def test_a_comparison_in_rounds_with_nothing_to_do_is_refused_whole(project_with_round_defaults):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=40, enqueue=False
        )
    )
    answer_every_pair(first)
    with pytest.raises(RunValidationError, match="nothing left to spend"):
        services.comparison_create(
            project=project_with_round_defaults,
            methods=["greedy", "random"],
            next_round=True,
            enqueue=False,
        )
    assert AssignmentRun.objects.count() == 1


def test_a_long_round_message_is_kept_whole(project_with_round_defaults):
    first = executed(queued_round(project_with_round_defaults, budget=10))  # never answered
    layered = executed(queued_round(project_with_round_defaults, method="tvcs-iht", rounds_left=3))
    assert layered.round_start["pending"] == first.n_assigned > 0
    message = layered.progress_message
    assert "the run's expected accuracy is after those alone" in message
    assert message.endswith("their answers left out of the expected accuracy (conservative)")
    assert len(message) > 300  # what the former field cut in the middle of a word


def test_a_round_with_rounds_to_go_takes_one_layer_of_its_plan_for_all_of_them(
    project_with_round_defaults,
):
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=10, enqueue=False
        )
    )
    answer_every_pair(first)
    layered = executed(queued_round(project_with_round_defaults, rounds_left=3))
    assert layered.budget == 30  # the plan is for the rest of the project's budget
    assert layered.round_start["rounds_left"] == 3
    x = np.zeros((N_WORKERS, N_TASKS), bool)
    x[tuple(layered.pairs.T)] = True
    answered = grid(first) >= 0
    assert not (x & answered).any()
    assert x.sum(axis=0).max() <= 1, "an earlier round takes one layer: one answer a task"
    # at most max(30 // 3, tasks without an answer) pairs, and a first answer for those
    unanswered = ~answered.any(axis=0)
    assert x.sum() <= max(10, int(unanswered.sum()))
    assert x[:, unanswered].any(axis=0).all()
    assert "the run's expected accuracy is after those alone" in layered.progress_message
    # The plan's pairs it takes, and the check answers it adds, add up to the pairs it has.
    said = re.search(
        r"planned (\d+) pairs for 3 rounds, expected accuracy 0\.\d{4} after all of them "
        r".*this one takes (\d+) of them in layers"
        r"(?: and (\d+) check answers?)?",
        layered.progress_message,
    )
    planned, taken, checks = (int(group or 0) for group in said.groups())
    assert taken <= planned
    assert taken + checks == x.sum()
    q = first.quality_matrix.values
    posterior = aggregate(grid(first), q, prior=0.4).posterior
    assert layered.expected_accuracy == pytest.approx(
        expected_accuracy(q, x, prior=posterior), abs=1e-12
    )


def test_rounds_left_without_a_round_is_refused(project_with_round_defaults):
    with pytest.raises(RunValidationError, match="rounds_left says how many rounds"):
        services.run_create(
            project=project_with_round_defaults, method="greedy", rounds_left=2, enqueue=False
        )


def test_a_next_round_of_three_labels_conditions_on_the_k_class_posteriors(
    project_with_round_defaults,
):
    from assignment.engine.multiclass import aggregate_multiclass, expected_accuracy_multiclass

    Project.objects.filter(pk=project_with_round_defaults.pk).update(labels=["a", "b", "c"])
    project_with_round_defaults.refresh_from_db()
    first = executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=20, enqueue=False
        )
    )
    matrix = first.quality_matrix
    rng = np.random.default_rng(4)
    rows, columns = first.pairs.T
    said = rng.integers(0, 3, rows.size)
    for row, column, label in zip(rows.tolist(), columns.tolist(), said.tolist(), strict=True):
        Answer.objects.create(
            worker_id=int(matrix.worker_ids[row]),
            task_id=int(matrix.task_ids[column]),
            label="abc"[label],
        )
    second = executed(
        services.run_create(
            project=project_with_round_defaults, method="q-lp", next_round=True, enqueue=False
        )
    )
    q = matrix.values
    posterior = aggregate_multiclass(
        task_index=columns,
        quality=q[rows, columns],
        label=said,
        prior=np.full((N_TASKS, 3), 1 / 3),
        n_labels=3,
    ).posterior
    assert second.round_start["accuracy_now"] == pytest.approx(posterior.max(axis=1).mean())
    x = np.zeros((N_WORKERS, N_TASKS), bool)
    x[tuple(second.pairs.T)] = True
    assert not x[rows, columns].any()
    assert second.expected_accuracy == pytest.approx(
        expected_accuracy_multiclass(q, x, prior=posterior, n_labels=3), abs=1e-9
    )


@pytest.mark.parametrize(("target", "taken"), [(0.45, True), (1 / 3, False), (0.3, False)])
def test_a_round_of_three_labels_takes_a_target_posterior_above_one_third(
    project_with_round_defaults, target, taken
):
    Project.objects.filter(pk=project_with_round_defaults.pk).update(labels=["a", "b", "c"])
    project_with_round_defaults.refresh_from_db()
    executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=20, enqueue=False
        )
    )
    create = functools.partial(
        services.run_create,
        project=project_with_round_defaults,
        method="greedy",
        next_round=True,
        target_posterior=target,
        enqueue=False,
    )
    preview = services.round_preview(project=project_with_round_defaults, target_posterior=target)
    assert (preview.status != "error") == taken, preview.message
    if taken:
        assert create().target_posterior == target
    else:
        with pytest.raises(RunValidationError, match=r"above 1/3, at most 1 \(the likeliest"):
            create()


def test_a_project_of_three_labels_hands_the_engine_each_tasks_prior_distribution():
    project = make_project("pets", labels=["cat", "dog", "bird"])
    prior = {"cat": 0.6, "dog": 0.2, "bird": 0.2}
    services.project_update(project=project, default_label_prior=prior)
    import_text(project, "workers", "worker_id\nw1\nw2\n")
    import_text(
        project,
        "tasks",
        'task_id,category,prior\nt1,x,"{""cat"": 0.1, ""dog"": 0.1, ""bird"": 0.8}"\nt2,x,\n',
    )
    import_text(project, "quality", "worker_id,category,quality\nw1,x,0.7\nw2,x,0.8\n")
    matrix = QualityMatrix.objects.get(project=project)
    problem = selectors.project_problem(
        project=project, matrix=matrix, budget=4, max_workers_per_task=2, max_tasks_per_worker=2
    )
    assert problem.n_labels == 3
    np.testing.assert_allclose(problem.prior_distribution, [[0.1, 0.1, 0.8], [0.6, 0.2, 0.2]])


def pairs_grid(*runs):
    """The pairs of ``runs`` as an (n, m) bool grid (a pair in two runs counts 2 in a sum)."""
    counts = np.zeros((N_WORKERS, N_TASKS), int)
    for run in runs:
        np.add.at(counts, tuple(run.pairs.T), 1)
    return counts


def test_a_second_round_before_the_answers_counts_the_first_rounds_pairs_as_spent(
    project_with_round_defaults,
):
    first = executed(queued_round(project_with_round_defaults, budget=20))
    assert first.n_assigned == 20
    second = queued_round(project_with_round_defaults)
    assert second.budget == 40 - 20  # the pending pairs used the project's budget
    assert second.round_start["answers"] == 0
    assert second.round_start["pending"] == 20
    assert second.round_start["pending_runs"] == [first.pk]
    second = executed(second)
    both = pairs_grid(first, second)
    assert both.max() == 1, "a pending pair was assigned again"
    assert (both.sum(axis=0) <= 3).all()  # the task caps count the pending pairs
    assert (both.sum(axis=1) <= 6).all()  # and so do the worker caps
    assert both.sum() <= 40
    # No answer is in hand: the round is chosen and scored under the tasks' own priors, the
    # pending pairs adding nothing (their answers are not known): a conservative figure.
    q = first.quality_matrix.values
    now = pairs_grid(second).astype(bool)
    assert second.expected_accuracy == pytest.approx(
        expected_accuracy(q, now, prior=0.4), abs=1e-12
    )
    assert expected_accuracy(q, both.astype(bool), prior=0.4) > second.expected_accuracy
    assert "20 pairs of earlier rounds await answers: counted as spent" in (second.progress_message)


def test_pending_pairs_are_those_of_the_rounds_without_an_answer_yet(project_with_round_defaults):
    first = executed(queued_round(project_with_round_defaults, budget=20))
    half = AssignmentRun.objects.get(pk=first.pk)
    half.assignment_blob = None
    half.set_pairs(*first.pairs[::2].T)  # answer every other pair of the first round
    answer_every_pair(half, seed=2)
    second = executed(queued_round(project_with_round_defaults))
    assert second.round_start["answers"] == 10
    assert second.round_start["pending"] == 10
    assert second.budget == 40 - 10 - 10
    both = pairs_grid(first, second)
    assert both.max() == 1
    assert (both.sum(axis=0) <= 3).all()
    assert (both.sum(axis=1) <= 6).all()
    q = first.quality_matrix.values
    posterior = aggregate(grid(first), q, prior=0.4).posterior  # the 10 answers alone
    assert second.expected_accuracy == pytest.approx(
        expected_accuracy(q, pairs_grid(second).astype(bool), prior=posterior), abs=1e-12
    )


def test_a_round_with_the_budget_in_pending_pairs_is_refused_saying_so(
    project_with_round_defaults,
):
    executed(
        services.run_create(
            project=project_with_round_defaults,
            method="random",
            next_round=True,
            seed=0,
            enqueue=False,
        )
    )
    with pytest.raises(
        RunValidationError,
        match="nothing left to spend of the project's budget of 40 pairs: 0 answers are in hand "
        "and 40 pairs of earlier rounds await their answers; give this round a budget of its own",
    ):
        queued_round(project_with_round_defaults)


def test_a_round_is_refused_while_another_round_is_queued(project_with_round_defaults):
    queued = queued_round(project_with_round_defaults, budget=5)
    with pytest.raises(RunValidationError, match=rf"run #{queued.pk}, a round of this project"):
        queued_round(project_with_round_defaults)
    services.run_cancel(run=queued)
    queued_round(project_with_round_defaults)


def test_only_rounds_started_on_their_own_count_not_whole_runs_or_a_comparisons(
    project_with_round_defaults,
):
    executed(
        services.run_create(
            project=project_with_round_defaults, method="greedy", budget=10, enqueue=False
        )
    )
    comparison = services.comparison_create(
        project=project_with_round_defaults,
        methods=["greedy", "random"],
        budgets=[5],
        seed=0,
        next_round=True,
        enqueue=False,
    )
    for run in comparison.runs.all():
        executed(run)
    nxt = queued_round(project_with_round_defaults)
    assert nxt.round_start["pending"] == 0
    assert nxt.budget == 40


def test_pending_pairs_of_a_round_on_an_older_quality_matrix_are_found_by_worker_and_task(
    project_with_round_defaults,
):
    from assignment.models import QualitySource

    first = executed(queued_round(project_with_round_defaults, budget=20))
    old = first.quality_matrix
    newer = QualityMatrix(project=project_with_round_defaults, source=QualitySource.UPLOADED)
    newer.set_arrays(  # the same quality, workers and tasks in the reverse order
        values=old.values[::-1, ::-1],
        worker_ids=old.worker_ids[::-1].tolist(),
        task_ids=old.task_ids[::-1].tolist(),
        task_categories=["c"] * N_TASKS,
    )
    newer.save()
    second = executed(queued_round(project_with_round_defaults))
    assert second.quality_matrix == newer
    assert second.round_start["pending"] == 20
    before = {(old.worker_ids[i], old.task_ids[j]) for i, j in first.pairs.tolist()}
    after = {(newer.worker_ids[i], newer.task_ids[j]) for i, j in second.pairs.tolist()}
    assert not before & after


def test_the_default_budget_may_not_drop_below_the_answers_and_the_pairs_awaiting_them(
    project_with_round_defaults,
):
    first = executed(queued_round(project_with_round_defaults, budget=20))
    half = AssignmentRun.objects.get(pk=first.pk)
    half.assignment_blob = None
    half.set_pairs(*first.pairs[::2].T)
    answer_every_pair(half, seed=2)  # 10 pairs answered, 10 pending
    with pytest.raises(
        ProjectValidationError,
        match=r"^default_budget 19 is below the 10 answers already collected and 10 pairs of "
        r"earlier rounds awaiting answers, .*: give at least 20 pairs",
    ):
        services.project_update(project=project_with_round_defaults, default_budget=19)
    services.project_update(project=project_with_round_defaults, default_budget=20)
    services.run_withdraw(run=first)  # its pending pairs stop counting
    services.project_update(project=project_with_round_defaults, default_budget=10)
    assert Project.objects.get(pk=project_with_round_defaults.pk).default_budget == 10


def test_the_default_budget_may_not_drop_below_what_a_round_computing_now_may_assign(
    project_with_round_defaults,
):
    first = executed(queued_round(project_with_round_defaults, budget=10))
    answer_every_pair(first, seed=2)
    second = queued_round(project_with_round_defaults, budget=12)
    with pytest.raises(
        ProjectValidationError,
        match=rf"^default_budget 21 is below the 10 answers already collected and the 12 pairs "
        rf"round #{second.pk} may assign \(computing now\), .*: give at least 22 pairs",
    ):
        services.project_update(project=project_with_round_defaults, default_budget=21)
    services.project_update(project=project_with_round_defaults, default_budget=22)
    executed(second)  # its pairs are now pending, as the floor counted them
    with pytest.raises(ProjectValidationError, match="give at least"):
        services.project_update(project=project_with_round_defaults, default_budget=21)


def test_a_withdrawn_round_stops_counting_its_pairs_as_pending(project_with_round_defaults):
    first = executed(queued_round(project_with_round_defaults, budget=40))
    with pytest.raises(RunValidationError, match="nothing left to spend"):
        queued_round(project_with_round_defaults)  # its 40 pending pairs spent the budget
    withdrawn = services.run_withdraw(run=first)
    assert withdrawn.withdrawn_at is not None
    second = queued_round(project_with_round_defaults)
    assert second.budget == 40
    assert second.round_start["pending"] == 0
    assert second.round_start["pending_runs"] == []
    second = executed(second)
    # Its pairs may be assigned again: the same problem as the first round's, so greedy's plan
    # is the same one.
    assert (pairs_grid(second) == pairs_grid(first)).all()


def test_answers_to_a_withdrawn_rounds_pairs_still_count(project_with_round_defaults):
    first = executed(queued_round(project_with_round_defaults, budget=20))
    half = AssignmentRun.objects.get(pk=first.pk)
    half.assignment_blob = None
    half.set_pairs(*first.pairs[::2].T)
    answer_every_pair(half, seed=2)
    services.run_withdraw(run=first)
    second = queued_round(project_with_round_defaults)
    assert second.round_start["answers"] == 10
    assert second.round_start["pending"] == 0
    assert second.budget == 40 - 10


@pytest.mark.parametrize("kind", ["whole project", "comparison", "queued", "withdrawn"])
def test_only_a_succeeded_round_that_counts_can_be_withdrawn_once(
    project_with_round_defaults, kind
):
    project = project_with_round_defaults
    if kind == "whole project":
        run = executed(services.run_create(project=project, method="greedy", enqueue=False))
        reason = "not a round started on its own"
    elif kind == "comparison":
        comparison = services.comparison_create(
            project=project, methods=["greedy"], next_round=True, enqueue=False
        )
        run = executed(comparison.runs.get())
        reason = "is a comparison's run that was not handed out"
    elif kind == "queued":
        run = queued_round(project, budget=5)
        reason = "is queued: only a succeeded round can be withdrawn"
    else:
        run = services.run_withdraw(run=executed(queued_round(project, budget=5)))
        reason = "was withdrawn already"
    with pytest.raises(RunStateError, match=reason):
        services.run_withdraw(run=run)
    run.refresh_from_db()
    assert (run.withdrawn_at is not None) == (kind == "withdrawn")


def test_a_layered_rounds_message_tells_the_plans_pairs_from_its_check_answers():
    from types import SimpleNamespace

    from assignment.services.runs import _layers_note

    plan = np.zeros((3, 4), bool)
    plan[0, :3] = True  # tasks 0-2 planned; task 3 left out of the plan
    take = np.zeros((3, 4), bool)
    take[0, :2] = True  # two of the plan's pairs
    take[1, 3] = True  # and a check answer for task 3
    note = _layers_note(SimpleNamespace(n_pending=0), plan, take, 2)
    assert "planned 3 pairs for 2 rounds" in note
    assert "this one takes 2 of them in layers and 1 check answer for open tasks" in note
