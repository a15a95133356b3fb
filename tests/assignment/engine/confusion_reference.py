"""The slow, obviously correct Dawid-Skene vote the confusion tests compare with (not a test
module)."""

from __future__ import annotations

import itertools


def enumerated(confusion, prior_row, workers) -> float:
    """``sum_a max_c pi_c prod_i C_i[c, a_i]``, one answer pattern at a time."""
    total = 0.0
    for answers in itertools.product(range(prior_row.shape[0]), repeat=len(workers)):
        joint = prior_row.copy()
        for i, a in zip(workers, answers, strict=True):
            joint = joint * confusion[i, :, a]
        total += joint.max()
    return total
