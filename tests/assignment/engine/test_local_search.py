"""The final pass of tvcs-iht: prune and destroy-and-repair by exact accuracies."""

from __future__ import annotations

import time

import numpy as np
import pytest

from assignment.engine.accuracy import expected_accuracy, removal_losses, task_accuracy
from assignment.engine.greedy import GreedyState, fill, greedy_assignment, greedy_run
from assignment.engine.local_search import FREE_LOSS, improve, prune
from assignment.engine.problem import AssignmentProblem
from assignment.engine.upper_bound import accuracy_upper_bound
from projections.tvcs import project


def figure4_problem(seed=0, n=30, m=200, r=0.05, **kwargs):
    q = np.random.default_rng(seed).uniform(0.5, 0.9, (n, m))
    k, t = max(1, round(r * n)), max(1, round(r * m))
    return AssignmentProblem(
        q,
        max_workers_per_task=k,
        max_tasks_per_worker=t,
        budget=int(0.8 * min(m * k, n * t)),
        **kwargs,
    )


def linear_start(problem):
    """The projection of the linear weights (2Q - 1)^2: tvcs-iht's starting point."""
    weights = problem.mask(np.abs(2 * problem.quality - 1))
    return project(weights, problem.structure).support


def test_prune_keeps_every_task_as_accurate_and_leaves_nothing_free_to_remove():
    problem = figure4_problem(seed=1, r=0.1)
    start = linear_start(problem)
    pruned = prune(problem, start)
    assert not np.any(pruned & ~start)
    assert pruned.sum() < start.sum()  # under prior 0.5 the linear start has useless workers
    before = task_accuracy(problem.quality, start, prior=problem.prior)
    after = task_accuracy(problem.quality, pruned, prior=problem.prior)
    assert np.all(after >= before - 1e-9)
    _, tasks, loss = removal_losses(problem.quality, pruned, prior=problem.prior)
    crowded = pruned.sum(axis=0)[tasks] >= 2
    assert np.all(loss[crowded] > FREE_LOSS)


def test_prune_removes_the_less_reliable_of_two_equal_contributors_and_a_misleading_worker():
    q = np.array([[0.9, 0.8], [0.7, 0.5], [0.6, 0.85]])
    problem = AssignmentProblem(q, max_workers_per_task=3, max_tasks_per_worker=2, budget=6)
    pruned = prune(problem, np.ones_like(q, dtype=bool))
    # task 0: 0.9 beats 0.7 + 0.6 together, so both go; task 1: Q = 0.5 says nothing, and
    # 0.85 alone is as good as 0.85 with 0.8
    np.testing.assert_array_equal(pruned, [[True, False], [False, False], [False, True]])


def test_prune_restricted_to_some_tasks_leaves_the_others_alone():
    problem = figure4_problem(seed=2, r=0.1)
    start = linear_start(problem)
    some = np.arange(0, problem.n_tasks, 3)
    pruned = prune(problem, start, tasks=some)
    others = np.setdiff1d(np.arange(problem.n_tasks), some)
    np.testing.assert_array_equal(pruned[:, others], start[:, others])
    np.testing.assert_array_equal(pruned[:, some], prune(problem, start)[:, some])


@pytest.mark.parametrize("seed", range(3))
def test_improve_is_feasible_never_worse_and_reaches_the_bound_on_figure_4_instances(seed):
    problem = figure4_problem(seed=seed, r=0.1)
    start = linear_start(problem)
    start_accuracy = expected_accuracy(problem.quality, start, prior=problem.prior)
    out = improve(problem, start, rng=np.random.default_rng(0))
    assert problem.is_feasible(out.assignment)
    assert out.accuracy == pytest.approx(
        expected_accuracy(problem.quality, out.assignment, prior=problem.prior), abs=1e-12
    )
    assert out.accuracy > start_accuracy + 0.01
    assert out.history == sorted(out.history)
    bound = accuracy_upper_bound(problem).value
    assert out.accuracy <= bound + 1e-9
    assert bound - out.accuracy < 0.002  # within 0.2 point of the bound
    np.testing.assert_array_equal(prune(problem, out.assignment), out.assignment)


