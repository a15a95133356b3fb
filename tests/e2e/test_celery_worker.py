"""Runs computed by a real ``celery worker`` process, including one killed mid-run."""

from __future__ import annotations

import time

import numpy as np
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from worker_process import (
    FINISHED,
    LONG_RUN,
    LONG_RUN_CAPS,
    assert_stored_assignment_is_consistent,
    wait_for,
    wait_until_finished,
)

from assignment import services
from assignment.models import (
    AssignmentRun,
    Project,
    QualityMatrix,
    QualitySource,
    RunStatus,
    Task,
    Worker,
)

pytestmark = pytest.mark.django_db(transaction=True)


def demo_project():
    owner = get_user_model().objects.create_user(f"e2e-{time.monotonic_ns()}", password="x")
    return services.demo_project_create(owner=owner, n_workers=40, n_tasks=300, seed=2)


def test_a_real_worker_computes_every_method(workers):
    worker = workers("main")
    project = demo_project()
    runs = [
        services.run_create(project=project, method=method, seed=1)
        for method in ("tvcs-iht", "random", "q-lp", "greedy")
    ]

    def all_finished():
        return all(AssignmentRun.objects.get(pk=r.pk).status in FINISHED for r in runs)

    wait_for(all_finished, timeout=240, what="every run to finish", workers_=[worker])
    for run in runs:
        run.refresh_from_db()
        assert run.status == RunStatus.SUCCEEDED, run.error
        assert run.attempts == 1
        assert_stored_assignment_is_consistent(run)
    # The kernels were compiled before the worker took a run, not inside the first run.
    log = worker.log.read_text()
    assert "numeric kernels compiled" in log
    assert log.index("numeric kernels compiled") < log.index("ready.")
    # ... and the pool process loaded them from the cache in the background as it started
    assert "numeric kernels loaded in" in log
    assert "numeric kernels not loaded ahead" not in log


def test_a_run_whose_worker_is_killed_ends_with_a_result_or_a_reason(workers):
    stale_after = "6"
    first = workers("doomed", TVCS_RUN_STALE_AFTER=stale_after)
    project = demo_project()
    # Long enough to be killed mid-way on any machine: a time-limited run of many iterations.
    run = services.run_create(
        project=project,
        method="tvcs-iht",
        seed=3,
        options=LONG_RUN | {"time_limit": 15},
        **LONG_RUN_CAPS,
    )

    def computing():
        current = AssignmentRun.objects.get(pk=run.pk)
        assert current.status not in FINISHED, f"the run ended before the kill: {current.status}"
        return current.status == RunStatus.RUNNING and current.progress_message != "started"

    wait_for(computing, timeout=120, what="the run to be computing", workers_=[first])
    first.kill()
    killed_at = time.monotonic()
    second = workers("rescuer", TVCS_RUN_STALE_AFTER=stale_after)
    wait_until_finished(run, worker=second, what="the run to end after the kill")
    recovered_in = time.monotonic() - killed_at
    assert run.attempts == 2
    if run.status == RunStatus.SUCCEEDED:
        assert_stored_assignment_is_consistent(run)
    else:
        assert run.status == RunStatus.FAILED
        assert "stopped responding" in run.error
        assert run.assignment_blob is None
    assert recovered_in < 240


def test_a_worker_told_to_stop_hands_its_run_back_at_once(workers):
    first = workers("leaving")
    project = demo_project()
    run = services.run_create(
        project=project,
        method="tvcs-iht",
        seed=4,
        options=LONG_RUN | {"time_limit": 60},
        **LONG_RUN_CAPS,
    )

    def computing():
        current = AssignmentRun.objects.get(pk=run.pk)
        return current.status == RunStatus.RUNNING and current.progress_message != "started"

    wait_for(computing, timeout=120, what="the run to be computing", workers_=[first])
    assert AssignmentRun.objects.get(pk=run.pk).worker.startswith("leaving@")
    first.shut_down()

    def handed_back():
        return AssignmentRun.objects.get(pk=run.pk).status == RunStatus.QUEUED

    # At once: well before any heartbeat could go stale (TVCS_RUN_STALE_AFTER is 120 s here).
    wait_for(handed_back, timeout=15, what="the run to be queued again", workers_=[first])
    first.process.wait(timeout=60)  # the computation stopped at its next progress report
    assert AssignmentRun.objects.get(pk=run.pk).progress_message == (
        "re-queued: its worker shut down"
    )
    second = workers("staying")
    wait_until_finished(run, worker=second, what="the run to end on the second worker")
    assert (run.status, run.attempts) == (RunStatus.SUCCEEDED, 1)
    assert run.worker.startswith("staying@")
    assert_stored_assignment_is_consistent(run)


