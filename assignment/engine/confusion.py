"""Expected accuracy of an assignment under Dawid–Skene's worker model (a confusion matrix each).

Dawid & Skene (1979): worker ``i`` answers a task whose true label is ``c`` with label ``a``
with probability ``C_i[c, a]``. The rest of the engine optimises under the symmetric model
(``C_i[c, c] = q``, every wrong label ``(1 - q) / (K - 1)``); a quality matrix estimated by
Dawid–Skene EM also has the full matrices, and this module says how an assignment fares under
them. For a task with prior ``pi`` and the answers ``a`` of its workers ``S``, the joint
probability of label ``c`` and the answers is ``pi_c prod_{i in S} C_i[c, a_i]``, so

* the **Dawid–Skene vote** (the posterior's argmax) is right with probability
  ``A = sum_a max_c pi_c prod_i C_i[c, a_i]``, the best any vote can do under the model;
* the **Bayes vote of the symmetric model** with qualities ``q_i`` (the vote the labels export
  uses: score ``log pi_c + sum_{i: a_i = c} log(q_i (K - 1) / (1 - q_i))``, ``q_i`` clipped
  to ``[EPS, 1 - EPS]``, ties within the export's tolerance to the highest tied label ``v(a)``)
  is right with probability ``sum_a pi_{v(a)} prod_i C_i[v(a), a_i]``: under the matrices the
  labels a tie leaves in doubt are not equally likely, so the figure credits the label the
  export gives, not a share of each.

Both are sums over the ``K^|S|`` answer patterns: exact when ``K^|S| <= MAX_EXACT_PATTERNS``
(tasks grouped by their number of workers, one array operation per group and worker slot),
else Monte Carlo over answer patterns drawn from the model, each counting its probability of
being right given the answers (``max_c P(c | a)``, a lower variance than counting hits), with
a standard error per task. With one-coin matrices both are the engine's exact accuracy.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from assignment.engine.accuracy import EPS, TIE_RTOL

__all__ = [
    "DEFAULT_SAMPLES",
    "MAX_EXACT_PATTERNS",
    "ConfusionAccuracy",
    "confusion_accuracy",
    "confusion_posterior",
    "solo_accuracy",
]

#: Tasks with at most this many answer patterns (``K^|S|``) are summed exactly.
MAX_EXACT_PATTERNS = 4096

#: Answer patterns drawn per task beyond that.
DEFAULT_SAMPLES = 2000

#: Array elements per chunk of tasks (float64: 32 MB).
_CHUNK = 1 << 22


@dataclass(frozen=True)
class ConfusionAccuracy:
    """Expected accuracy per task under the confusion matrices.

    Attributes
    ----------
    task_accuracy : ndarray of float64, shape (n_tasks,)
    task_standard_error : ndarray of float64, shape (n_tasks,)
        0 where the sum was exact.
    """

    task_accuracy: np.ndarray
    task_standard_error: np.ndarray

    @property
    def expected_accuracy(self) -> float:
        """The mean over tasks."""
        return float(self.task_accuracy.mean())

    @property
    def standard_error(self) -> float:
        """The standard error of :attr:`expected_accuracy` (tasks sampled independently)."""
        m = self.task_accuracy.shape[0]
        return float(np.sqrt(np.sum(self.task_standard_error**2)) / m)


def solo_accuracy(confusion, prior) -> np.ndarray:
    """The Dawid–Skene vote's accuracy on one answer alone, ``sum_a max_c pi_c C[c, a]``.

    Parameters
    ----------
    confusion : array_like of float, shape (..., K, K)
        ``C[c, a] = P(answer a | true label c)``, one matrix per entry of the leading axes.
    prior : array_like of float, shape (..., K)
        ``pi``, the task's distribution over the labels; broadcast against ``confusion``'s
        leading axes (shape (K,): one prior for every matrix).

    Returns
    -------
    ndarray of float64, shape (...)
        The probability that the label most probable given the one answer is the true one.
    """
    joint = np.asarray(prior, dtype=np.float64)[..., :, None] * np.asarray(confusion)
    return joint.max(axis=-2).sum(axis=-1)


def confusion_posterior(confusion, *, worker_index, task_index, label, prior) -> np.ndarray:
    """Each task's posterior over its true label given its answers, under the matrices.

    Bayes' rule with answers independent given the label: ``P(y_j = c | D_j)`` is proportional
    to ``prior[j, c] prod_{(i, a) in D_j} confusion[i, c, a]``; summed in log space (a zero
    entry counts as ``1e-300``, as in :func:`confusion_accuracy`), ``O(n_answers K)``.

    Parameters
    ----------
    confusion : ndarray of float, shape (n_workers, K, K)
        ``C_i[c, a]``, rows distributions (checked by the caller, e.g.
        :func:`~assignment.engine.rounds.next_round`).
    worker_index, task_index, label : ndarray of int, shape (n_answers,)
        Who answered which task with which label in ``[0, K)``; in range.
    prior : ndarray of float, shape (n_tasks, K)
        Each task's prior distribution, positive.

    Returns
    -------
    ndarray of float64, shape (n_tasks, K)
        Rows summing to 1; a task without answers keeps its prior.
    """
    log_c = _log_probabilities(np.asarray(confusion, dtype=np.float64))
    prior = np.asarray(prior, dtype=np.float64)
    m, k = prior.shape
    log_post = _log_probabilities(prior)
    for c in range(k):
        log_post[:, c] += np.bincount(
            task_index, weights=log_c[worker_index, c, label], minlength=m
        )
    post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    return post / post.sum(axis=1, keepdims=True)


def confusion_accuracy(
    confusion,
    workers,
    tasks,
    *,
    prior,
    vote_quality=None,
    vote_prior=None,
    n_samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
) -> ConfusionAccuracy:
    """Expected accuracy per task of a vote under the workers' confusion matrices.

    Parameters
    ----------
    confusion : array_like of float, shape (n_workers, K, K)
        ``C_i[c, a]``, each row a distribution over the answer ``a``.
    workers, tasks : array_like of int, shape (pairs,)
        The assignment: worker ``workers[e]`` labels task ``tasks[e]``; distinct pairs.
    prior : array_like of float, shape (n_tasks, K)
        Each task's prior over its true label; ``n_tasks`` is its length.
    vote_quality : array_like of float, shape (pairs,), optional
        Each pair's quality ``q`` in the symmetric model: score the Bayes vote of that model
        instead of the Dawid–Skene vote.
    vote_prior : array_like of float, shape (n_tasks, K), optional
        The prior in that vote's scores, default ``prior``: in a next round the symmetric
        model's posterior after the answers in hand, while ``prior`` (what the labels are) is
        the Dawid–Skene posterior (:mod:`~assignment.engine.rounds`). Only with
        ``vote_quality``.
    n_samples : int, default 2000
        Answer patterns drawn per task summed by Monte Carlo.
    seed : int, default 0
        Seed of those draws.

    Returns
    -------
    ConfusionAccuracy

    Raises
    ------
    ValueError
        Naming the argument: shapes, rows that are not distributions, pairs out of range or
        given twice.
    """
    log_c, log_prior, w, t, vq = _validate(confusion, workers, tasks, prior, vote_quality)
    log_vote = log_prior if vote_prior is None else _vote_prior(vote_prior, vq, log_prior.shape)
    return _confusion_accuracy(log_c, log_prior, w, t, (vq, log_vote), n_samples, seed)


def _confusion_accuracy(log_c, log_prior, w, t, vote, n_samples: int, seed) -> ConfusionAccuracy:
    """:func:`confusion_accuracy` of checked inputs, the kernel internal callers share.

    Parameters
    ----------
    log_c : ndarray of float64, shape (n_workers, K, K)
        :func:`_log_probabilities` of the confusion matrices.
    log_prior : ndarray of float64, shape (n_tasks, K)
        :func:`_log_probabilities` of the prior; ``n_tasks >= 1``.
    w, t : ndarray of int, shape (pairs,)
        Distinct pairs in range, in any order (a task's workers are taken in this order).
    vote : tuple
        ``(vote_quality, log_vote_prior)``: the symmetric vote's quality per pair, shape
        (pairs,), or None for the Dawid–Skene vote, and the log prior of the vote's scores,
        shape (n_tasks, K).
    n_samples : int
    seed : int
        As in :func:`confusion_accuracy`.
    """
    m, k = log_prior.shape
    vq, log_vote = vote
    order = np.argsort(t, kind="stable")
    w, t = w[order], t[order]
    vq = None if vq is None else vq[order]
    sizes = np.bincount(t, minlength=m)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    accuracy, error = np.zeros(m), np.zeros(m)
    rng = np.random.default_rng(seed)
    for s in np.unique(sizes):
        group = np.flatnonzero(sizes == s)
        slots = starts[group][:, None] + np.arange(s)
        vote = None if vq is None else _vote_weights(vq[slots], k)
        if k**s <= MAX_EXACT_PATTERNS:
            accuracy[group] = _exact(log_c, log_prior[group], w[slots], (vote, log_vote[group]))
        else:
            accuracy[group], error[group] = _sampled(
                log_c, log_prior[group], w[slots], (vote, log_vote[group]), n_samples, rng
            )
    return ConfusionAccuracy(task_accuracy=accuracy, task_standard_error=error)


def _validate(confusion, workers, tasks, prior, vote_quality):
    c = np.asarray(confusion, dtype=np.float64)
    if c.ndim != 3 or c.shape[1] != c.shape[2] or c.shape[1] < 2:
        raise ValueError(f"confusion must have shape (n_workers, K, K), K >= 2; got {c.shape}")
    if not np.all(np.isfinite(c)) or c.min(initial=0) < 0:
        raise ValueError("confusion must hold probabilities (finite, >= 0)")
    if c.size and not np.allclose(c.sum(axis=2), 1.0, atol=1e-6):
        raise ValueError("each row of confusion (a worker, a true label) must sum to 1")
    p = np.asarray(prior, dtype=np.float64)
    k = c.shape[1]
    if p.ndim != 2 or p.shape[1] != k or p.shape[0] == 0:
        raise ValueError(f"prior must have shape (n_tasks, {k}); got {p.shape}")
    if not np.all(np.isfinite(p)) or p.min() < 0 or not np.allclose(p.sum(axis=1), 1.0):
        raise ValueError("each row of prior must be a distribution over the K labels")
    w, t = np.asarray(workers), np.asarray(tasks)
    if w.ndim != 1 or w.shape != t.shape:
        raise ValueError("workers and tasks must be 1-D arrays of the same length")
    if w.size and not (np.issubdtype(w.dtype, np.integer) and np.issubdtype(t.dtype, np.integer)):
        raise ValueError("workers and tasks must be integers")
    w, t = w.astype(np.int64), t.astype(np.int64)
    if w.size and (w.min() < 0 or w.max() >= c.shape[0] or t.min() < 0 or t.max() >= p.shape[0]):
        raise ValueError("a pair is out of range of confusion's workers or prior's tasks")
    if np.unique(w * p.shape[0] + t).size != w.size:
        raise ValueError("a (worker, task) pair is given twice")
    vq = None
    if vote_quality is not None:
        vq = np.asarray(vote_quality, dtype=np.float64)
        if vq.shape != w.shape or not np.all((vq >= 0) & (vq <= 1)):
            raise ValueError("vote_quality must hold one quality in [0, 1] per pair")
    return _log_probabilities(c), _log_probabilities(p), w, t, vq


def _log_probabilities(p: np.ndarray) -> np.ndarray:
    """``log`` of checked probabilities (any shape), a zero counting as ``1e-300``."""
    return np.log(np.maximum(p, 1e-300))


def _vote_prior(vote_prior, vq, shape) -> np.ndarray:
    """The log of the symmetric vote's prior, checked like ``prior``."""
    if vq is None:
        raise ValueError("vote_prior is the prior of the symmetric vote: give vote_quality too")
    p = np.asarray(vote_prior, dtype=np.float64)
    if p.shape != shape or not np.all(np.isfinite(p)) or p.min() < 0:
        raise ValueError(f"vote_prior must hold one distribution per task, shape {shape}")
    if not np.allclose(p.sum(axis=1), 1.0):
        raise ValueError("each row of vote_prior must be a distribution over the K labels")
    return _log_probabilities(p)


def _vote_weights(q: np.ndarray, k: int) -> np.ndarray:
    """The symmetric model's vote weight of each answer, ``log(q (K - 1) / (1 - q))``, with
    ``q`` clipped as the labels export clips it (``[EPS, 1 - EPS]``)."""
    q = np.clip(q, EPS, 1.0 - EPS)
    return np.log(q * (k - 1) / (1.0 - q))


def _patterns(k: int, s: int) -> np.ndarray:
    """Every answer pattern of ``s`` workers, shape (K^s, s)."""
    return np.array(list(itertools.product(range(k), repeat=s)), dtype=np.int64).reshape(k**s, s)


def _exact(log_c, log_prior, w, vote_and_prior) -> np.ndarray:
    """The exact sum over every pattern for tasks of ``s`` workers each, shape (T,);
    ``vote_and_prior`` is the symmetric vote's weights (or None) and log prior (T, K)."""
    vote, log_vote = vote_and_prior
    k = log_prior.shape[1]
    patterns = _patterns(k, w.shape[1])
    chunk = max(1, _CHUNK // (patterns.shape[0] * k))
    out = np.empty(w.shape[0])
    for lo in range(0, w.shape[0], chunk):
        sl = slice(lo, lo + chunk)
        joint = log_prior[sl, None, :].copy()  # (T, 1, K) -> (T, patterns, K)
        for i in range(w.shape[1]):
            joint = joint + log_c[w[sl, i]][:, :, patterns[:, i]].transpose(0, 2, 1)
        joint = np.exp(joint)
        out[sl] = _right(joint, log_vote[sl], patterns, None if vote is None else vote[sl])
    return out


def _right(joint, log_prior, answers, vote) -> np.ndarray:
    """``sum over patterns`` of the vote's probability of being right, shape (T,).

    ``joint`` is ``P(c, a)`` (or ``P(c | a)``), shape (T, A, K); ``answers`` the patterns,
    shape (A, s) or (T, A, s); ``vote`` the symmetric vote's weights, shape (T, s), or None
    for the Dawid–Skene vote; ``log_prior`` the log prior of that vote's scores, (T, K)."""
    if vote is None:
        return joint.max(axis=2).sum(axis=1)
    k = joint.shape[2]
    answers = np.broadcast_to(answers, (joint.shape[0], *answers.shape[-2:]))
    scores = np.repeat(log_prior[:, None, :], answers.shape[1], axis=1)
    for c in range(k):
        scores[:, :, c] += np.sum(np.where(answers == c, vote[:, None, :], 0.0), axis=2)
    # the export's tie rule (multiclass._tolerance and _vote): the highest label within
    # TIE_RTOL (1 + range of the log prior + sum of |w|) of the best score
    tol = TIE_RTOL * (1.0 + np.ptp(log_prior, axis=1) + np.abs(vote).sum(axis=1))
    tied = scores >= scores.max(axis=2, keepdims=True) - tol[:, None, None]
    chosen = k - 1 - np.argmax(tied[:, :, ::-1], axis=2)  # (T, A): the highest tied label
    return np.take_along_axis(joint, chosen[:, :, None], axis=2)[:, :, 0].sum(axis=1)


def _sampled(log_c, log_prior, w, vote_and_prior, n_samples, rng) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo over answer patterns drawn from the model: each pattern counts the vote's
    probability of being right given it. Per task: the mean and its standard error."""
    vote, log_vote = vote_and_prior
    t_all, s = w.shape
    k = log_prior.shape[1]
    chunk = max(1, _CHUNK // (n_samples * max(s, 1) * k))
    mean, error = np.empty(t_all), np.empty(t_all)
    prior_cdf = np.cumsum(np.exp(log_prior), axis=1)
    c_cdf = np.cumsum(np.exp(log_c), axis=2)
    for lo in range(0, t_all, chunk):
        sl = slice(lo, lo + chunk)
        rows = np.arange(w[sl].shape[0])[:, None]
        truth = _draw(prior_cdf[sl][:, None, :], rng, (w[sl].shape[0], n_samples))
        answers = np.empty((w[sl].shape[0], n_samples, s), dtype=np.int64)
        posterior = np.repeat(log_prior[sl][:, None, :], n_samples, axis=1)
        for i in range(s):
            cdf = c_cdf[w[sl, i]][rows, truth]  # (T, samples, K)
            answers[:, :, i] = _draw(cdf, rng, truth.shape)
            posterior += log_c[w[sl, i]].transpose(0, 2, 1)[rows, answers[:, :, i]]
        posterior = np.exp(posterior - posterior.max(axis=2, keepdims=True))
        posterior /= posterior.sum(axis=2, keepdims=True)
        right = _right_each(posterior, log_vote[sl], answers, None if vote is None else vote[sl])
        mean[sl] = right.mean(axis=1)
        error[sl] = right.std(axis=1, ddof=1) / np.sqrt(n_samples)
    return mean, error


def _right_each(posterior, log_prior, answers, vote) -> np.ndarray:
    """The vote's probability of being right given each drawn pattern, shape (T, samples)."""
    if vote is None:
        return posterior.max(axis=2)
    t, a = posterior.shape[:2]
    # _right sums over patterns; one pattern at a time keeps them apart.
    flat = _right(
        posterior.reshape(t * a, 1, -1),
        np.repeat(log_prior, a, axis=0),
        answers.reshape(t * a, 1, -1),
        np.repeat(vote, a, axis=0),
    )
    return flat.reshape(t, a)


def _draw(cdf: np.ndarray, rng: np.random.Generator, shape) -> np.ndarray:
    """One label per entry from the distributions whose cumulative sums are ``cdf`` (last
    axis), shape ``shape``."""
    u = rng.random(shape)[..., None]
    return np.minimum(np.sum(u >= cdf, axis=-1), cdf.shape[-1] - 1)
