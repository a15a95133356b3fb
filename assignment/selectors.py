"""Reads: the numbers the admin, the API and the pages show, and the engine problem a run
solves (:func:`project_problem`), computed in one place.

Selectors only read. Each takes keyword-only arguments and returns either a queryset (for
lists the caller paginates) or a frozen dataclass (for summaries the caller renders).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce
from rest_framework.authtoken.models import Token

from assignment.answers import AnswersInHand, answers_in_hand, positions
from assignment.engine import AssignmentProblem
from assignment.engine.aggregate import aggregate_pairs
from assignment.engine.confusion import confusion_posterior
from assignment.engine.multiclass import aggregate_multiclass
from assignment.errors import AnswersError, RunStateError
from assignment.exporters import EXPORT_KINDS, LABEL_AGGREGATIONS
from assignment.models import (
    QUALITY_VALUE_BLOBS,
    Answer,
    AssignmentRun,
    Comparison,
    GoldAnswer,
    GoldItem,
    Project,
    QualityMatrix,
    RunStatus,
    Task,
    Worker,
)
from assignment.prepared import PreparedRead
from assignment.priors import task_priors

#: How many of a project's latest runs its summary lists.
RECENT_RUNS = 10

_MATRIX_BLOBS = (
    *QUALITY_VALUE_BLOBS,
    "worker_ids_blob",
    "gold_counts_blob",
    "category_means_blob",
)


@dataclass(frozen=True)
class QualityMatrixStatistics:
    """Summary of one stored quality matrix; the value statistics are None for an empty one."""

    matrix_id: int
    source: str
    created_at: datetime
    n_workers: int
    n_tasks: int
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    #: Rows whose gold count is 0; None when the matrix stores no gold counts (uploaded, or
    #: estimated from the collected answers alone).
    workers_without_gold: int | None
    #: How it was made (:attr:`QualityMatrix.details`): strengths, counts; by EM the model,
    #: iterations, convergence and log-likelihood.
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RunSummary:
    run_id: int
    method: str
    status: str
    budget: int
    n_assigned: int | None
    expected_accuracy: float | None
    accuracy_standard_error: float | None
    created_at: datetime


@dataclass(frozen=True)
class ProjectStatistics:
    workers: int
    active_workers: int
    #: Workers with no gold answer stored now (the latest matrix may predate later answers).
    workers_without_gold_answers: int
    tasks: int
    categories: int
    #: Tasks with a prior of their own (``prior``, or ``label_prior`` with more than two labels).
    tasks_with_prior: int
    gold_items: int
    gold_answers: int
    answers: int
    quality_matrices: int
    latest_quality_matrix: QualityMatrixStatistics | None
    runs: int
    comparisons: int
    #: The latest ``RECENT_RUNS`` runs, newest first.
    recent_runs: tuple[RunSummary, ...]
    #: Of ``runs``, those computing now and those waiting for a computing process.
    runs_running: int = 0
    runs_queued: int = 0


def _count_per_project(queryset: QuerySet) -> Coalesce:
    """A correlated ``COUNT(*)`` of ``queryset`` rows whose ``project`` is the outer row.

    One subquery per counted table, instead of joining them all (which would multiply rows).
    """
    counts = (
        queryset.filter(project=OuterRef("pk"))
        .order_by()
        .values("project")
        .annotate(count=Count("pk"))
        .values("count")
    )
    return Coalesce(Subquery(counts, output_field=IntegerField()), 0)


def project_list_with_counts(*, queryset: QuerySet[Project] | None = None) -> QuerySet[Project]:
    """Projects with ``worker_count``, ``task_count`` and ``gold_item_count`` annotated."""
    queryset = Project.objects.all() if queryset is None else queryset
    return queryset.select_related("owner").annotate(
        worker_count=_count_per_project(Worker.objects.all()),
        task_count=_count_per_project(Task.objects.all()),
        gold_item_count=_count_per_project(GoldItem.objects.all()),
    )


def gold_answer_list(*, queryset: QuerySet[GoldAnswer] | None = None) -> QuerySet[GoldAnswer]:
    """Gold answers with their worker and item, and ``is_correct`` (answer == true label)."""
    queryset = GoldAnswer.objects.all() if queryset is None else queryset
    return queryset.select_related("worker", "item").annotate(
        is_correct=ExpressionWrapper(Q(answer=F("item__true_label")), output_field=BooleanField())
    )


def quality_matrix_list(
    *, queryset: QuerySet[QualityMatrix] | None = None
) -> QuerySet[QualityMatrix]:
    """Quality matrices without their arrays (which can be hundreds of megabytes each)."""
    queryset = QualityMatrix.objects.all() if queryset is None else queryset
    return queryset.select_related("project").defer(*_MATRIX_BLOBS)


def run_list(*, queryset: QuerySet[AssignmentRun] | None = None) -> QuerySet[AssignmentRun]:
    """Assignment runs with their project and quality matrix, and none of their arrays."""
    queryset = AssignmentRun.objects.all() if queryset is None else queryset
    return queryset.select_related("project", "quality_matrix__project").defer(
        "assignment_blob", *(f"quality_matrix__{blob}" for blob in _MATRIX_BLOBS)
    )


def workers_by_gold_answers(
    *, queryset: QuerySet[Worker] | None = None, with_gold: bool
) -> QuerySet[Worker]:
    """The workers with at least one gold answer (``with_gold``), or those with none."""
    queryset = Worker.objects.all() if queryset is None else queryset
    has_gold = Exists(GoldAnswer.objects.filter(worker=OuterRef("pk")))
    return queryset.filter(has_gold if with_gold else ~has_gold)


#: What a strength ``"auto"`` did not fit well means, by how it came out (the estimate's
#: ``strength_fits``; ``fitted`` needs no word) and by strength.
_STRENGTH_FIT_WARNINGS = {
    ("floor", "worker"): "each worker's accuracy follows his own few gold answers",
    (
        "floor",
        "category",
    ): "a worker's accuracy in each category follows his few gold answers in it",
    ("ceiling", "worker"): "every worker gets the population's accuracy",
    ("ceiling", "category"): "every worker has one accuracy in all categories",
    ("default", "worker"): "fewer than two workers with gold answers, or every answer the same",
    ("default", "category"): (
        "no worker with gold answers in two categories and more answers than categories"
    ),
}


def quality_strength_warnings(*, matrix: QualityMatrix) -> list[tuple[str, str]]:
    """``(strength, sentence)`` for each strength ``"auto"`` came out at its floor, at its
    ceiling or at the default (the matrix's ``strength_fits``): what it means and what to do.
    Empty for given strengths and good fits."""
    warnings = []
    for name, how in matrix.details.get("strength_fits", {}).items():
        said = _STRENGTH_FIT_WARNINGS.get((how, name))
        if said is None:
            continue
        asked = f'The {name} strength was to be fitted to the gold answers ("auto")'
        if how == "floor":
            text = (
                f"{asked} and came out at its floor, 0.1: {said} almost alone, so that one "
                "wrong answer can make him look worse than a guess. The fit needs dozens of "
                "workers and a few hundred gold answers; with fewer, give a strength instead "
                "(the defaults are 10 for workers, 5 for categories)."
            )
        elif how == "ceiling":
            text = (
                f"{asked} and came out at its ceiling, 10,000: the gold answers show no spread "
                f"beyond chance, so {said}."
            )
        else:
            text = (
                f"{asked}, but the gold answers cannot identify it ({said}), so the default "
                "was used."
            )
        warnings.append((name, text))
    return warnings


def quality_matrix_statistics(*, matrix: QualityMatrix) -> QualityMatrixStatistics:
    """Mean, population standard deviation, min and max of the values; workers without gold."""
    stats = matrix.value_statistics
    gold_counts = matrix.gold_counts
    return QualityMatrixStatistics(
        matrix_id=matrix.pk,
        source=matrix.get_source_display(),
        created_at=matrix.created_at,
        n_workers=matrix.n_workers,
        n_tasks=matrix.n_tasks,
        mean=stats.get("mean"),
        std=stats.get("std"),
        min=stats.get("min"),
        max=stats.get("max"),
        workers_without_gold=None if gold_counts is None else int(np.sum(gold_counts == 0)),
        details=dict(matrix.details),
    )


def project_statistics(*, project: Project) -> ProjectStatistics:
    """Counts of everything in the project, its latest quality matrix and its latest runs."""
    workers = Worker.objects.filter(project=project)
    worker_counts = workers.aggregate(total=Count("pk"), active=Count("pk", filter=Q(active=True)))
    without_gold = workers_by_gold_answers(queryset=workers, with_gold=False)
    own_prior = "prior" if len(project.labels) == 2 else "label_prior"
    task_counts = Task.objects.filter(project=project).aggregate(
        total=Count("pk"),
        categories=Count("category", distinct=True),
        with_prior=Count("pk", filter=Q(**{f"{own_prior}__isnull": False})),
    )
    matrices = QualityMatrix.objects.filter(project=project)
    latest = quality_matrix_latest(project=project)
    runs = run_list(queryset=AssignmentRun.objects.filter(project=project)).order_by(
        "-created_at", "-id"
    )
    run_counts = AssignmentRun.objects.filter(project=project).aggregate(
        total=Count("pk"),
        running=Count("pk", filter=Q(status=RunStatus.RUNNING)),
        queued=Count("pk", filter=Q(status=RunStatus.QUEUED)),
    )
    return ProjectStatistics(
        workers=worker_counts["total"],
        active_workers=worker_counts["active"],
        workers_without_gold_answers=without_gold.count(),
        tasks=task_counts["total"],
        categories=task_counts["categories"],
        tasks_with_prior=task_counts["with_prior"],
        gold_items=GoldItem.objects.filter(project=project).count(),
        gold_answers=GoldAnswer.objects.filter(item__project=project).count(),
        answers=Answer.objects.filter(task__project=project).count(),
        quality_matrices=matrices.count(),
        latest_quality_matrix=(
            None if latest is None else quality_matrix_statistics(matrix=latest)
        ),
        runs=run_counts["total"],
        runs_running=run_counts["running"],
        runs_queued=run_counts["queued"],
        comparisons=Comparison.objects.filter(project=project).count(),
        recent_runs=tuple(
            RunSummary(
                run_id=run.pk,
                method=run.get_method_display(),
                status=run.get_status_display(),
                budget=run.budget,
                n_assigned=run.n_assigned,
                expected_accuracy=run.expected_accuracy,
                accuracy_standard_error=run.accuracy_standard_error,
                created_at=run.created_at,
            )
            for run in runs[:RECENT_RUNS]
        ),
    )


# --- REST API ----------------------------------------------------------------------------------
# Reads of the API: everything a user reaches is looked up through their own projects, so another
# user's object is simply not found.


def project_list_for_user(*, user) -> QuerySet[Project]:
    """The projects ``user`` owns, by name, with their worker, task and gold item counts."""
    return project_list_with_counts(queryset=Project.objects.filter(owner=user)).order_by(
        "name", "pk"
    )


def _runs_of(*, user, project_id: int | None, status: str | None) -> QuerySet[AssignmentRun]:
    queryset = AssignmentRun.objects.filter(project__owner=user)
    if project_id is not None:
        queryset = queryset.filter(project_id=project_id)
    if status is not None:
        queryset = queryset.filter(status=status)
    return queryset.order_by("-created_at", "-id")


def run_list_for_user(
    *, user, project_id: int | None = None, status: str | None = None
) -> QuerySet[AssignmentRun]:
    """The runs of ``user``'s projects, newest first, optionally of one project and status."""
    # No join to the quality matrix: the API shows only its id, and on SQLite even a deferred
    # blob column in the joined row costs ~5 ms per run at 200 x 10,000 (benchmarks/api.py).
    return (
        _runs_of(user=user, project_id=project_id, status=status)
        .select_related("project")
        .defer("assignment_blob")
    )


#: The columns of a run's status as the API shows it (``RunSerializer``): not the assignment,
#: the distributions of its page, its worker's name or its project's row.
RUN_STATUS_FIELDS = (
    "id",
    "project",
    "comparison",
    "quality_matrix",
    "method",
    "budget",
    "max_workers_per_task",
    "max_tasks_per_worker",
    "seed",
    "options",
    "next_round",
    "answers_through",
    "target_posterior",
    "target_accuracy",
    "rounds_left",
    "shards",
    "round_start",
    "withdrawn_at",
    "handed_out_at",
    "status",
    "progress",
    "progress_message",
    "attempts",
    "created_at",
    "started_at",
    "heartbeat_at",
    "finished_at",
    "seconds",
    "expected_accuracy",
    "accuracy_standard_error",
    "dawid_skene_accuracy",
    "n_assigned",
    "error",
)


def run_status_list_for_user(
    *, user, project_id: int | None = None, status: str | None = None
) -> QuerySet[AssignmentRun]:
    """:func:`run_list_for_user` with only :data:`RUN_STATUS_FIELDS` read (the rest deferred),
    and the columns of :attr:`~assignment.models.AssignmentRun.chosen_under`, for the API's
    answers: a poll of a run reads one row of one table (and the project's owner to check it),
    not the project's row too."""
    columns = dict.fromkeys((*RUN_STATUS_FIELDS, *AssignmentRun.CHOSEN_UNDER_FIELDS))
    return _runs_of(user=user, project_id=project_id, status=status).only(*columns)


_RUN_STATUS = PreparedRead(
    lambda user_id, run_id: run_status_list_for_user(user=user_id).filter(pk=run_id).order_by(),
    "user_id",
    "run_id",
)


def run_status_for_user(*, user, run_id: int) -> AssignmentRun | None:
    """Run ``run_id`` of ``user``'s projects as :func:`run_status_list_for_user` reads it, or
    None (another user's, or none): the API's poll, its SQL compiled once (``PreparedRead``)."""
    return _RUN_STATUS.first(user_id=user.pk, run_id=run_id)


def comparison_list_for_user(*, user, project_id: int | None = None) -> QuerySet[Comparison]:
    """The comparisons of ``user``'s projects, newest first."""
    queryset = Comparison.objects.filter(project__owner=user)
    if project_id is not None:
        queryset = queryset.filter(project_id=project_id)
    return queryset.order_by("-created_at", "-id")


def quality_matrix_latest(*, project: Project) -> QualityMatrix | None:
    """The project's latest quality matrix (the one runs and labels use), or None; its values
    are read only if asked for (:meth:`QualityMatrixQuerySet.latest_of`)."""
    return QualityMatrix.objects.latest_of(project)


@dataclass(frozen=True)
class QualityCoverage:
    """Whether a quality matrix has a row for every active worker and a column for every task.

    A run on a matrix made before workers or tasks were added would never assign them; runs
    refuse such a matrix (:meth:`refusal`) and the project page offers to re-estimate it.
    """

    matrix_id: int
    made_at: datetime
    missing_workers: int
    missing_tasks: int
    example_worker: str | None
    example_task: str | None

    @property
    def complete(self) -> bool:
        return not (self.missing_workers or self.missing_tasks)

    def refusal(self, *, project: Project) -> str:
        """Why a run cannot use the matrix, and what to do (empty when it is complete)."""
        if self.complete:
            return ""
        missing = [
            f"{count} {noun}{'s' if count != 1 else ''} (e.g. {example!r})"
            for count, noun, example in (
                (self.missing_tasks, "task", self.example_task),
                (self.missing_workers, "active worker", self.example_worker),
            )
            if count
        ]
        return (
            f"the latest quality matrix (id {self.matrix_id}, made "
            f"{self.made_at:%Y-%m-%d %H:%M}) has no quality for {' and '.join(missing)} of "
            f"project {project.name!r}, added since: a run would never assign them. Estimate "
            f"quality again (POST /api/projects/{project.pk}/quality/estimate/, the project's "
            "Quality page, or manage.py estimate_quality) or upload a quality file that "
            "covers them"
        )


def quality_matrix_coverage(*, project: Project, matrix: QualityMatrix) -> QualityCoverage:
    """Which of the project's active workers and tasks ``matrix`` has no quality for."""
    found = []
    for model, ids, extra in (
        (Worker, matrix.worker_ids, {"active": True}),
        (Task, matrix.task_ids, {}),
    ):
        pks = np.fromiter(
            model.objects.filter(project=project, **extra).values_list("pk", flat=True),
            dtype=np.int64,
        )
        missing = pks[~np.isin(pks, ids)]
        example = (
            None
            if not missing.size
            else model.objects.values_list("external_id", flat=True).get(pk=int(missing.min()))
        )
        found.append((int(missing.size), example))
    (workers, worker), (tasks, task) = found
    return QualityCoverage(
        matrix_id=matrix.pk,
        made_at=matrix.created_at,
        missing_workers=workers,
        missing_tasks=tasks,
        example_worker=worker,
        example_task=task,
    )


@dataclass(frozen=True)
class RunReadiness:
    """Whether the project's runs can start, on which matrix, and if not why not."""

    matrix: QualityMatrix | None
    refusal: str
    coverage: QualityCoverage | None
    #: ``""`` (ready), ``"no-matrix"`` or ``"stale"``.
    reason: str

    @property
    def ready(self) -> bool:
        return not self.reason


def run_readiness(*, project: Project) -> RunReadiness:
    """The matrix runs would use, or why a run would be wrong (the refusal of
    :func:`assignment.services.run_create`, which the pages show before anyone tries):

    * no quality matrix;
    * a matrix without quality for tasks or active workers added since it was made: they would
      silently never be assigned.
    """
    matrix = quality_matrix_latest(project=project)
    if matrix is None:
        refusal = (
            f"project {project.name!r} has no quality matrix: estimate it from gold answers or "
            f"collected answers first (the project's Quality page, POST /api/projects/"
            f"{project.pk}/quality/estimate/, or manage.py estimate_quality) or upload one "
            "(kind quality)"
        )
        return RunReadiness(matrix=None, refusal=refusal, coverage=None, reason="no-matrix")
    coverage = quality_matrix_coverage(project=project, matrix=matrix)
    return RunReadiness(
        matrix=matrix,
        refusal=coverage.refusal(project=project),
        coverage=coverage,
        reason="" if coverage.complete else "stale",
    )


#: The posterior below which the project page counts a task as still uncertain.
UNCERTAIN_BELOW = 0.95


@dataclass(frozen=True)
class RoundOverview:
    """Where a project stands after the answers collected so far (its page's "Rounds").

    ``accuracy_now`` is the mean over the matrix's tasks of the likelier label's posterior
    (a task without answers: its prior's); on Dawid–Skene quality that is the Dawid–Skene
    labels' expected accuracy, and ``bayes_accuracy_now`` the Bayes labels' (the labels
    export's default) under the same matrices (None on other quality, where the two are the
    same labels); ``uncertain`` counts the tasks below
    :data:`UNCERTAIN_BELOW`. ``last_round`` is the latest succeeded round that counts
    (:func:`rounds_counted`), the last handed out, whose expected gain is its expected
    accuracy less the ``accuracy_now`` it started from (:attr:`last_gain`). ``pending`` counts
    the pairs those rounds assigned that have no answer yet (:func:`pending_pairs`):
    :attr:`awaiting_answers` says there are some, ``pending_runs`` which rounds hold them
    (newest first: those a withdrawal would free them from),
    and a round started now counts them as spent (budget and caps, never assigned again) while
    its expected accuracy leaves their answers out.
    """

    answers: int
    tasks: int
    accuracy_now: float
    uncertain: int
    uncertain_below: float
    last_round: AssignmentRun | None
    pending: int = 0
    pending_runs: tuple[int, ...] = ()
    bayes_accuracy_now: float | None = None

    @property
    def last_gain(self) -> float | None:
        """The last round's expected accuracy less the accuracy it started from; None without
        a last round or for a comparison's run on the whole project handed out (it started
        from no answers in hand: ``round_start`` is empty)."""
        if self.last_round is None or "accuracy_now" not in self.last_round.round_start:
            return None
        return self.last_round.expected_accuracy - self.last_round.round_start["accuracy_now"]

    @property
    def last_gain_points(self) -> float | None:
        """:attr:`last_gain` in points of accuracy (percentage points), the unit of the next
        round's preview beside it."""
        gain = self.last_gain
        return None if gain is None else 100.0 * gain

    @property
    def awaiting_answers(self) -> bool:
        """Pairs of earlier rounds still wait for their answers (:attr:`pending`)."""
        return self.pending > 0


def rounds_counted(*, project: Project) -> QuerySet[AssignmentRun]:
    """The runs whose pairs a project counts as handed out to its workers: its next rounds
    started on their own (``run_create(next_round=True)``: the API's ``round``, ``assign
    --round``, the pages' next round), whatever their status, and the comparison's runs handed
    out (:func:`~assignment.services.run_hand_out`), unless withdrawn
    (:func:`~assignment.services.run_withdraw`: not handed out after all). A comparison's other
    runs are alternatives side by side and a run on the whole project one of many tries, so
    neither counts (docs/design.md#rounds)."""
    return runs_handed_out(queryset=AssignmentRun.objects.filter(project=project))


def runs_handed_out(*, queryset: QuerySet[AssignmentRun]) -> QuerySet[AssignmentRun]:
    """The runs of ``queryset`` whose pairs their project counts as handed out
    (:func:`rounds_counted`, over any runs): deleting one would free pairs its workers have."""
    return queryset.filter(
        Q(next_round=True, comparison__isnull=True) | Q(handed_out_at__isnull=False),
        withdrawn_at__isnull=True,
    )


def pending_pairs(
    *, matrix: QualityMatrix, run_ids: list[int], answers: AnswersInHand
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs the succeeded runs of ``run_ids`` assigned that ``answers`` do not answer, as
    (rows, columns) of ``matrix``, int64, each pair once: the rounds' *pending* pairs.

    A run on another quality matrix is mapped by its workers' and tasks' primary keys; a worker
    or task ``matrix`` does not have (deleted since) is left out.
    """
    m = matrix.n_tasks
    flat = [np.zeros(0, dtype=np.int64), *_run_pending(matrix, run_ids, answers).values()]
    pending = np.unique(np.concatenate(flat))
    return pending // m, pending % m


def _run_pending(matrix: QualityMatrix, run_ids: list[int], answers: AnswersInHand) -> dict:
    """Each succeeded run of ``run_ids`` -> its pairs without an answer among ``answers``, as
    flat positions ``row * n_tasks + column`` of ``matrix`` (:func:`_runs_pending`)."""
    return _runs_pending(
        run_ids,
        worker_pks=matrix.worker_ids,
        task_pks=matrix.task_ids,
        answered=answers.rows * matrix.n_tasks + answers.columns,
    )


def pending_pair_count(*, project: Project) -> int:
    """How many of the pairs that the project's counted rounds (:func:`rounds_counted`) that
    succeeded assigned have no answer yet, each pair once: the rounds' *pending* pairs, found
    as :func:`pending_pairs` finds them (:func:`_runs_pending`) but over the project's workers
    and tasks instead of a quality matrix's (a worker or task deleted since is left out). With
    the answers, what the rounds count as spent of the project's default budget."""
    worker_pks = _pks(Worker.objects.filter(project=project))
    task_pks = _pks(Task.objects.filter(project=project))
    answers = Answer.objects.filter(task__project=project).order_by()
    answered = np.array(list(answers.values_list("worker_id", "task_id")), dtype=np.int64)
    rows = positions(worker_pks, answered.reshape(-1, 2)[:, 0])
    columns = positions(task_pks, answered.reshape(-1, 2)[:, 1])
    runs = rounds_counted(project=project).filter(status=RunStatus.SUCCEEDED)
    per_run = _runs_pending(
        list(runs.values_list("pk", flat=True)),
        worker_pks=worker_pks,
        task_pks=task_pks,
        answered=rows * task_pks.size + columns,  # an answer's pair is never deleted alone
    )
    return int(np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *per_run.values()])).size)


