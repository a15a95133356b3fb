"""The reference methods (assignment/engine/baselines.py): random is a feasible assignment of
maximal size, q-lp a feasible rounding of the LP of Ho, Jabbari & Vaughan (2013)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from assignment.engine import baselines
from assignment.engine.baselines import random_assignment, random_pairs
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.solve import solve


def make_problem(seed=0, n=8, m=20, **kwargs):
    rng = np.random.default_rng(seed)
    quality = kwargs.pop("quality", None)
    if quality is None:
        quality = rng.uniform(0.5, 0.95, (n, m))
    kwargs = {"max_workers_per_task": 3, "max_tasks_per_worker": 5, "budget": 30} | kwargs
    return AssignmentProblem(quality, **kwargs)


CASES = {
    "plain": {},
    "budget 0": {"budget": 0},
    "budget above every cap": {"budget": 10_000},
    "per-worker and per-task caps": {
        "max_tasks_per_worker": np.arange(8) % 4,
        "max_workers_per_task": np.tile([0, 1, 2, 4], 5),
    },
    "a third of the pairs ineligible": {
        "eligible": np.random.default_rng(1).random((8, 20)) > 1 / 3,
    },
    "skewed priors": {"prior": np.linspace(0.05, 0.95, 20)},
}


def _can_add(problem, assignment):
    """Pairs that could be added to ``assignment`` without breaking a cap or the mask."""
    if assignment.sum() >= problem.budget:
        return np.zeros(problem.shape, bool)
    room = (assignment.sum(axis=1) < problem.max_tasks_per_worker)[:, None] & (
        assignment.sum(axis=0) < problem.max_workers_per_task
    )[None, :]
    eligible = np.ones(problem.shape, bool) if problem.eligible is None else problem.eligible
    return room & eligible & ~assignment


# --------------------------------------------------------------------------- random


@pytest.mark.parametrize("case", list(CASES))
def test_random_is_feasible_and_no_pair_can_be_added(case):
    problem = make_problem(**CASES[case])
    assignment = random_assignment(problem, rng=np.random.default_rng(0))
    assert assignment.shape == problem.shape
    assert problem.is_feasible(assignment)
    assert not _can_add(problem, assignment).any()


def test_random_takes_as_many_pairs_as_the_caps_allow():
    # Budget 30 against caps that allow 8 x 5 = 40 and 20 x 3 = 60 pairs: the budget binds.
    assert random_assignment(make_problem(), rng=np.random.default_rng(0)).sum() == 30
    # Without the budget the worker caps bind: 8 workers x 5 tasks.
    wide = make_problem(budget=10_000)
    assert random_assignment(wide, rng=np.random.default_rng(0)).sum() == 40


def test_random_depends_on_the_seed_only():
    problem = make_problem()
    first, again = (random_assignment(problem, rng=np.random.default_rng(4)) for _ in range(2))
    np.testing.assert_array_equal(first, again)
    other = random_assignment(problem, rng=np.random.default_rng(5))
    assert not np.array_equal(first, other)


def test_random_pairs_are_random_assignments_pairs_up_to_the_search_limit():
    problem = make_problem(**CASES["per-worker and per-task caps"])
    output = random_pairs(problem, rng=np.random.default_rng(3))
    workers, tasks = output.rows, output.cols
    dense = random_assignment(problem, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(np.stack(np.nonzero(dense)), np.stack([workers, tasks]))
    assert output.details == {"searched_pairs": None, "most_pairs": None}


@pytest.mark.parametrize("case", list(CASES))
def test_random_over_candidate_pairs_is_feasible_for_every_cap_mix(case, monkeypatch):
    monkeypatch.setattr(baselines, "MAX_SEARCH_PAIRS", 40)  # 160 pairs: the candidate path
    problem = make_problem(**CASES[case])
    output = random_pairs(problem, rng=np.random.default_rng(0))
    assert problem.is_feasible_pairs(output.rows, output.cols)
    assert 0 < output.details["searched_pairs"] < 160


def test_random_over_candidate_pairs_takes_the_most_the_caps_allow_and_says_so(monkeypatch):
    monkeypatch.setattr(baselines, "MAX_SEARCH_PAIRS", 1_000)
    # 400 tasks x 3 workers: the binding caps (60 workers x 40 tasks would allow 2,400)
    problem = make_problem(n=60, m=400, budget=10_000, max_tasks_per_worker=40)
    output = random_pairs(problem, rng=np.random.default_rng(0))
    workers, tasks, message = output.rows, output.cols, output.message
    assert problem.is_feasible_pairs(workers, tasks)
    assert workers.size == 1_200 == output.details["most_pairs"]
    assert message.endswith("(the most the caps allow)")
    again = random_pairs(problem, rng=np.random.default_rng(0))
    other = random_pairs(problem, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(again.rows, workers)
    assert not np.array_equal(other.rows, workers)


def test_random_over_candidate_pairs_draws_more_while_it_falls_short_and_says_when_it_does(
    monkeypatch,
):
    monkeypatch.setattr(baselines, "MAX_SEARCH_PAIRS", 10_000)
    n, m = 200, 100  # 20,000 pairs, one worker per task, 20 eligible workers per task
    eligible = np.zeros((n, m), bool)
    for j in range(m):
        eligible[np.random.default_rng(j).choice(n, 20, replace=False), j] = True
    caps = {"max_workers_per_task": 1, "max_tasks_per_worker": 100, "budget": 1_000}
    problem = AssignmentProblem(np.full((n, m), 0.8), eligible=eligible, **caps)
    output = random_pairs(problem, rng=np.random.default_rng(0))
    workers, tasks, message = output.rows, output.cols, output.message
    assert problem.is_feasible_pairs(workers, tasks)
    assert workers.size == m == output.details["most_pairs"]
    assert message.endswith("(the most the caps allow)")
    # 4 draws per task find no eligible worker for most tasks: it drew more.
    assert output.details["searched_pairs"] > 4 * m
    eligible[:, 7] = False  # task 7 can have nobody
    problem = AssignmentProblem(np.full((n, m), 0.8), eligible=eligible, **caps)
    output = random_pairs(problem, rng=np.random.default_rng(0))
    workers, tasks, message = output.rows, output.cols, output.message
    assert problem.is_feasible_pairs(workers, tasks)
    assert workers.size == m - 1
    assert output.details["most_pairs"] == m
    assert message.endswith("(the caps allow 100)")


def test_random_over_candidate_pairs_builds_no_workers_by_tasks_array(monkeypatch):
    monkeypatch.setattr(baselines, "MAX_SEARCH_PAIRS", 20_000)
    n, m = 2_000, 5_000  # 10 million pairs: 80 MB for one float64 per pair
    problem = AssignmentProblem(
        QualityByCategory(np.full((n, 1), 0.8), np.zeros(m, np.int64)),
        max_workers_per_task=3,
        max_tasks_per_worker=40,
        budget=15_000,
    )
    random_pairs(problem, rng=np.random.default_rng(1))  # the kernels' first call made
    tracemalloc.start()
    try:
        workers = random_pairs(problem, rng=np.random.default_rng(0)).rows
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert workers.size == 15_000
    assert peak < 20_000_000, f"{peak:,} bytes at the peak"


# --------------------------------------------------------------------------- q-lp


@pytest.mark.parametrize("case", list(CASES))
def test_q_lp_is_feasible_for_every_cap_mix(case):
    problem = make_problem(**CASES[case])
    result = solve(problem, method="q-lp", seed=0)
    assert problem.is_feasible(result.assignment)
    if problem.budget == 0:
        assert result.n_assigned == 0


def test_q_lp_never_assigns_a_worker_who_only_guesses():
    # (2 Q - 1)^2 = 0 at Q = 0.5: such a worker earns the LP nothing and is left out, even
    # with room to spare.
    quality = np.full((6, 10), 0.5)
    quality[:2] = 0.8
    problem = make_problem(quality=quality, budget=60, max_tasks_per_worker=10)
    result = solve(problem, method="q-lp", seed=0)
    assert problem.is_feasible(result.assignment)
    assert not result.assignment[2:].any()
    assert result.assignment[:2].sum() > 0


def test_q_lp_reports_its_credit_cap_and_an_lp_objective_no_rounding_exceeds():
    problem = make_problem(seed=2)
    result = solve(problem, method="q-lp", seed=0, target_error=0.1)
    assert result.details["credit_cap"] == pytest.approx(2 * math.log(1 / 0.1))
    weights = (2 * problem.quality - 1) ** 2
    credit = np.minimum((weights * result.assignment).sum(axis=0), result.details["credit_cap"])
    # The LP is a relaxation: its optimum bounds the capped credit of any feasible 0/1 point.
    assert credit.sum() <= result.details["lp_objective"] + 1e-6


def test_random_with_every_pair_eligible_fills_the_caps_in_random_order_without_a_projection(
    monkeypatch,
):
    def no_projection(*args, **kwargs):
        raise AssertionError("the projection was called")

    monkeypatch.setattr(baselines, "project", no_projection)
    for budget in (30, 10_000):
        problem = make_problem(budget=budget)
        assignment = random_assignment(problem, rng=np.random.default_rng(0))
        assert problem.is_feasible(assignment)
        assert assignment.sum() == min(budget, 8 * 5)


@pytest.mark.parametrize("seed", range(12))
def test_random_reaches_the_maximum_size_where_filling_in_random_order_can_fall_short(seed):
    # Worker 0 may take task 0 or 1, worker 1 only task 0: taking (0, 0) first leaves one
    # pair where two fit; an augmenting path then finds the two.
    problem = AssignmentProblem(
        np.full((2, 2), 0.7),
        max_workers_per_task=1,
        max_tasks_per_worker=1,
        budget=2,
        eligible=np.array([[True, True], [True, False]]),
    )
    assignment = random_assignment(problem, rng=np.random.default_rng(seed))
    np.testing.assert_array_equal(assignment, [[False, True], [True, False]])


def _max_flow_size(problem):
    """The most pairs any feasible assignment holds, by SciPy's maximum flow on the network
    budget -> source -> workers (caps) -> tasks (one per eligible pair) -> sink (caps)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    n, m = problem.shape
    top, source, sink = 0, 1, 2 + n + m
    eligible = np.ones((n, m), bool) if problem.eligible is None else problem.eligible
    rows, cols = np.nonzero(eligible)
    tails = np.concatenate([[top], np.full(n, source), 2 + rows, 2 + n + np.arange(m)])
    heads = np.concatenate([[source], 2 + np.arange(n), 2 + n + cols, np.full(m, sink)])
    caps = np.concatenate(
        [
            [problem.budget],
            problem.max_tasks_per_worker,
            np.ones(rows.size),
            problem.max_workers_per_task,
        ]
    ).astype(np.int32)
    graph = csr_matrix((caps, (tails, heads)), shape=(sink + 1, sink + 1))
    return maximum_flow(graph, top, sink).flow_value


@pytest.mark.parametrize("augment", [True, False])
@pytest.mark.parametrize("seed", range(40))
def test_random_is_a_maximum_flow_whatever_the_eligibility_and_caps(seed, augment, monkeypatch):
    if not augment:  # too many pairs missing for augmenting paths: the projection instead
        monkeypatch.setattr(baselines, "AUGMENT_WORK", 0)
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 9)), int(rng.integers(1, 25))
    problem = AssignmentProblem(
        rng.uniform(0.5, 0.9, (n, m)),
        max_workers_per_task=rng.integers(0, n + 1, m),
        max_tasks_per_worker=rng.integers(0, m + 1, n),
        budget=int(rng.integers(0, n * m + 1)),
        eligible=rng.random((n, m)) < rng.uniform(0.1, 0.9),
    )
    assignment = random_assignment(problem, rng=np.random.default_rng(seed))
    assert problem.is_feasible(assignment)
    assert assignment.sum() == _max_flow_size(problem)
