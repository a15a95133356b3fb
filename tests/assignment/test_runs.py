"""Run lifecycle services: create, claim, execute, cancel, recover — each transition guarded."""

from __future__ import annotations

import json
import signal
import threading
import time
from datetime import timedelta

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.utils import OperationalError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from project_data import project_with_random_quality

from assignment import services, tasks
from assignment.engine import AssignmentProblem, accuracy_upper_bound, expected_accuracy
from assignment.errors import RunStateError, RunValidationError
from assignment.models import (
    AssignmentRun,
    GoldAnswer,
    GoldItem,
    QualityMatrix,
    QualitySource,
    RunStatus,
    Task,
    Worker,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def project_in_one_category():
    """10 workers, 25 tasks in one category, up to 8 tasks per worker, random quality."""
    return project_with_random_quality(n_workers=10, n_tasks=25, max_tasks_per_worker=8)


def executed(run):
    assert services.run_claim(run_id=run.pk)
    return services.run_execute(run_id=run.pk)


def test_a_run_takes_the_project_defaults_and_the_latest_quality_matrix(project_in_one_category):
    run = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert (run.max_workers_per_task, run.max_tasks_per_worker) == (3, 8)
    assert run.budget == min(25 * 3, 10 * 8)
    assert run.quality_matrix == QualityMatrix.objects.get(project=project_in_one_category)
    assert run.status == RunStatus.QUEUED


@pytest.mark.parametrize("method", ["tvcs-iht", "random", "q-lp", "greedy"])
def test_an_executed_run_stores_a_feasible_assignment_and_its_exact_accuracy(
    project_in_one_category, method
):
    run = services.run_create(
        project=project_in_one_category, method=method, budget=40, seed=3, enqueue=False
    )
    run = executed(run)
    assert run.status == RunStatus.SUCCEEDED
    assert run.progress == 100
    pairs = run.pairs
    assert pairs.shape == (run.n_assigned, 2)
    assert run.n_assigned <= 40
    q = run.quality_matrix.values
    x = np.zeros(q.shape, bool)
    x[pairs[:, 0], pairs[:, 1]] = True
    assert x.sum(axis=0).max() <= 3
    assert x.sum(axis=1).max() <= 8
    assert run.expected_accuracy == pytest.approx(expected_accuracy(q, x), abs=1e-12)


def test_a_run_is_claimed_only_once(project_in_one_category):
    run = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert services.run_claim(run_id=run.pk)
    assert not services.run_claim(run_id=run.pk)
    assert AssignmentRun.objects.get(pk=run.pk).attempts == 1


def test_workers_own_caps_and_inactive_workers_are_respected(project_in_one_category):
    w0, w1 = Worker.objects.filter(project=project_in_one_category).order_by("pk")[:2]
    w0.max_tasks = 1
    w0.save()
    w1.active = False
    w1.save()
    run = executed(
        services.run_create(project=project_in_one_category, method="greedy", enqueue=False)
    )
    rows = run.pairs[:, 0]
    assert np.sum(rows == 0) <= 1
    assert np.sum(rows == 1) == 0


def test_the_default_budget_counts_workers_and_tasks_own_caps_and_leaves_out_inactive_workers(
    project_in_one_category,
):
    workers = list(Worker.objects.filter(project=project_in_one_category).order_by("pk"))
    workers[0].max_tasks = 20  # above the project's 8
    workers[1].max_tasks = 40  # above the 25 tasks there are: counts 25
    workers[2].active = False
    for worker in workers[:3]:
        worker.save()
    task = Task.objects.filter(project=project_in_one_category).order_by("pk").first()
    task.max_workers = 9  # above the project's 3: the tasks' side is 24 x 3 + 9 = 81
    task.save()
    run = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert run.budget == min(20 + 25 + 7 * 8, 24 * 3 + 9) == 81  # 75 before own caps counted
    # Random assigns a maximal set of pairs: here all the caps allow.
    assert executed(run).n_assigned == 81


@pytest.fixture
def estimated(project_in_one_category):
    """The project's tasks in three categories, gold answers in each, and its quality estimated
    from them (the latest matrix, stored by category)."""
    rng = np.random.default_rng(1)
    workers = list(Worker.objects.filter(project=project_in_one_category).order_by("pk"))
    tasks = list(Task.objects.filter(project=project_in_one_category).order_by("pk"))
    for j, task in enumerate(tasks):
        task.category = f"c{j % 3}"
    Task.objects.bulk_update(tasks, ["category"])
    items = GoldItem.objects.bulk_create(
        GoldItem(
            project=project_in_one_category,
            external_id=f"g{c}-{k}",
            category=f"c{c}",
            true_label=str(k % 2),
        )
        for c in range(3)
        for k in range(8)
    )
    skill = rng.uniform(0.5, 0.95, (len(workers), 3))
    GoldAnswer.objects.bulk_create(
        GoldAnswer(
            worker=worker,
            item=item,
            answer=item.true_label
            if rng.random() < skill[i, int(item.category[1])]
            else str(1 - int(item.true_label)),
        )
        for i, worker in enumerate(workers)
        for item in items
    )
    matrix = services.quality_estimate(project=project_in_one_category)
    assert matrix.by_category
    return matrix


def stored_dense(matrix: QualityMatrix) -> QualityMatrix:
    """The same quality as ``matrix``, stored dense in chunks as the project's latest matrix."""
    dense = QualityMatrix(project=matrix.project, source=QualitySource.UPLOADED)
    dense.set_arrays(
        values=matrix.values,
        worker_ids=matrix.worker_ids,
        task_ids=matrix.task_ids,
        task_categories=[matrix.categories[c] for c in matrix.task_category],
    )
    dense.save()
    return dense


@pytest.mark.parametrize("method", ["tvcs-iht", "random", "q-lp", "greedy"])
def test_a_run_on_an_estimate_stored_by_category_equals_one_on_the_same_quality_stored_dense(
    project_in_one_category, estimated, method
):
    # A worker made inactive and a task deleted since the estimate: caps of 0 for both.
    inactive = Worker.objects.get(pk=estimated.worker_ids[2])
    inactive.active = False
    inactive.save()
    Task.objects.filter(pk=estimated.task_ids[7]).delete()
    request = {"method": method, "budget": 40, "seed": 3, "enqueue": False}
    by_category = executed(services.run_create(project=project_in_one_category, **request))
    dense = stored_dense(estimated)
    on_dense = executed(services.run_create(project=project_in_one_category, **request))
    assert (by_category.quality_matrix_id, on_dense.quality_matrix_id) == (estimated.pk, dense.pk)
    assert by_category.status == on_dense.status == RunStatus.SUCCEEDED
    np.testing.assert_array_equal(by_category.pairs, on_dense.pairs)
    assert by_category.expected_accuracy == on_dense.expected_accuracy
    assert by_category.summary == on_dense.summary
    assert by_category.progress_message == on_dense.progress_message
    rows, columns = by_category.pairs.T
    assert 2 not in rows
    assert 7 not in columns
    x = np.zeros((10, 25), bool)
    x[rows, columns] = True
    assert by_category.expected_accuracy == pytest.approx(
        expected_accuracy(estimated.values, x), abs=1e-12
    )


@pytest.mark.parametrize("kind", ["dense", "by category"])
def test_creating_a_run_reads_no_quality_values(project_in_one_category, request, kind):
    if kind == "by category":
        request.getfixturevalue("estimated")
    with CaptureQueriesContext(connection) as queries:
        run = services.run_create(project=project_in_one_category, method="greedy", enqueue=False)
    assert run.quality_matrix.by_category == (kind == "by category")
    sql = " ".join(query["sql"] for query in queries.captured_queries)
    # The worker and task ids are read (the matrix must cover the project), never the values.
    for read in ("qualitychunk", "category_table_blob", "task_category_blob"):
        assert read not in sql


@pytest.mark.parametrize("kind", ["dense", "by category"])
def test_the_upper_bound_of_a_comparison_leaves_out_inactive_workers(
    project_in_one_category, request, kind
):
    matrix = (
        request.getfixturevalue("estimated")
        if kind == "by category"
        else QualityMatrix.objects.get(project=project_in_one_category)
    )
    values = matrix.values
    best = int(np.argmax(values.sum(axis=1)))
    Worker.objects.filter(pk=matrix.worker_ids[best]).update(active=False)
    comparison = services.comparison_create(
        project=project_in_one_category, methods=["greedy"], budgets=[30]
    )
    [[budget, bound]] = services.comparison_upper_bound_compute(comparison_id=comparison.pk)[
        "points"
    ]

    def upper_bound(quality) -> float:
        problem = AssignmentProblem(
            quality, max_workers_per_task=3, max_tasks_per_worker=8, budget=30
        )
        return accuracy_upper_bound(problem).value

    assert budget == 30
    assert bound == pytest.approx(upper_bound(np.delete(values, best, axis=0)), abs=1e-12)
    assert bound < upper_bound(values)


def test_a_task_deleted_since_the_matrix_was_made_gets_no_worker(project_in_one_category):
    matrix = QualityMatrix.objects.get(project=project_in_one_category)
    Task.objects.filter(pk=matrix.task_ids[4]).delete()
    run = executed(
        services.run_create(project=project_in_one_category, method="greedy", enqueue=False)
    )
    assert run.status == RunStatus.SUCCEEDED
    assert 4 not in run.pairs[:, 1]


def test_cancelling_a_queued_run_stops_it_before_it_starts(project_in_one_category):
    run = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    services.run_cancel(run=run)
    assert run.status == RunStatus.CANCELLED
    assert not services.run_claim(run_id=run.pk)


def test_a_run_cancelled_while_running_stores_no_result(project_in_one_category):
    run = services.run_create(project=project_in_one_category, method="tvcs-iht", enqueue=False)
    assert services.run_claim(run_id=run.pk)
    services.run_cancel(run=run)
    run = services.run_execute(run_id=run.pk)
    assert run.status == RunStatus.CANCELLED
    assert run.assignment_blob is None


def test_a_finished_run_cannot_be_cancelled(project_in_one_category):
    run = executed(
        services.run_create(project=project_in_one_category, method="random", enqueue=False)
    )
    with pytest.raises(RunStateError, match="is succeeded"):
        services.run_cancel(run=run)


def test_a_silent_running_run_is_requeued_then_failed_with_a_reason(
    project_in_one_category, settings
):
    settings.TVCS_RUN_MAX_ATTEMPTS = 2
    run = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert services.run_claim(run_id=run.pk)
    later = timezone.now() + timedelta(seconds=settings.TVCS_RUN_STALE_AFTER + 1)
    assert services.runs_recover_stale(now=later) == {
        "requeued": [run.pk],
        "failed": [],
        "reenqueued": [],
        "shards": {"requeued": [], "reenqueued": [], "coordinated": []},
    }
    assert AssignmentRun.objects.get(pk=run.pk).status == RunStatus.QUEUED
    assert services.run_claim(run_id=run.pk)
    later = timezone.now() + timedelta(seconds=settings.TVCS_RUN_STALE_AFTER + 1)
    assert services.runs_recover_stale(now=later)["failed"] == [run.pk]
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "stopped responding 2 time(s)" in run.error


def test_a_run_with_a_fresh_heartbeat_is_left_alone(project_in_one_category):
    run = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert services.run_claim(run_id=run.pk)
    recovered = services.runs_recover_stale()
    assert recovered == {
        "requeued": [],
        "failed": [],
        "reenqueued": [],
        "shards": {"requeued": [], "reenqueued": [], "coordinated": []},
    }


def test_a_queued_run_whose_message_was_lost_is_enqueued_again_once_a_period(
    project_in_one_category, settings, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        lost = services.run_create(project=project_in_one_category, method="random")
        waiting = services.run_create(project=project_in_one_category, method="greedy")
        computed_here = services.run_create(
            project=project_in_one_category, method="greedy", enqueue=False
        )
    assert queued == [lost.pk, waiting.pk]  # both handed to the broker once
    period = timedelta(seconds=settings.TVCS_RUN_LOST_AFTER)
    AssignmentRun.objects.filter(pk=lost.pk).update(enqueued_at=timezone.now() - 2 * period)
    with django_capture_on_commit_callbacks(execute=True):
        recovered = services.runs_recover_stale()
    assert recovered["reenqueued"] == [lost.pk]
    assert queued == [lost.pk, waiting.pk, lost.pk]
    assert timezone.now() - AssignmentRun.objects.get(pk=lost.pk).enqueued_at < period
    with django_capture_on_commit_callbacks(execute=True):
        assert services.runs_recover_stale()["reenqueued"] == []  # not again this period
    # A duplicate delivery of the same run computes it once.
    assert services.run_claim(run_id=lost.pk)
    assert not services.run_claim(run_id=lost.pk)
    assert AssignmentRun.objects.get(pk=computed_here.pk).enqueued_at is None


def test_a_run_is_enqueued_only_when_its_transaction_commits(
    project_in_one_category, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    from assignment import tasks

    monkeypatch.setattr(
        tasks.run_execute_task, "apply_async", lambda args, **options: sent.append(args[0])
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = services.run_create(project=project_in_one_category, method="random")
        assert sent == []
    assert len(callbacks) == 1
    callbacks[0]()
    assert sent == [run.pk]


def test_a_run_message_carries_no_time_limits_so_that_the_worker_applies_its_own(
    project_in_one_category, settings, django_capture_on_commit_callbacks
):
    """Celery puts the enqueuing process's ``task_time_limit`` settings in each message, and a
    worker obeys the message's over its own: a web process configured otherwise would set
    every run's limits. The message here goes to the real broker; a worker that takes it finds
    the run already computed."""
    from celery.signals import before_task_publish

    from assignment import tasks

    assert (tasks.run_execute_task.soft_time_limit, tasks.run_execute_task.time_limit) == (
        settings.CELERY_TASK_SOFT_TIME_LIMIT,
        settings.CELERY_TASK_TIME_LIMIT,
    )  # this process has limits of its own, which Celery would send
    published = []

    def record(sender=None, headers=None, **kwargs):
        published.append((sender, headers["argsrepr"], list(headers["timelimit"])))

    before_task_publish.connect(record)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            run = services.run_create(project=project_in_one_category, method="random")
    finally:
        before_task_publish.disconnect(record)
    assert published == [("assignment.run_execute", f"({run.pk},)", [None, None])]
    assert services.run_claim(run_id=run.pk)
    services.run_execute(run_id=run.pk)


def test_a_pool_process_stopping_alone_hands_back_only_its_own_run(project_in_one_category, queued):
    mine = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    sibling = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    for run in (mine, sibling):  # two pool processes of one worker
        assert services.run_claim(run_id=run.pk, worker="w1@host")
    assert services.runs_hand_back(worker="w1@host", run_ids=[mine.pk]) == [mine.pk]
    assert AssignmentRun.objects.get(pk=mine.pk).status == RunStatus.QUEUED
    assert AssignmentRun.objects.get(pk=sibling.pk).status == RunStatus.RUNNING
    assert services.runs_hand_back(worker="w2@host", run_ids=[sibling.pk]) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "simplex"}, "method must be one of tvcs-iht, random, q-lp, greedy"),
        ({"method": "random", "options": {"speed": 1}}, "unknown option"),
        (
            {"method": "tvcs-iht", "options": {"max_iter": "many"}},
            r"max_iter must be an integer in \[0, 10000\]",
        ),
        (
            {"method": "tvcs-iht", "options": {"eval_every": 0}},
            r"eval_every must be an integer in \[1, 10000\]",
        ),
        ({"method": "tvcs-iht", "options": {"step": -1}}, r"step must be a number in \(0, 1000\]"),
        (
            {"method": "q-lp", "options": {"target_error": 2}},
            r"target_error must be a number in \(0, 1\)",
        ),
        ({"method": "greedy", "options": {"initial": 1}}, "unknown option"),
        ({"method": "random", "budget": -1}, "budget"),
        ({"method": "random", "budget": 2**31}, "budget.*less than or equal to 2147483647"),
        ({"method": "random", "max_tasks_per_worker": 2**31}, "max_tasks_per_worker"),
        ({"method": "random", "seed": -1}, "seed.*greater than or equal to 0"),
        (
            {"method": "random", "next_round": True, "target_posterior": 0.5},
            r"target_posterior must be a number above 0\.5, at most 1 \(.*got 0\.5",
        ),
        (
            {"method": "random", "next_round": True, "rounds_left": 101},
            "rounds_left must be an integer from 1 to 100, got 101",
        ),
    ],
)
def test_invalid_run_requests_are_rejected(project_in_one_category, kwargs, message):
    with pytest.raises(RunValidationError, match=message):
        services.run_create(project=project_in_one_category, enqueue=False, **kwargs)


