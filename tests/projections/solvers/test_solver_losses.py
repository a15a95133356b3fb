"""The least-squares and squared-hinge losses of Yang et al., ICML 2017, §5.1."""

import numpy as np
import pytest
from finite_differences import central_differences

from projections.solvers import LeastSquares, Logistic, Loss, SquaredHinge, StochasticOracle


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 3, 4))
    w = rng.standard_normal((3, 4))
    y = rng.standard_normal(40)
    labels = rng.choice([-1.0, 1.0], size=40)
    return A, w, y, labels


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_least_squares_value_and_gradient_match_the_formula_and_finite_differences(data, reduction):
    A, w, y, _ = data
    loss = LeastSquares(A, y, reduction=reduction)
    scale = 1 / 40 if reduction == "mean" else 1.0
    residual = A.reshape(40, -1) @ w.reshape(-1) - y

    assert loss.value(w) == pytest.approx(0.5 * scale * residual @ residual)
    np.testing.assert_allclose(
        loss.gradient(w), central_differences(loss.value, w), rtol=1e-6, atol=1e-8
    )


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_squared_hinge_value_and_gradient_match_the_formula_and_finite_differences(data, reduction):
    A, w, _, labels = data
    loss = SquaredHinge(A, labels, reduction=reduction)
    scale = 1 / 40 if reduction == "mean" else 1.0
    margins = labels * (A.reshape(40, -1) @ w.reshape(-1))

    assert loss.value(w) == pytest.approx(scale * np.sum(np.maximum(0, 1 - margins) ** 2))
    np.testing.assert_allclose(
        loss.gradient(w), central_differences(loss.value, w), rtol=1e-5, atol=1e-7
    )


@pytest.mark.parametrize("cls", [LeastSquares, SquaredHinge])
def test_losses_satisfy_the_protocols_and_accept_flat_or_shaped_w(data, cls):
    A, w, y, labels = data
    loss = cls(A, labels if cls is SquaredHinge else y)

    assert isinstance(loss, Loss)
    assert isinstance(loss, StochasticOracle)
    assert loss.feature_shape == (3, 4)
    assert loss.gradient(w).shape == (3, 4)
    assert loss.gradient(w.reshape(-1)).shape == (12,)
    assert loss.value(w) == loss.value(w.reshape(-1))


@pytest.mark.parametrize("cls", [LeastSquares, SquaredHinge])
def test_the_stochastic_gradient_is_an_unbiased_mini_batch_estimate(data, cls):
    A, w, y, labels = data
    loss = cls(A, labels if cls is SquaredHinge else y, batch_size=5)
    rng = np.random.default_rng(1)
    mean = np.mean([loss.stochastic_gradient(w, rng) for _ in range(4000)], axis=0)

    full = loss.gradient(w)
    assert np.linalg.norm(mean - full) < 0.05 * np.linalg.norm(full)


def test_a_full_batch_stochastic_gradient_is_the_gradient(data):
    A, w, y, _ = data
    loss = LeastSquares(A, y, batch_size=1000)

    assert loss.batch_size == 40
    np.testing.assert_allclose(
        loss.stochastic_gradient(w, np.random.default_rng(0)), loss.gradient(w)
    )
    assert loss.stochastic_lipschitz() == pytest.approx(loss.lipschitz())


@pytest.mark.parametrize(("cls", "curvature"), [(LeastSquares, 1.0), (SquaredHinge, 2.0)])
def test_lipschitz_bounds_the_largest_curvature_tightly(data, cls, curvature):
    A, _, y, labels = data
    loss = cls(A, labels if cls is SquaredHinge else y)
    exact = curvature * np.linalg.norm(A.reshape(40, -1), 2) ** 2 / 40

    assert exact <= loss.lipschitz() <= 1.02 * exact


def test_stochastic_lipschitz_lies_between_the_full_and_the_per_sample_constants(data):
    A, _, y, _ = data
    loss = LeastSquares(A, y, batch_size=4)
    per_sample = np.max(np.sum(A.reshape(40, -1) ** 2, axis=1))  # mean-reduced: scale * n = 1

    assert loss.lipschitz() < loss.stochastic_lipschitz() < per_sample


