"""Expected accuracy of the Bayes vote on binary labels (docs/design.md#two-labels).

The workers on task ``j`` (``X[i, j]`` true) answer independently given the true label ``y_j``
(prior ``pi_j = P(y_j = 1)``), worker ``i`` correctly with probability ``Q[i, j]``, and the
vote predicts 1 iff ::

    s_j = sum_{i: X[i, j]} (2 a_i - 1) w_ij  >=  r_j - tol_j,
    w_ij = log(Q_ij / (1 - Q_ij)),   r_j = log((1 - pi_j) / pi_j),
    tol_j = TIE_RTOL * (1 + |r_j| + sum_{i: X[i, j]} |w_ij|),

with ``Q`` clipped to ``[EPS, 1 - EPS]`` (``Q < 0.5`` is legal: a negative weight). A task's
accuracy is ``A_j = pi_j P(predict 1 | y_j = 1) + (1 - pi_j) P(predict 0 | y_j = 0)``, and the
objective is ``mean_j A_j``; :func:`assignment.engine.aggregate.aggregate` labels by the same
rule. :func:`task_accuracy` is exact up to ``MAX_EXACT_WORKERS`` workers a task (enumeration,
then meet in the middle); :func:`estimate_accuracy` is the Monte Carlo estimate for any number.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from assignment.engine.problem import QualityByCategory

__all__ = [
    "EPS",
    "MAX_EXACT_WORKERS",
    "TIE_RTOL",
    "AccuracyEstimate",
    "column_accuracy",
    "estimate_accuracy",
    "expected_accuracy",
    "removal_losses",
    "task_accuracy",
    "task_accuracy_pairs",
]

#: Qualities are clipped to ``[EPS, 1 - EPS]`` before taking log-odds.
EPS = 1e-6
#: Relative tolerance of the tie rule: ``|s - r| <= TIE_RTOL * (1 + |r| + sum |w|)`` predicts 1.
TIE_RTOL = 1e-9
#: Largest number of workers on one task that the exact computation accepts.
MAX_EXACT_WORKERS = 20

# Tasks with at most this many workers are enumerated outright; above it, meet in the middle.
_ENUMERATE_MAX = 12
# Elements of one working array of the exact kernels (float64): 2**16 = 512 KiB, cache-sized.
_CHUNK_ELEMENTS = 1 << 16
# (sample, assigned pair) draws per Monte Carlo chunk: 2**18 float64 = 2 MiB per array.
_MC_CHUNK_ELEMENTS = 1 << 18


@dataclass(frozen=True)
class AccuracyEstimate:
    """Monte Carlo estimate of the mean expected accuracy over tasks.

    Attributes
    ----------
    mean : float
        The estimate of ``mean_j A_j``.
    standard_error : float
        Standard error of ``mean``: the sample standard deviation (``ddof=1``) of the
        per-sample mean accuracies over tasks, divided by ``sqrt(n_samples)``.
    n_samples : int
        Number of independent samples (each one draws every task's answers once).
    """

    mean: float
    standard_error: float
    n_samples: int


# --------------------------------------------------------------------------- validation


def _validate_quality(quality, name: str = "quality") -> np.ndarray | QualityByCategory:
    """Return ``quality`` as a float64 2-D array in ``[0, 1]`` (a copy if it had to convert),
    or as it is if it is a :class:`~assignment.engine.problem.QualityByCategory` (validated
    when it was made)."""
    if isinstance(quality, QualityByCategory):
        return quality
    try:
        q = np.asarray(quality, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 2-D array of numbers in [0, 1]") from exc
    if q.ndim != 2:
        raise ValueError(f"{name} must be 2-D (workers x tasks), got {q.ndim} dimension(s)")
    bad = ~np.isfinite(q)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} must be finite, got {q[i, j]} at (worker {i}, task {j})")
    bad = (q < 0.0) | (q > 1.0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} must be in [0, 1], got {q[i, j]} at (worker {i}, task {j})")
    return q


def _validate_assignment(assignment, shape: tuple[int, int]) -> np.ndarray:
    """Return ``assignment`` as a bool array of ``shape``; it must hold only 0/1 (or bools)."""
    x = np.asarray(assignment)
    if x.shape != shape:
        raise ValueError(f"assignment must have the shape of quality {shape}, got {x.shape}")
    if x.dtype == np.bool_:
        return x
    if not (np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)):
        raise ValueError(f"assignment must be bool or 0/1 numbers, got dtype {x.dtype}")
    bad = (x != 0) & (x != 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"assignment must hold only 0 and 1, got {x[i, j]} at (worker {i}, task {j})"
        )
    return x == 1


def _validate_prior(prior, m: int, name: str = "prior") -> np.ndarray:
    """Return ``prior`` as a float64 array of length ``m`` in the open interval ``(0, 1)``."""
    try:
        p = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number or an array of numbers in (0, 1)") from exc
    if p.ndim == 0:
        if not (np.isfinite(p) and 0.0 < p < 1.0):
            raise ValueError(f"{name} must be finite and in (0, 1), got {float(p)}")
        return np.full(m, float(p))
    if p.ndim != 1 or p.shape[0] != m:
        raise ValueError(
            f"{name} must be a scalar or have length {m} (one per task), got shape {p.shape}"
        )
    bad = ~(np.isfinite(p) & (p > 0.0) & (p < 1.0))
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite and in (0, 1), got {p[j]} at task {j}")
    return p


def _validate_tasks(tasks, m: int) -> np.ndarray:
    """``tasks`` as distinct ascending task indices in ``[0, m)``, shape (k,); all ``m`` if
    ``tasks`` is None."""
    if tasks is None:
        return np.arange(m)
    cols = np.unique(np.asarray(tasks, dtype=np.intp))
    if cols.size and (cols[0] < 0 or cols[-1] >= m):
        raise ValueError(f"tasks must be indices in [0, {m}), got {cols[[0, -1]]}")
    return cols


def _validate_problem(quality, assignment, prior):
    q = _validate_quality(quality)
    if q.shape[1] == 0:
        raise ValueError("quality must have at least one task (column)")
    x = _validate_assignment(assignment, q.shape)
    p = _validate_prior(prior, q.shape[1])
    return q, x, p


# --------------------------------------------------------------------------- decision rule


def _clip(q: np.ndarray) -> np.ndarray:
    return np.clip(q, EPS, 1.0 - EPS)


def _log_odds(q_clipped: np.ndarray) -> np.ndarray:
    """``log(q / (1 - q))`` of already clipped qualities."""
    return np.log(q_clipped) - np.log1p(-q_clipped)


def _prior_threshold(prior: np.ndarray) -> np.ndarray:
    """``r = log((1 - pi) / pi)``, the vote sum needed to predict 1."""
    return np.log1p(-prior) - np.log(prior)


def _tolerance(r: np.ndarray, abs_weight_sum: np.ndarray) -> np.ndarray:
    """The tie tolerance ``TIE_RTOL * (1 + |r| + sum |w|)``."""
    return TIE_RTOL * (1.0 + np.abs(r) + abs_weight_sum)


# --------------------------------------------------------------------------- exact kernels


def _enumerate(w: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ``2^k`` correctness patterns of each row: sums ``S(c)`` and probabilities ``p(c)``.

    Parameters
    ----------
    w, q : ndarray, shape (g, k)
        Log-odds and clipped qualities of the ``k`` workers of ``g`` tasks.

    Returns
    -------
    sums, probs : ndarray, shape (g, 2^k)
    """
    g, k = w.shape
    size = 1 << k
    sums = np.empty((g, size))
    probs = np.empty((g, size))
    sums[:, 0] = 0.0
    probs[:, 0] = 1.0
    half = 1
    for i in range(k):
        wi = w[:, i : i + 1]
        qi = q[:, i : i + 1]
        np.subtract(sums[:, :half], wi, out=sums[:, half : 2 * half])
        sums[:, :half] += wi
        np.multiply(probs[:, :half], 1.0 - qi, out=probs[:, half : 2 * half])
        probs[:, :half] *= qi
        half *= 2
    return sums, probs


def _accuracy_enumerate(w, q, prior, t_ge, t_gt):
    # numba, imported on first use: importing the engine costs no numba import (see solve.py)
    from assignment.engine._pattern_sums import tail_masses

    # Contiguous arguments: the kernel compiles (and caches) for one layout only.
    w, q, t_ge, t_gt = (np.ascontiguousarray(a, dtype=np.float64) for a in (w, q, t_ge, t_gt))
    p_ge, p_gt = tail_masses(w, q, t_ge, t_gt)
    return prior * p_ge + (1.0 - prior) * p_gt


def _tail_probability(q_sorted, p_a_sorted, s_b_sorted, cum_b, strict: bool):
    """``sum_x p_a[x] * P_B(S_B >= q[x])`` (or ``> q[x]`` if ``strict``) for every row.

    ``q_sorted`` and ``s_b_sorted`` are ascending per row; ``cum_b[:, c]`` is the probability
    of the ``c`` smallest second-half sums. A stable sort of the two concatenated runs merges
    them: putting the queries first makes equal second-half sums count as ``>=``; putting them
    last makes them count as not ``>``.
    """
    g, na = q_sorted.shape
    nb = s_b_sorted.shape[1]
    if strict:
        order = np.argsort(np.concatenate([s_b_sorted, q_sorted], axis=1), axis=1, kind="stable")
        query = order - nb  # index of the query at each merged position, < 0 for S_B
    else:
        order = np.argsort(np.concatenate([q_sorted, s_b_sorted], axis=1), axis=1, kind="stable")
        query = np.where(order < na, order, -1)
    is_query = query >= 0
    # Number of second-half sums before each query in merged order, and which query it is.
    n_before = np.cumsum(~is_query, axis=1)[is_query].reshape(g, na)
    p_query = np.take_along_axis(p_a_sorted, query[is_query].reshape(g, na), axis=1)
    below = np.take_along_axis(cum_b, n_before, axis=1)
    return (p_query * (cum_b[:, -1:] - below)).sum(axis=1)


def _accuracy_meet_in_the_middle(w, q, prior, t_ge, t_gt):
    a = w.shape[1] // 2
    s_a, p_a = _enumerate(w[:, :a], q[:, :a])
    s_b, p_b = _enumerate(w[:, a:], q[:, a:])
    order_b = np.argsort(s_b, axis=1)
    s_b = np.take_along_axis(s_b, order_b, axis=1)
    cum_b = np.zeros((s_b.shape[0], s_b.shape[1] + 1))
    np.cumsum(np.take_along_axis(p_b, order_b, axis=1), axis=1, out=cum_b[:, 1:])
    order_a = np.argsort(s_a, axis=1)[:, ::-1]  # descending u, so t - u is ascending
    s_a = np.take_along_axis(s_a, order_a, axis=1)
    p_a = np.take_along_axis(p_a, order_a, axis=1)
    p_ge = _tail_probability(t_ge[:, None] - s_a, p_a, s_b, cum_b, strict=False)
    p_gt = _tail_probability(t_gt[:, None] - s_a, p_a, s_b, cum_b, strict=True)
    return prior * p_ge + (1.0 - prior) * p_gt


def _accuracy_rows(w: np.ndarray, q: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Exact accuracies of ``g`` tasks that each have the same number ``k`` of workers.

    ``w``, ``q``: shape (g, k); ``prior``: shape (g,). Returns shape (g,).
    """
    g, k = w.shape
    r = _prior_threshold(prior)
    tol = _tolerance(r, np.abs(w).sum(axis=1))
    t_ge = r - tol  # y = 1: predict 1 iff S >= r - tol
    t_gt = tol - r  # y = 0: predict 0 iff -S < r - tol, i.e. S > tol - r
    if k <= _ENUMERATE_MAX:
        kernel, width = _accuracy_enumerate, 1 << k
    else:
        kernel, width = _accuracy_meet_in_the_middle, 4 << (k - k // 2)
    rows = max(1, _CHUNK_ELEMENTS // width)
    out = np.empty(g)
    for start in range(0, g, rows):
        sl = slice(start, start + rows)
        out[sl] = kernel(w[sl], q[sl], prior[sl], t_ge[sl], t_gt[sl])
    return out


def _gather(q: np.ndarray | QualityByCategory, workers: np.ndarray, tasks: np.ndarray):
    """``Q[workers, tasks]`` of a dense matrix or a table by category."""
    if isinstance(q, QualityByCategory):
        return q.table[workers, q.task_category[tasks]]
    return q[workers, tasks]


def _task_accuracy(q, x: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Per-task exact accuracy of validated inputs."""
    workers, tasks = np.nonzero(x.T)[::-1]  # sorted by task, then worker
    return _task_accuracy_sorted(q, workers, tasks, prior)


def _task_accuracy_sorted(q, workers: np.ndarray, tasks: np.ndarray, prior: np.ndarray):
    """Per-task exact accuracy of validated pairs ``(workers[e], tasks[e])``, sorted by task,
    then worker; ``prior`` has shape (n_tasks,). Memory ``O(pairs + n_tasks)``."""
    counts = np.bincount(tasks, minlength=q.shape[1])
    too_many = np.flatnonzero(counts > MAX_EXACT_WORKERS)
    if too_many.size:
        j = int(too_many[0])
        raise ValueError(
            f"task {j} has {int(counts[j])} assigned workers; the exact expected accuracy "
            f"handles at most MAX_EXACT_WORKERS = {MAX_EXACT_WORKERS} per task. "
            "Use estimate_accuracy (Monte Carlo) instead."
        )
    q_all = _clip(_gather(q, workers, tasks))
    w_all = _log_odds(q_all)
    starts = np.zeros(q.shape[1] + 1, dtype=np.intp)
    np.cumsum(counts, out=starts[1:])
    out = np.empty(q.shape[1])
    for k in np.unique(counts):
        cols = np.flatnonzero(counts == k)
        idx = starts[cols][:, None] + np.arange(k)
        out[cols] = _accuracy_rows(w_all[idx], q_all[idx], prior[cols])
    return out


def _removal_losses(q, x: np.ndarray, prior: np.ndarray, tasks: np.ndarray):
    """Leave-one-out losses of validated inputs on the given ``tasks`` (ascending, distinct).

    Returns ``(workers, cols, loss)``: one entry per assigned pair ``(workers[e], cols[e])``
    with ``cols`` a subset of ``tasks``, and ``loss[e] = A_j - A_j(without worker i)``. Raises
    if one of ``tasks`` has more than ``MAX_EXACT_WORKERS`` workers.
    """
    sub = x[:, tasks]
    counts = sub.sum(axis=0)
    too_many = np.flatnonzero(counts > MAX_EXACT_WORKERS)
    if too_many.size:
        j = int(tasks[too_many[0]])
        raise ValueError(
            f"task {j} has more than MAX_EXACT_WORKERS = {MAX_EXACT_WORKERS} assigned workers"
        )
    workers, pos = np.nonzero(sub.T)[::-1]  # sorted by task position, then worker
    cols = tasks[pos]
    q_all = _clip(_gather(q, workers, cols))
    w_all = _log_odds(q_all)
    starts = np.zeros(tasks.shape[0] + 1, dtype=np.intp)
    np.cumsum(counts, out=starts[1:])
    loss = np.empty(workers.shape[0])
    for k in np.unique(counts[counts > 0]).tolist():
        group = np.flatnonzero(counts == k)
        idx = starts[group][:, None] + np.arange(k)
        p = prior[tasks[group]]
        full = _accuracy_rows(w_all[idx], q_all[idx], p)
        # Every task's k leave-one-out rows in one call: row (g, x) lacks the x-th worker.
        kept = np.arange(k - 1)[None, :]
        rest = idx[:, kept + (kept >= np.arange(k)[:, None])].reshape(group.size * k, k - 1)
        without = _accuracy_rows(w_all[rest], q_all[rest], np.repeat(p, k))
        loss[idx] = full[:, None] - without.reshape(-1, k)
    return workers, cols, loss


# --------------------------------------------------------------------------- public API


def task_accuracy(quality, assignment, *, prior=0.5) -> np.ndarray:
    """Exact expected accuracy of the Bayes vote on every task.

    Parameters
    ----------
    quality : array_like, shape (n_workers, n_tasks), or QualityByCategory
        ``Q[i, j]``, the probability that worker ``i`` labels task ``j`` correctly; finite and
        in ``[0, 1]``; a :class:`~assignment.engine.problem.QualityByCategory` is read pair by
        pair, never made dense. Values are clipped to ``[EPS, 1 - EPS]`` (``EPS = 1e-6``)
        internally.
    assignment : array_like of bool or 0/1, shape (n_workers, n_tasks)
        ``X[i, j]`` true when worker ``i`` labels task ``j``. At most
        ``MAX_EXACT_WORKERS = 20`` workers per task.
    prior : float or array_like, shape (n_tasks,)
        ``pi_j = P(y_j = 1)``, finite and in the open interval ``(0, 1)``.

    Returns
    -------
    ndarray, shape (n_tasks,)
        ``A_j = pi_j P(predict 1 | y_j = 1) + (1 - pi_j) P(predict 0 | y_j = 0)`` where the
        prediction is the Bayes vote ``sum_i (2 a_i - 1) log(Q_ij / (1 - Q_ij)) >=
        log((1 - pi_j) / pi_j)`` with the tie tolerance
        ``1e-9 * (1 + |log((1 - pi_j) / pi_j)| + sum_i |log(Q_ij / (1 - Q_ij))|)``
        (within it, predict 1). A task with no workers gets ``max(pi_j, 1 - pi_j)``.

    Raises
    ------
    ValueError
        On invalid inputs (naming the argument), or when a task has more than
        ``MAX_EXACT_WORKERS`` workers (naming the task and the count; use
        :func:`estimate_accuracy`).

    Notes
    -----
    Tasks are grouped by their number of workers ``k``; groups with ``k <= 12`` enumerate all
    ``2^k`` answer patterns (a numba kernel, task by task), larger ``k`` meet in the middle in
    ``O(2^(k/2) k)`` per task. 10,000 tasks with 10 workers each take a fraction of a second.
    """
    q, x, p = _validate_problem(quality, assignment, prior)
    return _task_accuracy(q, x, p)


def _validate_pairs(workers, tasks, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Pairs as int64 arrays sorted by task, then worker; checked in range and distinct."""
    w = np.asarray(workers)
    t = np.asarray(tasks)
    if w.ndim != 1 or w.shape != t.shape:
        raise ValueError(f"workers and tasks must be 1-D of one length, got {w.shape}, {t.shape}")
    if w.size and not (np.issubdtype(w.dtype, np.integer) and np.issubdtype(t.dtype, np.integer)):
        raise ValueError(f"workers and tasks must be integers, got {w.dtype}, {t.dtype}")
    w, t = w.astype(np.int64), t.astype(np.int64)
    for name, v, size in (("workers", w, shape[0]), ("tasks", t, shape[1])):
        bad = np.flatnonzero((v < 0) | (v >= size))
        if bad.size:
            raise ValueError(f"{name} must be in [0, {size}), got {v[bad[0]]} at pair {bad[0]}")
    w, t = _sorted_pairs(w, t)
    same = np.flatnonzero((w[1:] == w[:-1]) & (t[1:] == t[:-1]))
    if same.size:
        e = int(same[0])
        raise ValueError(f"pair (worker {w[e]}, task {t[e]}) is given twice")
    return w, t


def _sorted_pairs(workers: np.ndarray, tasks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(workers[e], tasks[e])``, shape (pairs,) each, as int64 sorted by task, then
    worker: the order :func:`_task_accuracy_sorted` takes."""
    w, t = np.asarray(workers, dtype=np.int64), np.asarray(tasks, dtype=np.int64)
    order = np.lexsort((w, t))
    return w[order], t[order]


def task_accuracy_pairs(quality, workers, tasks, *, prior=0.5) -> np.ndarray:
    """:func:`task_accuracy` of the assignment given as pairs, without the dense matrix.

    Parameters
    ----------
    quality : array_like, shape (n_workers, n_tasks), or QualityByCategory
        As in :func:`task_accuracy`.
    workers, tasks : array_like of int, shape (pairs,)
        Pair ``e`` puts worker ``workers[e]`` on task ``tasks[e]``; distinct pairs, in any
        order; at most ``MAX_EXACT_WORKERS`` per task.
    prior : float or array_like, shape (n_tasks,)

    Returns
    -------
    ndarray, shape (n_tasks,)
        Exactly :func:`task_accuracy` of the matching bool matrix (the same operations in the
        same order), in memory ``O(pairs + n_tasks)`` besides ``quality``.

    Raises
    ------
    ValueError
        As :func:`task_accuracy`; and for pairs out of range or given twice.
    """
    q = _validate_quality(quality)
    if q.shape[1] == 0:
        raise ValueError("quality must have at least one task (column)")
    w, t = _validate_pairs(workers, tasks, q.shape)
    return _task_accuracy_sorted(q, w, t, _validate_prior(prior, q.shape[1]))


def expected_accuracy(quality, assignment, *, prior=0.5) -> float:
    """Exact mean over tasks of the Bayes vote's expected accuracy.

    Parameters
    ----------
    quality : array_like, shape (n_workers, n_tasks), or QualityByCategory
        ``Q[i, j]`` in ``[0, 1]``, clipped to ``[EPS, 1 - EPS]`` (``EPS = 1e-6``) internally.
    assignment : array_like of bool or 0/1, shape (n_workers, n_tasks)
        The workers of each task; at most ``MAX_EXACT_WORKERS = 20`` per task.
    prior : float or array_like, shape (n_tasks,)
        ``P(y_j = 1)`` in ``(0, 1)``.

    Returns
    -------
    float
        ``(1 / n_tasks) sum_j A_j`` with ``A_j`` as in :func:`task_accuracy`.

    Raises
    ------
    ValueError
        On invalid inputs, or when a task has more than ``MAX_EXACT_WORKERS`` workers (the
        message names the task and its count and points to :func:`estimate_accuracy`).
    """
    return float(task_accuracy(quality, assignment, prior=prior).mean())


def removal_losses(quality, assignment, *, prior=0.5, tasks=None):
    """Exact accuracy each assigned worker contributes to its task (leave-one-out).

    Parameters
    ----------
    quality, assignment, prior
        As in :func:`task_accuracy`.
    tasks : array_like of int, optional
        Restrict the computation to these task indices (default: all tasks).

    Returns
    -------
    workers, tasks : ndarray of intp, shape (n_assigned,)
        The assigned pairs ``(i, j)`` of the (selected) tasks, sorted by task, then worker.
    loss : ndarray of float, shape (n_assigned,)
        ``A_j - A_j'`` where ``A_j'`` is the exact accuracy of task ``j`` without worker ``i``
        (:func:`task_accuracy`). It can be 0 (under prior 0.5 the less reliable of two workers
        adds nothing) or negative (removing a worker whose vote misleads, e.g. ``Q = 0.5``
        with a tie rule that then goes the wrong way, can help).

    Notes
    -----
    Tasks are grouped by their number of workers ``k`` and every group is evaluated ``k + 1``
    times (with all workers, and with each one left out) by the vectorised kernels of
    :func:`task_accuracy`: ``O(k 2^k)`` per task for ``k <= 12``.
    """
    q, x, p = _validate_problem(quality, assignment, prior)
    return _removal_losses(q, x, p, _validate_tasks(tasks, q.shape[1]))


@functools.cache
def _pattern_matrix(k: int) -> np.ndarray:
    """Shape (2^k, k): row ``c`` holds the bits of ``c`` (1 = that worker answers correctly)."""
    bits = (np.arange(1 << k)[:, None] >> np.arange(k)) & 1
    out = bits.astype(np.float64)
    out.flags.writeable = False
    return out


def column_accuracy(q_col_assigned, prior_j: float) -> float:
    """Exact expected accuracy of one task from the qualities of its assigned workers.

    A low-overhead entry point for callers that evaluate one task many times (the greedy
    method).

    Parameters
    ----------
    q_col_assigned : array_like, shape (k,)
        Qualities in ``[0, 1]`` of the task's ``k <= MAX_EXACT_WORKERS`` assigned workers
        (clipped to ``[EPS, 1 - EPS]``, ``EPS = 1e-6``). ``k = 0`` is allowed.
    prior_j : float
        ``P(y = 1)`` in ``(0, 1)``.

    Returns
    -------
    float
        The task's expected accuracy under the Bayes vote and tie rule of :func:`task_accuracy`.

    Notes
    -----
    For ``k <= 12``, with the cached pattern matrix ``C`` (shape ``(2^k, k)``) and
    ``u = C w``: ``S(c) = 2 u_c - sum(w)`` and ``log p(c) = u_c + sum(log(1 - Q))``, so one
    matrix-vector product gives every pattern. Larger ``k`` meet in the middle.
    """
    q = np.asarray(q_col_assigned, dtype=np.float64)
    if q.ndim != 1:
        raise ValueError(f"q_col_assigned must be 1-D, got {q.ndim} dimension(s)")
    k = q.shape[0]
    if k > MAX_EXACT_WORKERS:
        raise ValueError(
            f"q_col_assigned has {k} workers; the exact expected accuracy handles at most "
            f"MAX_EXACT_WORKERS = {MAX_EXACT_WORKERS}. Use estimate_accuracy instead."
        )
    ok = (q >= 0.0) & (q <= 1.0)  # False for NaN
    if not ok.all():
        bad = int(np.flatnonzero(~ok)[0])
        raise ValueError(f"q_col_assigned must be finite and in [0, 1], got {q[bad]} at {bad}")
    if np.ndim(prior_j) != 0:
        raise ValueError(f"prior_j must be a scalar, got shape {np.shape(prior_j)}")
    pi = float(prior_j)
    if not (0.0 < pi < 1.0):  # False for NaN
        raise ValueError(f"prior_j must be finite and in (0, 1), got {pi}")
    qc = np.clip(q, EPS, 1.0 - EPS)
    if k > _ENUMERATE_MAX:
        return float(_accuracy_rows(_log_odds(qc)[None, :], qc[None, :], np.array([pi]))[0])
    log_fail = np.log1p(-qc)
    w = np.log(qc) - log_fail
    u = _pattern_matrix(k) @ w
    sums = 2.0 * u - w.sum()
    probs = np.exp(u + log_fail.sum())
    r = math.log1p(-pi) - math.log(pi)
    tol = TIE_RTOL * (1.0 + abs(r) + float(np.abs(w).sum()))
    return float(pi * probs[sums >= r - tol].sum() + (1.0 - pi) * probs[sums > tol - r].sum())


def estimate_accuracy(
    quality, assignment, *, prior=0.5, n_samples: int = 10_000, seed=None
) -> AccuracyEstimate:
    """Monte Carlo estimate of the mean expected accuracy, for any number of workers per task.

    Each sample draws, for every task, whether each assigned worker answers correctly
    (``Bernoulli(Q_ij)``, ``Q`` clipped to ``[EPS, 1 - EPS]``, ``EPS = 1e-6``), giving the
    correctness pattern ``c`` and ``S(c) = sum_i (2 c_i - 1) w_ij``. The true label is
    integrated out exactly rather than sampled (a Rao-Blackwellisation: the same expectation,
    smaller variance): the vote sum is ``S(c)`` if ``y = 1`` and ``-S(c)`` if ``y = 0``, so the
    sample's accuracy on task ``j`` is ::

        pi_j [S(c) >= r_j - tol_j] + (1 - pi_j) [S(c) > tol_j - r_j]

    with the decision rule and tie tolerance of :func:`task_accuracy`. Its expectation over
    ``c`` is ``A_j`` exactly.

    Parameters
    ----------
    quality, assignment, prior
        As in :func:`expected_accuracy`, without the limit on workers per task.
    n_samples : int
        Number of independent samples, at least 2.
    seed : None, int, or numpy.random.Generator
        Passed to :func:`numpy.random.default_rng`.

    Returns
    -------
    AccuracyEstimate
        ``mean`` is the average over samples of the sample's mean accuracy over tasks;
        ``standard_error`` is the sample standard deviation (``ddof=1``) of those per-sample
        means divided by ``sqrt(n_samples)``. The samples are independent, so this is the
        standard error of ``mean`` (correlations between tasks are accounted for, as they live
        inside one sample's mean).

    Notes
    -----
    Memory is bounded: samples are drawn in chunks of about ``2^18`` (sample, assigned pair)
    draws (one sample at a time if a single sample has more pairs than that).
    """
    q, x, p = _validate_problem(quality, assignment, prior)
    if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer):
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    if n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples}")
    return _estimate_accuracy(q, x, p, int(n_samples), np.random.default_rng(seed))


def _estimate_accuracy(q, x: np.ndarray, p: np.ndarray, n_samples: int, rng) -> AccuracyEstimate:
    """:func:`estimate_accuracy` of validated inputs: ``q`` (n, m) or a
    :class:`~assignment.engine.problem.QualityByCategory` with ``m >= 1``, ``x`` bool (n, m),
    ``p`` the prior, shape (m,), ``n_samples >= 2`` and ``rng`` a ``numpy.random.Generator``."""
    m = q.shape[1]
    counts = x.sum(axis=0)
    workers, tasks = np.nonzero(x.T)[::-1]  # sorted by task
    q_all = _clip(_gather(q, workers, tasks))
    w_all = _log_odds(q_all)
    r = _prior_threshold(p)
    tol = _tolerance(r, np.bincount(tasks, weights=np.abs(w_all), minlength=m))
    t_ge, t_gt = r - tol, tol - r

    busy = np.flatnonzero(counts > 0)
    idle = np.flatnonzero(counts == 0)
    # Tasks without workers: S = 0 deterministically.
    idle_total = float((p[idle] * (0.0 >= t_ge[idle]) + (1.0 - p[idle]) * (0.0 > t_gt[idle])).sum())
    starts = np.zeros(m + 1, dtype=np.intp)
    np.cumsum(counts, out=starts[1:])
    seg = starts[busy]
    nnz = w_all.shape[0]
    pb, tb_ge, tb_gt = p[busy], t_ge[busy], t_gt[busy]

    per_sample = np.empty(n_samples)
    chunk = max(1, _MC_CHUNK_ELEMENTS // max(nnz, 1))
    for start in range(0, n_samples, chunk):
        s = min(chunk, n_samples - start)
        if nnz:
            correct = rng.random((s, nnz)) < q_all
            contrib = np.where(correct, w_all, -w_all)
            sums = np.add.reduceat(contrib, seg, axis=1)
            acc = pb * (sums >= tb_ge) + (1.0 - pb) * (sums > tb_gt)
            per_sample[start : start + s] = (acc.sum(axis=1) + idle_total) / m
        else:
            per_sample[start : start + s] = idle_total / m
    mean = float(per_sample.mean())
    se = float(per_sample.std(ddof=1) / np.sqrt(n_samples))
    return AccuracyEstimate(mean=mean, standard_error=se, n_samples=n_samples)
