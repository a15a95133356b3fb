"""Celery tasks: thin and idempotent.

Each task takes ids (JSON), claims its row with a conditional update and calls a service; the
services own the lifecycle (:mod:`assignment.services.runs`). Runs are enqueued only after
their creating transaction commits (``services.run_create``).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time

from celery import shared_task
from celery.exceptions import Reject, SoftTimeLimitExceeded
from celery.signals import (
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
    worker_shutting_down,
)
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
    """Compute run ``run_id`` if it is still queued (a duplicate delivery does nothing).

    A pool process whose worker is shutting down takes no new run (its message goes back to
    the broker, for another worker) and stops the one it computes at its next progress report;
    the worker hands that run back (:func:`_hand_back_runs`, :func:`_enqueue_handed_back_runs`).
    """
    if _stop_requested.is_set():
        raise Reject(f"run {run_id} not taken: the worker is shutting down", requeue=True)
    if not services.run_claim(run_id=run_id, worker=self.request.hostname or ""):
        logger.info("run %s is not queued any more; nothing to do", run_id)
        return
    try:
        services.run_execute(run_id=run_id, should_stop=_stop_requested.is_set)
    except Exception as exc:
        if not _stopped_by_the_soft_time_limit(exc):
            raise
        services.run_fail(
            run_id=run_id,
            reason=f"stopped by the time limit of {settings.CELERY_TASK_SOFT_TIME_LIMIT} s",
        )


@shared_task(
    bind=True,
    name="assignment.shard_solve",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def shard_solve_task(self, shard_id: int) -> None:
    """Solve shard ``shard_id`` of a sharded run if it is still queued (a duplicate delivery
    does nothing); the shard that completes its round enqueues the coordination."""
    if _stop_requested.is_set():
        raise Reject(f"shard {shard_id} not taken: the worker is shutting down", requeue=True)
    if not services.shard_claim(shard_id=shard_id, worker=self.request.hostname or ""):
        logger.info("shard %s is not queued any more; nothing to do", shard_id)
        return
    try:
        services.shard_execute(shard_id=shard_id)
    except Exception as exc:
        if not _stopped_by_the_soft_time_limit(exc):
            raise
        services.shard_fail(
            shard_id=shard_id,
            reason=f"a shard stopped by the time limit of {settings.CELERY_TASK_SOFT_TIME_LIMIT} s",
        )


@shared_task(
    name="assignment.shards_coordinate", ignore_result=True, soft_time_limit=600, time_limit=660
)
def shards_coordinate_task(run_id: int, round_: int) -> None:
    """Coordinate round ``round_`` of sharded run ``run_id``: the next round or the result.
    Idempotent: a duplicate (or a round already coordinated) does nothing."""
    outcome = services.shards_coordinate(run_id=run_id, round_=round_)
    logger.info("run %s, round %s coordinated: %s", run_id, round_, outcome)


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
    except Exception as exc:
        if not _stopped_by_the_soft_time_limit(exc):
            raise
        services.comparison_upper_bound_fail(
            comparison_id=comparison_id, reason="stopped by the time limit of 600 s"
        )


def _stopped_by_the_soft_time_limit(exc: BaseException) -> bool:
    """Whether ``exc`` is the soft time limit, or an error raised because of it.

    billiard's pool process raises ``SoftTimeLimitExceeded`` from its SIGUSR1 handler, which
    Python runs in the main thread at the first bytecode after the signal. A run spends most
    of its time in numba kernels, where no bytecode runs; the first one after a kernel that
    returns a tuple of arrays (``gradient_step``, tvcs-iht's step) is numba's own call back
    into Python as it boxes them (``numba.core.serialize._numba_unpickle``), and numba hands
    the exception raised there on as ``SystemError: CPUDispatcher(...) returned a result with
    an exception set``, caused by ``SoftTimeLimitExceeded``. So the exception and its causes
    are looked at, not its type alone.
    """
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, SoftTimeLimitExceeded):
            if cause is not exc:
                logger.info("the soft time limit, raised as %s: %s", type(exc).__name__, exc)
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


@worker_init.connect
def _compile_kernels(sender, **kwargs) -> None:
    """Compile the numeric kernels into numba's disk cache before the pool starts, so that no
    run compiles (a run then loads its kernels from the cache: about a second). In a
    subprocess, so that a fresh worker has no numba in its processes. (That was first thought
    to be what hung a worker's shutdown on a SIGTERM to its whole process group now and then;
    the cause was pool processes dying of that signal, which numba only made likelier: see
    :func:`_leave_sigterm_to_the_main_process`.)"""
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


#: Set in a pool process told to stop by a SIGTERM that did not come from its worker's main
#: process (see :func:`_leave_sigterm_to_the_main_process`).
_stop_requested = threading.Event()

#: Set in a pool process once it is exiting (billiard's ``Worker._do_exit``).
_exiting = threading.Event()

#: The signal by which a pool process's SIGTERM thread has its main thread end the process.
_END_NOW = signal.SIGRTMIN


@worker_process_init.connect
def _leave_sigterm_to_the_main_process(**kwargs) -> None:
    """In each pool process: a SIGTERM sent to the whole worker (to its process group, as
    ``kill -TERM -- -PGID`` does, or to its control group, as systemd does) is for the main
    process to act on: its warm shutdown hands the runs back, ends idle pool processes with a
    sentinel and waits for busy ones. A pool process only stops the run it computes, at the
    next progress report, and takes no new one. A SIGTERM from the main process itself (the
    pool ending this process: cold shutdown, hard time limit) acts as before.

    Left to billiard, each pool process raises ``SystemExit`` from its SIGTERM handler
    wherever it is. With billiard's plain ``Pool`` (the filesystem broker's), an idle pool
    process waits for a task while holding the pool queue's read lock, and the other idle ones
    wait for that lock. The holder releases it as it exits; a waiter's ``sem_wait`` can take it
    just before the waiter's own handler raises, and that waiter exits holding it. The pool
    processes started in their place then block on it, and so does the main process, for ever,
    as it shuts the pool down (``billiard.pool.Pool._help_stuff_finish``:
    ``inqueue._rlock.acquire()``).

    So SIGTERM is blocked in this, the main thread (threads it starts later inherit that), and
    taken by a thread of its own with ``sigwaitinfo``, which sees who sent it. One from the
    main process comes back to the main thread as ``_END_NOW``, whose handler runs billiard's
    SIGTERM handler there, as if the SIGTERM had come straight: the pool's locks are released
    as ``SystemExit`` unwinds (killing the process from the other thread could leave one taken:
    cold shutdowns hung in 4 of 10 trials so).
    """
    main_thread = threading.get_ident()
    signal.signal(_END_NOW, _end_now)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    threading.Thread(target=_take_sigterm, args=(main_thread,), name="sigterm", daemon=True).start()


def _take_sigterm(main_thread: int) -> None:
    """Each SIGTERM sent to this pool process, for as long as it lives."""
    main_process = os.getppid()
    while True:
        sent = signal.sigwaitinfo({signal.SIGTERM})
        if sent.si_pid != main_process:
            _stop_requested.set()
        elif not _exiting.is_set():  # once exiting, it ends by itself within a second
            signal.pthread_kill(main_thread, _END_NOW)


@worker_process_shutdown.connect
def _pool_process_exiting(**kwargs) -> None:
    """The pool process is exiting: it tells the main process (a message on the pool's result
    queue, with that queue's lock taken), which answers with a SIGTERM; ending the process then
    could leave the lock taken, and billiard keeps its own SIGTERM out of that moment."""
    _exiting.set()


def _end_now(signum, frame) -> None:
    """The main process ended this pool process: as billiard's SIGTERM handler would."""
    handler = signal.getsignal(signal.SIGTERM)
    if callable(handler):  # billiard's, installed once this process's initializer returned
        handler(signal.SIGTERM, frame)
    os.kill(os.getpid(), signal.SIGKILL)  # still initializing: it holds nothing yet


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


@worker_ready.connect
def _reclaim_runs(sender, **kwargs) -> None:
    """A worker starting under the name of one that died or stopped cold takes back the runs
    it left (:func:`services.runs_reclaim`), instead of leaving them to the recovery sweeps."""
    try:
        reclaimed = services.runs_reclaim(worker=sender.hostname)
    except Exception:  # the broker or the database not there yet: the recovery sweeps will
        logger.exception("worker %s: runs left by its earlier self not reclaimed", sender)
        return
    finally:
        connection.close()
    if reclaimed:
        logger.warning("worker %s: runs %s left by its earlier self queued", sender, reclaimed)


@worker_shutdown.connect
def _enqueue_handed_back_runs(sender, **kwargs) -> None:
    """The worker has stopped: the runs it handed back go to the broker, for the others.

    So do the runs of this worker still ``running``: its pool processes have all stopped, so
    nothing computes them any more (one stopped it, or took it just after the hand-back).
    """
    try:
        _handed_back.extend(services.runs_hand_back(worker=sender.hostname))
        if _handed_back:
            services.runs_enqueue(run_ids=_handed_back)
    except Exception:  # the broker or the database gone: the recovery sweep will
        logger.exception("runs of %s not re-queued at shutdown; the recovery sweep will", sender)
    finally:
        _handed_back.clear()
        connection.close()