def test_least_squares_minimize_on_support_is_restricted_least_squares(data):
    A, w, y, _ = data
    loss = LeastSquares(A, y)
    support = np.zeros((3, 4), dtype=bool)
    support[0, 1] = support[2, 3] = support[1, 0] = True
    z = loss.minimize_on_support(w, support)

    assert np.all(z[~support] == 0)
    expected = np.linalg.lstsq(A.reshape(40, -1)[:, support.reshape(-1)], y, rcond=None)[0]
    np.testing.assert_allclose(z[support], expected)
    np.testing.assert_allclose(loss.gradient(z)[support], 0, atol=1e-12)


def test_squared_hinge_predicts_and_scores_labels(data):
    A, w, _, _ = data
    labels = np.where(np.einsum("nij,ij->n", A, w) >= 0, 1.0, -1.0)
    loss = SquaredHinge(A, labels)

    assert loss.error_rate(w) == 0.0
    assert loss.error_rate(-w) == 1.0


def test_losses_never_modify_their_inputs(data):
    A, w, y, _ = data
    A0, w0, y0 = A.copy(), w.copy(), y.copy()
    loss = LeastSquares(A, y)
    loss.value(w)
    loss.gradient(w)
    loss.stochastic_gradient(w, np.random.default_rng(0))
    loss.minimize_on_support(w, np.ones((3, 4), dtype=bool))

    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(w, w0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((np.zeros(5), np.zeros(5)), {}, "at least 2 dimensions"),
        ((np.zeros((5, 2)), np.zeros(4)), {}, "y must have shape"),
        ((np.zeros((5, 2)), np.zeros(5)), {"reduction": "median"}, "'mean', 'sum'"),
        ((np.zeros((5, 2)), np.zeros(5)), {"batch_size": 0}, "batch_size"),
        ((np.full((5, 2), np.nan), np.zeros(5)), {}, "finite"),
        ((np.zeros((0, 2)), np.zeros(0)), {}, "at least one sample"),
    ],
)
def test_least_squares_rejects_bad_data_with_value_error(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        LeastSquares(*args, **kwargs)


def test_squared_hinge_rejects_labels_other_than_minus_one_and_one():
    with pytest.raises(ValueError, match="labels -1 and 1"):
        SquaredHinge(np.zeros((3, 2)), np.array([1.0, 0.0, -1.0]))


def test_a_loss_rejects_w_of_the_wrong_shape(data):
    A, _, y, _ = data
    with pytest.raises(ValueError, match="w has shape"):
        LeastSquares(A, y).value(np.zeros(11))


@pytest.mark.parametrize(
    "make",
    [
        lambda A, y, labels: LeastSquares(A, y),
        lambda A, y, labels: LeastSquares(A, y, reduction="sum"),
        lambda A, y, labels: SquaredHinge(A, labels),
        lambda A, y, labels: SquaredHinge(A, labels, l2=0.3),
        lambda A, y, labels: Logistic(A, labels),
    ],
)
def test_a_restricted_loss_equals_the_loss_with_the_other_coordinates_at_zero(data, make):
    A, _, y, labels = data
    loss = make(A, y, labels)
    index = np.array([7, 0, 3, 11])
    sub = loss.restricted(index)
    rng = np.random.default_rng(4)
    for _ in range(3):
        z = rng.standard_normal(index.size)
        w = np.zeros(loss.n_features)
        w[index] = z
        assert sub.value(z) == pytest.approx(loss.value(w), rel=1e-12)
        np.testing.assert_allclose(sub.gradient(z), loss.gradient(w)[index], rtol=1e-12)
    assert sub.feature_shape == (4,)
    assert sub.n_samples == loss.n_samples
    assert sub.lipschitz() <= loss.lipschitz() * (1 + 1e-9)  # a submatrix's norm is smaller
    assert loss.feature_shape == (3, 4)  # the original is untouched


@pytest.mark.parametrize(
    "index", [np.array([0.5]), np.array([[1]]), np.array([-1]), np.array([12])]
)
def test_restricted_rejects_an_index_that_is_not_coordinates(data, index):
    A, _, y, _ = data
    with pytest.raises(ValueError, match="index must"):
        LeastSquares(A, y).restricted(index)
