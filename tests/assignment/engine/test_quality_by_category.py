"""Quality by category: a worker x category table and each task's category, never made dense
where a method does not need it, and giving exactly what the dense matrix gives."""

from __future__ import annotations

import re

import numpy as np
import pytest

from assignment.engine.accuracy import estimate_accuracy, removal_losses, task_accuracy
from assignment.engine.greedy import greedy_assignment
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.solve import METHODS, solve
from assignment.engine.upper_bound import accuracy_upper_bounds

OPTIONS = {"tvcs-iht": {"max_iter": 6, "bound_gap": 0, "search_when_spent": True}}


def twins(seed=0, n=15, m=60, categories=4, **caps):
    """The same problem twice: by category, and with the dense matrix it stands for."""
    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.0, 1.0, (n, 1))
    ease = rng.uniform(0.0, 1.0, (1, categories))
    table = 0.5 + 0.45 * skill * ease  # skill x difficulty: categories differ
    by_category = QualityByCategory(table, rng.integers(0, categories, m))
    kwargs = {
        "max_workers_per_task": caps.pop("max_workers_per_task", 4),
        "max_tasks_per_worker": caps.pop("max_tasks_per_worker", 12),
        "budget": caps.pop("budget", 150),
        "prior": caps.pop("prior", rng.uniform(0.3, 0.7, m)),
        **caps,
    }
    return (
        AssignmentProblem(by_category, **kwargs),
        AssignmentProblem(by_category.dense(), **kwargs),
    )


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", [0, 1])
def test_every_method_gives_the_same_assignment_by_category_as_dense(method, seed):
    by_category, dense = twins(seed)
    got = solve(by_category, method=method, seed=3, **OPTIONS.get(method, {}))
    want = solve(dense, method=method, seed=3, **OPTIONS.get(method, {}))
    np.testing.assert_array_equal(got.assignment, want.assignment)
    assert got.expected_accuracy == want.expected_accuracy
    assert by_category.is_feasible(got.assignment)


def test_greedy_by_category_matches_dense_with_an_eligibility_mask():
    rng = np.random.default_rng(5)
    eligible = rng.random((15, 60)) < 0.7
    by_category, dense = twins(5, eligible=eligible)
    output = greedy_assignment(by_category)
    got, got_info = output.assignment, output.details
    output = greedy_assignment(dense)
    want, want_info = output.assignment, output.details
    np.testing.assert_array_equal(got, want)
    assert got_info["accuracy"] == want_info["accuracy"]
    assert not (got & ~eligible).any()


def test_greedy_extending_an_assignment_matches_dense():
    by_category, dense = twins(2)
    start = greedy_assignment(dense).assignment
    start[:, ::2] = False  # half the tasks lose their workers
    got = greedy_assignment(by_category, initial=start).assignment
    want = greedy_assignment(dense, initial=start).assignment
    np.testing.assert_array_equal(got, want)


def test_greedy_never_builds_the_dense_matrix_of_a_problem_by_category():
    by_category, _ = twins(1)
    greedy_assignment(by_category)
    assert "quality" not in vars(by_category)  # the cached dense matrix was never asked for


def test_tvcs_iht_with_one_worker_per_task_never_builds_the_dense_matrix():
    # One worker per task: the exact optimum by one projection of the per-pair gains, which
    # are computed from the table.
    by_category, dense = twins(4, budget=60, max_workers_per_task=1, max_tasks_per_worker=60)
    result = solve(by_category, method="tvcs-iht", seed=0)
    assert (result.iterations, result.details["stopped"]) == (0, "single_worker")
    assert "quality" not in vars(by_category)
    same = solve(dense, method="tvcs-iht", seed=0)
    np.testing.assert_array_equal(result.assignment, same.assignment)