def test_a_project_without_a_quality_matrix_cannot_run(project_in_one_category):
    QualityMatrix.objects.all().delete()
    with pytest.raises(RunValidationError, match="has no quality matrix") as refused:
        services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert "estimate it from gold answers or collected answers first" in str(refused.value)


def test_the_demo_project_is_filled_through_the_import_path_and_can_run():
    owner = get_user_model().objects.create_user("demo-owner", password="x")
    project = services.demo_project_create(owner=owner, n_workers=12, n_tasks=40, seed=1)
    assert project.workers.count() == 12
    assert project.tasks.count() == 40
    assert project.gold_items.count() == 100
    matrix = QualityMatrix.objects.get(project=project)
    assert matrix.source == QualitySource.ESTIMATED
    assert matrix.values.shape == (12, 40)
    run = executed(services.run_create(project=project, method="greedy", enqueue=False))
    assert run.status == RunStatus.SUCCEEDED
    assert services.demo_project_create(owner=owner, n_workers=12, n_tasks=40) == project


def test_a_claimed_run_deleted_with_its_project_is_dropped_quietly(project_in_one_category):
    run = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert services.run_claim(run_id=run.pk)
    AssignmentRun.objects.filter(pk=run.pk).delete()
    assert services.run_execute(run_id=run.pk) is None


