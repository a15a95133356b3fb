"""tvcs-iht (assignment/engine/tvcs_iht.py): never below its greedy start, the bound gap, the
progress it reports, the later steps' narrower search, the final pass, and the top-up beyond
twenty workers per task.

The problems are test_solve.py's (``make_problem``, ``ROBUSTNESS``)."""

from __future__ import annotations

import numpy as np
import pytest
from engine_problems import ROBUSTNESS, make_problem, options, skill_difficulty_problem

from assignment.engine.greedy import greedy_assignment
from assignment.engine.local_search import prune
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.search_pairs import search_pairs
from assignment.engine.solve import solve
from assignment.engine.surrogate import Surrogate
from assignment.engine.tvcs_iht import _BoxSteps, _largest
from assignment.engine.upper_bound import accuracy_upper_bound


def test_tvcs_iht_is_never_worse_than_its_starting_point():
    for seed in range(3):
        problem = make_problem(seed=seed, n=20, m=60, r=0.1)
        result = solve(problem, method="tvcs-iht", seed=seed, max_iter=30, eval_every=5)
        assert result.expected_accuracy >= result.details["start_accuracy"] - 1e-12


def test_tvcs_iht_beats_random_on_a_figure_4_instance():
    problem = make_problem(seed=0, n=40, m=200, r=0.05)
    iht = solve(problem, method="tvcs-iht", seed=0, max_iter=40)
    rand = solve(problem, method="random", seed=0)
    assert iht.expected_accuracy > rand.expected_accuracy + 0.02


@pytest.mark.parametrize(("max_iter", "greedy_share"), [(10, 0.6), (12, 0.5), (40, 0.15)])
def test_tvcs_iht_reports_progress_after_every_iteration_not_only_at_evaluations(
    max_iter, greedy_share
):
    calls = []
    solve(
        make_problem(),
        method="tvcs-iht",
        seed=0,
        max_iter=max_iter,
        eval_every=6,
        patience=max_iter,
        bound_gap=0.0,
        search_when_spent=True,
        progress=lambda f, msg: calls.append((f, msg)),
    )
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions)
    start = [f for f, msg in calls if msg.startswith("greedy start: ")]
    assert start
    # The greedy start's part of the bar: 60% at the default 10 steps, less with more steps.
    assert max(start) == pytest.approx(greedy_share)
    steps = [(f, msg) for f, msg in calls if msg.startswith("iteration ")]
    assert [msg.split()[1] for _, msg in steps] == [
        f"{t}/{max_iter}," for t in range(1, max_iter + 1)
    ]
    # the steps' part of the bar up to 80%, one step at a time
    np.testing.assert_allclose(
        np.diff([greedy_share, *(f for f, _ in steps)]), (0.8 - greedy_share) / max_iter
    )


def test_the_final_pass_removes_second_workers_that_add_nothing_under_prior_one_half():
    # Two workers per task at most: a second worker never helps under prior 0.5, so the
    # refined assignment spends no budget on second workers that only tie the first.
    problem = make_problem(seed=2, n=20, m=60, r=0.1, max_workers_per_task=2)
    plain = solve(problem, method="tvcs-iht", seed=0, max_iter=20, refine=False)
    refined = solve(problem, method="tvcs-iht", seed=0, max_iter=20)
    assert refined.expected_accuracy >= plain.expected_accuracy - 1e-12
    assert refined.assignment.sum(axis=0).max() == 1


