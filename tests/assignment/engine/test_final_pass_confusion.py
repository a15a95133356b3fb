"""tvcs-iht's final pass under Dawid–Skene confusion matrices
(docs/design.md#under-confusion-matrices): prune by the Dawid–Skene leave-one-out losses, refill
by DS greedy's moves, destroy-and-repair rounds kept only when the Dawid–Skene accuracy rises."""

from __future__ import annotations

import numpy as np
import pytest
from confusion_crowds import brute_force_optimum, ds_accuracy
from confusion_problems import random_problem

from assignment.engine.greedy_confusion import (
    ConfusionGreedyState,
    greedy_confusion,
    max_confusion_workers,
    removal_losses_confusion,
)
from assignment.engine.local_search import FREE_LOSS, improve, prune
from assignment.engine.problem import AssignmentProblem
from assignment.engine.solve import solve


def random_start(problem: AssignmentProblem, seed: int) -> np.ndarray:
    """A feasible assignment of random pairs, within the exact limit of the matrices."""
    rng = np.random.default_rng(seed)
    out = solve(problem, method="random", seed=seed)
    keep = np.ones(out.rows.shape[0], dtype=bool)
    limit = max_confusion_workers(problem.n_labels)
    for j in np.unique(out.cols):
        on = np.flatnonzero(out.cols == j)
        keep[rng.permutation(on)[limit:]] = False
    start = np.zeros(problem.shape, dtype=bool)
    start[out.rows[keep], out.cols[keep]] = True
    return start


@pytest.mark.parametrize("seed", range(12))
def test_the_final_pass_under_the_matrices_never_lowers_the_dawid_skene_accuracy(seed):
    problem = random_problem(seed, n=9, m=8, k=2 + seed % 3, per_worker=4, budget=20, mask=True)
    for start in (greedy_confusion(problem).assignment, random_start(problem, seed)):
        before = ds_accuracy(problem, *np.nonzero(start))
        out = improve(problem, start, rng=np.random.default_rng(seed), max_rounds=6)
        assert problem.is_feasible(out.assignment)
        assert out.accuracy == ds_accuracy(problem, *np.nonzero(out.assignment))
        assert out.accuracy >= before - problem.n_tasks * FREE_LOSS
        assert out.assignment.sum(axis=0).max() <= max_confusion_workers(problem.n_labels)
        assert out.history == sorted(out.history)


def test_from_a_random_start_the_rounds_raise_the_dawid_skene_accuracy_on_most_crowds():
    gains = []
    for seed in range(9):
        problem = random_problem(seed, n=9, m=8, k=2 + seed % 3, per_worker=4, budget=20)
        start = random_start(problem, seed)
        out = improve(problem, start, rng=np.random.default_rng(seed), max_rounds=4)
        gains.append(out.accuracy - ds_accuracy(problem, *np.nonzero(start)))
    assert np.sum(np.array(gains) > 1e-6) >= 7


@pytest.mark.parametrize("seed", range(6))
def test_ds_greedys_own_assignment_skips_round_zero_and_ends_where_running_it_ends(seed):
    problem = random_problem(seed, n=9, m=8, k=2 + seed % 3, per_worker=4, budget=20)
    start = greedy_confusion(problem).assignment
    if not np.array_equal(prune(problem, start), start):
        pytest.skip("pruning changes this greedy assignment: round 0 runs either way")

    ran = improve(problem, start, rng=np.random.default_rng(seed), max_rounds=4)
    skipped = improve(problem, start, rng=np.random.default_rng(seed), max_rounds=4, filled=True)

    np.testing.assert_array_equal(skipped.assignment, ran.assignment)
    assert skipped.accuracy == ran.accuracy
    assert skipped.rounds == ran.rounds - 1


@pytest.mark.parametrize("k", [2, 3, 4])
def test_tvcs_iht_under_the_matrices_is_never_below_ds_greedy_on_small_random_crowds(k):
    kept = []
    for seed in range(10):
        problem = random_problem(
            10 * k + seed, n=10, m=12, k=k, per_worker=4, budget=26, mask=seed % 2 == 0
        )
        greedy = solve(problem, method="greedy")
        result = solve(problem, method="tvcs-iht", seed=seed, max_iter=4)
        assert problem.is_feasible_pairs(result.rows, result.cols)
        assert result.expected_accuracy >= greedy.expected_accuracy
        assert result.details["final_pass_accuracy"] >= result.details["greedy_accuracy"]
        kept.append(result.details["kept"])
    assert "final pass" in kept


