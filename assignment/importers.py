"""Validation and upserts of one data file of each kind (README, "Data files").

:func:`import_data_file` takes an open :class:`~assignment.data_files.DataFile` and writes its
rows into a project, in batches of :data:`BATCH_SIZE` (``bulk_create`` with
``update_conflicts``: a row whose id exists is updated, so importing the same file twice changes
nothing). It does not open a transaction: the caller
(:func:`assignment.services.project_data_import`) runs it inside one, so that the first invalid
row leaves the database as it was.

References (a gold answer's worker and item, ...) are resolved through dictionaries of external
id -> primary key loaded once per import, so memory is bounded by the project's workers, tasks
and items plus ~12 bytes per row of a pair file (for the duplicate check), never by the rows'
objects.
"""

from __future__ import annotations

import json
import logging
import math
import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.db import models

from assignment.data_files import (
    DataFile,
    Row,
    invisible_character,
    parse_json_text,
    unquote_formula,
)
from assignment.errors import ImportValidationError
from assignment.models import (
    MAX_COUNT,
    Answer,
    GoldAnswer,
    GoldItem,
    Project,
    QualityMatrix,
    QualitySource,
    Task,
    Worker,
)
from assignment.priors import label_prior_from_mapping

__all__ = ["BATCH_SIZE", "KINDS", "ImportResult", "import_data_file"]

logger = logging.getLogger(__name__)

#: The kinds of data file, in the order a project is usually filled.
KINDS = ("workers", "tasks", "gold_items", "gold_answers", "quality", "answers")

#: Rows validated and written per ``bulk_create``.
BATCH_SIZE = 5_000

#: Longest id, name or category (the models' ``max_length``).
_MAX_TEXT = 200
_MAX_LABEL = 100

_INTEGER = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote: ``rows`` rows of ``kind`` from the file ``file``, of which
    ``added`` were new (the rest updated existing ones); ``added`` is None for a quality
    file, which always makes a new matrix."""

    kind: str
    file: str
    rows: int
    added: int | None = None

    @property
    def new_and_existing(self) -> str:
        """Which rows were new and which already there, in words ("" for a quality file):
        rows already there are set to the file's values, changed or not, so not "updated"
        (read as "changed" when the same file comes back)."""
        if self.added is None:
            return ""
        there = self.rows - self.added
        if not there:
            return f"all {self.added:,} new" if self.rows > 1 else "new"
        return f"{self.added:,} new, {there:,} already there, set to the values in the file"


class _Invalid(Exception):
    """A cell's problem; the row loop adds the file, the line and the column."""


# --------------------------------------------------------------------------------------------
# Cells


#: Longest quotation of a bad value in a message; a longer one is cut and its length said.
_SHOWN = 80


