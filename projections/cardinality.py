"""Projections onto simpler cardinality sets: top-k, and exclusive groups with a total cap.

Both sets are matroids (uniform; laminar), so taking the heaviest feasible elements is exact.
"""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np

from projections.result import ProjectionResult
from projections.structure import TVCSStructure, _as_total, _frozen, _labels_and_caps
from projections.tvcs import _check_values, _energy, _for_squares

__all__ = ["project_exclusive_groups", "project_top_k"]


def _heaviest(weights: np.ndarray, candidates: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` heaviest positive ``candidates``; ties go to the lower index."""
    candidates = candidates[weights[candidates] > 0]
    if k >= candidates.size:
        return candidates
    order = np.lexsort((candidates, -weights[candidates]))
    return candidates[order[:k]]


def _result(arr, weights, chosen, method, start) -> ProjectionResult:
    support = np.zeros(arr.size, dtype=bool)
    support[chosen] = True
    support = support.reshape(arr.shape)
    return ProjectionResult(
        x=np.where(support, arr, np.zeros((), dtype=arr.dtype)),
        support=support,
        objective=_energy(arr.reshape(-1)[chosen]),
        method=method,
        optimal=True,
        message="optimal (matroid greedy)",
        seconds=time.perf_counter() - start,
    )


def _exclusive_structure(labels, caps, total) -> TVCSStructure:
    """One view of disjoint groups with ``caps`` and a ``total``, as a TVCS whose second view
    is empty; errors name ``labels`` and ``caps`` (the caller's), not the structure's views.
    A scalar ``caps`` renumbers the labels densely, as :meth:`TVCSStructure.from_labels` does."""
    checked, caps1 = _labels_and_caps(labels, caps, "labels", "caps")
    p = checked.shape[0]
    no_group = _frozen(np.full(p, -1, dtype=np.int64))  # fresh: kept without a copy
    return TVCSStructure(
        p, caps1, np.zeros(0, np.int64), min(_as_total(total, p), p), None, checked, no_group
    )


def project_top_k(v, *, k: int) -> ProjectionResult:
    """Keep the ``k`` entries of largest magnitude of ``v`` (any shape); zero the rest.

    Parameters
    ----------
    v : array-like of float
        The vector to project (integers or floats, any shape). Not modified.
    k : int
        Non-negative; ``k >= v.size`` keeps every non-zero entry.

    Returns
    -------
    ProjectionResult
        ``x`` and ``support`` have the shape of ``v``. Ties go to the lower flat index.

    Raises
    ------
    ValueError
        Naming ``k`` (negative or not an integer) or ``v`` (not real-valued or not finite).

    References
    ----------
    Yang, Gui, Ke, Stefankovic, Fujimaki & Liu, "On the projection operator to a three-view
    cardinality constrained set", ICML 2017: the TVCS with the total cap alone.
    """
    start = time.perf_counter()
    if isinstance(k, bool) or not isinstance(k, Integral | np.integer) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    arr = _check_values(v, np.size(v), np.shape(v))
    weights = np.square(_for_squares(arr.reshape(-1)), dtype=np.float64)
    chosen = _heaviest(weights, np.arange(weights.size), int(k))
    return _result(arr, weights, chosen, "top-k", start)


def project_exclusive_groups(v, labels, *, caps, total=None) -> ProjectionResult:
    """Project onto at most ``caps[g]`` entries per (disjoint) group and ``total`` in all.

    Parameters
    ----------
    v : array-like of float, shape (p,)
        The vector to project (integers or floats). Not modified.
    labels : array-like of int, shape (p,)
        Group of each element, ``-1`` = no group (limited by ``total`` only). With an array
        of ``caps`` they index it; with one ``caps`` for all groups they are only names (ids
        such as ``10**12`` are fine: they are renumbered densely).
    caps : int or array-like of int, shape (n_groups,)
        At most this many entries per group; a cap above its group's size binds nothing.
    total : int or None
        ``None`` means no total cap.

    Returns
    -------
    ProjectionResult
        Each group keeps its heaviest entries, then the heaviest ``total`` of those survive;
        ties go to the lower index.

    Raises
    ------
    ValueError
        Naming ``labels``, ``caps``, ``total`` or ``v``: labels of another length than ``v``,
        below ``-1`` or beyond ``len(caps)``; negative or fractional caps; a ``v`` that is
        not real-valued or not finite.

    References
    ----------
    Yang, Gui, Ke, Stefankovic, Fujimaki & Liu, "On the projection operator to a three-view
    cardinality constrained set", ICML 2017: this is its TVCS with one view of groups and
    the total, a laminar matroid.
    """
    start = time.perf_counter()
    structure = _exclusive_structure(labels, caps, total)
    if np.ndim(v) == 1 and np.shape(v)[0] != structure.n_elements:
        raise ValueError(
            f"labels has {structure.n_elements} entries but v has {np.shape(v)[0]}: give one "
            "group label per element of v"
        )
    arr = _check_values(v, structure.n_elements, None)
    weights = np.square(_for_squares(arr), dtype=np.float64)
    l1 = structure.labels1
    order = np.lexsort((np.arange(l1.size), -weights, l1))
    sorted_labels = l1[order]
    group_start = np.searchsorted(sorted_labels, sorted_labels, side="left")
    rank = np.arange(l1.size) - group_start
    # Ungrouped elements (label -1) index the extra last cap, which never binds.
    caps_ext = np.append(structure.caps1, l1.size)
    caps_of = caps_ext[np.where(sorted_labels >= 0, sorted_labels, caps_ext.size - 1)]
    survivors = np.sort(order[rank < caps_of])
    chosen = _heaviest(weights, survivors, structure.total)
    return _result(arr, weights, chosen, "exclusive-groups", start)
