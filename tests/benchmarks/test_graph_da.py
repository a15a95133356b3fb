"""benchmarks/graph_da.py: with an intercept every method fits p + 1 weights, the last one free
of the sparsity, and the support metrics read the node weights only."""

import argparse

import graph_da
import numpy as np
import pytest

from projections.graph import Graph
from projections.solvers import with_intercept_column


@pytest.fixture(scope="module")
def shifted():
    graph = Graph.grid(graph_da.SIDE, graph_da.SIDE)
    rng = np.random.default_rng([7, 0])
    truth = graph_da.connected_support(rng, graph, graph_da.SPARSITY)
    X, y = graph_da.samples(rng, truth, graph_da.N, 1.0)
    return graph, truth, X, y


@pytest.mark.parametrize("method", ["DA-IHT", "StoIHT", "l1-RDA", "Adam"])
def test_with_an_intercept_every_method_fits_a_free_negative_intercept(shifted, method):
    """Only the positives are shifted, so the intercept that fits them is negative; the node
    weights keep the method's sparsity (26 at most for the hard-thresholding methods)."""
    graph, truth, X, y = shifted
    gamma = 1000.0 if method == "Adam" else 20.0  # Adam's step 1 / gamma
    w = graph_da.fit(method, with_intercept_column(X), y, graph, gamma, 0.05, True)
    assert w.shape == (truth.size + 1,)
    assert w[-1] < 0
    if method in ("DA-IHT", "StoIHT"):
        assert np.count_nonzero(w[:-1]) == graph_da.SPARSITY


@pytest.mark.parametrize("method", ["DA-IHT", "StoIHT", "l1-RDA"])
def test_without_an_intercept_the_methods_fit_the_node_weights_only(shifted, method):
    graph, truth, X, y = shifted
    w = graph_da.fit(method, X, y, graph, 20.0, 0.05, False)
    assert w.shape == (truth.size,)


def test_the_support_metrics_ignore_the_intercept():
    truth = np.zeros(4, dtype=bool)
    truth[:2] = True
    w = np.array([1.0, 0.0, 0.0, 0.0, -3.0])  # one true node, and the intercept
    X = with_intercept_column(np.eye(4))
    precision, recall, f1, _, nonzero = graph_da.scores(w, truth, X, np.ones(4))
    assert (precision, recall, nonzero) == (1.0, 0.5, 0.25)
    assert f1 == pytest.approx(2 / 3)


def test_the_report_names_the_intercept_or_its_absence():
    with_b = "\n".join(graph_da.discussion(0.3, 3, 3, True))
    without = "\n".join(graph_da.discussion(0.3, 3, 3, False))
    assert "Every model has an unpenalised intercept" in with_b
    assert "0.778" in with_b
    assert "no intercept (`--no-intercept`)" in without
    assert "0.718" in without


def test_the_fitted_intercepts_are_reported_only_when_there_are_some():
    results = [{"DA-IHT": (None, np.array([0.5, -1.0]))}, {"DA-IHT": (None, np.array([0, -3.0]))}]
    args = argparse.Namespace(methods=["DA-IHT"], intercept=True)
    assert (
        graph_da.intercepts(results, args)[-1]
        == "Fitted intercept b, mean over trials: DA-IHT -2.000."
    )
    args.intercept = False
    assert graph_da.intercepts(results, args) == []


@pytest.mark.parametrize(
    ("trials", "text"), [(20, "20 trials, as the paper"), (3, "3 trials instead of 20")]
)
def test_the_report_compares_the_number_of_trials_with_the_papers(trials, text):
    assert text in "\n".join(graph_da.discussion(0.3, trials, 3, True))
