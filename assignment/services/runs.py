"""Assignment runs: create, claim, execute, fail, cancel, recover.

Lifecycle: queued -> running -> succeeded | failed | cancelled, and queued -> cancelled. Every
transition is one conditional UPDATE on the status it leaves, so two workers (or a worker and
a cancel request) can never both move a run on: the loser's update changes no row."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.utils import timezone

from assignment.engine import (
    AssignmentProblem,
    NextRound,
    SolveResult,
    check_options,
    solve,
)
from assignment.engine.distributions import accuracy_under_confusion, assignment_distributions
from assignment.engine.solve import evaluate
from assignment.errors import (
    RunLimitError,
    RunStateError,
    RunValidationError,
    full_clean_or_raise,
)
from assignment.models import (
    MAX_ROUNDS_LEFT,
    AssignmentRun,
    Comparison,
    Method,
    Project,
    QualityMatrix,
    RunStatus,
)
from assignment.selectors import (
    fitting_confusion,
    largest_task_cap,
    project_budget,
    project_pair_capacity,
    project_problem,
    run_readiness,
)
from assignment.services.rounds import (
    _check_rounds_unchanged,
    _next_round,
    _round_plan,
    _round_start,
    _RoundPlan,
    target_posterior_refusal,
)

logger = logging.getLogger(__name__)


class _RunStopped(Exception):
    """The run left ``running`` (cancelled, or failed by recovery) while it was computing."""


class _RunInterrupted(Exception):
    """The worker computing the run is shutting down (``run_execute``'s ``should_stop``)."""


def _run_problem(run: AssignmentRun) -> AssignmentProblem:
    """The engine problem of ``run``: the project's problem, or for a next round that problem
    conditioned on the answers the round counts (:func:`~assignment.engine.next_round`)."""
    if not run.next_round:
        return _whole_problem(run)
    return _run_round(run).problem


def _whole_problem(run: AssignmentRun, *, under_confusion: bool = False) -> AssignmentProblem:
    """The project's problem for ``run``; with ``under_confusion``, with the quality's
    Dawid–Skene matrices when it has matrices that fit (:func:`_fitting_confusion`)."""
    return project_problem(
        project=run.project,
        matrix=run.quality_matrix,
        budget=run.budget,
        max_workers_per_task=run.max_workers_per_task,
        max_tasks_per_worker=run.max_tasks_per_worker,
        confusion=_fitting_confusion(run) if under_confusion else None,
    )


def _fitting_confusion(run: AssignmentRun) -> np.ndarray | None:
    """The Dawid–Skene confusion matrices a run (a whole run or a next round) is chosen
    under: its quality's, or None (a one-coin or gold estimate, or matrices that no longer fit
    the project's labels, logged), :func:`~assignment.selectors.fitting_confusion`."""
    confusion = fitting_confusion(project=run.project, matrix=run.quality_matrix)
    if confusion is None and run.quality_matrix.confusion is not None:
        logger.warning(
            "run %s: confusion matrices of shape %s do not fit %d labels; chosen without them",
            run.pk,
            run.quality_matrix.confusion.shape,
            len(run.project.labels),
        )
    return confusion


def _run_round(run: AssignmentRun, *, under_confusion: bool = True) -> NextRound:
    """A next round's :class:`~assignment.engine.rounds.NextRound`: the answers it counts,
    with its posteriors and choice under the quality's Dawid–Skene matrices when they fit
    (``under_confusion``, :func:`_fitting_confusion`), else under the symmetric model."""
    return _next_round(
        problem=_whole_problem(run, under_confusion=under_confusion),
        project=run.project,
        matrix=run.quality_matrix,
        through=run.answers_through or 0,
        budget=run.budget,
        target_posterior=run.target_posterior,
        pending_runs=run.round_start.get("pending_runs", []),
    )[0]


def _run_solve(run: AssignmentRun, progress) -> tuple[AssignmentProblem, SolveResult]:
    """Solve ``run``'s problem with its method; a round with rounds to go after it
    (``rounds_left > 1``) solves all of them (its budget) and keeps this round's layers of
    that plan (:meth:`~assignment.engine.rounds.NextRound.take_layers`), evaluated again."""
    arguments = {"method": run.method, "seed": run.seed, "progress": progress, **run.options}
    # On Dawid-Skene quality, whole runs and next rounds are chosen under its matrices.
    if not run.next_round:
        problem = _whole_problem(run, under_confusion=True)
        return problem, solve(problem, **arguments)
    nxt = _run_round(run)
    plan = solve(nxt.problem, **arguments)
    if (run.rounds_left or 1) == 1:
        return nxt.problem, dataclasses.replace(plan, message=plan.message + _pending_note(nxt))
    take, accuracy, error = _round_layers(
        nxt, plan.assignment, rounds_left=run.rounds_left, seed=run.seed
    )
    rows, cols = np.nonzero(take)
    result = dataclasses.replace(
        plan,
        rows=rows,
        cols=cols,
        expected_accuracy=accuracy,
        accuracy_standard_error=error,
        message=plan.message
        + _layers_note(nxt, plan.assignment, take, run.rounds_left, plan.expected_accuracy),
    )
    return nxt.problem, result


def _round_layers(nxt: NextRound, plan: np.ndarray, *, rounds_left: int, seed):
    """What a round with ``rounds_left`` rounds to go takes of ``plan`` (its problem's
    assignment for all of them, bool of shape (n_workers, n_tasks);
    :meth:`~assignment.engine.rounds.NextRound.take_layers`), and that assignment's expected
    accuracy and its standard error (None when exact): the one rule for a round that runs, in
    one process or in shards, and one previewed."""
    take = nxt.take_layers(plan, rounds_left=rounds_left)
    accuracy, error = evaluate(nxt.problem, take, seed=seed)
    return take, accuracy, error


def _layers_note(
    nxt: NextRound, plan: np.ndarray, take: np.ndarray, rounds_left: int, planned_accuracy=None
) -> str:
    """What a round's message adds when it takes layers of a plan for ``rounds_left``
    rounds (with :func:`_pending_note`): the plan's expected accuracy after all of them, when
    given, beside the run's own (this round's pairs alone, often little above the accuracy now:
    one more answer a task seldom turns a vote, the next rounds' do)."""
    planned = plan & take
    checks = int(take.sum() - planned.sum())
    extra = (
        f" and {checks:,} check answer{'s' * (checks != 1)} for open tasks the plan leaves out"
        if checks
        else ""
    )
    after = (
        f", expected accuracy {planned_accuracy:.4f} after all of them"
        if planned_accuracy is not None
        else ""
    )
    return (
        f"; planned {int(plan.sum()):,} pairs for {rounds_left} rounds{after} (the figures "
        f"before this are that plan's), this one takes {int(planned.sum()):,} of them in layers"
        f"{extra}: the run's expected accuracy is after those alone, before the next rounds' "
        f"answers{_pending_note(nxt)}"
    )


def _pending_note(nxt: NextRound) -> str:
    """What a round's message says of its pending pairs ("" without): spent, and left out of
    the expected accuracy, which is therefore conservative (docs/design.md#rounds)."""
    if not nxt.n_pending:
        return ""
    return (
        f"; {nxt.n_pending:,} pairs of earlier rounds await answers: counted as spent, their "
        "answers left out of the expected accuracy (conservative)"
    )


def _check_options(method: str, options: dict) -> dict:
    if not isinstance(options, dict):
        raise RunValidationError(f"options must be an object of method options, got {options!r}")
    try:
        check_options(method, options)
    except ValueError as exc:
        raise RunValidationError(str(exc)) from exc
    return dict(options)


def run_create(
    *,
    project: Project,
    method: str,
    budget: int | None = None,
    max_workers_per_task: int | None = None,
    max_tasks_per_worker: int | None = None,
    seed: int | None = None,
    options: dict | None = None,
    next_round: bool = False,
    target_posterior: float | None = None,
    target_accuracy: float | None = None,
    rounds_left: int | None = None,
    shards: int = 1,
    enqueue: bool = True,
) -> AssignmentRun:
    """Queue a run of ``method`` on the project's latest quality matrix.

    Caps and budget default to the project's defaults (the budget to as many pairs as the caps
    allow); workers' and tasks' own caps and priors override them when the run computes. The
    run is handed to a Celery worker once the surrounding transaction commits (``enqueue``).

    A ``next_round`` run conditions on the answers collected so far (those up to now: later
    answers wait for the round after): each task's prior becomes its posterior under the
    matrix, answered pairs are not assigned again, the caps count the answers (they are caps
    over all rounds), and ``budget`` is this round's, by default what remains of the
    project's budget after the answers. Tasks whose likelier label has a posterior of at least
    ``target_posterior`` get nobody; the round is refused once the answers' expected accuracy
    reaches ``target_accuracy``, or when it has nothing to assign. With ``rounds_left`` > 1
    (rounds to go, this one included) the round is not the last: it plans all of them with
    ``budget`` and takes its share of the plan in layers, a first or a check answer for each
    open task before any task's next one (``docs/design.md``, "Rounds"). ``round_start`` records
    what the round started from (see ``docs/design.md``, "Rounds").

    Raises :class:`RunValidationError` for an unknown method, an invalid option or target, a
    round with nothing to do, or a project whose runs would be wrong
    (:func:`~assignment.selectors.run_readiness`).
    """
    _check_method(method)
    _check_round_targets(
        next_round, target_posterior, target_accuracy, rounds_left, len(project.labels)
    )
    return _run_new(
        project=project,
        matrix=_quality_matrix_for_runs(project=project),
        method=method,
        budget=budget,
        max_workers_per_task=max_workers_per_task,
        max_tasks_per_worker=max_tasks_per_worker,
        seed=seed,
        options=options,
        enqueue=enqueue,
        round_targets=(target_posterior, target_accuracy, rounds_left) if next_round else None,
        shards=shards,
    )


def _check_shards_under_confusion(run: AssignmentRun) -> None:
    """Refuse a sharded run on Dawid–Skene quality whose method may give a task more workers
    than the Dawid–Skene vote's exact limit: its shards' prices (leave-one-out losses of that
    vote) are exact only within it (:mod:`~assignment.engine.shards`)."""
    if run.shards == 1:
        return
    if fitting_confusion(project=run.project, matrix=run.quality_matrix) is None:
        return
    from assignment.engine.greedy_confusion import max_confusion_workers  # numba kernels
    from assignment.engine.under_confusion import most_workers_a_task

    k = len(run.project.labels)
    cap = largest_task_cap(project=run.project, default=run.max_workers_per_task)
    limit = max_confusion_workers(k)
    if most_workers_a_task(run.method, n_labels=k, max_workers_per_task=cap) > limit:
        raise RunValidationError(
            f"a sharded run on Dawid\u2013Skene quality prices its workers by the exact "
            f"accuracy of the Dawid\u2013Skene vote, exact for at most {limit} workers a task "
            f"with {k} labels, "
            f"and {run.method} may give a task up to {cap}: set max_workers_per_task (and the "
            f"tasks' own caps) to at most {limit}, use greedy (it stops at {limit}), or run "
            "without shards"
        )


def _check_round_targets(
    next_round: bool,
    target_posterior: float | None,
    target_accuracy: float | None,
    rounds_left: int | None,
    n_labels: int,
) -> None:
    ask = (
        'make the run a next round too ("round": true over the API, "Next round" on the '
        "page, --round for the assign command)"
    )
    if not next_round and (target_posterior is not None or target_accuracy is not None):
        raise RunValidationError(
            f"target_posterior and target_accuracy are stopping rules of a next round: {ask}"
        )
    if not next_round and rounds_left is not None:
        raise RunValidationError(f"rounds_left says how many rounds a next round plans for: {ask}")
    refusal = target_posterior_refusal(target_posterior, n_labels=n_labels)
    if refusal:
        raise RunValidationError(refusal)
    _check_in(target_accuracy, "target_accuracy", 0.0, 1.0, "a number above 0, at most 1")
    if rounds_left is not None and not (
        isinstance(rounds_left, int) and 1 <= rounds_left <= MAX_ROUNDS_LEFT
    ):
        raise RunValidationError(
            f"rounds_left must be an integer from 1 to {MAX_ROUNDS_LEFT}, got {rounds_left!r}"
        )


def _check_in(value, name: str, low: float, high: float, what: str) -> None:
    """``value`` is None or in ``(low, high]``, or :class:`RunValidationError` naming it."""
    if value is None:
        return
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not low < value <= high:
        raise RunValidationError(f"{name} must be {what}, got {value!r}")


def _check_method(method: str) -> None:
    if method not in Method.values:
        raise RunValidationError(
            f"method must be one of {', '.join(Method.values)}, got {method!r}"
        )


def _quality_matrix_for_runs(*, project: Project) -> QualityMatrix:
    """The latest quality matrix, or :class:`RunValidationError` saying why a run would be
    wrong (:func:`~assignment.selectors.run_readiness`)."""
    readiness = run_readiness(project=project)
    if not readiness.ready:
        raise RunValidationError(readiness.refusal)
    return readiness.matrix


def _check_some_capacity(matrix: QualityMatrix, per_task: int, per_worker: int) -> None:
    """Refuse caps that leave no pair to assign (a run of 0 pairs is no answer); a round says
    so in its own words, with what its answers in hand leave."""
    capacity = project_pair_capacity(
        matrix=matrix, max_workers_per_task=per_task, max_tasks_per_worker=per_worker
    )
    if capacity == 0:
        raise RunValidationError(
            f"the caps leave no pair to assign (max_workers_per_task {per_task}, "
            f"max_tasks_per_worker {per_worker}, every worker's and task's own cap counted, "
            "inactive workers left out): raise a cap"
        )


def _caps_or_defaults(
    project: Project, max_workers_per_task: int | None, max_tasks_per_worker: int | None
) -> tuple[int, int]:
    """The caps asked for, or the project's default caps."""
    return (
        project.default_max_workers_per_task
        if max_workers_per_task is None
        else max_workers_per_task,
        project.default_max_tasks_per_worker
        if max_tasks_per_worker is None
        else max_tasks_per_worker,
    )


def _next_round_plan(
    *,
    project: Project,
    matrix: QualityMatrix,
    max_workers_per_task: int | None,
    max_tasks_per_worker: int | None,
    target_posterior: float | None,
) -> _RoundPlan:
    """The next round's plan under the caps asked for (the project's defaults for None) and
    the project's budget: what a next round, a comparison in rounds and the round preview all
    start from."""
    per_task, per_worker = _caps_or_defaults(project, max_workers_per_task, max_tasks_per_worker)
    return _round_plan(
        project=project,
        matrix=matrix,
        project_budget=project_budget(
            project=project,
            matrix=matrix,
            max_workers_per_task=per_task,
            max_tasks_per_worker=per_worker,
        ),
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        target_posterior=target_posterior,
    )


def _run_new(
    *,
    project: Project,
    matrix: QualityMatrix,
    method: str,
    budget: int | None,
    max_workers_per_task: int | None,
    max_tasks_per_worker: int | None,
    seed: int | None,
    options: dict | None,
    enqueue: bool,
    comparison: Comparison | None = None,
    round_targets: tuple[float | None, float | None, int | None] | None = None,
    round_plan: _RoundPlan | None = None,
    shards: int = 1,
) -> AssignmentRun:
    """Validate and queue a run; ``round_targets`` = ``(target_posterior, target_accuracy,
    rounds_left)``
    of a next round, None for a run on the whole project; ``round_plan`` the answers in hand
    when the caller has read them already (a comparison's runs share them)."""
    requested_budget = budget
    if budget == 0 and round_targets is None:  # (a round says so with what remains)
        raise RunValidationError(
            "a budget of 0 has nothing to spend: give a positive budget, or none for the project's"
        )
    per_task, per_worker = _caps_or_defaults(project, max_workers_per_task, max_tasks_per_worker)
    if round_targets is None:
        _check_some_capacity(matrix, per_task, per_worker)
    whole_budget = project_budget(
        project=project,
        matrix=matrix,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
    )
    if budget is None:
        budget = whole_budget
    run = AssignmentRun(
        project=project,
        comparison=comparison,
        quality_matrix=matrix,
        method=method,
        budget=budget,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        seed=seed,
        options=_check_options(method, options or {}),
        shards=shards,
        enqueued_at=timezone.now() if enqueue else None,
    )
    if round_targets is not None:
        run.next_round = True
        run.target_posterior, run.target_accuracy, run.rounds_left = round_targets
    full_clean_or_raise(run, RunValidationError)
    _check_shards_under_confusion(run)
    if run.next_round:
        if round_plan is None:
            round_plan = _next_round_plan(
                project=project,
                matrix=matrix,
                max_workers_per_task=max_workers_per_task,
                max_tasks_per_worker=max_tasks_per_worker,
                target_posterior=run.target_posterior,
            )
        _round_start(run, plan=round_plan, round_budget=requested_budget)
    with transaction.atomic():
        if enqueue:
            _check_active_runs(owner_id=project.owner_id, adding=1)
        if run.next_round and comparison is None:
            # a round counts: no round may start, be handed out or withdrawn while it is saved
            _check_rounds_unchanged(project=project, planned=round_plan.pending_runs)
        run.save()
    if enqueue:
        _enqueue_after_commit(run.pk)
    logger.info("queued run %s (%s) of project %s", run.pk, method, project.pk)
    return run


def _check_active_runs(*, owner_id: int, adding: int) -> None:
    """Raise :class:`RunLimitError` if ``adding`` more queued runs would give the owner more
    than ``TVCS_MAX_ACTIVE_RUNS`` queued or running: one user cannot hold every worker.

    Call it inside the transaction that saves the runs: it locks the owner's row, so that two
    requests of one user at once count each other's runs (PostgreSQL; SQLite's writers are
    serial anyway).
    """
    get_user_model().objects.select_for_update().filter(pk=owner_id).exists()
    active = AssignmentRun.objects.filter(
        project__owner_id=owner_id, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
    ).count()
    limit = settings.TVCS_MAX_ACTIVE_RUNS
    if active + adding > limit:
        raise RunLimitError(
            f"you have {active} runs queued or running and may have at most {limit}; "
            f"this request adds {adding}: wait for some to end (or cancel them) and ask again"
        )


def _enqueue_after_commit(run_id: int) -> None:
    """Give the run to the broker once the transaction commits. The message carries no time
    limits: Celery would put the enqueuing process's in it (its ``task_time_limit``
    settings), and the worker that computes the run applies its own
    (``TVCS_RUN_SOFT_TIME_LIMIT``, ``TVCS_RUN_TIME_LIMIT``)."""
    from assignment.tasks import run_execute_task

    transaction.on_commit(
        lambda: run_execute_task.apply_async((run_id,), time_limit=None, soft_time_limit=None)
    )


def run_claim(*, run_id: int, worker: str = "") -> bool:
    """Move a queued run to running on ``worker`` (a Celery hostname; empty in this process);
    False if it was not queued (someone else has it)."""
    now = timezone.now()
    claimed = AssignmentRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING,
        worker=worker,
        started_at=now,
        heartbeat_at=now,
        attempts=F("attempts") + 1,
        progress=0,
        progress_message="started",
    )
    return claimed == 1


