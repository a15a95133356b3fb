"""An unpenalised intercept: FreeIntercept leaves the last weight out of the projection, and
GraphDA with ``fit_intercept`` fits margins <x, w> + b (Zhou, Chen & Ying, KDD 2019, §5.3)."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from projections import TVCSStructure
from projections.cardinality import project_top_k
from projections.graph import Graph
from projections.solvers import (
    FreeIntercept,
    Logistic,
    graph_da,
    tvcs_projection,
    with_intercept_column,
)


def brute_force_top_k_times_r(v: np.ndarray, k: int) -> np.ndarray:
    """argmin ||u - v||² over u with at most k non-zero entries among the first p, u[p] free."""
    p = v.size - 1
    best, best_u = math.inf, None
    for size in range(k + 1):
        for kept in itertools.combinations(range(p), size):
            u = np.zeros_like(v)
            u[list(kept)] = v[list(kept)]
            u[p] = v[p]
            distance = float(np.sum((u - v) ** 2))
            if distance < best - 1e-12:
                best, best_u = distance, u
    return best_u


@pytest.mark.parametrize("seed", range(8))
def test_the_projection_with_a_free_last_entry_is_the_euclidean_one_onto_the_set_times_r(seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(7)
    v[-1] = 10.0 * rng.standard_normal()  # often the largest entry: it must not take a slot
    result = FreeIntercept(functools.partial(project_top_k, k=2))(v)
    np.testing.assert_allclose(result.x, brute_force_top_k_times_r(v, 2))
    assert result.support[-1]
    assert result.support[:-1].sum() == 2


def test_the_inner_projection_sees_the_features_only_and_its_warm_start_is_threaded():
    structure = TVCSStructure.from_matrix((3, 4), max_per_row=1, max_per_col=1, total=3)
    rng = np.random.default_rng(0)
    v = rng.standard_normal(13)
    projection = FreeIntercept(tvcs_projection(structure))
    first = projection(v)
    direct = tvcs_projection(structure)(v[:-1])
    np.testing.assert_array_equal(first.x[:-1], direct.x)
    assert first.x[-1] == v[-1]
    assert first.warm_start is not None
    again = projection(v + 1e-6, warm_start=first.warm_start)
    np.testing.assert_array_equal(again.support, first.support)


def test_a_projection_without_warm_start_never_gets_one():
    calls = []

    def plain(u):
        calls.append(u.shape)
        return project_top_k(u, k=1)

    result = FreeIntercept(plain)(np.array([1.0, -3.0, 2.0]), warm_start=object())
    np.testing.assert_array_equal(result.x, [0.0, -3.0, 2.0])
    assert calls == [(2,)]


@pytest.mark.parametrize("v", [np.ones((2, 3)), np.ones(1), np.float64(1.0)])
def test_anything_but_a_vector_of_features_and_intercept_is_refused_naming_v(v):
    with pytest.raises(ValueError, match=r"v must be a vector"):
        FreeIntercept(functools.partial(project_top_k, k=1))(v)


def test_a_projection_that_is_not_callable_is_refused():
    with pytest.raises(TypeError, match="projection must be callable"):
        FreeIntercept(3)


def test_the_intercept_column_is_a_column_of_ones_after_the_features():
    A = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(with_intercept_column(A), [[0, 1, 1], [2, 3, 1], [4, 5, 1]])
    with pytest.raises(ValueError, match=r"A must have shape \(n_samples, n_features\)"):
        with_intercept_column(np.ones((2, 2, 2)))


def planted(seed: int, n: int, truth: np.ndarray, mu: float):
    """GraphDA's §5.3 data: x ~ N(0, I), shifted by mu on the support when y = +1."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    return rng.standard_normal((n, truth.size)) + mu * np.outer(y > 0, truth), y


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_graph_da_with_an_intercept_beats_every_model_through_the_origin(seed):
    """Only the positives are shifted, so the Bayes classifier needs a negative intercept: with
    one, GraphDA's test accuracy exceeds the best any model without one can reach in
    expectation (right on half of the negatives and on Phi(mu sqrt(|F|)) of the positives)."""
    graph, mu = Graph.grid(8, 8), 0.6
    truth = np.zeros((8, 8), dtype=bool)
    truth[2:5, 3:6] = True
    truth = truth.reshape(-1)
    X, y = planted(seed, 400, truth, mu)
    X_test, y_test = planted(100 + seed, 4000, truth, mu)
    loss = Logistic(with_intercept_column(X), y)
    result = graph_da(loss, graph, sparsity=9, gamma=5.0, fit_intercept=True)
    w = result.solution
    assert w.shape == (65,)
    assert result.support[-1]
    assert w[-1] < -0.1
    assert np.count_nonzero(w[:-1]) <= math.floor(1.1 * 9)
    phi = 0.5 * (1.0 + math.erf(mu * math.sqrt(truth.sum()) / math.sqrt(2.0)))
    through_origin = 0.5 * 0.5 + 0.5 * phi
    accuracy = np.mean(np.where(with_intercept_column(X_test) @ w >= 0, 1.0, -1.0) == y_test)
    assert accuracy > through_origin + 0.02


def test_graph_da_with_an_intercept_wants_one_weight_more_than_the_graph_has_nodes():
    graph = Graph.grid(3, 3)
    X, y = planted(0, 20, np.ones(9, dtype=bool), 1.0)
    with pytest.raises(ValueError, match=r"graph.n_nodes \+ 1 \(the intercept\) = 10"):
        graph_da(Logistic(X, y), graph, sparsity=2, gamma=1.0, fit_intercept=True)
    with pytest.raises(ValueError, match="fit_intercept"):
        graph_da(Logistic(X, y), graph, sparsity=2, gamma=1.0, fit_intercept="yes")
