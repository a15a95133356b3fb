"""The smooth surrogate of expected accuracy for ``K >= 2`` labels and its stochastic gradient.

The K-class vote of :mod:`assignment.engine.multiclass`, with the selection ``X_ij`` relaxed to
``[0, 1]`` (it scales the worker's log-weight ``w_ij``) and the vote's indicator replaced by the
softmax ``p_y`` at temperature ``tau``, over answers sampled given each true label::

    F(X) = sum_j sum_y pi_j(y) E p_y(score_j^(y)),
    dF/dX_ij = sum_y pi_j(y) E[ p_y ([a^(y)_ij = y] - p_{a^(y)_ij}) ] w_ij / tau,

estimated without bias by the mean over ``b`` samples (kernels:
:mod:`assignment.engine._sampled_votes_multiclass`). At ``K = 2`` it is the binary
:class:`~assignment.engine.surrogate.Surrogate` term for term, on the same draws; as
``tau -> 0`` on a 0/1 ``X``, ``F / m`` tends to the exact K-class expected accuracy.
Derivation: docs/design.md#the-surrogate-for-k-labels.
"""

from __future__ import annotations

import numpy as np

from assignment.engine import _sampled_votes, _sampled_votes_multiclass
from assignment.engine.problem import AssignmentProblem
from assignment.engine.search_pairs import SearchPairs
from assignment.engine.surrogate import EPS

__all__ = ["MulticlassSurrogate", "multiclass_surrogate_value_and_gradient"]


def _softmax(scores: np.ndarray, temperature: float) -> np.ndarray:
    z = scores / temperature
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def _value_and_slopes(v: np.ndarray, log_prior: np.ndarray, temperature: float, b: int):
    """From ``V`` of shape ``(m, K b, K)`` (draws ordered as in the kernels): the value and
    ``c[j, d, l] = pi_j(y_d) p_{y_d} ([l = y_d] - p_l) / tau``."""
    _, n_draws, k = v.shape
    p = _softmax(v + log_prior[:, None, :], temperature)
    truth = k - 1 - np.arange(n_draws) // b  # y_d
    prior_truth = np.exp(log_prior)[:, truth]  # (m, K b)
    p_truth = p[:, np.arange(n_draws), truth]  # (m, K b)
    value = float(np.sum(prior_truth * p_truth) / b)
    slopes = -p
    slopes[:, np.arange(n_draws), truth] += 1.0
    slopes *= (prior_truth * p_truth / temperature)[:, :, None]
    return value, slopes


def multiclass_surrogate_value_and_gradient(x, answers, weight, *, log_prior, temperature=1.0):
    """Surrogate value and gradient for given answers (the reference formula).

    Parameters
    ----------
    x : ndarray, shape (n, m)
        Current (relaxed) assignment.
    answers : int ndarray, shape (K b, n, m)
        Draw ``d`` answers given the true label ``y_d = K - 1 - d // b`` (sample ``d % b``).
    weight : ndarray, shape (n, m)
        The vote's log-weights ``w``.
    log_prior : ndarray, shape (m, K)
    temperature : float

    Returns
    -------
    value : float
        Mean over the ``b`` samples of ``F``.
    gradient : ndarray, shape (n, m)
    """
    n_draws = answers.shape[0]
    k = log_prior.shape[1]
    b = n_draws // k
    onehot = answers[..., None] == np.arange(k)  # (K b, n, m, K)
    v = np.einsum("dnml,nm->mdl", onehot, x * weight)
    value, slopes = _value_and_slopes(v, log_prior, temperature, b)
    picked = np.einsum("dnml,mdl->nm", onehot, slopes)
    return value, weight * picked / b


class MulticlassSurrogate:
    """Stochastic oracle of the K-class surrogate over a set of pairs: the interface of
    :class:`~assignment.engine.surrogate.Surrogate` (``step``), for any ``n_labels``.

    Parameters
    ----------
    problem : AssignmentProblem
    pairs : SearchPairs, optional
    temperature : float, default 1.0
        Softmax temperature ``tau`` (in log-weight units).
    batch_size : int, default 4
        Answer samples per true label averaged per gradient.
    """

    def __init__(self, problem: AssignmentProblem, *, pairs=None, temperature=1.0, batch_size=4):
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature!r}")
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.pairs = SearchPairs(problem, None) if pairs is None else pairs
        self.n_labels = problem.n_labels
        q = np.clip(self.pairs.quality(), EPS, 1.0 - EPS)
        self.weight = np.log(q * (self.n_labels - 1) / (1.0 - q))
        self.thresholds = _sampled_votes.thresholds(q)
        entries = self.pairs.entries
        self._entries = np.zeros(0, np.int64) if entries is None else entries
        eligible = self.pairs.eligible()
        self.eligible = np.array(np.zeros(0) if eligible is None else eligible, dtype=bool)
        self.n_tasks = problem.n_tasks
        self.log_prior = np.log(problem.prior_distribution)
        self.temperature = float(temperature)
        self.batch_size = int(batch_size)

    def sample(self, seed: int) -> np.ndarray:
        """The answers of step ``seed``: int shape ``(K b, p)``."""
        return _sampled_votes_multiclass.draws(
            seed, self.thresholds, self._entries, self.n_labels, self.batch_size
        )

    def _slopes(self, x: np.ndarray, seed: int):
        v = _sampled_votes_multiclass.vote_sums(
            seed,
            x,
            self._entries,
            self.n_tasks,
            self.weight,
            self.thresholds,
            self.n_labels,
            self.batch_size,
        )
        return _value_and_slopes(v, self.log_prior, self.temperature, self.batch_size)

    def value(self, x: np.ndarray, seed: int) -> float:
        """The sampled surrogate at ``x`` (shape ``(p,)``) for the answers of ``seed``."""
        return self._slopes(np.ascontiguousarray(x, dtype=np.float64), seed)[0]

    def step(self, x: np.ndarray, rng: np.random.Generator, step: float):
        """One stochastic gradient step from ``x``: ``(value, y, projection_input)`` as
        :meth:`assignment.engine.surrogate.Surrogate.step`."""
        seed = int(rng.integers(0, 2**63))
        x = np.ascontiguousarray(x, dtype=np.float64)
        value, slopes = self._slopes(x, seed)
        y, v = _sampled_votes_multiclass.gradient_step(
            seed,
            x,
            self._entries,
            self.n_tasks,
            self.weight,
            self.thresholds,
            np.ascontiguousarray(slopes),
            float(step),
            self.eligible,
        )
        return value, y, v
