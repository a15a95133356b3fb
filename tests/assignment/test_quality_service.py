"""quality_estimate: from stored gold answers to a stored, estimated quality matrix.

The shrinkage itself is tested with the engine (tests/assignment/engine/test_quality.py); here,
that the service feeds it the right answers and stores the right matrix.
"""

from __future__ import annotations

import numpy as np
import pytest
from project_data import make_project

from assignment.errors import QualityEstimationError
from assignment.models import (
    GoldAnswer,
    GoldItem,
    QualityChunk,
    QualityMatrix,
    QualitySource,
    Task,
    Worker,
)
from assignment.services import quality_estimate

pytestmark = pytest.mark.django_db


def simulate(
    project,
    accuracy: np.ndarray,
    *,
    answers_per_worker: int,
    items_per_category: int = 100,
    tasks_per_category: int = 3,
    seed: int = 0,
):
    """Workers with ``accuracy[i, c]`` on category c answer random gold items of every category.

    Returns the workers and tasks in primary-key order.
    """
    rng = np.random.default_rng(seed)
    n, n_categories = accuracy.shape
    categories = [f"c{c}" for c in range(n_categories)]
    workers = Worker.objects.bulk_create(
        [Worker(project=project, external_id=f"w{i}") for i in range(n)]
    )
    tasks = Task.objects.bulk_create(
        [
            Task(project=project, external_id=f"t{c}-{k}", category=category)
            for c, category in enumerate(categories)
            for k in range(tasks_per_category)
        ]
    )
    truth = rng.integers(0, 2, (n_categories, items_per_category))
    items = GoldItem.objects.bulk_create(
        [
            GoldItem(
                project=project,
                external_id=f"g{c}-{k}",
                category=category,
                true_label=str(truth[c, k]),
            )
            for c, category in enumerate(categories)
            for k in range(items_per_category)
        ]
    )
    answers = []
    for i, worker in enumerate(workers):
        chosen = rng.choice(len(items), size=answers_per_worker, replace=False)
        for index in chosen:
            c, k = divmod(int(index), items_per_category)
            right = rng.random() < accuracy[i, c]
            label = truth[c, k] if right else 1 - truth[c, k]
            answers.append(GoldAnswer(worker=worker, item=items[index], answer=str(label)))
    GoldAnswer.objects.bulk_create(answers)
    workers = list(Worker.objects.filter(project=project).order_by("pk"))
    tasks = list(Task.objects.filter(project=project).order_by("pk"))
    return workers, tasks


def test_an_estimate_is_stored_as_a_table_of_the_tasks_categories_without_chunks():
    project = make_project()
    accuracy = np.random.default_rng(5).uniform(0.55, 0.95, (12, 3))
    simulate(project, accuracy, answers_per_worker=60)
    Task.objects.filter(project=project, category="c1").delete()  # gold items only
    matrix = quality_estimate(project=project)
    tasks = list(Task.objects.filter(project=project).order_by("pk"))
    assert matrix.by_category
    assert not QualityChunk.objects.filter(matrix=matrix).exists()
    assert matrix.details["categories"] == 3
    assert matrix.categories == ["c0", "c2"]
    assert matrix.category_table.shape == (12, 2)
    assert matrix.task_category.tolist() == [matrix.categories.index(t.category) for t in tasks]
    # Within a category every task has the same quality: the table's column.
    values = matrix.values
    for j, task in enumerate(tasks):
        column = matrix.categories.index(task.category)
        np.testing.assert_array_equal(values[:, j], matrix.category_table[:, column])


def test_simulated_gold_answers_recover_the_workers_known_accuracies():
    project = make_project()
    rng = np.random.default_rng(11)
    true_accuracy = rng.uniform(0.55, 0.95, 30)
    _workers, _tasks = simulate(
        project, np.repeat(true_accuracy[:, None], 2, axis=1), answers_per_worker=150
    )
    matrix = quality_estimate(project=project)
    assert (matrix.n_workers, matrix.n_tasks) == (30, 6)
    estimated = matrix.values.mean(axis=1)
    assert np.abs(estimated - true_accuracy).max() < 0.12
    assert np.corrcoef(estimated, true_accuracy)[0, 1] > 0.9
    assert np.all((matrix.values > 0) & (matrix.values < 1))


