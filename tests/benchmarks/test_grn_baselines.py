"""The mutual-information and stability-selection baselines of the paper's Table 1 (CLR,
ARACNE, MRNET, TIGRESS) on hand-made cases whose answer is known, and their refusals."""

import numpy as np
import pytest
from grn_methods import (
    MI_ESTIMATORS,
    aracne,
    aracne_from_mi,
    clr,
    clr_from_mi,
    mrnet,
    mrnet_from_mi,
    mutual_information,
    stability_selection,
    tigress,
)


def _gaussian_pair(rho, m, seed=0):
    rng = np.random.default_rng(seed)
    return rng.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=m)


@pytest.mark.parametrize("estimator", MI_ESTIMATORS)
@pytest.mark.parametrize("rho", [0.3, 0.6])
def test_mutual_information_matches_the_gaussian_closed_form(estimator, rho):
    # Miller-Madow on 20 equal-frequency bins loses a little to the discretisation (about 3% at
    # rho = 0.6); Spearman's correlation of a Gaussian pair is (6 / pi) arcsin(rho / 2), a bit
    # below rho, which MINET's estimator puts into the same formula
    z = _gaussian_pair(rho, 20_000)
    mi = mutual_information(z, estimator=estimator, n_bins=20)
    if estimator == "spearman":
        rho = 6 / np.pi * np.arcsin(rho / 2)
    exact = -0.5 * np.log(1 - rho**2)
    assert mi[0, 1] == pytest.approx(exact, abs=0.02 if estimator == "miller-madow" else 0.01)
    assert mi[0, 1] == mi[1, 0]
    assert mi[0, 0] == 0


def test_miller_madow_removes_most_of_the_plug_in_bias_of_independent_variables():
    # independent variables: the plug-in MI's bias is about (B - 1)^2 / (2m); Miller-Madow's
    # correction takes it to about zero
    rng = np.random.default_rng(1)
    x = rng.standard_normal((200, 2))
    mi = mutual_information(x, estimator="miller-madow", n_bins=5)[0, 1]
    assert abs(mi) < 0.5 * 16 / 400


def test_the_spearman_estimator_ignores_monotone_transforms():
    z = _gaussian_pair(0.6, 500)
    warped = np.column_stack([np.exp(z[:, 0]), z[:, 1] ** 3])
    np.testing.assert_allclose(
        mutual_information(warped, estimator="spearman"), mutual_information(z)
    )


def test_mutual_information_of_two_sets_puts_y_on_rows():
    z = _gaussian_pair(0.8, 1000)
    x, y = z[:, :1], np.column_stack([z[:, 1], np.random.default_rng(2).standard_normal(1000)])
    mi = mutual_information(x, y, estimator="gaussian")
    assert mi.shape == (2, 1)
    assert mi[0, 0] == pytest.approx(-0.5 * np.log(1 - 0.64), abs=0.05)
    assert mi[1, 0] < 0.01


def test_clr_z_scores_each_pair_against_both_genes_backgrounds():
    mi = np.array(
        [
            [0.0, 4.0, 1.0, 1.0],
            [4.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 0.0, 2.0],
            [1.0, 1.0, 2.0, 0.0],
        ]
    )
    # gene 0's background: 4, 1, 1 (mean 2, sd sqrt 2); gene 2's: 1, 1, 2 (mean 4/3, sd sqrt 2/3)
    z01 = (4 - 2) / np.sqrt(2)
    z23 = (2 - 4 / 3) / np.sqrt(2 / 9)
    scores = clr_from_mi(mi)
    assert scores[0, 1] == pytest.approx(np.sqrt(2) * z01)
    assert scores[2, 3] == pytest.approx(np.sqrt(2) * z23)
    assert scores[0, 2] == 0  # below both backgrounds: negative z-scores count as 0
    np.testing.assert_allclose(scores, scores.T)
    assert np.all(np.diag(scores) == 0)


