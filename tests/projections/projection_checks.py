"""Checks and instances the projection tests share (not a test module)."""

from __future__ import annotations

import numpy as np
import pytest


def random_matrix_instance(rng, n, m, budget_fraction):
    V = rng.standard_normal((n, m))
    rows = rng.integers(1, max(1, m // 4) + 1, n)
    cols = rng.integers(1, max(1, n // 4) + 1, m)
    total = int(budget_fraction * min(rows.sum(), cols.sum()))
    return V, rows, cols, total


def assert_valid_projection(v, structure, result):
    """Feasible, zero weights never selected, x = v on the support, objective consistent."""
    support = result.support.reshape(-1)
    flat_v = np.asarray(v).reshape(-1)
    assert result.x.shape == np.shape(v)
    assert result.support.shape == np.shape(v)
    assert structure.violations(support) == []
    assert not np.any(support & (flat_v == 0))
    np.testing.assert_array_equal(result.x.reshape(-1), np.where(support, flat_v, 0))
    assert result.objective == pytest.approx(float(np.sum(flat_v[support] ** 2)), rel=1e-12)
