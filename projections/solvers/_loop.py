"""The loop every IHT-family solver runs: each solver supplies its step, :func:`run` the rest.

A solver (:func:`~projections.solvers.iht`, :func:`~projections.solvers.stochastic_iht`,
:func:`~projections.solvers.gradmp`, :func:`~projections.solvers.dual_averaging`,
:func:`~projections.solvers.group_iht.group_iht`, :func:`~projections.solvers.exclusive_lasso`,
:func:`~projections.solvers.frank_wolfe`, :func:`~projections.solvers.cogent`) checks its
arguments, builds a :class:`Steps` (its own state and its one iteration) and calls
:func:`run`, which owns what they share: the history of values, the stopping rules
(:func:`stop_reason`: the callback, the solver's convergence test, no improvement, the time
limit), the numerical breakdown, and the :class:`SolverResult`.
"""

from __future__ import annotations

import logging

import numpy as np

from projections.solvers._common import Breakdown, Deadline, readonly
from projections.solvers.result import SolverResult

logger = logging.getLogger("projections.solvers")

#: Why a solver's loop ended, in :attr:`~projections.solvers.SolverResult.status`.
STATUSES = ("max_iter", "converged", "callback", "no_improvement", "time_limit", "breakdown")


class Steps:
    """A solver's side of :func:`run`: its state and one iteration.

    Subclasses set ``name`` (for the log), ``convergence`` (their convergence test in words),
    ``counters`` (the projections' :func:`~projections.solvers._common.new_counters`) and
    implement :meth:`advance`, :meth:`value`, :meth:`describe` and :meth:`step_size`; the
    other methods have defaults that fit a solver evaluating every iterate.
    """

    name = "solver"
    convergence = ""
    #: Whether the last :meth:`advance` met the solver's convergence test.
    converged = False
    counters: dict
    #: Whether the callback receives :meth:`value` (else None, for a solver that promises it).
    callback_gets_value = True
    #: The message of a run that reached ``max_iter``, formatted with ``max_iter``.
    max_iter_message = "max_iter ({max_iter}) reached"
    #: The message of a breakdown, formatted with ``it`` (the failed iteration) and ``exc``.
    breakdown_message = "stopped at iteration {it}: {exc}; returned the last finite iterate"

    def initial_value(self, w: np.ndarray, support: np.ndarray) -> float | None:
        """``f(w0)``, recorded at iteration 0, or None when the solver cannot evaluate."""
        raise NotImplementedError

    def advance(self, it: int, w: np.ndarray, support: np.ndarray):
        """Iteration ``it`` from ``(w, support)``: ``(w_next, support_next)``. A
        :class:`~projections.solvers._common.Breakdown` here leaves ``w`` the last iterate."""
        raise NotImplementedError

    def value(self, it: int, w: np.ndarray, support: np.ndarray) -> float | None:
        """``f`` of iterate ``it``, or None when the solver does not evaluate it."""
        raise NotImplementedError

    def stalled(self) -> str | None:
        """Why to stop for want of improvement (before ``max_iter``), or None."""
        return None

    def final_value(self, it: int, w: np.ndarray, support: np.ndarray) -> float | None:
        """``f`` of the last iterate when the loop ended without evaluating it, or None."""
        return None

    def returned(self, w: np.ndarray, support: np.ndarray, done: int, history: History):
        """``(solution, support, objective, iteration)`` the result reports: the last iterate
        ``w`` (iteration ``done``) with its value if it was evaluated, else ``nan``."""
        return w, support, history.value_at(done), done

    def describe(self) -> str:
        """The solver's settings in a few words, appended to the message in parentheses
        (nothing appended when empty)."""
        raise NotImplementedError

    def step_size(self) -> float | None:
        """The step the result reports (:attr:`SolverResult.step`)."""
        raise NotImplementedError

    def details(self) -> dict:
        """The solver's own facts for :attr:`SolverResult.details` (none by default)."""
        return {}