def test_aracne_removes_the_weakest_edge_of_a_chain_triangle():
    # chain 0 -> 1 -> 2: the indirect pair (0, 2) has the smallest MI of the triangle
    mi = np.array([[0.0, 0.9, 0.3], [0.9, 0.0, 0.7], [0.3, 0.7, 0.0]])
    kept = aracne_from_mi(mi)
    np.testing.assert_array_equal(kept > 0, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(kept[kept > 0], mi[kept > 0])
    # a tolerance wider than the gap keeps it
    assert aracne_from_mi(mi, eps=0.5)[0, 2] == 0.3


def test_aracne_on_a_simulated_chain_drops_the_indirect_pair():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(2000)
    b = a + 0.5 * rng.standard_normal(2000)
    c = b + 0.5 * rng.standard_normal(2000)
    scores = aracne(np.column_stack([a, b, c])[None])
    assert scores[0, 1] > 0
    assert scores[1, 2] > 0
    assert scores[0, 2] == 0


def test_lagged_aracne_uses_the_regulators_redundancy():
    # target 2 <- regulator 0 is explained through regulator 1 (0 -- 1 strongly, 1 -> 2)
    relevance = np.array([[0.0, 0.1, 0.1], [0.1, 0.0, 0.1], [0.3, 0.6, 0.0]])
    redundancy = np.array([[0.0, 0.8, 0.1], [0.8, 0.0, 0.1], [0.1, 0.1, 0.0]])
    out = aracne_from_mi(relevance, redundancy=redundancy)
    assert out[2, 0] == 0
    assert out[2, 1] == 0.6


def test_mrnet_prefers_a_relevant_gene_that_is_not_redundant():
    # for target 0, genes 1 and 2 are equally relevant copies of each other; gene 3 is less
    # relevant but independent of them: it is picked second, before the copy
    mi = np.array(
        [
            [0.0, 1.0, 0.95, 0.5],
            [1.0, 0.0, 2.0, 0.0],
            [0.95, 2.0, 0.0, 0.0],
            [0.5, 0.0, 0.0, 0.0],
        ]
    )
    directed = mrnet_from_mi(mi, redundancy=mi)
    assert directed[0, 1] == 1.0  # maximum relevance first
    assert directed[0, 3] == pytest.approx(0.5 - 0.0)  # then 3: 0.5 - mean(I(3; 1)) = 0.5
    assert directed[0, 2] == pytest.approx(0.95 - (2.0 + 0.0) / 2)  # the copy last, negative
    undirected = mrnet_from_mi(mi)
    np.testing.assert_allclose(undirected, np.maximum(directed, directed.T))
    np.testing.assert_allclose(undirected, undirected.T)


def test_stability_selection_finds_a_single_strong_regulator():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 8))
    y = 2.0 * X[:, 5] + 0.1 * rng.standard_normal(40)
    # without reweighting (alpha = 1) it is selected first in every half, so at every step
    plain = stability_selection(X, y, n_runs=20, n_steps=3, alpha=1.0, rng=0)
    assert plain[5] == 1.0
    # reweighted, a noise feature can come first when the regulator's weight is drawn small
    scores = stability_selection(X, y, n_runs=20, n_steps=3, rng=0)
    assert scores[5] > 0.9
    assert np.all(np.delete(scores, 5) < 0.5)
    # step k selects k features: the areas add up to (1 + 2 + 3) / 3, less when LARS stops
    # early on a half whose residual is exhausted (sklearn's lars_path does, here on a few)
    assert 1.9 < scores.sum() <= 2.0


def test_tigress_finds_the_regulator_of_a_lagged_target():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 60, 5))
    x[:, 1:, 3] = 0.9 * x[:, :-1, 1] + 0.1 * rng.standard_normal((2, 59))
    scores = tigress(x, lag=True, n_runs=10, n_steps=2)
    assert np.argmax(scores[3]) == 1
    assert scores[3, 1] == 1.0
    assert np.all(np.diag(scores) == 0)
    same_time = tigress(x, n_runs=5, n_steps=2)
    assert same_time.shape == (5, 5)
    assert np.all(np.diag(same_time) == 0)


@pytest.mark.parametrize("method", [clr, aracne, mrnet])
@pytest.mark.parametrize("lag", [False, True])
def test_series_methods_score_every_ordered_pair(method, lag):
    rng = np.random.default_rng(6)
    scores = method(rng.standard_normal((2, 15, 6)), lag=lag)
    assert scores.shape == (6, 6)
    assert np.all(np.diag(scores) == 0)
    assert np.all(np.isfinite(scores))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: mutual_information(np.zeros(5)), "2-D"),
        (lambda: mutual_information(np.ones((5, 2)), np.ones((4, 2))), "same number"),
        (lambda: mutual_information(np.array([[1.0, 2], [3, np.nan], [4, 5]])), "finite"),
        (lambda: mutual_information(np.column_stack([np.arange(5.0), np.ones(5)])), "vary"),
        (lambda: mutual_information(np.eye(4), estimator="ksg"), "estimator"),
        (lambda: mutual_information(np.eye(4), estimator="miller-madow", n_bins=1), "n_bins"),
        (lambda: clr_from_mi(np.zeros((3, 4))), "square"),
        (lambda: clr_from_mi(np.full((3, 3), np.inf)), "finite"),
        (lambda: aracne_from_mi(np.zeros((3, 3)), eps=-1), "eps"),
        (lambda: aracne_from_mi(np.zeros((3, 3)), redundancy=np.zeros((4, 4))), "redundancy"),
        (lambda: mrnet_from_mi(np.zeros((2, 2))), "at least 3"),
        (lambda: stability_selection(np.ones((5, 2)), np.ones(4)), "shape"),
        (lambda: stability_selection(np.eye(5), np.ones(5), n_runs=0), "n_runs"),
        (lambda: stability_selection(np.eye(5), np.ones(5), n_steps=1.5), "n_steps"),
        (lambda: stability_selection(np.eye(5), np.ones(5), alpha=0), "alpha"),
        (lambda: tigress(np.zeros((4, 4))), "series"),
    ],
)
def test_bad_input_is_refused_naming_it(call, match):
    pytest.importorskip("sklearn")
    with pytest.raises(ValueError, match=match):
        call()