def _show(value: object) -> str:
    """A value as the message quotes it: 'text' for strings, JSON for the rest; cut to
    :data:`_SHOWN` characters, with the whole length said, when longer."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value)
        except (ValueError, RecursionError):  # nested too deeply to write back
            return f"a JSON {type(value).__name__} too deep to quote"
    if len(text) <= _SHOWN:
        return text
    return f"{text[:_SHOWN]}… ({len(text):,} characters)"


def _is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


class _Cells:
    """Parsers of the cells of one file (CSV cells are strings, JSON cells JSON values)."""

    def __init__(self, data: DataFile, labels: list[str]) -> None:
        self._csv = data.format == "csv"
        self._labels = labels
        self._label_set = frozenset(labels)

    def text(self, value: object, *, required: bool = True, max_length: int = _MAX_TEXT) -> str:
        """Trimmed text ('' when blank and not required); JSON integers are taken as text."""
        if value is None:
            text = ""
        elif isinstance(value, str):
            text = value.strip()
            if self._csv:
                text = unquote_formula(text)  # undo the formula quoting of our own exports
        elif isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
        else:
            raise _Invalid(f"must be a string, got {_show(value)}")
        if not text and required:
            raise _Invalid("must not be empty")
        if "\x00" in text:
            raise _Invalid("must not contain the NUL character")
        if len(text) > max_length:
            raise _Invalid(f"must be at most {max_length} characters long, got {len(text)}")
        return text

    def key(self, value: object) -> str:
        """:meth:`text` that names a row of another file or a category (an id, a category):
        without invisible format characters (a byte order mark, a zero-width space), which
        would make it differ from the same id typed elsewhere while looking the same."""
        text = self.text(value)
        hidden = invisible_character(text)
        if hidden:
            raise _Invalid(f"{hidden}: remove it, or the id will not match the same id elsewhere")
        return text

    def label(self, value: object) -> str:
        """One of the project's labels, exactly (after trimming)."""
        if isinstance(value, str) and value in self._label_set:  # the common case, fast
            return value
        text = self.text(value, max_length=_MAX_LABEL) if not _is_blank(value) else ""
        if text not in self._label_set:
            allowed = ", ".join(repr(label) for label in self._labels)
            raise _Invalid(f"must be one of the project's labels ({allowed}), got {_show(value)}")
        return text

    def count(self, value: object) -> int | None:
        """A non-negative integer, or None when blank."""
        if _is_blank(value):
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            number = int(value.strip())
        else:
            raise _Invalid(f"must be a non-negative integer, got {_show(value)}")
        if number < 0:
            raise _Invalid(f"must be a non-negative integer, got {_show(value)}")
        if number > MAX_COUNT:
            raise _Invalid(f"must be at most {MAX_COUNT}, got {_show(value)}")
        return number

    def number(self, value: object) -> float | None:
        """A finite number, or None when blank."""
        if _is_blank(value):
            return None
        try:
            if isinstance(value, int | float) and not isinstance(value, bool):
                number = float(value)
            elif isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
                number = float(value.strip())
            else:
                raise _Invalid(f"must be a finite number, got {_show(value)}")
        except OverflowError:  # an integer beyond the largest float
            number = math.inf
        if not math.isfinite(number):
            raise _Invalid(f"must be a finite number, got {_show(value)}")
        return number + 0.0  # -0 is 0

    def prior(self, value: object) -> float | None:
        """P(label = the second label) of a binary project's task, strictly inside (0, 1), or
        None when blank."""
        number = self.number(value)
        if number is not None and not 0.0 < number < 1.0:
            raise _Invalid(f"must be strictly between 0 and 1, got {_show(value)}")
        return number

    def label_prior(self, value: object) -> list[float] | None:
        """The prior distribution of a task of K > 2 labels, or None when blank: an object
        giving every label its probability (in CSV, the object's JSON text), stored in label
        order (:func:`~assignment.priors.label_prior_from_mapping`)."""
        if _is_blank(value):
            return None
        given = value
        if isinstance(value, str) and self._csv:
            try:
                value = parse_json_text(value)
            except ValueError as exc:
                raise _Invalid(
                    f"must be a JSON object giving each label its probability, got "
                    f"{_show(given)} ({exc})"
                ) from None
        try:
            return label_prior_from_mapping(value, self._labels)
        except ValueError as exc:
            raise _Invalid(str(exc)) from None

    def quality(self, value: object) -> float:
        """A probability in [0, 1]; required."""
        number = self.number(value)
        if number is None:
            raise _Invalid("must not be empty")
        if not 0.0 <= number <= 1.0:
            raise _Invalid(f"must be between 0 and 1, got {_show(value)}")
        return number

    def payload(self, value: object) -> dict:
        """A JSON object ({} when blank); in CSV, the object's JSON text."""
        if _is_blank(value):
            return {}
        given = value
        if isinstance(value, str) and self._csv:
            try:
                value = parse_json_text(value)
            except ValueError as exc:
                raise _Invalid(f"must be a JSON object, got {_show(given)} ({exc})") from None
        if not isinstance(value, dict):
            raise _Invalid(f"must be a JSON object, got {_show(given)}")
        if "\\u0000" in json.dumps(value):  # PostgreSQL's jsonb cannot hold NUL
            raise _Invalid("must not contain the NUL character")
        return value


# --------------------------------------------------------------------------------------------
# Columns and rows


