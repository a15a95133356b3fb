"""The logistic loss of GraphDA's online logistic regression (Zhou et al., KDD 2019, §5.3)."""

import numpy as np
import pytest
from finite_differences import central_differences

from projections.solvers import LeastSquares, Logistic, Loss, SquaredHinge


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((30, 2, 5))
    w = rng.standard_normal((2, 5))
    labels = rng.choice([-1.0, 1.0], size=30)
    return A, w, labels


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_logistic_value_and_gradient_match_the_formula_and_finite_differences(data, reduction):
    A, w, labels = data
    loss = Logistic(A, labels, reduction=reduction)
    scale = 1 / 30 if reduction == "mean" else 1.0
    margins = labels * (A.reshape(30, -1) @ w.reshape(-1))

    assert isinstance(loss, Loss)
    assert loss.value(w) == pytest.approx(scale * np.sum(np.log1p(np.exp(-margins))))
    np.testing.assert_allclose(
        loss.gradient(w), central_differences(loss.value, w), rtol=1e-6, atol=1e-8
    )


def test_logistic_stays_finite_and_exact_for_huge_margins():
    A = np.array([[1.0], [1.0]])
    loss = Logistic(A, np.array([1.0, -1.0]), reduction="sum")
    w = np.array([800.0])  # exp(800) overflows a float

    assert loss.value(w) == pytest.approx(800.0)  # log(1 + e^-800) + log(1 + e^800)
    np.testing.assert_allclose(loss.gradient(w), [1.0])  # -sigma(-800) + sigma(800)


@pytest.mark.parametrize("cls", [LeastSquares, SquaredHinge, Logistic])
def test_sample_gradients_are_the_unscaled_terms_of_the_sum_gradient(data, cls):
    A, w, labels = data
    loss = cls(A, labels, reduction="sum")

    total = sum(loss.sample_gradient(w, i) for i in range(30))

    np.testing.assert_allclose(total, loss.gradient(w), rtol=1e-10, atol=1e-12)
    assert loss.sample_gradient(w.reshape(-1), 4).shape == (10,)


def test_the_logistic_lipschitz_constant_bounds_gradient_differences(data):
    A, _, labels = data
    loss = Logistic(A, labels)
    rng = np.random.default_rng(0)
    for _ in range(20):
        u, v = rng.standard_normal((2, 2, 5))
        change = np.linalg.norm(loss.gradient(u) - loss.gradient(v))
        assert change <= loss.lipschitz() * np.linalg.norm(u - v) + 1e-12


def test_logistic_refuses_labels_other_than_plus_and_minus_one(data):
    A, _, _ = data
    with pytest.raises(ValueError, match="y must hold labels -1 and 1"):
        Logistic(A, np.zeros(30))


@pytest.mark.parametrize("index", [-1, 30, 2.0, True])
def test_sample_gradient_refuses_an_index_outside_the_samples(data, index):
    A, w, labels = data
    with pytest.raises(ValueError, match="index must"):
        Logistic(A, labels).sample_gradient(w, index)