def _runs_pending(
    run_ids: list[int], *, worker_pks: np.ndarray, task_pks: np.ndarray, answered: np.ndarray
) -> dict[int, np.ndarray]:
    """Each succeeded run of ``run_ids`` -> its pairs that are not ``answered``, as flat
    positions ``row * len(task_pks) + column`` over the workers ``worker_pks`` and tasks
    ``task_pks`` (primary keys, distinct; ``answered`` in the same positions): each run's
    pairs are read on its own quality matrix and mapped by primary key, a worker or task not
    among ``worker_pks`` or ``task_pks`` left out. The one rule for the rounds' *pending*
    pairs."""
    runs = AssignmentRun.objects.filter(
        pk__in=list(run_ids), status=RunStatus.SUCCEEDED, assignment_blob__isnull=False
    ).only("assignment_blob", "quality_matrix_id")
    ids: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # a quality matrix's worker and task pks
    out = {}
    for run in runs:
        if run.quality_matrix_id not in ids:
            matrix = QualityMatrix.objects.only("worker_ids_blob", "task_ids_blob").get(
                pk=run.quality_matrix_id
            )
            ids[run.quality_matrix_id] = (matrix.worker_ids, matrix.task_ids)
        run_workers, run_tasks = ids[run.quality_matrix_id]
        rows, columns = run.pairs.astype(np.int64).T
        rows, columns = (
            positions(worker_pks, run_workers[rows]),
            positions(task_pks, run_tasks[columns]),
        )
        kept = (rows >= 0) & (columns >= 0)
        flat = rows[kept] * len(task_pks) + columns[kept]
        out[run.pk] = flat[~np.isin(flat, answered)]
    return out


