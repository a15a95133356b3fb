"""Project data: workers, tasks, gold questions and answers, quality matrices, answers.

Every row belongs to one project and every project to one owner. Database constraints (unique
external ids per project, value ranges) back up the validation the import services do first.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence

import numpy as np
from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models, transaction
from django.db.models import F, Q, Sum
from django.urls import reverse

from assignment.engine import METHODS, method_spec
from assignment.engine.problem import QualityByCategory
from assignment.engine.under_confusion import CHOSEN_UNDER_MATRICES

#: Largest count a cap, a budget or a row number may be: a ``PositiveIntegerField`` holds it on
#: every supported database.
MAX_COUNT = 2**31 - 1
#: The validators of a count a user gives: ``full_clean`` refuses what PostgreSQL could not
#: store on SQLite too, whose integers are wider (so a value accepted on one is on the other).
COUNT_VALIDATORS = [MaxValueValidator(MAX_COUNT)]
#: Largest seed of a run (a ``BigIntegerField``; numpy seeds are non-negative).
MAX_SEED = 2**63 - 1
#: Most rounds a next round may plan for (:attr:`AssignmentRun.rounds_left`).
MAX_ROUNDS_LEFT = 100
#: Largest primary key (a ``BigAutoField``).
MAX_ID = 2**63 - 1


def default_labels() -> list[str]:
    """Binary labels, the default label set of a project."""
    return ["0", "1"]


class Project(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects"
    )
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    labels = models.JSONField(
        default=default_labels, help_text="The label set; binary ['0', '1'] by default."
    )
    default_prior = models.FloatField(
        default=0.5,
        help_text="Two labels: P(the second label) for tasks without a prior of their own.",
    )
    default_label_prior = models.JSONField(
        null=True,
        blank=True,
        help_text="More than two labels: P(each label), in the order of the labels, for tasks "
        "without one; empty = uniform (assignment.priors).",
    )
    default_max_workers_per_task = models.PositiveIntegerField(
        default=3, validators=COUNT_VALIDATORS
    )
    default_max_tasks_per_worker = models.PositiveIntegerField(
        default=100, validators=COUNT_VALIDATORS
    )
    default_budget = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=COUNT_VALIDATORS,
        help_text="Total assignments; empty = as many as the caps allow.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["owner_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="project_name_unique_per_owner"),
            models.CheckConstraint(
                condition=Q(default_prior__gt=0) & Q(default_prior__lt=1),
                name="project_prior_in_open_unit_interval",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        """The project's page for its owner (the admin's "view on site" links there)."""
        return reverse("frontend:project", kwargs={"project_id": self.pk})


class Worker(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="workers")
    external_id = models.CharField(max_length=200)
    name = models.CharField(max_length=200, blank=True)
    max_tasks = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=COUNT_VALIDATORS,
        help_text="Own cap; empty = the project's default.",
    )
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["project_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="worker_id_unique_per_project"
            )
        ]

    def __str__(self) -> str:
        return self.external_id


class Task(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tasks")
    external_id = models.CharField(max_length=200)
    category = models.CharField(max_length=200)
    max_workers = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=COUNT_VALIDATORS,
        help_text="Own cap; empty = the project's default.",
    )
    prior = models.FloatField(
        null=True,
        blank=True,
        help_text="Two labels: P(the second label); empty = the project's default.",
    )
    label_prior = models.JSONField(
        null=True,
        blank=True,
        help_text="More than two labels: P(each label), in the order of the project's labels; "
        "empty = the project's default (assignment.priors).",
    )
    payload = models.JSONField(default=dict, blank=True, help_text="Free data, e.g. a URL.")

    class Meta:
        ordering = ["project_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="task_id_unique_per_project"
            ),
            models.CheckConstraint(
                condition=Q(prior__isnull=True) | (Q(prior__gt=0) & Q(prior__lt=1)),
                name="task_prior_in_open_unit_interval",
            ),
        ]

    def __str__(self) -> str:
        return self.external_id


class GoldItem(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_items")
    external_id = models.CharField(max_length=200)
    category = models.CharField(max_length=200)
    true_label = models.CharField(max_length=100)

    class Meta:
        ordering = ["project_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"], name="gold_item_id_unique_per_project"
            )
        ]

    def __str__(self) -> str:
        return self.external_id


class GoldAnswer(models.Model):
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="gold_answers")
    item = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="answers")
    answer = models.CharField(max_length=100)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["worker", "item"], name="one_gold_answer_per_worker")
        ]


class QualitySource(models.TextChoices):
    """How a stored quality matrix was made."""

    ESTIMATED = "estimated", "estimated from gold answers"
    UPLOADED = "uploaded", "uploaded"
    FROM_ANSWERS = "from_answers", "estimated from collected answers by EM"
    GOLD_AND_ANSWERS = "gold_and_answers", "estimated from collected and gold answers by EM"


class EstimateSource(models.TextChoices):
    """What a quality estimate learns from: the ``source`` of
    :func:`assignment.services.quality_estimate`, and the one list of choices the API, the
    page's form and ``manage.py estimate_quality --source`` offer (not a database field)."""

    GOLD = "gold", "gold answers (counted)"
    ANSWERS = "answers", "collected answers (EM, no gold)"
    BOTH = "both", "collected answers and gold answers (EM, gold as known truths)"


