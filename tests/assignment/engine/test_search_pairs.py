"""The pairs tvcs-iht searches: all of them on small problems; on large ones the start's pairs
and each task's most reliable workers, over which the step and the projection are the same as
on the full matrix."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine import search_pairs as search_pairs_module
from assignment.engine.greedy import greedy_assignment
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.search_pairs import SearchPairs, search_pairs
from assignment.engine.surrogate import Surrogate
from projections.tvcs import project


def make_problem(seed=0, n=12, m=40, *, categories=None, eligible=None):
    rng = np.random.default_rng(seed)
    if categories is None:
        quality = rng.uniform(0.3, 0.95, (n, m))
    else:
        quality = QualityByCategory(
            rng.uniform(0.3, 0.95, (n, categories)), rng.integers(0, categories, m)
        )
    return AssignmentProblem(
        quality,
        max_workers_per_task=3,
        max_tasks_per_worker=8,
        budget=80,
        prior=0.5,
        eligible=eligible,
    )


def candidates_by_hand(problem, start, k):
    """Each task's k most reliable eligible workers (ties to the lower worker), and the start."""
    q = problem.quality
    chosen = np.array(start, dtype=bool)
    for j in range(problem.n_tasks):
        ranked = sorted(range(problem.n_workers), key=lambda i: (-abs(2 * q[i, j] - 1), i))
        if problem.eligible is not None:
            ranked = [i for i in ranked if problem.eligible[i, j]]
        chosen[ranked[:k], j] = True
    return chosen


def test_a_small_problem_searches_every_pair():
    problem = make_problem()
    pairs = search_pairs(problem, np.zeros(problem.shape, bool))
    assert pairs.entries is None
    assert pairs.size == problem.n_workers * problem.n_tasks


@pytest.mark.parametrize("form", ["dense", "by category", "eligible"])
def test_a_large_problem_searches_the_start_and_each_tasks_most_reliable_workers(form, monkeypatch):
    eligible = np.random.default_rng(9).random((12, 40)) < 0.6 if form == "eligible" else None
    problem = make_problem(1, categories=5 if form == "by category" else None, eligible=eligible)
    start = greedy_assignment(problem).assignment
    limit = 200  # k = max(2 * 3, 200 // 40 - 3) = 6 workers per task
    monkeypatch.setattr(search_pairs_module, "MAX_SEARCH_PAIRS", limit)
    pairs = search_pairs(problem, start)
    np.testing.assert_array_equal(
        pairs.expand(np.ones(pairs.size, bool)), candidates_by_hand(problem, start, 6)
    )
    assert np.all(np.diff(pairs.entries) > 0)  # ascending, no pair twice


def test_restrict_and_expand_are_inverse_on_the_pairs():
    problem = make_problem(2)
    entries = np.array([0, 5, 41, 77, 479])
    pairs = SearchPairs(problem, entries)
    matrix = np.zeros(problem.shape, bool)
    matrix.reshape(-1)[entries[[1, 3]]] = True
    np.testing.assert_array_equal(pairs.restrict(matrix), [False, True, False, True, False])
    np.testing.assert_array_equal(pairs.expand(pairs.restrict(matrix)), matrix)
    np.testing.assert_array_equal(pairs.workers, entries // 40)
    np.testing.assert_array_equal(pairs.tasks, entries % 40)
    np.testing.assert_array_equal(pairs.quality(), problem.quality.reshape(-1)[entries])


@pytest.mark.parametrize("categories", [None, 4])
def test_a_step_over_candidates_is_the_full_step_at_those_pairs(categories):
    problem = make_problem(3, categories=categories)
    rng = np.random.default_rng(4)
    entries = np.flatnonzero(rng.random(problem.n_workers * problem.n_tasks) < 0.3)
    pairs = SearchPairs(problem, entries)
    x_full = np.zeros(problem.n_workers * problem.n_tasks)
    x_full[entries] = rng.uniform(0.0, 1.0, entries.size) * (rng.random(entries.size) < 0.5)
    full = Surrogate(problem, temperature=0.6, batch_size=3)
    part = Surrogate(problem, pairs=pairs, temperature=0.6, batch_size=3)
    value, y, v = full.step(x_full, np.random.default_rng(5), 1.5)
    value_p, y_p, v_p = part.step(x_full[entries], np.random.default_rng(5), 1.5)
    assert value_p == value
    np.testing.assert_array_equal(y_p, y[entries])
    np.testing.assert_array_equal(v_p, v[entries])


def test_the_projection_over_candidates_is_feasible_for_the_whole_problem(monkeypatch):
    problem = make_problem(6, categories=3)
    start = greedy_assignment(problem).assignment
    monkeypatch.setattr(search_pairs_module, "MAX_SEARCH_PAIRS", 200)
    pairs = search_pairs(problem, start)
    weights = np.random.default_rng(7).random(pairs.size)
    support = pairs.expand(project(weights, pairs.structure).support)
    assert problem.is_feasible(support)
    assert not (support & ~pairs.expand(np.ones(pairs.size, bool))).any()
    assert support.sum() > 0
