"""Assignments as pairs (worker, task): greedy, ``solve`` and the accuracy give exactly what the
dense bool matrix gives, and a by-category greedy never allocates an n x m array."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from assignment.engine.accuracy import task_accuracy, task_accuracy_pairs
from assignment.engine.distributions import assignment_distributions
from assignment.engine.greedy import GreedyState, greedy_assignment, greedy_pairs
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.solve import evaluate, evaluate_pairs, solve


def problem_by_category(seed=0, n=12, m=50, categories=3, dense=False, **kwargs):
    rng = np.random.default_rng(seed)
    quality = QualityByCategory(
        rng.uniform(0.45, 0.95, (n, categories)), rng.integers(0, categories, m)
    )
    caps = {"max_workers_per_task": 5, "max_tasks_per_worker": 14, "budget": 140}
    caps["prior"] = rng.uniform(0.3, 0.7, m)
    return AssignmentProblem(quality.dense() if dense else quality, **(caps | kwargs))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dense", [False, True])
def test_greedy_pairs_are_the_nonzeros_of_greedy_assignment(seed, dense):
    problem = problem_by_category(seed, dense=dense)
    output = greedy_assignment(problem)
    matrix, info = output.assignment, output.details
    output = greedy_pairs(problem)
    workers, tasks, pairs_info = output.rows, output.cols, output.details
    want = np.nonzero(matrix)
    np.testing.assert_array_equal(workers, want[0])
    np.testing.assert_array_equal(tasks, want[1])
    assert workers.size == info["assigned"] > 0
    assert pairs_info["accuracy"] == info["accuracy"]
    assert pairs_info["evaluations"] == info["evaluations"]


def test_greedy_pairs_extends_initial_pairs_as_greedy_extends_the_matrix():
    rng = np.random.default_rng(9)
    eligible = rng.random((12, 50)) < 0.8
    problem = problem_by_category(9, eligible=eligible)
    start = greedy_assignment(problem).assignment
    start[:, 1::3] = False
    output = greedy_assignment(problem, initial=start)
    matrix, info = output.assignment, output.details
    output = greedy_pairs(problem, initial=np.nonzero(start)[::-1][::-1])
    workers, tasks, pairs_info = output.rows, output.cols, output.details
    np.testing.assert_array_equal(np.stack([workers, tasks]), np.stack(np.nonzero(matrix)))
    assert pairs_info["initial_accuracy"] == info["initial_accuracy"]
    with pytest.raises(ValueError, match="feasible"):
        greedy_pairs(problem, initial=(np.array([0, 0]), np.array([3, 3])))  # a pair twice


def test_the_state_lists_the_same_pairs_as_its_matrix():
    problem = problem_by_category(4)
    state = GreedyState(problem)
    for j, move in [(3, (2,)), (7, (0, 5)), (3, (11, 1))]:
        state.apply(j, move)
    workers, tasks = state.pairs()
    np.testing.assert_array_equal(
        np.stack([workers, tasks]), np.stack(np.nonzero(state.assignment))
    )
    np.testing.assert_array_equal(state.assigned, state.assignment.T)
    assert sorted(zip(tasks.tolist(), workers.tolist(), strict=True)) == [
        (3, 1), (3, 2), (3, 11), (7, 0), (7, 5)
    ]  # fmt: skip


@pytest.mark.parametrize("method", ["greedy", "random", "tvcs-iht"])
def test_solve_result_pairs_are_its_assignment(method):
    problem = problem_by_category(2)
    result = solve(
        problem, method=method, seed=1, **({"max_iter": 5} if method == "tvcs-iht" else {})
    )
    want = np.nonzero(result.assignment)
    np.testing.assert_array_equal(result.rows, want[0])
    np.testing.assert_array_equal(result.cols, want[1])
    assert result.shape == problem.shape
    assert result.n_assigned == int(result.assignment.sum()) == result.rows.size
    assert result.expected_accuracy == evaluate(problem, result.assignment)[0]


@pytest.mark.parametrize("seed", range(3))
def test_accuracy_from_pairs_in_any_order_equals_the_dense_one(seed):
    problem = problem_by_category(seed)
    matrix = greedy_assignment(problem).assignment
    workers, tasks = np.nonzero(matrix)
    order = np.random.default_rng(seed).permutation(workers.size)
    got = task_accuracy_pairs(
        problem.quality_form, workers[order], tasks[order], prior=problem.prior
    )
    want = task_accuracy(problem.quality, matrix, prior=problem.prior)
    np.testing.assert_array_equal(got, want)
    assert evaluate_pairs(problem, workers[order], tasks[order]) == evaluate(problem, matrix)


def test_evaluating_pairs_sorts_them_once(monkeypatch):
    # evaluate_pairs' check sorts the pairs by task to find one given twice; the two-label
    # kernel takes that order, so nothing sorts them again (and the number is the same).
    import assignment.engine._problem_accuracy as problem_accuracy
    import assignment.engine.accuracy as accuracy

    problem = problem_by_category(1)
    matrix = greedy_assignment(problem).assignment
    workers, tasks = np.nonzero(matrix)
    order = np.random.default_rng(1).permutation(workers.size)
    want = evaluate(problem, matrix)
    sorts = []

    def counted(w, t):
        sorts.append(w.size)
        return sorted_pairs(w, t)

    sorted_pairs = accuracy._sorted_pairs
    monkeypatch.setattr(accuracy, "_sorted_pairs", counted)
    monkeypatch.setattr(problem_accuracy, "_sorted_pairs", counted)
    assert evaluate_pairs(problem, workers[order], tasks[order]) == want
    assert sorts == [workers.size]


def test_accuracy_from_pairs_refuses_pairs_out_of_range_or_twice():
    problem = problem_by_category(0)
    form = problem.quality_form
    with pytest.raises(ValueError, match="tasks must be in"):
        task_accuracy_pairs(form, np.array([0]), np.array([50]))
    with pytest.raises(ValueError, match="given twice"):
        task_accuracy_pairs(form, np.array([1, 1]), np.array([4, 4]))


@pytest.mark.parametrize("n_labels", [2, 3])
@pytest.mark.parametrize("with_confusion", [False, True])
@pytest.mark.parametrize(
    ("workers", "tasks", "message"),
    [
        ([0, 12], [1, 1], r"workers must be in \[0, 12\), got 12 at pair 1"),
        ([0, 1], [-1, 1], r"tasks must be in \[0, 50\), got -1"),
        ([3, 3], [4, 4], r"pair \(worker 3, task 4\) is given twice"),
        ([0.0], [1.0], "workers and tasks must be integers"),
        ([[0]], [[1]], "workers and tasks must be 1-D of one length"),
    ],
)
def test_evaluating_pairs_and_their_distributions_refuses_pairs_a_problem_cannot_hold(
    n_labels, with_confusion, workers, tasks, message
):
    confusion = np.tile(np.eye(n_labels) * 0.6 + 0.4 / n_labels, (12, 1, 1))
    prior = None if n_labels == 2 else np.full(n_labels, 1 / n_labels)
    problem = problem_by_category(
        0, n_labels=n_labels, prior=prior, confusion=confusion if with_confusion else None
    )
    with pytest.raises(ValueError, match=message):
        evaluate_pairs(problem, workers, tasks)
    with pytest.raises(ValueError, match=message):
        assignment_distributions(problem, (workers, tasks))


@pytest.mark.parametrize("with_confusion", [False, True])
def test_evaluating_a_matrix_and_its_distributions_refuses_one_not_of_the_problem_s_shape(
    with_confusion,
):
    confusion = np.tile(np.eye(2) * 0.6 + 0.2, (12, 1, 1)) if with_confusion else None
    problem = problem_by_category(0, confusion=confusion)
    for bad, message in [
        (np.zeros((12, 49), bool), r"assignment must have the shape of quality \(12, 50\)"),
        (np.full((12, 50), 2), "assignment must hold only 0 and 1, got 2"),
    ]:
        with pytest.raises(ValueError, match=message):
            evaluate(problem, bad)
        with pytest.raises(ValueError, match=message):
            assignment_distributions(problem, bad)


@pytest.mark.parametrize("seed", range(5))
def test_feasibility_of_pairs_is_that_of_the_matrix(seed):
    rng = np.random.default_rng(seed)
    problem = problem_by_category(seed, eligible=rng.random((12, 50)) < 0.9)
    for density in (0.02, 0.1, 0.3):
        matrix = rng.random(problem.shape) < density
        pairs = np.nonzero(matrix)
        assert problem.is_feasible_pairs(*pairs) == problem.is_feasible(matrix)
    matrix = greedy_assignment(problem).assignment
    workers, tasks = np.nonzero(matrix)
    assert problem.is_feasible_pairs(workers, tasks)
    assert not problem.is_feasible_pairs(np.append(workers, workers[0]), np.append(tasks, tasks[0]))
    assert not problem.is_feasible_pairs(np.array([12]), np.array([0]))


@pytest.mark.slow
def test_a_by_category_greedy_never_allocates_an_n_by_m_array():
    """6,000 workers x 3,000 tasks: one bool matrix is 18 MB; greedy and solve stay below half
    of it (their state is about 2 kB per task: atoms, workers' lists, queue, memo).

    tracemalloc sees numpy's allocations (numba's kernels here allocate at most (3, n))."""
    n, m = 6000, 3000
    rng = np.random.default_rng(0)
    quality = QualityByCategory(rng.uniform(0.5, 0.9, (n, 4)), rng.integers(0, 4, m))
    problem = AssignmentProblem(
        quality, max_workers_per_task=3, max_tasks_per_worker=20, budget=2 * m, prior=0.5
    )
    greedy_pairs(
        AssignmentProblem(quality, max_workers_per_task=1, max_tasks_per_worker=1, budget=1)
    )
    tracemalloc.start()
    try:
        output = greedy_pairs(problem)
        workers, info = output.rows, output.details
        _, greedy_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = solve(problem, method="greedy")
        _, solve_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info["assigned"] == 2 * m == workers.size
    np.testing.assert_array_equal(result.rows, workers)
    assert max(greedy_peak, solve_peak) < n * m / 2, (greedy_peak, solve_peak)
    assert "assignment" not in vars(result)  # the dense form was never built
    assert "quality" not in vars(problem)


def test_tvcs_iht_above_its_dense_limit_returns_greedys_pairs(monkeypatch):
    from assignment.engine import tvcs_iht

    problem = problem_by_category(6)
    monkeypatch.setattr(tvcs_iht, "DENSE_PAIRS_MAX", problem.n_workers * problem.n_tasks - 1)
    result = solve(problem, method="tvcs-iht", seed=0)
    output = greedy_pairs(problem)
    workers, tasks, info = output.rows, output.cols, output.details
    np.testing.assert_array_equal(result.rows, workers)
    np.testing.assert_array_equal(result.cols, tasks)
    assert result.expected_accuracy == info["accuracy"]
    assert (result.iterations, result.details["stopped"]) == (0, "too_large")
    monkeypatch.setattr(tvcs_iht, "DENSE_PAIRS_MAX", problem.n_workers * problem.n_tasks)
    assert solve(problem, method="tvcs-iht", seed=0).details["stopped"] != "too_large"


@pytest.mark.parametrize("seed", range(3))
def test_greedy_memoised_best_moves_change_no_choice(seed, monkeypatch):
    """Many tasks per category share states; the memo of best moves reuses their evaluation
    and must give the moves of evaluating every time."""
    problem = problem_by_category(
        seed, n=30, m=400, categories=3, max_tasks_per_worker=30, budget=800, prior=0.5
    )
    output = greedy_pairs(problem)
    workers, tasks, info = output.rows, output.cols, output.details
    monkeypatch.setattr(GreedyState, "_memo_key", lambda self, j, budget_left: None)
    output = greedy_pairs(problem)
    want_workers, want_tasks, want_info = output.rows, output.cols, output.details
    np.testing.assert_array_equal(workers, want_workers)
    np.testing.assert_array_equal(tasks, want_tasks)
    assert info["accuracy"] == want_info["accuracy"]
    assert info["steps"] == want_info["steps"]
    assert info["evaluations"] < want_info["evaluations"] / 2  # the memo did work
