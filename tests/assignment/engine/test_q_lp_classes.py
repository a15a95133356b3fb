"""q-lp by task classes: the pair LP's optimum from one variable per worker and class of alike
tasks, rounded by a wrap-around deal that keeps every cap."""

import tracemalloc

import numpy as np
import pytest
from q_lp_reference import full_lp_optimum

from assignment.engine import q_lp_classes, solve
from assignment.engine.baselines import q_lp_assignment, q_lp_credit_cap, q_lp_weights
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.q_lp import solve_q_lp
from assignment.engine.q_lp_classes import solve_class_lp, task_classes


@pytest.fixture
def small_classes(monkeypatch):
    """Classes of any size count, so that small problems take the class LP."""
    monkeypatch.setattr(q_lp_classes, "MIN_TASKS_PER_CLASS", 1)


def category_problem(seed: int, *, n_labels: int = 2, caps_vary: bool = False):
    """A problem by category where every kind of row can bind: credit, worker and task caps,
    the budget."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(4, 12)), int(rng.integers(1, 5))
    m = int(rng.integers(4 * k, 60))
    low = 1.0 / n_labels
    table = rng.uniform(low - 0.1, 1.0, size=(n, k))
    per_task = rng.integers(1, n + 1, size=m) if caps_vary else int(rng.integers(1, n + 1))
    per_worker = rng.integers(1, m + 1, size=n)
    caps_total = min(np.broadcast_to(per_task, m).sum(), per_worker.sum())
    return AssignmentProblem(
        QualityByCategory(table, rng.integers(0, k, size=m)),
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=int(rng.integers(1, int(caps_total) + 2)),
        n_labels=n_labels,
    )


def assert_keeps_caps(problem: AssignmentProblem, workers, tasks) -> None:
    n, m = problem.shape
    assert np.unique(workers * m + tasks).size == workers.size  # each pair once
    assert np.all(np.bincount(workers, minlength=n) <= problem.max_tasks_per_worker)
    assert np.all(np.bincount(tasks, minlength=m) <= problem.max_workers_per_task)
    assert workers.size <= problem.budget


@pytest.mark.parametrize("caps_vary", [False, True])
@pytest.mark.parametrize("n_labels", [2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_the_class_lp_optimum_is_the_pair_lp_optimum(seed, n_labels, caps_vary, small_classes):
    problem = category_problem(seed, n_labels=n_labels, caps_vary=caps_vary)
    credit_cap = q_lp_credit_cap([0.3, 0.05, 0.01][seed % 3], n_labels)
    classes = task_classes(problem)
    assert classes is not None
    lp = solve_class_lp(problem, classes, credit_cap)
    want = full_lp_optimum(problem, credit_cap)
    assert lp.objective == pytest.approx(want, rel=1e-6, abs=1e-9)
    assert lp.objective == pytest.approx(solve_q_lp(problem, credit_cap).objective, rel=1e-6)


@pytest.mark.parametrize("caps_vary", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_the_deal_keeps_every_cap_and_the_budget(seed, caps_vary, small_classes):
    problem = category_problem(seed, caps_vary=caps_vary)
    lp = solve_class_lp(problem, task_classes(problem), q_lp_credit_cap(0.05))
    assert_keeps_caps(problem, lp.workers, lp.tasks)


@pytest.mark.parametrize("seed", range(8))
def test_the_deal_loses_at_most_one_pair_per_fractional_variable(seed, small_classes):
    """Each worker takes the floor of his LP share of each class, so the rounded assignment's
    LP objective falls short of the optimum by less than one pair's weight per fractional
    variable, and it holds as many pairs as the LP's shares, floored."""
    problem = category_problem(seed)
    lp = solve_class_lp(problem, task_classes(problem), q_lp_credit_cap(0.05))
    w = q_lp_weights(problem.quality_at(lp.workers, lp.tasks))
    assert w.sum() <= lp.objective + 1e-6
    assert w.sum() >= lp.objective - lp.fractional * 1.0 - 1e-6  # weights are at most 1


def test_every_task_of_a_class_gets_the_floor_or_the_ceiling_of_its_class_mean(small_classes):
    rng = np.random.default_rng(3)
    n, m, k = 30, 500, 4
    problem = AssignmentProblem(
        QualityByCategory(rng.uniform(0.55, 0.95, size=(n, k)), rng.integers(0, k, size=m)),
        max_workers_per_task=5,
        max_tasks_per_worker=60,
        budget=1500,
    )
    classes = task_classes(problem)
    lp = solve_class_lp(problem, classes, q_lp_credit_cap(0.05))
    per_task = np.bincount(lp.tasks, minlength=m)
    for c in range(k):
        counts = per_task[classes.of_task == c]
        assert counts.max() - counts.min() <= 1


