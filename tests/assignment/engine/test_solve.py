"""solve(): every method returns a feasible assignment, exactly evaluated, for every cap mix."""

from __future__ import annotations

import numpy as np
import pytest
from engine_problems import ROBUSTNESS, make_problem, options

from assignment.engine.accuracy import expected_accuracy
from assignment.engine.solve import METHODS, solve

CAP_CASES = {
    "figure-4 like": {},
    "budget 0": {"budget": 0},
    "worker caps of 0": {"max_tasks_per_worker": 0},
    "task caps of 0 for half the tasks": {"max_workers_per_task": np.tile([0, 3], 15)},
    "budget above every cap": {"budget": 10_000},
    "uncoverable tasks": {"eligible": np.tile(np.arange(30) % 3 != 0, (12, 1))},
    "skewed priors": {"prior": np.linspace(0.05, 0.95, 30)},
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", list(CAP_CASES))
def test_every_method_returns_a_feasible_exactly_evaluated_assignment(method, case):
    problem = make_problem(**CAP_CASES[case])
    result = solve(problem, method=method, seed=1, **options(method))
    assert result.assignment.shape == problem.quality.shape
    assert problem.is_feasible(result.assignment)
    assert result.accuracy_standard_error is None
    assert result.expected_accuracy == pytest.approx(
        expected_accuracy(problem.quality, result.assignment, prior=problem.prior), abs=1e-12
    )
    if problem.budget == 0:
        assert result.n_assigned == 0


@pytest.mark.parametrize("method", METHODS)
def test_the_same_seed_gives_the_same_answer(method):
    problem = make_problem(seed=3)
    first = solve(problem, method=method, seed=7, **options(method))
    second = solve(problem, method=method, seed=7, **options(method))
    np.testing.assert_array_equal(first.assignment, second.assignment)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", list(ROBUSTNESS))
def test_methods_behave_sensibly_beyond_uniform_quality(method, case):
    rng = np.random.default_rng(5)
    problem = make_problem(quality=ROBUSTNESS[case](rng), prior=0.3)
    result = solve(problem, method=method, seed=0, **options(method))
    assert problem.is_feasible(result.assignment)
    assert np.isfinite(result.expected_accuracy)
    if method == "random":
        return
    randoms = [solve(problem, method="random", seed=s) for s in range(3)]
    weights = (2 * problem.quality - 1) ** 2
    if method == "q-lp" and np.ptp(weights[weights > 0]) < 1e-6:
        # Every usable pair weighs the same in Ho et al.'s LP: its optimum is any assignment of
        # the most pairs, however it spreads them over the tasks, so only its size is promised.
        assert result.n_assigned == max(r.n_assigned for r in randoms)
        return
    rand = np.mean([r.expected_accuracy for r in randoms])
    assert result.expected_accuracy >= rand - 0.02


def test_progress_is_reported_and_ends_at_one():
    calls = []
    solve(
        make_problem(),
        method="tvcs-iht",
        seed=0,
        max_iter=10,
        eval_every=5,
        progress=lambda f, msg: calls.append((f, msg)),
    )
    assert calls
    assert calls[-1][0] == 1.0
    assert all(0 <= f <= 1 for f, _ in calls)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "simplex"}, "method must be one of 'tvcs-iht', 'random', 'q-lp', 'greedy'"),
        ({"method": "random", "speed": 3}, "unknown option"),
        ({"method": "random", "seed": 1.5}, "seed must be an integer"),
        ({"method": "random", "progress": 3}, "progress must be a callable"),
        ({"method": "tvcs-iht", "max_iter": -1}, r"max_iter must be an integer in \[0, 10000\]"),
        ({"method": "tvcs-iht", "max_iter": 2.5}, r"max_iter must be an integer in \[0, 10000\]"),
        ({"method": "tvcs-iht", "eval_every": 0}, r"eval_every must be an integer in \[1, 10000\]"),
        ({"method": "tvcs-iht", "step": float("nan")}, r"step must be a number in \(0, 1000\]"),
        (
            {"method": "tvcs-iht", "temperature": 0},
            r"temperature must be a number in \[0.001, 1000\]",
        ),
        ({"method": "tvcs-iht", "refine": 1}, "refine must be true or false"),
        (
            {"method": "tvcs-iht", "time_limit": -3},
            r"time_limit must be a number in \(0, 86400\], or null for none",
        ),
        ({"method": "q-lp", "target_error": True}, r"target_error must be a number in \(0, 1\)"),
    ],
)
def test_bad_arguments_are_rejected_with_the_valid_choices(kwargs, message):
    with pytest.raises(ValueError, match=message):
        solve(make_problem(), **kwargs)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_labels", [2, 3])
@pytest.mark.parametrize("under_confusion", [False, True], ids=["symmetric", "dawid-skene"])
def test_a_budget_of_zero_assigns_nothing_under_every_model(method, n_labels, under_confusion):
    # tvcs-iht under confusion matrices once failed here, ranking the top 0 pairs.
    from assignment.engine import AssignmentProblem

    rng = np.random.default_rng(3)
    confusion = None
    if under_confusion:
        confusion = rng.dirichlet(np.ones(n_labels), size=(6, n_labels)) + np.eye(n_labels)
        confusion /= confusion.sum(axis=2, keepdims=True)
    problem = AssignmentProblem(
        rng.uniform(0.5, 0.9, (6, 15)),
        max_workers_per_task=3,
        max_tasks_per_worker=5,
        budget=0,
        n_labels=n_labels,
        confusion=confusion,
    )
    result = solve(problem, method=method, seed=1)
    assert result.rows.size == 0
    assert result.expected_accuracy == pytest.approx(1.0 / n_labels)