def test_the_assignment_of_a_run_exports_as_csv_and_json_with_project_ids(
    project_in_one_category, tmp_path
):
    run = executed(
        services.run_create(
            project=project_in_one_category, method="greedy", budget=12, enqueue=False
        )
    )
    path = tmp_path / "assignment.csv"
    call_command("export_assignment", run=run.pk, output=path)
    lines = path.read_text().splitlines()
    assert lines[0] == "worker_id,task_id"
    assert len(lines) == 1 + run.n_assigned
    assert all(line.split(",")[0].startswith("w") for line in lines[1:])
    path = tmp_path / "assignment.json"
    call_command("export_assignment", run=run.pk, format="json", output=path)
    assert len(json.loads(path.read_text())) == run.n_assigned
    queued = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    with pytest.raises(CommandError, match="only a succeeded run has an assignment"):
        call_command("export_assignment", run=queued.pk)


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_outlives_a_locked_database(project_in_one_category, monkeypatch):
    run = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert services.run_claim(run_id=run.pk)
    AssignmentRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    real_update = type(AssignmentRun.objects.all()).update
    calls = []

    def locked_twice(queryset, **fields):
        calls.append(fields)
        if len(calls) <= 2:
            raise OperationalError("database is locked")
        return real_update(queryset, **fields)

    monkeypatch.setattr(type(AssignmentRun.objects.all()), "update", locked_twice)
    heartbeat = services.runs._Heartbeat(run.pk, every=0.05)
    heartbeat.start()
    try:
        deadline = time.monotonic() + 10
        while len(calls) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert heartbeat.is_alive()
    finally:
        heartbeat.stop.set()
        heartbeat.join(timeout=5)
    monkeypatch.undo()
    assert len(calls) >= 4
    fresh = AssignmentRun.objects.get(pk=run.pk).heartbeat_at
    assert timezone.now() - fresh < timedelta(seconds=30)