def _pks(queryset: QuerySet) -> np.ndarray:
    return np.fromiter(queryset.order_by().values_list("pk", flat=True), dtype=np.int64)


def fitting_confusion(*, project: Project, matrix: QualityMatrix) -> np.ndarray | None:
    """The quality's Dawid–Skene confusion matrices, shape (n_workers, K, K), when they fit
    the project's K labels: what runs and next rounds are chosen under
    (docs/design.md#under-confusion-matrices). None for a one-coin or gold estimate, or for
    matrices of another number of labels (the label set changed since the estimate)."""
    confusion = matrix.confusion
    k = len(project.labels)
    if confusion is None or confusion.shape[1:] != (k, k):
        return None
    return confusion


def labels_under_confusion(*, project: Project) -> bool:
    """Whether the project's Dawid–Skene labels (the ``labels_dawid_skene`` export) follow its
    latest quality matrix's confusion matrices (:func:`fitting_confusion`), rather than EM over
    the collected answers alone."""
    matrix = QualityMatrix.objects.latest_of(project)
    return matrix is not None and fitting_confusion(project=project, matrix=matrix) is not None


#: The columns of a project's workers that its problem reads (:func:`project_problem`), and of
#: its tasks but their prior (:func:`_problem_task_columns`): a column added to what the problem
#: reads belongs here too, for :func:`project_problem_inputs`.
PROBLEM_WORKER_COLUMNS = ("pk", "max_tasks", "active")
PROBLEM_TASK_COLUMNS = ("pk", "max_workers")


