"""Exports of a project's data as CSV or JSON, streamed row by row (README, "Data files").

Every kind of data file that can be imported can be exported in the same format, so that an
export imports back unchanged (into the same project, or a fresh one); ``labels`` adds the
Bayes-vote labels of the collected answers. A kind is an :class:`ExportKind` in
:data:`EXPORT_KINDS`: column names, and a function of the project that checks what it needs
(raising :class:`~assignment.errors.ExportError` before anything is written) and returns the
rows. Later kinds (the assignments of a run) are added to that dictionary.

CSV cells that come from users (ids, names, categories, labels: every ``str`` cell) and start
with ``=``, ``+``, ``-``, ``@``, a tab, a carriage return or NUL are prefixed with a single quote
so that spreadsheets do not run them as formulas (OWASP CSV injection; ASVS V1.2.10). Numbers the
exporter writes itself (caps, priors, qualities, posteriors) are never prefixed; none of them is
negative. JSON output is not altered.
"""

from __future__ import annotations

import csv
import itertools
import json
import logging
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO, TypeVar

import numpy as np

from assignment.answers import answers_in_hand, labelled_answers
from assignment.data_files import FORMATS, quote_formula
from assignment.engine.aggregate import aggregate_pairs
from assignment.engine.answer_quality import (
    answers_overlap,
    estimate_from_answers,
    likeliest_labels,
)
from assignment.engine.confusion import confusion_posterior
from assignment.engine.multiclass import aggregate_multiclass
from assignment.errors import AnswersError, ExportError
from assignment.models import (
    Answer,
    GoldAnswer,
    GoldItem,
    Project,
    QualityMatrix,
    Task,
    Worker,
)
from assignment.priors import label_prior_mapping, task_priors

__all__ = [
    "EXPORT_KINDS",
    "FORMATS",
    "ExportKind",
    "export_data",
    "quote_formula",
    "write_pairs",
    "write_when_complete",
]

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

_CHUNK_ROWS = 5_000

Rows = Iterable[tuple]


@dataclass(frozen=True)
class ExportKind:
    """One kind of export: its ``columns`` and ``rows(project)``.

    ``rows`` raises :class:`ExportError` at once (before the first row is asked for) if the
    project lacks what the export needs. Row values are ``str`` (user data, neutralised in CSV),
    ``int`` / ``float`` (written as numbers), ``dict`` (JSON; text in CSV) or None (empty).
    """

    columns: tuple[str, ...]
    rows: Callable[[Project], Rows]
    description: str


# --------------------------------------------------------------------------------------------
# Rows of each kind


def _worker_rows(project: Project) -> Rows:
    return (
        Worker.objects.filter(project=project)
        .order_by("pk")
        .values_list("external_id", "name", "max_tasks")
        .iterator(chunk_size=_CHUNK_ROWS)
    )


def _task_rows(project: Project) -> Rows:
    """The tasks file as imported: ``prior`` is P(second label), or with more than two labels
    the object giving each label its probability (:mod:`assignment.priors`)."""
    labels = list(project.labels)
    prior = "prior" if len(labels) == 2 else "label_prior"
    rows = (
        Task.objects.filter(project=project)
        .order_by("pk")
        .values_list("external_id", "category", "max_workers", prior, "payload")
        .iterator(chunk_size=_CHUNK_ROWS)
    )
    if len(labels) == 2:
        return ((*row[:4], row[4] or None) for row in rows)
    return ((*row[:3], label_prior_mapping(row[3], labels), row[4] or None) for row in rows)


def _gold_item_rows(project: Project) -> Rows:
    return (
        GoldItem.objects.filter(project=project)
        .order_by("pk")
        .values_list("external_id", "category", "true_label")
        .iterator(chunk_size=_CHUNK_ROWS)
    )


def _gold_answer_rows(project: Project) -> Rows:
    return (
        GoldAnswer.objects.filter(worker__project=project)
        .order_by("pk")
        .values_list("worker__external_id", "item__external_id", "answer")
        .iterator(chunk_size=_CHUNK_ROWS)
    )


def _answer_rows(project: Project) -> Rows:
    return (
        Answer.objects.filter(worker__project=project)
        .order_by("pk")
        .values_list("worker__external_id", "task__external_id", "label")
        .iterator(chunk_size=_CHUNK_ROWS)
    )


