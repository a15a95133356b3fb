"""mtfl: FISTA for the ℓ2,1-penalised multi-task least squares, checked by KKT and references."""

import numpy as np
import pytest
from mtfl_instances import (
    assert_kkt,
    ista_reference,
    objective,
    problem_of,
    random_tasks,
    smoothed_reference,
)

from projections.multitask import MultiTaskProblem, mtfl
from projections.multitask.fista import group_soft_threshold


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ratio", [0.8, 0.3, 0.05])
def test_the_solution_meets_the_kkt_conditions(seed, ratio):
    problem, X, Y = problem_of(seed, samples=(5, 9, 7), n_features=10, correlation=0.5 * (seed % 2))
    lam = ratio * problem.lambda_max
    result = mtfl(problem, lam, tol=1e-13)
    assert result.converged
    assert result.status == "converged"
    assert_kkt(X, Y, result.coef, lam, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_it_agrees_with_lbfgs_on_a_smoothed_penalty(seed):
    X, Y, _ = random_tasks(seed, samples=(4, 6), n_features=4, active=2)
    problem = MultiTaskProblem(X, Y)
    lam = 0.2 * problem.lambda_max
    result = mtfl(problem, lam, tol=1e-13)
    reference = smoothed_reference(X, Y, lam)
    assert result.objective <= objective(X, Y, reference, lam) + 1e-10 * result.objective
    assert objective(X, Y, reference, lam) <= result.objective * (1 + 1e-6)
    np.testing.assert_allclose(result.coef, reference, atol=1e-3)


def test_it_agrees_with_plain_proximal_gradient_run_long():
    X, Y, _ = random_tasks(11, samples=(8, 5), n_features=6, correlation=0.6)
    problem = MultiTaskProblem(X, Y)
    lam = 0.1 * problem.lambda_max
    result = mtfl(problem, lam, tol=1e-14)
    np.testing.assert_allclose(result.coef, ista_reference(X, Y, lam), atol=1e-7)
    np.testing.assert_array_equal(result.support, np.any(ista_reference(X, Y, lam) != 0, axis=1))


def test_lambda_at_or_above_lambda_max_gives_zero_weights_without_iterating():
    problem, _, _ = problem_of(3)
    for lam in (problem.lambda_max, 2.0 * problem.lambda_max):
        result = mtfl(problem, lam)
        assert result.iterations == 0
        assert result.converged
        assert not np.any(result.coef)
        assert result.gap == pytest.approx(0.0, abs=1e-9)


def test_just_below_lambda_max_only_the_feature_attaining_it_enters():
    problem, _, _ = problem_of(4)
    best = int(np.argmax(np.linalg.norm(problem.XTy, axis=1)))
    result = mtfl(problem, 0.999 * problem.lambda_max, tol=1e-14)
    assert np.flatnonzero(result.support).tolist() == [best]


def test_a_warm_start_at_the_solution_stops_at_the_first_check():
    problem, _, _ = problem_of(5)
    lam = 0.2 * problem.lambda_max
    cold = mtfl(problem, lam, tol=1e-10)
    warm = mtfl(problem, lam, coef0=cold.coef, tol=1e-10)
    assert warm.iterations == 0
    assert cold.iterations > 10
    assert warm.gap == pytest.approx(cold.gap)


def test_the_duality_gap_bounds_the_distance_to_the_optimal_objective():
    problem, _, _ = problem_of(6)
    lam = 0.1 * problem.lambda_max
    optimum = mtfl(problem, lam, tol=1e-14).objective
    early = mtfl(problem, lam, max_iter=5, check_every=1)
    assert early.status == "max_iter"
    assert not early.converged
    assert optimum <= early.objective <= optimum + early.gap * (1 + 1e-9)
    assert early.gap_iterations.tolist() == [0, 1, 2, 3, 4, 5]


def test_group_soft_threshold_is_the_proximal_map_of_the_row_norms():
    V = np.random.default_rng(7).standard_normal((30, 4))
    threshold = 1.5
    Z = group_soft_threshold(V, threshold)
    zero = ~np.any(Z, axis=1)
    assert np.all(np.linalg.norm(V[zero], axis=1) <= threshold)
    norms = np.linalg.norm(Z[~zero], axis=1, keepdims=True)
    np.testing.assert_allclose(V[~zero] - Z[~zero], threshold * Z[~zero] / norms, atol=1e-12)
    assert zero.any()
    assert (~zero).any()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lam": 0.0}, "lam must be a finite positive number"),
        ({"lam": np.nan}, "lam must be a finite positive number"),
        ({"lam": "1"}, "lam must be a positive number"),
        ({"lam": 1.0, "tol": -1e-3}, "tol must be a finite positive number"),
        ({"lam": 1.0, "max_iter": 0}, "max_iter must be an integer >= 1"),
        ({"lam": 1.0, "check_every": 1.5}, "check_every must be an integer >= 1"),
        ({"lam": 1.0, "coef0": np.zeros((3, 3))}, r"coef0 must be a real array of shape \(8, 3\)"),
        ({"lam": 1.0, "coef0": np.full((8, 3), np.inf)}, "coef0 must be finite"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, match):
    problem, _, _ = problem_of(8)
    with pytest.raises(ValueError, match=match):
        mtfl(problem, **kwargs)


def test_a_problem_that_is_not_a_multitask_problem_is_refused():
    with pytest.raises(ValueError, match="problem must be a MultiTaskProblem"):
        mtfl(np.zeros((2, 3, 4)), 1.0)