def _problem_task_columns(project: Project) -> tuple[str, ...]:
    """:data:`PROBLEM_TASK_COLUMNS` and the prior column the problem reads for the project's
    labels (:func:`~assignment.priors.task_priors`: ``prior`` for two, ``label_prior`` for
    more)."""
    return (*PROBLEM_TASK_COLUMNS, "prior" if len(project.labels) == 2 else "label_prior")


def project_problem_inputs(*, project: Project) -> tuple[list, list]:
    """The project's workers' :data:`PROBLEM_WORKER_COLUMNS` and tasks'
    :func:`_problem_task_columns`, by primary key: every per-worker and per-task value its
    problem reads (not the quality matrix), for a cache key that changes whenever the problem
    may (the round preview's)."""
    workers = (
        Worker.objects.filter(project=project).order_by("pk").values_list(*PROBLEM_WORKER_COLUMNS)
    )
    tasks = Task.objects.filter(project=project).order_by("pk")
    return list(workers), list(tasks.values_list(*_problem_task_columns(project)))


def project_problem(
    *,
    project: Project,
    matrix: QualityMatrix,
    budget: int,
    max_workers_per_task: int,
    max_tasks_per_worker: int,
    confusion: np.ndarray | None = None,
) -> AssignmentProblem:
    """The engine problem of ``matrix`` with per-worker and per-task data.

    Quality is the matrix's :meth:`~QualityMatrix.quality_form` (the table of a matrix stored
    by category, never expanded). Workers who cannot work (inactive, or deleted since the
    matrix was made) get a per-worker cap of 0 and tasks deleted since a per-task cap of 0: the
    feasible assignments of an eligibility mask, without a workers x tasks array (the upper
    bound, which drops the per-worker caps, leaves workers with a cap of 0 out). Workers' and
    tasks' own caps and priors override the given defaults. With ``confusion`` (the matrix's
    Dawid–Skene matrices, shape (n_workers, K, K)) the problem is chosen and scored under them
    (docs/design.md#under-confusion-matrices).
    """
    per_worker, per_task = _problem_caps(
        matrix=matrix,
        max_workers_per_task=max_workers_per_task,
        max_tasks_per_worker=max_tasks_per_worker,
    )
    return AssignmentProblem(
        matrix.quality_form(),
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        prior=task_priors(project=project, task_ids=matrix.task_ids),
        n_labels=len(project.labels),
        confusion=confusion,
    )


