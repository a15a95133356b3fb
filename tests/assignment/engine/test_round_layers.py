"""A round executes part of a plan for all the remaining rounds, breadth first (plan_layers)."""

import functools

import numpy as np
import pytest

from assignment.engine import METHODS, AssignmentProblem, QualityByCategory, solve
from assignment.engine.rounds import _dawid_skene_informativeness, next_round, plan_layers


def _problem(seed=0, n=6, m=10, per_task=4, per_worker=6, budget=30, prior=0.5, **kwargs):
    rng = np.random.default_rng(seed)
    return AssignmentProblem(
        rng.uniform(0.55, 0.95, (n, m)),
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        prior=prior,
        **kwargs,
    )


def _random_plan(problem, rng):
    """A random feasible plan: pairs added in a random order while the caps allow."""
    n, m = problem.shape
    plan = np.zeros((n, m), bool)
    for flat in rng.permutation(n * m):
        i, j = divmod(int(flat), m)
        if (
            plan[:, j].sum() < problem.max_workers_per_task[j]
            and plan[i].sum() < problem.max_tasks_per_worker[i]
            and (problem.eligible is None or problem.eligible[i, j])
            and rng.random() < 0.6
        ):
            plan[i, j] = True
    return plan


def _value(problem, i, j):
    return abs(2 * problem.quality[i, j] - 1)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("check_uncovered", [False, True])
def test_the_taken_pairs_are_at_most_the_budget_feasible_and_planned_unless_checks(
    seed, check_uncovered
):
    rng = np.random.default_rng(seed)
    eligible = rng.random((6, 10)) < 0.8
    problem = _problem(seed, eligible=eligible, prior=rng.uniform(0.05, 0.95, 10))
    plan = _random_plan(problem, rng)
    for budget in (0, 1, 5, 9, 17, int(plan.sum()), 200):
        take = plan_layers(plan, problem, budget=budget, check_uncovered=check_uncovered)
        assert take.dtype == np.bool_
        assert take.shape == problem.shape
        assert take.sum() <= budget
        assert not np.any(take & ~eligible)
        assert np.all(take.sum(axis=0) <= problem.max_workers_per_task)
        assert np.all(take.sum(axis=1) <= problem.max_tasks_per_worker)
        if not check_uncovered:
            assert not np.any(take & ~plan)
            assert take.sum() == min(budget, plan.sum())


def test_whole_layers_first_each_task_gets_its_most_informative_planned_worker_first():
    rng = np.random.default_rng(3)
    problem = _problem(3, budget=40)
    plan = _random_plan(problem, rng)
    covered = np.flatnonzero(plan.any(axis=0))
    take = plan_layers(plan, problem, budget=covered.size)
    np.testing.assert_array_equal(take.sum(axis=0)[covered], 1)
    for j in covered:
        planned = np.flatnonzero(plan[:, j])
        best = planned[np.argmax([_value(problem, i, j) for i in planned])]
        assert take[best, j]
    # one more pair starts the second layer: a task with two planned workers gets its second
    more = plan_layers(plan, problem, budget=covered.size + 1)
    assert np.all(more >= take)
    (j,) = np.flatnonzero(more.sum(axis=0) == 2)
    assert plan[:, j].sum() >= 2


def test_no_task_gets_a_third_worker_while_a_planned_second_is_left_out():
    rng = np.random.default_rng(5)
    problem = _problem(5, per_task=5, per_worker=10, budget=60)
    plan = _random_plan(problem, rng)
    counts = plan.sum(axis=0)
    for budget in range(int(plan.sum()) + 1):
        got = plan_layers(plan, problem, budget=budget).sum(axis=0)
        deepest = got.max()
        # every task got all its planned workers up to one layer below the deepest one taken
        assert np.all(got >= np.minimum(counts, deepest - 1))


def test_the_last_partial_layer_takes_the_least_confident_tasks_first():
    q = np.full((3, 4), 0.8)
    prior = np.array([0.9, 0.55, 0.3, 0.99])  # confidence 0.8, 0.1, 0.4, 0.98
    problem = AssignmentProblem(
        q, max_workers_per_task=3, max_tasks_per_worker=4, budget=12, prior=prior
    )
    plan = np.ones((3, 4), bool)
    take = plan_layers(plan, problem, budget=6)  # layer 1 (4 tasks), then 2 of layer 2
    np.testing.assert_array_equal(take.sum(axis=0), [1, 2, 2, 1])
    take = plan_layers(plan, problem, budget=2)
    np.testing.assert_array_equal(take.sum(axis=0), [0, 1, 1, 0])