def _check_columns(
    data: DataFile, kind: str, *, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> None:
    """Every required column present, no unknown one."""
    where = "the header" if data.format == "csv" else "the first object"
    known = required + optional
    expected = ", ".join(required) + "".join(f"[, {column}]" for column in optional)
    for column in data.columns:
        if column not in known:
            raise data.error(
                data.header_line,
                column,
                f"is not a column of {kind} files (they have {expected})",
            )
    for column in required:
        if column not in data.columns:
            raise data.error(
                data.header_line,
                column,
                f"is missing from {where} (a {kind} file has {expected})",
            )


def _cell(data: DataFile, row: Row, column: str, parse: Callable[[object], object]):
    try:
        return parse(row.values[column])
    except _Invalid as exc:
        raise data.row_error(row, column, str(exc)) from None


def _upsert(
    model: type[models.Model],
    objects: list[models.Model],
    *,
    unique_fields: list[str],
    update_fields: list[str],
) -> None:
    if not objects:
        return
    if update_fields:
        model.objects.bulk_create(
            objects,
            batch_size=BATCH_SIZE,
            update_conflicts=True,
            unique_fields=unique_fields,
            update_fields=update_fields,
        )
    else:  # nothing to update: the ids alone, existing ones are kept as they are
        model.objects.bulk_create(objects, batch_size=BATCH_SIZE, ignore_conflicts=True)


class _Ids:
    """A project's workers, tasks or gold items: external id -> dense index, and their pks."""

    def __init__(self, queryset: models.QuerySet, noun: str, kind: str) -> None:
        self.noun = noun
        self.kind = kind
        self.external_ids: list[str] = []
        self.pks: list[int] = []
        self.index: dict[str, int] = {}
        for external_id, pk in queryset.order_by("pk").values_list("external_id", "pk"):
            self.index[external_id] = len(self.pks)
            self.external_ids.append(external_id)
            self.pks.append(pk)

    def __len__(self) -> int:
        return len(self.pks)

    def find(self, external_id: str, project: Project) -> int:
        try:
            return self.index[external_id]
        except KeyError:
            raise _Invalid(
                f"{external_id!r} is not a {self.noun} of project {project.name!r} "
                f"(import the {self.kind} first)"
            ) from None


# --------------------------------------------------------------------------------------------
# Workers, tasks, gold items: one row per external id


@dataclass(frozen=True)
class _Field:
    column: str
    field: str
    parse: Callable[[_Cells, object], object]


def _import_entities(
    *,
    project: Project,
    data: DataFile,
    kind: str,
    model: type[models.Model],
    id_column: str,
    fields: tuple[_Field, ...],
    required: tuple[str, ...],
    labels: list[str],
) -> int:
    optional = tuple(f.column for f in fields if f.column not in required)
    _check_columns(data, kind, required=(id_column, *required), optional=optional)
    cells = _Cells(data, labels)
    present = [f for f in fields if f.column in data.columns]
    update_fields = [f.field for f in present]
    seen: dict[str, int] = {}
    batch: list[models.Model] = []
    rows = 0
    unique_fields = ["project", "external_id"]
    for row in data.rows():
        external_id = _cell(data, row, id_column, cells.key)
        first = seen.get(external_id)  # by row, not by line: a JSON line may hold several
        if first is not None:
            raise data.row_error(
                row, id_column, f"{external_id!r} appears twice (first on {first})"
            )
        seen[external_id] = row.where
        values = {}
        for f in present:
            try:
                values[f.field] = f.parse(cells, row.values[f.column])
            except _Invalid as exc:
                raise data.row_error(row, f.column, str(exc)) from None
        batch.append(model(project=project, external_id=external_id, **values))
        rows += 1
        if len(batch) >= BATCH_SIZE:
            _upsert(model, batch, unique_fields=unique_fields, update_fields=update_fields)
            batch = []
    _upsert(model, batch, unique_fields=unique_fields, update_fields=update_fields)
    return rows


_WORKER_FIELDS = (
    _Field("name", "name", lambda cells, v: cells.text(v, required=False)),
    _Field("max_tasks", "max_tasks", _Cells.count),
)


def _task_fields(labels: list[str]) -> tuple[_Field, ...]:
    """A tasks file's columns: its ``prior`` is P(second label) in a binary project and a
    distribution over the labels in a project of more than two."""
    prior = (
        _Field("prior", "prior", _Cells.prior)
        if len(labels) == 2
        else _Field("prior", "label_prior", _Cells.label_prior)
    )
    return (
        _Field("category", "category", _Cells.key),
        _Field("max_workers", "max_workers", _Cells.count),
        prior,
        _Field("payload", "payload", _Cells.payload),
    )


_GOLD_ITEM_FIELDS = (
    _Field("category", "category", _Cells.key),
    _Field("true_label", "true_label", _Cells.label),
)


# --------------------------------------------------------------------------------------------
# Gold answers and answers: one row per (worker, item or task) pair


def _import_pairs(
    *,
    project: Project,
    data: DataFile,
    kind: str,
    model: type[models.Model],
    right: _Ids,
    right_column: str,
    right_field: str,
    value_column: str,
    value_field: str,
    labels: list[str],
) -> int:
    _check_columns(data, kind, required=("worker_id", right_column, value_column))
    cells = _Cells(data, labels)
    workers = _Ids(Worker.objects.filter(project=project), "worker", "workers")
    n_right = max(len(right), 1)
    # Every row's (worker, right) key, line and JSON object number (0 in CSV), 20 bytes a row,
    # to find duplicates across batches.
    keys = array("q")
    lines = array("l")
    items = array("l")
    batch: list[models.Model] = []
    batch_lines: dict[int, str] = {}  # pair key -> where it was first given
    rows = 0

    def flush() -> None:
        _upsert(
            model,
            batch,
            unique_fields=["worker", right_field],
            update_fields=[value_field],
        )
        batch.clear()
        batch_lines.clear()

    right_fk = f"{right_field}_id"
    for row in data.rows():
        values = row.values
        column = "worker_id"
        try:
            worker_id = cells.key(values["worker_id"])
            w = workers.find(worker_id, project)
            column = right_column
            right_id = cells.key(values[right_column])
            r = right.find(right_id, project)
            column = value_column
            value = cells.label(values[value_column])
        except _Invalid as exc:
            raise data.row_error(row, column, str(exc)) from None
        key = w * n_right + r
        first = batch_lines.get(key)  # by row, not by line: a JSON line may hold several
        if first is not None:
            raise _duplicate_pair(
                data, row.line, first, right_column, worker_id, right_id, item=row.item
            )
        batch_lines[key] = row.where
        keys.append(key)
        lines.append(row.line)
        items.append(row.item or 0)
        batch.append(
            model(worker_id=workers.pks[w], **{right_fk: right.pks[r], value_field: value})
        )
        rows += 1
        if len(batch) >= BATCH_SIZE:
            flush()
    flush()

    # Duplicates in different batches: the later row has overwritten the earlier one, but the
    # caller's transaction is rolled back by the error.
    key_array = np.frombuffer(keys, dtype=np.int64)
    order = np.argsort(key_array, kind="stable")  # by key, then by row
    sorted_keys = key_array[order]
    repeated = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1]) + 1
    if repeated.size:
        second = int(order[repeated].min())  # the first row that repeats an earlier one
        key = int(key_array[second])
        first = int(order[np.searchsorted(sorted_keys, key)])
        w, r = divmod(key, n_right)
        raise _duplicate_pair(
            data,
            lines[second],
            Row(lines[first], {}, items[first] or None).where,
            right_column,
            workers.external_ids[w],
            right.external_ids[r],
            item=items[second] or None,
        )
    return rows


