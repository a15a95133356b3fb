"""Aggregate collected binary answers by the Bayes vote (DESIGN.md §2).

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

__all__ = ["AggregateResult", "aggregate"]


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
    w = _log_odds(_clip(q))
    sign = np.where(answered, np.where(said_one, 1.0, -1.0), 0.0)
    s = (sign * w).sum(axis=0)
    r = _prior_threshold(p)
    tol = _tolerance(r, np.where(answered, np.abs(w), 0.0).sum(axis=0))
    labels = (s >= r - tol).astype(np.int64)
    posterior = _expit(s - r)
    return AggregateResult(labels=labels, posterior=posterior)
