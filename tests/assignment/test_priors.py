"""Prior distributions of projects of more than two labels (assignment.priors)."""

from __future__ import annotations

import numpy as np
import pytest
from project_data import import_text, make_project

from assignment.models import Task
from assignment.priors import label_prior_from_mapping, label_prior_mapping, task_priors

pytestmark = pytest.mark.django_db

LABELS = ["cat", "dog", "bird"]


def test_a_distribution_is_stored_in_label_order_and_divided_by_its_sum():
    given = {"bird": 0.2, "cat": 0.5000001, "dog": 0.3}
    stored = label_prior_from_mapping(given, LABELS)
    assert stored == pytest.approx([0.5, 0.3, 0.2], abs=1e-6)
    assert sum(stored) == pytest.approx(1.0, abs=1e-15)
    assert label_prior_mapping(stored, LABELS) == dict(zip(LABELS, stored, strict=True))
    assert label_prior_mapping(None, LABELS) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([0.5, 0.3, 0.2], "must be an object giving each of the 3 labels its probability"),
        ({"cat": 0.5, "dog": 0.5}, "no probability for the label 'bird'"),
        ({"cat": 0.4, "dog": 0.3, "bird": 0.2, "fish": 0.1}, "'fish' is not one of"),
        ({"cat": 0.5, "dog": 0.5, "bird": 0.0}, "'bird' must be strictly between 0 and 1"),
        ({"cat": 1.0, "dog": 0.5, "bird": 0.5}, "'cat' must be strictly between 0 and 1"),
        ({"cat": True, "dog": 0.5, "bird": 0.5}, "'cat' must be a number"),
        ({"cat": float("nan"), "dog": 0.5, "bird": 0.5}, "'cat' must be a number"),
        ({"cat": 0.5, "dog": 0.3, "bird": 0.3}, "must sum to 1, got 1.1"),
    ],
)
def test_a_distribution_that_is_not_one_is_refused_with_what_is_wrong(value, message):
    with pytest.raises(ValueError, match=message):
        label_prior_from_mapping(value, LABELS)


def test_each_task_takes_its_own_prior_else_the_projects_else_uniform():
    project = make_project(labels=LABELS)
    import_text(
        project,
        "tasks",
        'task_id,category,prior\nt1,x,\nt2,x,"{""cat"": 0.1, ""dog"": 0.1, ""bird"": 0.8}"\n',
    )
    ids = np.array(Task.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    deleted = ids.max() + 1000  # a task deleted since a matrix was made
    asked = np.array([ids[1], deleted, ids[0]])
    uniform = task_priors(project=project, task_ids=asked)
    np.testing.assert_allclose(uniform, [[0.1, 0.1, 0.8], [1 / 3] * 3, [1 / 3] * 3])
    project.default_label_prior = [0.6, 0.3, 0.1]
    project.save()
    np.testing.assert_allclose(
        task_priors(project=project, task_ids=asked),
        [[0.1, 0.1, 0.8], [0.6, 0.3, 0.1], [0.6, 0.3, 0.1]],
    )


def test_a_binary_project_keeps_one_number_per_task():
    project = make_project(default_prior=0.3)
    import_text(project, "tasks", "task_id,category,prior\nt1,x,0.9\nt2,x,\n")
    ids = np.array(Task.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    np.testing.assert_allclose(task_priors(project=project, task_ids=ids), [0.9, 0.3])
