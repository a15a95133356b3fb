"""Sharded runs: a run's tasks solved in shards by several workers, coordinated by prices.

A run with ``shards > 1`` is planned by the worker that executes it
(:func:`run_shards_start`): the engine splits its tasks
(:func:`~assignment.engine.shards.split_tasks`) and the caps into shares, and one
:class:`~assignment.models.RunShard` row per shard holds its input (round 0). Each row is one
``assignment.shard_solve`` message: a worker claims the row (queued -> running, one conditional
UPDATE), solves the shard (:func:`~assignment.engine.shards.solve_shard`) and stores its
pairs, accuracy and prices on the row. The shard that finds its round complete (under a lock
of the run's row, so exactly one of them does) enqueues ``assignment.shards_coordinate`` once
the transaction commits. The coordinator (:func:`shards_coordinate`) keeps the round or
rejects it, moves shares by prices and either plans the next round (new rows for the shards
whose shares changed) or stores the merged assignment on the run exactly as a one-worker run
does. Its writes are conditional on the run's ``shard_round``: a duplicate coordination
changes nothing.

Every row and message can be lost: :func:`shards_recover_stale` (called by
:func:`~assignment.services.runs.runs_recover_stale`) re-queues shards whose worker went silent,
enqueues again shards queued for too long, and coordinates again a complete round that was
not coordinated.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from assignment.engine import AssignmentProblem
from assignment.engine.rounds import NextRound
from assignment.engine.shards import (
    ROUNDS,
    STEP,
    TOL,
    ShardJob,
    ShardOutcome,
    initial_shares,
    judge_round,
    merge_outcomes,
    merged_accuracy,
    propose_round,
    solve_shard,
    split_tasks,
)
from assignment.engine.solve import evaluate
from assignment.engine.under_confusion import CHOSEN_UNDER_MATRICES
from assignment.models import AssignmentRun, RunShard, RunStatus
from assignment.services.runs import (
    _bayes_vote_prior,
    _Heartbeat,
    _layers_note,
    _pending_note,
    _round_layers,
    _run_round,
    _run_store,
    _whole_problem,
    run_fail,
    run_fail_reason,
)

logger = logging.getLogger(__name__)


def _enqueue_shards(shard_ids: list[int]) -> None:
    from assignment.tasks import shard_solve_task

    for shard_id in shard_ids:
        transaction.on_commit(lambda s=shard_id: shard_solve_task.delay(s))


def _enqueue_coordination(run_id: int, round_: int) -> None:
    from assignment.tasks import shards_coordinate_task

    transaction.on_commit(lambda: shards_coordinate_task.delay(run_id, round_))


def _create_rows(run_id: int, round_: int, jobs: list[ShardJob]) -> list[int]:
    now = timezone.now()
    rows = [
        RunShard.objects.create(
            run_id=run_id,
            round=round_,
            index=job.index,
            budget=job.budget,
            enqueued_at=now,
            **RunShard.arrays(tasks=job.tasks, worker_caps=job.worker_caps),
        )
        for job in jobs
    ]
    return [row.pk for row in rows]


def _sharded_problem(
    run: AssignmentRun, *, under_confusion: bool | None = None
) -> tuple[AssignmentProblem, NextRound | None]:
    """The problem a sharded run solves, and for a next round its
    :class:`~assignment.engine.rounds.NextRound` (else None): the project's whole problem, or
    the round's (posteriors as priors, answered and pending pairs not eligible, caps and
    budget net of them), exactly as a one-worker run builds it.

    ``under_confusion`` None: under the model the run was planned under, the quality's
    Dawid-Skene matrices if ``shard_state["dawid_skene"]`` (set by :func:`run_shards_start`),
    else the symmetric model (runs planned before shards were chosen under the matrices keep
    it to their end)."""
    if under_confusion is None:
        under_confusion = bool(run.shard_state.get("dawid_skene"))
    if run.next_round:
        nxt = _run_round(run, under_confusion=under_confusion)
        return nxt.problem, nxt
    return _whole_problem(run, under_confusion=under_confusion), None


def run_shards_start(*, run: AssignmentRun) -> bool:
    """Plan round 0 of a claimed (running) sharded run: its shards in proportion to their
    sizes, one row and one message each. False if the run was planned already (a duplicate
    delivery) or is no longer running."""
    problem, _ = _sharded_problem(run, under_confusion=True)
    tasks = split_tasks(problem, min(run.shards, max(1, problem.n_tasks)))
    sizes = [t.shape[0] for t in tasks]
    shares = initial_shares(problem.max_tasks_per_worker, sizes)
    budgets = initial_shares(problem.budget, sizes)
    jobs = [ShardJob(s, tasks[s], shares[s], int(budgets[s])) for s in range(len(tasks))]
    state = {"step": STEP, "best_accuracy": None, "best_rows": [], "history": []}
    # Chosen, priced and judged under the quality's Dawid-Skene matrices (the page says so).
    state["dawid_skene"] = problem.confusion is not None
    with transaction.atomic():
        planned = AssignmentRun.objects.filter(
            pk=run.pk, status=RunStatus.RUNNING, shard_round__isnull=True
        ).update(
            shard_round=0,
            shard_state=state,
            worker="",  # the shards' workers compute it now: no worker hands it back
            heartbeat_at=timezone.now(),
            progress_message=f"round 0: 0 of {len(jobs)} shards solved",
        )
        if not planned:
            return False
        _enqueue_shards(_create_rows(run.pk, 0, jobs))
    logger.info("run %s: %d shards queued", run.pk, len(jobs))
    return True


def shard_claim(*, shard_id: int, worker: str = "") -> bool:
    """Move a queued shard of a running run to running on ``worker``; False otherwise."""
    now = timezone.now()
    claimed = RunShard.objects.filter(
        pk=shard_id, status=RunStatus.QUEUED, run__status=RunStatus.RUNNING
    ).update(status=RunStatus.RUNNING, worker=worker, heartbeat_at=now, attempts=F("attempts") + 1)
    return claimed == 1


def shard_fail(*, shard_id: int, reason: str) -> bool:
    """Fail the run of a shard with ``reason`` (a shard that cannot be solved fails its run)."""
    run_id = RunShard.objects.filter(pk=shard_id).values_list("run_id", flat=True).first()
    return run_id is not None and run_fail(run_id=run_id, reason=reason)


class _ShardStopped(Exception):
    """The shard stopped being this worker's (handed back, its run cancelled or failed), or
    the worker solving it is shutting down (``shard_execute``'s ``should_stop``)."""


def _shard_progress(shard: RunShard, should_stop: Callable[[], bool] | None) -> Callable:
    """The solver's progress callback for ``shard``: it raises :class:`_ShardStopped` when
    ``should_stop()`` turns true, or (looked at once a second) when the shard is no longer
    running on its worker under a running run."""
    last = [time.monotonic()]

    def progress(fraction: float, message: str) -> None:
        if should_stop is not None and should_stop():
            raise _ShardStopped
        now = time.monotonic()
        if now - last[0] < 1.0:
            return
        last[0] = now
        mine = RunShard.objects.filter(
            pk=shard.pk,
            status=RunStatus.RUNNING,
            worker=shard.worker,
            run__status=RunStatus.RUNNING,
        )
        if not mine.exists():
            raise _ShardStopped

    return progress


def shard_execute(*, shard_id: int, should_stop: Callable[[], bool] | None = None) -> bool:
    """Solve a claimed shard and store its answer and prices; the shard completing its round
    enqueues the coordination. False if nothing was stored (the shard or its run moved on).

    The solver stops at its next progress report, storing nothing, once ``should_stop()`` turns
    true (the worker is shutting down and hands the shard back: :func:`shards_hand_back`) or
    the shard is no longer this worker's (handed back, its run cancelled).
    """
    shard = RunShard.objects.select_related("run__project", "run__quality_matrix").get(pk=shard_id)
    run = shard.run
    heartbeat = _Heartbeat(
        shard_id, every=max(1.0, settings.TVCS_RUN_STALE_AFTER / 6), model=RunShard
    )
    heartbeat.start()
    try:
        job = ShardJob(shard.index, shard.tasks, shard.worker_caps, shard.budget)
        options = dict(run.options)
        outcome = solve_shard(
            _sharded_problem(run)[0],
            job,
            method=run.method,
            seed=run.seed,
            options=options,
            progress=_shard_progress(shard, should_stop),
        )
    except _ShardStopped:
        logger.info("run %s: shard %s stopped while solving; nothing stored", run.pk, shard.index)
        return False
    except (ValueError, RuntimeError, MemoryError) as exc:
        logger.exception("run %s: shard %s failed", run.pk, shard.index)
        run_fail(run_id=run.pk, reason=f"shard {shard.index}: {run_fail_reason(exc)}")
        return False
    finally:
        heartbeat.stop.set()
        heartbeat.join()
    return _shard_store(shard, outcome)


def _shard_store(shard: RunShard, outcome: ShardOutcome) -> bool:
    with transaction.atomic():
        # The run's row locked first: completions of one run are serial, so exactly one of them
        # sees its round complete (PostgreSQL; SQLite's writers are serial anyway).
        list(AssignmentRun.objects.select_for_update().filter(pk=shard.run_id).values("pk"))
        stored = RunShard.objects.filter(
            pk=shard.pk, status=RunStatus.RUNNING, worker=shard.worker
        ).update(
            status=RunStatus.SUCCEEDED,
            accuracy=outcome.accuracy,
            budget_price=outcome.budget_price,
            seconds=outcome.seconds,
            **RunShard.outputs(
                workers=outcome.workers, tasks=outcome.tasks, worker_price=outcome.worker_price
            ),
        )
        if not stored:
            logger.info("shard %s is no longer running; its answer is dropped", shard.pk)
            return False
        counts = RunShard.objects.filter(run_id=shard.run_id, round=shard.round).aggregate(
            total=Count("pk"), done=Count("pk", filter=Q(status=RunStatus.SUCCEEDED))
        )
        fraction = (shard.round + counts["done"] / counts["total"]) / (ROUNDS + 1)
        alive = AssignmentRun.objects.filter(
            pk=shard.run_id, status=RunStatus.RUNNING, shard_round=shard.round
        ).update(
            progress=max(1, min(99, int(99 * fraction))),
            progress_message=(
                f"round {shard.round}: {counts['done']} of {counts['total']} shards solved"
            ),
            heartbeat_at=timezone.now(),
        )
        if alive and counts["done"] == counts["total"]:
            _enqueue_coordination(shard.run_id, shard.round)
    return True


def _outcome(row: RunShard) -> ShardOutcome:
    pairs = row.pairs.astype(np.int64)
    return ShardOutcome(
        index=row.index,
        workers=pairs[:, 0],
        tasks=pairs[:, 1],
        accuracy=row.accuracy,
        worker_price=row.worker_price,
        budget_price=row.budget_price,
        seconds=row.seconds,
    )


def _round_rows(run: AssignmentRun, round_: int) -> dict[int, RunShard] | None:
    """The round's rows by shard index, or None if some are not solved yet."""
    rows = list(RunShard.objects.filter(run=run, round=round_))
    if not rows or any(row.status != RunStatus.SUCCEEDED for row in rows):
        return None
    return {row.index: row for row in rows}


def shards_coordinate(*, run_id: int, round_: int) -> str:
    """Coordinate a complete round of a sharded run: keep it if the merged accuracy did not
    fall (else halve the step), then plan the next round or finish the run.

    Returns what it did: ``"next round"``, ``"finished"`` or ``"nothing"`` (the run is not at
    that round any more, or the round is not complete).
    """
    run = AssignmentRun.objects.select_related("project", "quality_matrix").get(pk=run_id)
    if run.status != RunStatus.RUNNING or run.shard_round != round_:
        return "nothing"
    current = _round_rows(run, round_)
    if current is None:
        return "nothing"
    state = dict(run.shard_state)
    rows, last = _best_rows(state, current, round_)
    order = sorted(rows)
    best = [_outcome(rows[s]) for s in order]
    tasks = [rows[s].tasks for s in order]
    shares = np.stack([rows[s].worker_caps for s in order])
    budgets = np.array([rows[s].budget for s in order])
    _, _, spread, jobs = propose_round(tasks, shares, budgets, best, step=state["step"], tol=TOL)
    state["history"][-1]["price_spread"] = spread
    if run.started_at is not None:  # when the round was coordinated, from the run's start
        state["history"][-1]["seconds"] = (timezone.now() - run.started_at).total_seconds()
    min_step = 1.0 / (2 * max(1, int(shares.sum(axis=0).max(initial=1))))  # smallest_step
    if last or round_ >= ROUNDS or not jobs or state["step"] < min_step:
        return _finish(run, best, state)
    with transaction.atomic():
        moved = AssignmentRun.objects.filter(
            pk=run_id, status=RunStatus.RUNNING, shard_round=round_
        ).update(
            shard_round=round_ + 1,
            shard_state=state,
            heartbeat_at=timezone.now(),
            progress_message=f"round {round_ + 1}: 0 of {len(jobs)} shards solved",
        )
        if not moved:
            return "nothing"
        _enqueue_shards(_create_rows(run_id, round_ + 1, jobs))
    return "next round"


def _best_rows(
    state: dict, current: dict[int, RunShard], round_: int
) -> tuple[dict[int, RunShard], bool]:
    """Keep or reject round ``round_`` (:func:`~assignment.engine.shards.judge_round`, updating
    ``state``): the rows of the best answer, and whether the round is the last."""
    if round_ == 0:
        best, last = current, False
        accuracy = _accuracy_of(best)
        state["history"].append(
            {"round": 0, "accuracy": accuracy, "accepted": True, "shards": len(best)}
        )
    else:
        best = {r.index: r for r in RunShard.objects.filter(pk__in=state["best_rows"])}
        trial = best | current
        accuracy = _accuracy_of(trial)
        accepted, state["step"], last = judge_round(state["best_accuracy"], accuracy, state["step"])
        state["history"].append(
            {"round": round_, "accuracy": accuracy, "accepted": accepted, "shards": len(current)}
        )
        if not accepted:
            return best, last
        best = trial
    state["best_rows"] = [best[s].pk for s in sorted(best)]
    state["best_accuracy"] = accuracy
    return best, last


def _accuracy_of(rows: dict[int, RunShard]) -> float:
    order = sorted(rows)
    sizes = np.array([rows[s].tasks.shape[0] for s in order])
    return merged_accuracy([_outcome(rows[s]) for s in order], sizes)


def _finish(run: AssignmentRun, best, state: dict) -> str:
    """Store the merged assignment of the shards' ``best`` outcomes on the run, as a
    one-worker run stores its own; a next round with rounds to go after it keeps this round's
    layers of the merged plan (:func:`~assignment.services.runs._round_layers`)."""
    problem, nxt = _sharded_problem(run)
    x = merge_outcomes(problem, best)
    rounds = len(state["history"])
    under = ""
    if problem.confusion is not None:  # the rule of AssignmentRun.chosen_under
        chosen = "chosen" if run.method in CHOSEN_UNDER_MATRICES else "scored"
        under = f", {chosen} under the Dawid\u2013Skene matrices"
    plural = "s" * (rounds != 1)
    message = f"{run.method} in {len(best)} shards, {rounds} price round{plural}{under}"
    if nxt is not None and (run.rounds_left or 1) > 1:
        take, expected, error = _round_layers(nxt, x, rounds_left=run.rounds_left, seed=run.seed)
        accuracy = (expected, error)
        planned = evaluate(nxt.problem, x, seed=run.seed)[0]
        message += _layers_note(nxt, x, take, run.rounds_left, planned)
        x = take
    else:
        accuracy = evaluate(problem, x, seed=run.seed)
        message += "" if nxt is None else _pending_note(nxt)
    vote_prior = _bayes_vote_prior(run, problem)  # read before the run's row is locked
    seconds = (timezone.now() - run.started_at).total_seconds() if run.started_at else None
    with transaction.atomic():
        kept = AssignmentRun.objects.filter(
            pk=run.pk, status=RunStatus.RUNNING, shard_round=run.shard_round
        ).update(shard_state=state)
        if not kept:
            return "nothing"
        _run_store(
            AssignmentRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING),
            problem,
            np.nonzero(x),
            seconds=seconds,
            accuracy=accuracy,
            message=message,
            confusion=run.quality_matrix.confusion,
            vote_prior=vote_prior,
        )
    return "finished"