@pytest.mark.parametrize("n_labels", [2, 3])
def test_tvcs_iht_says_in_its_details_whether_its_final_pass_ran(n_labels):
    # Two labels: a problem where the steps beat greedy (the pass repairs their support).
    problem = (
        skill_difficulty_problem(seed=1)
        if n_labels == 2
        else make_problem(seed=1, n=12, m=30, r=0.2, n_labels=n_labels)
    )
    plain = solve(
        problem,
        method="tvcs-iht",
        seed=0,
        max_iter=20,
        refine=False,
        bound_gap=0,
        search_when_spent=True,
    )
    refined = solve(
        problem, method="tvcs-iht", seed=0, max_iter=20, bound_gap=0, search_when_spent=True
    )
    assert (plain.details["final_pass"], refined.details["final_pass"]) == (False, True)
    near = solve(problem, method="tvcs-iht", seed=0, max_iter=20, bound_gap=1.0)
    assert (near.details["stopped"], near.details["final_pass"]) == ("near_bound", False)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tvcs_iht_keeps_greedys_own_assignment_without_a_final_pass_when_its_steps_find_nothing(
    seed,
):
    problem = make_problem(seed=seed, n=12, m=30, r=0.2)
    result = solve(problem, method="tvcs-iht", seed=0, bound_gap=0, search_when_spent=True)
    greedy = solve(problem, method="greedy")
    assert result.details["start_accuracy"] == result.details["accuracy"]  # steps: nothing
    assert result.details["final_pass"] is False
    np.testing.assert_array_equal(result.assignment, greedy.assignment)


@pytest.mark.parametrize("seed", [1, 4, 6])
def test_tvcs_iht_runs_its_final_pass_on_a_support_its_steps_found_better_than_greedys(seed):
    problem = skill_difficulty_problem(seed=seed)
    result = solve(problem, method="tvcs-iht", seed=0, bound_gap=0, search_when_spent=True)
    greedy = solve(problem, method="greedy")
    assert result.details["final_pass"] is True
    assert result.expected_accuracy > greedy.expected_accuracy
    np.testing.assert_array_equal(prune(problem, result.assignment), result.assignment)


def test_after_the_final_pass_no_worker_can_be_removed_for_free():
    problem = make_problem(seed=1, n=20, m=60, r=0.1)
    refined = solve(problem, method="tvcs-iht", seed=0, max_iter=20)
    np.testing.assert_array_equal(prune(problem, refined.assignment), refined.assignment)


def test_tvcs_iht_searches_with_twenty_workers_per_task_and_then_tops_up_when_caps_allow():
    # The exact accuracy stops at MAX_EXACT_WORKERS = 20: the search caps tasks there, and
    # left-over budget then goes to tasks at 20 (an extra worker never hurts the Bayes vote).
    problem = make_problem(
        seed=4, n=30, m=6, max_workers_per_task=30, max_tasks_per_worker=6, budget=150
    )
    result = solve(problem, method="tvcs-iht", seed=0, **options("tvcs-iht"))
    assert problem.is_feasible(result.assignment)
    assert result.n_assigned == 150
    beyond = np.maximum(result.assignment.sum(axis=0) - 20, 0).sum()
    assert beyond > 0
    assert result.details["topped_up"] == beyond
    assert result.accuracy_standard_error is not None  # a Monte Carlo estimate


def sixty_labels_problem() -> AssignmentProblem:
    """Sixty labels: the exact K-class accuracy takes at most 3 workers a task (60 ** 3 answer
    states), below the cap of 5."""
    rng = np.random.default_rng(0)
    q = rng.uniform(0.6, 0.95, (20, 20))
    return AssignmentProblem(
        q, max_workers_per_task=5, max_tasks_per_worker=20, budget=100, n_labels=60
    )


def test_greedy_says_when_the_exact_limit_of_workers_stops_it_below_a_tasks_cap():
    result = solve(sixty_labels_problem(), method="greedy")
    assert result.n_assigned == 60  # 3 a task
    assert result.details["stopped"] == "no feasible addition"
    assert "within 3 workers per task" in result.message
    assert "20 task(s) have a higher cap" in result.message


def test_tvcs_iht_tops_k_label_tasks_up_beyond_the_exact_limit_when_caps_allow():
    problem = sixty_labels_problem()
    result = solve(problem, method="tvcs-iht", seed=0)
    greedy = solve(problem, method="greedy")
    assert problem.is_feasible(result.assignment)
    assert result.n_assigned == 100
    assert result.details["topped_up"] == 40
    assert "40 pair(s) added beyond 3 workers per task" in result.message
    # A Monte Carlo estimate beyond the limit, far above greedy's exact 60 pairs.
    assert result.accuracy_standard_error is not None
    gain = result.expected_accuracy - greedy.expected_accuracy
    assert gain > 5 * result.accuracy_standard_error


