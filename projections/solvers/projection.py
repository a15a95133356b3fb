"""The projection argument of the solvers: a TVCS projection that can double its caps.

The solvers accept any callable ``projection(v) -> result`` where ``result`` has ``.x`` (``v``
on the kept support, same shape as ``v``) and ``.support`` (bool, same shape); if the callable
takes a ``warm_start`` keyword (or ``**kwargs``) and results carry ``.warm_start``, the solvers
thread it from one call to the next. GradMP also needs the projection onto the set with every
cap doubled (``P_{Omega(G, 2s)}`` in Yang et al., ICML 2017, Algorithm 2), which it gets from
``projection.doubled()``; :func:`tvcs_projection` builds such an object.
"""

from __future__ import annotations

from projections.result import ProjectionResult
from projections.structure import TVCSStructure
from projections.tvcs import METHODS, project

__all__ = ["TVCSProjection", "double_caps", "tvcs_projection"]


def double_caps(structure: TVCSStructure) -> TVCSStructure:
    """The same groups as ``structure`` with every cap (``caps1``, ``caps2``, ``total``) doubled.

    The total stays capped at ``n_elements``, as in :class:`TVCSStructure`.
    """
    if not isinstance(structure, TVCSStructure):
        raise ValueError(f"structure must be a TVCSStructure, got {type(structure).__name__}")
    caps1 = 2 * structure.caps1
    caps2 = 2 * structure.caps2
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

    Attributes
    ----------
    structure : TVCSStructure
    method : str
    options : dict
        Extra keyword options for :func:`projections.tvcs.project`.
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