def _latest_quality_matrix(project: Project) -> QualityMatrix:
    matrix = QualityMatrix.objects.latest_of(project)
    if matrix is None:
        raise ExportError(
            f"project {project.name!r} has no quality matrix yet; estimate one (the project's "
            f"Quality page, POST /api/projects/{project.pk}/quality/estimate/, or manage.py "
            "estimate_quality) or upload a quality file"
        )
    return matrix


def _external_ids(model, project: Project) -> dict[int, str]:
    return dict(model.objects.filter(project=project).values_list("pk", "external_id"))


def _quality_rows(project: Project) -> Rows:
    """One row per worker and task of the latest matrix, read a block of worker rows at a time
    (:meth:`QualityMatrix.row_blocks`: a chunk, or rows built from the table of a matrix stored
    by category), so the whole matrix is never in memory."""
    matrix = _latest_quality_matrix(project)
    workers = _external_ids(Worker, project)
    tasks = _external_ids(Task, project)
    worker_ids = [workers.get(int(pk)) for pk in matrix.worker_ids]
    task_ids = [tasks.get(int(pk)) for pk in matrix.task_ids]
    gone = worker_ids.count(None) + task_ids.count(None)
    if gone:
        logger.warning(
            "quality matrix %s: %d of its workers and tasks were deleted since; left out",
            matrix.pk,
            gone,
        )
    kept = np.flatnonzero([task_id is not None for task_id in task_ids])
    kept_ids = [task_ids[j] for j in kept]

    def generate() -> Iterator[tuple]:
        for start, block in matrix.row_blocks():
            for r in range(block.shape[0]):
                worker_id = worker_ids[start + r]
                if worker_id is not None:
                    row = block[r, kept].tolist()
                    yield from zip(itertools.repeat(worker_id), kept_ids, row, strict=False)

    return generate()


def _answers_in_hand(project: Project, matrix: QualityMatrix):
    """The project's answers on ``matrix`` (:func:`~assignment.answers.answers_in_hand`), or
    :class:`ExportError` with why they cannot be read."""
    try:
        return answers_in_hand(project=project, matrix=matrix)
    except AnswersError as exc:
        raise ExportError(str(exc)) from exc


def _label_rows(project: Project) -> Rows:
    """Bayes-vote label of every task with answers, with the posterior of that label.

    Reads the answers once, as arrays (:func:`~assignment.answers.answers_in_hand`), and the
    quality of the answered pairs only (:func:`~assignment.engine.aggregate.aggregate_pairs`):
    no workers x tasks grid. With K > 2 labels, the K-class Bayes vote under the tasks' priors
    (:func:`~assignment.engine.multiclass.aggregate_multiclass`).
    """
    labels = list(project.labels)
    matrix = _latest_quality_matrix(project)
    answers = _answers_in_hand(project, matrix)
    if not answers.count:
        return iter(())
    answered, task_of_answer = np.unique(answers.columns, return_inverse=True)
    task_ids = matrix.task_ids[answered]
    external_ids = dict(Task.objects.filter(project=project).values_list("pk", "external_id"))
    quality = matrix.quality_at(rows=answers.rows, columns=answers.columns)
    priors = task_priors(project=project, task_ids=task_ids)
    if len(labels) == 2:
        result = aggregate_pairs(
            task_index=task_of_answer,
            quality=quality,
            said_one=answers.said_one,
            prior=priors,
        )
        chosen = result.labels
        posterior = np.where(chosen == 1, result.posterior, 1.0 - result.posterior)
    else:
        k = len(labels)
        result = aggregate_multiclass(
            task_index=task_of_answer,
            quality=quality,
            label=answers.label,
            prior=priors,
            n_labels=k,
        )
        chosen = result.labels
        posterior = result.posterior[np.arange(len(answered)), chosen]
    counts = np.bincount(task_of_answer, minlength=len(answered))

    def generate() -> Iterator[tuple]:
        for k, pk in enumerate(task_ids.tolist()):
            yield external_ids[pk], labels[chosen[k]], float(posterior[k]), int(counts[k])

    return generate()