def test_ties_are_broken_by_task_then_worker_index_and_calls_repeat_exactly():
    problem = AssignmentProblem(
        np.full((4, 5), 0.7), max_workers_per_task=2, max_tasks_per_worker=5, budget=10
    )
    plan = np.zeros((4, 5), bool)
    plan[[1, 3], :] = True
    take = plan_layers(plan, problem, budget=3)
    expected = np.zeros((4, 5), bool)
    expected[1, :3] = True  # equal confidence and value: lower tasks, lower worker
    np.testing.assert_array_equal(take, expected)
    for _ in range(3):
        np.testing.assert_array_equal(plan_layers(plan, problem, budget=3), take)


def test_among_equally_confident_tasks_the_more_informative_pair_comes_first():
    q = np.array([[0.6, 0.9, 0.75]])
    problem = AssignmentProblem(q, max_workers_per_task=1, max_tasks_per_worker=3, budget=3)
    take = plan_layers(np.ones((1, 3), bool), problem, budget=2)
    np.testing.assert_array_equal(take, [[False, True, True]])


def test_a_worker_below_one_half_is_informative_by_its_distance_from_one_half():
    q = np.array([[0.1], [0.8], [0.5]])
    problem = AssignmentProblem(q, max_workers_per_task=3, max_tasks_per_worker=1, budget=3)
    take = plan_layers(np.ones((3, 1), bool), problem, budget=1)
    np.testing.assert_array_equal(take[:, 0], [True, False, False])


@pytest.mark.parametrize("check_uncovered", [False, True])
def test_with_a_budget_at_least_the_plan_and_every_task_covered_the_whole_plan(check_uncovered):
    problem = _problem(7, per_task=3, budget=30)
    plan = solve(problem, method="tvcs-iht", seed=0).assignment
    assert plan.any(axis=0).all()
    for budget in (int(plan.sum()), int(plan.sum()) + 5):
        got = plan_layers(plan, problem, budget=budget, check_uncovered=check_uncovered)
        np.testing.assert_array_equal(got, plan)


def test_an_empty_plan_or_a_zero_budget_takes_nothing():
    problem = _problem(1)
    empty = np.zeros(problem.shape, bool)
    assert not plan_layers(empty, problem, budget=10).any()
    plan = _random_plan(problem, np.random.default_rng(1))
    assert plan.any()
    assert not plan_layers(plan, problem, budget=0).any()
    assert not plan_layers(empty, problem, budget=0, check_uncovered=True).any()


def test_a_check_gives_every_uncovered_task_its_most_informative_eligible_worker():
    q = np.array([[0.9, 0.6, 0.7], [0.6, 0.95, 0.8], [0.7, 0.7, 0.9]])
    eligible = np.ones((3, 3), bool)
    eligible[2, 2] = False
    problem = AssignmentProblem(
        q, max_workers_per_task=2, max_tasks_per_worker=3, budget=6, eligible=eligible
    )
    plan = np.zeros((3, 3), bool)
    plan[[0, 2], 0] = True  # only task 0 is planned
    take = plan_layers(plan, problem, budget=3, check_uncovered=True)
    expected = np.zeros((3, 3), bool)
    expected[0, 0] = True  # task 0's layer 1: its most informative planned worker
    expected[1, 1] = True  # task 1's check: worker 1 (0.95)
    expected[1, 2] = True  # task 2's check: worker 1 (0.8; worker 2 is not eligible)
    np.testing.assert_array_equal(take, expected)
    # one more pair: task 0's second planned worker (layer 2), never a second check
    more = plan_layers(plan, problem, budget=10, check_uncovered=True)
    np.testing.assert_array_equal(more, expected | plan)


