"""The enumeration kernel of the exact accuracy gives numpy's numbers to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine._pattern_sums import pairwise_sum, tail_masses
from assignment.engine.accuracy import (
    _clip,
    _enumerate,
    _log_odds,
    _prior_threshold,
    _tolerance,
)


@pytest.mark.parametrize("n", [*range(0, 140), 255, 256, 257, 1000, 4096, 9000])
def test_pairwise_sum_adds_in_numpys_order(n):
    """Values of very different sizes, so that any other order of the additions rounds
    differently."""
    rng = np.random.default_rng(n)
    values = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
    assert pairwise_sum(values, n) == values.sum()


@pytest.mark.parametrize("k", range(13))
def test_tail_masses_equal_numpys_masked_sums_of_the_enumerated_patterns(k):
    rng = np.random.default_rng([k, 1])
    for _ in range(10):
        g = int(rng.integers(1, 120))
        q = _clip(rng.uniform(0.0, 1.0, (g, k)))
        q[rng.random((g, k)) < 0.2] = 0.5  # zero weights: sums that tie the thresholds
        w = _log_odds(q)
        r = _prior_threshold(rng.uniform(0.01, 0.99, g))
        tol = _tolerance(r, np.abs(w).sum(axis=1))
        sums, probs = _enumerate(w, q)
        p_ge, p_gt = tail_masses(w, q, r - tol, tol - r)
        expected_ge = np.where(sums >= (r - tol)[:, None], probs, 0.0).sum(axis=1)
        expected_gt = np.where(sums > (tol - r)[:, None], probs, 0.0).sum(axis=1)
        assert p_ge.tobytes() == expected_ge.tobytes()
        assert p_gt.tobytes() == expected_gt.tobytes()
