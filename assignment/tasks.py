"""Celery tasks: thin and idempotent.

Each task takes ids (JSON), claims its row with a conditional update and calls a service; the
services own the lifecycle (:mod:`assignment.services`, "runs"). Runs are enqueued only after
their creating transaction commits (``services.run_create``).
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from assignment import services

logger = logging.getLogger(__name__)


@shared_task(
    name="assignment.run_execute",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def run_execute_task(run_id: int) -> None:
    """Compute run ``run_id`` if it is still queued (a duplicate delivery does nothing)."""
    if not services.run_claim(run_id=run_id):
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
