"""A quality matrix's values are stored in chunks of whole rows: no size ceiling per value."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from assignment import models
from assignment.models import Project, QualityChunk, QualityMatrix, QualitySource


@pytest.fixture
def project(db):
    owner = get_user_model().objects.create_user("owner", password="x")
    return Project.objects.create(owner=owner, name="demo")


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


@pytest.mark.parametrize(("chunk_bytes", "expected_chunks"), [(3 * 8 * 7, 4), (8 * 7, 10), (1, 10)])
def test_a_matrix_larger_than_a_chunk_is_split_into_whole_rows_and_round_trips(
    project, monkeypatch, chunk_bytes, expected_chunks
):
    # The test-sized version of a matrix beyond 1 GB: chunks of 3 rows, of 1 row, and a chunk
    # size below one row (a chunk still holds a whole row).
    monkeypatch.setattr(models, "QUALITY_CHUNK_BYTES", chunk_bytes)
    values = np.random.default_rng(0).random((10, 7))
    matrix = stored(project, values)
    chunks = list(QualityChunk.objects.filter(matrix=matrix).order_by("index"))
    assert len(chunks) == expected_chunks
    assert chunks[0].row_start == 0
    assert chunks[-1].row_stop == 10
    assert all(a.row_stop == b.row_start for a, b in itertools.pairwise(chunks))
    np.testing.assert_array_equal(QualityMatrix.objects.get(pk=matrix.pk).values, values)


def test_sizes_and_summaries_are_read_without_touching_the_chunks(
    project, django_assert_num_queries
):
    matrix = stored(project, np.full((4, 5), 0.7))
    with django_assert_num_queries(1):
        found = QualityMatrix.objects.latest_of(project)
        assert (found.n_workers, found.n_tasks) == (4, 5)
        assert found.value_statistics["mean"] == pytest.approx(0.7)
    assert found.pk == matrix.pk


def test_a_matrix_with_a_missing_chunk_refuses_to_give_values(project, monkeypatch):
    monkeypatch.setattr(models, "QUALITY_CHUNK_BYTES", 8 * 5)
    matrix = stored(project, np.full((4, 5), 0.7))
    QualityChunk.objects.filter(matrix=matrix, index=2).delete()
    with pytest.raises(RuntimeError, match="3 of 4 rows"):
        QualityMatrix.objects.get(pk=matrix.pk).values  # noqa: B018


def test_deleting_a_matrix_deletes_its_chunks(project):
    matrix = stored(project, np.full((3, 3), 0.6))
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
