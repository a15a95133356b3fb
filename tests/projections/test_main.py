"""``python -m projections``: the demo's header, its timings and its options."""

from __future__ import annotations

import numpy as np
import pytest

from projections import __main__ as demo


def test_the_header_shows_the_cap_ranges_the_caps_are_drawn_from(capsys):
    demo.main(["--workers", "2", "--tasks", "3"])
    out = capsys.readouterr().out
    assert "per-worker caps in [1, 1], per-task caps in [1, 1]" in out


def test_a_small_matrix_is_projected_with_every_method_pgd_included(capsys):
    demo.main(["--workers", "3", "--tasks", "4"])
    rows = capsys.readouterr().out.splitlines()[3:]
    assert [row.split()[0] for row in rows] == ["exact", "greedy", "lp", "pgd"]


def test_every_method_runs_on_a_small_matrix_before_it_is_timed(monkeypatch, capsys):
    calls = []
    project = demo.project_matrix

    def recording(V, **kwargs):
        calls.append((kwargs["method"], np.shape(V)))
        return project(V, **kwargs)

    monkeypatch.setattr(demo, "project_matrix", recording)
    demo.main(["--workers", "5", "--tasks", "6"])
    for method in ("exact", "greedy", "lp", "pgd"):
        shapes = [shape for name, shape in calls if name == method]
        assert shapes == [(10, 20), (5, 6)]


@pytest.mark.parametrize("value", ["-3", "0", "two"])
def test_a_worker_count_that_is_not_positive_is_an_argparse_error(value, capsys):
    with pytest.raises(SystemExit) as stopped:
        demo.main(["--workers", value])
    assert stopped.value.code == 2
    assert f"--workers: must be a positive whole number, got '{value}'" in capsys.readouterr().err
