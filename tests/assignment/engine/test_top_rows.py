"""top_rows: the first rows of a stable descending argsort of every column, in one pass."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine._top_rows import top_rows


def stable_descending(values: np.ndarray, top: int) -> np.ndarray:
    return np.argsort(-values, axis=0, kind="stable")[:top]


@pytest.mark.parametrize("seed", range(4))
def test_top_rows_are_the_stable_argsorts_first_rows_for_every_count(seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.0, 0.4, (25, 60))
    for top in range(26):
        np.testing.assert_array_equal(top_rows(values, top), stable_descending(values, top))


def test_equal_values_keep_the_lower_row_first_and_never_swap_with_later_ones():
    rng = np.random.default_rng(7)
    values = rng.choice([0.1, 0.2, 0.3, -1.0], (30, 40))  # many ties, some "ineligible" -1
    for top in (1, 2, 5, 29, 30):
        np.testing.assert_array_equal(top_rows(values, top), stable_descending(values, top))
    column = np.array([[0.2], [0.5], [0.2], [0.5], [0.2]])
    assert top_rows(column, 4)[:, 0].tolist() == [1, 3, 0, 2]