def test_a_workers_accuracy_on_each_category_goes_to_the_tasks_of_that_category():
    project = make_project()
    accuracy = np.array([[0.95, 0.6], [0.6, 0.95], [0.8, 0.8]])
    _workers, tasks = simulate(
        project, accuracy, answers_per_worker=400, items_per_category=200, seed=5
    )
    matrix = quality_estimate(project=project)
    for j, task in enumerate(tasks):
        c = int(task.category[1:])
        np.testing.assert_allclose(matrix.values[:, j], accuracy[:, c], atol=0.08)


def test_the_stored_matrix_records_its_source_order_gold_counts_and_details():
    project = make_project()
    workers, tasks = simulate(project, np.full((4, 2), 0.8), answers_per_worker=20)
    idle = Worker.objects.create(project=project, external_id="idle")
    matrix = quality_estimate(project=project)
    stored = QualityMatrix.objects.get(pk=matrix.pk)
    assert stored.source == QualitySource.ESTIMATED
    assert stored.worker_ids.tolist() == [w.pk for w in workers] + [idle.pk]
    assert stored.task_ids.tolist() == [t.pk for t in tasks]
    assert stored.gold_counts.tolist() == [20, 20, 20, 20, 0]
    details = stored.details
    assert details["worker_strength"] == 10.0
    assert details["category_strength"] == 5.0
    assert details["gold_answers"] == 80
    assert details["categories"] == 2
    correct = sum(
        answer.answer == answer.item.true_label
        for answer in GoldAnswer.objects.select_related("item")
    )
    assert details["population_accuracy"] == pytest.approx((correct + 1) / (80 + 2))
    # a worker without gold answers gets the population accuracy on every task
    np.testing.assert_allclose(stored.values[-1], details["population_accuracy"])


def test_a_task_category_without_gold_questions_gets_each_workers_overall_accuracy():
    project = make_project()
    simulate(project, np.full((3, 1), 0.7), answers_per_worker=30)
    Task.objects.create(project=project, external_id="new", category="unseen")
    matrix = quality_estimate(project=project)
    correct_counts = np.array(
        [
            [a.answer == a.item.true_label for a in w.gold_answers.select_related("item")]
            for w in Worker.objects.filter(project=project).order_by("pk")
        ]
    ).sum(axis=1)
    assert matrix.n_tasks == 4
    # the unseen category: the worker's overall estimate, shrunk only towards the population
    mu0 = matrix.details["population_accuracy"]
    np.testing.assert_allclose(matrix.values[:, -1], (correct_counts + 10 * mu0) / (30 + 10))


def test_strengths_can_be_fitted_to_the_data():
    project = make_project()
    simulate(project, np.random.default_rng(2).uniform(0.6, 0.9, (20, 2)), answers_per_worker=60)
    matrix = quality_estimate(project=project, worker_strength="auto", category_strength="auto")
    assert matrix.details["worker_strength"] > 0
    assert matrix.details["category_strength"] > 0


def test_gold_answers_of_other_projects_are_not_counted():
    project = make_project()
    simulate(project, np.full((2, 1), 0.9), answers_per_worker=10)
    other = make_project("other")
    simulate(other, np.full((2, 1), 0.1), answers_per_worker=50, seed=1)
    matrix = quality_estimate(project=project)
    assert matrix.gold_counts.tolist() == [10, 10]
    assert matrix.details["gold_answers"] == 20


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("nothing", r"project 'demo' has no workers; import them first \(the project's Data"),
        ("workers", r"has no tasks; .*, POST /api/projects/[0-9]+/data/tasks/, or manage.py"),
        ("workers and tasks", "project 'demo' has no gold answers; import gold_items and"),
    ],
)
def test_an_estimate_needs_workers_tasks_and_gold_answers(setup, message):
    project = make_project()
    if setup != "nothing":
        Worker.objects.create(project=project, external_id="w1")
    if setup == "workers and tasks":
        Task.objects.create(project=project, external_id="t1", category="c")
    with pytest.raises(QualityEstimationError, match=message):
        quality_estimate(project=project)
    assert not QualityMatrix.objects.exists()
