"""Writers at the same time on the configured database (SQLite by default, PostgreSQL in CI):
nobody gets "database is locked", and every row is written exactly once."""

from __future__ import annotations

import io
import threading

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from assignment import services
from assignment.models import AssignmentRun, QualityMatrix, QualitySource, Task, Worker

pytestmark = pytest.mark.django_db(transaction=True)


def in_threads(jobs) -> list[str]:
    """Run every job in its own thread (its own connection) at once; their errors."""
    errors: list[str] = []
    start = threading.Barrier(len(jobs))

    def run(job):
        try:
            start.wait()
            job()
        except Exception as exc:
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def filled_project(owner):
    project = services.project_create(owner=owner, name="filled")
    workers = [Worker.objects.create(project=project, external_id=f"w{i}") for i in range(6)]
    tasks = [
        Task.objects.create(project=project, external_id=f"t{j}", category="c") for j in range(9)
    ]
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
    matrix.set_arrays(
        values=np.full((6, 9), 0.7),
        worker_ids=[w.pk for w in workers],
        task_ids=[t.pk for t in tasks],
        task_categories=["c"] * 9,
    )
    matrix.save()
    return project


def test_uploads_run_creations_and_claims_at_once_all_succeed(queued):
    owner = get_user_model().objects.create_user("owner", password="x")
    projects = [services.project_create(owner=owner, name=f"p{k}") for k in range(8)]
    runs_project = filled_project(owner)
    claimable = [
        services.run_create(project=runs_project, method="random", enqueue=False).pk
        for _ in range(4)
    ]
    rows = "worker_id,name\n" + "".join(f"w{i},W{i}\n" for i in range(3000))

    def upload(project):
        return lambda: services.project_data_import(
            project=project, kind="workers", file=io.BytesIO(rows.encode()), file_name="w.csv"
        )

    def create_run():
        services.run_create(project=runs_project, method="greedy", enqueue=False)

    def claim(run_id):
        def job():
            assert services.run_claim(run_id=run_id)

        return job

    jobs = [upload(p) for p in projects] + [create_run] * 8 + [claim(r) for r in claimable]
    assert in_threads(jobs) == []
    for project in projects:
        assert Worker.objects.filter(project=project).count() == 3000
    assert AssignmentRun.objects.filter(project=runs_project, method="greedy").count() == 8
    assert set(AssignmentRun.objects.filter(pk__in=claimable).values_list("status", flat=True)) == {
        "running"
    }
