"""Celery tasks: thin and idempotent.

Each task takes ids (JSON), claims its row with a conditional update and calls a service; the
services own the lifecycle (:mod:`assignment.services.runs`). Runs are enqueued only after
their creating transaction commits (``services.run_create``).
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import multiprocessing
import os
import resource
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
    A pool process told to stop on its own hands its run back and leaves the pool
    (:func:`_leave_the_pool`), which starts another.
    """
    worker = self.request.hostname or ""
    if _stop_requested.is_set():
        _leave_the_pool(worker=worker, run_ids=[run_id])
        raise Reject(f"run {run_id} not taken: the worker is shutting down", requeue=True)
    if not services.run_claim(run_id=run_id, worker=worker):
        logger.info("run %s is not queued any more; nothing to do", run_id)
        return
    try:
        services.run_execute(run_id=run_id, should_stop=_stop_requested.is_set)
    except Exception as exc:
        _exit_if_told_to(exc)
        if not _stopped_by_the_soft_time_limit(exc):
            raise
        services.run_fail(
            run_id=run_id, reason=f"stopped by the time limit of {_soft_limit(self)} s"
        )
    if _stop_requested.is_set():
        _leave_the_pool(worker=worker, run_ids=[run_id])


def _soft_limit(task) -> int:
    """The soft time limit this run had: its message's, or else this worker's setting (runs
    are enqueued without one: ``services.runs._enqueue_after_commit``)."""
    from_message = (task.request.timelimit or (None, None))[1]
    return int(from_message or task.soft_time_limit or settings.CELERY_TASK_SOFT_TIME_LIMIT)