class _Heartbeat(threading.Thread):
    """Touches ``heartbeat_at`` of a running run every few seconds from a side thread, so long
    stretches without progress callbacks (an LP solve) do not look like a dead worker."""

    def __init__(self, run_id: int, every: float, model=AssignmentRun) -> None:
        super().__init__(name=f"heartbeat-{model.__name__}-{run_id}", daemon=True)
        self.run_id = run_id
        self.every = every
        self.model = model  # AssignmentRun, or RunShard for a shard being solved
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            while not self.stop.wait(self.every):
                self.beat()
        finally:
            connection.close()

    def beat(self) -> None:
        """One heartbeat; a database that refuses it (locked, or gone for a moment) is
        logged and tried again at the next beat, so the thread never dies while its run
        computes (a dead heartbeat would let recovery re-queue a run that is alive)."""
        try:
            self.model.objects.filter(pk=self.run_id, status=RunStatus.RUNNING).update(
                heartbeat_at=timezone.now()
            )
        except DatabaseError as exc:
            logger.warning("run %s: heartbeat not written, retried: %s", self.run_id, exc)
            connection.close()  # a broken connection is opened anew at the next beat


def run_execute(
    *,
    run_id: int,
    should_stop: Callable[[], bool] | None = None,
    on_progress: Callable[[int, str], None] | None = None,
) -> AssignmentRun | None:
    """Compute a claimed (running) run and store its result with one conditional UPDATE.

    Progress goes to the row at most once a second; if the run stopped being ``running``
    meanwhile (cancelled, or handed back by :func:`runs_hand_back`), the computation stops and
    nothing is stored. So it does, leaving the row as it is, at the first progress report after
    ``should_stop()`` turns true (its worker is shutting down: the worker hands the run back).
    ``on_progress(percent, message)`` hears each report the row stores (a command prints it).
    An engine error marks the run failed with the error's text. Returns the run as stored, or
    None if it was deleted (with its project) while computing.
    """
    run = (
        AssignmentRun.objects.select_related("project", "quality_matrix").filter(pk=run_id).first()
    )
    if run is None:
        logger.info("run %s was deleted before it could compute", run_id)
        return None
    last = [0.0]

    def progress(fraction: float, message: str) -> None:
        if should_stop is not None and should_stop():
            raise _RunInterrupted
        now = time.monotonic()
        if now - last[0] < 1.0 and fraction < 1.0:
            return
        last[0] = now
        alive = AssignmentRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
            progress=max(0, min(99, int(100 * fraction))),
            progress_message=message,
            heartbeat_at=timezone.now(),
        )
        if not alive:
            raise _RunStopped
        if on_progress is not None:
            on_progress(max(0, min(99, int(100 * fraction))), message)

    if run.shards > 1:
        from assignment.services.shards import run_shards_start

        run_shards_start(run=run)
        return AssignmentRun.objects.filter(pk=run_id).first()
    heartbeat = _Heartbeat(run_id, every=max(1.0, settings.TVCS_RUN_STALE_AFTER / 6))
    heartbeat.start()
    try:
        problem, result = _run_solve(run, progress)
        vote_prior = _bayes_vote_prior(run, problem)
    except _RunStopped:
        logger.info("run %s stopped while computing: it is no longer running", run_id)
        return AssignmentRun.objects.filter(pk=run_id).first()
    except _RunInterrupted:
        logger.info("run %s stopped while computing: its worker is shutting down", run_id)
        return AssignmentRun.objects.filter(pk=run_id).first()
    except (ValueError, RuntimeError, MemoryError) as exc:
        logger.exception("run %s failed", run_id)
        run_fail(run_id=run_id, reason=run_fail_reason(exc))
        return AssignmentRun.objects.filter(pk=run_id).first()
    finally:
        heartbeat.stop.set()
        heartbeat.join()
    _run_store(
        AssignmentRun.objects.filter(pk=run_id, status=RunStatus.RUNNING),
        problem,
        (result.rows, result.cols),
        seconds=result.seconds,
        accuracy=(result.expected_accuracy, result.accuracy_standard_error),
        message=result.message,
        confusion=run.quality_matrix.confusion,
        vote_prior=vote_prior,
    )
    return AssignmentRun.objects.filter(pk=run_id).first()


