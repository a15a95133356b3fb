"""Escape from the fixed points of iterative hard thresholding: longer steps, debiased.

A feasible ``w`` with ``P(w - step * grad f(w)) = w`` need not be optimal: with a step shorter
than the curvature along the missing coordinates allows, the projection keeps the current
support. :func:`escape_fixed_point` tries ``step * 2^k`` for ``k = 1 .. doublings`` and keeps the
first candidate that lowers the objective, each replaced, when a loss is given, by the
minimiser on its support (hard thresholding pursuit's debiasing step; Foucart, SIAM J. Numer.
Anal., 2011). Used by :func:`~projections.solvers.iht` and
:func:`~projections.solvers.group_iht`; the reasoning and what was measured are in
:func:`~projections.solvers.iht`'s Notes.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from projections.solvers._common import Breakdown, Objective, Projector

logger = logging.getLogger(__name__)

#: Default ``escape`` of the IHT solvers: steps up to ``2^8`` times the current one are tried.
ESCAPE_DOUBLINGS = 8

#: Relative decrease of ``phi`` an escape candidate must achieve.
ESCAPE_DECREASE = 1e-9

#: An escape candidate is debiased only if its support has at most this fraction of the loss's
#: ``n_samples`` elements (least squares on ``k`` of ``n`` Gaussian columns inflates the noise
#: by about ``k / (n - k)``, at most 1 here). Measured on Figure 2 (``docs/benchmarks/
#: figure2.md``): with ``k < n`` instead, IHT's relative error at n = 150 rose from 0.81 (no
#: escape) to 1.36.
DEBIAS_MAX_FRACTION = 0.5


def can_debias(loss, support) -> bool:
    """Whether ``support`` has at most ``DEBIAS_MAX_FRACTION * loss.n_samples`` elements."""
    return bool(support.sum() <= DEBIAS_MAX_FRACTION * getattr(loss, "n_samples", math.inf))


def escape_fixed_point(
    obj: Objective, proj: Projector, debias_loss, w, phi_w, g, step: float, doublings
):
    """The first longer step that leaves an IHT fixed point with a lower ``phi`` (see
    :func:`~projections.solvers.iht`, Notes).

    Parameters
    ----------
    w, g : ndarray, shape of the iterate
        The fixed point and ``grad phi(w)``.
    phi_w : float
        ``phi(w)``.
    debias_loss : Loss or None
        If given, each candidate is replaced by ``debias_loss.minimize_on_support`` on its
        support, when the support has at most ``DEBIAS_MAX_FRACTION * debias_loss.n_samples``
        elements (if the loss has ``n_samples``): least squares on ``k`` of ``n`` Gaussian
        columns inflates the noise (and the misfit of a wrong support) by about
        ``k / (n - k)``, so near ``k = n`` the minimiser interpolates it.

    Returns
    -------
    tuple (x, support, f(x)) or None
        ``None`` when no step ``step * 2^k``, ``k = 1 .. doublings``, lowers ``phi``.
    """
    threshold = phi_w - ESCAPE_DECREASE * max(abs(phi_w), np.finfo(np.float64).tiny)
    for k in range(1, doublings + 1):
        x, sup = proj(w - step * 2.0**k * g)
        if debias_loss is not None and can_debias(debias_loss, sup):
            x = np.asarray(debias_loss.minimize_on_support(x, sup), dtype=np.float64).reshape(
                w.shape
            )
            sup = x != 0
        try:
            f_x = obj.f(x)
        except Breakdown:
            continue
        if obj.sign * f_x < threshold:
            logger.debug("iht: escaped a fixed point with step %.3g", step * 2.0**k)
            return x, sup, f_x
    return None


class FixedPointEscape:
    """The escape's state along a run: escapes taken, and whether the last attempt from the
    current iterate found nothing (then it is not retried until the iterate moves).

    Parameters
    ----------
    doublings : int >= 0
        Steps ``step * 2^k``, ``k = 1 .. doublings``, are tried; 0 never escapes.
    debias_loss : Loss or None
        Passed to :func:`escape_fixed_point`: candidates are refit on their support.
    """

    def __init__(self, doublings: int, debias_loss=None) -> None:
        self.doublings, self.debias_loss = doublings, debias_loss
        self.count, self.failed = 0, False

    def attempt(self, obj: Objective, proj: Projector, w, phi_w: float, g, step: float):
        """:func:`escape_fixed_point` from ``w``, unless off or already failed from it.

        Returns ``(x, support, f(x))`` or None."""
        if not self.doublings or self.failed:
            return None
        found = escape_fixed_point(obj, proj, self.debias_loss, w, phi_w, g, step, self.doublings)
        self.count += found is not None
        self.failed = found is None
        return found

    def moved(self, x, w) -> None:
        """Record the iteration's result ``x`` from ``w``: a move allows a new attempt."""
        self.failed = self.failed and np.array_equal(x, w)
