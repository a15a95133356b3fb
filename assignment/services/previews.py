"""What the next round is expected to gain, before anyone starts it (the project page's
"Rounds" and ``GET /api/projects/{id}/rounds/preview/``).

The round is the one ``run_create(next_round=True)`` would queue under the project's defaults
(:func:`~assignment.services.runs._next_round_plan`, the same problem and the same refusals), and
its plan is greedy's: fast, what tvcs-iht starts from, and never far below it. The gain is
greedy's expected accuracy of the final labels after the round less the expected accuracy now,
so tvcs-iht's round gains at least about as much. Results are kept in Django's cache under
what they depend on, so that a reload is instant; a round too large to plan quickly is skipped
and says why. docs/design.md#rounds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import marshal
import time

from django.core.cache import cache
from django.db.models import Count, Max

from assignment.engine import solve
from assignment.errors import DomainError
from assignment.models import Answer, Project
from assignment.selectors import project_problem_inputs, rounds_counted, run_readiness
from assignment.services.rounds import _round_refusal, target_posterior_refusal
from assignment.services.runs import _caps_or_defaults, _next_round_plan, _round_layers

logger = logging.getLogger(__name__)

#: The method the preview plans the round with.
PREVIEW_METHOD = "greedy"
#: A round whose problem has more (worker, task) pairs than this is not previewed: greedy's
#: time grows with the pairs and the budget, and the page must not wait on it
#: (``python benchmarks/round_preview.py`` measures it; the README quotes its figures).
PREVIEW_MAX_PAIRS = 5_000_000
#: A quality matrix larger than this (workers x tasks) is not even read into a round: building
#: the round's problem alone would take seconds and its n x m arrays hundreds of megabytes.
PREVIEW_MAX_MATRIX = 20_000_000
#: How long a preview stays in the cache (its key changes whenever what it depends on does).
PREVIEW_CACHE_SECONDS = 24 * 3600


@dataclasses.dataclass(frozen=True)
class RoundPreview:
    """The next round's expected gain, or why there is none.

    ``status`` is one of

    * ``ok``: ``gain`` (``expected_accuracy - accuracy_now``) is set;
    * ``no-matrix`` or ``stale``: runs cannot start yet (``message`` says what to do);
    * ``done``: the round would have nothing to do (no budget left, every task at its target
      or its cap, no worker with room, no pair that gains by greedy's plan; ``message`` says
      which);
    * ``skipped``: the round's problem is above :data:`PREVIEW_MAX_PAIRS`;
    * ``error``: the answers or the quality could not be read (``message``).
    """

    status: str
    message: str = ""
    method: str = PREVIEW_METHOD
    answers: int = 0
    tasks: int = 0
    open_tasks: int = 0
    budget: int = 0
    pending: int = 0  # pairs of earlier rounds awaiting answers: spent, not in the accuracy
    accuracy_now: float | None = None
    expected_accuracy: float | None = None
    n_assigned: int = 0
    seconds: float | None = None
    dawid_skene: bool = False
    target_posterior: float | None = None
    rounds_left: int = 1  # above 1: this round's layers of a plan for all of them
    #: Whether the round was read: the counts above are its (else they are not known).
    counted: bool = False

    @property
    def gain(self) -> float | None:
        if self.expected_accuracy is None or self.accuracy_now is None:
            return None
        return self.expected_accuracy - self.accuracy_now

    @property
    def gain_points(self) -> float | None:
        """The gain in points of accuracy (percentage points)."""
        gain = self.gain
        return None if gain is None else 100.0 * gain


def round_preview(
    *,
    project: Project,
    target_posterior: float | None = None,
    budget: int | None = None,
    rounds_left: int = 1,
) -> RoundPreview:
    """The expected gain of the next round under the project's defaults (``budget``: this
    round's, by default what remains of the project's; ``target_posterior`` and
    ``rounds_left`` as a round's: above 1, the round's layers of greedy's plan for all the
    rounds to go, as a round with rounds to go takes them).

    Never raises for the project's state: a project that cannot run, has nothing left to do,
    is too large or whose data cannot be read gets a preview with that ``status`` and a
    readable ``message``. Computed once per state of what it depends on (cached).
    """
    refusal = target_posterior_refusal(target_posterior, n_labels=len(project.labels))
    if refusal:
        return RoundPreview(status="error", message=refusal)
    readiness = run_readiness(project=project)
    if not readiness.ready:
        return RoundPreview(status=readiness.reason or "stale", message=readiness.refusal)
    matrix = readiness.matrix
    if matrix.n_workers * matrix.n_tasks > PREVIEW_MAX_MATRIX:
        return RoundPreview(
            status="skipped",
            message=f"the quality matrix has {matrix.n_workers:,} x {matrix.n_tasks:,} "
            f"pairs, more than the {PREVIEW_MAX_MATRIX:,} the preview reads on the page; start "
            "the round to see what it gains",
        )
    key = _preview_cache_key(
        project=project,
        matrix_id=matrix.pk,
        target_posterior=target_posterior,
        budget=budget,
        rounds_left=rounds_left,
    )
    cached = _cache_call(cache.get, key)
    if cached is not None:
        return RoundPreview(**cached)
    try:
        preview = _preview_compute(
            project=project,
            matrix=matrix,
            target_posterior=target_posterior,
            budget=budget,
            rounds_left=rounds_left,
        )
    except Exception as exc:  # advisory: a failed preview must not break the page or the API
        logger.exception("round preview of project %s failed", project.pk)
        return RoundPreview(status="error", message=f"the preview failed: {exc}")
    if preview.status != "error":  # an error may pass; try again on the next request
        _cache_call(cache.set, key, dataclasses.asdict(preview), PREVIEW_CACHE_SECONDS)
    return preview


def _cache_call(method, *arguments):
    """``method(*arguments)`` on the cache, or None if the cache is down (logged): the
    preview is then computed every time, never refused."""
    try:
        return method(*arguments)
    except Exception:  # a cache server that is down (Redis) must not break the page
        logger.warning("the cache is not answering; the round preview is not cached")
        return None


def _preview_compute(
    *, project: Project, matrix, target_posterior, budget, rounds_left: int
) -> RoundPreview:
    per_worker = _caps_or_defaults(project, None, None)[1]
    try:
        plan = _next_round_plan(
            project=project,
            matrix=matrix,
            max_workers_per_task=None,
            max_tasks_per_worker=None,
            target_posterior=target_posterior,
        )
    except (DomainError, ValueError) as exc:
        return RoundPreview(status="error", message=str(exc))
    nxt = plan.round
    round_budget = nxt.budget if budget is None else budget
    state = {
        "counted": True,
        "answers": nxt.n_answers,
        "tasks": int(nxt.open_tasks.size),
        "open_tasks": int(nxt.open_tasks.sum()),
        "budget": round_budget,
        "pending": nxt.n_pending,
        "accuracy_now": nxt.accuracy_now,
        "dawid_skene": nxt.confusion is not None,
        "target_posterior": target_posterior,
        "rounds_left": rounds_left,
    }
    refusal = _round_refusal(
        plan, budget=budget, target_accuracy=None, max_tasks_per_worker=per_worker
    )
    if refusal:
        return RoundPreview(status="done", message=refusal, **state)
    pairs = int(nxt.worker_room.size) * state["open_tasks"]
    if pairs > PREVIEW_MAX_PAIRS:
        return RoundPreview(
            status="skipped",
            message=f"the round has {pairs:,} (worker, open task) pairs, more than the "
            f"{PREVIEW_MAX_PAIRS:,} the preview plans on the page; start the round to see "
            "what it gains",
            **state,
        )
    if budget is not None:
        nxt = dataclasses.replace(nxt, budget=round_budget)
    start = time.perf_counter()
    result = solve(nxt.problem, method=PREVIEW_METHOD, seed=0)
    accuracy, n_assigned = float(result.expected_accuracy), int(result.rows.size)
    if n_assigned == 0:
        why = (
            "every worker with room has answered, or awaits, every open task"
            if result.details.get("stopped") == "no feasible addition"
            else "one more answer would change no open task's vote"
        )
        return RoundPreview(
            status="done",
            message=f"greedy's plan assigns nobody ({result.message}): {why}",
            **state,
        )
    if rounds_left > 1:
        take, accuracy, _ = _round_layers(nxt, result.assignment, rounds_left=rounds_left, seed=0)
        n_assigned = int(take.sum())
    return RoundPreview(
        status="ok",
        expected_accuracy=float(accuracy),
        n_assigned=n_assigned,
        seconds=time.perf_counter() - start,
        **state,
    )


def _preview_cache_key(
    *,
    project: Project,
    matrix_id: int,
    target_posterior: float | None,
    budget: int | None,
    rounds_left: int = 1,
) -> str:
    """The cache key of a preview: a digest of every input its round reads but the quality
    matrix's values (its id stands for them: a stored matrix is never changed, only replaced
    by a newer one). The project's own fields (defaults, labels); every worker's and task's
    values the problem reads (:func:`~assignment.selectors.project_problem_inputs`: caps,
    activity, priors, by primary key, so a re-upload that keeps their sums still changes it);
    every answer's label in id order with the answers' count and largest id (ids are never
    reused and an answer's worker and task never change, so these are the answers; an upload
    may change a label in place); the rounds whose pairs count and their status (the pending
    pairs, :func:`~assignment.selectors.rounds_counted`); and the round's options. A cache hit
    reads these rows, not the matrix (``benchmarks/round_preview.py``)."""
    workers, tasks = project_problem_inputs(project=project)
    # By the worker's project: the same answers, and the cheaper join for this read.
    answers = Answer.objects.filter(worker__project=project).order_by("pk")
    rounds = rounds_counted(project=project).order_by("pk")
    rows = (
        workers,
        tasks,
        tuple(answers.aggregate(n=Count("pk"), last=Max("pk")).values()),
        list(answers.values_list("label", flat=True)),
        list(rounds.values_list("pk", "status")),
    )
    digest = hashlib.sha256(marshal.dumps(rows))  # exact floats, fast on long lists
    options = [
        [(field.attname, getattr(project, field.attname)) for field in Project._meta.fields],
        matrix_id,
        target_posterior,
        budget,
        rounds_left,
        PREVIEW_METHOD,
    ]
    digest.update(repr(options).encode())
    return f"round-preview:{project.pk}:{digest.hexdigest()[:32]}"
