"""Euclidean projection onto a Three-view Cardinality Structure (TVCS).

For a vector ``v`` and a :class:`~projections.structure.TVCSStructure`, the projection keeps
``v`` on a support ``S`` that maximises ``sum(v[S] ** 2)`` subject to every cap (Yang et al.,
ICML 2017, Lemma 1). The constraint matrix is totally unimodular (their Theorem 2), so the
problem is a linear programme with integral vertices and, equivalently, a maximum-weight
b-matching with a cardinality bound, i.e. a min-cost flow.

Methods
-------
``"exact"``
    Cost-scaling min-cost flow on a sparse candidate graph, proved optimal on the full input
    by a dual certificate (see :mod:`projections._exact`). The default.
``"lp"``
    The LP relaxation solved by HiGHS (dual simplex) through SciPy: a slow, independent
    reference.
``"pgd"``
    The paper's §4.2 projected gradient on the primal-dual feasibility problem (7), with a
    random perturbation and rounding. Slow and often unfinished; kept for comparison.
``"greedy"``
    Sort by ``v ** 2`` and accept an element whenever every cap still allows it. Fast and
    approximate: not optimal in general.

Elements with ``v == 0`` are never selected: they add nothing to the objective.
"""

from __future__ import annotations

import inspect
import math
import time

import numpy as np
from numba import njit

from projections.result import MethodOutput, ProjectionResult
from projections.structure import TVCSStructure

__all__ = ["METHODS", "project", "project_matrix"]

METHODS = ("exact", "lp", "pgd", "greedy")


def _kernel(method: str):
    if method == "exact":
        from projections._exact import solve
    elif method == "lp":
        from projections._lp import solve
    elif method == "pgd":
        from projections._pgd import solve
    elif method == "greedy":
        from projections._greedy import solve
    else:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    return solve


def _check_method_options(method: str, solve, options: dict) -> None:
    """Refuse an option ``method`` does not take, naming the ones it does."""
    taken = [
        name
        for name, parameter in inspect.signature(solve).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "warm_start"
    ]
    unknown = sorted(set(options) - set(taken))
    if unknown:
        takes = ", ".join(taken) if taken else "no option"
        raise ValueError(f"method {method!r} takes {takes}; got {', '.join(unknown)}")


def _as_real(v, name: str = "v") -> np.ndarray:
    """``v`` as an array of a dtype the numba kernels take, refusing what is not real.

    Native integers, float32 and float64 are kept as they are (results keep their dtype); a
    non-native byte order (``">f8"``, ``">i4"``) becomes the native one, and any other real
    dtype (float16, longdouble) becomes float64. Booleans, complex numbers, timedeltas,
    datetimes and objects are refused with a ValueError naming ``name`` and the dtype.
    """
    arr = np.asarray(v)
    if arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be a real-valued (integer or float) array, got dtype {arr.dtype}"
        )
    native = arr.dtype.newbyteorder("=")
    if native.kind == "f" and native not in (np.float32, np.float64):
        native = np.dtype(np.float64)
    return arr if native == arr.dtype else arr.astype(native)


