"""The input as every pass of the exact projection reads it: values, groups, integer costs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from projections._exact.elements import NO_OCTAVES, weight_range


class Groups(NamedTuple):
    """Every element's groups and the caps, in the order the element loops take them.

    Attributes
    ----------
    labels1, labels2 : ndarray of int64, shape (p,) or (0,)
        View-1 and view-2 group of each element (-1: none); both empty for a matrix, whose
        element ``i * n_cols + j`` is in row ``i`` and column ``j``.
    n_cols : int
        The matrix's number of columns (0 if not a matrix).
    caps1 : ndarray of int64, shape (g1,)
    caps2 : ndarray of int64, shape (g2,)
    """

    labels1: np.ndarray
    labels2: np.ndarray
    n_cols: int
    caps1: np.ndarray
    caps2: np.ndarray


@dataclass(slots=True)
class Problem:
    """One call's input and cost scale (see :func:`load`); nothing changes it afterwards.

    (Not a frozen dataclass: its construction costs three times as long, some 2.5 us a call.)

    Nodes: view-1 group ``g`` is node ``g``, view-2 group ``h`` node ``g1 + h``, then the
    source ``g1 + g2`` and the sink ``g1 + g2 + 1``. Input arcs ``0, ..., n_fixed - 1`` are the
    fixed ones (source to view-1 groups, view-2 groups to sink, sink to source); arc
    ``n_fixed + t`` is the ``t``-th candidate element's.

    Attributes
    ----------
    values : ndarray of float64, shape (p,)
        ``v``, scaled by ``2**300`` when the weights are subnormal (so weights by ``2**600``).
    groups : Groups
    total : int
        The total cap.
    top, low : float
        Largest and smallest usable weight (``values ** 2``).
    factor : float
        Weight to unrounded integer cost: ``2**bits / top``.
    multiplier : numpy.int64
        ``n_nodes + 1``: every cost is a multiple, so that ``eps = 1`` is optimal.
    unit, state_unit : float
        Integer price units per unit of weight, and per unit of the caller's weight.
    top_cost : int
        The largest cost, ``round(top * factor) * multiplier``.
    g1, g2, n_nodes, n_fixed : int
    """

    values: np.ndarray
    groups: Groups
    total: int
    top: float
    low: float
    factor: float
    multiplier: np.int64
    unit: float
    state_unit: float
    top_cost: int
    g1: int
    g2: int
    n_nodes: int
    n_fixed: int


def load(values, structure) -> Problem | None:
    """The problem of projecting ``values`` onto ``structure``; None if nothing is usable.

    Parameters
    ----------
    values : ndarray, shape (p,)
        ``v`` (real; converted to float64). One pass finds the weight range and checks that
        ``v`` is finite.
    structure : TVCSStructure

    Raises
    ------
    ValueError
        ``v`` holds NaN or infinity.
    """
    caps1 = structure.caps1
    caps2 = structure.caps2
    if structure.shape is not None and structure._labels1 is None:
        labels = np.empty(0, dtype=np.int64)  # matrix: groups from the index
        # read-only like a general structure's labels: the kernels see one array type, so a
        # matrix and a general structure share their compiled signatures
        labels.setflags(write=False)
        groups = Groups(labels, labels, structure.shape[1], caps1, caps2)
    else:
        groups = Groups(structure.labels1, structure.labels2, 0, caps1, caps2)
    values = np.ascontiguousarray(values, dtype=np.float64)
    top, low, finite = weight_range(values, *groups, NO_OCTAVES)
    if not finite:
        raise ValueError("v must be finite, got NaN or infinity")
    weight_scale = 1.0
    if 0.0 < top < 2.0**-500:  # 2**bits / top would overflow: work on exactly scaled values
        weight_scale = 2.0**600
        values = values * 2.0**300
        top, low, _ = weight_range(values, *groups, NO_OCTAVES)
    if top == 0.0 or structure.total == 0:
        return None
    g1 = caps1.shape[0]
    g2 = caps2.shape[0]
    n_nodes = g1 + g2 + 2
    factor = 2.0 ** scale_bits(n_nodes) / top
    multiplier = np.int64(n_nodes + 1)
    unit = factor * float(multiplier)
    return Problem(
        values=values,
        groups=groups,
        total=structure.total,
        top=top,
        low=low,
        factor=factor,
        multiplier=multiplier,
        unit=unit,
        state_unit=unit * weight_scale,
        top_cost=int(np.int64(top * factor + 0.5) * multiplier),
        g1=g1,
        g2=g2,
        n_nodes=n_nodes,
        n_fixed=g1 + g2 + 1,
    )


def scale_bits(n_nodes: int) -> int:
    """Bits of the largest cost before the ``n_nodes + 1`` multiplier (at most 40).

    Prices fall by at most ~3.3 * n_nodes * max|cost| over all phases (Goldberg 1997), and a
    reduced cost adds two prices to a cost: keep 2 * 3.3 * n_nodes**2 * 2**bits below 2**62.
    """
    return int(min(40, math.floor(62 - math.log2(6.6) - 2 * math.log2(n_nodes + 1))))