@pytest.mark.parametrize("limit", ["soft", "hard"])
def test_the_time_limits_stop_a_run(workers, limit):
    """The soft limit fails the run with a reason; the hard one kills its pool process (SIGTERM
    from the worker's main process, then SIGKILL) and recovery fails the run. The limits are
    the worker's settings alone: this process, which enqueues the run, keeps its own (an hour),
    and its messages carry none."""
    if limit == "hard" and not settings.CELERY_BROKER_URL.startswith("filesystem://"):
        pytest.skip("Celery's AsynPool arms a hard limit once the soft one has fired")
    assert settings.CELERY_TASK_SOFT_TIME_LIMIT > 60
    # For the hard one, both are due at the same moment (the soft one may not exceed it), and
    # billiard looks at the hard one first.
    limits = {
        "soft": {"TVCS_RUN_SOFT_TIME_LIMIT": "2", "TVCS_RUN_TIME_LIMIT": "60"},
        "hard": {"TVCS_RUN_SOFT_TIME_LIMIT": "3", "TVCS_RUN_TIME_LIMIT": "3"},
    }[limit]
    worker = workers(limit, TVCS_RUN_STALE_AFTER="6", TVCS_RUN_MAX_ATTEMPTS="1", **limits)
    project = demo_project()
    run = services.run_create(
        project=project,
        method="tvcs-iht",
        seed=7,
        options=LONG_RUN | {"time_limit": 60},
        **LONG_RUN_CAPS,
    )
    wait_until_finished(run, worker=worker, what="the run to be stopped", timeout=120)
    assert run.status == RunStatus.FAILED
    if limit == "soft":
        assert run.error == "stopped by the time limit of 2 s"
    else:
        assert "stopped responding" in run.error
        assert "Hard time limit (3s) exceeded" in worker.log.read_text()
    # The pool still computes runs afterwards.
    after = services.run_create(project=project, method="random", seed=8)

    def after_finished():
        return AssignmentRun.objects.get(pk=after.pk).status in FINISHED

    wait_for(after_finished, timeout=120, what="the next run", workers_=[worker])
    assert AssignmentRun.objects.get(pk=after.pk).status == RunStatus.SUCCEEDED


def test_a_run_needing_more_memory_than_the_workers_limit_fails_with_that_reason(workers):
    """Under ``TVCS_RUN_MEMORY_LIMIT_MB`` a pool process that runs out of address space raises
    a MemoryError: the run fails saying so, instead of the kernel's out-of-memory killer ending
    the worker, and the worker goes on computing runs that fit."""
    worker = workers("capped", TVCS_RUN_MEMORY_LIMIT_MB="1400")  # ~600 MiB beyond its start
    owner = get_user_model().objects.create_user(f"e2e-{time.monotonic_ns()}", password="x")
    project = Project.objects.create(owner=owner, name="large", default_max_workers_per_task=3)
    n, m = 3_000, 10_000  # random's weights alone: 240 MB, twice; its projection: gigabytes
    workers_ = Worker.objects.bulk_create(
        [Worker(project=project, external_id=f"w{i}") for i in range(n)]
    )
    tasks = Task.objects.bulk_create(
        [Task(project=project, external_id=f"t{j}", category="c") for j in range(m)]
    )
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
    matrix.set_by_category(
        table=np.full((n, 1), 0.8),
        table_categories=["c"],
        worker_ids=[w.pk for w in workers_],
        task_ids=[t.pk for t in tasks],
        task_categories=["c"] * m,
    )
    matrix.save()
    large = services.run_create(project=project, method="random", seed=1)
    wait_until_finished(large, worker=worker, what="the large run to fail")
    assert large.status == RunStatus.FAILED
    assert large.error.startswith("MemoryError"), large.error
    assert "TVCS_RUN_MEMORY_LIMIT_MB=1400" in large.error
    small = services.run_create(project=demo_project(), method="greedy", seed=2)
    wait_until_finished(small, worker=worker, what="a small run after it")
    assert small.status == RunStatus.SUCCEEDED, small.error
    assert worker.process.poll() is None
