"""A sharded run computed by two real ``celery worker`` processes."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from worker_process import FINISHED, assert_stored_assignment_is_consistent, wait_for

from assignment import services
from assignment.models import AssignmentRun, RunStatus

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