def shards_hand_back(*, worker: str, shard_ids: list[int] | None = None) -> list[int]:
    """Hand back the shards ``worker`` is solving (or those of ``shard_ids`` it is), because it
    is shutting down: queued again at once, for :func:`shards_enqueue` to give to the broker
    once the worker has stopped taking messages; returns them. As for runs
    (:func:`~assignment.services.runs.runs_hand_back`): the solve under way stops at its next
    progress report and stores nothing, and the attempt is not counted against the run.
    """
    running = RunShard.objects.filter(
        status=RunStatus.RUNNING, worker=worker, run__status=RunStatus.RUNNING
    )
    if shard_ids is not None:
        running = running.filter(pk__in=shard_ids)
    handed_back = [
        shard_id
        for shard_id in running.values_list("pk", flat=True)
        if RunShard.objects.filter(pk=shard_id, status=RunStatus.RUNNING, worker=worker).update(
            status=RunStatus.QUEUED, enqueued_at=timezone.now(), attempts=F("attempts") - 1
        )
    ]
    if handed_back:
        logger.warning("worker %s stopping: shards %s queued again", worker, handed_back)
    return handed_back


def shards_enqueue(*, shard_ids: list[int]) -> list[int]:
    """Give the broker those of ``shard_ids`` still queued under a running run; returns them."""
    queued = list(
        RunShard.objects.filter(
            pk__in=shard_ids, status=RunStatus.QUEUED, run__status=RunStatus.RUNNING
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    _enqueue_shards(queued)
    return queued


def shards_reclaim(*, worker: str) -> list[int]:
    """At the start of ``worker``: the shards an earlier worker of that name left running
    (SIGKILL, a crash) or handed back without giving them to the broker (a cold shutdown),
    queued and given to the broker at once; returns them (as
    :func:`~assignment.services.runs.runs_reclaim` does for runs)."""
    handed_back = shards_hand_back(worker=worker)
    queued = RunShard.objects.filter(
        status=RunStatus.QUEUED, worker=worker, run__status=RunStatus.RUNNING
    )
    shard_ids = sorted(set(handed_back) | set(queued.values_list("pk", flat=True)))
    return shards_enqueue(shard_ids=shard_ids) if shard_ids else []


def shards_recover_stale(*, now) -> dict[str, list[int]]:
    """Recover the shards of running sharded runs (see
    :func:`~assignment.services.runs.runs_recover_stale`).

    * a running shard whose heartbeat is older than ``TVCS_RUN_STALE_AFTER``: queued again
      (its run failed after ``TVCS_RUN_MAX_ATTEMPTS`` attempts);
    * a shard queued ``TVCS_RUN_LOST_AFTER`` ago: its message given to the broker again;
    * a run whose current round is complete but which has not moved for ``TVCS_RUN_LOST_AFTER``
      (its coordination message was lost, or its coordinator died): coordinated again.

    Returns the shard ids re-queued and re-enqueued, and the runs coordinated again.
    """
    live = Q(run__status=RunStatus.RUNNING)
    stale_cutoff = now - timedelta(seconds=settings.TVCS_RUN_STALE_AFTER)
    lost_cutoff = now - timedelta(seconds=settings.TVCS_RUN_LOST_AFTER)
    requeued = []
    stale = RunShard.objects.filter(live, status=RunStatus.RUNNING, heartbeat_at__lt=stale_cutoff)
    for shard_id, run_id, attempts, beat in stale.values_list(
        "pk", "run_id", "attempts", "heartbeat_at"
    ):
        same = RunShard.objects.filter(pk=shard_id, status=RunStatus.RUNNING, heartbeat_at=beat)
        if attempts >= settings.TVCS_RUN_MAX_ATTEMPTS:
            run_fail(
                run_id=run_id, reason=f"the worker of a shard stopped responding {attempts} times"
            )
        elif same.update(status=RunStatus.QUEUED, enqueued_at=now):
            requeued.append(shard_id)
    lost = RunShard.objects.filter(live, status=RunStatus.QUEUED, enqueued_at__lt=lost_cutoff)
    reenqueued = [
        shard_id
        for shard_id, at in lost.values_list("pk", "enqueued_at")
        if RunShard.objects.filter(pk=shard_id, status=RunStatus.QUEUED, enqueued_at=at).update(
            enqueued_at=now
        )
    ]
    _enqueue_shards(requeued + reenqueued)
    coordinated = _coordinate_stuck_rounds(lost_cutoff)
    if requeued or reenqueued or coordinated:
        logger.warning(
            "shards re-queued %s, enqueued again %s; runs coordinated again %s",
            requeued,
            reenqueued,
            coordinated,
        )
    return {"requeued": requeued, "reenqueued": reenqueued, "coordinated": coordinated}


def _coordinate_stuck_rounds(cutoff) -> list[int]:
    waiting = AssignmentRun.objects.filter(
        status=RunStatus.RUNNING, shard_round__isnull=False, heartbeat_at__lt=cutoff
    )
    stuck = []
    for run_id, round_ in waiting.values_list("pk", "shard_round"):
        rows = RunShard.objects.filter(run_id=run_id, round=round_)
        complete = rows.exists() and not rows.exclude(status=RunStatus.SUCCEEDED).exists()
        if complete and AssignmentRun.objects.filter(
            pk=run_id, status=RunStatus.RUNNING, shard_round=round_, heartbeat_at__lt=cutoff
        ).update(heartbeat_at=timezone.now()):  # once a period
            stuck.append(run_id)
            _enqueue_coordination(run_id, round_)
    return stuck
