"""Helpers of the end-to-end tests: a real ``celery worker`` process and waiting on runs.

The worker is a separate process on the test database (a file for SQLite, the test database
for PostgreSQL) and on the configured broker: the filesystem transport by default, Redis when
``CELERY_BROKER_URL`` says so (CI runs both).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from django.conf import settings
from django.db import connection

from assignment.engine import expected_accuracy
from assignment.models import AssignmentRun, RunStatus

ROOT = Path(__file__).resolve().parents[2]
FINISHED = {RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED}

#: tvcs-iht options that keep a run computing until its time limit: many steps, none stopped
#: for want of progress, and no stop at the greedy start however close it is to the bound or
#: however much of the budget it spends.
LONG_RUN = {
    "max_iter": 10_000,
    "eval_every": 5,
    "patience": 10_000,
    "bound_gap": 0.0,
    "search_when_spent": True,
}
#: Caps for such a run on the small demo projects here, whose default of one worker per task
#: tvcs-iht solves exactly by one projection, without steps.
LONG_RUN_CAPS = {"max_workers_per_task": 3}


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

    def __init__(
        self, tmp_path: Path, name: str, *, concurrency: int = 1, **env_overrides: str
    ) -> None:
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
                str(concurrency),
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

    def shut_down(self) -> None:
        """SIGTERM to the worker's main process alone: a warm shutdown, as ``docker stop``,
        systemd or ``runproduct``'s Ctrl-C ask for."""
        self.process.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL the worker and its pool children: no cleanup runs."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def exited_within(self, seconds: float) -> float:
        """How long the worker took to exit; AssertionError (and SIGKILL to its process group,
        so that nothing is left behind) if it is still running after ``seconds``."""
        started = time.monotonic()
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"the worker was still running {seconds} s after it was told to stop; killed\n"
                + self.log.read_text()[-3000:]
            ) from None
        return time.monotonic() - started

    def stop(self) -> None:
        """SIGTERM to the worker's whole process group (as systemd or ``kill -- -PGID``);
        SIGKILL if it has not exited 20 s later."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def wait_for(predicate, *, timeout: float, what: str, workers_=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    logs = "\n".join(w.log.read_text()[-3000:] for w in workers_)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{logs}")


def wait_until_finished(run: AssignmentRun, *, worker, what: str, timeout: float = 240) -> None:
    """Wait until ``run`` has ended (any status of ``FINISHED``), then refresh it; on timeout,
    AssertionError with ``worker``'s log."""

    def finished():
        return AssignmentRun.objects.get(pk=run.pk).status in FINISHED

    wait_for(finished, timeout=timeout, what=what, workers_=[worker])
    run.refresh_from_db()


def assert_stored_assignment_is_consistent(run: AssignmentRun) -> None:
    q = run.quality_matrix.values
    x = np.zeros(q.shape, dtype=bool)
    x[run.pairs[:, 0], run.pairs[:, 1]] = True
    assert x.sum() == run.n_assigned == run.pairs.shape[0]  # no duplicate pairs
    assert run.n_assigned <= run.budget
    assert x.sum(axis=0).max() <= run.max_workers_per_task
    assert x.sum(axis=1).max() <= run.max_tasks_per_worker
    assert run.expected_accuracy == pytest.approx(expected_accuracy(q, x), abs=1e-12)