def _duplicate_pair(
    data: DataFile,
    line: int,
    first: str,
    column: str,
    worker_id: str,
    right_id: str,
    *,
    item: int | None = None,
) -> ImportValidationError:
    """The error of a pair given again on ``line`` (object ``item`` of a JSON file), first
    given on ``first`` (``line 3``, ``line 1, object 2``)."""
    return ImportValidationError(
        data.name,
        line,
        column,
        f"the pair (worker_id {worker_id!r}, {column} {right_id!r}) appears twice "
        f"(first on {first})",
        item=item,
    )


# --------------------------------------------------------------------------------------------
# Quality


def _import_quality(*, project: Project, data: DataFile, labels: list[str]) -> int:
    if "task_id" in data.columns and "category" in data.columns:
        raise data.error(
            data.header_line,
            "category",
            "a quality file gives quality per task_id or per category, not both",
        )
    by = "category" if "category" in data.columns else "task_id"
    _check_columns(data, "quality", required=("worker_id", by, "quality"))
    cells = _Cells(data, labels)
    workers = _Ids(Worker.objects.filter(project=project), "worker", "workers")
    tasks = _Ids(Task.objects.filter(project=project), "task", "tasks")
    if not len(workers) or not len(tasks):
        missing = "workers" if not len(workers) else "tasks"
        raise data.error(
            None,
            None,
            f"project {project.name!r} has no {missing}: a quality matrix covers all its "
            "workers and tasks, so import those first",
        )
    task_categories = list(
        Task.objects.filter(project=project).order_by("pk").values_list("category", flat=True)
    )
    if by == "task_id":
        columns = tasks
        noun = "task"
    else:
        names = sorted(set(task_categories))
        columns = _Categories(names)
        noun = "category"
    values = np.zeros((len(workers), len(columns)), dtype=np.float64)
    given_on = np.zeros((len(workers), len(columns)), dtype=np.int64)
    rows = 0
    for row in data.rows():
        values_of_row = row.values
        column = "worker_id"
        try:
            worker_id = cells.key(values_of_row["worker_id"])
            w = workers.find(worker_id, project)
            column = by
            column_id = cells.key(values_of_row[by])
            c = columns.find(column_id, project)
            column = "quality"
            value = cells.quality(values_of_row["quality"])
        except _Invalid as exc:
            raise data.row_error(row, column, str(exc)) from None
        if given_on[w, c]:
            raise data.row_error(
                row,
                by,
                f"the pair (worker_id {worker_id!r}, {by} {column_id!r}) appears twice "
                f"(first on line {given_on[w, c]})",
            )
        given_on[w, c] = row.line
        values[w, c] = value
        rows += 1

    missing = np.argwhere(given_on == 0)
    if missing.size:
        w, c = missing[0]
        raise data.error(
            None,
            None,
            f"gives no quality for {len(missing):,} of the {given_on.size:,} (worker, {noun}) "
            f"pairs, e.g. worker {workers.external_ids[w]!r} and {noun} "
            f"{columns.external_ids[c]!r}; every worker of the project needs a value for every "
            f"{noun}",
        )
    matrix = QualityMatrix(
        project=project,
        source=QualitySource.UPLOADED,
        details={"file": data.name, "given_per": noun},
    )
    keys = {"worker_ids": workers.pks, "task_ids": tasks.pks, "task_categories": task_categories}
    if by == "category":  # kept as the worker x category table, never expanded
        matrix.set_by_category(table=values, table_categories=columns.external_ids, **keys)
    else:
        matrix.set_arrays(values=values, **keys)
    matrix.save()
    return rows


