"""mtfl_path: the λ grid, warm starts, and sequential DPC giving the unscreened solutions."""

import numpy as np
import pytest
from mtfl_instances import assert_kkt, problem_of

from projections.multitask import lambda_grid, mtfl_path


def test_the_default_grid_runs_from_lambda_max_down_to_the_ratio_evenly_in_log():
    grid = lambda_grid(2.0, n_lambdas=5, min_ratio=0.01)
    np.testing.assert_allclose(grid, 2.0 * np.array([1.0, 10**-0.5, 0.1, 10**-1.5, 0.01]))


@pytest.mark.parametrize("seed", range(2))
def test_screened_and_unscreened_paths_give_the_same_solutions(seed):
    problem, X, Y = problem_of(seed, samples=(12, 8, 10), n_features=40, active=4, noise=0.05)
    screened = mtfl_path(problem, n_lambdas=10, screening="dpc", tol=1e-12)
    plain = mtfl_path(problem, n_lambdas=10, screening=None, tol=1e-12)
    np.testing.assert_array_equal(screened.supports, plain.supports)
    np.testing.assert_allclose(screened.coefs, plain.coefs, atol=1e-5)
    assert np.all(screened.n_readded == 0)
    assert plain.kept[1:].all()
    for lam, W in zip(screened.lambdas, screened.coefs, strict=True):
        assert_kkt(X, Y, W, lam, atol=1e-3)


def test_every_solution_on_the_path_has_a_full_problem_gap_within_tol():
    problem, _, _ = problem_of(5, samples=(10, 10), n_features=30, correlation=0.5)
    path = mtfl_path(problem, n_lambdas=10, tol=1e-9)
    assert path.converged.all()
    assert np.all(path.gaps <= 1e-9 * 0.5 * problem.y_norm2)
    for lam, W, gap in zip(path.lambdas, path.coefs, path.gaps, strict=True):
        assert problem.certificate(W, lam).gap == pytest.approx(gap, abs=1e-12)


def test_the_first_point_is_lambda_max_with_zero_weights_and_everything_discarded():
    problem, _, _ = problem_of(6)
    path = mtfl_path(problem, n_lambdas=4)
    assert path.lambdas[0] == problem.lambda_max
    assert not path.coefs[0].any()
    assert not path.kept[0].any()
    assert path.rejection_ratios[0] == 1.0


def test_the_rejection_ratio_counts_discarded_features_among_the_inactive_ones():
    problem, _, _ = problem_of(7, samples=(20, 20, 20), n_features=60, active=3, noise=0.01)
    path = mtfl_path(problem, n_lambdas=8)
    inactive = ~np.any(path.coefs != 0, axis=2)
    expected = (inactive & ~path.kept).sum(axis=1) / inactive.sum(axis=1)
    np.testing.assert_allclose(path.rejection_ratios, expected)
    assert np.all(path.rejection_ratios > 0.5)


def test_a_feature_put_back_by_the_final_check_is_counted_and_solved_for(monkeypatch):
    problem, _, _ = problem_of(8, samples=(15, 15), n_features=25, active=3, noise=0.01)
    reference = mtfl_path(problem, n_lambdas=6, screening=None, tol=1e-12)

    def discard_everything(problem, lam, lam0, theta0):
        class Nothing:
            kept = np.zeros(problem.n_features, dtype=bool)

        return Nothing()

    monkeypatch.setattr("projections.multitask.path.screen", discard_everything)
    path = mtfl_path(problem, n_lambdas=6, tol=1e-12)
    assert path.n_readded[1:].sum() > 0
    np.testing.assert_allclose(path.coefs, reference.coefs, atol=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lambdas": [1.0, 2.0]}, "lambdas must be strictly decreasing"),
        ({"lambdas": [1.0, -2.0]}, "lambdas must be finite and positive"),
        ({"lambdas": []}, "lambdas must be a non-empty 1-d sequence"),
        ({"lambdas": ["a"]}, "lambdas must be a non-empty 1-d sequence"),
        ({"screening": "edpp"}, "screening must be one of 'dpc', None"),
        ({"n_lambdas": 0}, "n_lambdas must be an integer >= 1"),
        ({"min_ratio": 1.5}, r"min_ratio must be in \(0, 1\) for n_lambdas = 100 > 1"),
        ({"min_ratio": 1.0}, r"min_ratio must be in \(0, 1\) for n_lambdas = 100 > 1"),
        ({"tol": 0.0}, "tol must be a finite positive number"),
        ({"max_iter": -1}, "max_iter must be an integer >= 1"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, match):
    problem, _, _ = problem_of(9)
    with pytest.raises(ValueError, match=match):
        mtfl_path(problem, **kwargs)


def test_a_grid_of_one_lambda_may_end_where_it_starts():
    np.testing.assert_array_equal(lambda_grid(2.0, n_lambdas=1, min_ratio=1.0), [2.0])
