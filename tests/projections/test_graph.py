"""Head and tail projections onto connected supports (GraphDA, KDD 2019, Appendix A)."""

from __future__ import annotations

import functools
import itertools
import sys
import types

import numpy as np
import pytest

from projections import graph as graph_module
from projections.graph import (
    HEAD_FACTOR,
    TAIL_FACTOR,
    Graph,
    GraphProjection,
    head_projection,
    tail_projection,
)


def _random_connected_graph(seed: int, n: int = 10, n_edges: int = 14) -> Graph:
    rng = np.random.default_rng(seed)
    edges = {(int(rng.integers(i)), i) for i in range(1, n)}  # a random spanning tree
    while len(edges) < n_edges:
        a, b = sorted(rng.choice(n, 2, replace=False).tolist())
        edges.add((a, b))
    return Graph.from_edges(n, sorted(edges))


TINY_GRAPHS = {
    "grid 3x4": Graph.grid(3, 4),
    "path of 10": Graph.from_edges(10, [[i, i + 1] for i in range(9)]),
    "star of 9": Graph.from_edges(9, [[0, i] for i in range(1, 9)]),
    "random 10 nodes": _random_connected_graph(1),
    "random 10 nodes, other": _random_connected_graph(2),
}


@functools.cache
def connected_supports(name: str, k: int) -> np.ndarray:
    """Every connected support of 1..k nodes of TINY_GRAPHS[name], as bool rows (brute force)."""
    g = TINY_GRAPHS[name]
    rows = []
    for r in range(1, k + 1):
        for nodes in itertools.combinations(range(g.n_nodes), r):
            mask = np.zeros(g.n_nodes, dtype=bool)
            mask[list(nodes)] = True
            if _connected_by_search(g, mask):
                rows.append(mask)
    return np.array(rows)


def _connected_by_search(g: Graph, mask: np.ndarray) -> bool:
    """Depth-first search inside ``mask`` from its first node reaches all of it."""
    nodes = set(np.flatnonzero(mask).tolist())
    stack, seen = [min(nodes)], {min(nodes)}
    while stack:
        u = stack.pop()
        for a, b in g.edges.tolist():
            w = b if a == u else a if b == u else None
            if w in nodes and w not in seen:
                seen.add(w)
                stack.append(w)
    return seen == nodes


def test_the_33_by_33_grid_has_the_papers_1089_nodes_and_2112_edges():
    g = Graph.grid(33, 33)
    assert (g.n_nodes, len(g.edges)) == (1089, 2112)
    assert np.all(g.costs == 1.0)


def test_components_are_counted_like_a_depth_first_search():
    g = Graph.grid(3, 4)
    rng = np.random.default_rng(0)
    for _ in range(50):
        mask = rng.random(12) < 0.5
        if mask.any():
            assert (g.n_components(mask) == 1) == _connected_by_search(g, mask)
    assert g.n_components(np.array([1, 0, 1, 0] + [0] * 8, dtype=bool)) == 2


@pytest.mark.parametrize("name", sorted(TINY_GRAPHS))
@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_the_head_captures_its_stated_fraction_of_the_best_connected_energy(name, k):
    g = TINY_GRAPHS[name]
    rng = np.random.default_rng(k)
    supports = connected_supports(name, k)
    for _ in range(5):
        v = rng.standard_normal(g.n_nodes)
        best = (supports * v**2).sum(axis=1).max()
        result = head_projection(v, g, sparsity=k)
        assert g.n_components(result.support) == 1
        assert result.support.sum() <= int(1.1 * k)
        assert result.objective >= HEAD_FACTOR * best
        np.testing.assert_array_equal(result.x, np.where(result.support, v, 0.0))


@pytest.mark.parametrize("name", sorted(TINY_GRAPHS))
@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_the_tail_is_connected_and_within_its_stated_factor_of_the_best_residual(name, k):
    g = TINY_GRAPHS[name]
    rng = np.random.default_rng(10 + k)
    supports = connected_supports(name, k)
    for _ in range(5):
        v = rng.standard_normal(g.n_nodes)
        best_residual = (v**2).sum() - (supports * v**2).sum(axis=1).max()
        result = tail_projection(v, g, sparsity=k)
        assert g.n_components(result.support) == 1
        assert result.support.sum() <= int(1.1 * k)
        assert np.sum((v - result.x) ** 2) <= TAIL_FACTOR * best_residual + 1e-12