def _problem_caps(
    *, matrix: QualityMatrix, max_workers_per_task: int, max_tasks_per_worker: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each matrix worker's cap, shape (n,), and each matrix task's, shape (m,): its own cap,
    else the given default; 0 for a worker inactive or deleted since the matrix was made and
    for a task deleted since."""
    worker_ids, task_ids = matrix.worker_ids.tolist(), matrix.task_ids.tolist()
    workers = {
        pk: (max_tasks, active)
        for pk, max_tasks, active in Worker.objects.filter(pk__in=worker_ids).values_list(
            *PROBLEM_WORKER_COLUMNS
        )
    }
    tasks = dict(Task.objects.filter(pk__in=task_ids).values_list(*PROBLEM_TASK_COLUMNS))

    def own_or_default(own: int | None, default: int) -> int:
        return default if own is None else own

    per_worker = np.array(
        [
            own_or_default(workers[pk][0], max_tasks_per_worker)
            if workers.get(pk, (0, False))[1]
            else 0
            for pk in worker_ids
        ],
        dtype=np.int64,
    )
    per_task = np.array(
        [own_or_default(tasks[pk], max_workers_per_task) if pk in tasks else 0 for pk in task_ids],
        dtype=np.int64,
    )
    return per_worker, per_task


def project_pair_capacity(
    *, matrix: QualityMatrix, max_workers_per_task: int, max_tasks_per_worker: int
) -> int:
    """A bound on the (worker, task) pairs the caps allow on ``matrix``, which no assignment
    exceeds: the smaller of the workers' and the tasks' caps summed, each cap at most the
    number of tasks (workers) there are to take, every worker's and task's own cap counted and
    workers who cannot work left out (:func:`_problem_caps`).

    A project without a budget of its own spends this (``services.rounds``).
    """
    per_worker, per_task = _problem_caps(
        matrix=matrix,
        max_workers_per_task=max_workers_per_task,
        max_tasks_per_worker=max_tasks_per_worker,
    )
    workers, tasks = int(np.count_nonzero(per_worker)), int(np.count_nonzero(per_task))
    return int(min(np.minimum(per_worker, tasks).sum(), np.minimum(per_task, workers).sum()))


def project_budget(
    *, project: Project, matrix: QualityMatrix, max_workers_per_task: int, max_tasks_per_worker: int
) -> int:
    """The project's budget under the given caps: its default, else as many pairs as the caps
    allow on ``matrix``, workers' and tasks' own caps counted (:func:`project_pair_capacity`)."""
    if project.default_budget is not None:
        return project.default_budget
    return project_pair_capacity(
        matrix=matrix,
        max_workers_per_task=max_workers_per_task,
        max_tasks_per_worker=max_tasks_per_worker,
    )


def largest_task_cap(*, project: Project, default: int) -> int:
    """The most workers any task of ``project`` may take: ``default`` (a run's cap) or a
    task's own larger cap (``Task.max_workers``)."""
    own = Task.objects.filter(project=project).aggregate(largest=Max("max_workers"))["largest"]
    return max(default, own or 0)


def _confidence_now(
    *, project: Project, matrix: QualityMatrix, answers
) -> tuple[np.ndarray, np.ndarray | None]:
    """Each matrix task's posterior of its likeliest label after ``answers``, shape (m,):
    under the tasks' priors (:func:`~assignment.priors.task_priors`), Dawid–Skene's posterior
    when the quality has confusion matrices that fit (:func:`fitting_confusion`), else the
    Bayes vote's, binary or over K labels (:mod:`~assignment.engine.multiclass`). Beside it,
    under the matrices only (else None), each task's Dawid–Skene posterior of the label the
    Bayes vote gives (the labels export's default): its chance of being right, shape (m,)."""
    quality = matrix.quality_at(rows=answers.rows, columns=answers.columns)
    prior = task_priors(project=project, task_ids=matrix.task_ids)
    k = len(project.labels)
    distribution = np.column_stack([1.0 - prior, prior]) if k == 2 else prior
    if k != 2:
        bayes = aggregate_multiclass(
            task_index=answers.columns,
            quality=quality,
            label=answers.label,
            prior=prior,
            n_labels=k,
        )
        bayes_posterior, bayes_labels = bayes.posterior, bayes.labels
    else:
        binary = aggregate_pairs(
            task_index=answers.columns, quality=quality, said_one=answers.said_one, prior=prior
        )
        bayes_posterior = np.column_stack([1.0 - binary.posterior, binary.posterior])
        bayes_labels = binary.labels.astype(np.int64)
    confusion = fitting_confusion(project=project, matrix=matrix)
    if confusion is None:
        return bayes_posterior.max(axis=1), None
    posterior = confusion_posterior(
        confusion,
        worker_index=answers.rows,
        task_index=answers.columns,
        label=answers.label,
        prior=distribution,
    )
    return posterior.max(axis=1), posterior[np.arange(posterior.shape[0]), bayes_labels]


def round_overview(*, project: Project, readiness: RunReadiness) -> RoundOverview | None:
    """The project's :class:`RoundOverview`, or None when runs cannot start (``readiness``,
    from :func:`run_readiness`) or its answers cannot be read against the matrix."""
    if not readiness.ready:
        return None
    matrix = readiness.matrix
    try:
        answers = answers_in_hand(project=project, matrix=matrix)
    except AnswersError:
        return None
    confidence, bayes_right = _confidence_now(project=project, matrix=matrix, answers=answers)
    succeeded = rounds_counted(project=project).filter(status=RunStatus.SUCCEEDED)
    # The last handed out: a round started on its own is handed out when it finishes.
    last_round = succeeded.order_by(
        Coalesce("handed_out_at", "finished_at").desc(nulls_last=True), "-pk"
    ).first()
    per_run = _run_pending(matrix, list(succeeded.values_list("pk", flat=True)), answers)
    pending = np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *per_run.values()]))
    return RoundOverview(
        answers=answers.count,
        tasks=int(confidence.size),
        accuracy_now=float(confidence.mean()),
        bayes_accuracy_now=None if bayes_right is None else float(bayes_right.mean()),
        uncertain=int((confidence < UNCERTAIN_BELOW).sum()),
        uncertain_below=UNCERTAIN_BELOW,
        last_round=last_round,
        pending=int(pending.size),
        pending_runs=tuple(sorted((pk for pk, p in per_run.items() if p.size), reverse=True)),
    )