def test_a_worker_shutting_down_hands_its_runs_back_at_once(
    project_in_one_category, queued, django_capture_on_commit_callbacks
):
    mine = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    theirs = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert services.run_claim(run_id=mine.pk, worker="w1@host")
    assert services.run_claim(run_id=theirs.pk, worker="w2@host")
    assert services.runs_hand_back(worker="w1@host") == [mine.pk]
    assert queued == []  # not yet: the worker could take it again while it stops
    with django_capture_on_commit_callbacks(execute=True):
        assert services.runs_enqueue(run_ids=[mine.pk, theirs.pk]) == [mine.pk]
    assert queued == [mine.pk]
    mine.refresh_from_db()
    assert (mine.status, mine.attempts) == (RunStatus.QUEUED, 0)
    assert mine.progress_message == "re-queued: its worker shut down"
    assert AssignmentRun.objects.get(pk=theirs.pk).status == RunStatus.RUNNING
    # The computation that was under way finds the run gone and stores nothing.
    services.run_execute(run_id=mine.pk)
    mine.refresh_from_db()
    assert (mine.status, mine.assignment_blob) == (RunStatus.QUEUED, None)
    # Another worker then computes it; it counts as the first attempt.
    assert services.run_claim(run_id=mine.pk, worker="w3@host")
    services.run_execute(run_id=mine.pk)
    mine.refresh_from_db()
    assert (mine.status, mine.attempts, mine.worker) == (RunStatus.SUCCEEDED, 1, "w3@host")


