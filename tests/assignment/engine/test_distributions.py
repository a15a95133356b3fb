"""The per-task accuracy histogram (assignment/engine/distributions.py): its bins and edges."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine.distributions import accuracy_bins, accuracy_histogram


@pytest.mark.parametrize("k", [2, 3, 4])
def test_an_accuracy_a_rounding_below_an_edge_counts_from_that_edge_up(k):
    edges = accuracy_bins(k)
    values = edges[1:-1] - 1e-15  # each inner edge, as a sum of products may round it
    counts = accuracy_histogram(values, k)["counts"]
    assert counts == [0] + [1] * (edges.size - 2)


def test_accuracies_fill_the_bins_they_lie_in_and_the_ends_take_the_rest():
    edges = accuracy_bins(3)
    mids = (edges[:-1] + edges[1:]) / 2
    result = accuracy_histogram(np.r_[mids, 0.2, 1.0, 1.0 + 1e-12], 3)
    assert result["counts"] == [2] + [1] * 18 + [3]
    assert result["edges"][0] == 0.333333
    assert result["edges"][-1] == 1.0
    assert sum(result["counts"]) == mids.size + 3
