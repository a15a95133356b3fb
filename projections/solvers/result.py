"""The result object every IHT-family solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SolverResult"]


@dataclass(frozen=True, eq=False)
class SolverResult:
    """Outcome of every solver of :mod:`projections.solvers` (:func:`~projections.solvers.iht`,
    :func:`~projections.solvers.stochastic_iht`, :func:`~projections.solvers.gradmp`, the group,
    dual-averaging and conditional-gradient solvers); each adds its own ``details``.

    Attributes
    ----------
    solution : ndarray of float, shape of ``w0`` (or the loss's ``feature_shape``)
        The returned iterate ``w``. For :func:`~projections.solvers.stochastic_iht` with an
        oracle that has ``value``, the best evaluated iterate, not necessarily the last one.
    support : ndarray of bool, same shape as ``solution``
        Support chosen by the projection that produced ``solution`` (``solution != 0`` when
        no projection ran, e.g. ``max_iter=0``).
    iterations : int
        Number of completed iterations (gradient + projection steps).
    history : ndarray of float, shape (n_evaluations,)
        Objective ``f(w)`` (the loss as given, whatever the direction of optimisation) at the
        iterations listed in ``history_iterations``; ``history[0]`` is ``f(w0)``. Empty when
        the objective cannot be evaluated (a stochastic oracle without ``value``).
    history_iterations : ndarray of int, shape (n_evaluations,)
        Iteration number of each ``history`` entry (``0`` = the starting point). For
        :func:`~projections.solvers.iht` and :func:`~projections.solvers.gradmp` this is
        ``0, 1, ..., iterations``.
    converged : bool
        Whether the solver's own stopping criterion was met (not merely ``max_iter``, a time
        limit or a callback).
    status : str
        Why the loop ended, the same words for every solver: ``"max_iter"``, ``"converged"``,
        ``"callback"`` (the callback returned True), ``"no_improvement"`` (stochastic IHT's
        ``n_evals_no_change``), ``"time_limit"`` or ``"breakdown"`` (NaN or infinity; the last
        finite iterate is returned).
    message : str
        One line on how the run ended.
    seconds : float
        Wall time of the whole run.
    projection_seconds : float
        Part of ``seconds`` spent inside projection calls.
    n_projections : int
        Number of projection calls (all of them: backtracking trials and, for GradMP, the
        doubled-cap projections of the gradient).
    n_warm_started : int
        How many of those calls received the previous call's ``result.warm_start``.
    step : float or None
        The solver's step size at the end: the last step taken (after any backtracking), or,
        when no iteration ran (``max_iter=0``), the step the first iteration would have
        started from (``1 / loss.lipschitz()``, a given constant ``step``, ...); ``None`` for
        a solver or a run that has no step size (dual averaging, GradMP's exact subspace
        minimisation, the adaptive rule with no ``lipschitz()`` and no iteration).
    objective : float
        ``f(solution)`` when it was evaluated, else ``nan``.
    details : dict
        What the message says, as values: ``returned_iteration`` (int: the iteration of
        ``solution``, below ``iterations`` when an earlier best iterate was returned) for
        every solver; :func:`~projections.solvers.iht` adds ``step_rule`` (``"constant"``, a
        step given, or ``"adaptive"``, the local ``1/L`` with backtracking) and ``escapes``
        (int: fixed-point escapes taken).
    """

    solution: np.ndarray
    support: np.ndarray
    iterations: int
    history: np.ndarray
    converged: bool
    status: str
    message: str
    seconds: float
    projection_seconds: float
    history_iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    n_projections: int = 0
    n_warm_started: int = 0
    step: float | None = None
    objective: float = float("nan")
    details: dict = field(default_factory=dict)
