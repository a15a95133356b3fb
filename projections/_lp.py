"""``method="lp"``: the LP relaxation (5) of Yang et al. (ICML 2017), solved by HiGHS.

maximise ``<w, x>`` subject to ``A x <= s`` and ``0 <= x <= 1``, where ``A`` stacks the
all-ones row (total cap) and one indicator row per group of views 1 and 2. ``A`` is totally
unimodular (their Theorem 2), so the dual simplex returns an integral vertex. A slow,
independent reference for ``"exact"``.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from projections.result import MethodOutput


def constraint_matrix(structure, elements: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """Rows (total, view-1 groups, view-2 groups) restricted to ``elements``; and their caps."""
    k = elements.shape[0]
    l1 = structure.labels1[elements]
    l2 = structure.labels2[elements]
    g1 = structure.caps1.shape[0]
    g2 = structure.caps2.shape[0]
    cols = np.arange(k)
    in1 = l1 >= 0
    in2 = l2 >= 0
    rows = np.concatenate([np.zeros(k, np.int64), 1 + l1[in1], 1 + g1 + l2[in2]])
    columns = np.concatenate([cols, cols[in1], cols[in2]])
    A = sp.csr_matrix((np.ones(rows.shape[0]), (rows, columns)), shape=(1 + g1 + g2, k))
    caps = np.concatenate([[structure.total], structure.caps1, structure.caps2]).astype(float)
    return A, caps


def _stopped(res) -> str:
    """Why HiGHS stopped short, in SolverResult's words (``linprog``'s status 1 is a limit)."""
    if res.status == 1:
        return "time_limit" if "time" in str(res.message).lower() else "max_iter"
    return "breakdown"  # infeasible, unbounded or numerical trouble: none should happen here


def _check_time_limit(time_limit) -> None:
    """Refuse a ``time_limit`` that is not a positive number of seconds or None (a string,
    a bool, NaN, zero or a negative number) with a ValueError naming it."""
    if time_limit is None:
        return
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, Real)
        or math.isnan(time_limit)
        or not time_limit > 0
    ):
        raise ValueError(
            f"time_limit must be a positive number of seconds or None, got {time_limit!r}"
        )


def solve(weights, structure, *, warm_start=None, time_limit: float | None = None) -> MethodOutput:
    """Solve the LP with HiGHS' dual simplex and round its (integral) vertex solution."""
    _check_time_limit(time_limit)
    support = np.zeros(weights.shape[0], dtype=bool)
    elements = np.flatnonzero(weights > 0)
    if elements.size == 0:
        return MethodOutput(support=support, optimal=True, message="nothing to select")
    A, caps = constraint_matrix(structure, elements)
    options = {"presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    # HiGHS' tolerances are absolute (1e-7): with the weights scaled to a largest of 1 they
    # are relative, and inputs of any scale (v ~ 1e-15 found by Hypothesis) solve alike.
    w = weights[elements]
    res = linprog(
        -(w / w.max()), A_ub=A, b_ub=caps, bounds=(0, 1), method="highs-ds", options=options
    )
    if res.x is None:
        return MethodOutput(
            support=support,
            optimal=False,
            converged=False,
            message=f"HiGHS: {res.message}",
            details={"stopped": _stopped(res)},
        )
    support[elements[res.x > 0.5]] = True
    integral = bool(np.all(np.minimum(res.x, 1 - res.x) < 1e-6))
    optimal = res.status == 0 and integral and structure.is_feasible(support)
    return MethodOutput(
        support=support,
        optimal=optimal,
        iterations=int(getattr(res, "nit", 0)),
        converged=res.status == 0,
        message=f"HiGHS dual simplex: {res.message}" + ("" if integral else " (fractional vertex)"),
        details={} if res.status == 0 else {"stopped": _stopped(res)},
    )