def _dawid_skene_label_rows(project: Project) -> Rows:
    """Dawid–Skene's label of every task with answers, with the posterior of that label.

    Under the latest quality matrix's confusion matrices when it has some that fit the labels
    (a Dawid–Skene estimate, from answers, gold or both): the posterior of the answers under
    them and the tasks' priors, the labels the project page and the runs' "Dawid–Skene vote"
    describe. Otherwise expectation–maximisation over the collected answers alone (Dawid &
    Skene 1979: a confusion matrix per worker and the label set's class prior, learnt together
    with the labels; no gold, no per-task prior), by
    :func:`~assignment.engine.answer_quality.estimate_from_answers`, refused as the estimate
    from answers is when no task has two answers. Any number of labels; ties go to the highest
    label (:func:`~assignment.engine.answer_quality.likeliest_labels`).
    """
    from assignment.selectors import fitting_confusion  # selectors import this module

    matrix = QualityMatrix.objects.latest_of(project)
    confusion = None if matrix is None else fitting_confusion(project=project, matrix=matrix)
    if confusion is not None:
        return _confusion_label_rows(project, matrix, confusion)
    return _em_label_rows(project)


def _confusion_label_rows(project: Project, matrix: QualityMatrix, confusion) -> Rows:
    """The Dawid–Skene labels under ``matrix``'s ``confusion`` matrices (n_workers, K, K)."""
    labels = list(project.labels)
    answers = _answers_in_hand(project, matrix)
    if not answers.count:
        return iter(())
    answered, task_of_answer = np.unique(answers.columns, return_inverse=True)
    task_ids = matrix.task_ids[answered]
    prior = task_priors(project=project, task_ids=task_ids)
    posterior = confusion_posterior(
        confusion,
        worker_index=answers.rows,
        task_index=task_of_answer,
        label=answers.label,
        prior=np.column_stack([1.0 - prior, prior]) if len(labels) == 2 else prior,
    )
    chosen = likeliest_labels(posterior)
    counts = np.bincount(task_of_answer, minlength=len(answered))
    external_ids = _external_ids(Task, project)

    def generate() -> Iterator[tuple]:
        for k, pk in enumerate(task_ids.tolist()):
            label = int(chosen[k])
            yield external_ids[pk], labels[label], float(posterior[k, label]), int(counts[k])

    return generate()


def _em_label_rows(project: Project) -> Rows:
    """The Dawid–Skene labels of EM over the collected answers alone."""
    labels = list(project.labels)
    answers = Answer.objects.filter(worker__project=project, task__project=project)
    try:
        worker_pk, task_pk, label = labelled_answers(
            project=project, answers=answers, item="task", label_field="label", labels=labels
        )
    except AnswersError as exc:
        raise ExportError(str(exc)) from exc
    if not worker_pk.size:
        return iter(())
    workers, worker_index = np.unique(worker_pk, return_inverse=True)
    tasks, task_index = np.unique(task_pk, return_inverse=True)
    if not answers_overlap(task_index, np.full(len(tasks), -1)):
        raise ExportError(
            f"project {project.name!r}: no task has two answers, so Dawid\u2013Skene's EM cannot "
            "tell a worker's right answers from wrong ones (it would call every worker right); "
            "collect a second answer on some tasks (a next round), or estimate the quality "
            "with the Dawid\u2013Skene model from gold and answers (source 'both'): the labels "
            "then follow its confusion matrices"
        )
    fit = estimate_from_answers(
        worker_index=worker_index,
        task_index=task_index,
        label=label,
        n_workers=len(workers),
        n_tasks=len(tasks),
        n_labels=len(labels),
        model="dawid-skene",
    )
    external = dict(Task.objects.filter(pk__in=tasks.tolist()).values_list("pk", "external_id"))
    counts = np.bincount(task_index, minlength=len(tasks))

    def generate() -> Iterator[tuple]:
        for k, pk in enumerate(tasks.tolist()):
            chosen = int(fit.labels[k])
            yield external[pk], labels[chosen], float(fit.posterior[k, chosen]), int(counts[k])

    return generate()


