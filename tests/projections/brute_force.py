"""Slow, obviously-correct references for the projection tests."""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import linprog

from projections.structure import TVCSStructure


def brute_force_optimum(weights: np.ndarray, structure: TVCSStructure) -> float:
    """Best ``sum(weights[S])`` over every feasible subset ``S`` (p <= 14 or so)."""
    p = weights.shape[0]
    masks = np.array(list(itertools.product([False, True], repeat=p)), dtype=bool).reshape(-1, p)
    feasible = masks.sum(axis=1) <= structure.total
    for labels, caps in (
        (structure.labels1, structure.caps1),
        (structure.labels2, structure.caps2),
    ):
        for g, cap in enumerate(caps):
            feasible &= masks[:, labels == g].sum(axis=1) <= cap
    return float((masks[feasible] * weights).sum(axis=1).max())


def highs_optimum(weights: np.ndarray, structure: TVCSStructure) -> float:
    """Optimum of the LP relaxation, which equals the integer optimum (total unimodularity)."""
    p = weights.shape[0]
    rows = [np.ones(p)]
    for labels, caps in (
        (structure.labels1, structure.caps1),
        (structure.labels2, structure.caps2),
    ):
        rows.extend((labels == g).astype(float) for g in range(caps.shape[0]))
    bounds = np.concatenate([[structure.total], structure.caps1, structure.caps2])
    res = linprog(-weights, A_ub=np.array(rows), b_ub=bounds, bounds=(0, 1), method="highs")
    assert res.status == 0, res.message
    return -float(res.fun)


def brute_force_group_cover(weights: np.ndarray, members, k: int) -> float:
    """Best ``sum(weights[union of at most k groups])`` over every such set of groups."""
    best = 0.0
    for size in range(min(k, len(members)) + 1):
        for chosen in itertools.combinations(range(len(members)), size):
            covered = np.zeros(weights.size, dtype=bool)
            for g in chosen:
                covered[members[g]] = True
            best = max(best, float(weights[covered].sum()))
    return best


def brute_force_sparse_group_cover(weights: np.ndarray, members, k: int, per_group: int) -> float:
    """Best ``sum(weights[S])`` with ``S`` a union of at most ``per_group`` coordinates taken
    from each of at most ``k`` groups (the sparse-overlapping-groups set), by enumeration."""
    best = 0.0
    for size in range(min(k, len(members)) + 1):
        for chosen in itertools.combinations(range(len(members)), size):
            picks = [
                [c for r in range(min(per_group, len(members[g])) + 1)
                 for c in itertools.combinations(members[g], r)]
                for g in chosen
            ]  # fmt: skip
            for combo in itertools.product(*picks):
                covered = np.zeros(weights.size, dtype=bool)
                for part in combo:
                    covered[list(part)] = True
                best = max(best, float(weights[covered].sum()))
    return best
