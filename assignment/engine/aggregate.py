"""Aggregate collected binary answers by the Bayes vote (docs/design.md#expected-accuracy).

The decision rule is the one whose expected accuracy :mod:`assignment.engine.accuracy`
computes, tie rule included, so that ``aggregate`` labels achieve exactly that accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assignment.engine.accuracy import (
    _clip,
    _log_odds,
    _prior_threshold,
    _tolerance,
    _validate_prior,
    _validate_quality,
)

__all__ = ["AggregateResult", "aggregate", "aggregate_pairs"]


@dataclass(frozen=True, eq=False)
class AggregateResult:
    """Labels and posteriors of every task.

    Attributes
    ----------
    labels : ndarray of int64, shape (n_tasks,)
        The Bayes-vote label in ``{0, 1}`` of each task.
    posterior : ndarray of float64, shape (n_tasks,)
        ``P(y_j = 1 | answers)`` under the model (independent workers with the given qualities).
    """

    labels: np.ndarray
    posterior: np.ndarray


def _validate_answers(answers, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(answered, said_one)`` bool arrays from -1/0/1 (or NaN-for-missing) answers."""
    a = np.asarray(answers)
    if a.shape != shape:
        raise ValueError(f"answers must have the shape of quality {shape}, got {a.shape}")
    if a.dtype == np.bool_:
        return np.ones(shape, dtype=bool), a.copy()
    if np.issubdtype(a.dtype, np.integer):
        missing = a == -1
    elif np.issubdtype(a.dtype, np.floating):
        missing = np.isnan(a) | (a == -1)
    else:
        raise ValueError(
            f"answers must be integers in {{-1, 0, 1}} (or floats with NaN for missing), "
            f"got dtype {a.dtype}"
        )
    bad = ~missing & (a != 0) & (a != 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            "answers must hold only 1, 0 and -1 (no answer; NaN is also accepted), "
            f"got {a[i, j]} at (worker {i}, task {j})"
        )
    return ~missing, ~missing & (a == 1)


def _expit(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` without overflow for any finite ``x``."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def aggregate(answers, quality, *, prior=0.5) -> AggregateResult:
    """Combine each task's collected answers by the Bayes vote.

    Parameters
    ----------
    answers : array_like, shape (n_workers, n_tasks)
        ``1`` or ``0`` for a collected label, ``-1`` for no answer. A float array may use NaN
        (or ``-1.0``) for no answer; a bool array means every worker answered every task.
    quality : array_like, shape (n_workers, n_tasks)
        ``Q[i, j]`` in ``[0, 1]``, the probability that worker ``i`` labels task ``j``
        correctly; clipped to ``[EPS, 1 - EPS]`` (``EPS = 1e-6``) before taking log-odds.
        Entries where there is no answer are ignored (but must still be valid).
    prior : float or array_like, shape (n_tasks,)
        ``pi_j = P(y_j = 1)`` in the open interval ``(0, 1)``.

    Returns
    -------
    AggregateResult
        With ``w_ij = log(Q_ij / (1 - Q_ij))``, ``r_j = log((1 - pi_j) / pi_j)`` and
        ``s_j = sum_{i answered} (2 a_ij - 1) w_ij``:

        * ``posterior_j = expit(s_j - r_j) = P(y_j = 1 | answers)``, computed in log-odds
          space so that it neither overflows nor rounds a confident 0.999... to 1 early;
        * ``labels_j = 1`` iff ``s_j >= r_j - tol_j`` with the tie tolerance
          ``tol_j = 1e-9 * (1 + |r_j| + sum_{i answered} |w_ij|)``. This is
          ``posterior_j >= 0.5`` except within the tolerance, where a tie predicts 1 — the
          decision rule of :func:`assignment.engine.accuracy.expected_accuracy`. A task with
          no answer gets ``posterior = pi_j`` and the prior's label.

    Raises
    ------
    ValueError
        If ``quality`` is not a finite 2-D array in ``[0, 1]``, ``answers`` has another shape
        or a value outside ``{-1, 0, 1}`` (NaN allowed in float arrays), or ``prior`` is not
        in ``(0, 1)`` (naming the task).
    """
    q = _validate_quality(quality)
    answered, said_one = _validate_answers(answers, q.shape)
    p = _validate_prior(prior, q.shape[1])
    workers, tasks = np.nonzero(answered)
    return _aggregate_pairs(tasks, q[workers, tasks], said_one[workers, tasks], p)


def aggregate_pairs(*, task_index, quality, said_one, prior) -> AggregateResult:
    """:func:`aggregate` from the collected answers alone, one entry per answer.

    For many tasks with few answers each, this reads only the answered pairs instead of a
    dense workers x tasks grid; the labels and posteriors are those of :func:`aggregate`.

    Parameters
    ----------
    task_index : array_like of int, shape (n_answers,)
        The task of each answer, in ``[0, n_tasks)``.
    quality : array_like, shape (n_answers,)
        ``Q[i, j]`` of the worker who gave each answer on its task, in ``[0, 1]``.
    said_one : array_like of bool, shape (n_answers,)
        Whether the answer was ``1``.
    prior : array_like, shape (n_tasks,)
        ``pi_j`` in the open interval ``(0, 1)``; its length is the number of tasks.

    Returns
    -------
    AggregateResult
        As :func:`aggregate`, for every task (``posterior = pi_j`` where nobody answered).
    """
    p = np.atleast_1d(np.asarray(prior, dtype=np.float64))
    p = _validate_prior(p, p.shape[0])
    task_index = np.asarray(task_index, dtype=np.int64)
    q = _validate_quality(np.asarray(quality, dtype=np.float64).reshape(1, -1))[0]
    said_one = np.asarray(said_one, dtype=bool)
    if not task_index.shape == q.shape == said_one.shape:
        raise ValueError(
            "task_index, quality and said_one must have one entry per answer, got shapes "
            f"{task_index.shape}, {q.shape} and {said_one.shape}"
        )
    if task_index.size and (task_index.min() < 0 or task_index.max() >= p.shape[0]):
        raise ValueError(f"task_index must be in [0, {p.shape[0]}), the tasks of prior")
    return _aggregate_pairs(task_index, q, said_one, p)


def _aggregate_pairs(tasks, q, said_one, p) -> AggregateResult:
    """The Bayes vote from validated per-answer arrays (the rule of :func:`aggregate`)."""
    w = _log_odds(_clip(q))
    m = p.shape[0]
    s = np.bincount(tasks, weights=np.where(said_one, w, -w), minlength=m)
    r = _prior_threshold(p)
    tol = _tolerance(r, np.bincount(tasks, weights=np.abs(w), minlength=m))
    labels = (s >= r - tol).astype(np.int64)
    posterior = _expit(s - r)
    return AggregateResult(labels=labels, posterior=posterior)
