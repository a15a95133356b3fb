"""The DBN regression with TVCS caps recovers networks; the baselines rank what they say."""

import numpy as np
import pytest
from grn_methods import (
    dbn_loss,
    lagged_correlation,
    pearson_correlation,
    top_scores,
    tvcs_network,
    tvcs_stability_network,
)
from grn_simulator import simulate_grn


@pytest.fixture(scope="module")
def noiseless():
    return simulate_grn(
        12,
        n_hubs=2,
        hub_targets=4,
        n_extra=4,
        max_regulators=2,
        n_series=10,
        n_times=21,
        process_noise=0.1,
        noise=0.0,
        rng=5,
    )


def test_the_dbn_loss_is_zero_at_the_true_weights_without_noise():
    data_no_shock = simulate_grn(
        12,
        n_hubs=2,
        hub_targets=4,
        n_extra=4,
        max_regulators=2,
        n_series=6,
        n_times=11,
        process_noise=0.0,
        noise=0.0,
        rng=5,
    )
    loss = dbn_loss(data_no_shock.series)
    w = data_no_shock.weights[~np.eye(12, dtype=bool)]
    assert loss.value(w) < 1e-20
    assert loss.feature_shape == (12 * 11,)
    assert loss.value(np.zeros(12 * 11)) > 1e-3


@pytest.mark.parametrize("solver", ["iht", "gradmp"])
def test_tvcs_caps_recover_a_noiseless_network_exactly(noiseless, solver):
    data = noiseless
    out = data.edges.sum(axis=0).max()
    r = tvcs_network(
        data.series,
        max_regulators=2,
        max_targets=int(out),
        total=int(data.edges.sum()),
        solver=solver,
    )
    np.testing.assert_array_equal(r.edges, data.edges)
    assert r.scores[r.edges].min() > r.scores[~r.edges].max()


def test_inferred_networks_respect_every_cap(noiseless):
    r = tvcs_network(noiseless.series, max_regulators=1, max_targets=2, total=5)
    assert r.edges.sum() <= 5
    assert r.edges.sum(axis=1).max() <= 1
    assert r.edges.sum(axis=0).max() <= 2
    assert not np.any(np.diag(r.edges))


def test_lagged_correlation_puts_targets_on_rows():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 200, 3))
    x[0, 1:, 2] = x[0, :-1, 0]  # gene 0 drives gene 2 one step later
    scores = lagged_correlation(x)
    assert scores[2, 0] > 0.99
    assert scores[0, 2] < 0.3


def test_top_scores_keeps_the_largest_off_diagonal_entries():
    scores = np.array([[9.0, 1.0, 5.0], [2.0, 9.0, 0.0], [4.0, 3.0, 9.0]])
    np.testing.assert_array_equal(
        top_scores(scores, 2), [[False, False, True], [False, False, False], [True, False, False]]
    )


def test_pearson_correlation_is_symmetric(noiseless):
    s = pearson_correlation(noiseless.series)
    np.testing.assert_allclose(s, s.T)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_regulators": 0}, "max_regulators"),
        ({"max_targets": 1.5}, "max_targets"),
        ({"total": -1}, "total"),
        ({"solver": "lasso"}, "solver"),
        ({"caps": "rows"}, "caps"),
    ],
)
def test_bad_arguments_are_refused_naming_them(noiseless, kwargs, name):
    options = {"max_regulators": 2, "max_targets": 4, "total": 10, **kwargs}
    with pytest.raises(ValueError, match=name):
        tvcs_network(noiseless.series, **options)


def test_series_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match="series"):
        dbn_loss(np.zeros((5, 3)))


def test_genie3_scores_every_regulator_of_every_target_but_itself(noiseless):
    pytest.importorskip("arboreto")
    from grn_methods import genie3

    scores = genie3(noiseless.series, n_trees=10)
    assert scores.shape == (12, 12)
    assert np.all(np.diag(scores) == 0)
    assert np.all(scores >= 0)
    assert scores.sum() > 0


def test_stability_selection_finds_a_noiseless_network_in_every_half(noiseless):
    """Each half of the time steps still determines the noiseless network: every true edge
    is selected in every half (score 1), and the prediction is the network."""
    data = noiseless
    r = tvcs_stability_network(
        data.series,
        max_regulators=2,
        max_targets=int(data.edges.sum(axis=0).max()),
        total=int(data.edges.sum()),
        n_runs=3,
    )
    np.testing.assert_array_equal(r.edges, data.edges)
    np.testing.assert_allclose(r.scores[data.edges], 1.0, atol=1e-5)
    assert r.scores[~data.edges & ~np.eye(12, dtype=bool)].max() < 1.0


def test_stability_selection_scores_are_the_shares_of_halves_and_keep_the_caps():
    data = simulate_grn(12, n_series=3, n_times=11, noise=0.1, rng=2)
    options = {"max_regulators": 2, "max_targets": 3, "total": 9, "n_runs": 4, "seed": 1}
    r = tvcs_stability_network(data.series, **options)
    shares = np.round(r.scores * 8, 4)  # 8 halves: multiples of 1/8 plus a tie-break < 1e-5
    np.testing.assert_allclose(shares, np.round(shares), atol=1e-4)
    assert r.edges.sum() <= 9
    assert r.edges.sum(axis=1).max() <= 2
    assert r.edges.sum(axis=0).max() <= 3
    assert not np.any(np.diag(r.edges))
    again = tvcs_stability_network(data.series, **options)
    np.testing.assert_array_equal(again.scores, r.scores)


def test_stability_selection_needs_four_time_steps():
    with pytest.raises(ValueError, match="4 time steps"):
        tvcs_stability_network(
            np.zeros((1, 3, 4)), max_regulators=1, max_targets=1, total=2, n_runs=1
        )


def test_without_binding_caps_stability_selection_predicts_its_most_stable_edges():
    data = simulate_grn(12, n_series=3, n_times=11, noise=0.1, rng=3)
    r = tvcs_stability_network(
        data.series, max_regulators=11, max_targets=11, total=9, n_runs=4, seed=0
    )
    np.testing.assert_array_equal(r.edges, top_scores(r.scores, 9))
