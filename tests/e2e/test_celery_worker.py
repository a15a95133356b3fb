"""Runs computed by a real ``celery worker`` process, including one killed mid-run.

The worker is a separate process on the test database (a file for SQLite, the test database
for PostgreSQL) and on the configured broker: the filesystem transport by default, Redis when
``CELERY_BROKER_URL`` says so (CI runs both).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection

from assignment import services
from assignment.engine import expected_accuracy
from assignment.models import AssignmentRun, RunStatus

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
FINISHED = {RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED}


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = quote(db["USER"], safe="")
    password = quote(db["PASSWORD"], safe="")
    host = f"{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}"
    return f"postgres://{user}:{password}@{host}/{db['NAME']}"


class Worker:
    """A ``celery worker --beat`` child process in its own process group."""

    def __init__(self, tmp_path: Path, name: str, **env_overrides: str) -> None:
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings_test",
            DATABASE_URL=database_url(),
            TVCS_DATA_DIR=str(settings.DATA_DIR),
            **env_overrides,
        )
        self.log = tmp_path / f"{name}.log"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--beat",
                "--loglevel",
                "INFO",
                "--concurrency",
                "1",
                "--hostname",
                f"{name}@%h",
                "--schedule",
                str(tmp_path / f"{name}-beat"),
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL the worker and its pool children: no cleanup runs."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def clean_broker():
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    for key in ("data_folder_in", "processed_folder"):
        if key in options:
            shutil.rmtree(options[key], ignore_errors=True)
            Path(options[key]).mkdir(parents=True)
    if settings.CELERY_BROKER_URL.startswith("redis://"):
        from config.celery import app

        app.control.purge()


@pytest.fixture
def workers(tmp_path, clean_broker):
    started: list[Worker] = []

    def start(name: str, **env: str) -> Worker:
        worker = Worker(tmp_path, name, **env)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def wait_for(predicate, *, timeout: float, what: str, workers_=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    logs = "\n".join(w.log.read_text()[-3000:] for w in workers_)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{logs}")


def demo_project():
    owner = get_user_model().objects.create_user(f"e2e-{time.monotonic_ns()}", password="x")
    return services.demo_project_create(owner=owner, n_workers=40, n_tasks=300, seed=2)


def assert_stored_assignment_is_consistent(run: AssignmentRun) -> None:
    q = run.quality_matrix.values
    x = np.zeros(q.shape, dtype=bool)
    x[run.pairs[:, 0], run.pairs[:, 1]] = True
    assert x.sum() == run.n_assigned == run.pairs.shape[0]  # no duplicate pairs
    assert run.n_assigned <= run.budget
    assert x.sum(axis=0).max() <= run.max_workers_per_task
    assert x.sum(axis=1).max() <= run.max_tasks_per_worker
    assert run.expected_accuracy == pytest.approx(expected_accuracy(q, x), abs=1e-12)


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


def test_a_run_whose_worker_is_killed_ends_with_a_result_or_a_reason(workers):
    stale_after = "6"
    first = workers("doomed", TVCS_RUN_STALE_AFTER=stale_after)
    project = demo_project()
    # Long enough to be killed mid-way on any machine: a time-limited run of many iterations.
    run = services.run_create(
        project=project,
        method="tvcs-iht",
        seed=3,
        options={"max_iter": 1_000_000, "eval_every": 5, "time_limit": 15},
    )

    def computing():
        current = AssignmentRun.objects.get(pk=run.pk)
        assert current.status not in FINISHED, f"the run ended before the kill: {current.status}"
        return current.status == RunStatus.RUNNING and current.progress_message != "started"

    wait_for(computing, timeout=120, what="the run to be computing", workers_=[first])
    first.kill()
    killed_at = time.monotonic()
    second = workers("rescuer", TVCS_RUN_STALE_AFTER=stale_after)

    def finished():
        return AssignmentRun.objects.get(pk=run.pk).status in FINISHED

    wait_for(finished, timeout=240, what="the run to end after the kill", workers_=[second])
    recovered_in = time.monotonic() - killed_at
    run.refresh_from_db()
    assert run.attempts == 2
    if run.status == RunStatus.SUCCEEDED:
        assert_stored_assignment_is_consistent(run)
    else:
        assert run.status == RunStatus.FAILED
        assert "stopped responding" in run.error
        assert run.assignment_blob is None
    assert recovered_in < 240