def test_a_worker_never_gets_one_task_twice_when_he_takes_every_task_of_a_class():
    """A worker whose share is the whole class gets each of its tasks once."""
    problem = AssignmentProblem(
        QualityByCategory(np.array([[0.95, 0.6], [0.7, 0.6]]), np.repeat([0, 1], 40)),
        max_workers_per_task=2,
        max_tasks_per_worker=80,
        budget=160,
    )
    lp = solve_class_lp(problem, task_classes(problem), q_lp_credit_cap(0.05))
    assert_keeps_caps(problem, lp.workers, lp.tasks)
    assert lp.workers.size == 160  # credit never binds here: every pair is taken


def test_a_dense_matrix_and_its_categories_give_the_same_q_lp_assignment():
    rng = np.random.default_rng(5)
    n, m, k = 40, 2000, 6
    table, category = rng.uniform(0.5, 0.9, size=(n, k)), rng.integers(0, k, size=m)
    kwargs = {"max_workers_per_task": 4, "max_tasks_per_worker": 120, "budget": 4000}
    by_category = AssignmentProblem(QualityByCategory(table, category), **kwargs)
    dense = AssignmentProblem(table[:, category], **kwargs)
    a, b = q_lp_assignment(by_category), q_lp_assignment(dense)
    assert a.details["lp_classes"] == b.details["lp_classes"] == k
    np.testing.assert_array_equal(a.rows, b.rows)
    np.testing.assert_array_equal(a.cols, b.cols)


def test_tasks_of_one_category_with_different_caps_are_different_classes(small_classes):
    problem = AssignmentProblem(
        QualityByCategory(np.full((3, 1), 0.8), np.zeros(6, np.int64)),
        max_workers_per_task=np.array([1, 2, 1, 2, 1, 3]),
        max_tasks_per_worker=6,
        budget=10,
    )
    classes = task_classes(problem)
    np.testing.assert_array_equal(classes.of_task, [0, 1, 0, 1, 0, 2])
    np.testing.assert_array_equal(classes.cap, [1, 2, 3])
    np.testing.assert_array_equal(classes.size, [3, 2, 1])


def test_no_classes_with_an_eligibility_mask_or_too_few_tasks_per_class():
    rng = np.random.default_rng(0)
    table, category = rng.uniform(0.5, 0.9, size=(5, 2)), rng.integers(0, 2, size=100)
    kwargs = {"max_workers_per_task": 2, "max_tasks_per_worker": 40, "budget": 100}
    assert task_classes(AssignmentProblem(QualityByCategory(table, category), **kwargs))
    masked = AssignmentProblem(
        QualityByCategory(table, category), eligible=np.ones((5, 100), bool), **kwargs
    )
    assert task_classes(masked) is None
    assert task_classes(AssignmentProblem(rng.uniform(0.5, 0.9, size=(5, 100)), **kwargs)) is None


def test_solve_runs_q_lp_by_classes_and_says_so():
    rng = np.random.default_rng(1)
    problem = AssignmentProblem(
        QualityByCategory(rng.uniform(0.5, 0.9, size=(20, 3)), rng.integers(0, 3, size=300)),
        max_workers_per_task=3,
        max_tasks_per_worker=30,
        budget=500,
    )
    result = solve(problem, method="q-lp", seed=0)
    assert problem.is_feasible(result.assignment)
    assert result.n_assigned == 500
    assert "3 classes of alike tasks" in result.message
    assert result.details["lp_optimal"] is True


@pytest.mark.slow
def test_q_lp_by_classes_never_builds_an_array_of_every_pair():
    """At 1,000 workers x 200,000 tasks (8 bytes a pair would be 1.6 GB) the class LP's peak
    traced allocation stays below one byte a pair."""
    rng = np.random.default_rng(2)
    n, m = 1000, 200_000
    problem = AssignmentProblem(
        QualityByCategory(rng.uniform(0.5, 0.9, size=(n, 10)), rng.integers(0, 10, size=m)),
        max_workers_per_task=2,
        max_tasks_per_worker=300,
        budget=240_000,
    )
    tracemalloc.start()
    try:
        output = q_lp_assignment(problem)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * m
    assert problem.is_feasible_pairs(output.rows, output.cols)
    assert output.n_assigned > 0.99 * problem.budget


def test_workers_without_capacity_and_classes_no_worker_helps_get_no_pairs(small_classes):
    table = np.array([[0.9, 0.5], [0.8, 0.5], [0.7, 0.5]])  # nobody helps on category 1
    problem = AssignmentProblem(
        QualityByCategory(table, np.array([0, 1, 0, 1, 0, 0])),
        max_workers_per_task=2,
        max_tasks_per_worker=np.array([0, 4, 4]),
        budget=12,
    )
    credit_cap = q_lp_credit_cap(0.05)
    lp = solve_class_lp(problem, task_classes(problem), credit_cap)
    assert_keeps_caps(problem, lp.workers, lp.tasks)
    assert not np.any(lp.workers == 0)
    assert not np.any(np.isin(lp.tasks, [1, 3]))
    assert lp.workers.size == 8  # the two others, on the four tasks of category 0
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-9)