def test_a_worker_starting_again_under_its_name_takes_back_what_its_earlier_self_left(
    project_in_one_category, queued, django_capture_on_commit_callbacks
):
    killed = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    cold = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    theirs = services.run_create(project=project_in_one_category, method="random", enqueue=False)
    assert services.run_claim(run_id=theirs.pk, worker="w2@host")
    # A worker w1 stopped cold: it handed its run back but never gave it to the broker. The
    # next w1 was killed while computing another, which stayed running.
    assert services.run_claim(run_id=cold.pk, worker="w1@host")
    assert services.runs_hand_back(worker="w1@host") == [cold.pk]
    assert services.run_claim(run_id=killed.pk, worker="w1@host")
    with django_capture_on_commit_callbacks(execute=True):
        assert services.runs_reclaim(worker="w1@host") == [killed.pk, cold.pk]
    assert sorted(queued) == [killed.pk, cold.pk]
    for run in (killed, cold):
        run.refresh_from_db()
        assert (run.status, run.attempts) == (RunStatus.QUEUED, 0)
    assert AssignmentRun.objects.get(pk=theirs.pk).status == RunStatus.RUNNING
    with django_capture_on_commit_callbacks(execute=True):
        assert services.runs_reclaim(worker="w3@host") == []  # a new name has nothing to take