def _run_store(
    running,
    problem: AssignmentProblem,
    pairs: tuple,
    *,
    seconds,
    accuracy,
    message,
    confusion: np.ndarray | None = None,
    vote_prior: np.ndarray | None = None,
) -> bool:
    """Store a computed assignment, ``pairs`` = ``(workers, tasks)`` int arrays, on the run
    ``running`` selects (a queryset that still requires it to be running): one conditional
    UPDATE, to succeeded. ``accuracy`` is ``(expected_accuracy, standard_error)``. With the
    quality's Dawid-Skene ``confusion`` matrices, the run also gets the accuracy under them
    (``dawid_skene_accuracy``; the Bayes vote's scores start from ``vote_prior``,
    :func:`_bayes_vote_prior`). False if the run was no longer running (the result is
    dropped)."""
    rows, cols = pairs
    summary = assignment_distributions(problem, pairs)
    under_confusion = (
        None if confusion is None else _under_confusion(problem, pairs, confusion, vote_prior)
    )
    stored = AssignmentRun()
    stored.set_pairs(rows, cols)
    finished = running.update(
        status=RunStatus.SUCCEEDED,
        finished_at=timezone.now(),
        seconds=seconds,
        expected_accuracy=accuracy[0],
        accuracy_standard_error=accuracy[1],
        dawid_skene_accuracy=under_confusion,
        n_assigned=stored.n_assigned,
        assignment_blob=stored.assignment_blob,
        progress=100,
        progress_message=message,
        summary=summary,
    )
    if not finished:
        logger.info("a run finished computing but is no longer running; result dropped")
    return bool(finished)


