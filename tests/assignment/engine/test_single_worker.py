"""At most one worker per task (assignment/engine/single_worker.py): the per-pair gains are the
engine's exact accuracy, and tvcs-iht reaches the optimum, checked against HiGHS."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from assignment.engine import AssignmentProblem, solve
from assignment.engine._problem_accuracy import accuracy_of as exact_accuracy
from assignment.engine.single_worker import single_worker_gains, single_worker_optimum


def one_worker_problem(seed: int, *, n_labels=2, masked=False, n=12, m=40):
    rng = np.random.default_rng(seed)
    kwargs = {
        "max_workers_per_task": rng.integers(0, 2, m),
        "max_tasks_per_worker": rng.integers(0, 6, n),
        "budget": int(rng.integers(5, 30)),
    }
    if n_labels == 2:
        kwargs["prior"] = rng.uniform(0.2, 0.8, m)
        quality = rng.uniform(0.3, 0.95, (n, m))
    else:
        kwargs["prior"] = rng.dirichlet(np.full(n_labels, 2.0), size=m)
        kwargs["n_labels"] = n_labels
        quality = rng.uniform(0.2, 0.95, (n, m))
    if masked:
        kwargs["eligible"] = rng.random((n, m)) < 0.6
    return AssignmentProblem(quality, **kwargs)


def lp_optimum(problem: AssignmentProblem) -> float:
    """max sum of gains under the caps, the budget and the mask: an LP whose optimum is
    integral (a bipartite transportation polytope with a total cap)."""
    n, m = problem.shape
    gains = single_worker_gains(problem).reshape(-1)
    rows = np.kron(np.eye(n), np.ones(m))
    cols = np.kron(np.ones(n), np.eye(m))
    a_ub = np.vstack([rows, cols, np.ones((1, n * m))])
    b_ub = np.concatenate(
        [problem.max_tasks_per_worker, problem.max_workers_per_task, [problem.budget]]
    )
    upper = np.ones(n * m) if problem.eligible is None else problem.eligible.reshape(-1) * 1.0
    res = linprog(-gains, A_ub=a_ub, b_ub=b_ub, bounds=list(zip(0 * upper, upper, strict=True)))
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("n_labels", [2, 3])
def test_each_gain_is_the_exact_accuracy_of_the_worker_alone_minus_nobodys(n_labels):
    problem = one_worker_problem(0, n_labels=n_labels, n=5, m=8)
    gains = single_worker_gains(problem)
    nobody = exact_accuracy(problem, np.zeros(problem.shape, bool))
    for i, j in [(0, 0), (1, 3), (4, 7), (2, 5)]:
        alone = np.zeros(problem.shape, bool)
        alone[i, j] = True
        assert gains[i, j] / problem.n_tasks == pytest.approx(
            exact_accuracy(problem, alone) - nobody, abs=1e-12
        )


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("n_labels", [2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_tvcs_iht_reaches_the_lp_optimum_with_one_worker_per_task(seed, n_labels, masked):
    problem = one_worker_problem(seed, n_labels=n_labels, masked=masked)
    nobody = exact_accuracy(problem, np.zeros(problem.shape, bool))
    result = solve(problem, method="tvcs-iht", seed=seed)
    assert problem.is_feasible(result.assignment)
    best = nobody + lp_optimum(problem) / problem.n_tasks
    assert result.expected_accuracy == pytest.approx(best, abs=1e-9)
    greedy = solve(problem, method="greedy", seed=seed)
    assert result.expected_accuracy >= greedy.expected_accuracy - 1e-12


def test_where_greedy_takes_the_good_worker_first_the_projection_finds_the_better_split():
    # Worker 0 is good on both tasks, worker 1 on task 0 only; each may take one task.
    quality = np.array([[0.90, 0.85], [0.88, 0.50]])
    problem = AssignmentProblem(
        quality, max_workers_per_task=1, max_tasks_per_worker=1, budget=2, prior=0.5
    )
    greedy = solve(problem, method="greedy")
    iht = solve(problem, method="tvcs-iht", seed=0)
    assert greedy.expected_accuracy == pytest.approx((0.90 + 0.50) / 2)
    assert iht.expected_accuracy == pytest.approx((0.88 + 0.85) / 2)
    np.testing.assert_array_equal(iht.assignment, [[False, True], [True, False]])
    assert (iht.iterations, iht.details["stopped"]) == (0, "single_worker")


def test_it_leaves_problems_with_more_than_one_worker_per_task_to_the_steps():
    problem = one_worker_problem(1)
    wider = AssignmentProblem(
        problem.quality, max_workers_per_task=2, max_tasks_per_worker=5, budget=20
    )
    assert single_worker_optimum(wider) is None
    assert single_worker_optimum(problem) is not None


@pytest.mark.parametrize("n_labels", [3, 4])
def test_k_class_gains_read_the_same_log_prior_as_every_k_class_accuracy(n_labels):
    # One rule for the K-class log prior (multiclass._log_prior): the gain of worker i alone
    # is, to the bit, the public per-task accuracy of "worker i on every task" minus the
    # prior's best guess. np.log of the distribution differs in the last bit on some entries.
    from assignment.engine.multiclass import task_accuracy_multiclass

    problem = one_worker_problem(2, n_labels=n_labels, n=6, m=60)
    gains = single_worker_gains(problem)
    nobody = problem.prior_distribution.max(axis=1)
    for i in range(problem.n_workers):
        alone = np.zeros(problem.shape, bool)
        alone[i] = True
        per_task = task_accuracy_multiclass(
            problem.quality, alone, prior=problem.prior_distribution, n_labels=n_labels
        )
        np.testing.assert_array_equal(gains[i], np.maximum(per_task - nobody, 0.0))