def run_assignment_rows(*, run: AssignmentRun) -> Iterator[tuple[str, str]]:
    """The (worker id, task id) pairs of a succeeded run, by the project's external ids.

    Raises :class:`RunStateError` at once if the run has no assignment (it has not succeeded).
    """
    if run.status != RunStatus.SUCCEEDED or run.assignment_blob is None:
        raise RunStateError(
            f"run {run.pk} is {run.status}: only a succeeded run has an assignment to download"
        )
    pairs = run.pairs
    matrix = QualityMatrix.objects.only("worker_ids_blob", "task_ids_blob").get(
        pk=run.quality_matrix_id
    )
    worker_pks, task_pks = matrix.worker_ids, matrix.task_ids
    in_project = {"project_id": run.project_id}
    workers = dict(Worker.objects.filter(**in_project).values_list("pk", "external_id"))
    tasks = dict(Task.objects.filter(**in_project).values_list("pk", "external_id"))
    return (
        (workers[int(worker_pks[row])], tasks[int(task_pks[column])])
        for row, column in pairs.tolist()
    )


@dataclass(frozen=True)
class ComparisonRow:
    run_id: int
    method: str
    budget: int
    status: str
    progress: int
    n_assigned: int | None
    expected_accuracy: float | None
    accuracy_standard_error: float | None
    seconds: float | None
    #: When the run was handed out to the workers (``services.run_hand_out``), and withdrawn.
    handed_out_at: datetime | None = None
    withdrawn_at: datetime | None = None