@pytest.mark.parametrize("case", ["uniform", *ROBUSTNESS])
@pytest.mark.parametrize("budget_share", [0.2, 0.8])
def test_tvcs_iht_is_never_less_accurate_than_greedy(case, budget_share):
    rng = np.random.default_rng(9)
    quality = rng.uniform(0.5, 0.9, (12, 30)) if case == "uniform" else ROBUSTNESS[case](rng)
    budget = max(1, int(budget_share * make_problem(quality=quality).budget / 0.8))
    problem = make_problem(quality=quality, prior=0.4, budget=budget)
    iht = solve(problem, method="tvcs-iht", seed=0, max_iter=20, step=5.0)
    greedy = solve(problem, method="greedy", seed=0)
    assert iht.expected_accuracy >= greedy.expected_accuracy - 1e-12
    assert iht.details["start_accuracy"] == pytest.approx(greedy.expected_accuracy, abs=1e-12)


def test_tvcs_iht_returns_a_greedy_start_that_spends_the_whole_budget_without_steps():
    problem = make_problem(seed=3, n=100, m=1000, r=0.03)
    greedy = solve(problem, method="greedy", seed=0)
    assert len(greedy.rows) == problem.budget  # uniform quality: greedy spends it all
    result = solve(problem, method="tvcs-iht", seed=0, bound_gap=0)
    assert (result.iterations, result.details["stopped"]) == (0, "budget_spent")
    assert result.details["final_pass"] is False
    np.testing.assert_array_equal(result.assignment, greedy.assignment)
    assert result.expected_accuracy == result.details["start_accuracy"]
    forced = solve(problem, method="tvcs-iht", seed=0, bound_gap=0, search_when_spent=True)
    assert forced.iterations > 0


@pytest.mark.parametrize("seed", [1, 4, 6])
def test_tvcs_iht_searches_by_default_from_a_greedy_start_that_leaves_budget_unspent(seed):
    problem = skill_difficulty_problem(seed=seed)
    greedy = solve(problem, method="greedy", seed=0)
    assert len(greedy.rows) < problem.budget
    result = solve(problem, method="tvcs-iht", seed=0, bound_gap=0)
    assert result.iterations > 0
    assert result.expected_accuracy > greedy.expected_accuracy


def test_tvcs_iht_with_one_worker_per_task_takes_no_greedy_start():
    problem = make_problem(seed=2, n=20, m=60, r=0.02)
    assert problem.max_workers_per_task.max() == 1
    result = solve(problem, method="tvcs-iht", seed=0)
    assert result.details["stopped"] == "single_worker"
    assert result.details["start_accuracy"] == result.details["accuracy"]
    assert "greedy" not in result.message
    assert result.expected_accuracy >= solve(problem, method="greedy").expected_accuracy - 1e-12


def test_tvcs_iht_stops_at_the_greedy_start_when_it_is_within_the_gap_of_the_upper_bound():
    problem = make_problem(seed=3, n=100, m=1000, r=0.03)
    bound = accuracy_upper_bound(problem).value
    greedy = solve(problem, method="greedy", seed=0)
    assert bound - greedy.expected_accuracy < 1e-4  # uniform quality: greedy is at the bound
    near = solve(problem, method="tvcs-iht", seed=0, bound_gap=1e-4, search_when_spent=True)
    assert near.iterations == 0
    assert near.details["stopped"] == "near_bound"
    np.testing.assert_array_equal(near.assignment, greedy.assignment)
    searched = solve(problem, method="tvcs-iht", seed=0, bound_gap=0.0, search_when_spent=True)
    assert searched.iterations > 0
    assert searched.details["stopped"] in {"max_iter", "no_improvement"}