def _bayes_vote_prior(run: AssignmentRun, problem: AssignmentProblem) -> np.ndarray | None:
    """Where the symmetric model's Bayes vote of a run's labels starts from, shape
    (n_tasks, K): for a next round chosen under confusion matrices (its problem's prior is
    Dawid–Skene's posterior), the symmetric posterior after the answers the round counts, so
    that the vote is the Bayes vote over all the answers; else None (the problem's prior)."""
    if not run.next_round or problem.confusion is None:
        return None
    return _run_round(run, under_confusion=False).prior_distribution


def _under_confusion(
    problem: AssignmentProblem, pairs: tuple, confusion: np.ndarray, vote_prior=None
):
    """:func:`~assignment.engine.distributions.accuracy_under_confusion`, or None when the
    matrices no longer fit the problem (the project's labels changed since the estimate)."""
    if confusion.shape != (problem.n_workers, problem.n_labels, problem.n_labels):
        logger.warning(
            "confusion matrices of shape %s do not fit a problem of %d workers and %d labels; "
            "the accuracy under them is left out",
            confusion.shape,
            problem.n_workers,
            problem.n_labels,
        )
        return None
    return accuracy_under_confusion(problem, pairs, confusion, vote_prior=vote_prior)


def run_fail_reason(exc: BaseException) -> str:
    """The reason a run failed by the engine's error ``exc`` gives its user: the error, and for
    a MemoryError under a worker's ``TVCS_RUN_MEMORY_LIMIT_MB`` that limit."""
    reason = f"{type(exc).__name__}: {exc}"
    limit_mb = settings.TVCS_RUN_MEMORY_LIMIT_MB
    if isinstance(exc, MemoryError) and limit_mb:
        reason += (
            f" (the run needs more memory than a worker may use, TVCS_RUN_MEMORY_LIMIT_MB="
            f"{limit_mb}: a smaller problem or budget, another method, or a larger limit)"
        )
    return reason


