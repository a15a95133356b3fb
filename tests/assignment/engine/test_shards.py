"""solve_sharded: shards of tasks coordinated by prices stay feasible and close to one solve."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine.accuracy import expected_accuracy
from assignment.engine.multiclass import expected_accuracy_multiclass, removal_losses_multiclass
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.shards import (
    ShardJob,
    initial_shares,
    rebalance,
    shard_prices,
    shard_problem,
    solve_shard,
    solve_sharded,
    split_tasks,
)
from assignment.engine.solve import solve


def make_problem(seed=0, n=12, m=60, *, by_category=False, **kwargs):
    rng = np.random.default_rng(seed)
    if by_category:
        quality = QualityByCategory(rng.uniform(0.5, 0.9, (n, 5)), rng.integers(0, 5, m))
    else:
        quality = rng.uniform(0.5, 0.9, (n, m))
    caps = kwargs.pop("max_tasks_per_worker", rng.integers(3, 20, n))
    return AssignmentProblem(
        quality,
        max_workers_per_task=kwargs.pop("max_workers_per_task", 3),
        max_tasks_per_worker=caps,
        budget=kwargs.pop("budget", 150),
        **kwargs,
    )


CASES = {
    "dense": {},
    "by category": {"by_category": True},
    "eligibility": {"eligible": np.random.default_rng(5).random((12, 60)) < 0.6},
    "tight budget": {"budget": 25},
    "budget above the caps": {"budget": 10_000},
    "skewed priors": {"prior": np.linspace(0.1, 0.9, 60)},
    "some caps 0": {"max_tasks_per_worker": np.tile([0, 1, 7], 4)},
}


@pytest.mark.parametrize("n_shards", [1, 2, 3, 7])
@pytest.mark.parametrize("case", list(CASES))
def test_the_merged_answer_is_feasible_and_its_accuracy_is_exact(case, n_shards):
    problem = make_problem(**CASES[case])
    result = solve_sharded(problem, method="greedy", n_shards=n_shards, rounds=3)
    assert problem.is_feasible(result.assignment)
    assert result.expected_accuracy == pytest.approx(
        expected_accuracy(problem.quality, result.assignment, prior=problem.prior), abs=1e-12
    )
    np.testing.assert_array_equal(result.worker_shares.sum(axis=0), problem.max_tasks_per_worker)
    assert result.budget_shares.sum() == problem.budget


CLOSE_CASES = {
    "dense": {},
    "by category": {"by_category": True},
    "tight budget": {"budget": 60},
    "eligibility": {"eligible": np.random.default_rng(6).random((20, 200)) < 0.6},
}


@pytest.mark.parametrize("case", list(CLOSE_CASES))
def test_the_sharded_accuracy_is_close_to_one_solve(case):
    problem = make_problem(seed=3, n=20, m=200, **CLOSE_CASES[case])
    single = solve(problem, method="greedy")
    sharded = solve_sharded(problem, method="greedy", n_shards=4)
    assert abs(sharded.expected_accuracy - single.expected_accuracy) < 0.005


@pytest.mark.parametrize("by_category", [False, True])
@pytest.mark.parametrize("method", ["greedy", "tvcs-iht"])
def test_one_shard_is_the_plain_solve(method, by_category):
    problem = make_problem(seed=2, by_category=by_category)
    options = {"max_iter": 10, "eval_every": 5} if method == "tvcs-iht" else {}
    plain = solve(problem, method=method, seed=4, **options)
    sharded = solve_sharded(problem, method=method, n_shards=1, seed=4, **options)
    np.testing.assert_array_equal(sharded.assignment, plain.assignment)
    assert sharded.expected_accuracy == plain.expected_accuracy


@pytest.mark.parametrize("seed", range(6))
def test_accepted_rounds_never_lower_the_accuracy(seed):
    problem = make_problem(seed=seed, n=15, m=120, budget=200)
    result = solve_sharded(problem, method="greedy", n_shards=3, rounds=6, step=0.5)
    accepted = [r.accuracy for r in result.rounds if r.accepted]
    assert accepted == sorted(accepted)
    assert result.expected_accuracy == pytest.approx(max(accepted), abs=1e-12)
    assert result.expected_accuracy >= result.rounds[0].accuracy - 1e-12


def test_shards_partition_the_tasks_and_balance_categories():
    problem = make_problem(m=103, by_category=True)
    shards = split_tasks(problem, 4)
    np.testing.assert_array_equal(np.sort(np.concatenate(shards)), np.arange(103))
    categories = problem.task_column
    for c in range(5):
        counts = [int(np.sum(categories[s] == c)) for s in shards]
        assert max(counts) - min(counts) <= 1
    with pytest.raises(ValueError, match="n_shards"):
        split_tasks(problem, 0)


def test_initial_shares_sum_to_the_caps_in_proportion():
    caps = np.array([0, 1, 5, 10, 13, 40])
    sizes = [30, 30, 40]
    shares = initial_shares(caps, sizes)
    np.testing.assert_array_equal(shares.sum(axis=0), caps)
    exact = np.multiply.outer(sizes, caps) / 100
    assert np.all((shares == np.floor(exact)) | (shares == np.ceil(exact)))
    budget = initial_shares(7, [1, 1, 1])
    assert budget.sum() == 7
    assert sorted(budget.tolist()) == [2, 2, 3]


def test_caps_below_the_shard_count_are_spread_over_every_shard():
    # 200 workers of cap 50 over 64 shards: each shard gets 0 or 1 unit of each worker; the
    # units must not all land in the same 50 shards.
    shares = initial_shares(np.full(200, 50), [157] * 16 + [156] * 48)
    np.testing.assert_array_equal(shares.sum(axis=0), 50)
    per_shard = shares.sum(axis=1)
    assert per_shard.min() >= 200 * 50 / 64 - 10
    assert per_shard.max() <= 200 * 50 / 64 + 10


def test_rebalance_moves_units_from_a_slack_shard_to_a_binding_one():
    # Worker 0 may take 4 tasks in each of two shards; in shard 0 only 1 task suits it
    # (eligibility), so its share there is slack (price 0) while shard 1 uses all of it.
    problem = make_problem(n=2, m=20, max_tasks_per_worker=8, max_workers_per_task=1, budget=40)
    eligible = np.ones((2, 20), dtype=bool)
    tasks = split_tasks(problem, 2)
    eligible[0, tasks[0][1:]] = False
    problem = AssignmentProblem(
        problem.quality,
        max_workers_per_task=1,
        max_tasks_per_worker=8,
        budget=40,
        eligible=eligible,
    )
    shares = initial_shares(problem.max_tasks_per_worker, [10, 10])
    jobs = [ShardJob(s, tasks[s], shares[s], 20) for s in range(2)]
    outcomes = [solve_shard(problem, job, method="greedy") for job in jobs]
    assert outcomes[0].worker_price[0] == 0.0
    assert outcomes[1].worker_price[0] > 0.0
    new, budgets, spread = rebalance(shares, np.array([20, 20]), outcomes, step=0.25, tol=1e-6)
    assert spread > 0
    assert new[0, 0] < shares[0, 0]
    assert new[1, 0] > shares[1, 0]
    np.testing.assert_array_equal(new.sum(axis=0), shares.sum(axis=0))
    assert budgets.sum() == 40


def test_more_labels_or_bad_arguments_are_refused():
    problem = make_problem()
    with pytest.raises(ValueError, match="rounds"):
        solve_sharded(problem, method="greedy", n_shards=2, rounds=-1)
    with pytest.raises(ValueError, match="step"):
        solve_sharded(problem, method="greedy", n_shards=2, step=0)


def test_a_round_that_does_not_pay_is_the_last():
    problem = make_problem(seed=1, n=15, m=120, budget=200)
    every = solve_sharded(problem, method="greedy", n_shards=3, rounds=5, min_gain=-1.0)
    first = solve_sharded(problem, method="greedy", n_shards=3, rounds=5, min_gain=1.0)
    assert len(first.rounds) <= 2  # round 0, and round 1 gained less than 1
    assert len(every.rounds) > len(first.rounds)
    assert first.rounds[: len(first.rounds)] == every.rounds[: len(first.rounds)]


def test_prices_move_the_units_a_worker_cannot_use_where_it_can():
    # Worker i may only label tasks j with j % 4 == i % 4, and the 4 shards are dealt round
    # robin, so each worker is eligible in one shard only: proportional shares strand three
    # quarters of every cap where the worker cannot use them. The prices (0 where a share is
    # slack) move them to the one shard that uses them.
    rng = np.random.default_rng(0)
    n, m = 40, 800
    eligible = (np.arange(m)[None, :] % 4) == (np.arange(n)[:, None] % 4)
    problem = AssignmentProblem(
        rng.uniform(0.5, 0.9, (n, m)),
        max_workers_per_task=5,
        max_tasks_per_worker=80,
        budget=3200,
        eligible=eligible,
    )
    single = solve(problem, method="greedy").expected_accuracy
    result = solve_sharded(problem, method="greedy", n_shards=4, rounds=6)
    assert result.rounds[0].accuracy < single - 0.03
    assert result.expected_accuracy > single - 0.005
    own_shard = np.arange(n) % 4
    assert np.all(result.worker_shares[own_shard, np.arange(n)] > 80 // 4)


def make_labelled_problem(n_labels, seed=0, n=12, m=60, **kwargs):
    """A K-label problem: quality in [0.4, 0.9], a random prior distribution per task."""
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.full(n_labels, 2.0), size=m)
    return make_problem(seed, n, m, prior=prior, n_labels=n_labels, **kwargs)


@pytest.mark.parametrize("n_labels", [3, 4])
@pytest.mark.parametrize("n_shards", [2, 3])
def test_a_k_label_problem_is_solved_in_shards_feasibly_and_scored_exactly(n_labels, n_shards):
    problem = make_labelled_problem(n_labels, seed=n_labels)
    result = solve_sharded(problem, method="greedy", n_shards=n_shards, rounds=3)
    assert problem.is_feasible(result.assignment)
    assert result.accuracy_standard_error is None
    assert result.expected_accuracy == pytest.approx(
        expected_accuracy_multiclass(
            problem.quality,
            result.assignment,
            prior=problem.prior_distribution,
            n_labels=n_labels,
        ),
        abs=1e-12,
    )
    np.testing.assert_array_equal(result.worker_shares.sum(axis=0), problem.max_tasks_per_worker)
    accepted = [r.accuracy for r in result.rounds if r.accepted]
    assert accepted == sorted(accepted)


@pytest.mark.parametrize("n_labels", [3, 4])
def test_a_k_label_shard_keeps_its_tasks_prior_distributions_and_labels(n_labels):
    problem = make_labelled_problem(n_labels, seed=1)
    tasks = np.array([5, 0, 17, 42])
    job = ShardJob(0, tasks, problem.max_tasks_per_worker, 10)
    shard = shard_problem(problem, job)
    assert shard.n_labels == n_labels
    np.testing.assert_allclose(
        shard.prior_distribution, problem.prior_distribution[tasks], rtol=0, atol=1e-15
    )
    np.testing.assert_array_equal(shard.quality, problem.quality[:, tasks])


def test_a_k_label_shards_prices_are_its_k_class_leave_one_out_losses():
    caps = np.repeat([4, 40], 6)  # the first six fill up, the others cannot
    problem = make_labelled_problem(3, seed=2, max_tasks_per_worker=caps, budget=500)
    x = solve(problem, method="greedy").assignment
    price, budget_price = shard_prices(problem, x)
    workers, _, loss = removal_losses_multiclass(
        problem.quality, x, prior=problem.prior_distribution, n_labels=3
    )
    full = x.sum(axis=1) == 4
    assert full.any()
    assert not full.all()
    for i in range(problem.n_workers):
        expected = max(loss[workers == i].min(), 0.0) if full[i] else 0.0
        assert price[i] == pytest.approx(expected, abs=1e-15)
    assert budget_price == 0.0  # 500 is more than the caps allow: the budget does not bind


def test_a_two_label_problem_given_prior_distributions_shards_as_with_p_of_label_1():
    base = make_problem(seed=4, prior=np.linspace(0.2, 0.8, 60))
    as_distribution = make_problem(
        seed=4, prior=np.column_stack([1 - base.prior, base.prior]), n_labels=2
    )
    a = solve_sharded(base, method="greedy", n_shards=3, rounds=2)
    b = solve_sharded(as_distribution, method="greedy", n_shards=3, rounds=2)
    np.testing.assert_array_equal(a.assignment, b.assignment)
    assert a.expected_accuracy == b.expected_accuracy


@pytest.mark.parametrize("n_labels", [3, 4])
def test_the_sharded_accuracy_of_a_k_label_problem_is_close_to_one_solve(n_labels):
    problem = make_labelled_problem(n_labels, seed=3, n=20, m=200)
    single = solve(problem, method="greedy")
    sharded = solve_sharded(problem, method="greedy", n_shards=4)
    assert abs(sharded.expected_accuracy - single.expected_accuracy) < 0.005
