"""Exclusive LASSO: the convex relaxation of per-group cardinality caps, and its solver.

The exclusive LASSO penalty over a family of groups ``G`` (Zhou, Jin & Hoi, AISTATS 2010; Kong
et al., NIPS 2014, the baseline of Yang et al., ICML 2017, section 5.1) is

    Omega(w) = (1/2) * sum_{g in G} ||w_g||_1^2,

an l_{1,2} norm squared: l1 inside a group (few entries per group), l2 across groups (every
group keeps some). Kong et al. define it for arbitrary, possibly overlapping, groups, without
the 1/2: their ``lambda`` is our ``lam / 2``.

The groups are given as *views*: each view is one integer label per coefficient, a partition
into disjoint groups (``-1`` = in no group of this view). One view is the disjoint case of
Zhou et al.; two views, the rows and the columns of a matrix, are the two-view structure of
Yang et al.'s section 5.1, where every entry lies in one row group and one column group;
:func:`views_from_groups` splits any list of overlapping groups into views. The penalty of
several views is the sum of theirs.

* :func:`prox_exclusive_lasso` is the proximal operator of one view, in closed form.
* :func:`prox_exclusive_lasso_overlapping` is the proximal operator of several views, which has
  no closed form: block coordinate ascent on its dual (the Dykstra-like algorithm), one
  closed-form prox per view and sweep, stopped on a duality-gap certificate.
* :func:`exclusive_lasso` minimises ``f(w) + lam * Omega(w)`` by accelerated proximal gradient
  (FISTA, Beck & Teboulle 2009) for any smooth loss of :mod:`projections.solvers.losses`, with
  either prox.

The maths: docs/design.md#exclusive-lasso.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from projections.groups import OverlappingGroups, _as_groups
from projections.solvers._common import (
    Deadline,
    Objective,
    check_callback,
    check_int,
    check_methods,
    check_nonneg_float,
    check_step,
    check_time_limit,
    initial_point,
    lipschitz_step,
    new_counters,
    small_change,
)
from projections.solvers._loop import Steps, run
from projections.solvers.result import SolverResult
from projections.structure import _dense_codes
from projections.tvcs import _as_real

__all__ = [
    "exclusive_lasso",
    "exclusive_lasso_penalty",
    "prox_exclusive_lasso",
    "prox_exclusive_lasso_overlapping",
    "views_from_groups",
]


#: The hint of every label error: a list of groups is not a label array.
_GROUPS_HINT = "(groups given as index lists go through views_from_groups(groups, p))"


def _check_labels(labels, shape: tuple[int, ...]) -> np.ndarray:
    """One view: integer labels of shape ``(p,)`` or ``shape``, ``-1`` = no group; returned
    flat, int64, renumbered ``0 .. n_groups - 1`` (ids such as ``10**12`` index nothing)."""
    arr = np.asarray(labels)
    p = math.prod(shape)
    if arr.shape not in ((p,), tuple(shape)) or arr.dtype.kind not in "iu":
        raise ValueError(
            f"labels must be integer group labels of shape ({p},) or {tuple(shape)}, one per "
            f"coefficient, got shape {arr.shape} and dtype {arr.dtype} {_GROUPS_HINT}"
        )
    arr = arr.reshape(-1).astype(np.int64)
    if np.any(arr < -1):
        raise ValueError(f"labels must be >= -1 (-1 = no group), got {int(arr.min())}")
    return _dense_codes(arr)


def _is_group_list(arg, shape: tuple[int, ...]) -> bool:
    """Whether ``arg`` is a list of groups (a Python sequence of index lists), not labels.

    A nested list of exactly the coefficients' shape (for a matrix ``w``) could be either: it
    is refused, with how to say which is meant.
    """
    if isinstance(arg, np.ndarray) or not isinstance(arg, list | tuple) or not arg:
        return False
    if not all(isinstance(g, list | tuple | range | np.ndarray) for g in arg):
        return False
    try:
        regular = np.shape(arg)
    except ValueError:  # ragged: groups of different sizes
        return True
    if len(shape) >= 2 and regular == tuple(shape):
        raise ValueError(
            f"a nested list of shape {regular}, the coefficients' shape, is ambiguous: pass "
            "labels as an ndarray, or groups as an OverlappingGroups (or "
            "views_from_groups(groups, p))"
        )
    return True


def _views_of(arg, shape: tuple[int, ...]) -> list[np.ndarray]:
    """The views one argument gives: an OverlappingGroups or a list of groups (split by
    :func:`views_from_groups`), or one label array."""
    p = math.prod(shape)
    if isinstance(arg, OverlappingGroups):
        if arg.n_features != p:
            raise ValueError(
                f"the groups act on {arg.n_features} coefficients, the weights have {p}"
            )
        return views_from_groups(arg)
    if _is_group_list(arg, shape):
        return views_from_groups(_as_groups(arg, p))
    return [_check_labels(arg, shape)]


def _check_views(labels, shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """The views of ``labels`` (label arrays, lists of groups or OverlappingGroups), checked,
    for coefficients of ``shape``."""
    if len(labels) == 0:
        raise ValueError("labels: give at least one view (an array of group labels) or groups")
    views = tuple(view for arg in labels for view in _views_of(arg, shape))
    # a view with no group adds nothing to the penalty; dropping it keeps one real view exact
    kept = tuple(lab for lab in views if np.any(lab >= 0))
    return kept or views[:1]


def views_from_groups(groups, n_features: int | None = None) -> list[np.ndarray]:
    """Split possibly overlapping groups into views of disjoint groups (first-fit colouring).

    Each group, in order, joins the first view in which none of its coordinates has a group
    yet (a new view if none). The rows and then the columns of a matrix give two views; groups
    that are already disjoint give one. The penalty is unchanged: it sums over all the groups.

    Parameters
    ----------
    groups : OverlappingGroups or sequence of array-like of int
        The groups, each a list of coordinates without repeats.
    n_features : int, optional
        ``p``; required unless ``groups`` is an :class:`~projections.groups.OverlappingGroups`.

    Returns
    -------
    list of ndarray of int64, each shape (p,)
        One label array per view: ``labels[i] = j`` when coordinate ``i`` is in the view's
        ``j``-th group, ``-1`` when it is in none of the view's groups.
    """
    if not isinstance(groups, OverlappingGroups):
        if n_features is None:
            raise ValueError("n_features is required unless groups is an OverlappingGroups")
        groups = _as_groups(groups, n_features)
    elif n_features is not None and n_features != groups.n_features:
        raise ValueError(f"n_features is {n_features} but the groups have {groups.n_features}")
    views: list[np.ndarray] = []
    counts: list[int] = []
    for members in groups.members:
        free = [k for k, view in enumerate(views) if np.all(view[members] < 0)]
        if free:
            k = free[0]
        else:
            views.append(np.full(groups.n_features, -1, dtype=np.int64))
            counts.append(0)
            k = len(views) - 1
        views[k][members] = counts[k]
        counts[k] += 1
    return views


def exclusive_lasso_penalty(w, *labels) -> float:
    """``Omega(w) = (1/2) sum_g ||w_g||_1^2`` over the groups of every view (``-1``: none).

    Parameters
    ----------
    w : array-like of float, any shape (p elements)
        Real coefficients (complex ones are refused).
    *labels : array-like of int, each shape (p,) or the shape of ``w``; or groups
        Each argument is one view of disjoint groups given as labels (an ndarray or a flat
        list, ``-1`` = no group), or groups given as an
        :class:`~projections.groups.OverlappingGroups` or as a list of index lists (e.g.
        ``[[0, 1], [1, 2]]``), which :func:`views_from_groups` splits into views. The
        penalty sums over all their groups.

    Returns
    -------
    float
        ``Omega(w) >= 0``.

    Raises
    ------
    ValueError
        A ``w`` that is not real; labels of another shape, not integers or below ``-1``;
        groups with an empty group or an index out of range; a nested list of exactly
        ``w``'s (matrix) shape, which could be labels or groups.
    """
    arr = _as_real(w, "w").astype(np.float64)
    flat = arr.reshape(-1)
    return sum(_view_penalty(flat, lab) for lab in _check_views(labels, arr.shape))


def _view_penalty(flat: np.ndarray, lab: np.ndarray) -> float:
    grouped = lab >= 0
    sums = np.bincount(lab[grouped], weights=np.abs(flat[grouped]))
    return 0.5 * float(np.dot(sums, sums))


def prox_exclusive_lasso(v, labels, lam: float) -> np.ndarray:
    """``argmin_x (1/2)||x - v||^2 + (lam/2) sum_g ||x_g||_1^2``, in closed form.

    Group by group the optimality condition is ``x_i = sign(v_i) max(|v_i| - tau_g, 0)`` with
    ``tau_g = lam ||x_g||_1``: a soft threshold whose level depends on the result. With the
    group's magnitudes sorted, ``u_1 >= u_2 >= ...``, and ``S_k = u_1 + ... + u_k``, the kept
    entries are the first ``k`` with ``u_k (1 + lam k) > lam S_k`` (a prefix, since
    ``u_k + lam (k u_k - S_k)`` never increases in ``k``) and ``tau_g = lam S_k / (1 + lam k)``.
    Cost: one sort, ``O(p log p)``.

    Parameters
    ----------
    v : array-like of float, any shape (p elements)
    labels : array-like of int, shape (p,) or the shape of ``v``
        Disjoint groups; ``-1`` = no group (returned unchanged). Any integers name the
        groups (ids such as ``10**12`` too). A list of (overlapping) groups is not labels:
        see :func:`prox_exclusive_lasso_overlapping` and :func:`views_from_groups`.
    lam : float
        Non-negative weight of the penalty.

    Returns
    -------
    ndarray of float, shape of ``v``
    """
    arr = _as_real(v).astype(np.float64)
    lam = check_nonneg_float(lam, "lam")
    if not np.all(np.isfinite(arr)):
        raise ValueError("v must be finite, got NaN or infinity")
    flat = arr.reshape(-1)
    lab = _check_labels(labels, arr.shape)
    return _prox_flat(flat, lab, lam).reshape(arr.shape)


def _prox_flat(flat: np.ndarray, lab: np.ndarray, lam: float) -> np.ndarray:
    """:func:`prox_exclusive_lasso` on checked input: ``flat`` (p,), ``lab`` (p,) int64."""
    mag = np.abs(flat)
    order = np.lexsort((-mag, lab))
    lab_s, u = lab[order], mag[order]
    start = np.searchsorted(lab_s, lab_s, side="left")
    rank = np.arange(1, flat.size + 1) - start  # 1-based rank inside the group
    cums = np.cumsum(u)
    before = np.where(start > 0, cums[start - 1], 0.0)
    partial = cums - before  # S_k for the element of rank k
    keep = u * (1.0 + lam * rank) > lam * partial
    n_groups = int(lab.max(initial=-1)) + 1
    grouped = lab_s >= 0
    k = np.bincount(lab_s[grouped & keep], minlength=n_groups)
    s = np.bincount(lab_s[grouped & keep], weights=u[grouped & keep], minlength=n_groups)
    tau = lam * s / (1.0 + lam * k)
    level = np.zeros(flat.size)
    level[lab >= 0] = tau[lab[lab >= 0]]
    return np.sign(flat) * np.maximum(mag - level, 0.0)


def prox_exclusive_lasso_overlapping(
    v,
    views,
    lam: float,
    *,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    full_output: bool = False,
):
    """``argmin_x (1/2)||x - v||^2 + lam * sum_k Omega_k(x)``, ``Omega_k`` the penalty of view k.

    With overlapping groups (several views) the prox has no closed form. Write
    ``h_k = lam * Omega_k``; the problem is strongly convex and its Fenchel dual is

        min_{u_1..u_m}  Phi(u) = (1/2) ||v - sum_k u_k||^2 + sum_k h_k^*(u_k),
        h_k^*(u) = sum_{g in view k} ||u_g||_inf^2 / (2 lam)   (u = 0 off the view's groups),

    with ``x = v - sum_k u_k`` at the optimum. Minimising ``Phi`` exactly over one block
    ``u_k`` at a time is a closed-form prox (Moreau): with ``z = v - sum_{j != k} u_j``,

        u_k <- z - prox_{h_k}(z),   and then   x = v - sum_j u_j = prox_{h_k}(z).

    For two views this is the Dykstra-like algorithm of Bauschke & Combettes (2008); the sweeps
    converge for any number of views and any starting ``u`` (block coordinate descent on a
    smooth plus block-separable convex function with bounded level sets, Tseng 2001). Each
    sweep costs one :func:`prox_exclusive_lasso` per view. Stopping rule: the duality gap

        gap = sum_k sum_{g in view k} [ lam/2 ||x_g||_1^2 + ||u_{k,g}||_inf^2 / (2 lam)
                                        - <x_g, u_{k,g}> ]  >= 0,

    a sum of Fenchel-Young gaps; since the primal is 1-strongly convex,
    ``||x - x*||^2 <= 2 gap``, and the loop stops when ``sqrt(2 gap) <= tol * ||v||``. The gap
    is computed to about ``eps`` times the size of its terms, so it cannot certify a distance
    much below ``1e-8 ||v||``; once it is down to that rounding level (``64 eps`` times the sum
    of the absolute values of its terms) the loop also stops when a sweep moves ``x`` by at
    most ``tol * ||v||`` (not a certificate, but the sweeps converge linearly in practice), or
    when a sweep changes nothing. Views without any group are dropped; with one view left the
    result is the closed form, exactly.

    Parameters
    ----------
    v : array-like of float, any shape (p elements)
    views : sequence of array-like of int, each shape (p,) or the shape of ``v``; or
        :class:`~projections.groups.OverlappingGroups`
        Each view partitions the coefficients into disjoint groups numbered from 0 (``-1`` = in
        none of the view's groups); a coefficient may be in one group of each view. For the
        rows and columns of a matrix: ``(structure.labels1, structure.labels2)``.
    lam : float
        Non-negative weight of the penalty.
    tol : float, default 1e-8
        Relative accuracy certified on exit: ``||x - x*|| <= tol * ||v||`` when converged.
    max_iter : int, default 10000
        Maximum number of sweeps; a ``RuntimeWarning`` is issued if they run out.
    full_output : bool, default False
        Also return a dict with ``gap``, ``sweeps``, ``converged`` and ``duals`` (the ``u_k``,
        each of shape (p,), one per view that has a group: views with none are dropped).

    Returns
    -------
    x : ndarray of float, shape of ``v``
    info : dict, only when ``full_output``

    References
    ----------
    Kong, Fujimaki, Liu, Nie & Ding, "Exclusive feature learning on arbitrary structures via
    l1,2-norm", NIPS 2014. Bauschke & Combettes, "A Dykstra-like algorithm for two monotone
    operators", Pacific J. Optim. 2008. Tseng, "Convergence of a block coordinate descent
    method for nondifferentiable minimization", JOTA 2001.
    """
    arr = _as_real(v).astype(np.float64)
    lam = check_nonneg_float(lam, "lam")
    tol = check_nonneg_float(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    if not np.all(np.isfinite(arr)):
        raise ValueError("v must be finite, got NaN or infinity")
    flat = arr.reshape(-1)
    if isinstance(views, OverlappingGroups):
        views = (views,)
    elif isinstance(views, np.ndarray) and views.ndim == 1:
        raise ValueError("views must be a sequence of label arrays, one per view, got one array")
    lab = _check_views(tuple(views), arr.shape)
    x, duals, gap, sweeps, converged = _prox_views(flat, lab, lam, None, tol, max_iter)
    if not converged:
        warnings.warn(
            f"prox_exclusive_lasso_overlapping: {max_iter} sweeps left a duality gap of "
            f"{gap:.3g}; raise max_iter or tol",
            RuntimeWarning,
            stacklevel=2,
        )
    x = x.reshape(arr.shape)
    if full_output:
        return x, {"gap": gap, "sweeps": sweeps, "converged": converged, "duals": duals}
    return x


def _duality_gap(x: np.ndarray, duals, views, lam: float) -> tuple[float, float]:
    """``sum_k h_k(x) + h_k^*(u_k) - <x, u_k>`` (see :func:`prox_exclusive_lasso_overlapping`)
    and the size of its terms, ``sum_k h_k(x) + h_k^*(u_k) + |<x, u_k>|``, which bounds the
    rounding error of the gap (about ``eps`` times it)."""
    gap = scale = 0.0
    ax = np.abs(x)
    for u, lab in zip(duals, views, strict=True):
        grouped = lab >= 0
        n_groups = int(lab.max(initial=-1)) + 1
        l1 = np.bincount(lab[grouped], weights=ax[grouped], minlength=n_groups)
        linf = np.zeros(n_groups)
        np.maximum.at(linf, lab[grouped], np.abs(u[grouped]))
        terms = 0.5 * lam * float(l1 @ l1) + float(linf @ linf) / (2.0 * lam)
        inner = float(x @ u)
        gap += terms - inner
        scale += terms + abs(inner)
    return max(gap, 0.0), scale


#: The gap is computed to about ``eps`` times the size of its terms; below this multiple of that
#: size it is rounding noise, and the prox is as accurate as float64 allows.
_ROUNDING = 64 * np.finfo(np.float64).eps


def _prox_views(flat, views, lam, duals, tol, max_iter):
    """Block coordinate ascent of :func:`prox_exclusive_lasso_overlapping` on checked input,
    from ``duals`` (the ``u_k``; zeros when None): ``(x, duals, gap, sweeps, converged)``."""
    m = len(views)
    if lam == 0.0:
        return flat.copy(), [np.zeros_like(flat) for _ in views], 0.0, 0, True
    if m == 1:
        x = _prox_flat(flat, views[0], lam)
        return x, [flat - x], 0.0, 1, True
    u = [np.zeros_like(flat) for _ in views] if duals is None else [d.copy() for d in duals]
    size = float(np.linalg.norm(flat))
    threshold = 0.5 * (tol * size) ** 2
    gap, x = np.inf, flat
    for sweep in range(1, max_iter + 1):
        changed, previous = False, x
        for k in range(m):
            z = flat - sum(u[j] for j in range(m) if j != k)
            x = _prox_flat(z, views[k], lam)
            new = z - x
            changed = changed or not np.array_equal(new, u[k])
            u[k] = new
        gap, scale = _duality_gap(x, u, views, lam)
        at_rounding = gap <= _ROUNDING * scale
        if (
            gap <= threshold
            or not changed
            or (at_rounding and np.linalg.norm(x - previous) <= tol * size)
        ):
            return x, u, gap, sweep, True
    return x, u, gap, max_iter, False


def exclusive_lasso(
    loss,
    *labels,
    lam: float,
    w0=None,
    step=None,
    max_iter: int = 1000,
    tol: float = 1e-7,
    prox_tol: float | None = None,
    prox_max_iter: int = 1000,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """Minimise ``F(w) = f(w) + lam * (1/2) sum_g ||w_g||_1^2`` by FISTA.

    Iteration (Beck & Teboulle 2009)::

        w_{t+1} = prox_{step lam}(y_t - step grad f(y_t))
        y_{t+1} = w_{t+1} + (t_k - 1) / t_{k+1} (w_{t+1} - w_t)

    restarted (``y = w``, momentum reset) whenever ``F`` increases (O'Donoghue & Candes 2015),
    so ``F(w_t)`` never increases. With one view of disjoint groups the prox is the closed form
    :func:`prox_exclusive_lasso`; with several (overlapping groups, e.g. the rows and the
    columns of a matrix, Kong et al. 2014) it is :func:`prox_exclusive_lasso_overlapping`,
    warm-started from the previous iteration's dual variables (FISTA with an inexact prox whose
    error is certified by its duality gap, ``<= prox_tol * ||v||``). A point ``w`` is optimal
    iff ``w = prox_{step lam}(w - step grad f(w))`` for any ``step > 0``, i.e. iff
    ``-grad f(w) in lam * dOmega(w)``: with ``r_g = ||w_g||_1``, for every coefficient ``i``,

        -grad_i f(w) = lam * sign(w_i) * sum_{g ∋ i} r_g            if w_i != 0,
        |grad_i f(w)| <= lam * sum_{g ∋ i} r_g                       if w_i == 0.

    Parameters
    ----------
    loss : Loss
        Smooth loss with ``value(w)`` and ``gradient(w)`` (e.g.
        :class:`~projections.solvers.LeastSquares`, :class:`~projections.solvers.SquaredHinge`).
    *labels : array-like of int, each shape (p,) or the loss's ``feature_shape``; or groups
        Each argument is one view of disjoint groups given as integer labels (an ndarray or
        a flat list; ``-1`` = in none of the view's groups), or groups, possibly
        overlapping, given as an :class:`~projections.groups.OverlappingGroups` or as a list
        of index lists (``[[0, 1], [1, 2]]``: the groups {0, 1} and {1, 2}), which
        :func:`views_from_groups` splits into views. For a matrix ``w``, row groups are
        ``np.repeat(np.arange(n_rows), n_cols)`` and column groups ``np.tile(np.arange(n_cols),
        n_rows)``; a :class:`~projections.TVCSStructure` ``s`` gives the paper's
        rows-and-columns penalty as ``exclusive_lasso(loss, s.labels1, s.labels2, lam=...)``
        and the rows-only one as ``exclusive_lasso(loss, s.labels1, lam=...)``. A nested
        list of exactly ``feature_shape`` (2-D and more) could be either and is refused.
    lam : float
        Non-negative weight of the penalty.
    w0 : array-like of float, optional
        Starting point; default zeros of ``loss.feature_shape``.
    step : float, optional
        Default ``1 / loss.lipschitz()`` (the loss must then have ``lipschitz``).
    max_iter : int, default 1000
    tol : float, default 1e-7
        Converged when ``||w_{t+1} - w_t|| <= tol * max(||w_{t+1}||, ||w_t||)``.
    prox_tol : float, optional
        Accuracy of the overlapping prox (several views only); default ``tol / 10``.
    prox_max_iter : int, default 1000
        Sweeps allowed to each overlapping prox.
    callback : callable, optional
        ``callback(iteration, w, F(w))``; returning True stops the run.
    time_limit : float, optional
        Stop (not converged) after this many seconds.

    Returns
    -------
    SolverResult
        ``history`` holds ``F(w_0), F(w_1), ...`` (penalty included); ``support`` is
        ``solution != 0``; ``n_projections`` is 0 (no projection is used). ``details`` has
        ``n_views``, and with several views ``prox_sweeps`` (their total) and
        ``prox_unconverged`` (prox calls that ran out of sweeps).
    """
    check_methods(loss, "loss", ("value", "gradient"))
    lam = check_nonneg_float(lam, "lam")
    step = check_step(step)
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    tol = check_nonneg_float(tol, "tol")
    prox_tol = tol / 10.0 if prox_tol is None else check_nonneg_float(prox_tol, "prox_tol")
    prox_max_iter = check_int(prox_max_iter, "prox_max_iter", minimum=1)
    callback = check_callback(callback)
    time_limit = check_time_limit(time_limit)
    w = initial_point(loss, w0)
    views = _check_views(labels, w.shape)
    if step is None:
        step = lipschitz_step(loss)
        if step is None:
            raise ValueError(f"step is required: {type(loss).__name__} has no lipschitz()")
    obj = Objective(loss, maximize=False, shape=w.shape)
    deadline = Deadline(time_limit)
    steps = _FistaSteps(obj, views, lam, w, step, tol, (prox_tol, prox_max_iter))
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)


class _FistaSteps(Steps):
    """FISTA with function-value restart, :func:`exclusive_lasso`'s side of the shared loop:
    the extrapolated point ``y``, the momentum ``t_k``, the value ``F`` of the iterate and,
    with several views, the overlapping prox's dual variables (its warm start)."""

    name = "exclusive_lasso"

    def __init__(self, obj: Objective, views, lam, w, step, tol, prox_options) -> None:
        self.obj, self.views, self.lam, self.step, self.tol = obj, views, lam, step, tol
        self.prox_tol, self.prox_max_iter = prox_options
        self.duals, self.prox_sweeps, self.prox_unconverged = None, 0, 0
        self.convergence = f"relative change <= tol={tol:g}"
        self.counters = new_counters()
        self.y, self.t_k, self.n_restarts = w.copy(), 1.0, 0
        self.F = self._total(w)

    def _total(self, x) -> float:
        flat = x.reshape(-1)
        return self.obj.f(x) + self.lam * sum(_view_penalty(flat, lab) for lab in self.views)

    def _prox_step(self, z):
        v = (z - self.step * self.obj.grad_phi(z)).reshape(-1)
        if len(self.views) == 1:
            return _prox_flat(v, self.views[0], self.step * self.lam).reshape(z.shape)
        x, self.duals, _gap, sweeps, converged = _prox_views(
            v, self.views, self.step * self.lam, self.duals, self.prox_tol, self.prox_max_iter
        )
        self.prox_sweeps += sweeps
        self.prox_unconverged += not converged
        return x.reshape(z.shape)

    def initial_value(self, w, support) -> float:
        return self.F

    def advance(self, it, w, support):
        x = self._prox_step(self.y)
        new = self._total(x)
        if new > self.F and not np.array_equal(self.y, w):  # momentum overshot: restart from w
            self.n_restarts += 1
            self.y, self.t_k = w.copy(), 1.0
            x = self._prox_step(w)
            new = self._total(x)
        t_next = (1.0 + math.sqrt(1.0 + 4.0 * self.t_k * self.t_k)) / 2.0
        self.y = x + ((self.t_k - 1.0) / t_next) * (x - w)
        self.converged = small_change(x, w, self.tol)
        self.F, self.t_k = new, t_next
        return x, x != 0

    def value(self, it, w, support) -> float:
        return self.F

    def describe(self) -> str:
        text = f"{self.n_restarts} momentum restarts"
        if len(self.views) > 1:
            text += f", {len(self.views)} views, {self.prox_sweeps} prox sweeps"
        return text

    def details(self) -> dict:
        out = {"n_views": len(self.views)}
        if len(self.views) > 1:
            out.update(prox_sweeps=self.prox_sweeps, prox_unconverged=self.prox_unconverged)
        return out

    def step_size(self) -> float:
        return self.step
