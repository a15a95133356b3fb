"""The squared hinge's optional ridge term ``(l2 / 2) ||w||^2`` (off by default)."""

import numpy as np
import pytest
from finite_differences import central_differences

from projections import TVCSStructure
from projections.solvers import SquaredHinge, gradmp, iht, tvcs_projection


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((40, 3, 4))
    w = rng.standard_normal((3, 4))
    labels = rng.choice([-1.0, 1.0], size=40)
    return A, w, labels


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("l2", [0.3, 7.0])
def test_value_is_the_hinge_plus_half_l2_times_the_squared_norm_and_gradient_matches_fd(
    data, reduction, l2
):
    A, w, labels = data
    loss = SquaredHinge(A, labels, reduction=reduction, l2=l2)
    plain = SquaredHinge(A, labels, reduction=reduction)

    assert loss.value(w) == pytest.approx(plain.value(w) + 0.5 * l2 * np.sum(w * w))
    np.testing.assert_allclose(
        loss.gradient(w), central_differences(loss.value, w), rtol=1e-5, atol=1e-7
    )


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_lipschitz_gains_exactly_l2_and_still_bounds_the_curvature(data, reduction):
    A, _, labels = data
    l2 = 2.5
    loss = SquaredHinge(A, labels, reduction=reduction, l2=l2)
    plain = SquaredHinge(A, labels, reduction=reduction)
    scale = 1 / 40 if reduction == "mean" else 1.0
    exact = 2 * scale * np.linalg.norm(A.reshape(40, -1), 2) ** 2 + l2

    assert loss.lipschitz() == plain.lipschitz() + l2
    assert exact <= loss.lipschitz() <= 1.02 * exact
    assert loss.stochastic_lipschitz() == pytest.approx(plain.stochastic_lipschitz() + l2)


def test_with_l2_the_stochastic_gradient_stays_unbiased_and_samples_sum_to_the_gradient(data):
    A, w, labels = data
    for reduction in ("mean", "sum"):
        loss = SquaredHinge(A, labels, reduction=reduction, l2=1.5, batch_size=40)
        scale = 1 / 40 if reduction == "mean" else 1.0
        np.testing.assert_allclose(
            loss.stochastic_gradient(w, np.random.default_rng(0)), loss.gradient(w)
        )
        total = scale * sum(loss.sample_gradient(w, i) for i in range(40))
        np.testing.assert_allclose(total, loss.gradient(w))


def test_l2_zero_is_todays_loss_bit_for_bit(data):
    A, w, labels = data
    loss, plain = SquaredHinge(A, labels, l2=0.0), SquaredHinge(A, labels)

    assert loss.value(w) == plain.value(w)
    assert np.array_equal(loss.gradient(w), plain.gradient(w))
    assert loss.lipschitz() == plain.lipschitz()
    assert loss.stochastic_lipschitz() == plain.stochastic_lipschitz()
    assert np.array_equal(loss.sample_gradient(w, 3), plain.sample_gradient(w, 3))


def test_l2_zero_leaves_iht_and_gradmp_results_bit_for_bit():
    rng = np.random.default_rng(11)
    structure = TVCSStructure.from_matrix((5, 5), max_per_row=2, max_per_col=2, total=6)
    w_true = np.where(
        tvcs_projection(structure)(rng.standard_normal((5, 5))).support,
        rng.standard_normal((5, 5)),
        0.0,
    )
    A = rng.standard_normal((30, 5, 5))
    y = np.where(np.einsum("nij,ij->n", A, w_true) >= 0, 1.0, -1.0)
    proj = tvcs_projection(structure)
    for solver in (iht, gradmp):
        a = solver(SquaredHinge(A, y, l2=0.0), proj).solution
        b = solver(SquaredHinge(A, y), proj).solution
        assert np.array_equal(a, b)


def test_a_larger_l2_gives_iht_a_smaller_solution():
    rng = np.random.default_rng(2)
    structure = TVCSStructure.from_matrix((5, 5), max_per_row=2, max_per_col=2, total=6)
    A = rng.standard_normal((30, 5, 5))
    y = rng.choice([-1.0, 1.0], size=30)
    proj = tvcs_projection(structure)
    norms = [np.linalg.norm(iht(SquaredHinge(A, y, l2=l2), proj).solution) for l2 in (0, 1, 10)]

    assert norms[0] > norms[1] > norms[2] > 0


@pytest.mark.parametrize("bad", [-1e-3, np.inf, np.nan, "1", True, None])
def test_l2_must_be_a_finite_non_negative_number(data, bad):
    A, _, labels = data
    with pytest.raises(ValueError, match="l2 must be"):
        SquaredHinge(A, labels, l2=bad)