@dataclass(frozen=True)
class CurvePoint:
    budget: int
    expected_accuracy: float


@dataclass(frozen=True)
class UpperBoundCurve:
    """The accuracy upper bound of a comparison (``services.comparison_upper_bound_compute``).

    ``status`` is ``pending``, ``done``, ``not applicable`` or ``failed`` (``""`` for a
    comparison made before bounds were computed); ``points`` are set when ``done``.
    """

    status: str
    points: tuple[CurvePoint, ...]
    message: str


@dataclass(frozen=True)
class ComparisonSummary:
    comparison_id: int
    project_id: int
    methods: list[str]
    #: The budgets of its runs, ascending (the project's default budget when none was given).
    budgets: list[int]
    created_at: datetime
    #: True when every run has ended (succeeded, failed or cancelled).
    finished: bool
    #: One row per run, by method (in the order requested) and budget.
    rows: tuple[ComparisonRow, ...]
    #: Per method, the expected accuracy of its succeeded runs by budget (ascending).
    curves: dict[str, tuple[CurvePoint, ...]]
    upper_bound: UpperBoundCurve


_ENDED = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED)


def comparison_run_handed_out(*, comparison_id: int) -> AssignmentRun | None:
    """The run of the comparison that is handed out now (not withdrawn), or None: only one
    can be (``services.run_hand_out``)."""
    return (
        AssignmentRun.objects.filter(
            comparison_id=comparison_id, handed_out_at__isnull=False, withdrawn_at__isnull=True
        )
        .only("pk", "comparison_id", "handed_out_at")
        .first()
    )


def comparison_summary(*, comparison: Comparison) -> ComparisonSummary:
    """The table of a comparison's runs and, per method, its accuracy-against-budget curve."""
    order = {method: k for k, method in enumerate(comparison.methods)}
    runs = sorted(
        run_list(queryset=AssignmentRun.objects.filter(comparison=comparison)),
        key=lambda run: (order.get(run.method, len(order)), run.budget, run.pk),
    )
    rows = tuple(
        ComparisonRow(
            run_id=run.pk,
            method=run.method,
            budget=run.budget,
            status=run.status,
            progress=run.progress,
            n_assigned=run.n_assigned,
            expected_accuracy=run.expected_accuracy,
            accuracy_standard_error=run.accuracy_standard_error,
            seconds=run.seconds,
            handed_out_at=run.handed_out_at,
            withdrawn_at=run.withdrawn_at,
        )
        for run in runs
    )
    curves = {
        method: tuple(
            CurvePoint(budget=row.budget, expected_accuracy=row.expected_accuracy)
            for row in rows
            if row.method == method
            and row.status == RunStatus.SUCCEEDED
            and row.expected_accuracy is not None
        )
        for method in comparison.methods
    }
    return ComparisonSummary(
        comparison_id=comparison.pk,
        project_id=comparison.project_id,
        methods=list(comparison.methods),
        # The budgets its runs have: the project's default when none was asked for.
        budgets=sorted({row.budget for row in rows}) or list(comparison.budgets),
        created_at=comparison.created_at,
        finished=all(row.status in _ENDED for row in rows),
        rows=rows,
        curves=curves,
        upper_bound=UpperBoundCurve(
            status=comparison.upper_bound.get("status", ""),
            points=tuple(
                CurvePoint(budget=budget, expected_accuracy=value)
                for budget, value in comparison.upper_bound.get("points", [])
            ),
            message=comparison.upper_bound.get("message", ""),
        ),
    )