def test_tvcs_iht_with_no_bound_gap_searches_even_from_a_greedy_start_on_the_bound():
    rng = np.random.default_rng(0)
    problem = make_problem(
        quality=rng.uniform(0.5, 0.9, (100, 1000)),
        max_workers_per_task=3,
        max_tasks_per_worker=30,
        budget=2000,
    )
    greedy = solve(problem, method="greedy", seed=0)
    assert greedy.expected_accuracy >= accuracy_upper_bound(problem).value - 1e-12  # on it
    result = solve(
        problem,
        method="tvcs-iht",
        seed=0,
        max_iter=3,
        patience=3,
        bound_gap=0.0,
        search_when_spent=True,
    )
    assert result.iterations == 3


@pytest.mark.parametrize("n_labels", [2, 3])
def test_tvcs_iht_by_category_with_a_mask_is_feasible_and_never_below_greedy(n_labels):
    rng = np.random.default_rng(11)
    quality = QualityByCategory(rng.uniform(1 / n_labels, 0.95, (15, 4)), rng.integers(0, 4, 40))
    problem = AssignmentProblem(
        quality,
        max_workers_per_task=rng.integers(0, 5, 40),
        max_tasks_per_worker=rng.integers(1, 9, 15),
        budget=70,
        eligible=rng.random((15, 40)) < 0.7,
        n_labels=n_labels,
    )
    iht = solve(
        problem, method="tvcs-iht", seed=0, max_iter=10, bound_gap=0.0, search_when_spent=True
    )
    greedy = solve(problem, method="greedy", seed=0)
    assert problem.is_feasible(iht.assignment)
    assert iht.expected_accuracy >= greedy.expected_accuracy - 1e-12


def test_tvcs_iht_past_its_time_limit_takes_one_step_evaluates_it_and_keeps_the_best():
    from assignment.engine.tvcs_iht import tvcs_iht

    problem = make_problem(seed=1, n=20, m=60, r=0.1)
    out = tvcs_iht(
        problem,
        rng=np.random.default_rng(0),
        max_iter=50,
        eval_every=5,
        bound_gap=0,
        search_when_spent=True,
        time_limit=1e-6,  # passed during the greedy start
    )

    assert out.iterations == 1
    assert out.details["stopped"] == "time_limit"
    assert [t for t, _ in out.history[:2]] == [0, 1]  # the last step's support is evaluated
    assert out.details["accuracy"] >= out.details["start_accuracy"]
    assert problem.is_feasible(out.assignment)


def test_the_first_step_projects_every_pair_and_later_ones_only_its_largest_the_start_and_support():
    problem = make_problem(seed=3, n=20, m=80, r=0.15)
    start = greedy_assignment(problem).assignment
    pairs = search_pairs(problem, start)
    surrogate = Surrogate(problem, pairs=pairs, temperature=0.5, batch_size=4)
    steps = _BoxSteps(surrogate, follow_up=40)
    x0 = pairs.restrict(start).astype(np.float64)

    first, y = steps.proposal(x0, np.random.default_rng(1), 1.0)
    np.testing.assert_array_equal(first, surrogate.step(x0, np.random.default_rng(1), 1.0)[2])
    top = np.sort(first)[::-1][39]
    kept = ((first >= top) & (first > 0)) | (x0 > 0)
    x1 = np.where(np.random.default_rng(2).random(x0.size) < 0.1, y, 0.0)  # a new support

    later, _ = steps.proposal(x1, np.random.default_rng(3), 0.9)
    everything = surrogate.step(x1, np.random.default_rng(3), 0.9)[2]
    searched = kept | (x1 > 0)
    np.testing.assert_array_equal(later[searched], everything[searched])
    assert (later[~searched] == 0).all()
    assert (everything[~searched] > 0).sum() > 100  # the later step left those out


@pytest.mark.parametrize("k", [1, 3, 4, 7, 10])
def test_largest_keeps_the_positive_values_down_to_the_kth_with_its_ties(k):
    values = np.array([0.5, 0.0, 2.0, 0.5, 1.0, 0.5, 0.0, 3.0])
    ranked = np.sort(values)[::-1]
    expected = (values >= ranked[min(k, values.size) - 1]) & (values > 0)
    np.testing.assert_array_equal(_largest(values, k), expected)
    assert not _largest(values, k)[values == 0].any()
    assert _largest(values, 4).sum() == 6  # 3, 2, 1 and the three tied at 0.5
