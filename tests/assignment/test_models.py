"""The data model: compact quality matrices, and constraints enforced by the database itself."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from assignment import models
from assignment.models import Project, QualityMatrix, QualitySource, Task, Worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    owner = get_user_model().objects.create_user("owner", password="x")
    return Project.objects.create(owner=owner, name="demo")


def test_a_large_quality_matrix_round_trips(project):
    rng = np.random.default_rng(0)
    values = rng.random((200, 10_000))
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
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


def test_a_matrix_keeps_its_statistics_and_per_category_means(project):
    values = np.array([[0.9, 0.5, 0.7, 0.6], [0.2, 0.4, 0.8, 1.0]])
    matrix = QualityMatrix.objects.get(pk=stored(project, values, ["b", "a", "b", "a"]).pk)
    assert matrix.categories == ["a", "b"]
    assert matrix.category_task_counts == [2, 2]
    np.testing.assert_allclose(matrix.category_means, [[0.55, 0.8], [0.7, 0.5]])
    assert matrix.value_statistics == pytest.approx(
        {"mean": values.mean(), "std": values.std(), "min": 0.2, "max": 1.0}
    )


def test_the_latest_matrix_comes_without_its_values_until_they_are_read(project):
    first = stored(project, np.full((2, 3), 0.6), ["c"] * 3)
    latest = stored(project, np.full((2, 3), 0.7), ["c"] * 3)
    found = QualityMatrix.objects.latest_of(project)
    assert found.pk == latest.pk != first.pk
    assert "task_ids_blob" in found.get_deferred_fields()  # the values live in chunks
    np.testing.assert_array_equal(found.values, np.full((2, 3), 0.7))


def test_shared_values_are_decoded_once_read_only_and_the_oldest_go_first(project, monkeypatch):
    cache = models._ValuesCache(max_bytes=2 * 6 * 8)  # two 2 x 3 float64 matrices
    monkeypatch.setattr(models, "_VALUES_CACHE", cache)
    matrices = [stored(project, np.full((2, 3), 0.5 + k / 10), ["c"] * 3) for k in range(3)]
    first = QualityMatrix.objects.get(pk=matrices[0].pk).shared_values()
    again = QualityMatrix.objects.get(pk=matrices[0].pk).shared_values()
    assert again is first
    assert not first.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        first[0, 0] = 1.0
    for matrix in matrices[1:]:
        matrix.shared_values()
    assert [key[0] for key in cache.arrays] == [m.pk for m in matrices[1:]]


def test_external_ids_are_unique_within_a_project_at_the_database_level(project):
    Worker.objects.create(project=project, external_id="w1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Worker.objects.create(project=project, external_id="w1")
    other = Project.objects.create(owner=project.owner, name="other")
    Worker.objects.create(project=other, external_id="w1")  # another project: fine


@pytest.mark.parametrize("prior", [0.0, 1.0, 1.5])
def test_the_database_rejects_a_task_prior_outside_the_open_unit_interval(project, prior):
    with pytest.raises(IntegrityError), transaction.atomic():
        Task.objects.create(project=project, external_id="t", category="c", prior=prior)


def test_project_names_are_unique_per_owner(project):
    with pytest.raises(IntegrityError), transaction.atomic():
        Project.objects.create(owner=project.owner, name="demo")