def test_a_check_may_use_up_the_room_a_deeper_planned_pair_needed_which_is_then_skipped():
    q = np.array([[0.95, 0.7], [0.9, 0.8]])
    problem = AssignmentProblem(q, max_workers_per_task=2, max_tasks_per_worker=1, budget=4)
    plan = np.array([[True, False], [True, False]])  # task 0: workers 0, 1; task 1 uncovered
    take = plan_layers(plan, problem, budget=4, check_uncovered=True)
    # layer 1: task 0 -> worker 0 (0.95); task 1's check -> worker 1, the one with room left;
    # layer 2: task 0 -> worker 1, now at its cap: skipped
    np.testing.assert_array_equal(take, [[True, False], [False, True]])
    assert problem.is_feasible(take)


def test_a_task_at_its_cap_or_without_an_eligible_worker_gets_no_check():
    q = np.full((2, 3), 0.8)
    eligible = np.array([[True, True, False], [True, True, False]])
    problem = AssignmentProblem(
        q,
        max_workers_per_task=[1, 0, 1],
        max_tasks_per_worker=3,
        budget=3,
        eligible=eligible,
    )
    take = plan_layers(np.zeros((2, 3), bool), problem, budget=3, check_uncovered=True)
    np.testing.assert_array_equal(take.sum(axis=0), [1, 0, 0])


def test_a_problem_by_category_gives_the_same_layers_as_its_dense_matrix():
    rng = np.random.default_rng(2)
    table = rng.uniform(0.55, 0.95, (5, 3))
    category = rng.integers(0, 3, 9)
    kwargs = {"max_workers_per_task": 3, "max_tasks_per_worker": 6, "budget": 20}
    by_category = AssignmentProblem(QualityByCategory(table, category), **kwargs)
    dense = AssignmentProblem(table[:, category], **kwargs)
    plan = _random_plan(dense, rng)
    for budget in (4, 11):
        for check in (False, True):
            np.testing.assert_array_equal(
                plan_layers(plan, by_category, budget=budget, check_uncovered=check),
                plan_layers(plan, dense, budget=budget, check_uncovered=check),
            )


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (np.ones((6, 9), bool), "shape"),
        (np.full((6, 10), 2), "bool"),
        (np.full((6, 10), "x"), "bool"),
    ],
)
def test_a_plan_of_the_wrong_shape_or_values_is_refused(plan, message):
    with pytest.raises(ValueError, match=message):
        plan_layers(plan, _problem(), budget=3)


def test_a_plan_on_an_ineligible_pair_or_over_a_cap_is_refused():
    eligible = np.ones((6, 10), bool)
    eligible[2, 4] = False
    problem = _problem(eligible=eligible, per_task=2, per_worker=3)
    plan = np.zeros((6, 10), bool)
    plan[2, 4] = True
    with pytest.raises(ValueError, match=r"ineligible pair \(worker 2, task 4\)"):
        plan_layers(plan, problem, budget=3)
    plan = np.zeros((6, 10), bool)
    plan[:3, 1] = True
    with pytest.raises(ValueError, match="max_workers_per_task at task 1: 3 pairs, cap 2"):
        plan_layers(plan, problem, budget=3)
    plan = np.zeros((6, 10), bool)
    plan[5, :4] = True
    with pytest.raises(ValueError, match="max_tasks_per_worker at worker 5: 4 pairs, cap 3"):
        plan_layers(plan, problem, budget=3)


def test_a_plan_over_the_problems_budget_is_accepted():
    problem = _problem(budget=2)
    plan = np.zeros(problem.shape, bool)
    plan[:3, :3] = True
    assert plan_layers(plan, problem, budget=2).sum() == 2


@pytest.mark.parametrize("budget", [-1, 1.5, True, "3", None])
def test_a_negative_fractional_or_non_integer_budget_is_refused(budget):
    with pytest.raises(ValueError, match="budget"):
        plan_layers(np.zeros((6, 10), bool), _problem(), budget=budget)


def test_something_else_than_a_problem_is_refused():
    with pytest.raises(ValueError, match="problem must be an AssignmentProblem"):
        plan_layers(np.zeros((2, 2), bool), np.full((2, 2), 0.8), budget=1)


# --- the round's side: how much a round takes, and a whole project in layered rounds


def _empty_round(problem, **kwargs):
    empty = np.zeros(0, np.int64)
    return next_round(
        problem, worker_index=empty, task_index=empty, said_one=empty.astype(bool), **kwargs
    )


