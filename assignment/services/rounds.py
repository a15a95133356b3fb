"""The next round of a project: its plan from the answers in hand, checked, kept on the run.

The one rule for pairs handed out but not answered (*pending*): the pairs of the project's
finished rounds (:func:`~assignment.selectors.rounds_counted`) without an answer count as spent
(budget, caps, never assigned again) and add nothing to the posteriors; a round is refused while
another round is queued or running (its pairs are not known yet). A round that was not handed
out after all is withdrawn (:func:`run_withdraw`) and stops counting. A comparison's run that
was handed out (:func:`run_hand_out`) counts from then on as a round started on its own, once
it has been checked against the round plan of the project as it is now. docs/design.md#rounds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from assignment.answers import answers_in_hand
from assignment.engine import (
    AssignmentProblem,
    NextRound,
)
from assignment.engine import rounds as engine_rounds
from assignment.errors import (
    AnswersError,
    RunStateError,
    RunValidationError,
)
from assignment.models import (
    AssignmentRun,
    Project,
    QualityMatrix,
    RunStatus,
    Task,
    Worker,
)
from assignment.selectors import (
    fitting_confusion,
    pending_pairs,
    project_budget,
    project_problem,
    rounds_counted,
)


@dataclasses.dataclass(frozen=True)
class _RoundPlan:
    """The answers in hand as a next round sees them (shared by a comparison's runs)."""

    round: NextRound  # with the default budget: what remains of the project's
    last_id: int | None
    project_budget: int
    pending_runs: tuple[int, ...] = ()  # the rounds counted: their unanswered pairs are pending


def _round_plan(
    *,
    project: Project,
    matrix: QualityMatrix,
    project_budget: int,
    max_workers_per_task: int,
    max_tasks_per_worker: int,
    target_posterior: float | None,
) -> _RoundPlan:
    """The round from the answers in hand; on Dawid–Skene quality (matrices that fit the
    labels), its posteriors are the matrices', as when the round computes."""
    problem = project_problem(
        project=project,
        matrix=matrix,
        budget=project_budget,
        max_workers_per_task=max_workers_per_task,
        max_tasks_per_worker=max_tasks_per_worker,
        confusion=fitting_confusion(project=project, matrix=matrix),
    )
    pending_runs = _rounds_finished(project=project)
    nxt, last_id = _next_round(
        problem=problem,
        project=project,
        matrix=matrix,
        through=None,
        budget=None,
        target_posterior=target_posterior,
        pending_runs=pending_runs,
    )
    return _RoundPlan(
        round=nxt, last_id=last_id, project_budget=project_budget, pending_runs=pending_runs
    )


def target_posterior_refusal(value, *, n_labels: int) -> str:
    """ "" if ``value`` is None or a target posterior a project of ``n_labels`` labels can
    take, ``(1/K, 1]`` (the likeliest label's posterior is never below ``1/K``), else why not.
    The engine's own bound (:func:`assignment.engine.rounds.next_round`), said once for the
    services, the API and the pages."""
    if value is None:
        return ""
    low = 1.0 / n_labels
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and low < value <= 1.0:
        return ""
    bound = "0.5" if n_labels == 2 else f"1/{n_labels}"
    return (
        f"target_posterior must be a number above {bound}, at most 1 (the likeliest of "
        f"{n_labels} labels is never less likely than 1/{n_labels}), got {value!r}"
    )


def _check_rounds_unchanged(*, project: Project, planned: tuple[int, ...]) -> None:
    """Lock the project's row and raise :class:`RunValidationError` unless the rounds it counts
    are still the succeeded rounds ``planned`` (a plan's ``pending_runs``), none queued or
    running: called in the transaction that saves a round or hands a run out, so that a round
    started, handed out or withdrawn meanwhile is never left out of a plan (PostgreSQL; SQLite's
    writers are serial anyway)."""
    Project.objects.select_for_update().filter(pk=project.pk).exists()
    now = _rounds_finished(project=project)
    if now != tuple(planned):
        raise RunValidationError(
            f"the rounds this project counts changed while this one was planned (runs "
            f"{_ids(planned)} then, {_ids(now)} now: a round started, handed out or withdrawn "
            "meanwhile); start it again"
        )


def _ids(run_ids) -> str:
    return ", ".join(f"#{pk}" for pk in run_ids) or "none"


def _rounds(run_ids) -> str:
    """``run_ids`` as words: "no round", "round #3", "rounds #3, #5"."""
    if not run_ids:
        return "no round"
    return f"round{'s' if len(run_ids) > 1 else ''} {_ids(run_ids)}"


def _rounds_finished(*, project: Project) -> tuple[int, ...]:
    """The ids of the project's succeeded rounds that count (their unanswered pairs are
    pending), or :class:`RunValidationError` while one is queued or running: its pairs are not
    known yet, so a round started now could assign them again."""
    rounds = rounds_counted(project=project)
    unfinished = list(
        rounds.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING])
        .order_by("pk")
        .values_list("pk", "status")
    )
    if unfinished:
        run_id, status = unfinished[0]
        raise RunValidationError(
            f"run #{run_id}, a round of this project, is {status}: its pairs are not known yet "
            "and a round started now could assign them again; wait for it to end (or cancel "
            "it) and start the next round then"
        )
    succeeded = rounds.filter(status=RunStatus.SUCCEEDED).order_by("pk")
    return tuple(succeeded.values_list("pk", flat=True))


