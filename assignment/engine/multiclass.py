"""The Bayes vote on labels with ``K >= 2`` classes and its exact expected accuracy (issue 13).

One-coin model: worker ``i`` answers task ``j`` correctly with probability ``Q[i, j]``, else one
of the ``K - 1`` wrong labels uniformly; task ``j``'s label has the prior distribution
``pi_j`` (shape ``(m, K)``, rows positive and summing to 1 within ``1e-6``). The vote predicts
``argmax_y score(y)``, ::

    score(y) = log pi(y) + sum_{i: a_i = y} w_i,     w_i = log(Q_i (K - 1) / (1 - Q_i)),

``Q`` clipped to ``[EPS, 1 - EPS]``, ties (within ``TIE_RTOL``) to the highest label, which for
``K = 2`` is the binary rule of :mod:`~assignment.engine.accuracy`. The exact accuracy sums over
the compositions of the answers of each group of equal workers, while there are at most
``MAX_EXACT_STATES`` of them (numba kernel: :mod:`assignment.engine._multiclass_kernels`);
:func:`estimate_accuracy_multiclass` is the Monte Carlo estimate beyond. Derivation and bounds:
docs/design.md#k-labels-one-coin.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from assignment.engine.accuracy import (
    EPS,
    TIE_RTOL,
    AccuracyEstimate,
    _clip,
    _gather,
    _validate_assignment,
    _validate_quality,
    _validate_tasks,
)

__all__ = [
    "EPS",
    "MAX_EXACT_STATES",
    "MAX_LABELS",
    "TIE_RTOL",
    "MulticlassAggregate",
    "aggregate_multiclass",
    "column_accuracy_multiclass",
    "estimate_accuracy_multiclass",
    "exact_state_counts",
    "expected_accuracy_multiclass",
    "removal_losses_multiclass",
    "set_accuracy_multiclass",
    "task_accuracy_multiclass",
]

#: Largest number of states (see the module docstring) of one task that the exact accuracy
#: accepts: ``K^k <= 2^20`` for ``k`` distinct qualities.
MAX_EXACT_STATES = 1 << 20

#: The most labels a project may have. The exact accuracy enumerates ``K^k`` answer states,
#: so above about 50 labels a task's exact limit is 3 workers of a million states each: on 30
#: workers x 100 tasks (caps 3 and 20, budget 200) greedy took 2.7 s at 50 labels and 43 s at
#: 100 (``solve`` on ``AssignmentProblem(rng.uniform(0.3, 0.9, (30, 100)),
#: max_workers_per_task=3, max_tasks_per_worker=20, budget=200, n_labels=K)``, seed 0), and
#: at 200 labels on 5 x 10 greedy and tvcs-iht stopped below random (a QA pass).
MAX_LABELS = 50

# Rows of a prior may be off 1 by this much (they are then divided by their sum).
_PRIOR_SUM_ATOL = 1e-6
# (sample, answer) draws, and (sample, task, label) votes, per Monte Carlo chunk.
_MC_CHUNK_ELEMENTS = 1 << 18


@dataclass(frozen=True, eq=False)
class MulticlassAggregate:
    """Labels and posteriors of every task under the K-class Bayes vote.

    Attributes
    ----------
    labels : ndarray of int64, shape (n_tasks,)
        The vote's label in ``[0, K)`` (ties to the highest tied label).
    posterior : ndarray of float64, shape (n_tasks, K)
        ``P(y_j = l | answers)``; each row sums to 1.
    """

    labels: np.ndarray
    posterior: np.ndarray


# --------------------------------------------------------------------------- validation


def _validate_n_labels(n_labels) -> int:
    if isinstance(n_labels, bool) or not isinstance(n_labels, Integral) or n_labels < 2:
        raise ValueError(f"n_labels must be an integer >= 2, got {n_labels!r}")
    return int(n_labels)


def _validate_log_prior(prior, m: int, n_labels: int, *, per_task_only=False) -> np.ndarray:
    """``log`` of ``prior`` as an (m, K) array: rows positive, summing to 1 (then normalised).

    ``prior`` may be one distribution of shape (K,) for every task unless ``per_task_only``.
    """
    try:
        p = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("prior must be an array of probabilities, shape (n_tasks, K)") from exc
    shapes = f"({m}, {n_labels})" + ("" if per_task_only else f" or ({n_labels},)")
    one_row = p.ndim == 1 and not per_task_only
    if p.shape != ((n_labels,) if one_row else (m, n_labels)):
        raise ValueError(
            f"prior must have shape {shapes} (a distribution over the {n_labels} labels), "
            f"got shape {p.shape}"
        )
    rows = p.reshape(-1, n_labels)
    bad = ~(np.isfinite(rows) & (rows > 0.0))
    if bad.any():
        j, label = np.argwhere(bad)[0]
        where = f"label {label}" if one_row else f"(task {j}, label {label})"
        raise ValueError(f"prior must be finite and positive, got {rows[j, label]} at {where}")
    sums = rows.sum(axis=1)
    bad = np.abs(sums - 1.0) > _PRIOR_SUM_ATOL
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        where = "" if one_row else f" at task {j}"
        raise ValueError(f"prior must sum to 1 over the labels, got {float(sums[j])!r}{where}")
    return np.broadcast_to(_log_prior(rows), (m, n_labels))


def _log_prior(rows: np.ndarray) -> np.ndarray:
    """``log`` of every row of a checked prior divided by its sum, shape (rows, K): what
    :func:`_validate_log_prior` returns, for a prior already checked (a problem's
    ``prior_distribution``)."""
    return np.log(rows / rows.sum(axis=1)[:, None])


def _validate_problem(quality, assignment, prior, n_labels):
    n_labels = _validate_n_labels(n_labels)
    q = _validate_quality(quality)
    if q.shape[1] == 0:
        raise ValueError("quality must have at least one task (column)")
    x = _validate_assignment(assignment, q.shape)
    return q, x, _validate_log_prior(prior, q.shape[1], n_labels)


def _validate_members(index, quality, n_sets: int, index_name: str, unit: str):
    """Per-entry ``index`` (ints in ``[0, n_sets)``) and ``quality`` (in ``[0, 1]``, returned
    clipped) of equal 1-D shapes; errors name the field and the ``unit`` (e.g. answer)."""
    idx = np.asarray(index)
    if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
        raise ValueError(
            f"{index_name} must be a 1-D array of integers, got {idx.dtype} {idx.shape}"
        )
    idx = idx.astype(np.intp)
    try:
        q = np.asarray(quality, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError("quality must be a 1-D array of numbers in [0, 1]") from exc
    if idx.shape != q.shape:
        raise ValueError(
            f"{index_name} and quality must have one entry per {unit}, got shapes "
            f"{idx.shape} and {q.shape}"
        )
    bad = np.flatnonzero((idx < 0) | (idx >= n_sets))
    if bad.size:
        raise ValueError(
            f"{index_name} must be in [0, {n_sets}), got {idx[bad[0]]} at {unit} {bad[0]}"
        )
    bad = np.flatnonzero(~((q >= 0.0) & (q <= 1.0)))  # NaN fails both
    if bad.size:
        raise ValueError(
            f"quality must be finite and in [0, 1], got {q[bad[0]]} at {unit} {bad[0]}"
        )
    return idx, _clip(q)


def _validate_labels(label, n_answers: int, n_labels: int) -> np.ndarray:
    arr = np.asarray(label)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"label must be a 1-D array of integers, got {arr.dtype} {arr.shape}")
    if arr.shape != (n_answers,):
        raise ValueError(
            f"label must have one entry per answer ({n_answers}), got shape {arr.shape}"
        )
    bad = np.flatnonzero((arr < 0) | (arr >= n_labels))
    if bad.size:
        raise ValueError(f"label must be in [0, {n_labels}), got {arr[bad[0]]} at answer {bad[0]}")
    return arr.astype(np.intp)


def _per_task_log_prior(prior, n_labels: int) -> np.ndarray:
    """A prior of shape (n_tasks, K) whose length says how many tasks (or sets) there are."""
    if np.ndim(prior) != 2:
        raise ValueError(f"prior must have shape (n_tasks, {n_labels}), got {np.shape(prior)}")
    return _validate_log_prior(prior, np.shape(prior)[0], n_labels, per_task_only=True)


def _validate_n_samples(n_samples) -> int:
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    return int(n_samples)


# --------------------------------------------------------------------------- decision rule


def _weights(q_clipped: np.ndarray, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """``w = log(Q (K - 1) / (1 - Q))`` and ``log((1 - Q) / (K - 1))`` of clipped qualities."""
    log_wrong = np.log1p(-q_clipped) - math.log(n_labels - 1)
    return np.log(q_clipped) - log_wrong, log_wrong


def _tolerance(log_prior: np.ndarray, abs_weight_sum: np.ndarray) -> np.ndarray:
    """``TIE_RTOL * (1 + max log pi - min log pi + sum |w|)``; for K = 2 the binary one."""
    return TIE_RTOL * (1.0 + np.ptp(log_prior, axis=-1) + abs_weight_sum)


def _vote(scores: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """The vote on scores of shape (rows, K) with a tolerance per row, shape (rows,): the
    highest label whose score is at least ``max - tol``, shape (rows,). (The exact kernel
    applies the same rule to each state.)"""
    floor = scores.max(axis=1) - tol
    label = np.zeros(scores.shape[0], dtype=np.int64)  # label 0 only if no higher one is tied
    for y in range(1, scores.shape[1]):
        label[scores[:, y] >= floor] = y
    return label


# --------------------------------------------------------------------------- states


@functools.lru_cache(maxsize=128)  # bounded: a large group's table holds up to 2^20 rows
def _compositions(c: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """The ways ``c`` interchangeable workers split over ``K`` labels.

    Returns counts, shape (binom(c + K - 1, K - 1), K), and the log of each one's number of
    answer patterns ``c! / prod_l n_l!``. Both read-only (cached).
    """
    if n_labels == 1:
        counts = np.array([[c]], dtype=np.float64)
    else:
        parts = []
        for first in range(c, -1, -1):
            rest = _compositions(c - first, n_labels - 1)[0]
            parts.append(np.column_stack([np.full(rest.shape[0], float(first)), rest]))
        counts = np.vstack(parts)
    log_factorial = np.array([math.lgamma(v + 1.0) for v in range(c + 1)])
    log_mult = log_factorial[c] - log_factorial[counts.astype(np.intp)].sum(axis=1)
    for arr in (counts, log_mult):
        arr.flags.writeable = False
    return counts, log_mult


def _n_compositions(sizes: np.ndarray, n_labels: int) -> np.ndarray:
    """``binom(c + K - 1, K - 1)`` of every group size ``c``, as float64."""
    unique, inverse = np.unique(sizes, return_inverse=True)
    counts = np.array([float(math.comb(int(c) + n_labels - 1, n_labels - 1)) for c in unique])
    return counts[inverse.reshape(sizes.shape)]


# --------------------------------------------------------------------------- exact kernels


@dataclass(frozen=True)
class _Groups:
    """The workers of every *unit* (a set of workers on a task) grouped by equal quality.

    Groups are sorted by unit, then quality; ``first[u]`` is the first group of unit ``u``.
    """

    size: np.ndarray  # (n_groups,) workers in the group
    quality: np.ndarray  # (n_groups,) their clipped quality
    per_unit: np.ndarray  # (n_units,) groups of each unit
    first: np.ndarray  # (n_units,)


def _group(unit: np.ndarray, q: np.ndarray, n_units: int) -> _Groups:
    """Group the (unit, clipped quality) pairs by equal quality within each unit."""
    order = np.lexsort((q, unit))
    unit, q = unit[order], q[order]
    new = np.ones(unit.shape[0], dtype=bool)
    new[1:] = (unit[1:] != unit[:-1]) | (q[1:] != q[:-1])
    start = np.flatnonzero(new)
    size = np.diff(np.append(start, unit.shape[0]))
    per_unit = np.bincount(unit[start], minlength=n_units)
    first = np.zeros(n_units, dtype=np.intp)
    np.cumsum(per_unit[:-1], out=first[1:])
    return _Groups(size=size, quality=q[start], per_unit=per_unit, first=first)


def _state_counts(groups: _Groups, n_labels: int) -> np.ndarray:
    """Number of states of every unit (float64; ``inf`` if astronomically many)."""
    factors = _n_compositions(groups.size, n_labels)
    n_units = groups.per_unit.shape[0]
    owner = np.repeat(np.arange(n_units), groups.per_unit)
    with np.errstate(over="ignore"):
        states = np.exp(np.bincount(owner, weights=np.log(factors), minlength=n_units))
    # exp(sum log) is off by a few ulps: round, so that e.g. 4^10 compares equal to 2^20.
    return np.where(states < 2.0**50, np.round(states), states)


def _composition_tables(sizes: np.ndarray, n_labels: int):
    """The compositions of every group size in ``sizes``, concatenated for the kernel:
    ``(comp, comp_log_mult, comp_start, comp_len)`` (see
    :func:`assignment.engine._multiclass_kernels.unit_accuracies`)."""
    present = np.unique(sizes)
    cmax = int(present[-1]) if present.size else 0
    comp_start = np.zeros(cmax + 1, dtype=np.int64)
    comp_len = np.zeros(cmax + 1, dtype=np.int64)
    tables = [_compositions(int(c), n_labels) for c in present]
    lengths = np.array([t[0].shape[0] for t in tables], dtype=np.int64)
    comp_len[present] = lengths
    comp_start[present] = np.cumsum(lengths) - lengths
    if not tables:
        return np.zeros((0, n_labels)), np.zeros(0), comp_start, comp_len
    comp = np.concatenate([t[0] for t in tables])
    return comp, np.concatenate([t[1] for t in tables]), comp_start, comp_len


def _units_accuracy(unit, q, log_prior, name_of=lambda u: f"task {u}") -> np.ndarray:
    """Exact accuracy of every unit from its (unit, clipped quality) pairs, shape (P,) each;
    ``log_prior`` (n_units, K). Raises if a unit has more than ``MAX_EXACT_STATES`` states,
    naming it by ``name_of(unit)``."""
    return _groups_accuracy(_group(unit, q, log_prior.shape[0]), log_prior, name_of)


def _groups_accuracy(groups: _Groups, log_prior, name_of) -> np.ndarray:
    """:func:`_units_accuracy` of units already grouped."""
    # numba, imported on first use: importing the engine costs no numba import (see solve.py)
    from assignment.engine._multiclass_kernels import unit_accuracies

    n_units, n_labels = log_prior.shape
    _check_exact(_state_counts(groups, n_labels), name_of)
    w, log_wrong = _weights(groups.quality, n_labels)
    influence = groups.size * np.abs(w)
    owner = np.repeat(np.arange(n_units), groups.per_unit)
    order = np.lexsort((-influence, owner))  # within a unit, the most influential group first
    w, log_wrong, size, influence = w[order], log_wrong[order], groups.size[order], influence[order]
    group_start = np.append(groups.first, influence.shape[0]).astype(np.int64)
    tol = _tolerance(log_prior, np.bincount(owner, weights=influence, minlength=n_units))
    return unit_accuracies(
        group_start,
        w,
        log_wrong,
        size.astype(np.int64),
        influence,
        np.ascontiguousarray(log_prior),
        tol,
        *_composition_tables(size, n_labels),
    )


def _assigned_pairs(q, x: np.ndarray):
    """``(workers, tasks, clipped Q)`` of the assigned pairs, sorted by task, then worker."""
    workers, tasks = np.nonzero(x.T)[::-1]
    return workers, tasks, _clip(_gather(q, workers, tasks))


def _check_exact(states: np.ndarray, name_of=lambda u: f"task {u}") -> None:
    """Raise if a unit has more than ``MAX_EXACT_STATES`` states, naming the first."""
    too_many = np.flatnonzero(states > MAX_EXACT_STATES)
    if too_many.size:
        u = int(too_many[0])
        count = f"{int(states[u]):,}" if states[u] < 1e15 else f"{states[u]:.3g}"
        raise ValueError(
            f"{name_of(u)} has {count} answer states (prod over its groups of "
            "equally good workers of binom(c + K - 1, K - 1)); the exact expected accuracy "
            f"handles at most MAX_EXACT_STATES = {MAX_EXACT_STATES}. "
            "Use estimate_accuracy_multiclass (Monte Carlo) instead."
        )


# --------------------------------------------------------------------------- public API


def exact_state_counts(quality, assignment, *, n_labels) -> np.ndarray:
    """Number of states the exact accuracy sums over, per task.

    Parameters
    ----------
    quality : array_like, shape (n_workers, n_tasks), or QualityByCategory
        ``Q[i, j]`` in ``[0, 1]`` (clipped to ``[EPS, 1 - EPS]``, ``EPS = 1e-6``).
    assignment : array_like of bool or 0/1, shape (n_workers, n_tasks)
    n_labels : int
        ``K >= 2``.

    Returns
    -------
    ndarray of float64, shape (n_tasks,)
        ``prod_g binom(c_g + K - 1, K - 1)`` over the groups of the task's workers with equal
        clipped quality (``c_g`` workers each): ``K^k`` for ``k`` distinct qualities, 1 for a
        task without workers, ``inf`` beyond float range. The exact functions accept a task iff
        this is at most ``MAX_EXACT_STATES``; the cost is proportional to it.
    """
    n_labels = _validate_n_labels(n_labels)
    q = _validate_quality(quality)
    return _exact_state_counts(q, _validate_assignment(assignment, q.shape), n_labels)


def _exact_state_counts(q, x: np.ndarray, n_labels: int) -> np.ndarray:
    """:func:`exact_state_counts` of validated inputs: ``q`` (n, m) or a
    :class:`~assignment.engine.problem.QualityByCategory`, ``x`` bool (n, m); shape (m,)."""
    _, tasks, qa = _assigned_pairs(q, x)
    return _state_counts(_group(tasks, qa, q.shape[1]), n_labels)


def task_accuracy_multiclass(quality, assignment, *, prior, n_labels) -> np.ndarray:
    """Exact expected accuracy of the K-class Bayes vote on every task.

    Parameters
    ----------
    quality : array_like, shape (n_workers, n_tasks), or QualityByCategory
        ``Q[i, j]``, the probability that worker ``i`` gives task ``j`` its true label (else a
        uniformly chosen wrong one); finite, in ``[0, 1]``, clipped to ``[EPS, 1 - EPS]``
        (``EPS = 1e-6``). A :class:`~assignment.engine.problem.QualityByCategory` is read pair by
        pair, never made dense.
    assignment : array_like of bool or 0/1, shape (n_workers, n_tasks)
        ``X[i, j]`` true when worker ``i`` labels task ``j``.
    prior : array_like, shape (n_tasks, K) or (K,)
        ``pi_j(y)``: positive, each row summing to 1 (within ``1e-6``; then normalised). One
        row of shape (K,) is every task's prior.
    n_labels : int
        ``K >= 2``.

    Returns
    -------
    ndarray, shape (n_tasks,)
        ``A_j = sum_y pi_j(y) P(vote = y | y_j = y)`` for the vote
        ``argmax_y log pi_j(y) + sum_{i: a_i = y} log(Q_ij (K - 1) / (1 - Q_ij))`` with ties
        (within ``TIE_RTOL * (1 + range of log pi_j + sum_i |w_ij|)``) to the highest label.
        A task with no workers gets ``pi_j(vote)``, i.e. ``max_y pi_j(y)``. For ``K = 2`` and
        ``prior = [1 - p, p]`` this is :func:`assignment.engine.accuracy.task_accuracy` with
        ``prior = p``.

    Raises
    ------
    ValueError
        On invalid inputs (naming the argument and the position), or when a task has more
        than ``MAX_EXACT_STATES`` states (see :func:`exact_state_counts`; naming the task).

    Notes
    -----
    Exact over the states of the module docstring: at most ``K^k`` per task of ``k`` distinct
    qualities, far fewer when qualities repeat, and fewer still where the pruned depth-first
    sum finds the vote decided early.
    """
    return _task_accuracy_multiclass(*_validate_problem(quality, assignment, prior, n_labels))


def _task_accuracy_multiclass(q, x: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
    """:func:`task_accuracy_multiclass` of validated inputs: ``q`` (n, m) or a
    :class:`~assignment.engine.problem.QualityByCategory`, ``x`` bool (n, m), ``log_prior``
    (m, K) normalised (:func:`_log_prior`); shape (m,)."""
    _, tasks, qa = _assigned_pairs(q, x)
    return _units_accuracy(tasks, qa, log_prior)


def expected_accuracy_multiclass(quality, assignment, *, prior, n_labels) -> float:
    """Exact mean over tasks of :func:`task_accuracy_multiclass` (same arguments and errors)."""
    return float(
        task_accuracy_multiclass(quality, assignment, prior=prior, n_labels=n_labels).mean()
    )


def column_accuracy_multiclass(q_col_assigned, prior_j, *, n_labels) -> float:
    """Exact expected accuracy of one task from the qualities of its assigned workers.

    Parameters
    ----------
    q_col_assigned : array_like, shape (k,)
        Qualities in ``[0, 1]`` of the task's workers (``k = 0`` allowed).
    prior_j : array_like, shape (K,)
        The task's prior, positive and summing to 1.
    n_labels : int
        ``K >= 2``.

    Returns
    -------
    float
        The task's accuracy as in :func:`task_accuracy_multiclass`.

    Raises
    ------
    ValueError
        On invalid inputs or more than ``MAX_EXACT_STATES`` states.
    """
    n_labels = _validate_n_labels(n_labels)
    q = np.asarray(q_col_assigned, dtype=np.float64)
    if q.ndim != 1:
        raise ValueError(f"q_col_assigned must be 1-D, got {q.ndim} dimension(s)")
    bad = np.flatnonzero(~((q >= 0.0) & (q <= 1.0)))  # NaN fails both
    if bad.size:
        raise ValueError(
            f"q_col_assigned must be finite and in [0, 1], got {q[bad[0]]} at {bad[0]}"
        )
    log_prior = _validate_log_prior(prior_j, 1, n_labels)
    quality, size = np.unique(_clip(q), return_counts=True)  # one unit: group it directly
    groups = _Groups(
        size=size,
        quality=quality,
        per_unit=np.array([size.shape[0]]),
        first=np.zeros(1, dtype=np.intp),
    )
    return float(_groups_accuracy(groups, log_prior, lambda _: "q_col_assigned")[0])


def set_accuracy_multiclass(*, set_index, quality, prior, n_labels) -> np.ndarray:
    """Exact expected accuracy of many sets of workers at once, each set on its own task.

    The batched form of :func:`column_accuracy_multiclass`, for solvers that score many
    candidate sets (every task with one more worker, say) in one pass.

    Parameters
    ----------
    set_index : array_like of int, shape (n_members,)
        The set of each member, in ``[0, n_sets)``; a set may be empty.
    quality : array_like, shape (n_members,)
        Each member's quality on its set's task, in ``[0, 1]``.
    prior : array_like, shape (n_sets, K)
        The prior of each set's task; its length is the number of sets.
    n_labels : int
        ``K >= 2``.

    Returns
    -------
    ndarray, shape (n_sets,)
        Each set's accuracy as in :func:`task_accuracy_multiclass`.

    Raises
    ------
    ValueError
        Naming the field and the first bad member, or the first set with more than
        ``MAX_EXACT_STATES`` states.
    """
    n_labels = _validate_n_labels(n_labels)
    log_prior = _per_task_log_prior(prior, n_labels)
    sets, q = _validate_members(set_index, quality, log_prior.shape[0], "set_index", "member")
    return _units_accuracy(sets, q, log_prior, lambda u: f"set {u}")


def _leave_one_out_units(counts: np.ndarray):
    """Units of every task's workers without one of them.

    ``counts[p]``: workers of the ``p``-th selected task, whose pairs are contiguous and in task
    order. Returns ``(unit, member)``: pair ``member[e]`` belongs to unit ``unit[e]``, and unit
    ``e'`` is the task of pair ``e'`` without pair ``e'``.
    """
    starts = np.zeros(counts.shape[0] + 1, dtype=np.intp)
    np.cumsum(counts, out=starts[1:])
    units, members = [], []
    for k in np.unique(counts[counts > 1]):
        idx = starts[np.flatnonzero(counts == k)][:, None] + np.arange(k)
        for left_out in range(k):
            rest = np.delete(idx, left_out, axis=1)
            units.append(np.repeat(idx[:, left_out], k - 1))
            members.append(rest.reshape(-1))
    if not units:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    return np.concatenate(units), np.concatenate(members)


def removal_losses_multiclass(quality, assignment, *, prior, n_labels, tasks=None):
    """Exact accuracy each assigned worker contributes to its task (leave-one-out), K labels.

    Parameters
    ----------
    quality, assignment, prior, n_labels
        As in :func:`task_accuracy_multiclass`.
    tasks : array_like of int, optional
        Restrict the computation to these task indices (default: all tasks).

    Returns
    -------
    workers, tasks : ndarray of intp, shape (n_assigned,)
        The assigned pairs ``(i, j)`` of the (selected) tasks, sorted by task, then worker.
    loss : ndarray of float, shape (n_assigned,)
        ``A_j - A_j'`` where ``A_j'`` is the exact accuracy of task ``j`` without worker ``i``.
        Non-negative up to rounding: one more answer never lowers the accuracy of the Bayes
        vote, and at an exact tie the tie rule does not change it (only scores that differ by
        less than the tie tolerance without being equal could make a loss negative, by less
        than that tolerance). 0 for a worker whose answer never changes the vote.

    Notes
    -----
    The ``k + 1`` sets of workers of a task (all, and all but each one) are evaluated in one
    pass of the kernel of :func:`task_accuracy_multiclass`: about ``k + 1`` times its cost.
    """
    q, x, log_prior = _validate_problem(quality, assignment, prior, n_labels)
    return _removal_losses_multiclass(q, x, log_prior, _validate_tasks(tasks, q.shape[1]))


def _removal_losses_multiclass(q, x: np.ndarray, log_prior: np.ndarray, tasks: np.ndarray):
    """:func:`removal_losses_multiclass` of validated inputs (as
    :func:`_task_accuracy_multiclass`'s) on ``tasks`` (ascending, distinct)."""
    workers, pos = np.nonzero(x[:, tasks].T)[::-1]  # sorted by task position, then worker
    qa = _clip(_gather(q, workers, tasks[pos]))
    n_cols = tasks.shape[0]
    loo_unit, member = _leave_one_out_units(np.bincount(pos, minlength=n_cols))
    # Units 0..n_cols-1 are the tasks, then one per pair: its task without it. A task's units
    # without a worker have fewer states than the task, so the first unit refused is a task.
    accuracy = _units_accuracy(
        np.concatenate([pos, n_cols + loo_unit]),
        np.concatenate([qa, qa[member]]),
        np.concatenate([log_prior[tasks], log_prior[tasks[pos]]]),
        lambda u: f"task {tasks[u]}",
    )
    return workers, tasks[pos], accuracy[pos] - accuracy[n_cols:]


def _sampled_accuracy(rng, n, tasks, q, w, log_prior, tol) -> np.ndarray:
    """Accuracy over tasks of ``n`` samples, shape (n,).

    One sample draws for every answer ``u ~ U[0, 1)``: the answer is correct iff ``u < Q``, and
    otherwise ``(u - Q) / (1 - Q)``, uniform on ``[0, 1)``, picks an offset ``o`` in ``[1, K)``:
    given ``y`` the answer is ``(y + o) mod K``, uniform over the wrong labels. The same draws
    serve every ``y``, so ``y`` is integrated out exactly. One uniform per answer, drawn in
    sample order, so that the chunking does not change the estimate.
    """
    m, n_labels = log_prior.shape
    u = rng.random((n, q.shape[0]))
    correct = u < q
    offset = 1 + np.minimum((u - q) / (1.0 - q) * (n_labels - 1), n_labels - 2).astype(np.int64)
    cell = (np.arange(n)[:, None] * m + tasks) * n_labels  # (sample, task) row of every answer
    weights = np.broadcast_to(w, correct.shape).ravel()
    prior_rows = np.tile(log_prior, (n, 1))
    tol_rows = np.tile(tol, n)
    accuracy = np.zeros((n, m))
    for y in range(n_labels):
        answer = np.where(correct, y, (y + offset) % n_labels)
        scores = np.bincount((cell + answer).ravel(), weights=weights, minlength=n * m * n_labels)
        scores = scores.reshape(n * m, n_labels) + prior_rows
        vote = _vote(scores, tol_rows)
        accuracy += np.exp(log_prior[:, y]) * (vote.reshape(n, m) == y)
    return accuracy.mean(axis=1)


def estimate_accuracy_multiclass(
    quality, assignment, *, prior, n_labels, n_samples: int = 10_000, seed=None
) -> AccuracyEstimate:
    """Monte Carlo estimate of the mean expected accuracy, for any number of workers per task.

    Each sample draws every assigned worker's answer pattern relative to the truth (correct
    with probability ``Q_ij``, else an offset in ``[1, K)`` to a uniformly chosen wrong label)
    and scores, for every ``y``, ``pi_j(y) [vote(answers given y) = y]`` with the vote and tie
    rule of :func:`task_accuracy_multiclass`. Summed over ``y`` this is unbiased for ``A_j``
    (``y`` is integrated out, not sampled).

    Parameters
    ----------
    quality, assignment, prior, n_labels
        As in :func:`task_accuracy_multiclass`, without the limit on states.
    n_samples : int
        Independent samples, at least 2.
    seed : None, int, or numpy.random.Generator
        Passed to :func:`numpy.random.default_rng`.

    Returns
    -------
    AccuracyEstimate
        The mean over samples of each sample's mean accuracy over tasks, and its standard
        error (sample standard deviation with ``ddof=1`` over ``sqrt(n_samples)``).
    """
    q, x, log_prior = _validate_problem(quality, assignment, prior, n_labels)
    n_samples = _validate_n_samples(n_samples)
    return _estimate_accuracy_multiclass(q, x, log_prior, n_samples, np.random.default_rng(seed))


def _estimate_accuracy_multiclass(
    q, x: np.ndarray, log_prior: np.ndarray, n_samples: int, rng
) -> AccuracyEstimate:
    """:func:`estimate_accuracy_multiclass` of validated inputs: ``q`` (n, m) or a
    :class:`~assignment.engine.problem.QualityByCategory` with ``m >= 1``, ``x`` bool (n, m),
    ``log_prior`` (m, K) normalised (:func:`_log_prior`), ``n_samples >= 2`` and ``rng`` a
    ``numpy.random.Generator``."""
    m, n_labels = log_prior.shape
    _, tasks, qa = _assigned_pairs(q, x)
    w, _ = _weights(qa, n_labels)
    tol = _tolerance(log_prior, np.bincount(tasks, weights=np.abs(w), minlength=m))
    per_sample = np.empty(n_samples)
    chunk = max(1, _MC_CHUNK_ELEMENTS // max(qa.shape[0], m * n_labels))
    for start in range(0, n_samples, chunk):
        n = min(chunk, n_samples - start)
        per_sample[start : start + n] = _sampled_accuracy(rng, n, tasks, qa, w, log_prior, tol)
    return AccuracyEstimate(
        mean=float(per_sample.mean()),
        standard_error=float(per_sample.std(ddof=1) / np.sqrt(n_samples)),
        n_samples=n_samples,
    )


def aggregate_multiclass(*, task_index, quality, label, prior, n_labels) -> MulticlassAggregate:
    """Combine each task's collected answers by the K-class Bayes vote.

    Parameters
    ----------
    task_index : array_like of int, shape (n_answers,)
        The task of each answer, in ``[0, n_tasks)``.
    quality : array_like, shape (n_answers,)
        ``Q_ij`` of the worker who gave each answer on its task, in ``[0, 1]`` (clipped to
        ``[EPS, 1 - EPS]``, ``EPS = 1e-6``).
    label : array_like of int, shape (n_answers,)
        The label given, in ``[0, K)``.
    prior : array_like, shape (n_tasks, K)
        ``pi_j``, positive rows summing to 1; its length is the number of tasks.
    n_labels : int
        ``K >= 2``.

    Returns
    -------
    MulticlassAggregate
        With ``score_j(y) = log pi_j(y) + sum_{answers e on j with label y}
        log(Q_e (K - 1) / (1 - Q_e))``: ``posterior_j = softmax(score_j)`` and ``labels_j`` the
        highest ``y`` with ``score_j(y) >= max score_j - tol_j``,
        ``tol_j = 1e-9 * (1 + range of log pi_j + sum_{answers on j} |w_e|)``. A task without
        answers gets its prior and the prior's label. For ``K = 2`` and ``prior = [1 - p, p]``
        these are the labels of :func:`assignment.engine.aggregate.aggregate_pairs` and its
        posterior as ``posterior[:, 1]``.

    Raises
    ------
    ValueError
        Naming the argument and the first bad answer or task.
    """
    n_labels = _validate_n_labels(n_labels)
    log_prior = _per_task_log_prior(prior, n_labels)
    m = log_prior.shape[0]
    tasks, q = _validate_members(task_index, quality, m, "task_index", "answer")
    labels = _validate_labels(label, tasks.shape[0], n_labels)
    w, _ = _weights(q, n_labels)
    votes = np.bincount(tasks * n_labels + labels, weights=w, minlength=m * n_labels)
    scores = votes.reshape(m, n_labels) + log_prior
    tol = _tolerance(log_prior, np.bincount(tasks, weights=np.abs(w), minlength=m))
    vote = _vote(scores, tol)
    posterior = np.exp(scores - scores.max(axis=1, keepdims=True))
    posterior /= posterior.sum(axis=1, keepdims=True)
    return MulticlassAggregate(labels=vote, posterior=posterior)
