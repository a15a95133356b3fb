"""Online dual averaging: DA-IHT and GraphDA (Zhou, Chen & Ying, KDD 2019)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from projections import TVCSStructure
from projections.cardinality import project_top_k
from projections.graph import Graph
from projections.solvers import Logistic, dual_averaging, graph_da, tvcs_projection


def planted_logistic(seed: int, n: int, support: np.ndarray, mu: float) -> Logistic:
    """GraphDA's §5.3 data: x ~ N(0, I), shifted by mu on the support when y = +1."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    X = rng.standard_normal((n, support.size)) + mu * np.outer(y > 0, support.reshape(-1))
    return Logistic(X.reshape((n, *support.shape)), y)


def blob_on_grid(rows: int, cols: int, r0: int, c0: int, h: int, w: int) -> np.ndarray:
    mask = np.zeros((rows, cols), dtype=bool)
    mask[r0 : r0 + h, c0 : c0 + w] = True
    return mask


class ConstantGradient:
    """A 'loss' whose every sample gradient is ``c``: the iterates have a closed form."""

    def __init__(self, c: np.ndarray, n: int) -> None:
        self.c, self.n_samples, self.feature_shape = c, n, c.shape

    def sample_gradient(self, w, i):
        return self.c


def test_the_iterate_is_the_projection_of_the_scaled_gradient_average():
    c = np.array([3.0, -1.0, 0.5, 2.0])
    seen = []
    dual_averaging(
        ConstantGradient(c, 9),
        functools.partial(project_top_k, k=2),
        gamma=4.0,
        callback=lambda t, w, _: seen.append((t, w.copy())),
    )
    for t, w in seen:  # after t steps the average is c, scaled by -sqrt(t) / gamma
        np.testing.assert_allclose(w, -np.sqrt(t) / 4.0 * np.array([3.0, 0.0, 0.0, 2.0]))
    assert [t for t, _ in seen] == list(range(1, 10))


def test_da_iht_with_top_k_keeps_every_iterate_k_sparse_and_recovers_a_strong_signal():
    truth = np.zeros(40, dtype=bool)
    truth[[3, 11, 12, 30]] = True
    loss = planted_logistic(0, 400, truth, mu=1.5)
    sizes = []
    result = dual_averaging(
        loss,
        functools.partial(project_top_k, k=4),
        gamma=5.0,
        callback=lambda t, w, _: sizes.append(np.count_nonzero(w)),
    )
    assert max(sizes) <= 4
    assert result.iterations == 400
    assert result.status == "max_iter"
    np.testing.assert_array_equal(result.support, truth)
    assert result.history[-1] < result.history[0]  # the logistic loss went down


def test_da_iht_with_a_tvcs_projection_keeps_every_iterate_within_the_caps():
    truth = np.zeros((6, 8), dtype=bool)
    truth[0, 1] = truth[2, 5] = truth[4, 4] = True
    loss = planted_logistic(1, 200, truth, mu=1.5)
    caps = TVCSStructure.from_matrix((6, 8), max_per_row=1, max_per_col=1, total=3)
    iterates = []
    result = dual_averaging(
        loss, tvcs_projection(caps), gamma=5.0, callback=lambda t, w, _: iterates.append(w != 0)
    )
    for nonzero in iterates:
        assert nonzero.sum() <= 3
        assert nonzero.sum(axis=1).max() <= 1
        assert nonzero.sum(axis=0).max() <= 1
    np.testing.assert_array_equal(result.support, truth)
    assert result.n_warm_started > 0


def test_graph_da_keeps_every_iterate_connected_and_recovers_a_planted_blob():
    g = Graph.grid(8, 8)
    truth = blob_on_grid(8, 8, 2, 3, 2, 3)  # 6 connected nodes
    loss = planted_logistic(2, 150, truth, mu=1.5)
    supports = []
    result = graph_da(
        loss, g, sparsity=6, gamma=5.0, callback=lambda t, w, _: supports.append(w != 0)
    )
    for nonzero in supports:
        assert g.n_components(nonzero) <= 1
        assert nonzero.sum() <= 6
    assert g.n_components(result.support) == 1
    assert (result.support & truth).sum() >= 5
    assert result.n_projections == 2 * 150


def test_bad_arguments_are_refused_naming_them():
    loss = ConstantGradient(np.ones(4), 3)
    top2 = functools.partial(project_top_k, k=2)
    for gamma in (0.0, -1.0, float("inf"), "1", True):
        with pytest.raises(ValueError, match="gamma"):
            dual_averaging(loss, top2, gamma=gamma)
    with pytest.raises(ValueError, match="max_iter"):
        dual_averaging(loss, top2, gamma=1.0, max_iter=-1)
    with pytest.raises(ValueError, match="eval_every"):
        dual_averaging(loss, top2, gamma=1.0, eval_every=0)
    with pytest.raises(TypeError, match="sample_gradient"):
        dual_averaging(object(), top2, gamma=1.0)
    with pytest.raises(TypeError, match="head"):
        dual_averaging(loss, top2, gamma=1.0, head="top-k")
    with pytest.raises(TypeError, match="projection"):
        dual_averaging(loss, None, gamma=1.0)
    with pytest.raises(ValueError, match="feature_shape"):
        graph_da(loss, Graph.grid(3, 3), sparsity=2, gamma=1.0)
    with pytest.raises(ValueError, match="graph"):
        graph_da(loss, [[0, 1]], sparsity=2, gamma=1.0)


def test_a_gradient_of_the_wrong_shape_is_refused():
    class Wrong(ConstantGradient):
        def sample_gradient(self, w, i):
            return np.ones(5)

    with pytest.raises(ValueError, match="sample gradient returned shape"):
        dual_averaging(Wrong(np.ones(4), 3), functools.partial(project_top_k, k=2), gamma=1.0)


class _OnlineWithoutFeatureShape:
    n_samples = 3

    def sample_gradient(self, w, i):
        return np.ones(4)


def test_a_loss_without_feature_shape_is_refused_at_the_edge_naming_it():
    top_two = functools.partial(project_top_k, k=2)
    with pytest.raises(ValueError, match=r"^loss\.feature_shape must be the shape of w"):
        dual_averaging(_OnlineWithoutFeatureShape(), top_two, gamma=1.0)