def test_on_tiny_crowds_tvcs_iht_reaches_the_optimum_more_often_than_ds_greedy():
    greedy_hits = iht_hits = 0
    for seed in range(24):
        problem = random_problem(seed, n=4, m=2, k=2 + seed % 3, per_worker=2, budget=5)
        optimum = brute_force_optimum(problem)
        greedy = solve(problem, method="greedy").expected_accuracy
        iht = solve(problem, method="tvcs-iht", seed=seed, max_iter=3).expected_accuracy
        assert iht <= optimum + 1e-12
        assert iht >= greedy
        greedy_hits += greedy >= optimum - 1e-12
        iht_hits += iht >= optimum - 1e-12
    assert iht_hits > greedy_hits  # 16 of 24 against 14 when written


def test_prune_under_the_matrices_drops_a_worker_whose_answers_carry_nothing():
    """Worker 2 always answers label 0: his quality under the prior (0.7, 0.3) is 0.7, but
    under the matrices his answer says nothing, so his Dawid-Skene removal loss is 0."""
    right = np.array([[0.9, 0.1], [0.2, 0.8]])
    constant = np.array([[1.0, 0.0], [1.0, 0.0]])
    confusion = np.stack([right, right, constant])
    prior = np.array([[0.7, 0.3]])
    problem = AssignmentProblem(
        np.einsum("jc,icc->ij", prior, confusion),
        max_workers_per_task=3,
        max_tasks_per_worker=1,
        budget=3,
        prior=prior,
        confusion=confusion,
    )
    everyone = np.ones((3, 1), dtype=bool)
    assert problem.quality[2, 0] == pytest.approx(0.7)
    _, _, loss = removal_losses_confusion(problem, everyone)
    assert loss[2] == pytest.approx(0.0, abs=1e-15)
    assert loss[:2].min() > 0.01
    assert prune(problem, everyone)[:, 0].tolist() == [True, True, False]


def test_removal_losses_of_some_tasks_are_those_of_every_task_restricted_to_them():
    problem = random_problem(4, n=9, m=8, k=3, per_worker=4, budget=20)
    x = greedy_confusion(problem).assignment
    every = removal_losses_confusion(problem, x)
    tasks = np.array([1, 4, 6])
    some = removal_losses_confusion(problem, x, tasks=tasks)
    on = np.isin(every[1], tasks)
    for a, b in zip(some, every, strict=True):
        np.testing.assert_array_equal(a, b[on])


def test_a_state_started_from_an_assignment_loses_and_regains_pairs_without_touching_its_copy():
    problem = random_problem(2, n=9, m=8, k=4, per_worker=4, budget=20, mask=True)
    x = greedy_confusion(problem).assignment
    state = ConfusionGreedyState(problem)
    state.start_from(x)
    np.testing.assert_array_equal(state.assignment, x)
    assert state.acc.mean() == pytest.approx(ds_accuracy(problem, *np.nonzero(x)), abs=1e-12)
    twin = state.copy()
    workers, tasks = np.nonzero(x)
    twin.remove(workers[:3], tasks[:3])
    assert twin.budget_left == state.budget_left + 3
    np.testing.assert_array_equal(state.assignment, x)
    fresh = ConfusionGreedyState(problem)
    fresh.start_from(twin.assignment)
    np.testing.assert_allclose(twin.acc, fresh.acc, atol=1e-15)


def test_with_refine_off_tvcs_iht_under_the_matrices_keeps_ds_greedy_or_its_search():
    problem = random_problem(7, n=10, m=12, k=3, per_worker=4, budget=26)
    greedy = solve(problem, method="greedy")
    result = solve(problem, method="tvcs-iht", seed=0, refine=False, max_iter=3)
    assert result.details["final_pass_accuracy"] == greedy.expected_accuracy
    assert (result.details["final_pass"], result.details["final_pass_rounds"]) == (False, 0)
    assert result.expected_accuracy >= greedy.expected_accuracy


def test_a_time_limit_bounds_the_final_pass_under_the_matrices_and_the_search_together():
    problem = random_problem(8, n=10, m=12, k=3, per_worker=4, budget=26)
    greedy = solve(problem, method="greedy")
    result = solve(problem, method="tvcs-iht", seed=0, time_limit=1e-6)
    details = result.details
    assert (details["final_pass_stopped"], details["final_pass_rounds"]) == ("time_limit", 0)
    assert result.iterations <= 1  # the search stopped at its first check of the time
    assert result.expected_accuracy >= greedy.expected_accuracy