#: The kinds of export, by name.
EXPORT_KINDS: dict[str, ExportKind] = {
    "workers": ExportKind(("worker_id", "name", "max_tasks"), _worker_rows, "the workers"),
    "tasks": ExportKind(
        ("task_id", "category", "max_workers", "prior", "payload"), _task_rows, "the tasks"
    ),
    "gold_items": ExportKind(
        ("item_id", "category", "true_label"), _gold_item_rows, "the gold questions"
    ),
    "gold_answers": ExportKind(
        ("worker_id", "item_id", "answer"), _gold_answer_rows, "the workers' gold answers"
    ),
    "quality": ExportKind(
        ("worker_id", "task_id", "quality"), _quality_rows, "the latest quality matrix"
    ),
    "answers": ExportKind(
        ("worker_id", "task_id", "answer"), _answer_rows, "the collected answers"
    ),
    "labels": ExportKind(
        ("task_id", "label", "posterior", "n_answers"),
        _label_rows,
        "Bayes-vote labels of the collected answers (latest quality matrix)",
    ),
    "labels_dawid_skene": ExportKind(
        ("task_id", "label", "posterior", "n_answers"),
        _dawid_skene_label_rows,
        "Dawid\u2013Skene labels of the collected answers (under the quality's confusion matrices "
        "when it has them, else EM over the answers alone)",
    ),
}

#: How the labels of the collected answers are aggregated (``?aggregation=`` of the labels
#: page and API), and the export kind of each.
LABEL_AGGREGATIONS = {"bayes": "labels", "dawid-skene": "labels_dawid_skene"}


# --------------------------------------------------------------------------------------------
# Writers


def _csv_cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return quote_formula(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return quote_formula(json.dumps(value, ensure_ascii=False, allow_nan=False))
    raise TypeError(f"cannot write {type(value).__name__} to CSV")


def _write_csv(columns: tuple[str, ...], rows: Rows, out: TextIO) -> int:
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    count = 0
    for row in rows:
        writer.writerow([_csv_cell(value) for value in row])
        count += 1
    return count


def _write_json(columns: tuple[str, ...], rows: Rows, out: TextIO) -> int:
    count = 0
    for row in rows:
        out.write("[\n" if count == 0 else ",\n")
        out.write(json.dumps(dict(zip(columns, row, strict=True)), ensure_ascii=False))
        count += 1
    out.write("[]\n" if count == 0 else "\n]\n")
    return count


def export_data(*, project: Project, kind: str, format: str, out: TextIO) -> int:
    """Write ``project``'s data of ``kind`` to the text stream ``out`` as ``format``.

    Returns the number of rows written (without the CSV header). Raises :class:`ExportError`
    for an unknown kind or format, or if the project lacks what the export needs — before
    anything is written.
    """
    if kind not in EXPORT_KINDS:
        raise ExportError(f"unknown export kind {kind!r}; one of {', '.join(EXPORT_KINDS)}")
    if format not in FORMATS:
        raise ExportError(f"unknown format {format!r}; one of {', '.join(FORMATS)}")
    spec = EXPORT_KINDS[kind]
    rows = spec.rows(project)
    write = _write_csv if format == "csv" else _write_json
    count = write(spec.columns, rows, out)
    logger.info("exported %d %s rows of project %s as %s", count, kind, project.pk, format)
    return count


def write_when_complete(path: Path | str, write: Callable[[TextIO], _T]) -> _T:
    """``write(out)`` into the file ``path`` (UTF-8), which is replaced only once ``write``
    has returned: a failure (a full disk, a file-size limit, an export refused midway) leaves
    the file as it was and no part behind. The new file has the permissions the umask gives,
    as a plain ``open`` would."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            result = write(out)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return result


def write_pairs(rows: Iterable[tuple[str, str]], format: str, out: TextIO) -> None:
    """(worker_id, task_id) rows as the exports write tables: CSV with CRLF line ends and
    formula-like cells quoted (:func:`quote_formula`), or a JSON list
    of objects."""
    if format == "csv":
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(("worker_id", "task_id"))
        writer.writerows(
            (quote_formula(worker_id), quote_formula(task_id)) for worker_id, task_id in rows
        )
        return
    first = True
    for worker_id, task_id in rows:
        out.write("[\n" if first else ",\n")
        out.write(json.dumps({"worker_id": worker_id, "task_id": task_id}, ensure_ascii=False))
        first = False
    out.write("[]\n" if first else "\n]\n")
