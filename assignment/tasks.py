"""Celery tasks: thin and idempotent.

Each task takes ids (JSON), claims its row with a conditional update and calls a service; the
services own the lifecycle (:mod:`assignment.services`, "runs"). Runs are enqueued only after
their creating transaction commits (``services.run_create``).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_init, worker_shutdown, worker_shutting_down
from django.conf import settings
from django.db import DatabaseError, connection

from assignment import services

logger = logging.getLogger(__name__)


@shared_task(
    bind=True,
    name="assignment.run_execute",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def run_execute_task(self, run_id: int) -> None:
    """Compute run ``run_id`` if it is still queued (a duplicate delivery does nothing)."""
    if not services.run_claim(run_id=run_id, worker=self.request.hostname or ""):
        logger.info("run %s is not queued any more; nothing to do", run_id)
        return
    try:
        services.run_execute(run_id=run_id)
    except SoftTimeLimitExceeded:
        services.run_fail(
            run_id=run_id,
            reason=f"stopped by the time limit of {settings.CELERY_TASK_SOFT_TIME_LIMIT} s",
        )


@shared_task(name="assignment.runs_recover_stale", ignore_result=True)
def runs_recover_stale_task() -> None:
    """Re-queue or fail runs whose worker stopped sending heartbeats."""
    services.runs_recover_stale()


@shared_task(
    name="assignment.comparison_upper_bound",
    ignore_result=True,
    soft_time_limit=600,
    time_limit=660,
)
def comparison_upper_bound_task(comparison_id: int) -> None:
    """Compute the accuracy upper bound of a comparison if it is still pending."""
    try:
        services.comparison_upper_bound_compute(comparison_id=comparison_id)
    except SoftTimeLimitExceeded:
        services.comparison_upper_bound_fail(
            comparison_id=comparison_id, reason="stopped by the time limit of 600 s"
        )


@worker_init.connect
def _compile_kernels(sender, **kwargs) -> None:
    """Compile the numeric kernels into numba's disk cache before the pool starts, so that no
    run compiles (a run then loads its kernels from the cache: about a second). In a
    subprocess, so that a fresh worker has no numba in its processes: on the filesystem
    broker (billiard's plain pool), pool processes with numba loaded made a SIGTERM to the
    whole process group hang the shutdown now and then (with Redis they do not)."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "assignment.engine.warm_up"], check=False, timeout=600
        )
    except subprocess.TimeoutExpired:
        logger.warning("numeric kernels not compiled ahead: still compiling after 600 s")
        return
    if done.returncode:
        logger.warning("numeric kernels not compiled ahead (exit %s)", done.returncode)
        return
    logger.info("numeric kernels compiled in %.1f s", time.perf_counter() - started)


#: Runs this worker handed back when told to stop, enqueued once it has stopped consuming (so
#: that it does not take them again itself).
_handed_back: list[int] = []


@worker_shutting_down.connect
def _hand_back_runs(sender: str, **kwargs) -> None:
    """A worker told to stop (Ctrl-C, SIGTERM) queues its runs again at once."""
    try:
        _handed_back.extend(services.runs_hand_back(worker=sender))
    except DatabaseError:
        logger.exception("worker %s: runs not handed back at shutdown; recovery will", sender)
    finally:
        connection.close()


@worker_shutdown.connect
def _enqueue_handed_back_runs(sender, **kwargs) -> None:
    """The worker has stopped: the runs it handed back go to the broker, for the others."""
    if not _handed_back:
        return
    try:
        services.runs_enqueue(run_ids=_handed_back)
    except Exception:  # the broker or the database gone: the lost-message sweep enqueues them
        logger.exception("runs %s not enqueued at shutdown; the recovery sweep will", _handed_back)
    finally:
        _handed_back.clear()
        connection.close()