class _Categories(_Ids):
    """The project's task categories, indexed like :class:`_Ids`."""

    def __init__(self, names: list[str]) -> None:
        self.noun = "category"
        self.kind = "tasks"
        self.external_ids = names
        self.pks = list(range(len(names)))
        self.index = {name: i for i, name in enumerate(names)}

    def find(self, external_id: str, project: Project) -> int:
        try:
            return self.index[external_id]
        except KeyError:
            raise _Invalid(
                f"{external_id!r} is not the category of any task of project {project.name!r}"
            ) from None


# --------------------------------------------------------------------------------------------
# Entry point


def import_data_file(*, project: Project, kind: str, data: DataFile) -> ImportResult:
    """Validate and write every row of ``data`` (a ``kind`` file) into ``project``.

    Runs no transaction of its own: call it inside ``transaction.atomic()`` so that an error
    leaves the project as it was.

    Raises
    ------
    ImportValidationError
        The first problem found: file, line, column and what is wrong.
    ValueError
        ``kind`` is not one of :data:`KINDS`.
    """
    labels = list(project.labels)
    if kind == "workers":
        rows = _import_entities(
            project=project,
            data=data,
            kind=kind,
            model=Worker,
            id_column="worker_id",
            fields=_WORKER_FIELDS,
            required=(),
            labels=labels,
        )
    elif kind == "tasks":
        rows = _import_entities(
            project=project,
            data=data,
            kind=kind,
            model=Task,
            id_column="task_id",
            fields=_task_fields(labels),
            required=("category",),
            labels=labels,
        )
    elif kind == "gold_items":
        rows = _import_entities(
            project=project,
            data=data,
            kind=kind,
            model=GoldItem,
            id_column="item_id",
            fields=_GOLD_ITEM_FIELDS,
            required=("category", "true_label"),
            labels=labels,
        )
    elif kind == "gold_answers":
        rows = _import_pairs(
            project=project,
            data=data,
            kind=kind,
            model=GoldAnswer,
            right=_Ids(GoldItem.objects.filter(project=project), "gold item", "gold_items"),
            right_column="item_id",
            right_field="item",
            value_column="answer",
            value_field="answer",
            labels=labels,
        )
    elif kind == "answers":
        rows = _import_pairs(
            project=project,
            data=data,
            kind=kind,
            model=Answer,
            right=_Ids(Task.objects.filter(project=project), "task", "tasks"),
            right_column="task_id",
            right_field="task",
            value_column="answer",
            value_field="label",
            labels=labels,
        )
    elif kind == "quality":
        rows = _import_quality(project=project, data=data, labels=labels)
    else:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    logger.info("imported %d %s rows from %s into project %s", rows, kind, data.name, project.pk)
    return ImportResult(kind=kind, file=data.name, rows=rows)