def test_a_run_stops_at_its_next_progress_report_once_its_worker_is_shutting_down(
    project_in_one_category,
):
    run = services.run_create(project=project_in_one_category, method="greedy", enqueue=False)
    assert services.run_claim(run_id=run.pk, worker="w1@host")
    asked = []

    def should_stop():
        asked.append(True)
        return len(asked) > 1  # the first report goes through, the second stops

    services.run_execute(run_id=run.pk, should_stop=should_stop)
    assert len(asked) == 2
    run.refresh_from_db()
    # Nothing stored, the row left for the worker to hand back as it stops.
    assert (run.status, run.assignment_blob, run.worker) == (RunStatus.RUNNING, None, "w1@host")
    assert services.runs_hand_back(worker="w1@host") == [run.pk]


def kernel_steps_until_signalled(signum: int, handler, raised: list):
    """A stand-in for ``solve`` that runs tvcs-iht's ``gradient_step`` kernel (800 x 800 pairs,
    a tenth of a second or so a step) until ``signum``, sent 0.02 s in from another thread,
    reaches the main thread's ``handler``; what it raises is appended to ``raised``. Returns
    the stand-in and a function that restores the signal's previous handler."""
    from assignment.engine._sampled_votes import gradient_step, thresholds

    m, width = 800, 128
    threshold = thresholds(np.full(m * m, 0.7))
    x, slopes = np.full(m * m, 0.5), np.ones((m, width))
    every_pair, everywhere = np.zeros(0, np.int64), np.zeros(0, bool)
    step = (1, x, every_pair, m, x, threshold, slopes, 1.0, everywhere)
    gradient_step(*step)  # loaded now, so that no Python runs in it below
    timer = threading.Timer(0.02, signal.pthread_kill, (threading.main_thread().ident, signum))
    previous = signal.signal(signum, handler)

    def steps(*args, **kwargs):
        timer.start()
        deadline = time.monotonic() + 30
        try:
            while time.monotonic() < deadline:
                gradient_step(*step)
        except BaseException as exc:
            raised.append(exc)
            raise
        raise AssertionError("the signal did not arrive")

    def restore():
        timer.cancel()
        if timer.ident is not None:  # started
            timer.join()
        signal.signal(signum, previous)

    return steps, restore


