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


# --- The stability score integrated over a ladder of caps (TIGRESS's area principle) ---------


@pytest.fixture(scope="module")
def noisy():
    return simulate_grn(12, n_series=3, n_times=11, noise=0.1, rng=2)


AREA_CAPS = {"max_regulators": 2, "max_targets": 3, "total": 9, "n_runs": 2, "seed": 1}
LADDER = (0.5, 1.0, 1.5)


@pytest.fixture(scope="module")
def one_level(noisy):
    return tvcs_stability_network(noisy.series, levels=(1.0,), **AREA_CAPS)


@pytest.fixture(scope="module")
def area(noisy):
    return tvcs_stability_network(noisy.series, levels=LADDER, **AREA_CAPS)


def _halves_share(series, *, max_regulators, max_targets, total, n_runs, seed):
    """The share of halves selecting each edge, recomputed with :func:`tvcs_network`: each
    half of the time steps becomes a set of two-point series, its transitions."""
    n = series.shape[2]
    X, Y = series[:, :-1].reshape(-1, n), series[:, 1:].reshape(-1, n)
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, n))
    for _ in range(n_runs):
        for half in np.array_split(rng.permutation(X.shape[0]), 2):
            counts += tvcs_network(
                np.stack([X[half], Y[half]], axis=1),
                max_regulators=max_regulators,
                max_targets=max_targets,
                total=total,
                solver="gradmp",
            ).edges
    return counts / (2 * n_runs)


def test_a_ladder_of_one_level_at_the_caps_scores_the_share_of_halves_selecting_an_edge(
    noisy, one_level
):
    expected = _halves_share(noisy.series, **AREA_CAPS)
    off = ~np.eye(12, dtype=bool)
    np.testing.assert_allclose(one_level.scores[off], expected[off], rtol=0, atol=1.01e-6)


def test_the_area_score_is_the_mean_of_the_single_level_scores_over_the_ladder(
    noisy, one_level, area
):
    low, high = (tvcs_stability_network(noisy.series, levels=(c,), **AREA_CAPS) for c in (0.5, 1.5))
    mean = (low.scores + one_level.scores + high.scores) / 3
    np.testing.assert_allclose(area.scores, mean, rtol=0, atol=1e-12)
    assert not np.allclose(area.scores, one_level.scores, atol=1e-5)


def test_area_scores_lie_in_zero_to_one_up_to_the_tie_break(area):
    assert area.scores.min() >= 0.0
    assert area.scores.max() <= 1.0 + 1e-6
    assert area.scores.max() > 0.5


def test_the_ladder_gives_nonzero_scores_to_more_edges_than_one_level(one_level, area):
    selected_once, selected_on_ladder = (int((r.scores > 1e-5).sum()) for r in (one_level, area))
    assert selected_on_ladder > selected_once


def test_area_predictions_respect_the_caps_of_level_one(area):
    assert area.edges.sum() == 9
    assert area.edges.sum(axis=1).max() <= 2
    assert area.edges.sum(axis=0).max() <= 3
    assert not np.any(np.diag(area.edges))


def test_without_binding_caps_the_area_prediction_is_its_best_scored_edges(noisy):
    r = tvcs_stability_network(
        noisy.series, max_regulators=11, max_targets=11, total=9, n_runs=1, levels=(1.0, 1.5)
    )
    np.testing.assert_array_equal(r.edges, top_scores(r.scores, 9))


@pytest.mark.parametrize("levels", [(), (0.0, 1.0), (1.0, np.nan), (-1.0,)])
def test_bad_cap_ladders_are_refused_naming_them(noisy, levels):
    with pytest.raises(ValueError, match="levels"):
        tvcs_stability_network(noisy.series, levels=levels, **AREA_CAPS)