def test_improve_is_a_deterministic_function_of_its_seed_and_does_not_mutate_its_input():
    problem = figure4_problem(seed=3)
    start = linear_start(problem)
    copy = start.copy()
    a = improve(problem, start, rng=np.random.default_rng(5))
    b = improve(problem, start, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.assignment, b.assignment)
    np.testing.assert_array_equal(start, copy)


def test_improve_keeps_eligibility_and_caps_per_task_and_worker():
    rng = np.random.default_rng(4)
    q = rng.uniform(0.0, 1.0, (15, 40))
    eligible = rng.random(q.shape) < 0.6
    problem = AssignmentProblem(
        q,
        max_workers_per_task=rng.integers(0, 6, 40),
        max_tasks_per_worker=rng.integers(0, 12, 15),
        budget=90,
        prior=rng.uniform(0.1, 0.9, 40),
        eligible=eligible,
    )
    out = improve(problem, np.zeros(q.shape, dtype=bool), rng=np.random.default_rng(0))
    assert problem.is_feasible(out.assignment)
    assert out.accuracy >= expected_accuracy(q, np.zeros(q.shape, bool), prior=problem.prior)


def test_a_passed_deadline_only_prunes():
    problem = figure4_problem(seed=5, r=0.1)
    start = linear_start(problem)
    out = improve(problem, start, rng=np.random.default_rng(0), deadline=time.perf_counter())
    np.testing.assert_array_equal(out.assignment, prune(problem, start))
    assert out.rounds == 0
    assert out.stopped == "time_limit"
    assert out.changed == int((out.assignment != start).sum())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_rounds": -1}, "max_rounds must be a non-negative integer"),
        ({"max_rounds": 2.5}, "max_rounds must be a non-negative integer"),
        ({"removal_fraction": 0.0}, r"removal_fraction must be in \(0, 1\]"),
        ({"worker_fraction": 1.5}, r"worker_fraction must be in \(0, 1\]"),
        ({"max_worker_fraction": 0}, r"max_worker_fraction must be in \(0, 1\]"),
    ],
)
def test_bad_options_are_rejected(kwargs, message):
    problem = figure4_problem()
    with pytest.raises(ValueError, match=message):
        improve(problem, linear_start(problem), rng=np.random.default_rng(0), **kwargs)


def test_improve_without_destroy_rounds_runs_round_zero_and_says_so_in_its_message():
    problem = figure4_problem(seed=3, r=0.1)
    start = linear_start(problem)
    out = improve(problem, start, rng=np.random.default_rng(0), max_rounds=0)
    assert (out.rounds, out.stopped) == (1, "max_rounds")
    assert out.changed == int((out.assignment != start).sum())
    assert out.message.startswith(f"1 round(s); {out.changed} pair(s) changed")


@pytest.mark.parametrize("seed", range(3))
def test_greedys_own_assignment_skips_round_zero_and_ends_where_running_it_ends(seed):
    problem = figure4_problem(seed=seed, r=0.1, prior=0.5)
    start = greedy_assignment(problem).assignment
    assert np.array_equal(prune(problem, start), start)

    ran = improve(problem, start, rng=np.random.default_rng(1), max_rounds=4)
    skipped = improve(problem, start, rng=np.random.default_rng(1), max_rounds=4, filled=True)

    np.testing.assert_array_equal(skipped.assignment, ran.assignment)
    assert skipped.accuracy == ran.accuracy
    assert skipped.rounds == ran.rounds - 1


def test_filled_still_runs_round_zero_when_pruning_changes_the_assignment():
    problem = figure4_problem(seed=0, r=0.1, prior=0.5)
    start = greedy_assignment(problem).assignment.copy()
    three = np.flatnonzero(start.sum(axis=0) == 3)[0]  # left with two, one of them adds nothing
    start[np.flatnonzero(start[:, three])[0], three] = False
    assert not np.array_equal(prune(problem, start), start)

    ran = improve(problem, start, rng=np.random.default_rng(1), max_rounds=2)
    filled = improve(problem, start, rng=np.random.default_rng(1), max_rounds=2, filled=True)

    np.testing.assert_array_equal(filled.assignment, ran.assignment)
    assert filled.rounds == ran.rounds