def test_a_soft_time_limit_that_numba_hands_on_as_a_system_error_fails_the_run_with_its_reason(
    project_in_one_category, monkeypatch, settings
):
    """billiard raises ``SoftTimeLimitExceeded`` from its SIGUSR1 handler at the first bytecode
    after the signal. Signalled during a kernel that returns a tuple of arrays (tvcs-iht's
    ``gradient_step``), that is numba's call back into Python as it boxes them, and the run
    sees a ``SystemError`` caused by the soft limit: still the soft limit, not an error."""
    from billiard.pool import soft_timeout_sighandler

    raised = []
    steps, restore = kernel_steps_until_signalled(signal.SIGUSR1, soft_timeout_sighandler, raised)
    run = services.run_create(project=project_in_one_category, method="tvcs-iht", enqueue=False)
    monkeypatch.setattr(services.runs, "solve", steps)
    try:
        tasks.run_execute_task(run.pk)
    finally:
        restore()
    assert type(raised[0]) is SystemError  # the way the soft limit came
    run.refresh_from_db()
    assert (run.status, run.error) == (
        RunStatus.FAILED,
        f"stopped by the time limit of {settings.CELERY_TASK_SOFT_TIME_LIMIT} s",
    )


def test_a_pool_process_told_to_end_during_a_kernel_exits_instead_of_reporting_an_error(
    project_in_one_category, monkeypatch
):
    """The hard time limit ends a pool process with a SIGTERM, whose handler raises
    ``SystemExit``; arriving during a kernel, numba hands it on as a ``SystemError``. The task
    must go on exiting (a failure report would take the pool's result-queue lock just as the
    pool's SIGKILL follows), leaving the run to the recovery sweep."""

    def end(signum, frame):
        raise SystemExit(f"told to end by signal {signum}")

    raised = []
    steps, restore = kernel_steps_until_signalled(signal.SIGUSR2, end, raised)
    run = services.run_create(project=project_in_one_category, method="tvcs-iht", enqueue=False)
    monkeypatch.setattr(services.runs, "solve", steps)
    try:
        with pytest.raises(SystemExit, match="told to end"):
            tasks.run_execute_task(run.pk)
    finally:
        restore()
    assert type(raised[0]) is SystemError  # the way SystemExit came out of the kernel
    run.refresh_from_db()
    assert (run.status, run.error, run.assignment_blob) == (RunStatus.RUNNING, "", None)