def test_the_first_round_gives_every_task_one_answer_even_above_an_even_share():
    problem = _problem(m=10, budget=20)
    nxt = _empty_round(problem)
    assert nxt.layer_budget(3) == 10  # max(20 // 3, 10 unanswered), one layer at most
    assert nxt.layer_budget(1) == 20  # the last round: all that is left
    small = _empty_round(_problem(m=10, budget=4))
    assert small.layer_budget(3) == 4  # never more than the budget


def test_a_later_round_takes_an_even_share_of_what_is_left_at_most_one_answer_per_open_task():
    problem = _problem(n=6, m=10, per_task=4, per_worker=20, budget=40)
    workers = np.arange(10) % 6
    tasks = np.arange(10)
    nxt = next_round(problem, worker_index=workers, task_index=tasks, said_one=np.ones(10, bool))
    assert nxt.budget == 30
    assert nxt.layer_budget(3) == 10  # min(30, 10 open tasks, 30 // 3)
    assert nxt.layer_budget(4) == 7  # 30 // 4
    assert nxt.layer_budget(2) == 10  # 30 // 2 = 15, but one answer per open task at most
    closed = next_round(
        problem,
        worker_index=workers,
        task_index=tasks,
        said_one=np.ones(10, bool),
        target_posterior=0.54,  # every task at its target: none open
    )
    assert closed.layer_budget(2) == 0


@pytest.mark.parametrize("rounds_left", [0, -1, 1.0, True, None])
def test_rounds_left_must_be_a_positive_integer(rounds_left):
    nxt = _empty_round(_problem())
    with pytest.raises(ValueError, match="rounds_left"):
        nxt.layer_budget(rounds_left)
    with pytest.raises(ValueError, match="rounds_left"):
        nxt.take_layers(np.zeros(nxt.problem.shape, bool), rounds_left=rounds_left)


@pytest.mark.parametrize("method", METHODS)
def test_a_project_in_layered_rounds_stays_within_its_caps_and_budget_with_every_method(method):
    rng = np.random.default_rng(11)
    problem = _problem(11, n=8, m=12, per_task=4, per_worker=6, budget=30)
    truth = rng.integers(0, 2, problem.n_tasks)
    workers = np.zeros(0, np.int64)
    tasks = np.zeros(0, np.int64)
    said = np.zeros(0, bool)
    for r in range(3):
        nxt = next_round(problem, worker_index=workers, task_index=tasks, said_one=said)
        take, result = nxt.solve_layered(
            functools.partial(solve, method=method, seed=r), rounds_left=3 - r
        )
        assert nxt.problem.is_feasible(result.assignment)
        assert take.sum() <= nxt.layer_budget(3 - r)
        if r == 2:
            np.testing.assert_array_equal(take, result.assignment)  # last: the whole plan
        w, t = np.nonzero(take)
        correct = rng.random(w.size) < problem.quality[w, t]
        workers = np.concatenate([workers, w])
        tasks = np.concatenate([tasks, t])
        said = np.concatenate([said, np.where(correct, truth[t] == 1, truth[t] == 0)])
    final = np.zeros(problem.shape, bool)
    final[workers, tasks] = True
    assert final.sum() == workers.size <= problem.budget
    assert problem.is_feasible(final)


def test_layers_of_a_three_label_plan_are_a_feasible_breadth_first_part_of_it():
    rng = np.random.default_rng(7)
    n, m = 6, 10
    problem = AssignmentProblem(
        rng.uniform(0.4, 0.95, (n, m)),
        max_workers_per_task=3,
        max_tasks_per_worker=5,
        budget=24,
        n_labels=3,
        prior=rng.dirichlet(np.ones(3), m),
    )
    plan = solve(problem, method="greedy", seed=0).assignment
    take = plan_layers(plan, problem, budget=int(plan.any(axis=0).sum()))
    assert problem.is_feasible(take)
    assert not (take & ~plan).any()
    assert (take.sum(axis=0) == plan.any(axis=0)).all()  # one worker per planned task: layer 1