def _round_start(run: AssignmentRun, *, plan: _RoundPlan, round_budget: int | None) -> None:
    """Set a next round's budget, ``answers_through`` and ``round_start`` from ``plan``, or
    raise :class:`RunValidationError` if the round has nothing to do."""
    nxt = plan.round
    budget = nxt.budget if round_budget is None else round_budget
    refusal = _round_refusal(
        plan,
        budget=round_budget,
        target_accuracy=run.target_accuracy,
        max_tasks_per_worker=run.max_tasks_per_worker,
    )
    if refusal:
        raise RunValidationError(refusal)
    run.budget = budget
    run.answers_through = plan.last_id
    run.round_start = {
        "answers": nxt.n_answers,
        "accuracy_now": nxt.accuracy_now,
        "open_tasks": int(nxt.open_tasks.sum()),
        "tasks": int(nxt.open_tasks.size),
        "project_budget": plan.project_budget,
        "rounds_left": run.rounds_left or 1,
        "dawid_skene": nxt.confusion is not None,
        "pending": nxt.n_pending,
        "pending_runs": list(plan.pending_runs),
    }


def _round_refusal(
    plan: _RoundPlan,
    *,
    budget: int | None,
    target_accuracy: float | None,
    max_tasks_per_worker: int,
) -> str:
    """Why a next round of ``plan`` with ``budget`` (None: what remains of the project's)
    would have nothing to do ("" if it has something): the one rule for a round started
    (:func:`_round_start`) and one previewed (:func:`round_preview`)."""
    nxt = plan.round
    if target_accuracy is not None and nxt.accuracy_now >= target_accuracy:
        return (
            f"the {nxt.n_answers:,} answers in hand already give an expected accuracy of "
            f"{nxt.accuracy_now:.4f}, at least the target_accuracy {target_accuracy}: "
            "the project is done (or raise the target)"
        )
    if budget == 0:
        return (
            "a budget of 0 has nothing to spend: give this round a positive budget, or none "
            f"to spend what remains of the project's ({nxt.budget:,} pairs)"
        )
    if budget is None and nxt.budget == 0:
        pending = (
            f" and {nxt.n_pending:,} pairs of earlier rounds await their answers"
            if nxt.n_pending
            else ""
        )
        return (
            f"nothing left to spend of the project's budget of {plan.project_budget:,} pairs: "
            f"{nxt.n_answers:,} answers are in hand{pending}; give this round a budget of its "
            "own, or raise the project's"
        )
    if not nxt.open_tasks.any():
        return (
            "every task is at its target_posterior or has as many answers as its cap allows "
            "(pairs of earlier rounds awaiting answers count): "
            "a next round has nothing to assign"
        )
    if not nxt.worker_room.any():
        return (
            "every active worker has answered as many tasks as its cap allows "
            f"(max_tasks_per_worker {max_tasks_per_worker} unless the worker has its own; pairs "
            "of earlier rounds awaiting answers count): "
            "a next round has nobody to assign; raise the cap or add workers"
        )
    return ""


