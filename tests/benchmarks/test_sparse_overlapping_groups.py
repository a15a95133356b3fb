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


def test_a_tiny_run_reports_every_method_with_its_figure(tmp_path, capsys):
    out = tmp_path / "sog.md"
    sog.main(["--ns", "150", "--trials", "1", "--max-iter", "3", "--out", str(out)])
    text = out.read_text()
    for method in sog.METHODS:
        assert f"{method}: success / median error / s" in text
    assert "| 150 | " in text
    assert (tmp_path / "sog.png").stat().st_size > 0
    assert "![relative error against time](sog.png)" in text
    assert "## What differs from the paper" in text


def test_the_error_trace_starts_at_one_and_has_a_point_per_iteration():
    rows = sog.run([120], 1, 4, seed=5)
    for method in sog.METHODS:
        ((error, seconds, trace),) = rows[(120, method)]
        assert trace[0] == (0.0, 1.0)
        assert 2 <= len(trace) <= 5
        assert trace[-1][1] == pytest.approx(error)
        assert seconds >= trace[-1][0]


def test_a_figure_size_outside_the_grid_is_refused():
    with pytest.raises(SystemExit):
        sog.main(["--ns", "150", "--plot-n", "151"])
