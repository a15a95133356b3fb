"""The next round of a project: its plan from the answers in hand, checked, kept on the run.

The one rule for pairs handed out but not answered (*pending*): the pairs of the project's
finished rounds (:func:`~assignment.selectors.rounds_counted`) without an answer count as spent
(budget, caps, never assigned again) and add nothing to the posteriors; a round is refused while
another round is queued or running (its pairs are not known yet). A round that was not handed
out after all is withdrawn (:func:`run_withdraw`) and stops counting. docs/design.md#rounds.
"""

from __future__ import annotations

import dataclasses

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
)
from assignment.selectors import (
    fitting_confusion,
    pending_pairs,
    project_problem,
    rounds_counted,
)


@dataclasses.dataclass(frozen=True)
class _RoundPlan:
    """The answers in hand as a next round sees them (shared by a comparison's runs)."""

    round: NextRound  # with the default budget: what remains of the project's
    last_id: int | None
    project_budget: int
    pending_runs: tuple[int, ...] = ()  # the rounds whose unanswered pairs are pending


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
        budget=budget,
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
    budget: int,
    target_accuracy: float | None,
    max_tasks_per_worker: int,
) -> str:
    """Why a next round of ``plan`` with ``budget`` would have nothing to do ("" if it has
    something): the one rule for a round started (:func:`_round_start`) and one previewed
    (:func:`round_preview`)."""
    nxt = plan.round
    if target_accuracy is not None and nxt.accuracy_now >= target_accuracy:
        return (
            f"the {nxt.n_answers} answers in hand already give an expected accuracy of "
            f"{nxt.accuracy_now:.4f}, at least the target_accuracy {target_accuracy}: "
            "the project is done (or raise the target)"
        )
    if budget == 0:
        pending = (
            f" and {nxt.n_pending} pairs of earlier rounds await their answers"
            if nxt.n_pending
            else ""
        )
        return (
            f"nothing left to spend: {nxt.n_answers} answers are in hand{pending} of the "
            f"project's budget of {plan.project_budget} pairs; give this round a budget"
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
    """Withdraw a succeeded round whose pairs were not handed out: later rounds stop counting
    its unanswered pairs as pending (budget, caps, never assigned again) and may assign them.

    Answers that came in for its pairs still count, as every answer does. Withdrawing is final;
    the run and its assignment stay readable.

    Raises :class:`RunStateError` if ``run`` is not a round started on its own (its pairs never
    count), has not succeeded, or was withdrawn already.
    """
    if not run.next_round or run.comparison_id is not None:
        raise RunStateError(
            f"run #{run.pk} is not a round started on its own (a comparison's run or a run on "
            "the whole project): its pairs never count as pending, so there is nothing to "
            "withdraw"
        )
    withdrawn = AssignmentRun.objects.filter(
        pk=run.pk, status=RunStatus.SUCCEEDED, withdrawn_at__isnull=True
    ).update(withdrawn_at=timezone.now())
    run.refresh_from_db()
    if withdrawn:
        return run
    if run.withdrawn_at is not None:
        raise RunStateError(
            f"run #{run.pk} was withdrawn already, at {run.withdrawn_at:%Y-%m-%d %H:%M}"
        )
    raise RunStateError(
        f"run #{run.pk} is {run.status}: only a succeeded round can be withdrawn (cancel a "
        "queued or running one)"
    )