def _check_values(v, n_elements: int, shape, *, finite: bool = True) -> np.ndarray:
    arr = _as_real(v)
    allowed = [(n_elements,)] + ([tuple(shape)] if shape is not None else [])
    if arr.shape not in allowed:
        want = " or ".join(str(s) for s in allowed)
        raise ValueError(f"v has shape {arr.shape}, the structure expects {want}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError("v must be finite, got NaN or infinity")
    return arr


#: Magnitudes whose squares float64 holds with room to sum them: a vector whose largest entry
#: lies outside is scaled by a power of two before its squares are taken (:func:`_for_squares`).
_SQUARE_SAFE = (2.0**-480, 2.0**480)


def _for_squares(arr: np.ndarray) -> np.ndarray:
    """``arr``, or ``arr`` times a power of two when its largest magnitude is beyond
    :data:`_SQUARE_SAFE` (above about 1e144, squares overflow to infinity and ties; below about
    1e-144, they underflow to zero, "nothing to select"). The order of the squares, hence every
    projection's support, is the same; objectives are taken from ``arr`` itself."""
    if arr.size == 0 or not np.issubdtype(arr.dtype, np.floating):
        return arr
    peak = max(abs(float(arr.max())), abs(float(arr.min())))
    if peak == 0.0 or not math.isfinite(peak) or _SQUARE_SAFE[0] <= peak <= _SQUARE_SAFE[1]:
        return arr
    return np.ldexp(arr.astype(np.float64), -math.frexp(peak)[1])


def _energy(values: np.ndarray) -> float:
    """``sum(values ** 2)``, infinity without a warning when it overflows float64."""
    with np.errstate(over="ignore"):
        return float(np.square(values, dtype=np.float64).sum())


@njit(cache=True)
def _restrict(flat, support, x):
    """Fill ``x`` with ``v`` on ``support`` (0 elsewhere); return ``sum(v[support] ** 2)``.

    One pass. The sum is taken in blocks of 1024 terms (accurate like NumPy's pairwise sum).
    ``x`` comes from NumPy, whose large arrays get transparent huge pages where the system
    offers them, which makes first touching it cheaper than a fresh Numba allocation.
    """
    zero = flat.dtype.type(0)
    total = 0.0
    block = 0.0
    n_block = 0
    for e in range(flat.shape[0]):
        if support[e]:
            y = flat[e]
            x[e] = y
            w = np.float64(y)
            block += w * w
            n_block += 1
            if n_block == 1024:
                total += block
                block = 0.0
                n_block = 0
        else:
            x[e] = zero
    return total + block


def project(
    v, structure: TVCSStructure, *, method: str = "exact", warm_start=None, **options
) -> ProjectionResult:
    """Project ``v`` onto the set of vectors whose support satisfies ``structure``.

    Parameters
    ----------
    v : array-like of float, shape (p,) or the structure's matrix shape
        The vector to project, of integers or floats. Not modified.
    structure : TVCSStructure
        Groups and caps.
    method : {"exact", "lp", "pgd", "greedy"}, default "exact"
        See the module docstring.
    warm_start : object, optional
        ``result.warm_start`` of an earlier ``"exact"`` projection with the same structure;
        makes a projection of a nearby ``v`` cheaper. Ignored by the other methods.
    **options
        Method options. ``"pgd"``: ``max_iter`` (default 20000), ``time_limit`` (seconds,
        default 10), ``tol`` (relative duality gap, default 1e-9), ``seed`` (of the
        perturbation, default 0), ``check_every`` (iterations between roundings, default 50)
        and ``accelerated`` (FISTA momentum, default False); see
        :func:`projections._pgd.solve`. ``"lp"``: ``time_limit`` (seconds or None).

    Returns
    -------
    ProjectionResult
        ``x`` and ``support`` have the shape of ``v``; ``x`` has ``v``'s dtype when it is a
        native integer, float32 or float64 dtype, the native one for another byte order, and
        float64 for other floats (float16, longdouble).

    Raises
    ------
    ValueError
        Unknown method or option, a ``structure`` that is not a :class:`TVCSStructure`, a
        ``v`` of the wrong shape, not real-valued (complex, bool, timedelta, ...) or not
        finite.

    References
    ----------
    Yang, Gui, Ke, Stefankovic, Fujimaki & Liu, "On the projection operator to a three-view
    cardinality constrained set", ICML 2017 (Lemma 1, Theorem 2; ``"pgd"`` is its §4.2).
    """
    if not isinstance(structure, TVCSStructure):
        raise ValueError(f"structure must be a TVCSStructure, got {type(structure).__name__}")
    solve = _kernel(method)
    _check_method_options(method, solve, options)
    # "exact" squares v on the fly and checks finiteness in its first pass (one pass over the
    # input and one weights array fewer: at 10M entries, 80 MB each).
    exact = method == "exact"
    arr = _check_values(v, structure.n_elements, structure.shape, finite=not exact)
    flat = arr.reshape(-1)
    start = time.perf_counter()
    if exact:
        out: MethodOutput = solve(_for_squares(flat), structure, warm_start=warm_start, **options)
    else:
        weights = np.square(_for_squares(flat), dtype=np.float64)
        out = solve(weights, structure, warm_start=warm_start, **options)
    seconds = time.perf_counter() - start
    x = np.empty_like(flat)
    objective = _restrict(flat, out.support, x)
    return ProjectionResult(
        x=x.reshape(arr.shape),
        support=out.support.reshape(arr.shape),
        objective=objective,
        method=method,
        optimal=out.optimal,
        iterations=out.iterations,
        converged=out.converged,
        message=out.message,
        seconds=seconds,
        warm_start=out.warm_start,
        details=out.details,
    )


def project_matrix(
    V, *, max_per_row, max_per_col, total=None, method: str = "exact", warm_start=None, **options
) -> ProjectionResult:
    """Project a matrix onto row, column and total cardinality caps.

    Parameters
    ----------
    V : array-like of float, shape (n_rows, n_cols)
    max_per_row : int or array-like of int, shape (n_rows,)
        At most this many entries kept in each row (view 1).
    max_per_col : int or array-like of int, shape (n_cols,)
        At most this many entries kept in each column (view 2).
    total : int or None
        At most this many entries kept in all (view 0); ``None`` means no total cap.
    method, warm_start, **options
        As for :func:`project`.

    Returns
    -------
    ProjectionResult
        ``x`` and ``support`` have shape (n_rows, n_cols).

    Raises
    ------
    ValueError
        ``V`` not 2-D, or whatever :meth:`TVCSStructure.from_matrix` (naming ``max_per_row``,
        ``max_per_col`` or ``total``) or :func:`project` refuses. A cap above its row's or
        column's size binds nothing: huge caps (``2**63``, ``1e30``) mean "no cap".

    References
    ----------
    Yang, Gui, Ke, Stefankovic, Fujimaki & Liu, "On the projection operator to a three-view
    cardinality constrained set", ICML 2017: rows and columns are its views 1 and 2.
    """
    arr = np.asarray(V)
    if arr.ndim != 2:
        raise ValueError(f"V must be a 2-D matrix, got shape {arr.shape}")
    structure = TVCSStructure.from_matrix(
        arr.shape, max_per_row=max_per_row, max_per_col=max_per_col, total=total
    )
    return project(arr, structure, method=method, warm_start=warm_start, **options)