def _next_round(
    *,
    problem: AssignmentProblem,
    project: Project,
    matrix: QualityMatrix,
    through: int | None,
    budget: int | None,
    target_posterior: float | None,
    pending_runs: tuple[int, ...] | list[int] = (),
) -> tuple[NextRound, int | None]:
    """``problem`` after the project's answers with id up to ``through`` (all if None), with
    the pairs of the rounds ``pending_runs`` that those answers leave unanswered pending, and
    the last answer id counted (None without answers)."""
    try:
        answers = answers_in_hand(project=project, matrix=matrix, through=through)
    except AnswersError as exc:
        raise RunValidationError(str(exc)) from exc
    pending_workers, pending_tasks = pending_pairs(
        matrix=matrix, run_ids=list(pending_runs), answers=answers
    )
    given = {"said_one": answers.said_one} if problem.n_labels == 2 else {"label": answers.label}
    nxt = engine_rounds.next_round(
        problem,
        worker_index=answers.rows,
        task_index=answers.columns,
        budget=budget,
        target_posterior=target_posterior,
        pending_workers=pending_workers,
        pending_tasks=pending_tasks,
        **given,
    )
    return nxt, answers.last_id


def run_withdraw(*, run: AssignmentRun) -> AssignmentRun:
    """Withdraw a succeeded round whose pairs were not handed out after all (a round started on
    its own, or a comparison's run handed out by :func:`run_hand_out`): later rounds stop
    counting its unanswered pairs as pending (budget, caps, never assigned again) and may
    assign them.

    Answers that came in for its pairs still count, as every answer does. Withdrawing is final;
    the run and its assignment stay readable.

    Raises :class:`RunStateError` if ``run``'s pairs never counted (a run on the whole project,
    a comparison's run not handed out), it has not succeeded, or it was withdrawn already.
    """
    counts = Q(next_round=True, comparison__isnull=True) | Q(handed_out_at__isnull=False)
    withdrawn = (
        AssignmentRun.objects.filter(counts)
        .filter(pk=run.pk, status=RunStatus.SUCCEEDED, withdrawn_at__isnull=True)
        .update(withdrawn_at=timezone.now())
    )
    run.refresh_from_db()
    if withdrawn:
        return run
    if run.withdrawn_at is not None:
        raise RunStateError(
            f"run #{run.pk} was withdrawn already, at {run.withdrawn_at:%Y-%m-%d %H:%M}"
        )
    if run.comparison_id is not None and run.handed_out_at is None:
        raise RunStateError(
            f"run #{run.pk} is a comparison's run that was not handed out: its pairs never "
            "count as pending, so there is nothing to withdraw"
        )
    if not run.next_round and run.comparison_id is None:
        raise RunStateError(
            f"run #{run.pk} is not a round started on its own (a run on the whole project): "
            "its pairs never count as pending, so there is nothing to withdraw"
        )
    raise RunStateError(
        f"run #{run.pk} is {run.status}: only a succeeded round can be withdrawn (cancel a "
        "queued or running one)"
    )


