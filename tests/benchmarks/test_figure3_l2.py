"""The issue-15 diagnosis of Figure 3 (benchmarks/figure3_l2.py): the ridge weight l2 is chosen
on the validation split of the training samples, with the same grid (holding 0) for every
variant, and the expected error is the Gaussian angle formula."""

import itertools

import numpy as np
import pytest
from figure2 import validation_split
from figure3_l2 import (
    L2_GRID,
    VALIDATED,
    choose_l2,
    expected_error,
    refit_on_support,
    trial_fits,
)

from projections.solvers import SquaredHinge


def test_the_grid_increases_from_zero_so_the_unpenalised_fit_stays_a_candidate():
    assert L2_GRID[0] == 0.0
    assert all(a < b for a, b in itertools.pairwise(L2_GRID))


def test_l2_is_fitted_on_the_fit_part_and_scored_on_the_held_out_fifth_only():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 3, 3))
    y = rng.choice([-1.0, 1.0], size=50)
    seen = []

    def fit(a, b, l2):
        seen.append((a.copy(), l2))
        return np.full((3, 3), l2 - 0.5)  # a different w for each l2

    l2, scores = choose_l2(fit, A, y, np.random.default_rng(4))

    val, keep = validation_split(50, np.random.default_rng(4))
    assert [s[1] for s in seen] == list(L2_GRID)
    assert all(np.array_equal(a, A[keep]) for a, _ in seen)
    expected = [SquaredHinge(A[val], y[val]).value(np.full((3, 3), v - 0.5)) for v in L2_GRID]
    assert scores == expected
    assert l2 == L2_GRID[int(np.argmin(expected))]


def test_ties_keep_the_unpenalised_fit():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((20, 2, 2))
    y = rng.choice([-1.0, 1.0], size=20)

    l2, _ = choose_l2(lambda a, b, v: np.ones((2, 2)), A, y, np.random.default_rng(0))

    assert l2 == 0.0


def test_every_validated_variant_gets_the_same_grid_and_exclusive_lassos_split(monkeypatch):
    import figure3_l2

    calls = []

    def recorder(fit, A, y, rng, grid=L2_GRID):
        calls.append((grid, validation_split(A.shape[0], rng)[0], A.shape[0]))
        return 0.0, []

    monkeypatch.setattr(figure3_l2, "choose_l2", recorder)
    n, t, seed = 60, 0, 0
    trial_fits(n, t, seed)

    split = validation_split(n, np.random.default_rng([seed, n, t, 1]))[0]
    assert len(calls) == len(VALIDATED)
    for grid, val, size in calls:
        assert grid == L2_GRID
        assert size == n  # the training samples only, never the test samples
        assert np.array_equal(val, split)


def test_a_support_refit_is_zero_off_the_support_and_stationary_on_it():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((80, 4, 4))
    y = rng.choice([-1.0, 1.0], size=80)
    support = rng.random((4, 4)) < 0.5

    w = refit_on_support(A, y, support, 0.3)

    assert np.all(w[~support] == 0)
    g = SquaredHinge(A, y, l2=0.3).gradient(w)
    np.testing.assert_allclose(g[support], 0.0, atol=1e-6)


def test_expected_error_is_the_gaussian_disagreement_rate():
    rng = np.random.default_rng(3)
    w_true, w = rng.standard_normal((2, 5, 5))
    X = rng.standard_normal((200_000, 25))
    disagree = np.mean(np.sign(X @ w.reshape(-1)) != np.sign(X @ w_true.reshape(-1)))

    assert expected_error(w, w_true) == pytest.approx(disagree, abs=0.005)
    assert expected_error(w_true, w_true) == pytest.approx(0.0, abs=1e-7)
    assert expected_error(-w_true, w_true) == pytest.approx(1.0)
    assert expected_error(np.zeros((5, 5)), w_true) == 0.5
