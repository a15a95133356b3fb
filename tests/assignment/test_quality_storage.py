"""A quality matrix's values are stored in chunks of whole rows (no size ceiling per value), or
by category as a worker x category table and each task's category (no chunks at all)."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from assignment import models
from assignment.engine.problem import QualityByCategory
from assignment.models import QualityChunk, QualityMatrix, QualitySource


def stored(project, values) -> QualityMatrix:
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
    matrix.set_arrays(
        values=values,
        worker_ids=np.arange(values.shape[0]),
        task_ids=np.arange(values.shape[1]),
        task_categories=["c"] * values.shape[1],
    )
    matrix.save()
    return matrix


def stored_by_category(project, table, task_categories, *, table_categories=None):
    matrix = QualityMatrix(project=project, source=QualitySource.ESTIMATED)
    matrix.set_by_category(
        table=table,
        table_categories=table_categories or sorted(set(task_categories)),
        worker_ids=np.arange(table.shape[0]),
        task_ids=np.arange(len(task_categories)) + 100,
        task_categories=task_categories,
    )
    matrix.save()
    return matrix


def expanded(table, task_categories) -> np.ndarray:
    """The dense matrix a table by sorted category stands for."""
    names = sorted(set(task_categories))
    return table[:, [names.index(c) for c in task_categories]]


@pytest.mark.parametrize(("chunk_bytes", "expected_chunks"), [(3 * 8 * 7, 4), (8 * 7, 10), (1, 10)])
def test_a_matrix_larger_than_a_chunk_is_split_into_whole_rows_and_round_trips(
    empty_project, monkeypatch, chunk_bytes, expected_chunks
):
    # The test-sized version of a matrix beyond 1 GB: chunks of 3 rows, of 1 row, and a chunk
    # size below one row (a chunk still holds a whole row).
    monkeypatch.setattr(models, "QUALITY_CHUNK_BYTES", chunk_bytes)
    values = np.random.default_rng(0).random((10, 7))
    matrix = stored(empty_project, values)
    chunks = list(QualityChunk.objects.filter(matrix=matrix).order_by("index"))
    assert len(chunks) == expected_chunks
    assert chunks[0].row_start == 0
    assert chunks[-1].row_stop == 10
    assert all(a.row_stop == b.row_start for a, b in itertools.pairwise(chunks))
    np.testing.assert_array_equal(QualityMatrix.objects.get(pk=matrix.pk).values, values)


def test_sizes_and_summaries_are_read_without_touching_the_chunks(
    empty_project, django_assert_num_queries
):
    matrix = stored(empty_project, np.full((4, 5), 0.7))
    with django_assert_num_queries(1):
        found = QualityMatrix.objects.latest_of(empty_project)
        assert (found.n_workers, found.n_tasks) == (4, 5)
        assert found.value_statistics["mean"] == pytest.approx(0.7)
    assert found.pk == matrix.pk


def test_a_matrix_with_a_missing_chunk_refuses_to_give_values(empty_project, monkeypatch):
    monkeypatch.setattr(models, "QUALITY_CHUNK_BYTES", 8 * 5)
    matrix = stored(empty_project, np.full((4, 5), 0.7))
    QualityChunk.objects.filter(matrix=matrix, index=2).delete()
    with pytest.raises(RuntimeError, match="3 of 4 rows"):
        QualityMatrix.objects.get(pk=matrix.pk).values  # noqa: B018


def test_deleting_a_matrix_deletes_its_chunks(empty_project):
    matrix = stored(empty_project, np.full((3, 3), 0.6))
    assert QualityChunk.objects.filter(matrix=matrix).exists()
    matrix.delete()
    assert not QualityChunk.objects.exists()


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_each_stored_blob_into_chunks_and_back():
    before, after = (
        [("assignment", "0004_run_enqueued_at_and_worker")],
        [("assignment", "0005_quality_chunks")],
    )
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    owner = old.get_model("auth", "User").objects.create(username="m", password="x")
    project = old.get_model("assignment", "Project").objects.create(owner=owner, name="p")
    values = np.random.default_rng(1).random((6, 4))
    old.get_model("assignment", "QualityMatrix").objects.create(
        project=project,
        source="uploaded",
        n_workers=6,
        n_tasks=4,
        values_blob=_npy(values),
        worker_ids_blob=_npy(np.arange(6)),
        task_ids_blob=_npy(np.arange(4)),
    )
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    new = executor.loader.project_state(after).apps
    chunks = new.get_model("assignment", "QualityChunk").objects.all()
    assert [(c.row_start, c.row_stop) for c in chunks] == [(0, 6)]
    np.testing.assert_array_equal(np.load(io.BytesIO(bytes(chunks[0].values_blob))), values)

    executor = MigrationExecutor(connection)
    executor.migrate(before)
    back = executor.loader.project_state(before).apps.get_model("assignment", "QualityMatrix")
    blob = back.objects.values_list("values_blob", flat=True).get()
    np.testing.assert_array_equal(np.load(io.BytesIO(bytes(blob))), values)
    MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())


TASK_CATEGORIES = ["b", "a", "c", "b", "b", "a", "c", "b"]


def test_a_matrix_stored_by_category_has_no_chunks_and_stands_for_the_dense_matrix(empty_project):
    table = np.random.default_rng(2).random((5, 3))
    matrix = QualityMatrix.objects.get(
        pk=stored_by_category(empty_project, table, TASK_CATEGORIES).pk
    )
    assert not QualityChunk.objects.filter(matrix=matrix).exists()
    assert matrix.by_category
    assert (matrix.n_workers, matrix.n_tasks) == (5, 8)
    assert matrix.categories == ["a", "b", "c"]
    assert matrix.category_task_counts == [2, 4, 2]
    np.testing.assert_array_equal(matrix.category_table, table)
    assert matrix.task_category.tolist() == [1, 0, 2, 1, 1, 0, 2, 1]
    np.testing.assert_array_equal(matrix.values, expanded(table, TASK_CATEGORIES))


def test_the_table_keeps_only_the_tasks_categories_in_sorted_order(empty_project):
    # An estimate has a column for every category of the gold items, some without tasks.
    table = np.array([[0.9, 0.6, 0.7], [0.5, 0.8, 0.55]])
    matrix = stored_by_category(
        empty_project, table, ["x", "z", "x"], table_categories=["z", "gold only", "x"]
    )
    assert matrix.categories == ["x", "z"]
    np.testing.assert_array_equal(matrix.category_table, [[0.7, 0.9], [0.55, 0.5]])
    np.testing.assert_array_equal(matrix.values, [[0.7, 0.9, 0.7], [0.55, 0.5, 0.55]])


def test_a_table_without_a_column_for_a_tasks_category_is_refused(empty_project):
    matrix = QualityMatrix(project=empty_project, source=QualitySource.UPLOADED)
    with pytest.raises(ValueError, match="no column for the tasks' category 'b'"):
        matrix.set_by_category(
            table=np.full((2, 1), 0.7),
            table_categories=["a"],
            worker_ids=[1, 2],
            task_ids=[1, 2],
            task_categories=["a", "b"],
        )


@pytest.mark.parametrize(
    ("n_categories", "dtype"), [(3, np.uint8), (256, np.uint8), (300, np.uint16)]
)
def test_each_tasks_category_is_stored_in_the_smallest_unsigned_type(
    empty_project, n_categories, dtype
):
    task_categories = [f"c{c:04d}" for c in range(n_categories)]
    matrix = stored_by_category(empty_project, np.full((2, n_categories), 0.6), task_categories)
    found = QualityMatrix.objects.get(pk=matrix.pk).task_category
    assert found.dtype == dtype
    assert found.tolist() == list(range(n_categories))


def test_statistics_and_category_means_by_category_equal_those_of_the_same_matrix_dense(
    empty_project,
):
    rng = np.random.default_rng(3)
    task_categories = [f"c{c}" for c in rng.integers(0, 6, 500)]
    table = rng.uniform(0.3, 0.95, (40, 6))
    by_category = stored_by_category(empty_project, table, task_categories)
    dense = QualityMatrix(project=empty_project, source=QualitySource.UPLOADED)
    dense.set_arrays(
        values=expanded(table, task_categories),
        worker_ids=np.arange(40),
        task_ids=np.arange(500),
        task_categories=task_categories,
    )
    dense.save()
    by_category, dense = (QualityMatrix.objects.get(pk=m.pk) for m in (by_category, dense))
    assert by_category.value_statistics == pytest.approx(dense.value_statistics, rel=1e-12)
    assert (by_category.categories, by_category.category_task_counts) == (
        dense.categories,
        dense.category_task_counts,
    )
    np.testing.assert_allclose(by_category.category_means, dense.category_means, rtol=1e-12)


def test_sizes_and_summaries_by_category_are_read_without_the_table_or_the_task_categories(
    empty_project,
):
    stored_by_category(empty_project, np.full((3, 2), 0.8), ["a", "b", "a", "a"])
    with CaptureQueriesContext(connection) as queries:
        found = QualityMatrix.objects.latest_of(empty_project)
        assert (found.n_workers, found.n_tasks) == (3, 4)
        assert found.value_statistics["mean"] == pytest.approx(0.8)
        np.testing.assert_array_equal(found.category_means, np.full((3, 2), 0.8))
    [query] = queries.captured_queries
    for blob in ("category_table_blob", "task_category_blob", "task_ids_blob"):
        assert blob not in query["sql"]
    assert "qualitychunk" not in query["sql"]


def test_the_engine_gets_the_table_of_a_matrix_by_category_and_the_values_of_a_dense_one(
    empty_project,
):
    table = np.array([[0.9, 0.6], [0.7, 0.8]])
    matrix = QualityMatrix.objects.get(
        pk=stored_by_category(empty_project, table, ["b", "a", "b"]).pk
    )
    form = matrix.quality_form()
    assert isinstance(form, QualityByCategory)
    np.testing.assert_array_equal(form.table, table)
    assert form.task_category.tolist() == [1, 0, 1]
    dense = QualityMatrix.objects.get(pk=stored(empty_project, np.full((2, 3), 0.6)).pk)
    np.testing.assert_array_equal(dense.quality_form(), np.full((2, 3), 0.6))


@pytest.mark.parametrize("kind", ["dense", "by category"])
def test_row_blocks_give_the_whole_matrix_in_whole_rows_a_block_at_a_time(
    empty_project, monkeypatch, kind
):
    monkeypatch.setattr(models, "QUALITY_CHUNK_BYTES", 3 * 8 * 8)  # 3 rows of 8 tasks
    table = np.random.default_rng(4).random((7, 3))
    values = expanded(table, TASK_CATEGORIES)
    if kind == "dense":
        matrix = stored(empty_project, values)
    else:
        matrix = stored_by_category(empty_project, table, TASK_CATEGORIES)
    blocks = list(QualityMatrix.objects.get(pk=matrix.pk).row_blocks())
    assert [(start, block.shape) for start, block in blocks] == [
        (0, (3, 8)),
        (3, (3, 8)),
        (6, (1, 8)),
    ]
    np.testing.assert_array_equal(np.vstack([block for _, block in blocks]), values)


def test_the_database_refuses_a_matrix_by_category_without_its_table(empty_project):
    matrix = stored_by_category(empty_project, np.full((2, 1), 0.6), ["a", "a"])
    with pytest.raises(IntegrityError), transaction.atomic():
        QualityMatrix.objects.filter(pk=matrix.pk).update(category_table_blob=None)
    with pytest.raises(IntegrityError), transaction.atomic():
        QualityMatrix.objects.filter(pk=matrix.pk).update(by_category=False)


@pytest.mark.django_db(transaction=True)
def test_a_dense_matrix_stored_before_matrices_by_category_keeps_its_chunks_and_values():
    before, after = (
        [("assignment", "0005_quality_chunks")],
        [("assignment", "0006_quality_by_category")],
    )
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    owner = old.get_model("auth", "User").objects.create(username="m", password="x")
    project = old.get_model("assignment", "Project").objects.create(owner=owner, name="p")
    values = np.random.default_rng(5).random((4, 3))
    matrix = old.get_model("assignment", "QualityMatrix").objects.create(
        project=project,
        source="uploaded",
        n_workers=4,
        n_tasks=3,
        worker_ids_blob=_npy(np.arange(4)),
        task_ids_blob=_npy(np.arange(3)),
    )
    old.get_model("assignment", "QualityChunk").objects.create(
        matrix=matrix, index=0, row_start=0, row_stop=4, values_blob=_npy(values)
    )
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
    found = QualityMatrix.objects.get(pk=matrix.pk)
    assert not found.by_category
    assert found.category_table is None
    np.testing.assert_array_equal(found.values, values)
    np.testing.assert_array_equal(found.quality_form(), values)
    assert QualityChunk.objects.filter(matrix=found).count() == 1
