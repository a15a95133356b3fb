"""Figures 2 and 3's protocol (benchmarks/figure2.py): every method gets the true caps, and
exclusive LASSO's lam is chosen on held-out training samples along a path wide enough."""

import argparse
import itertools

import numpy as np
import pytest
from figure2 import (
    EXCLUSIVE_LASSOS,
    LAMBDAS,
    METHODS,
    choose_lambda,
    fit_all,
    iht_options,
    validation_split,
)

from projections import TVCSStructure
from projections.solvers import LeastSquares, exclusive_lasso, tvcs_projection

SIDE = 6


@pytest.fixture
def small_regression():
    """A 6 x 6 section 5.1 instance: caps of 2 per row and column, 8 in all; 60 samples."""
    rng = np.random.default_rng(3)
    structure = TVCSStructure.from_matrix((SIDE, SIDE), max_per_row=2, max_per_col=2, total=8)
    support = tvcs_projection(structure)(rng.standard_normal((SIDE, SIDE))).support
    w_true = np.where(support, rng.standard_normal((SIDE, SIDE)), 0.0)
    A = rng.standard_normal((60, SIDE, SIDE))
    y = np.einsum("nij,ij->n", A, w_true) + 0.01 * rng.standard_normal(60)
    return A, y, structure


def test_validation_split_holds_out_a_fifth_of_the_samples_apart_from_the_fit():
    val, fit = validation_split(60, np.random.default_rng(0))

    assert len(val) == 12
    assert len(fit) == 48
    assert set(val).isdisjoint(fit)
    assert set(val) | set(fit) == set(range(60))


def test_the_lambda_path_decreases_from_10_to_one_millionth():
    assert LAMBDAS[0] == 10.0
    assert LAMBDAS[-1] == pytest.approx(1e-6)
    assert all(a > b for a, b in itertools.pairwise(LAMBDAS))


def test_chosen_lambda_has_the_smallest_validation_loss_of_the_warm_started_path(
    small_regression,
):
    A, y, structure = small_regression
    project_all = tvcs_projection(structure)

    lam, _ = choose_lambda(LeastSquares, A, y, structure, np.random.default_rng(7))

    val, fit = validation_split(A.shape[0], np.random.default_rng(7))
    fit_loss, val_loss = LeastSquares(A[fit], y[fit]), LeastSquares(A[val], y[val])
    w, scores = None, []
    for value in LAMBDAS:
        w = exclusive_lasso(fit_loss, structure.labels1, structure.labels2, lam=value, w0=w)
        w = w.solution
        scores.append(val_loss.value(project_all(w).x))
    assert lam == LAMBDAS[int(np.argmin(scores))]


def test_with_little_noise_the_chosen_lambda_lies_below_the_former_grid(small_regression):
    # the former grid {1e-3, ..., 1} cut the validation optimum off from below
    A, y, structure = small_regression

    lam, _ = choose_lambda(LeastSquares, A, y, structure, np.random.default_rng(7))

    assert lam < 1e-3


def test_every_method_returns_a_result_feasible_under_all_the_caps(small_regression):
    A, y, structure = small_regression

    fits, lams = fit_all(LeastSquares, A, y, structure, rng=np.random.default_rng(1))

    assert set(fits) == set(METHODS)
    assert all(structure.is_feasible(w != 0) for w in fits.values())
    assert set(lams) == set(EXCLUSIVE_LASSOS)
    assert all(lam in LAMBDAS for lam in lams.values())


def test_iht_step_option_one_over_l_asks_for_the_former_constant_step():
    args = argparse.Namespace(iht_step="1/L")

    assert iht_options(args, {"escape": 0}) == {"iht": {"escape": 0, "step": "1/L"}}
    assert iht_options(argparse.Namespace(iht_step="default"), {}) == {}