def _array_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def _array_from(data) -> np.ndarray:
    return np.load(io.BytesIO(bytes(data)), allow_pickle=False)


def category_means(values: np.ndarray, task_categories) -> tuple[list[str], list[int], np.ndarray]:
    """Per worker, the mean quality over the tasks of each category.

    Returns the categories (sorted), how many tasks each has, and the means, shape
    (n_workers, n_categories): what the pages draw (a worker x category heat map, the
    distribution of worker quality) without loading the whole matrix.
    """
    names, inverse, counts = _categories_of(task_categories)
    order = np.argsort(inverse, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    if values.shape[1] == 0:
        sums = np.zeros((values.shape[0], 0))
    else:
        sums = np.add.reduceat(values[:, order], starts, axis=1)
    return names, [int(c) for c in counts], sums / np.maximum(counts, 1)


def _categories_of(task_categories) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct categories (sorted), each task's index among them, and their task counts."""
    names, inverse, counts = np.unique(
        np.asarray(task_categories, dtype=object).astype(str),
        return_inverse=True,
        return_counts=True,
    )
    return [str(name) for name in names], inverse.reshape(-1), counts


def value_statistics(values: np.ndarray) -> dict:
    """Mean, population standard deviation, min and max of ``values``; {} when empty."""
    if values.size == 0:
        return {}
    return {
        "mean": float(values.mean()),
        "std": float(values.std()),
        "min": float(values.min()),
        "max": float(values.max()),
    }


def table_statistics(*, table: np.ndarray, task_counts: np.ndarray) -> dict:
    """:func:`value_statistics` of the matrix ``table[:, c_j]`` without building it.

    Parameters
    ----------
    table : ndarray of float, shape (n_workers, n_categories)
        Quality by worker and category.
    task_counts : ndarray of int, shape (n_categories,)
        How many tasks each category has (each at least 1): column ``c`` of the table stands
        for that many columns of the matrix.

    Returns
    -------
    dict
        Mean, population standard deviation, min and max of the matrix; {} when it is empty.
    """
    if table.size == 0:
        return {}
    weights = np.broadcast_to(np.asarray(task_counts, dtype=np.float64), table.shape)
    mean = np.average(table, weights=weights)
    return {
        "mean": float(mean),
        "std": float(np.sqrt(np.average((table - mean) ** 2, weights=weights))),
        "min": float(table.min()),
        "max": float(table.max()),
    }


def _compact_indices(indices: np.ndarray, *, upper: int) -> np.ndarray:
    """``indices`` (all in ``[0, upper)``) in the smallest unsigned integer type that holds them."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if upper <= np.iinfo(dtype).max + 1:
            return indices.astype(dtype)
    return indices.astype(np.uint64)


#: The fields of a quality matrix's row that grow with its values or its tasks: left behind by
#: reads of its sizes and summaries.
QUALITY_VALUE_BLOBS = (
    "task_ids_blob",
    "category_table_blob",
    "task_category_blob",
    "confusion_blob",
)


class QualityMatrixQuerySet(models.QuerySet):
    def latest_of(self, project: Project) -> QualityMatrix | None:
        """The project's latest matrix (the one runs and labels use), or None.

        Its values (dense: in chunks of their own; by category: the table and each task's
        category) and task ids, which grow with the number of tasks (16 MB and 80 kB at 200 x
        10,000 dense), are read only if asked for; the sizes and summaries come with the row.
        """
        return (
            self.filter(project=project)
            .defer(*QUALITY_VALUE_BLOBS)
            .order_by("-created_at", "-id")
            .first()
        )


class _QualityCache:
    """Quality of the matrices this process read last, as :meth:`QualityMatrix.quality_form`
    gives it (the dense values, or the table by category).

    A stored matrix never changes (a new estimate or upload makes a new row), so a page that
    needs the same matrix's values again (the labels) decodes its blobs once. Keyed by id and
    creation time (an id alone could come back in a database made anew). Arrays are read-only;
    at most ``max_bytes`` are kept, the least recently used going first.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.forms: OrderedDict[tuple, np.ndarray | QualityByCategory] = OrderedDict()
        self.lock = threading.Lock()

    @staticmethod
    def _nbytes(form: np.ndarray | QualityByCategory) -> int:
        if isinstance(form, QualityByCategory):
            return form.table.nbytes + form.task_category.nbytes
        return form.nbytes

    def get(self, matrix: QualityMatrix) -> np.ndarray | QualityByCategory:
        key = (matrix.pk, matrix.created_at)
        with self.lock:
            if key in self.forms:
                self.forms.move_to_end(key)
                return self.forms[key]
        form = matrix.quality_form()
        if isinstance(form, np.ndarray):
            form.flags.writeable = False
        if self._nbytes(form) <= self.max_bytes:
            with self.lock:
                self.forms[key] = form
                while sum(self._nbytes(f) for f in self.forms.values()) > self.max_bytes:
                    self.forms.popitem(last=False)
        return form


_QUALITY_CACHE = _QualityCache(max_bytes=256 * 1024 * 1024)


#: Largest piece of a quality matrix's values stored in one database row, in bytes: whole
#: worker rows, at least one. Far below the limits of one value (1 GB in PostgreSQL and SQLite),
#: so a matrix has no size ceiling below the machine's memory.
QUALITY_CHUNK_BYTES = 32 * 1024 * 1024


def quality_row_chunks(n_workers: int, n_tasks: int) -> list[tuple[int, int]]:
    """``(row_start, row_stop)`` of each chunk of an ``n_workers x n_tasks`` float64 matrix."""
    rows = max(1, QUALITY_CHUNK_BYTES // max(1, 8 * n_tasks))
    return [(start, min(start + rows, n_workers)) for start in range(0, n_workers, rows)]


class QualityMatrix(models.Model):
    """A workers x tasks quality matrix ``Q``, stored in one of two ways.

    * **Dense** (a file of quality per task): the values in chunks of whole worker rows
      (:class:`QualityChunk`, at most :data:`QUALITY_CHUNK_BYTES` each; not one row per pair).
    * **By category** (``by_category``: estimated from gold answers, or a file of quality per
      category): a workers x categories table (``category_table``, its columns ``categories``)
      and each task's column in it (``task_category``, in the smallest unsigned integer type
      that holds it), ``Q[i, j] = category_table[i, task_category[j]]``; no chunks. 2,000
      workers x 200,000 tasks in 20 categories is then 40,000 values and 200 kB of indices
      instead of 3.2 GB.

    ``worker_ids`` and ``task_ids`` are the primary keys of the rows and columns, in order;
    ``gold_counts`` how many gold answers each worker had (estimated matrices). Beside the
    matrix, a summary small enough for any page: the task categories, their task counts, each
    worker's mean quality per category (:func:`category_means`; by category, the table itself)
    and the value statistics. Sizes and summaries are read without the values
    (:meth:`QualityMatrixQuerySet.latest_of`); the engine gets :meth:`quality_form`, never a
    dense matrix built from a table.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="quality_matrices")
    source = models.CharField(max_length=20, choices=QualitySource.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    n_workers = models.PositiveIntegerField()
    n_tasks = models.PositiveIntegerField()
    worker_ids_blob = models.BinaryField()
    task_ids_blob = models.BinaryField()
    gold_counts_blob = models.BinaryField(null=True, blank=True)
    by_category = models.BooleanField(
        default=False,
        help_text="Stored as a worker x category table and each task's category (no chunks).",
    )
    category_table_blob = models.BinaryField(null=True, blank=True)
    task_category_blob = models.BinaryField(null=True, blank=True)
    categories = models.JSONField(
        default=list, blank=True, help_text="The tasks' categories, sorted."
    )
    category_task_counts = models.JSONField(
        default=list, blank=True, help_text="How many tasks each category has."
    )
    category_means_blob = models.BinaryField(null=True, blank=True)
    value_statistics = models.JSONField(
        default=dict, blank=True, help_text="mean, std, min and max of the values."
    )
    confusion_blob = models.BinaryField(
        null=True,
        blank=True,
        help_text="Estimated by Dawid-Skene EM: each worker's confusion matrix, "
        "P(answer | true label), shape (n_workers, K, K), labels in the project's order.",
    )
    details = models.JSONField(default=dict, blank=True)

    objects = QualityMatrixQuerySet.as_manager()

    class Meta:
        ordering = ["project_id", "-created_at", "-id"]
        verbose_name_plural = "quality matrices"
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    by_category=True,
                    category_table_blob__isnull=False,
                    task_category_blob__isnull=False,
                )
                | Q(
                    by_category=False,
                    category_table_blob__isnull=True,
                    task_category_blob__isnull=True,
                ),
                name="quality_by_category_has_its_table",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.project} quality #{self.pk} ({self.source}, {self.n_workers}x{self.n_tasks})"

    def _set_keys(self, *, worker_ids, task_ids, gold_counts) -> None:
        self.worker_ids_blob = _array_bytes(np.asarray(worker_ids, dtype=np.int64))
        self.task_ids_blob = _array_bytes(np.asarray(task_ids, dtype=np.int64))
        self.gold_counts_blob = (
            None if gold_counts is None else _array_bytes(np.asarray(gold_counts, np.int64))
        )

    def set_arrays(
        self, *, values, worker_ids, task_ids, task_categories, gold_counts=None
    ) -> None:
        """Store the matrix dense, its row and column keys, and its per-category summary.

        ``task_categories`` is the category of each column, in order.
        """
        values = np.asarray(values, dtype=np.float64)
        self.n_workers, self.n_tasks = values.shape
        self.by_category = False
        self.category_table_blob = self.task_category_blob = None
        self._unsaved_values = values  # written in chunks by save()
        self._set_keys(worker_ids=worker_ids, task_ids=task_ids, gold_counts=gold_counts)
        self.categories, self.category_task_counts, means = category_means(values, task_categories)
        self.category_means_blob = _array_bytes(means)
        self.value_statistics = value_statistics(values)

    def set_by_category(
        self,
        *,
        table,
        table_categories: Sequence[str],
        worker_ids,
        task_ids,
        task_categories: Sequence[str],
        gold_counts=None,
    ) -> None:
        """Store the matrix by category: ``Q[i, j]`` is ``table[i, c]`` for task ``j``'s
        category ``c``; no dense matrix is built.

        Parameters
        ----------
        table : array-like of float, shape (n_workers, len(table_categories))
            Quality by worker and category.
        table_categories : sequence of str
            The category of each column of ``table``. Columns of categories that no task has
            are left out.
        worker_ids, task_ids : array-like of int
            Primary keys of the rows (workers) and columns (tasks), in order.
        task_categories : sequence of str
            The category of each task, in order.
        gold_counts : array-like of int, shape (n_workers,), optional
            How many gold answers each worker had.

        Raises
        ------
        ValueError
            If ``table`` has not one column per category, or a task's category has no column.
        """
        table = np.asarray(table, dtype=np.float64)
        if table.ndim != 2 or table.shape[1] != len(table_categories):
            raise ValueError(
                f"table must have one column per category ({len(table_categories)}), "
                f"got shape {table.shape}"
            )
        names, task_category, counts = _categories_of(task_categories)
        column_of = {name: c for c, name in enumerate(table_categories)}
        missing = next((name for name in names if name not in column_of), None)
        if missing is not None:
            raise ValueError(f"table has no column for the tasks' category {missing!r}")
        table = np.ascontiguousarray(table[:, [column_of[name] for name in names]])
        self.n_workers, self.n_tasks = table.shape[0], task_category.shape[0]
        self.by_category = True
        self._unsaved_values = None
        self.category_table_blob = _array_bytes(table)
        self.task_category_blob = _array_bytes(_compact_indices(task_category, upper=len(names)))
        self._set_keys(worker_ids=worker_ids, task_ids=task_ids, gold_counts=gold_counts)
        self.categories, self.category_task_counts = names, [int(c) for c in counts]
        # The mean over a category's tasks is the table's column: kept as the summary too
        # (n_workers x n_categories), so that pages read it with the row, not the values.
        self.category_means_blob = self.category_table_blob
        self.value_statistics = table_statistics(table=table, task_counts=counts)

    def save(self, *args, **kwargs) -> None:
        """Save the row and, after :meth:`set_arrays`, its values' chunks, in one transaction."""
        values = getattr(self, "_unsaved_values", None)
        with transaction.atomic():
            super().save(*args, **kwargs)
            if values is not None:
                self.chunks.all().delete()
                for index, (start, stop) in enumerate(quality_row_chunks(*values.shape)):
                    QualityChunk.objects.create(
                        matrix=self,
                        index=index,
                        row_start=start,
                        row_stop=stop,
                        values_blob=_array_bytes(values[start:stop]),
                    )
                self._unsaved_values = None

    def row_blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """The matrix top to bottom in blocks of whole worker rows: ``(first row, block)``.

        A dense matrix is read one chunk at a time; one stored by category has each block
        built from its table, at most :data:`QUALITY_CHUNK_BYTES` (or one row) at a time. So
        the whole matrix is never in memory at once.

        Raises
        ------
        RuntimeError
            Before the first block, if a dense matrix's chunks do not cover its rows.
        """
        if self.by_category:
            table, column = self.category_table, self.task_category
            for start, stop in quality_row_chunks(self.n_workers, self.n_tasks):
                yield start, table[start:stop, column]
            return
        covered = self.chunks.aggregate(rows=Sum(F("row_stop") - F("row_start")))["rows"] or 0
        if covered != self.n_workers:
            raise RuntimeError(
                f"quality matrix {self.pk}: its chunks hold {covered} of {self.n_workers} rows"
            )
        chunks = self.chunks.order_by("index").values_list("row_start", "values_blob")
        for start, blob in chunks.iterator(chunk_size=1):
            yield start, _array_from(blob)

    @property
    def values(self) -> np.ndarray:
        """The dense matrix, shape (n_workers, n_tasks): ``8 n m`` bytes, built from the table
        for a matrix stored by category. Readers that can do without it use
        :meth:`quality_form`, :meth:`quality_at` or :meth:`row_blocks`."""
        unsaved = getattr(self, "_unsaved_values", None)
        if unsaved is not None:
            return unsaved.copy()
        values = np.empty((self.n_workers, self.n_tasks), dtype=np.float64)
        for start, block in self.row_blocks():
            values[start : start + block.shape[0]] = block
        return values

    def quality_form(self) -> np.ndarray | QualityByCategory:
        """The quality as the engine's :class:`~assignment.engine.AssignmentProblem` takes it:
        a :class:`~assignment.engine.problem.QualityByCategory` of the table for a matrix
        stored by category (never the dense matrix), the dense values otherwise."""
        if self.by_category:
            return QualityByCategory(self.category_table, self.task_category)
        return self.values

    def quality_at(self, *, rows, columns) -> np.ndarray:
        """``Q[rows, columns]`` for index arrays of one shape, from this process's shared copy
        of :meth:`quality_form` (decoded once; the table for a matrix stored by category)."""
        form = _QUALITY_CACHE.get(self)
        if isinstance(form, QualityByCategory):
            return form.table[rows, form.task_category[columns]]
        return form[rows, columns]

    @property
    def worker_ids(self) -> np.ndarray:
        return _array_from(self.worker_ids_blob)

    @property
    def task_ids(self) -> np.ndarray:
        return _array_from(self.task_ids_blob)

    @property
    def gold_counts(self) -> np.ndarray | None:
        return None if self.gold_counts_blob is None else _array_from(self.gold_counts_blob)

    @property
    def category_table(self) -> np.ndarray | None:
        """Shape (n_workers, len(categories)) for a matrix stored by category, else None."""
        return None if self.category_table_blob is None else _array_from(self.category_table_blob)

    @property
    def task_category(self) -> np.ndarray | None:
        """Each task's index into ``categories``, shape (n_tasks,), for a matrix stored by
        category, else None."""
        return None if self.task_category_blob is None else _array_from(self.task_category_blob)

    @property
    def category_means(self) -> np.ndarray | None:
        """Shape (n_workers, len(categories)); None for a matrix stored before summaries."""
        if self.category_means_blob is None:
            return None
        return _array_from(self.category_means_blob)

    @property
    def confusion(self) -> np.ndarray | None:
        """Each worker's confusion matrix ``C[i, c, a] = P(answer a | true label c)``, shape
        (n_workers, K, K), for a matrix estimated by Dawid-Skene EM; None otherwise."""
        return None if self.confusion_blob is None else _array_from(self.confusion_blob)

    def set_confusion(self, confusion: np.ndarray) -> None:
        """Store Dawid-Skene's confusion matrices, shape (n_workers, K, K)."""
        c = np.asarray(confusion, dtype=np.float64)
        if c.ndim != 3 or c.shape[0] != self.n_workers or c.shape[1] != c.shape[2]:
            raise ValueError(f"confusion must have shape ({self.n_workers}, K, K), got {c.shape}")
        self.confusion_blob = _array_bytes(c)


class QualityChunk(models.Model):
    """Rows ``row_start:row_stop`` of a quality matrix's values, as one ``.npy`` blob."""

    matrix = models.ForeignKey(QualityMatrix, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    row_start = models.PositiveIntegerField()
    row_stop = models.PositiveIntegerField()
    values_blob = models.BinaryField()

    class Meta:
        ordering = ["matrix_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["matrix", "index"], name="quality_chunk_unique"),
            models.CheckConstraint(
                condition=Q(row_stop__gt=models.F("row_start")), name="quality_chunk_rows"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.matrix} rows {self.row_start}:{self.row_stop}"


class Answer(models.Model):
    """A label collected after an assignment."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="answers")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="answers")
    label = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["worker", "task"], name="one_answer_per_worker_task")
        ]


#: The assignment methods, as the engine's registry names and titles them
#: (``assignment.engine.solve``): a method added there is a choice here, in the API and in the
#: forms, with no migration (see :func:`method_choices`).
Method = models.TextChoices(
    "Method",
    [(name.upper().replace("-", "_"), (name, method_spec(name).title)) for name in METHODS],
)


def method_choices() -> list[tuple[str, str]]:
    """The run's method choices, ``(name, title)`` per registered method.

    A callable, so a migration records a reference to this function rather than the list of
    names: a method added to the engine's registry needs no migration. The names are checked
    where runs are written (``services.run_create``, ``comparison_create``) and by the field's
    choices in ``full_clean``; the database keeps no list of names (it would need a migration
    per method).
    """
    return list(Method.choices)


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class WorkerModel(models.TextChoices):
    """The worker model an assignment was chosen under (:attr:`AssignmentRun.chosen_under`):
    the symmetric model of the quality, or the quality's Dawid–Skene confusion matrices."""

    SYMMETRIC = "symmetric"
    DAWID_SKENE = "dawid_skene"


class Comparison(models.Model):
    """Several runs requested together: methods (and optionally budgets) side by side."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="comparisons")
    methods = models.JSONField()
    budgets = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    upper_bound = models.JSONField(
        default=dict,
        blank=True,
        help_text="The accuracy upper bound at each budget, computed by a worker: "
        "status, points [[budget, value], ...] and a message.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.project} comparison {self.pk}"


#: At most this many shards per run (:attr:`AssignmentRun.shards`): each shard is one task
#: message per round and one row; more would not make a run on one database faster.
MAX_SHARDS = 64


class AssignmentRun(models.Model):
    """One computation of an assignment, with its lifecycle (see ``services.run_*``).

    queued -> running -> succeeded | failed | cancelled; queued -> cancelled. The assignment is
    stored as an ``.npy`` blob of (row, column) index pairs into the quality matrix used.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    comparison = models.ForeignKey(
        Comparison, on_delete=models.CASCADE, related_name="runs", null=True, blank=True
    )
    # A matrix is deleted only with the runs computed from it (a project's deletion).
    quality_matrix = models.ForeignKey(
        QualityMatrix, on_delete=models.RESTRICT, related_name="runs"
    )
    method = models.CharField(max_length=20, choices=method_choices)
    budget = models.PositiveIntegerField(validators=COUNT_VALIDATORS)
    max_workers_per_task = models.PositiveIntegerField(validators=COUNT_VALIDATORS)
    max_tasks_per_worker = models.PositiveIntegerField(validators=COUNT_VALIDATORS)
    seed = models.BigIntegerField(
        null=True, blank=True, validators=[MinValueValidator(0), MaxValueValidator(MAX_SEED)]
    )
    options = models.JSONField(default=dict, blank=True)
    next_round = models.BooleanField(
        default=False,
        help_text="A next round: it conditions on the answers up to answers_through (posteriors "
        "as priors, answered pairs out, the caps counting them); budget is this round's.",
    )
    answers_through = models.BigIntegerField(
        null=True, blank=True, help_text="The last answer id a round counts (None: no answers)."
    )
    target_posterior = models.FloatField(
        null=True,
        blank=True,
        help_text="A round leaves out tasks whose likelier label has at least this posterior.",
    )
    target_accuracy = models.FloatField(
        null=True,
        blank=True,
        help_text="A round is refused once the answers' expected accuracy reaches this.",
    )
    rounds_left = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="A round with rounds to go after it (this one included, > 1) plans all of "
        "them with budget and takes its share in layers; None or 1: the last round.",
    )
    round_start = models.JSONField(
        default=dict,
        blank=True,
        help_text="What a round started from: answers, accuracy_now, open_tasks, tasks.",
    )
    withdrawn_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A succeeded round withdrawn by its owner: its pairs were not handed out, so "
        "later rounds do not count them as pending.",
    )
    handed_out_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A comparison's succeeded run its owner handed out to the workers: from then "
        "on it counts as a round (its unanswered pairs pending) unless withdrawn.",
    )

    shards = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SHARDS)],
        help_text=f"Shards of tasks solved by separate workers and coordinated by prices "
        f"(1: one worker solves the whole run; at most {MAX_SHARDS}).",
    )
    shard_round = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="A sharded run's current coordination round."
    )
    shard_state = models.JSONField(
        default=dict,
        blank=True,
        help_text="A sharded run's coordination: step, best_accuracy, best_rows (the shard "
        "rows of the best answer, in shard order) and history (one entry per round).",
    )

    status = models.CharField(
        max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    progress = models.PositiveSmallIntegerField(default=0)
    progress_message = models.TextField(blank=True)  # a finished run keeps its whole message
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    enqueued_at = models.DateTimeField(
        null=True, blank=True, help_text="When it was last handed to the broker (queued runs)."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(
        max_length=200, blank=True, help_text="The Celery worker computing it (its hostname)."
    )
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)

    expected_accuracy = models.FloatField(null=True, blank=True)
    accuracy_standard_error = models.FloatField(null=True, blank=True)
    dawid_skene_accuracy = models.JSONField(
        null=True,
        blank=True,
        help_text="With quality estimated by Dawid-Skene EM: the expected accuracy under its "
        "confusion matrices of the Dawid-Skene vote and of the Bayes vote, each with its "
        "standard error.",
    )
    n_assigned = models.PositiveIntegerField(null=True, blank=True)
    assignment_blob = models.BinaryField(null=True, blank=True)
    error = models.TextField(blank=True)
    summary = models.JSONField(
        default=dict,
        blank=True,
        help_text="Distributions of a succeeded run for its page: workers per task, tasks per "
        "worker, expected accuracy per task.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__lte=100), name="run_progress_at_most_100"),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in RunStatus]), name="run_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(target_posterior__isnull=True)
                | (Q(target_posterior__gt=0) & Q(target_posterior__lte=1)),
                name="run_target_posterior_in_range",
            ),
            models.CheckConstraint(
                condition=Q(rounds_left__isnull=True) | Q(rounds_left__gte=1),
                name="run_rounds_left_positive",
            ),
            models.CheckConstraint(
                condition=Q(target_accuracy__isnull=True)
                | (Q(target_accuracy__gt=0) & Q(target_accuracy__lte=1)),
                name="run_target_accuracy_in_range",
            ),
            models.CheckConstraint(
                condition=Q(withdrawn_at__isnull=True)
                | (
                    Q(status=RunStatus.SUCCEEDED)
                    & (
                        (Q(next_round=True) & Q(comparison__isnull=True))
                        | Q(handed_out_at__isnull=False)
                    )
                ),
                name="run_withdrawn_only_a_succeeded_round",
            ),
            models.CheckConstraint(
                condition=Q(handed_out_at__isnull=True)
                | (Q(status=RunStatus.SUCCEEDED) & Q(comparison__isnull=False)),
                name="run_handed_out_only_a_succeeded_comparison_run",
            ),
            # One alternative of a comparison is out at a time (another after it is withdrawn).
            models.UniqueConstraint(
                fields=["comparison"],
                condition=Q(handed_out_at__isnull=False) & Q(withdrawn_at__isnull=True),
                name="run_one_handed_out_per_comparison",
            ),
        ]

    #: The columns :attr:`chosen_under` reads (a read that defers columns keeps these).
    CHOSEN_UNDER_FIELDS = (
        "status",
        "method",
        "dawid_skene_accuracy",
        "shards",
        "shard_state",
        "next_round",
        "round_start",
    )

    def __str__(self) -> str:
        return f"{self.project} {self.method} run {self.pk} ({self.status})"

    @property
    def chosen_under(self) -> str | None:
        """The worker model the assignment was chosen under, a :class:`WorkerModel`; None
        until the run has succeeded. The one rule the run's page and the API both read.

        A run without :attr:`dawid_skene_accuracy` (quality without confusion matrices, or
        matrices that do not fit the labels) was chosen under the symmetric model, and so was a
        run of a method that only scores its choice under the matrices (not in
        :data:`~assignment.engine.under_confusion.CHOSEN_UNDER_MATRICES`: q-lp, random). On
        Dawid–Skene quality: a sharded run under the matrices if it was planned under them
        (``shard_state["dawid_skene"]``, absent for runs planned before shards were), a next
        round if its posteriors were theirs (``round_start["dawid_skene"]``, absent for rounds
        from before rounds were), any other run under them.
        """
        if self.status != RunStatus.SUCCEEDED:
            return None
        if not self.dawid_skene_accuracy or self.method not in CHOSEN_UNDER_MATRICES:
            return WorkerModel.SYMMETRIC
        if self.shards > 1:
            matrices = self.shard_state.get("dawid_skene")
        elif self.next_round:
            matrices = self.round_start.get("dawid_skene")
        else:
            matrices = True
        return WorkerModel.DAWID_SKENE if matrices else WorkerModel.SYMMETRIC

    def set_pairs(self, rows, cols) -> None:
        pairs = np.stack([np.asarray(rows, np.int32), np.asarray(cols, np.int32)], axis=1)
        self.assignment_blob = _array_bytes(pairs)
        self.n_assigned = int(pairs.shape[0])

    @property
    def pairs(self) -> np.ndarray | None:
        """(k, 2) int32 array of (row, column) indices into the quality matrix, or None."""
        return None if self.assignment_blob is None else _array_from(self.assignment_blob)


