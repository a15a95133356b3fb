"""The accuracy upper bound with K >= 2 labels against brute force over every assignment."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from assignment.engine import AssignmentProblem, QualityByCategory, accuracy_upper_bound
from assignment.engine.multiclass import column_accuracy_multiclass
from assignment.engine.upper_bound import accuracy_upper_bounds, effective_quality


def subset_accuracies(q, prior, n_labels):
    """``table[j][mask]``: exact accuracy of task ``j`` with the workers in bit mask ``mask``."""
    n, m = q.shape
    return [
        [
            column_accuracy_multiclass(
                q[[i for i in range(n) if mask >> i & 1], j], prior[j], n_labels=n_labels
            )
            for mask in range(1 << n)
        ]
        for j in range(m)
    ]


def brute_force_optimum(table, per_task, budget):
    """Best mean accuracy over every assignment within the per-task caps and the budget (no
    per-worker caps: each worker may take every task)."""
    m, n = len(table), len(table[0]).bit_length() - 1
    best = -1.0
    for masks in itertools.product(range(1 << n), repeat=m):
        sizes = [mask.bit_count() for mask in masks]
        if sum(sizes) <= budget and all(s <= c for s, c in zip(sizes, per_task, strict=True)):
            best = max(best, np.mean([table[j][mask] for j, mask in enumerate(masks)]))
    return best


def tiny_problems(n_labels, low, count, seed=0):
    """``count`` problems of 3 workers x 2 tasks (each worker may take both tasks)."""
    rng = np.random.default_rng([n_labels, seed])
    for _ in range(count):
        q = rng.uniform(low, 0.95, (3, 2))
        prior = rng.dirichlet(np.full(n_labels, 3.0), 2)
        per_task = rng.integers(0, 4, 2)
        yield q, prior, per_task


@pytest.mark.parametrize("n_labels", [2, 3, 4])
def test_the_bound_is_the_exact_optimum_where_worker_caps_do_not_bind(n_labels):
    """Workers of quality at least 1/K: the bound's integral knapsack solution and its LP
    value enclose the brute-force optimum, and equal it wherever the walk ends on a vertex
    (the LP value is then integral), e.g. at budget 0 and once the budget covers the caps."""
    vertices = 0
    for q, prior, per_task in tiny_problems(n_labels, 1.0 / n_labels, 8):
        table = subset_accuracies(q, prior, n_labels)
        budgets = range(int(per_task.sum()) + 2)
        problem = AssignmentProblem(
            q,
            max_workers_per_task=per_task,
            max_tasks_per_worker=2,
            budget=0,
            prior=prior,
            n_labels=n_labels,
        )
        for budget, bound in zip(
            budgets, accuracy_upper_bounds(problem, budgets=budgets), strict=True
        ):
            optimum = brute_force_optimum(table, per_task, budget)
            assert bound.integral - 1e-12 <= optimum <= bound.value + 1e-12
            if bound.value - bound.integral <= 1e-15:
                assert optimum == pytest.approx(bound.value, abs=1e-12)
                vertices += 1
    assert vertices >= 30  # most budgets end on a vertex


@pytest.mark.parametrize("n_labels", [3, 4])
def test_the_bound_stays_above_the_optimum_with_workers_below_one_over_k(n_labels):
    for q, prior, per_task in tiny_problems(n_labels, 0.0, 8, seed=1):
        table = subset_accuracies(q, prior, n_labels)
        for budget in range(int(per_task.sum()) + 1):
            problem = AssignmentProblem(
                q,
                max_workers_per_task=per_task,
                max_tasks_per_worker=2,
                budget=budget,
                prior=prior,
                n_labels=n_labels,
            )
            optimum = brute_force_optimum(table, per_task, budget)
            assert optimum <= accuracy_upper_bound(problem).value + 1e-12


def test_a_worker_below_one_over_k_counts_as_the_ordinary_worker_he_is_a_garbling_of():
    """Three labels, uniform prior, one task, budget 1: Q = 0 (names a wrong label) and Q = 2/3
    are equally informative (|3Q - 1| / 2 = 1/2), but alone the second is right 2/3 of the time
    and the first 1/2. Ranked by informativeness with ties to the lower index, the bound would
    take the first and claim 1/2: below what the second reaches. By effective quality the first
    counts as a perfect worker (1 - 2 * 0 = 1): a bound, if a loose one."""
    q = np.array([[0.0], [2.0 / 3.0]])
    problem = AssignmentProblem(
        q, max_workers_per_task=1, max_tasks_per_worker=1, budget=1, n_labels=3
    )
    assert column_accuracy_multiclass([0.0], np.full(3, 1 / 3), n_labels=3) == pytest.approx(
        0.5, abs=1e-5
    )
    np.testing.assert_allclose(effective_quality([0.0, 0.2, 1 / 3, 0.5], 3), [1, 0.6, 1 / 3, 0.5])
    assert accuracy_upper_bound(problem).value == pytest.approx(1.0, abs=1e-5)
    ordinary = AssignmentProblem(
        q[[1]], max_workers_per_task=1, max_tasks_per_worker=1, budget=1, n_labels=3
    )
    assert accuracy_upper_bound(ordinary).value == pytest.approx(2.0 / 3.0, abs=1e-12)


def test_effective_quality_is_max_of_q_and_one_minus_q_for_two_labels():
    q = np.random.default_rng(0).random(100)
    np.testing.assert_array_equal(effective_quality(q, 2), np.maximum(q, 1.0 - q))


@pytest.mark.parametrize("n_labels", [3, 4])
def test_the_bound_by_category_equals_the_dense_one_for_k_labels(n_labels):
    rng = np.random.default_rng(n_labels)
    table, categories = rng.uniform(0.0, 0.95, (9, 4)), rng.integers(0, 4, 40)
    prior = rng.dirichlet(np.ones(n_labels), 40)
    caps = {"max_workers_per_task": rng.integers(0, 5, 40), "max_tasks_per_worker": 6}
    by_category, dense = (
        AssignmentProblem(quality, budget=0, prior=prior, n_labels=n_labels, **caps)
        for quality in (QualityByCategory(table, categories), table[:, categories])
    )
    budgets = [0, 5, 30, 80, 200]
    for got, want in zip(
        accuracy_upper_bounds(by_category, budgets=budgets),
        accuracy_upper_bounds(dense, budgets=budgets),
        strict=True,
    ):
        assert got.value == want.value
        np.testing.assert_array_equal(got.workers_per_task, want.workers_per_task)


def test_a_bound_beyond_the_exact_states_is_refused_naming_the_task():
    problem = AssignmentProblem(
        np.random.default_rng(0).uniform(0.5, 0.9, (12, 2)),
        max_workers_per_task=[3, 12],
        max_tasks_per_worker=2,
        budget=10,
        n_labels=4,
    )
    with pytest.raises(ValueError, match="12 best workers on task 1: 16,777,216 answer states"):
        accuracy_upper_bound(problem)