class History:
    """The values a run evaluated and the iteration of each."""

    def __init__(self) -> None:
        self.values: list[float] = []
        self.iterations: list[int] = []

    def record(self, it: int, value: float | None) -> None:
        if value is not None:
            self.values.append(value)
            self.iterations.append(it)

    def has(self, it: int) -> bool:
        return bool(self.iterations) and self.iterations[-1] == it

    def value_at(self, it: int) -> float:
        """The value recorded at ``it`` if ``it`` is the last iteration recorded, else nan."""
        return self.values[-1] if self.has(it) else float("nan")


def stop_reason(*, it, w, value, callback, converged, convergence, deadline, stalled=None):
    """Why a solver stops after iteration ``it``: ``(status, message)``, or ``(None, None)``.

    Checked in this order: the callback (which returns True to stop), convergence (``converged``
    with ``convergence`` describing the criterion), no improvement (``stalled``, a description
    of it, or None), ``deadline``'s time limit. ``status`` is one of :data:`STATUSES`.
    """
    if callback is not None and callback(it, readonly(w), value):
        return "callback", f"stopped by callback at iteration {it}"
    if converged:
        return "converged", f"converged at iteration {it} ({convergence})"
    if stalled is not None:
        return "no_improvement", f"stopped at iteration {it}: {stalled}"
    if deadline.passed():
        return "time_limit", f"time limit of {deadline.limit:g} s reached at iteration {it}"
    return None, None


def run(
    steps: Steps, w: np.ndarray, *, max_iter: int, callback, deadline: Deadline
) -> SolverResult:
    """Run ``steps`` from ``w`` for at most ``max_iter`` iterations and build the result.

    ``deadline`` is the run's clock, started by the solver before its setup, and its time limit.

    Each iteration: ``steps.advance``, then ``steps.value`` (recorded in the history when not
    None), then :func:`stop_reason` on the callback, ``steps.converged``, ``steps.stalled()``
    (except at the last iteration) and the time limit. A
    :class:`~projections.solvers._common.Breakdown` ends the run with status ``"breakdown"``
    and the last iterate the solver completed.
    """
    history = History()
    support = w != 0
    status, message = "max_iter", steps.max_iter_message.format(max_iter=max_iter)
    done = 0
    try:
        history.record(0, steps.initial_value(w, support))
        for it in range(1, max_iter + 1):
            w, support = steps.advance(it, w, support)
            done = it
            value = steps.value(it, w, support)
            history.record(it, value)
            stop, reason = stop_reason(
                it=it,
                w=w,
                value=value if steps.callback_gets_value else None,
                callback=callback,
                converged=steps.converged,
                convergence=steps.convergence,
                deadline=deadline,
                stalled=steps.stalled() if it < max_iter else None,
            )
            if stop is not None:
                status, message = stop, reason
                break
        if not history.has(done):
            history.record(done, steps.final_value(done, w, support))
    except Breakdown as exc:
        status = "breakdown"
        message = steps.breakdown_message.format(it=done + 1, exc=exc)
        logger.warning("%s: %s", steps.name, message)
    return _result(steps, w, support, done, history, status, message, deadline)


def _result(steps: Steps, w, support, done: int, history: History, status, message, deadline):
    """The :class:`SolverResult` of a run that ended after iteration ``done``."""
    w, support, objective, returned_it = steps.returned(w, support, done, history)
    if returned_it != done:
        message = f"{message}; returned the best iterate, from iteration {returned_it}"
    settings = steps.describe()
    result = SolverResult(
        solution=w,
        support=support,
        iterations=done,
        history=np.asarray(history.values, dtype=np.float64),
        history_iterations=np.asarray(history.iterations, dtype=np.int64),
        converged=status == "converged",
        status=status,
        message=f"{message} ({settings})" if settings else message,
        seconds=deadline.elapsed(),
        projection_seconds=steps.counters["seconds"],
        n_projections=steps.counters["calls"],
        n_warm_started=steps.counters["warm_started"],
        step=steps.step_size(),
        objective=objective,
        details={"returned_iteration": returned_it, **steps.details()},
    )
    logger.info("%s: %s; f=%.6g after %d iterations", steps.name, result.message, objective, done)
    return result