class RunShard(models.Model):
    """One shard of a sharded run in one coordination round (:mod:`assignment.services.shards`).

    Written twice: its input when the round is planned (the shard's tasks, its shares of the
    worker caps and of the budget), its output once a worker has solved it (the pairs, the
    shard's accuracy and prices). queued -> running -> succeeded; recovery re-queues a running
    shard whose heartbeat went stale.
    """

    run = models.ForeignKey(AssignmentRun, on_delete=models.CASCADE, related_name="shard_rows")
    round = models.PositiveSmallIntegerField()
    index = models.PositiveSmallIntegerField()
    status = models.CharField(
        max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    tasks_blob = models.BinaryField()
    worker_caps_blob = models.BinaryField()
    budget = models.PositiveIntegerField()
    pairs_blob = models.BinaryField(null=True, blank=True)
    worker_price_blob = models.BinaryField(null=True, blank=True)
    budget_price = models.FloatField(null=True, blank=True)
    accuracy = models.FloatField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["run", "round", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "round", "index"], name="run_shard_unique"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} shard {self.index} round {self.round} ({self.status})"

    @staticmethod
    def arrays(*, tasks, worker_caps) -> dict:
        """The input blobs of a shard, as keyword arguments of the model."""
        return {
            "tasks_blob": _array_bytes(np.asarray(tasks, dtype=np.int64)),
            "worker_caps_blob": _array_bytes(np.asarray(worker_caps, dtype=np.int64)),
        }

    @staticmethod
    def outputs(*, workers, tasks, worker_price) -> dict:
        """The output blobs of a shard, as keyword arguments of an update."""
        pairs = np.stack([np.asarray(workers, np.int32), np.asarray(tasks, np.int32)], axis=1)
        return {
            "pairs_blob": _array_bytes(pairs),
            "worker_price_blob": _array_bytes(np.asarray(worker_price, dtype=np.float64)),
        }

    @property
    def tasks(self) -> np.ndarray:
        return _array_from(self.tasks_blob)

    @property
    def worker_caps(self) -> np.ndarray:
        return _array_from(self.worker_caps_blob)

    @property
    def pairs(self) -> np.ndarray:
        """(k, 2) int32 (worker, task) pairs in the whole problem's numbering."""
        return _array_from(self.pairs_blob)

    @property
    def worker_price(self) -> np.ndarray:
        return _array_from(self.worker_price_blob)
