"""The projection argument of the solvers: a TVCS projection that can double its caps.

The solvers accept any callable ``projection(v) -> result`` where ``result`` has ``.x`` (``v``
on the kept support, same shape as ``v``) and ``.support`` (bool, same shape); if the callable
takes a ``warm_start`` keyword (or ``**kwargs``) and results carry ``.warm_start``, the solvers
thread it from one call to the next. GradMP also needs the projection onto the set with every
cap doubled (``P_{Omega(G, 2s)}`` in Yang et al., ICML 2017, Algorithm 2), which it gets from
``projection.doubled()``; :func:`tvcs_projection` builds such an object, and
:func:`exclusive_groups_projection` the one onto a single view of disjoint groups plus a total
cap (the "bilevel exclusive sparsity" of Yang, Huang, Tran, Liu & Huang, CVPR 2016: rows only, or
columns only), a matroid on which the greedy choice is exact.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from projections.cardinality import _exclusive_structure, project_exclusive_groups
from projections.result import ProjectionResult
from projections.structure import TVCSStructure, _group_sizes
from projections.tvcs import METHODS, project

__all__ = [
    "ExclusiveGroupsProjection",
    "TVCSProjection",
    "double_caps",
    "exclusive_groups_projection",
    "tvcs_projection",
]


def double_caps(structure: TVCSStructure) -> TVCSStructure:
    """The same groups as ``structure`` with every cap (``caps1``, ``caps2``, ``total``) doubled.

    GradMP's ``P_2s`` (Yang et al., ICML 2017, Algorithm 2). Each cap is first lowered to its
    group's size (above it, it binds nothing), so no cap can overflow int64 when doubled; the
    total stays capped at ``n_elements``, as in :class:`TVCSStructure`.

    Parameters
    ----------
    structure : TVCSStructure
        The structure whose caps to double.

    Returns
    -------
    TVCSStructure
        A new structure with the same shape or labels.

    Raises
    ------
    ValueError
        If ``structure`` is not a :class:`TVCSStructure`.
    """
    if not isinstance(structure, TVCSStructure):
        raise ValueError(f"structure must be a TVCSStructure, got {type(structure).__name__}")
    sizes1, sizes2 = _group_sizes(structure)
    caps1 = 2 * np.minimum(structure.caps1, sizes1)
    caps2 = 2 * np.minimum(structure.caps2, sizes2)
    total = 2 * structure.total
    if structure.shape is not None:
        return TVCSStructure.from_matrix(
            structure.shape, max_per_row=caps1, max_per_col=caps2, total=total
        )
    return TVCSStructure.from_labels(
        structure.labels1, structure.labels2, caps1=caps1, caps2=caps2, total=total
    )


class TVCSProjection:
    """Callable Euclidean projection onto a TVCS, as the solvers expect.

    ``TVCSProjection(structure, method)(v, warm_start=None)`` is
    ``projections.tvcs.project(v, structure, method=method, warm_start=warm_start, **options)``.
    Build one with :func:`tvcs_projection`.

    Parameters
    ----------
    structure : TVCSStructure
        Groups and caps.
    method : {"exact", "lp", "pgd", "greedy"}, default "exact"
        Projection method (see :mod:`projections.tvcs`).
    **options
        Passed to :func:`projections.tvcs.project` on every call (e.g. ``pgd``'s
        ``max_iter``); checked on the first call.

    Attributes
    ----------
    structure : TVCSStructure
    method : str
    options : dict
        Extra keyword options for :func:`projections.tvcs.project`.

    Raises
    ------
    ValueError
        ``structure`` not a :class:`TVCSStructure`, or an unknown ``method``.
    """

    def __init__(self, structure: TVCSStructure, method: str = "exact", **options) -> None:
        if not isinstance(structure, TVCSStructure):
            raise ValueError(f"structure must be a TVCSStructure, got {type(structure).__name__}")
        if method not in METHODS:
            raise ValueError(
                f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}"
            )
        self.structure = structure
        self.method = method
        self.options = dict(options)

    def __call__(self, v, warm_start=None) -> ProjectionResult:
        """Project ``v`` (shape ``(p,)`` or the structure's matrix shape); ``v`` is not modified."""
        return project(v, self.structure, method=self.method, warm_start=warm_start, **self.options)

    def doubled(self) -> TVCSProjection:
        """The projection onto the same structure with every cap doubled (same method)."""
        return TVCSProjection(double_caps(self.structure), self.method, **self.options)

    def __repr__(self) -> str:
        s = self.structure
        shape = f"shape={s.shape}, " if s.shape is not None else f"n_elements={s.n_elements}, "
        return f"TVCSProjection({shape}total={s.total}, method={self.method!r})"


def tvcs_projection(structure: TVCSStructure, method: str = "exact", **options) -> TVCSProjection:
    """A projection onto ``structure`` for :func:`~projections.solvers.iht` and friends.

    Parameters
    ----------
    structure : TVCSStructure
        Groups and caps.
    method : {"exact", "lp", "pgd", "greedy"}, default "exact"
        Projection method (see :mod:`projections.tvcs`). The solvers' guarantees assume an
        exact projection; ``"greedy"`` is a heuristic.
    **options
        Passed to :func:`projections.tvcs.project` on every call.

    Returns
    -------
    TVCSProjection
        Callable ``(v, warm_start=None) -> ProjectionResult`` with ``.doubled()``.

    Examples
    --------
    >>> from projections import TVCSStructure
    >>> s = TVCSStructure.from_matrix((3, 4), max_per_row=1, max_per_col=2, total=2)
    >>> P = tvcs_projection(s, method="exact")
    >>> P.doubled().structure.total
    4
    """
    return TVCSProjection(structure, method, **options)


class ExclusiveGroupsProjection:
    """Callable projection onto "at most ``caps[g]`` per disjoint group, ``total`` in all".

    ``ExclusiveGroupsProjection(labels, caps, total)(v)`` is
    :func:`projections.cardinality.project_exclusive_groups` on ``v`` flattened, with ``x`` and
    ``support`` given back in ``v``'s shape (so a matrix ``w`` works with row or column labels).
    Build one with :func:`exclusive_groups_projection`.

    Parameters
    ----------
    labels : array-like of int, shape (p,)
        Group of each element; ``-1`` = no group. With one ``caps`` for all groups the
        labels are only names (renumbered densely).
    caps : int or array-like of int, shape (n_groups,)
        At most this many elements per group; a cap above its group's size binds nothing.
    total : int or None, default None
        At most this many elements in all; ``None`` means no total cap.

    Raises
    ------
    ValueError
        Naming ``labels``, ``caps`` or ``total`` (see
        :func:`~projections.cardinality.project_exclusive_groups`).

    Attributes
    ----------
    labels : ndarray of int64, shape (p,)
        Group of each element; ``-1`` = no group (limited by the total only).
    caps : ndarray of int64, shape (n_groups,)
    total : int
    """

    def __init__(self, labels, caps, total=None) -> None:
        structure = _exclusive_structure(labels, caps, total)
        self.labels = structure.labels1
        self.caps = structure.caps1
        self.total = structure.total

    def __call__(self, v) -> ProjectionResult:
        """Project ``v`` (any shape with ``p`` elements); ``v`` is not modified."""
        arr = np.asarray(v)
        if arr.size != self.labels.size:
            raise ValueError(f"v has {arr.size} elements, the labels have {self.labels.size}")
        result = project_exclusive_groups(
            arr.reshape(-1), self.labels, caps=self.caps, total=self.total
        )
        return dataclasses.replace(
            result, x=result.x.reshape(arr.shape), support=result.support.reshape(arr.shape)
        )

    def doubled(self) -> ExclusiveGroupsProjection:
        """The projection with every cap and the total doubled (GradMP's ``P_2s``)."""
        return ExclusiveGroupsProjection(self.labels, 2 * self.caps, 2 * self.total)

    def __repr__(self) -> str:
        return (
            f"ExclusiveGroupsProjection(n_elements={self.labels.size}, "
            f"n_groups={self.caps.size}, total={self.total})"
        )


def exclusive_groups_projection(labels, caps, total=None) -> ExclusiveGroupsProjection:
    """A projection onto one view of disjoint groups with caps, and a total cap, for the solvers.

    Parameters
    ----------
    labels : array-like of int, shape (p,)
        Group of each element, numbered from 0; ``-1`` = no group. For the rows of an
        ``n_rows x n_cols`` matrix: ``np.repeat(np.arange(n_rows), n_cols)``; for its columns:
        ``np.tile(np.arange(n_cols), n_rows)``.
    caps : int or array-like of int, shape (n_groups,)
    total : int or None
        ``None`` means no total cap.

    Returns
    -------
    ExclusiveGroupsProjection
        Callable ``v -> ProjectionResult`` with ``.doubled()``. Equals the TVCS projection whose
        second view has no groups (every element labelled ``-1``), at the cost of one sort.

    Examples
    --------
    >>> import numpy as np
    >>> P = exclusive_groups_projection(np.repeat(np.arange(2), 3), caps=[1, 2], total=2)
    >>> P(np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 5.0]])).support.astype(int).tolist()
    [[0, 0, 0], [0, 1, 1]]
    """
    return ExclusiveGroupsProjection(labels, caps, total)
