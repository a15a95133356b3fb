"""benchmarks/sparse_overlapping_groups.py: the SoG instance of Jain, Rao & Dhillon (NIPS 2016,
section 5) and a run that reports every method."""

import numpy as np
import pytest
import sparse_overlapping_groups as sog


def test_the_instance_has_the_papers_groups_and_sparse_active_groups():
    X, y, w_true, groups = sog.instance(60, [0, 3, 60, 0])
    assert groups.n_groups == 100
    assert groups.n_features == 100 * (50 - 10) + 10 == 4010
    assert X.shape == (60, 4010)
    assert y.shape == (60,)
    nonzero = w_true != 0
    # five groups of 30 non-zeros each, two overlapping active groups may share a few
    assert 5 * 30 - 2 * 10 <= nonzero.sum() <= 5 * 30
    # an active group holds its 30; any other at most the 10 + 10 it shares with neighbours
    counts = np.array([nonzero[members].sum() for members in groups.members])
    active = np.flatnonzero(counts > 20)
    assert active.size == 5
    assert np.all(counts[active] >= 30)
    assert np.array_equal(nonzero, nonzero & groups.union(active))


def test_tau_sums_the_blocks_norms_so_it_bounds_the_sog_norm_of_w_true():
    X, y, w_true, _, tau = sog.planted(60, [0, 3, 60, 0])
    same = sog.instance(60, [0, 3, 60, 0])
    assert all(np.array_equal(a, b) for a, b in zip(same[:3], (X, y, w_true), strict=True))
    # five disjoint blocks: between the l2 norm (one block) and sqrt(5) times it
    norm = np.linalg.norm(w_true)
    assert norm <= tau <= 5**0.5 * norm
    assert tau > 1.5 * norm


def test_the_time_to_an_error_is_the_first_trace_point_below_it():
    assert sog.first_reach([(0.0, 1.0), (0.5, 0.2), (0.7, 0.09), (0.9, 0.05)]) == 0.7
    assert sog.first_reach([(0.0, 1.0), (0.5, 0.2)]) is None
    rows = {(5, m): [(0.0, 1.0, [(0.0, 1.0), (2.0, 0.1)]), (0.5, 1.0, [(0.0, 1.0)])]
            for m in sog.METHODS}  # fmt: skip
    body = sog.reach_table(rows, [5])[2]
    assert body == "| 5 | " + " | ".join(["2.00 (1/2)"] * len(sog.METHODS)) + " |"


def test_a_tiny_run_reports_every_method_with_its_figure(tmp_path, capsys):
    out = tmp_path / "sog.md"
    sog.main(
        ["--ns", "150", "--trials", "1", "--max-iter", "3", "--atomic-max-iter", "3", "--out",
         str(out)]
    )  # fmt: skip
    text = out.read_text()
    for method in sog.METHODS:
        assert f"{method}: success / median error / s" in text
    assert "| 150 | " in text
    for method in sog.METHODS:
        assert f"{method}: s to error 0.1 (runs)" in text
    assert (tmp_path / "sog.png").stat().st_size > 0
    assert "![relative error against time](sog.png)" in text
    assert "## What differs from the paper" in text


def test_the_error_trace_starts_at_one_and_has_a_point_per_iteration():
    rows = sog.run([120], 1, 4, seed=5, atomic_max_iter=4)
    for method in sog.METHODS:
        ((error, seconds, trace),) = rows[(120, method)]
        assert trace[0] == (0.0, 1.0)
        assert 2 <= len(trace) <= 5  # CoGEnT and FW told atomic_max_iter=4
        assert trace[-1][1] == pytest.approx(error)
        assert seconds >= trace[-1][0]


def test_a_figure_size_outside_the_grid_is_refused():
    with pytest.raises(SystemExit):
        sog.main(["--ns", "150", "--plot-n", "151"])