@shared_task(
    bind=True,
    name="assignment.shard_solve",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def shard_solve_task(self, shard_id: int) -> None:
    """Solve shard ``shard_id`` of a sharded run if it is still queued (a duplicate delivery
    does nothing); the shard that completes its round enqueues the coordination.

    A worker shutting down hands its shards back as it does its runs (see
    :func:`run_execute_task`): the solve under way stops at its next progress report."""
    worker = self.request.hostname or ""
    if _stop_requested.is_set():
        _leave_the_pool(worker=worker, shard_ids=[shard_id])
        raise Reject(f"shard {shard_id} not taken: the worker is shutting down", requeue=True)
    if not services.shard_claim(shard_id=shard_id, worker=worker):
        logger.info("shard %s is not queued any more; nothing to do", shard_id)
        return
    try:
        services.shard_execute(shard_id=shard_id, should_stop=_stop_requested.is_set)
    except Exception as exc:
        _exit_if_told_to(exc)
        if not _stopped_by_the_soft_time_limit(exc):
            raise
        services.shard_fail(
            shard_id=shard_id,
            reason=f"a shard stopped by the time limit of {_soft_limit(self)} s",
        )
    if _stop_requested.is_set():
        _leave_the_pool(worker=worker, shard_ids=[shard_id])


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
        _exit_if_told_to(exc)
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
    cause = _in_the_chain(exc, SoftTimeLimitExceeded)
    if cause is not None and cause is not exc:
        logger.info("the soft time limit, raised as %s: %s", type(exc).__name__, exc)
    return cause is not None


def _exit_if_told_to(exc: BaseException) -> None:
    """Go on exiting if ``exc`` was raised because this pool process was told to end.

    The hard time limit (and a cold shutdown) end a pool process with a SIGTERM, whose handler
    raises ``SystemExit`` as the soft limit's raises its exception, so numba may hand it on as
    a ``SystemError`` in the same way (:func:`_stopped_by_the_soft_time_limit`). Taken for a
    task's error, it would have the process report a failure on the pool's result queue, with
    that queue's lock taken, just as the pool's SIGKILL follows (0.1 s after the SIGTERM): a
    process killed holding the lock hangs the whole worker. So it exits, reporting nothing.
    """
    told = _in_the_chain(exc, SystemExit)
    if told is not None:
        logger.info("told to end, raised as %s: %s", type(exc).__name__, exc)
        raise told


def _in_the_chain(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``exc`` or the first of its causes (or contexts) that is a ``kind``, or None."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, kind):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


@worker_init.connect
def _compile_kernels(sender, **kwargs) -> None:
    """Compile the numeric kernels into numba's disk cache before the pool starts, so that no
    run compiles (each pool process then loads them from the cache as it starts:
    :func:`_load_kernels`). In a subprocess, so that the worker's main process never imports
    numba. (Numba in the pool processes was first thought to be what hung a worker's shutdown
    on a SIGTERM to its whole process group now and then; the cause was pool processes dying
    of that signal, which numba only made likelier: see
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


@worker_process_init.connect
def _load_kernels(**kwargs) -> None:
    """In each pool process, before it takes a run: load the numeric kernels from the disk
    cache that :func:`_compile_kernels` filled (about a second), so that its first run does not
    (before, that load was most of a small run's first time: 0.8 s against 0.04 s warm at
    100 x 1,000, ``benchmarks/first_run.py``). Connected first, so that the memory limit
    (:func:`_limit_memory`) sees what the kernels map; ``CELERY_WORKER_PROC_ALIVE_TIMEOUT``
    gives a pool process time for it."""
    from assignment.engine.warm_up import warm_up  # numba: only in pool processes

    try:
        seconds = warm_up().total_seconds
    except Exception:  # a run will load what it needs itself, as it did before
        logger.exception("pool process %s: numeric kernels not loaded ahead", os.getpid())
        return
    logger.info("pool process %s: numeric kernels loaded in %.1f s", os.getpid(), seconds)


#: Set in a pool process told to stop by a SIGTERM that did not come from its worker's main
#: process (see :func:`_leave_sigterm_to_the_main_process`).
_stop_requested = threading.Event()

#: Set in a pool process once it is exiting (billiard's ``Worker._do_exit``).
_exiting = threading.Event()

#: The signal by which a pool process's SIGTERM thread has its main thread end the process.
_END_NOW = signal.SIGRTMIN

#: Set by the worker's main process once it is shutting down, and seen by its pool processes:
#: a byte of shared memory made before the pool forks (:func:`_share_the_stop_flag`).
_worker_stopping = None

#: How long a pool process told to stop waits to see whether its whole worker was.
_WHOLE_WORKER_WAIT = 2.0


@worker_init.connect
def _share_the_stop_flag(**kwargs) -> None:
    global _worker_stopping
    _worker_stopping = multiprocessing.RawValue(ctypes.c_bool, False)


def _whole_worker_stopping() -> bool:
    """Whether this pool process's worker is shutting down, waiting a little for it: a SIGTERM
    to the process group reaches the pool processes and the main process at once, and the
    main one may take a moment to act on it."""
    deadline = time.monotonic() + _WHOLE_WORKER_WAIT
    while _worker_stopping is not None and not _worker_stopping.value:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return _worker_stopping is not None


def _leave_the_pool(*, worker: str, run_ids=(), shard_ids=()) -> None:
    """A pool process told to stop by a SIGTERM of its own (not its whole worker's) ends here,
    between tasks, where it holds none of the pool's locks: the run or shard it computed or was
    about to take is queued again and given to the broker, and the process exits, so that the
    pool starts another in its place. (Its message comes back too, as a lost worker's does; a
    run or shard is claimed once, so the second message costs nothing.) When the whole worker
    is stopping, it returns: the main process hands the work back and ends its pool processes
    itself."""
    if _whole_worker_stopping():
        return
    what = f"runs {list(run_ids)}, shards {list(shard_ids)}"
    try:
        if run_ids:
            services.runs_hand_back(worker=worker, run_ids=list(run_ids))
            services.runs_enqueue(run_ids=list(run_ids))
        if shard_ids:
            services.shards_hand_back(worker=worker, shard_ids=list(shard_ids))
            services.shards_enqueue(shard_ids=list(shard_ids))
    except Exception:  # the broker or the database gone: the recovery sweeps will
        logger.exception("%s not handed back by their stopping pool process", what)
    finally:
        connection.close()
    logger.warning("pool process %s told to stop: %s handed back; exiting", os.getpid(), what)
    sys.exit(0)


#: Address space a pool process must keep above what it maps when it starts (its own
#: bookkeeping, the database connection), in MiB.
_MEMORY_HEADROOM_MB = 256


@worker_process_init.connect
def _limit_memory(**kwargs) -> None:
    """In each pool process: ``TVCS_RUN_MEMORY_LIMIT_MB`` as the limit of its address space
    (``RLIMIT_AS``), so that a run needing more fails with a MemoryError
    (:func:`services.runs.run_fail_reason`) and the pool process lives on. A limit below what
    the process already maps (the interpreter, numpy, numba: about a gigabyte) would fail every
    run: it is logged as an error and not applied."""
    limit_mb = settings.TVCS_RUN_MEMORY_LIMIT_MB
    if not limit_mb:
        return
    mapped_mb = _mapped_mb()
    if limit_mb < mapped_mb + _MEMORY_HEADROOM_MB:
        logger.error(
            "TVCS_RUN_MEMORY_LIMIT_MB=%d not applied: this pool process already maps %d MiB; "
            "give at least %d",
            limit_mb,
            mapped_mb,
            mapped_mb + _MEMORY_HEADROOM_MB,
        )
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = limit_mb << 20
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _mapped_mb() -> int:
    """The address space this process maps now, in MiB (``VmSize``)."""
    for line in open("/proc/self/status").read().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) >> 10
    return 0


@worker_process_init.connect
def _leave_sigterm_to_the_main_process(**kwargs) -> None:
    """In each pool process: a SIGTERM sent to the whole worker (to its process group, as
    ``kill -TERM -- -PGID`` does, or to its control group, as systemd does) is for the main
    process to act on: its warm shutdown hands the runs back, ends idle pool processes with a
    sentinel and waits for busy ones. A pool process only stops the run it computes, at the
    next progress report, and takes no new one. A SIGTERM sent to this pool process alone
    ends it the same way, at the end of its run or as the next one arrives, where it holds no
    lock (:func:`_leave_the_pool`). A SIGTERM from the main process itself (the pool ending
    this process: cold shutdown, hard time limit) acts as before.

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


#: Runs and shards this worker handed back when told to stop, enqueued once it has stopped
#: consuming (so that it does not take them again itself).
_handed_back: dict[str, list[int]] = {"runs": [], "shards": []}


@worker_shutting_down.connect
def _hand_back_runs(sender: str, **kwargs) -> None:
    """A worker told to stop (Ctrl-C, SIGTERM) queues its runs and shards again at once. After
    a cold shutdown no ``worker_shutdown`` follows, so they go to the broker as the process
    exits (:func:`_enqueue_handed_back`, at exit)."""
    if _worker_stopping is not None:
        _worker_stopping.value = True
    if kwargs.get("how") == "Cold":
        atexit.register(_enqueue_handed_back, sender)
    try:
        _handed_back["runs"].extend(services.runs_hand_back(worker=sender))
        _handed_back["shards"].extend(services.shards_hand_back(worker=sender))
    except DatabaseError:
        logger.exception("worker %s: work not handed back at shutdown; recovery will", sender)
    finally:
        connection.close()


@worker_ready.connect
def _reclaim_runs(sender, **kwargs) -> None:
    """A worker starting under the name of one that died or stopped cold takes back the runs
    and shards it left (:func:`services.runs_reclaim`, :func:`services.shards_reclaim`),
    instead of leaving them to the recovery sweeps."""
    try:
        runs = services.runs_reclaim(worker=sender.hostname)
        shards = services.shards_reclaim(worker=sender.hostname)
    except Exception:  # the broker or the database not there yet: the recovery sweeps will
        logger.exception("worker %s: work left by its earlier self not reclaimed", sender)
        return
    finally:
        connection.close()
    if runs or shards:
        logger.warning(
            "worker %s: runs %s and shards %s left by its earlier self queued", sender, runs, shards
        )


@worker_shutdown.connect
def _enqueue_handed_back_runs(sender, **kwargs) -> None:
    """The worker has stopped: the runs and shards it handed back go to the broker, for the
    others.

    So do those of this worker still ``running``: its pool processes have all stopped, so
    nothing computes them any more (one stopped it, or took it just after the hand-back).
    """
    _enqueue_handed_back(sender.hostname)


def _enqueue_handed_back(worker: str) -> None:
    """The runs and shards ``worker`` handed back, and those it still has ``running`` (its pool
    processes have stopped), to the broker: at ``worker_shutdown``, or as the process exits
    after a cold shutdown (it consumes nothing any more either way)."""
    runs, shards = _handed_back["runs"], _handed_back["shards"]
    try:
        runs.extend(services.runs_hand_back(worker=worker))
        shards.extend(services.shards_hand_back(worker=worker))
        if runs:
            services.runs_enqueue(run_ids=runs)
        if shards:
            services.shards_enqueue(shard_ids=shards)
        if runs or shards:
            logger.warning(
                "worker %s stopped: runs %s and shards %s given to the broker", worker, runs, shards
            )
    except Exception:  # the broker or the database gone: the recovery sweep will
        logger.exception("work of %s not re-queued at shutdown; the recovery sweep will", worker)
    finally:
        runs.clear()
        shards.clear()
        connection.close()
