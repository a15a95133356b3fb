"""The data model: compact quality matrices, and constraints enforced by the database itself."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import IntegrityError, transaction

from assignment import models
from assignment.models import Project, QualityMatrix, QualitySource, Task, Worker

pytestmark = pytest.mark.django_db


def test_a_large_quality_matrix_round_trips(empty_project):
    rng = np.random.default_rng(0)
    values = rng.random((200, 10_000))
    matrix = QualityMatrix(project=empty_project, source=QualitySource.UPLOADED)
    matrix.set_arrays(
        values=values,
        worker_ids=np.arange(200),
        task_ids=np.arange(10_000) + 5,
        task_categories=[f"c{j % 7}" for j in range(10_000)],
        gold_counts=np.arange(200),
    )
    matrix.save()
    loaded = QualityMatrix.objects.get(pk=matrix.pk)
    np.testing.assert_array_equal(loaded.values, values)
    np.testing.assert_array_equal(loaded.task_ids, np.arange(10_000) + 5)
    np.testing.assert_array_equal(loaded.gold_counts, np.arange(200))
    assert (loaded.n_workers, loaded.n_tasks) == (200, 10_000)
    assert QualityMatrix.objects.count() == 1


def stored(project, values, categories) -> QualityMatrix:
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
    matrix.set_arrays(
        values=values,
        worker_ids=np.arange(values.shape[0]),
        task_ids=np.arange(values.shape[1]),
        task_categories=categories,
    )
    matrix.save()
    return matrix


def test_a_matrix_keeps_its_statistics_and_per_category_means(empty_project):
    values = np.array([[0.9, 0.5, 0.7, 0.6], [0.2, 0.4, 0.8, 1.0]])
    matrix = QualityMatrix.objects.get(pk=stored(empty_project, values, ["b", "a", "b", "a"]).pk)
    assert matrix.categories == ["a", "b"]
    assert matrix.category_task_counts == [2, 2]
    np.testing.assert_allclose(matrix.category_means, [[0.55, 0.8], [0.7, 0.5]])
    assert matrix.value_statistics == pytest.approx(
        {"mean": values.mean(), "std": values.std(), "min": 0.2, "max": 1.0}
    )


def test_the_latest_matrix_comes_without_its_values_until_they_are_read(empty_project):
    first = stored(empty_project, np.full((2, 3), 0.6), ["c"] * 3)
    latest = stored(empty_project, np.full((2, 3), 0.7), ["c"] * 3)
    found = QualityMatrix.objects.latest_of(empty_project)
    assert found.pk == latest.pk != first.pk
    assert "task_ids_blob" in found.get_deferred_fields()  # the values live in chunks
    np.testing.assert_array_equal(found.values, np.full((2, 3), 0.7))


def stored_by_category(project, table, categories) -> QualityMatrix:
    matrix = QualityMatrix(project=project, source=QualitySource.ESTIMATED)
    matrix.set_by_category(
        table=table,
        table_categories=sorted(set(categories)),
        worker_ids=np.arange(table.shape[0]),
        task_ids=np.arange(len(categories)),
        task_categories=categories,
    )
    matrix.save()
    return matrix


def test_pair_qualities_are_read_from_one_copy_per_matrix_the_oldest_copies_going_first(
    empty_project, monkeypatch, django_assert_num_queries
):
    cache = models._QualityCache(max_bytes=2 * 6 * 8)  # two 2 x 3 float64 matrices
    monkeypatch.setattr(models, "_QUALITY_CACHE", cache)
    matrices = [stored(empty_project, np.full((2, 3), 0.5 + k / 10), ["c"] * 3) for k in range(3)]
    first = QualityMatrix.objects.get(pk=matrices[0].pk)
    assert first.quality_at(rows=[0, 1], columns=[2, 0]).tolist() == [0.5, 0.5]
    again = QualityMatrix.objects.get(pk=matrices[0].pk)
    with django_assert_num_queries(0):
        assert again.quality_at(rows=[1], columns=[1]).tolist() == [0.5]
    [copy] = cache.forms.values()
    with pytest.raises(ValueError, match="read-only"):
        copy[0, 0] = 1.0
    for matrix in matrices[1:]:
        matrix.quality_at(rows=[0], columns=[0])
    assert [key[0] for key in cache.forms] == [m.pk for m in matrices[1:]]


def test_pair_qualities_of_a_matrix_by_category_come_from_its_table(empty_project, monkeypatch):
    monkeypatch.setattr(models, "_QUALITY_CACHE", models._QualityCache(max_bytes=1024))
    table = np.array([[0.9, 0.6], [0.7, 0.8]])  # columns: categories a, b
    matrix = stored_by_category(empty_project, table, ["b", "a", "b", "a"])
    found = QualityMatrix.objects.get(pk=matrix.pk)
    rows, columns = np.array([0, 1, 1, 0]), np.array([0, 1, 2, 3])
    assert found.quality_at(rows=rows, columns=columns).tolist() == [0.6, 0.7, 0.8, 0.9]
    np.testing.assert_array_equal(
        found.quality_at(rows=rows, columns=columns), found.values[rows, columns]
    )


def test_external_ids_are_unique_within_a_project_at_the_database_level(empty_project):
    Worker.objects.create(project=empty_project, external_id="w1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Worker.objects.create(project=empty_project, external_id="w1")
    other = Project.objects.create(owner=empty_project.owner, name="other")
    Worker.objects.create(project=other, external_id="w1")  # another project: fine


@pytest.mark.parametrize("prior", [0.0, 1.0, 1.5])
def test_the_database_rejects_a_task_prior_outside_the_open_unit_interval(empty_project, prior):
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.create(project=empty_project, external_id="t", category="c", prior=prior)


def test_project_names_are_unique_per_owner(empty_project):
    with pytest.raises(IntegrityError), transaction.atomic():
        Project.objects.create(owner=empty_project.owner, name="demo")
