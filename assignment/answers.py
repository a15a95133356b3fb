"""The collected answers of a project as arrays over a quality matrix's rows and columns.

The labels export and the next round read answers the same way: one query for the answers
(``worker_id``, ``task_id``, ``label``), the matrix row and column of each, and the index of
its label in the project's label set (for two labels, ``1`` is the binary Bayes vote's 1).
No workers x tasks grid.
:func:`labelled_answers` reads answers (or gold answers) by primary keys and label index, for
the EM of quality from answers and the Dawid–Skene labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assignment.errors import AnswersError
from assignment.models import Answer, Project, QualityMatrix, Task, Worker

__all__ = ["AnswersInHand", "answers_in_hand", "labelled_answers", "positions"]


@dataclass(frozen=True)
class AnswersInHand:
    """The answers, one entry per answer (in no particular order).

    Attributes
    ----------
    rows, columns : ndarray of int64, shape (n_answers,)
        The matrix row of the answer's worker and the column of its task.
    label : ndarray of int64, shape (n_answers,)
        The answer's index in the project's label set.
    last_id : int or None
        The largest answer id read (None without answers): a round counts exactly these.
    """

    rows: np.ndarray
    columns: np.ndarray
    label: np.ndarray
    last_id: int | None

    @property
    def count(self) -> int:
        return int(self.rows.size)

    @property
    def said_one(self) -> np.ndarray:
        """Whether each answer was the second label (label ``1`` of a binary Bayes vote)."""
        return self.label == 1


def answers_in_hand(
    *, project: Project, matrix: QualityMatrix, through: int | None = None
) -> AnswersInHand:
    """The project's answers (those with id at most ``through``, if given) over ``matrix``.

    Raises :class:`AnswersError` naming a worker or task that has answers but no quality in the
    matrix, or an answer whose label is not in the project's (binary) label set.
    """
    labels = list(project.labels)
    # By the task's project (an answer's worker and task are in one project): the cheaper join.
    answers = Answer.objects.filter(task__project=project)
    if through is not None:
        answers = answers.filter(pk__lte=through)
    found = list(answers.order_by().values_list("pk", "worker_id", "task_id", "label"))
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return AnswersInHand(rows=empty, columns=empty, label=empty, last_id=None)
    ids, worker_pks, task_pks, given = zip(*found, strict=True)
    rows = positions(matrix.worker_ids, np.asarray(worker_pks, dtype=np.int64))
    columns = positions(matrix.task_ids, np.asarray(task_pks, dtype=np.int64))
    _check_covered(matrix, rows, columns, worker_pks, task_pks)
    value_of = {label: value for value, label in enumerate(labels)}
    unknown = next((label for label in given if label not in value_of), None)
    if unknown is not None:  # the label set was changed after the answers came in
        raise AnswersError(
            f"an answer has the label {unknown!r}, which is not in the project's label set "
            f"{labels!r}"
        )
    label = np.fromiter((value_of[name] for name in given), np.int64, len(given))
    return AnswersInHand(rows=rows, columns=columns, label=label, last_id=max(ids))


def positions(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of ``wanted`` stands in ``keys`` (distinct), or -1 where it does not."""
    if not len(keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    at = order[np.searchsorted(keys, wanted, sorter=order).clip(max=len(keys) - 1)]
    return np.where(keys[at] == wanted, at, -1)


def _check_covered(matrix: QualityMatrix, rows, columns, worker_pks, task_pks) -> None:
    """Raise :class:`AnswersError` naming a worker or task with answers but no quality."""
    missing_row, missing_column = np.flatnonzero(rows < 0), np.flatnonzero(columns < 0)
    if not missing_row.size and not missing_column.size:
        return
    if missing_row.size:
        what = f"worker {Worker.objects.get(pk=worker_pks[missing_row[0]]).external_id!r}"
    else:
        what = f"task {Task.objects.get(pk=task_pks[missing_column[0]]).external_id!r}"
    raise AnswersError(
        f"the latest quality matrix (id {matrix.pk}) has no quality for {what}, which has "
        "answers; estimate or import the quality again"
    )


def labelled_answers(
    *, project: Project, answers, item: str, label_field: str, labels: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``answers`` (a queryset of Answer or GoldAnswer) as three int64 arrays: the worker's
    primary key, the ``item``'s (task or gold item) and the label's index in ``labels``.

    Raises :class:`QualityEstimationError` naming the first answer (worker, item, label) whose
    label is not in the set.
    """
    rows = list(answers.order_by("pk").values_list("worker_id", f"{item}_id", label_field))
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    worker_pk, item_pk, given = zip(*rows, strict=True)
    index_of = {name: k for k, name in enumerate(labels)}
    label = np.fromiter((index_of.get(name, -1) for name in given), np.int64, len(given))
    unknown = np.flatnonzero(label < 0)
    if unknown.size:
        at = int(unknown[0])
        worker, thing = (
            answers.filter(worker_id=worker_pk[at], **{f"{item}_id": item_pk[at]})
            .values_list("worker__external_id", f"{item}__external_id")
            .get()
        )
        noun = "task" if item == "task" else "gold item"
        raise AnswersError(
            f"an answer of worker {worker!r} on {noun} {thing!r} has the label {given[at]!r}, "
            f"which is not in project {project.name!r}'s label set {labels!r}; fix the answer "
            "or the label set"
        )
    return (
        np.asarray(worker_pk, dtype=np.int64),
        np.asarray(item_pk, dtype=np.int64),
        label,
    )
