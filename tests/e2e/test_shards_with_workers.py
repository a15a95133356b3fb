"""A sharded run computed by two real ``celery worker`` processes."""

from __future__ import annotations

import os
import signal
import time

import pytest
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
from assignment.models import AssignmentRun, RunShard, RunStatus

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_workers_solve_the_shards_of_a_run(workers):
    started = [workers("left"), workers("right")]
    wait_for(
        lambda: all("ready." in w.log.read_text() for w in started),
        timeout=120,
        what="both workers to be ready",
        workers_=started,
    )
    owner = get_user_model().objects.create_user(f"e2e-{time.monotonic_ns()}", password="x")
    project = services.demo_project_create(owner=owner, n_workers=40, n_tasks=300, seed=2)
    run = services.run_create(project=project, method="greedy", seed=1, shards=4)

    def finished():
        return AssignmentRun.objects.get(pk=run.pk).status in FINISHED

    wait_for(finished, timeout=240, what="the sharded run to finish", workers_=started)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert_stored_assignment_is_consistent(run)
    assert run.shard_rows.filter(round=0, status=RunStatus.SUCCEEDED).count() == 4
    solved_by = set(run.shard_rows.values_list("worker", flat=True))
    assert len(solved_by) == 2, solved_by  # both workers took shards


def test_a_worker_told_to_stop_hands_back_the_shard_it_solves_and_another_finishes_the_run(
    workers,
):
    """A warm shutdown does not wait for the shard under way (a shard can take as long as a
    run): the solve stops at its next progress report, the shard is queued again with its
    attempt not counted and given to the broker as the worker exits; the next worker solves it
    and the run ends as usual."""
    first = workers("stopping")
    owner = get_user_model().objects.create_user(f"e2e-{time.monotonic_ns()}", password="x")
    project = services.demo_project_create(owner=owner, n_workers=40, n_tasks=300, seed=3)
    run = services.run_create(
        project=project,
        method="tvcs-iht",
        seed=1,
        shards=2,
        options=LONG_RUN | {"time_limit": 8},
        **LONG_RUN_CAPS,
    )

    def a_shard_solving():
        return run.shard_rows.filter(status=RunStatus.RUNNING).values_list("pk", flat=True).first()

    shard_id = wait_for(
        a_shard_solving, timeout=120, what="a shard to be solving", workers_=[first]
    )
    time.sleep(1.0)  # well into its solve
    os.killpg(first.process.pid, signal.SIGTERM)
    # Celery's own shutdown takes a few seconds; waiting for the shard would add its 7 more.
    first.exited_within(8.0)
    shard = RunShard.objects.get(pk=shard_id)
    assert (shard.status, shard.attempts, shard.pairs_blob) == (RunStatus.QUEUED, 0, None)
    assert f"shards [{shard_id}] given to the broker" in first.log.read_text()
    second = workers("next")
    wait_until_finished(run, worker=second, what="the sharded run to end on the next worker")
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert_stored_assignment_is_consistent(run)
    shard.refresh_from_db()
    assert (shard.status, shard.attempts) == (RunStatus.SUCCEEDED, 1)
    assert shard.worker.startswith("next@")