def run_hand_out(*, run: AssignmentRun) -> AssignmentRun:
    """Mark a comparison's succeeded run as handed out to the workers: from now on it counts
    exactly like a round started on its own (:func:`~assignment.selectors.rounds_counted`):
    its unanswered pairs are pending (budget, caps, never assigned again) and it can be
    withdrawn (:func:`run_withdraw`). One run of a comparison is out at a time.

    It is handed out only if its pairs are what a round started now could assign: the rounds
    the project counts are those the run counted (``round_start["pending_runs"]``; none for a
    comparison on the whole project), none queued or running, and its pairs are feasible for
    the round plan of the project as it is now (:func:`_round_plan` with the run's caps and
    target: none answered or pending, every worker and task within its cap less its answers and
    pending pairs, and within the budget: what remains of the project's when the comparison
    took the default budget, else the run's own, as for a round given a budget). Checked and
    claimed in one transaction holding the project's row, by a conditional update.

    Raises :class:`RunStateError` saying why otherwise: not a comparison's run, not succeeded,
    withdrawn, handed out already, another run of its comparison out, or the checks above.
    """
    if run.comparison_id is None:
        raise RunStateError(
            f"run #{run.pk} is not a comparison's run: a round started on its own counts as "
            "handed out already, and a run on the whole project never does (start it as a "
            "round to have it count)"
        )
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=run.project_id).exists()
        run = AssignmentRun.objects.select_related("project", "quality_matrix", "comparison").get(
            pk=run.pk
        )
        _hand_out_state_check(run)
        _hand_out_fit_check(run)
        sibling_out = AssignmentRun.objects.filter(
            comparison_id=OuterRef("comparison_id"),
            handed_out_at__isnull=False,
            withdrawn_at__isnull=True,
        )
        claimed = (
            AssignmentRun.objects.filter(
                pk=run.pk,
                status=RunStatus.SUCCEEDED,
                handed_out_at__isnull=True,
                withdrawn_at__isnull=True,
            )
            .exclude(Exists(sibling_out))
            .update(handed_out_at=timezone.now())
        )
    run.refresh_from_db()
    if not claimed:  # changed between the check and the claim: say what it is now
        _hand_out_state_check(run)
        raise RunStateError(f"run #{run.pk} could not be handed out; try again")
    return run


def run_hand_out_refusal(*, run: AssignmentRun) -> str:
    """Why :func:`run_hand_out` would refuse ``run`` now ("" if it would hand it out): its
    own checks, run without claiming anything, for a page to offer the button only where it
    works. (The answer may change before a POST; :func:`run_hand_out` checks again.)"""
    if run.comparison_id is None:
        return (
            f"run #{run.pk} is not a comparison's run: a round started on its own counts as "
            "handed out already, and a run on the whole project never does"
        )
    run = AssignmentRun.objects.select_related("project", "quality_matrix", "comparison").get(
        pk=run.pk
    )
    try:
        _hand_out_state_check(run)
        _hand_out_fit_check(run)
    except RunStateError as exc:
        return str(exc)
    return ""


def _hand_out_state_check(run: AssignmentRun) -> None:
    """Raise :class:`RunStateError` if ``run``'s state (its and its comparison's other runs')
    forbids handing it out."""
    if run.status != RunStatus.SUCCEEDED:
        raise RunStateError(
            f"run #{run.pk} is {run.status}: only a succeeded run has pairs to hand out"
        )
    if run.withdrawn_at is not None:
        raise RunStateError(
            f"run #{run.pk} was handed out and withdrawn, at {run.withdrawn_at:%Y-%m-%d %H:%M}: "
            "withdrawing is final"
        )
    if run.handed_out_at is not None:
        raise RunStateError(
            f"run #{run.pk} was handed out already, at {run.handed_out_at:%Y-%m-%d %H:%M}"
        )
    other = (
        AssignmentRun.objects.filter(
            comparison_id=run.comparison_id, handed_out_at__isnull=False, withdrawn_at__isnull=True
        )
        .exclude(pk=run.pk)
        .values_list("pk", flat=True)
        .first()
    )
    if other is not None:
        raise RunStateError(
            f"run #{other} of comparison #{run.comparison_id} was handed out already: only one "
            "of a comparison's alternatives can be out (withdraw it first if its workers did not "
            "get it)"
        )