def run_fail(*, run_id: int, reason: str) -> bool:
    """Mark a queued or running run failed with ``reason``; False if it had already ended."""
    return bool(
        AssignmentRun.objects.filter(
            pk=run_id, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
        ).update(status=RunStatus.FAILED, error=reason, finished_at=timezone.now())
    )


def run_cancel(*, run: AssignmentRun) -> AssignmentRun:
    """Cancel a queued or running run (a running one stops at its next progress report).

    Raises :class:`RunStateError` if the run has already ended.
    """
    cancelled = AssignmentRun.objects.filter(
        pk=run.pk, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
    ).update(status=RunStatus.CANCELLED, finished_at=timezone.now(), progress_message="cancelled")
    run.refresh_from_db()
    if not cancelled:
        raise RunStateError(
            f"run {run.pk} is {run.status}: only queued or running runs can be cancelled"
        )
    return run


def runs_recover_stale(*, now=None) -> dict[str, list[int]]:
    """Re-queue (or, after ``TVCS_RUN_MAX_ATTEMPTS``, fail) runs whose worker went silent, and
    hand the broker again the queued runs whose message was lost.

    A running run whose heartbeat is older than ``TVCS_RUN_STALE_AFTER`` seconds lost its
    worker (killed, out of memory, machine gone). Each transition is conditional on the stale
    heartbeat, so a worker that is merely slow and reports meanwhile keeps its run.

    A run still queued ``TVCS_RUN_LOST_AFTER`` seconds after it was handed to the broker may
    have lost its message (a worker that failed to claim it on a locked database, a broker
    restarted without persistence): it is enqueued once more, at most once a period. Should the
    first message still be waiting, whichever comes second finds the run claimed and does
    nothing.
    """
    from assignment.services.shards import shards_recover_stale

    now = timezone.now() if now is None else now
    reenqueued = _runs_reenqueue_lost(now=now)
    shards = shards_recover_stale(now=now)
    cutoff = now - timedelta(seconds=settings.TVCS_RUN_STALE_AFTER)
    requeued, failed = [], []
    # A sharded run whose shards exist is computed by its shards: they are recovered above.
    stale = AssignmentRun.objects.filter(
        status=RunStatus.RUNNING, heartbeat_at__lt=cutoff, shard_round__isnull=True
    )
    for run_id, attempts, heartbeat in stale.values_list("pk", "attempts", "heartbeat_at"):
        same = AssignmentRun.objects.filter(
            pk=run_id, status=RunStatus.RUNNING, heartbeat_at=heartbeat
        )
        if attempts < settings.TVCS_RUN_MAX_ATTEMPTS:
            if same.update(
                status=RunStatus.QUEUED,
                enqueued_at=now,
                progress=0,
                progress_message=f"re-queued: its worker stopped responding (attempt {attempts})",
            ):
                requeued.append(run_id)
                _enqueue_after_commit(run_id)
        elif same.update(
            status=RunStatus.FAILED,
            finished_at=now,
            error=(
                f"its worker stopped responding {attempts} time(s); last heartbeat at "
                f"{heartbeat.isoformat()}"
            ),
        ):
            failed.append(run_id)
    if requeued or failed:
        logger.warning("stale runs: re-queued %s, failed %s", requeued, failed)
    return {"requeued": requeued, "failed": failed, "reenqueued": reenqueued, "shards": shards}


