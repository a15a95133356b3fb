"""The result object every projection returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ProjectionResult"]


@dataclass(frozen=True, eq=False)
class ProjectionResult:
    """Outcome of projecting ``v`` onto a cardinality-constrained set.

    Attributes
    ----------
    x : ndarray, same shape as ``v``
        ``v`` on the chosen support, zero elsewhere.
    support : ndarray of bool, same shape as ``v``
        The chosen support; it satisfies every cap.
    objective : float
        ``sum(v[support] ** 2)``, the quantity the projection maximises.
    method : str
        The method that produced the result.
    optimal : bool
        True when the method proved the support optimal (``"exact"`` by a dual certificate,
        ``"lp"`` by HiGHS' optimal status); False for heuristics and unfinished runs.
    iterations : int
        Method-specific iteration count (cost-scaling phases, PGD steps, ...).
    converged : bool
        Whether the method reached its own stopping criterion.
    message : str
        One line on how the method ended.
    seconds : float
        Wall time spent in the method.
    warm_start : object or None
        Opaque state that ``method="exact"`` accepts back as ``warm_start=`` to solve a nearby
        instance faster (for example the next iterate of IHT).
    """

    x: np.ndarray
    support: np.ndarray
    objective: float
    method: str
    optimal: bool
    iterations: int = 0
    converged: bool = True
    message: str = ""
    seconds: float = 0.0
    warm_start: object | None = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class MethodOutput:
    """What a private method kernel hands back to :func:`projections.tvcs.project`.

    ``support`` is a flat bool array of length ``p``; the public wrapper builds ``x``, the
    objective and the timing around it.
    """

    support: np.ndarray
    optimal: bool
    iterations: int = 0
    converged: bool = True
    message: str = ""
    warm_start: object | None = None
