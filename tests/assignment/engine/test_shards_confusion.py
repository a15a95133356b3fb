"""Shards under Dawid–Skene confusion matrices: each shard chosen under the matrices, priced by
the Dawid–Skene vote's exact leave-one-out losses, and the merged answer scored by that vote."""

from __future__ import annotations

import numpy as np
import pytest
from confusion_reference import enumerated

from assignment.engine.confusion import confusion_accuracy
from assignment.engine.greedy_confusion import max_confusion_workers, removal_losses_confusion
from assignment.engine.problem import AssignmentProblem
from assignment.engine.shards import ShardJob, shard_prices, shard_problem, solve_sharded
from assignment.engine.solve import METHODS, solve


def crowd(rng, n: int, k: int) -> np.ndarray:
    """(n, K, K): one-coin, biased and class-expert workers, a third each, mixed with 1% of
    the uniform answer (the crowds of benchmarks/greedy_confusion.py)."""
    confusion = np.empty((n, k, k))
    for i in range(n):
        q = rng.uniform(0.55, 0.9)
        c = np.full((k, k), (1 - q) / (k - 1))
        np.fill_diagonal(c, q)
        if i % 3 == 1:
            beta = rng.uniform(0.3, 0.6)
            c = (1 - beta) * c + beta * np.eye(k)[rng.integers(k)][None, :]
        elif i % 3 == 2:
            c = np.full((k, k), 1.0 / k)
            expert = rng.integers(k)
            c[expert] = 0.05 / (k - 1)
            c[expert, expert] = 0.95
        confusion[i] = 0.99 * c + 0.01 / k
    return confusion


def ds_problem(seed=0, *, k=3, n=20, m=200, per_task=4, budget=None, eligible=False):
    rng = np.random.default_rng([seed, k])
    base = np.arange(k, 0, -1.0)
    prior = rng.dirichlet(20 * base / base.sum(), size=m)
    confusion = crowd(rng, n, k)
    return AssignmentProblem(
        np.einsum("jc,icc->ij", prior, confusion),
        max_workers_per_task=per_task,
        max_tasks_per_worker=rng.integers(5, 40, n),
        budget=2 * m if budget is None else budget,
        prior=prior,
        n_labels=k,
        eligible=rng.random((n, m)) < 0.6 if eligible else None,
        confusion=confusion,
    )


def ds_accuracy(problem, assignment) -> float:
    rows, cols = np.nonzero(assignment)
    return confusion_accuracy(
        problem.confusion, rows, cols, prior=problem.prior_distribution
    ).expected_accuracy


@pytest.mark.parametrize("k", [2, 3, 4])
def test_a_leave_one_out_loss_is_what_enumerating_the_answers_with_and_without_the_worker_gives(
    k,
):
    problem = ds_problem(seed=1, k=k, n=8, m=12, per_task=4, budget=40)
    x = solve(problem, method="greedy").assignment
    workers, tasks, loss = removal_losses_confusion(problem, x)
    assert workers.shape[0] == x.sum()
    assert np.all(np.diff(tasks) >= 0)
    for i, j, value in zip(workers, tasks, loss, strict=True):
        members = np.flatnonzero(x[:, j])
        prior = problem.prior_distribution[j]
        without = [w for w in members if w != i]
        expected = enumerated(problem.confusion, prior, members) - enumerated(
            problem.confusion, prior, without
        )
        assert value == pytest.approx(expected, abs=1e-13)
        assert value >= -1e-13  # one more answer never lowers the Dawid-Skene vote


def test_a_shard_carries_its_workers_confusion_matrices():
    problem = ds_problem(seed=2)
    shard = shard_problem(problem, ShardJob(0, np.array([3, 9, 150]), np.full(20, 4), 6))
    np.testing.assert_array_equal(shard.confusion, problem.confusion)
    np.testing.assert_array_equal(shard.prior_distribution, problem.prior_distribution[[3, 9, 150]])


def test_a_shards_prices_under_the_matrices_are_the_dawid_skene_leave_one_out_losses():
    problem = ds_problem(seed=3, m=60, budget=110)
    x = solve(problem, method="greedy").assignment
    price, budget_price = shard_prices(problem, x)
    workers, _, loss = removal_losses_confusion(problem, x)
    full = x.sum(axis=1) == problem.max_tasks_per_worker
    assert full.any()
    for i in range(problem.n_workers):
        expected = max(loss[workers == i].min(), 0.0) if full[i] else 0.0
        assert price[i] == pytest.approx(expected, abs=1e-15)
    assert x.sum() == 110  # the budget binds: its price is the cheapest pair's loss
    assert budget_price == pytest.approx(max(loss.min(), 0.0), abs=1e-15)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_shards", [2, 3])
def test_a_sharded_solve_under_the_matrices_is_feasible_and_reports_the_dawid_skene_accuracy(
    method, n_shards
):
    problem = ds_problem(seed=4, m=90, eligible=True)
    result = solve_sharded(problem, method=method, n_shards=n_shards, rounds=2, seed=0)
    assert problem.is_feasible(result.assignment)
    assert result.accuracy_standard_error is None
    assert result.expected_accuracy == pytest.approx(
        ds_accuracy(problem, result.assignment), abs=1e-12
    )
    accepted = [r.accuracy for r in result.rounds if r.accepted]
    assert accepted == sorted(accepted)
    # Rounds were judged by the Dawid-Skene accuracy: the best kept is the answer's.
    assert max(accepted) == pytest.approx(result.expected_accuracy, abs=1e-12)


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_sharded_dawid_skene_accuracy_is_within_half_a_point_of_one_solve(k, seed):
    problem = ds_problem(seed=seed, k=k)
    single = solve(problem, method="greedy")
    sharded = solve_sharded(problem, method="greedy", n_shards=4)
    assert abs(sharded.expected_accuracy - single.expected_accuracy) < 0.005


def test_sharding_under_the_matrices_beats_sharding_under_the_symmetric_model():
    problem = ds_problem(seed=5)
    under = solve_sharded(problem, method="greedy", n_shards=4)
    symmetric = solve_sharded(problem.symmetric(), method="greedy", n_shards=4)
    assert under.expected_accuracy > ds_accuracy(problem, symmetric.assignment) + 0.005


def test_a_shard_answer_beyond_the_exact_limit_of_the_matrices_is_refused():
    limit = max_confusion_workers(3)
    problem = ds_problem(seed=6, n=12, m=20, per_task=limit + 1, budget=200)
    with pytest.raises(ValueError, match=f"exact for at most {limit} workers a task"):
        solve_sharded(problem, method="random", n_shards=2, seed=0)