def runs_hand_back(*, worker: str, run_ids: list[int] | None = None) -> list[int]:
    """Hand back the runs ``worker`` is computing (or those of ``run_ids`` it is), because it
    is shutting down: queued again at once (not running with a heartbeat about to go stale),
    for :func:`runs_enqueue` to give to the broker once the worker has stopped taking
    messages.

    The computation still under way sees at its next progress report that the run is no
    longer its own, stops and stores nothing. The attempt is not counted against the run:
    nothing failed. Should the worker die before :func:`runs_enqueue`, the lost-message sweep
    of :func:`runs_recover_stale` enqueues them.
    """
    running = AssignmentRun.objects.filter(
        status=RunStatus.RUNNING, worker=worker, shard_round__isnull=True
    )
    if run_ids is not None:
        running = running.filter(pk__in=run_ids)
    handed_back = [
        run_id
        for run_id in running.values_list("pk", flat=True)
        if AssignmentRun.objects.filter(pk=run_id, status=RunStatus.RUNNING, worker=worker).update(
            status=RunStatus.QUEUED,
            enqueued_at=timezone.now(),
            attempts=F("attempts") - 1,
            progress=0,
            progress_message="re-queued: its worker shut down",
        )
    ]
    if handed_back:
        who = "shutting down" if run_ids is None else "a pool process stopping"
        logger.warning("worker %s %s: runs %s queued again", worker, who, handed_back)
    return handed_back


