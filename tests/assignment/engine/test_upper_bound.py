"""The accuracy upper bound over several budgets agrees with one bound per budget."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine import (
    AssignmentProblem,
    QualityByCategory,
    accuracy_upper_bound,
    accuracy_upper_bounds,
)


def problem_with(budget: int, seed: int = 0) -> AssignmentProblem:
    rng = np.random.default_rng(seed)
    return AssignmentProblem(
        rng.uniform(0.5, 0.9, (8, 30)),
        max_workers_per_task=3,
        max_tasks_per_worker=10,
        budget=budget,
        prior=rng.uniform(0.3, 0.7, 30),
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_curve_equals_one_bound_per_budget(seed):
    budgets = [0, 1, 7, 30, 45, 90]
    curve = accuracy_upper_bounds(problem_with(5, seed), budgets=budgets)
    for budget, bound in zip(budgets, curve, strict=True):
        single = accuracy_upper_bound(problem_with(budget, seed))
        assert bound.value == pytest.approx(single.value, abs=1e-15)
        assert bound.integral == pytest.approx(single.integral, abs=1e-15)
        np.testing.assert_array_equal(bound.workers_per_task, single.workers_per_task)


def test_the_bound_never_falls_as_the_budget_grows_and_is_flat_past_the_caps():
    values = [b.value for b in accuracy_upper_bounds(problem_with(1), budgets=range(0, 120, 5))]
    assert np.all(np.diff(values) >= -1e-15)
    assert values[-1] == values[-2]  # 90 pairs is all the per-task caps allow


@pytest.mark.parametrize("by_category", [False, True])
def test_workers_with_a_cap_of_zero_are_left_out_of_the_bound(by_category):
    rng = np.random.default_rng(11)
    table = rng.uniform(0.5, 0.95, (8, 3))
    categories = rng.integers(0, 3, 25)
    idle = np.array([0, 3, 4])
    caps = np.full(8, 10)
    caps[idle] = 0
    working = np.setdiff1d(np.arange(8), idle)

    def problem(quality, per_worker):
        return AssignmentProblem(
            QualityByCategory(*quality) if by_category else quality[0][:, quality[1]],
            max_workers_per_task=4,
            max_tasks_per_worker=per_worker,
            budget=60,
        )

    with_idle = accuracy_upper_bound(problem((table, categories), caps))
    without = accuracy_upper_bound(problem((table[working], categories), caps[working]))
    assert with_idle.value == without.value
    np.testing.assert_array_equal(with_idle.workers_per_task, without.workers_per_task)