def _hand_out_fit_check(run: AssignmentRun) -> None:
    """Raise :class:`RunStateError` unless ``run``'s pairs are what a round started now could
    assign: the rounds counted are those it counted, and its pairs are feasible for the round
    plan of the project as it is now (the one rule: the round's problem,
    :meth:`~assignment.engine.AssignmentProblem.is_feasible_pairs`)."""
    refused = f"run #{run.pk} cannot be handed out now"
    project, matrix = run.project, run.quality_matrix
    try:
        plan = _round_plan(
            project=project,
            matrix=matrix,
            project_budget=project_budget(
                project=project,
                matrix=matrix,
                max_workers_per_task=run.max_workers_per_task,
                max_tasks_per_worker=run.max_tasks_per_worker,
            ),
            max_workers_per_task=run.max_workers_per_task,
            max_tasks_per_worker=run.max_tasks_per_worker,
            target_posterior=run.target_posterior,
        )
    except RunValidationError as exc:
        raise RunStateError(f"{refused}: {exc}") from exc
    counted = tuple(run.round_start.get("pending_runs", []))
    if plan.pending_runs != counted and not run.next_round:
        raise RunStateError(
            f"{refused}: its comparison was on the whole project, not a next round, so its "
            f"pairs count neither the answers in hand nor the pending pairs of "
            f"{_rounds(plan.pending_runs)}; compare again as a next round"
        )
    if plan.pending_runs != counted:
        raise RunStateError(
            f"{refused}: it was computed counting the pending pairs of {_rounds(counted)}, and "
            f"the project now counts those of {_rounds(plan.pending_runs)} (rounds were "
            "started, handed out or withdrawn since), so its pairs may repeat or crowd out "
            "theirs; compare again from the project as it is now"
        )
    default_budget = not run.comparison.budgets
    budget = plan.round.budget if default_budget else run.budget
    nxt = dataclasses.replace(plan.round, budget=budget)
    rows, columns = run.pairs.astype(np.int64).T
    if not nxt.problem.is_feasible_pairs(rows, columns):
        raise RunStateError(f"{refused}: {_misfit(nxt, matrix, rows, columns, default_budget)}")


def _misfit(nxt: NextRound, matrix: QualityMatrix, rows, columns, default_budget: bool) -> str:
    """Why the pairs ``(rows, columns)`` (of ``matrix``) are not feasible for the round ``nxt``:
    the first rule they break, with an example."""
    n, m = nxt.base.shape
    flat = rows * m + columns
    for done, what in (
        (nxt.answered_workers * m + nxt.answered_tasks, "have an answer already"),
        (nxt.pending_workers * m + nxt.pending_tasks, "are pending in a round the project counts"),
    ):
        hit = np.isin(flat, done)
        if hit.any():
            k = int(np.flatnonzero(hit)[0])
            worker, task = _name(Worker, matrix, rows[k]), _name(Task, matrix, columns[k])
            return (
                f"{int(hit.sum())} of its pairs {what} (e.g. {worker} on {task}), and a worker "
                "answers a task once"
            )
    per_worker = np.bincount(rows, minlength=n)
    per_task = np.bincount(columns, minlength=m)
    over_worker = np.flatnonzero(per_worker > nxt.worker_room)
    if over_worker.size:
        i = int(over_worker[0])
        return (
            f"{_name(Worker, matrix, i)} has room for {nxt.worker_room[i]} more tasks (its cap "
            f"less its answers and pending pairs) and the run gives it {per_worker[i]}"
            f"{_and_more(over_worker.size, 'worker')}"
        )
    over_task = np.flatnonzero(per_task > nxt.task_room)
    if over_task.size:
        j = int(over_task[0])
        return (
            f"{_name(Task, matrix, j)} has room for {nxt.task_room[j]} more workers (its cap "
            f"less its answers and pending pairs; none at the target posterior) and the run "
            f"gives it {per_task[j]}{_and_more(over_task.size, 'task')}"
        )
    if rows.size > nxt.budget:
        budget = (
            f"what remains of the project's budget is {nxt.budget:,} ({nxt.n_answers:,} answers "
            f"in hand, {nxt.n_pending:,} pairs pending)"
            if default_budget
            else f"its budget is {nxt.budget:,}"
        )
        return f"it assigns {rows.size:,} pairs and {budget}"
    return "its pairs do not fit the project's round plan now"


def _and_more(count: int, what: str) -> str:
    return f" ({count - 1} more {what}{'s' if count > 2 else ''} too)" if count > 1 else ""


def _name(model, matrix: QualityMatrix, index: int) -> str:
    """The worker (``model`` :class:`Worker`) or task at ``index`` of ``matrix`` by its external
    id, for a message."""
    ids = matrix.worker_ids if model is Worker else matrix.task_ids
    name = model.objects.filter(pk=int(ids[index])).values_list("external_id", flat=True).first()
    return f"{model.__name__.lower()} {name!r}"
