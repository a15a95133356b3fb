"""The data model: compact quality matrices, and constraints enforced by the database itself."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from assignment.models import Project, QualityMatrix, QualitySource, Task, Worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    owner = get_user_model().objects.create_user("owner", password="x")
    return Project.objects.create(owner=owner, name="demo")


def test_a_large_quality_matrix_is_stored_as_one_row_and_round_trips(project):
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