def test_prune_rejects_an_assignment_of_another_shape_and_tasks_out_of_range():
    problem = figure4_problem(n=10, m=20)
    start = linear_start(problem)
    with pytest.raises(ValueError, match="must have the problem's shape"):
        prune(problem, start[:, :5])
    with pytest.raises(ValueError, match=r"tasks must be indices in \[0, 20\)"):
        prune(problem, start, tasks=[3, 20])


def test_a_stalled_search_goes_on_with_larger_worker_blocks_and_never_ends_worse():
    problem = figure4_problem(seed=6, r=0.1)
    start = linear_start(problem)
    fixed = improve(
        problem, start, rng=np.random.default_rng(2), worker_fraction=0.1, max_worker_fraction=0.1
    )
    growing = improve(problem, start, rng=np.random.default_rng(2), worker_fraction=0.1)
    assert fixed.stopped == "stalled"
    assert growing.rounds > fixed.rounds
    assert growing.accuracy >= fixed.accuracy
    assert growing.history[: len(fixed.history)] == fixed.history


def _state_fields(state):
    return (
        [sorted(ws) for ws in state.workers],
        state.load.tolist(),
        state.open_worker.tolist(),
        state.budget_left,
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedys_state_moved_to_another_assignment_holds_what_a_new_state_started_there_holds(
    seed,
):
    problem = figure4_problem(seed=seed, prior=np.random.default_rng(seed).uniform(0.3, 0.7, 200))
    _, moved = greedy_run(problem)
    target = linear_start(problem)  # a feasible assignment far from greedy's
    moved.move_to_pairs(*np.nonzero(target))
    fresh = GreedyState(problem)
    fresh.start_from(target)
    assert _state_fields(moved) == _state_fields(fresh)
    np.testing.assert_array_equal(moved.assignment, target)
    np.testing.assert_allclose(moved.acc, fresh.acc, rtol=0, atol=1e-12)
    exact = task_accuracy(problem.quality, target, prior=problem.prior)
    np.testing.assert_allclose(moved.acc, exact, rtol=0, atol=1e-12)
    fill(moved)
    fill(fresh)  # and both fill alike from there
    np.testing.assert_array_equal(moved.assignment, fresh.assignment)


@pytest.mark.parametrize("seed", [0, 1])
def test_improve_from_greedys_state_ends_where_it_ends_from_a_new_state(seed):
    problem = figure4_problem(seed=seed)
    _, state = greedy_run(problem)
    start = linear_start(problem)
    fresh = improve(problem, start, rng=np.random.default_rng(seed), max_rounds=4)
    taken = improve(problem, start, rng=np.random.default_rng(seed), max_rounds=4, state=state)
    np.testing.assert_array_equal(taken.assignment, fresh.assignment)
    assert taken.accuracy == fresh.accuracy
    assert taken.history == fresh.history


def test_improve_takes_only_a_symmetric_greedy_state():
    problem = figure4_problem()
    start = linear_start(problem)
    with pytest.raises(ValueError, match="state must be a GreedyState"):
        improve(problem, start, rng=np.random.default_rng(0), state=object())


@pytest.mark.parametrize("seed", range(3))
def test_improve_scores_each_round_by_the_exact_accuracy_of_the_whole_assignment(seed):
    # The rounds rescore only the tasks they changed; the accuracy they report is still, to
    # the bit, the exact accuracy of the whole assignment.
    rng = np.random.default_rng(seed)
    quality = 0.5 + 0.45 * np.outer(rng.uniform(0, 1, 20), rng.uniform(0.2, 1, 60))
    problem = AssignmentProblem(
        quality, max_workers_per_task=6, max_tasks_per_worker=18, budget=360, prior=0.5
    )
    start = greedy_assignment(problem).assignment
    out = improve(problem, start, rng=np.random.default_rng(seed), max_rounds=6)
    assert out.accuracy == expected_accuracy(problem.quality, out.assignment, prior=0.5)
    assert out.history[0] == expected_accuracy(problem.quality, prune(problem, start), prior=0.5)
