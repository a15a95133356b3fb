"""The GRN simulator delivers what benchmarks/grn.py's docstring says it simulates."""

import numpy as np
import pytest
from grn_simulator import simulate_grn


def test_series_have_the_requested_shapes_and_the_network_its_edge_count():
    data = simulate_grn(20, n_hubs=2, hub_targets=5, n_extra=6, n_series=4, n_times=9, rng=0)
    assert data.series.shape == data.clean.shape == (4, 9, 20)
    assert data.weights.shape == data.transition.shape == (20, 20)
    assert data.edges.sum() == 2 * 5 + 6
    assert not np.any(np.diag(data.edges))


def test_hubs_regulate_their_targets_and_no_gene_exceeds_its_regulator_cap():
    data = simulate_grn(30, n_hubs=3, hub_targets=6, n_extra=12, max_regulators=3, rng=1)
    out_degree = data.edges.sum(axis=0)
    assert np.all(out_degree[data.hubs] >= 6)
    others = np.setdiff1d(np.arange(30), data.hubs)
    assert out_degree[others].max() < 6  # 12 random extra edges make no rival hub here
    assert data.edges.sum(axis=1).max() <= 3


def test_dynamics_are_stable_and_follow_the_transition_without_noise():
    data = simulate_grn(15, n_hubs=2, hub_targets=4, n_extra=4, process_noise=0.0, noise=0.0, rng=2)
    assert np.max(np.abs(np.linalg.eigvals(data.transition))) <= 0.9 + 1e-9
    np.testing.assert_allclose(data.clean[:, 1:], data.clean[:, :-1] @ data.transition.T)
    np.testing.assert_array_equal(data.series, data.clean)


def test_measurement_noise_is_ten_percent_of_each_genes_spread():
    data = simulate_grn(30, n_series=40, n_times=21, noise=0.1, rng=3)
    error_sd = (data.series - data.clean).reshape(-1, 30).std(axis=0)
    clean_sd = data.clean.reshape(-1, 30).std(axis=0)
    np.testing.assert_allclose(error_sd / clean_sd, 0.1, rtol=0.1)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_genes": 1}, "n_genes"),
        ({"n_times": 1}, "n_times"),
        ({"noise": -0.1}, "noise"),
        ({"spectral_radius": 1.2}, "spectral_radius"),
        ({"decay": 0.95}, "decay"),
        ({"n_hubs": 40}, "n_hubs"),
        ({"hub_targets": 40}, "hub_targets"),
        ({"max_regulators": True}, "max_regulators"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, name):
    with pytest.raises(ValueError, match=name):
        simulate_grn(**kwargs)
