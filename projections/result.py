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
        One line on how the method ended, for people.
    seconds : float
        Wall time spent in the method.
    warm_start : object or None
        Opaque state that ``method="exact"`` accepts back as ``warm_start=`` to solve a nearby
        instance faster (for example the next iterate of IHT).
    details : dict
        What the message says, as values (empty for methods that report none).
        ``"exact"``: ``candidate_rounds`` (int: candidate graphs solved before the certificate
        held on every element), ``candidate_elements`` (int: elements of the last candidate
        graph) and ``warm_started`` (bool: the ``warm_start`` given was taken); none when
        there was nothing to select. ``"pgd"``: ``stopped`` (``"converged"``, ``"max_iter"``
        or ``"time_limit"``), ``duality_gap`` (float: the relative duality gap reached) and
        ``rounding_feasible`` (bool: the last rounding was feasible before repair); none when
        there was nothing to select or no cap binds (every element is then selected).
        ``"lp"`` and the graph projections: ``stopped`` when they did not converge
        (``"max_iter"``, ``"time_limit"``, ``"breakdown"``).
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
    details: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        """Why the method ended, in :class:`~projections.solvers.SolverResult`'s words.

        ``"converged"`` when :attr:`converged`; otherwise the reason the method recorded in
        ``details["stopped"]`` (``"max_iter"``, ``"time_limit"`` or ``"breakdown"``), and
        ``"max_iter"`` for a method that ran out of its iterations without saying more.
        Every layer's result (projection, IHT-family solver, MTFL) thus has a ``status``.
        """
        if self.converged:
            return "converged"
        return str(self.details.get("stopped", "max_iter"))


@dataclass(frozen=True, eq=False)
class MethodOutput:
    """What a private method kernel hands back to :func:`projections.tvcs.project`.

    ``support`` is a flat bool array of length ``p``; the public wrapper builds ``x``, the
    objective and the timing around it. ``details`` become :attr:`ProjectionResult.details`.
    """

    support: np.ndarray
    optimal: bool
    iterations: int = 0
    converged: bool = True
    message: str = ""
    warm_start: object | None = None
    details: dict = field(default_factory=dict)