def _one_coin(q, k):
    """(n, K, K): right with probability q[i], else each wrong label with (1 - q[i]) / (K - 1)."""
    c = np.repeat(((1 - q) / (k - 1))[:, None, None], k, axis=1).repeat(k, axis=2)
    c[:, np.arange(k), np.arange(k)] = q[:, None]
    return c


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [2, 3])
def test_with_one_coin_matrices_of_the_quality_the_layers_are_the_symmetric_ones(k, seed):
    # Workers' qualities from below 1/2 (two labels) or from 1/K up, tasks in every state of
    # doubt (a round's posteriors): the Dawid-Skene informativeness of a one-coin matrix is
    # |K Q - 1| / (K - 1), so every layer, every order and every check is the same.
    rng = np.random.default_rng(seed)
    n, m = 7, 12
    q = rng.uniform(0.05 if k == 2 else 1.0 / k, 0.97, n)
    common = {
        "max_workers_per_task": 4,
        "max_tasks_per_worker": 5,
        "budget": 30,
        "n_labels": k,
        "prior": rng.dirichlet(np.full(k, 0.7), m),
        "eligible": rng.random((n, m)) < 0.8,
    }
    symmetric = AssignmentProblem(np.repeat(q[:, None], m, axis=1), **common)
    dawid_skene = AssignmentProblem(
        np.repeat(q[:, None], m, axis=1), confusion=_one_coin(q, k), **common
    )
    plan = _random_plan(symmetric, rng)
    plan[:, :2] = False  # two uncovered tasks for the checks
    for check_uncovered in (False, True):
        for budget in (1, 4, 9, 15, int(plan.sum()) + 3):
            expected = plan_layers(plan, symmetric, budget=budget, check_uncovered=check_uncovered)
            got = plan_layers(plan, dawid_skene, budget=budget, check_uncovered=check_uncovered)
            np.testing.assert_array_equal(got, expected)


def _swapper_problem(*, dawid_skene=True):
    """Three labels: worker 0 is one-coin of quality 0.7 (informativeness (2.1 - 1) / 2 =
    0.55); worker 1's one-coin quality (mean diagonal) is only 0.4 ((1.2 - 1) / 2 = 0.1), but
    he swaps labels 1 and 2: his matrix's columns peak at 0.9, 0.8 and 0.8, so alone on a task
    in doubt he is right with probability 2.5 / 3 (informativeness (2.5 - 1) / 2 = 0.75)."""
    swapper = np.array([[0.9, 0.05, 0.05], [0.05, 0.15, 0.8], [0.05, 0.8, 0.15]])
    confusion = np.stack([_one_coin(np.array([0.7]), 3)[0], swapper])
    return AssignmentProblem(
        np.array([[0.7, 0.7, 0.7], [0.4, 0.4, 0.4]]),
        max_workers_per_task=2,
        max_tasks_per_worker=3,
        budget=6,
        n_labels=3,
        confusion=confusion if dawid_skene else None,
    )


@pytest.mark.parametrize("check_uncovered", [False, True])
def test_under_confusion_matrices_a_worker_of_lower_quality_but_more_informative_comes_first(
    check_uncovered,
):
    problem = _swapper_problem()
    symmetric = _swapper_problem(dawid_skene=False)  # the same qualities, symmetric model
    plan = np.array([[True, True, False], [True, True, False]])  # task 2 uncovered
    budget = 3 if check_uncovered else 2  # layer 1 (and task 2's check)
    take = plan_layers(plan, problem, budget=budget, check_uncovered=check_uncovered)
    old = plan_layers(plan, symmetric, budget=budget, check_uncovered=check_uncovered)
    layer_one = np.zeros((2, 3), bool)
    layer_one[1, :budget] = True  # the swapper on every task
    np.testing.assert_array_equal(take, layer_one)
    np.testing.assert_array_equal(old, layer_one[::-1])  # the symmetric order: worker 0


@pytest.mark.parametrize("k", [2, 3, 4])
def test_the_dawid_skene_informativeness_of_a_one_coin_matrix_is_the_symmetric_one_from_1_over_k(
    k,
):
    q = np.linspace(0.0, 1.0, 41)
    got = _dawid_skene_informativeness(_one_coin(q, k))
    ordinary = q >= 1.0 / k
    np.testing.assert_allclose(got[ordinary], (k * q[ordinary] - 1) / (k - 1), atol=1e-12)
    # below 1/K an answer only rules its label out: (1 - K Q) / (K - 1)^2, |2 Q - 1| for K = 2
    below = (1 - k * q[~ordinary]) / (k - 1) ** 2
    np.testing.assert_allclose(got[~ordinary], below, atol=1e-12)