def test_the_upper_bound_by_category_equals_the_dense_one():
    by_category, dense = twins(3)
    budgets = [0, 40, 150, 10_000]
    got = accuracy_upper_bounds(by_category, budgets=budgets)
    want = accuracy_upper_bounds(dense, budgets=budgets)
    for a, b in zip(got, want, strict=True):
        assert a.value == b.value
        np.testing.assert_array_equal(a.workers_per_task, b.workers_per_task)


def test_accuracy_functions_take_quality_by_category():
    by_category, dense = twins(6)
    assignment = greedy_assignment(dense).assignment
    form, q = by_category.quality_form, dense.quality
    np.testing.assert_array_equal(
        task_accuracy(form, assignment, prior=dense.prior),
        task_accuracy(q, assignment, prior=dense.prior),
    )
    for a, b in zip(
        removal_losses(form, assignment, prior=dense.prior),
        removal_losses(q, assignment, prior=dense.prior),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)
    assert estimate_accuracy(form, assignment, prior=dense.prior, seed=1) == estimate_accuracy(
        q, assignment, prior=dense.prior, seed=1
    )


def test_a_problem_by_category_reads_pairs_from_its_table():
    by_category, dense = twins(7)
    rng = np.random.default_rng(0)
    workers, tasks = rng.integers(0, 15, 50), rng.integers(0, 60, 50)
    np.testing.assert_array_equal(
        by_category.quality_at(workers, tasks), dense.quality[workers, tasks]
    )
    assert by_category.by_category
    assert not dense.by_category
    assert by_category.shape == dense.shape == (15, 60)
    assert by_category.quality_table.shape == (15, 4)
    np.testing.assert_array_equal(by_category.quality, dense.quality)


@pytest.mark.parametrize(
    ("table", "categories", "message"),
    [
        ([[0.7, 1.2]], [0, 1], "table must be in [0, 1], got 1.2 at worker 0, category 1"),
        ([[0.7, np.nan]], [0], "table must be finite, got nan at worker 0, category 1"),
        ([0.7, 0.8], [0], "table must be a 2-D workers x categories matrix"),
        (
            [[0.7, 0.8]],
            [0, 2, 1],
            "task_category must be in [0, 2) (the table's categories), got 2 at task 1",
        ),
        (
            [[0.7, 0.8]],
            [0, -1],
            "task_category must be in [0, 2) (the table's categories), got -1 at task 1",
        ),
        ([[0.7, 0.8]], [0.0, 1.0], "task_category must hold integers"),
        ([[0.7, 0.8]], [[0, 1]], "task_category must be 1-D"),
    ],
)
def test_quality_by_category_refuses_bad_input_naming_the_field(table, categories, message):
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        QualityByCategory(table, categories)


def test_eligibility_of_a_problem_by_category_must_have_the_tasks_shape():
    with pytest.raises(ValueError, match=r"eligible must have the shape of quality \(1, 3\)"):
        AssignmentProblem(
            QualityByCategory([[0.7, 0.8]], [0, 1, 1]),
            max_workers_per_task=1,
            max_tasks_per_worker=1,
            budget=1,
            eligible=np.ones((1, 2), bool),
        )


def test_tvcs_iht_above_its_pair_limit_searches_candidates_and_stays_off_the_dense_matrix(
    monkeypatch,
):
    monkeypatch.setattr("assignment.engine.search_pairs.MAX_SEARCH_PAIRS", 300)
    # Caps of 6 workers a task and the whole budget: the steps beat greedy, so the pass runs.
    caps = {"max_workers_per_task": 6, "max_tasks_per_worker": 18, "budget": 360}
    by_category, dense = twins(1, n=20, m=60, **caps)
    result = solve(by_category, method="tvcs-iht", seed=0, bound_gap=0, search_when_spent=True)
    assert 0 < result.details["searched_pairs"] < 20 * 60
    assert result.details["final_pass"] is True
    assert "quality" not in vars(by_category)
    assert by_category.is_feasible(result.assignment)
    greedy = greedy_assignment(dense).details
    assert result.expected_accuracy >= greedy["accuracy"]