def test_on_the_grid_the_tail_stays_within_its_size_range_and_finds_a_planted_blob():
    g = Graph.grid(33, 33)
    rng = np.random.default_rng(0)
    blob = np.zeros((33, 33), dtype=bool)
    blob[10:15, 20:25] = True  # 25 connected nodes
    v = 0.3 * rng.standard_normal(1089) + 3.0 * blob.ravel()
    result = tail_projection(v, g, sparsity=25)
    assert result.converged
    assert 25 <= result.support.sum() <= 27
    assert g.n_components(result.support) == 1
    assert (result.support & blob.ravel()).sum() >= 23


def test_several_components_are_allowed_when_asked_for():
    g = Graph.grid(10, 10)
    v = np.zeros(100)
    v[[0, 1, 10]] = 5.0  # one corner
    v[[88, 89, 99]] = 5.0  # the opposite corner
    one = tail_projection(v, g, sparsity=6)
    two = tail_projection(v, g, sparsity=6, n_components=2)
    assert g.n_components(one.support) == 1
    assert g.n_components(two.support) <= 2
    assert two.objective == pytest.approx(150.0)
    assert one.objective < two.objective


def test_a_zero_vector_projects_to_the_empty_support():
    result = tail_projection(np.zeros(12), Graph.grid(3, 4), sparsity=3)
    assert not result.support.any()
    assert result.objective == 0.0


def test_a_warm_start_gives_a_support_in_the_same_model():
    g = Graph.grid(33, 33)
    rng = np.random.default_rng(1)
    v = rng.standard_normal(1089)
    first = tail_projection(v, g, sparsity=26)
    again = GraphProjection(g, 26)(v + 0.01 * rng.standard_normal(1089), first.warm_start)
    assert isinstance(first.warm_start, float)
    assert g.n_components(again.support) == 1
    assert again.support.sum() <= 28


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sparsity": 0}, "sparsity"),
        ({"sparsity": 2.5}, "sparsity"),
        ({"sparsity": 3, "n_components": 4}, "n_components"),
        ({"sparsity": 3, "tolerance": -0.1}, "tolerance"),
        ({"sparsity": 3, "max_iter": 0}, "max_iter"),
        ({"sparsity": 3, "warm_start": "x"}, "warm_start"),
    ],
)
def test_bad_options_are_refused_naming_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tail_projection(np.ones(12), Graph.grid(3, 4), **kwargs)


def test_bad_vectors_and_graphs_are_refused_naming_the_argument():
    g = Graph.grid(3, 4)
    with pytest.raises(ValueError, match="v has shape"):
        head_projection(np.ones(5), g, sparsity=2)
    with pytest.raises(ValueError, match="finite"):
        head_projection(np.full(12, np.nan), g, sparsity=2)
    with pytest.raises(ValueError, match="graph must be"):
        head_projection(np.ones(12), [[0, 1]], sparsity=2)
    with pytest.raises(ValueError, match="kind"):
        GraphProjection(g, 2, kind="middle")
    with pytest.raises(ValueError, match="edges must join"):
        Graph.from_edges(3, [[0, 3]])
    with pytest.raises(ValueError, match="self-loops"):
        Graph.from_edges(3, [[1, 1]])
    with pytest.raises(ValueError, match="costs"):
        Graph.from_edges(3, [[0, 1]], costs=[0.0])
    with pytest.raises(ValueError, match="n_nodes"):
        Graph.from_edges(0, [])
    with pytest.raises(ValueError, match="rows"):
        Graph.grid(0, 3)


def test_a_missing_pcst_fast_is_named_with_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pcst_fast", None)  # makes the import fail
    graph_module._pcst.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"pcst_fast.*tvcs-assign\[graph\]"):
            tail_projection(np.ones(12), Graph.grid(3, 4), sparsity=2)
    finally:
        graph_module._pcst.cache_clear()


def test_a_pcst_fast_build_that_returns_wrong_nodes_is_refused(monkeypatch):
    broken = types.ModuleType("pcst_fast")
    broken.pcst_fast = lambda edges, prizes, *args: (np.zeros(4, np.int32), np.ones(3, np.int32))
    monkeypatch.setitem(sys.modules, "pcst_fast", broken)
    graph_module._pcst.cache_clear()
    try:
        with pytest.raises(ImportError, match="wrong results"):
            head_projection(np.ones(12), Graph.grid(3, 4), sparsity=2)
    finally:
        graph_module._pcst.cache_clear()