def runs_reclaim(*, worker: str) -> list[int]:
    """At the start of ``worker``: the runs an earlier worker of that name left behind, queued
    and given to the broker at once; returns them.

    A worker that ended without its shutdown handlers (SIGKILL, a crash, out of memory) leaves
    its runs ``running`` with a heartbeat that stops; one ended by a cold shutdown hands them
    back but never gives them to the broker. The stale-run recovery and the lost-message sweep
    find both, after ``TVCS_RUN_STALE_AFTER`` seconds and 10 minutes. A worker restarted under
    the same name (a container restarted, a service restarted by systemd) takes them back now.
    Should a worker of that name still be computing one (two workers of one name at once is a
    misconfiguration Celery warns about), it stops at its next progress report, as after any
    hand-back; a message of the earlier worker still on the broker makes no difference either:
    a run is claimed once.
    """
    handed_back = runs_hand_back(worker=worker)
    queued = AssignmentRun.objects.filter(status=RunStatus.QUEUED, worker=worker)
    run_ids = sorted(set(handed_back) | set(queued.values_list("pk", flat=True)))
    return runs_enqueue(run_ids=run_ids) if run_ids else []


def runs_enqueue(*, run_ids: list[int]) -> list[int]:
    """Give the broker those of ``run_ids`` that are still queued; returns them."""
    queued = list(
        AssignmentRun.objects.filter(pk__in=run_ids, status=RunStatus.QUEUED)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for run_id in queued:
        _enqueue_after_commit(run_id)
    return queued


def _runs_reenqueue_lost(*, now) -> list[int]:
    """Enqueue again the runs queued for longer than ``TVCS_RUN_LOST_AFTER`` seconds."""
    cutoff = now - timedelta(seconds=settings.TVCS_RUN_LOST_AFTER)
    lost = AssignmentRun.objects.filter(status=RunStatus.QUEUED, enqueued_at__lt=cutoff)
    reenqueued = []
    for run_id, enqueued_at in lost.values_list("pk", "enqueued_at"):
        if AssignmentRun.objects.filter(
            pk=run_id, status=RunStatus.QUEUED, enqueued_at=enqueued_at
        ).update(enqueued_at=now):
            reenqueued.append(run_id)
            _enqueue_after_commit(run_id)
    if reenqueued:
        logger.warning("queued runs enqueued again (their message may be lost): %s", reenqueued)
    return reenqueued