# --- Pages -------------------------------------------------------------------------------------
# Reads of the frontend's pages, beyond the API's: summaries that never load a whole matrix.


def project_overview_list(*, user) -> QuerySet[Project]:
    """:func:`project_list_for_user` plus ``run_count``, ``best_accuracy`` (of the succeeded
    runs not withdrawn) and the latest run's ``latest_run_id``, ``latest_run_method`` and
    ``latest_run_status``."""
    runs = AssignmentRun.objects.filter(project=OuterRef("pk"))
    latest = runs.order_by("-created_at", "-id")
    succeeded = runs.filter(status=RunStatus.SUCCEEDED, withdrawn_at__isnull=True).order_by()
    return project_list_for_user(user=user).annotate(
        run_count=_count_per_project(AssignmentRun.objects.all()),
        best_accuracy=Subquery(
            succeeded.values("project").annotate(best=Max("expected_accuracy")).values("best")
        ),
        latest_run_id=Subquery(latest.values("pk")[:1]),
        latest_run_method=Subquery(latest.values("method")[:1]),
        latest_run_status=Subquery(latest.values("status")[:1]),
    )


@dataclass(frozen=True)
class WorkerCategoryQuality:
    """What the quality pictures draw, from a matrix's stored per-category means.

    ``worker_means``: each worker's mean quality over all tasks, shape (n_workers,).
    ``rows`` x ``columns`` label ``values`` (the heat map): one row per worker, best first,
    or, for more than ``max_rows`` workers, one row per group of workers of consecutive rank
    (``workers_per_row`` > 1); one column per category, the ``max_columns`` with the most
    tasks (``hidden_categories`` counts the others).
    """

    worker_means: np.ndarray
    rows: list[str]
    columns: list[str]
    values: np.ndarray
    workers_per_row: int
    hidden_categories: int


def quality_by_worker_and_category(
    *, matrix: QualityMatrix, max_rows: int = 25, max_columns: int = 30
) -> WorkerCategoryQuality | None:
    """The heat map and the worker distribution of ``matrix``; None for a matrix with no
    workers or no tasks."""
    means = matrix.category_means
    counts = np.asarray(matrix.category_task_counts, dtype=np.float64)
    if means is None or means.size == 0:
        return None
    worker_means = means @ counts / counts.sum()
    rank = np.argsort(-worker_means, kind="stable")
    shown = np.sort(np.argsort(-counts, kind="stable")[:max_columns])
    names = dict(
        Worker.objects.filter(pk__in=matrix.worker_ids.tolist()).values_list("pk", "external_id")
    )
    worker_names = [names.get(int(pk), f"(deleted {pk})") for pk in matrix.worker_ids[rank]]
    if len(rank) <= max_rows:
        rows, values, per_row = worker_names, means[rank][:, shown], 1
    else:
        groups = np.array_split(np.arange(len(rank)), max_rows)
        rows = [f"ranks {g[0] + 1}\u2013{g[-1] + 1}" for g in groups]
        values = np.array([means[rank[g]][:, shown].mean(axis=0) for g in groups])
        per_row = int(np.ceil(len(rank) / max_rows))
    return WorkerCategoryQuality(
        worker_means=worker_means,
        rows=rows,
        columns=[matrix.categories[c] for c in shown],
        values=values,
        workers_per_row=per_row,
        hidden_categories=len(counts) - len(shown),
    )


@dataclass(frozen=True)
class TaskLabel:
    task_id: str
    label: str
    #: Probability that ``label`` is the true label, under the latest quality matrix.
    posterior: float
    n_answers: int


def project_labels(*, project: Project, aggregation: str = "bayes") -> list[TaskLabel]:
    """The label of every task with answers: the Bayes vote under the latest quality matrix
    (the ``labels`` export's rows) or Dawid–Skene's (``aggregation="dawid-skene"``).

    Raises :class:`~assignment.errors.ExportError` when the project cannot have labels yet
    (Bayes: no quality matrix, a label set that is not binary, answers the matrix does not
    cover; both: an answer outside the label set).
    """
    kind = LABEL_AGGREGATIONS[aggregation]
    return [TaskLabel(*row) for row in EXPORT_KINDS[kind].rows(project)]


#: Decimals of a posterior that order labels by confidence: posteriors equal but for
#: floating-point rounding (two ways to 3/4) tie, and ties come in task-id order.
CONFIDENCE_DECIMALS = 12


def project_labels_by_confidence(
    *, project: Project, aggregation: str = "bayes", most_confident_first: bool = False
) -> list[TaskLabel]:
    """:func:`project_labels`, least confident first (most with ``most_confident_first``): by
    the posterior to :data:`CONFIDENCE_DECIMALS` decimals, then by task id, so that the order
    never depends on floating-point noise. Raises what :func:`project_labels` raises."""
    sign = -1 if most_confident_first else 1
    return sorted(
        project_labels(project=project, aggregation=aggregation),
        key=lambda row: (sign * round(row.posterior, CONFIDENCE_DECIMALS), row.task_id),
    )


def api_token_of(*, user) -> Token | None:
    """``user``'s API token (expired or not), or None if they have none yet."""
    return Token.objects.filter(user=user).first()


def api_token_expiry(*, token: Token) -> datetime | None:
    """When ``token`` stops working (``TVCS_TOKEN_MAX_AGE_DAYS`` after it was made), or None
    if tokens never expire."""
    days = settings.TVCS_TOKEN_MAX_AGE_DAYS
    return None if days == 0 else token.created + timedelta(days=days)