@pytest.fixture
def prices(monkeypatch):
    """The edge prices the search tries, refusing a subnormal one (PCST may never return)."""
    tried, real = [], graph_module._forest

    def forest(prizes, graph, lam, n_components):
        tried.append(lam / (2.0 * prizes.sum()))  # relative to lam_max on unit costs
        if lam < 1e-200:
            raise AssertionError(f"the search priced edges at {lam!r}")
        return real(prizes, graph, lam, n_components)

    monkeypatch.setattr(graph_module, "_forest", forest)
    return tried


def test_warm_starts_chained_short_of_the_size_keep_the_price_above_its_floor(prices):
    grid = Graph.grid(4, 4)
    v = np.zeros(16)
    v[[5, 6]] = [1.0, -0.5]  # two non-zero prizes: no forest reaches 5 nodes
    warm_start = None
    for _ in range(60):  # each call used to start 4^20 lower than the last: call 29 hung
        result = tail_projection(v, grid, sparsity=5, warm_start=warm_start)
        warm_start = result.warm_start
        assert result.support.sum() == 2
        assert not result.converged
    assert min(prices) >= graph_module._MIN_PRICE_RATIO * (1 - 1e-9)
    assert tail_projection(v, grid, sparsity=5, warm_start=1e-310).support.sum() == 2


def test_graph_da_with_a_head_smaller_than_its_tail_ends(prices):
    from projections.solvers import Logistic, graph_da

    rng = np.random.default_rng(0)
    loss = Logistic(rng.standard_normal((40, 16)), rng.choice([-1.0, 1.0], 40))
    result = graph_da(loss, Graph.grid(4, 4), sparsity=5, head_sparsity=2, gamma=1.0)
    assert result.support.sum() <= 5
    assert Graph.grid(4, 4).n_components(result.support) <= 1


def test_an_empty_edge_list_builds_a_graph_without_edges():
    graph = Graph.from_edges(4, [])
    assert graph.edges.shape == (0, 2)
    assert graph.costs.shape == (0,)
    assert graph.n_components([True, True, False, True]) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3, [[0, 7]], [1.0]), r"edges must join nodes in \[0, 3\), got 0..7"),
        ((3, [[1, 1]]), r"edges must not be self-loops, got \[1, 1\] at edge 0"),
        ((3, [[0, 1]], [0.0]), "costs must be 1 positive finite numbers"),
        ((0, []), "n_nodes must be a positive integer"),
    ],
)
def test_the_constructor_validates_like_from_edges(args, message):
    with pytest.raises(ValueError, match=message):
        Graph(*args)
    with pytest.raises(ValueError, match=message):
        Graph.from_edges(*args)


def test_the_constructor_stores_arrays_and_unit_costs_by_default():
    graph = Graph(3, [[0, 1], [1, 2]])
    assert graph.edges.dtype == np.int64
    np.testing.assert_array_equal(graph.costs, [1.0, 1.0])


def test_a_misspelt_option_is_refused_when_the_projection_is_built():
    with pytest.raises(
        ValueError, match="takes the options n_components, tolerance, max_iter; got tolerence"
    ):
        GraphProjection(Graph.grid(2, 2), 2, tolerence=0.2)


@pytest.mark.parametrize("project", [head_projection, tail_projection])
def test_a_sparsity_above_the_number_of_nodes_is_refused_naming_both(project):
    with pytest.raises(
        ValueError, match=r"sparsity \(50\) must not exceed the graph's n_nodes \(12\)"
    ):
        project(np.ones(12), Graph.grid(3, 4), sparsity=50)
    with pytest.raises(ValueError, match=r"sparsity \(13\) must not exceed"):
        GraphProjection(Graph.grid(3, 4), 13)


def test_a_zero_vector_says_nothing_was_searched():
    result = head_projection(np.zeros(12), Graph.grid(3, 4), sparsity=3)
    assert not result.support.any()
    assert result.iterations == 0
    assert "bisection" not in result.message
    assert "v is 0, nothing to select" in result.message
