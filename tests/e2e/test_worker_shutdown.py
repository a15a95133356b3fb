"""How a real ``celery worker`` stops: promptly, handing back the run it computes.

However it is told to stop (SIGTERM to its whole process group, as systemd and
``kill -TERM -- -PGID`` do; SIGTERM to its main process alone, as ``docker stop`` does; Ctrl-C,
which is SIGINT to the terminal's process group), a worker with several pool processes, some
idle after tasks and one computing a run, does a warm shutdown: it exits within the bound and
the run is queued again, with its message on the broker for another worker. With the default
filesystem broker, a group SIGTERM used to leave such a worker hanging for ever now and then:
pool processes died of it, one holding the pool's queue lock (``assignment.tasks``,
``_leave_sigterm_to_the_main_process``). ``SIGQUIT`` (a cold shutdown) must still end the pool
processes, by the SIGTERM the pool itself sends them.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

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
from assignment.models import AssignmentRun, RunStatus

pytestmark = pytest.mark.django_db(transaction=True)

#: How long a worker may take to exit once told to stop.
BOUND = 30.0


def busy_worker(workers, name: str):
    """A worker with 3 pool processes, two of them idle after runs, one computing a run."""
    worker = workers(name, concurrency=3)
    owner = get_user_model().objects.create_user(f"e2e-{time.monotonic_ns()}", password="x")
    project = services.demo_project_create(owner=owner, n_workers=40, n_tasks=300, seed=5)
    quick = [
        services.run_create(project=project, method=method, seed=k)
        for k, method in enumerate(["random", "greedy", "random", "greedy", "random", "greedy"])
    ]

    def quick_ones_finished():
        return all(AssignmentRun.objects.get(pk=r.pk).status in FINISHED for r in quick)

    wait_for(quick_ones_finished, timeout=180, what="the quick runs", workers_=[worker])
    run = services.run_create(
        project=project,
        method="tvcs-iht",
        seed=6,
        options=LONG_RUN | {"time_limit": 15},
        **LONG_RUN_CAPS,
    )

    def computing():
        current = AssignmentRun.objects.get(pk=run.pk)
        assert current.status not in FINISHED, f"the run ended before the stop: {current.status}"
        return current.status == RunStatus.RUNNING and current.progress_message != "started"

    wait_for(computing, timeout=120, what="the run to be computing", workers_=[worker])
    return worker, run


def assert_nothing_left(worker) -> None:
    """No process of the worker's process group is still running (a zombie has exited: one
    whose parent went first waits for init, which need not reap it at once)."""
    time.sleep(0.5)  # pool processes the main process killed on its way out: gone by now
    left = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.getpgid(int(entry)) == worker.process.pid:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
                    left.append(f"{entry} (parent {fields[1]}): {command.decode()[:200]}")
        except (ProcessLookupError, FileNotFoundError):
            pass
    assert left == [], f"processes of the worker left running: {left}"


def assert_handed_back(run) -> None:
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.QUEUED, 0)
    assert run.progress_message == "re-queued: its worker shut down"
    assert run.assignment_blob is None


@pytest.mark.parametrize(
    "how",
    ["SIGTERM to the process group", "SIGTERM to the main process", "Ctrl-C"],
)
def test_a_worker_told_to_stop_exits_promptly_and_hands_its_run_back(workers, how):
    worker, run = busy_worker(workers, "stopping")
    pid = worker.process.pid
    {
        "SIGTERM to the process group": lambda: os.killpg(pid, signal.SIGTERM),
        "SIGTERM to the main process": lambda: os.kill(pid, signal.SIGTERM),
        "Ctrl-C": lambda: os.killpg(pid, signal.SIGINT),
    }[how]()
    worker.exited_within(BOUND)
    assert_nothing_left(worker)
    assert_handed_back(run)
    # No pool process died of the signal: each stopped as the main process told it to.
    assert "exited with" not in worker.log.read_text()
    if how != "SIGTERM to the process group":
        return  # the same path as the group's; test_celery_worker covers the next worker too
    second = workers("next")
    wait_until_finished(run, worker=second, what="the run to end on the next worker")
    assert (run.status, run.attempts) == (RunStatus.SUCCEEDED, 1)
    assert run.worker.startswith("next@")
    assert_stored_assignment_is_consistent(run)


def test_a_cold_shutdown_still_ends_the_pool_processes_and_gives_its_run_to_the_others(workers):
    """No ``worker_shutdown`` follows a cold shutdown: the run handed back goes to the broker as
    the worker exits, so that another worker takes it at once, not after the lost-message
    sweep (10 minutes here)."""
    worker, run = busy_worker(workers, "cold")
    os.kill(worker.process.pid, signal.SIGQUIT)
    worker.exited_within(BOUND)
    assert_nothing_left(worker)
    assert_handed_back(run)
    assert f"runs [{run.pk}] and shards [] given to the broker" in worker.log.read_text()
    other = workers("other", TVCS_RUN_LOST_AFTER="600", TVCS_RUN_STALE_AFTER="600")
    wait_until_finished(run, worker=other, what="the run to end on another worker")
    assert (run.status, run.attempts) == (RunStatus.SUCCEEDED, 1)
    assert run.worker.startswith("other@")
    assert_stored_assignment_is_consistent(run)


def pool_processes(worker) -> list[int]:
    """The worker's children: its pool processes (and the embedded beat's)."""
    children = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit():
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == worker.process.pid and fields[0] != "Z":
                    children.append(int(entry))
        except (ProcessLookupError, FileNotFoundError):
            pass
    return sorted(children)


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_a_pool_process_told_to_stop_alone_hands_its_run_back_and_the_pool_replaces_it(workers):
    """A SIGTERM to one pool process (not to its worker): the process stops its run at the
    next progress report, hands it back, gives it to the broker and leaves the pool, which
    starts another; the worker goes on and the run completes."""
    worker, run = busy_worker(workers, "alone")
    before = pool_processes(worker)
    ticks = {pid: cpu_ticks(pid) for pid in before}
    time.sleep(1.0)
    computing = max(before, key=lambda pid: cpu_ticks(pid) - ticks[pid])
    os.kill(computing, signal.SIGTERM)
    wait_until_finished(run, worker=worker, what="the run to end on the same worker")
    assert (run.status, run.attempts) == (RunStatus.SUCCEEDED, 1)
    assert_stored_assignment_is_consistent(run)
    assert worker.process.poll() is None  # the worker itself goes on
    log = worker.log.read_text()
    assert f"told to stop: runs [{run.pk}], shards [] handed back; exiting" in log
    after = pool_processes(worker)
    assert computing not in after
    assert len(after) == len(before)


def test_a_worker_restarted_under_its_name_takes_back_the_run_it_was_killed_computing(workers):
    """SIGKILL runs no shutdown handler: the run stays ``running`` under the dead worker's name.
    The same worker started again takes it back at once, long before the stale-run recovery
    (here 10 minutes) would."""
    worker, run = busy_worker(workers, "phoenix")
    worker.kill()
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING  # nothing handed it back
    again = workers("phoenix", TVCS_RUN_STALE_AFTER="600")
    wait_until_finished(run, worker=again, what="the run to end on the restarted worker")
    assert (run.status, run.attempts) == (RunStatus.SUCCEEDED, 1)  # the killed attempt not counted
    assert run.worker.startswith("phoenix@")
    assert "left by its earlier self queued" in again.log.read_text()
    assert_stored_assignment_is_consistent(run)