def test_a_system_error_of_its_own_is_not_taken_for_the_soft_time_limit(
    project_in_one_category, monkeypatch
):
    def broken(*args, **kwargs):
        raise SystemError("a broken extension")

    run = services.run_create(project=project_in_one_category, method="tvcs-iht", enqueue=False)
    monkeypatch.setattr(services.runs, "solve", broken)
    with pytest.raises(SystemError, match="a broken extension"):
        tasks.run_execute_task(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING  # as for any crash: the recovery sweep ends it


def test_a_run_is_refused_when_tasks_were_added_after_the_quality_matrix(project_in_one_category):
    Task.objects.create(project=project_in_one_category, external_id="late-1", category="c")
    Task.objects.create(project=project_in_one_category, external_id="late-2", category="c")
    with pytest.raises(RunValidationError) as refused:
        services.run_create(project=project_in_one_category, method="greedy", enqueue=False)
    message = str(refused.value)
    assert "no quality for 2 tasks (e.g. 'late-1')" in message
    assert f"POST /api/projects/{project_in_one_category.pk}/quality/estimate/" in message
    assert not AssignmentRun.objects.exists()


def test_a_comparison_is_refused_whole_when_an_active_worker_has_no_quality(
    project_in_one_category,
):
    Worker.objects.create(project=project_in_one_category, external_id="newcomer")
    with pytest.raises(RunValidationError, match=r"1 active worker \(e.g. 'newcomer'\)"):
        services.comparison_create(
            project=project_in_one_category, methods=["greedy", "random"], enqueue=False
        )
    assert not AssignmentRun.objects.exists()


def test_inactive_newcomers_and_deleted_tasks_do_not_make_the_matrix_stale(project_in_one_category):
    Worker.objects.create(project=project_in_one_category, external_id="resting", active=False)
    Task.objects.filter(project=project_in_one_category, external_id="t3").delete()
    run = services.run_create(project=project_in_one_category, method="greedy", enqueue=False)
    assert run.status == RunStatus.QUEUED


def test_estimating_quality_again_lifts_the_refusal(project_in_one_category):
    late = Task.objects.create(project=project_in_one_category, external_id="late", category="c")
    item = GoldItem.objects.create(
        project=project_in_one_category, external_id="g", category="c", true_label="1"
    )
    for worker in Worker.objects.filter(project=project_in_one_category):
        GoldAnswer.objects.create(worker=worker, item=item, answer="1")
    with pytest.raises(RunValidationError):
        services.run_create(project=project_in_one_category, method="greedy", enqueue=False)
    services.quality_estimate(project=project_in_one_category)
    run = executed(
        services.run_create(project=project_in_one_category, method="greedy", enqueue=False)
    )
    assert run.status == RunStatus.SUCCEEDED
    assert late.pk in run.quality_matrix.task_ids


def test_a_project_of_three_labels_runs_every_method_on_the_k_class_model(project_in_one_category):
    from assignment.engine.multiclass import expected_accuracy_multiclass

    project_in_one_category.labels = ["cat", "dog", "bird"]
    project_in_one_category.save()
    for method in ("tvcs-iht", "greedy", "q-lp", "random"):
        run = executed(
            services.run_create(
                project=project_in_one_category, method=method, budget=30, seed=1, enqueue=False
            )
        )
        assert run.status == RunStatus.SUCCEEDED, run.error
        x = np.zeros((10, 25), bool)
        x[tuple(run.pairs.T)] = True
        assert run.expected_accuracy == pytest.approx(
            expected_accuracy_multiclass(
                run.quality_matrix.values, x, prior=np.full((25, 3), 1 / 3), n_labels=3
            ),
            abs=1e-12,
        )
        assert run.summary["task_accuracy"]["edges"][0] == pytest.approx(1 / 3, abs=1e-6)


def test_a_run_out_of_memory_under_the_workers_limit_says_which_limit(settings):
    error = MemoryError("Unable to allocate 3.36 GiB for an array")
    settings.TVCS_RUN_MEMORY_LIMIT_MB = 0
    assert services.runs.run_fail_reason(error) == (
        "MemoryError: Unable to allocate 3.36 GiB for an array"
    )
    settings.TVCS_RUN_MEMORY_LIMIT_MB = 4096
    reason = services.runs.run_fail_reason(error)
    assert reason.startswith("MemoryError: Unable to allocate 3.36 GiB for an array (")
    assert "TVCS_RUN_MEMORY_LIMIT_MB=4096" in reason
    assert services.runs.run_fail_reason(ValueError("bad caps")) == "ValueError: bad caps"
