"""The smooth surrogate of expected accuracy and its stochastic gradient.

Yang et al. (ICML 2017), supplementary §4. With log-odds ``L_ij = log(Q_ij / (1 - Q_ij))``
(``Q`` clipped to ``[EPS, 1 - EPS]``), answers sampled given the true label,

    Z1_ij = +L_ij with probability Q_ij, else -L_ij      (true label 1)
    Z0_ij = -L_ij with probability Q_ij, else +L_ij      (true label 0)

and ``r_j = log((1 - pi_j) / pi_j)``, the Bayes vote is correct on task j when
``s1_j = sum_i Z1_ij X_ij >= r_j`` (label 1) or ``s0_j = sum_i Z0_ij X_ij < r_j`` (label 0).
Replacing the indicator by the sigmoid ``S(t) = 1 / (1 + exp(-t / tau))`` gives

    F(X) = sum_j [ pi_j E S(s1_j - r_j) + (1 - pi_j) E S(r_j - s0_j) ]

(a sum over tasks, not the mean, so that gradients are O(1)). One sample of each ``Z`` gives the
unbiased stochastic gradient

    dF/dX_ij = pi_j S'(s1_j - r_j) Z1_ij - (1 - pi_j) S'(r_j - s0_j) Z0_ij

whose second term carries the minus sign the printed formula in the paper lacks
(docs/design.md#the-smooth-surrogate); ``S'`` includes the ``1 / tau`` factor. Averaging
``batch_size`` samples
lowers the variance.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from assignment.engine import _sampled_votes
from assignment.engine.problem import AssignmentProblem
from assignment.engine.search_pairs import SearchPairs

__all__ = ["EPS", "Surrogate", "surrogate_value_and_gradient"]

#: Q is clipped to [EPS, 1 - EPS] before taking log-odds.
EPS = 1e-6


def surrogate_value_and_gradient(x, z1, z0, *, prior, temperature: float = 1.0):
    """Surrogate value and gradient for given answer samples.

    Parameters
    ----------
    x : ndarray, shape (n, m)
        Current (relaxed) assignment.
    z1, z0 : ndarray, shape (b, n, m)
        ``b`` samples of the signed log-odds given label 1 and given label 0.
    prior : ndarray, shape (m,)
    temperature : float
        ``tau`` of the sigmoid.

    Returns
    -------
    value : float
        Mean over the ``b`` samples of ``F``.
    gradient : ndarray, shape (n, m)
    """
    r = np.log((1.0 - prior) / prior)
    s1 = np.einsum("bnm,nm->bm", z1, x)
    s0 = np.einsum("bnm,nm->bm", z0, x)
    a1 = expit((s1 - r) / temperature)
    a0 = expit((r - s0) / temperature)
    value = float(np.mean(np.sum(prior * a1 + (1.0 - prior) * a0, axis=1)))
    d1 = prior * a1 * (1.0 - a1) / temperature  # (b, m)
    d0 = (1.0 - prior) * a0 * (1.0 - a0) / temperature
    gradient = (np.einsum("bm,bnm->nm", d1, z1) - np.einsum("bm,bnm->nm", d0, z0)) / z1.shape[0]
    return value, gradient


class Surrogate:
    """Stochastic oracle of the surrogate for one problem, over a set of pairs.

    Answers are drawn by the counter-based generator of
    :mod:`assignment.engine._sampled_votes` from one seed per step, in one pass with the
    gradient (the formula of :func:`surrogate_value_and_gradient`, which :meth:`sample` and the
    tests use as the reference). The iterate, the step and the projection input are vectors
    over the pairs searched, shape ``(p,)``; pairs outside the set stay at 0.

    Parameters
    ----------
    problem : AssignmentProblem
    pairs : SearchPairs, optional
        The pairs searched (:mod:`assignment.engine.search_pairs`); default every pair.
    temperature : float, default 1.0
        Sigmoid temperature ``tau`` (in log-odds units).
    batch_size : int, default 4
        Answer samples averaged per gradient.
    """

    def __init__(
        self,
        problem: AssignmentProblem,
        *,
        pairs: SearchPairs | None = None,
        temperature=1.0,
        batch_size=4,
    ) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature!r}")
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.pairs = SearchPairs(problem, None) if pairs is None else pairs
        q = np.clip(self.pairs.quality(), EPS, 1.0 - EPS)
        self.log_odds = np.log(q / (1.0 - q))
        self.thresholds = _sampled_votes.thresholds(q)
        entries = self.pairs.entries
        self._entries = np.zeros(0, np.int64) if entries is None else entries
        eligible = self.pairs.eligible()
        # a writable copy: a read-only array would be another signature for numba to compile
        self.eligible = np.array(np.zeros(0) if eligible is None else eligible, dtype=bool)
        self.n_tasks = problem.n_tasks
        self.prior = problem.prior
        self.r = np.log((1.0 - self.prior) / self.prior)
        self.temperature = float(temperature)
        self.batch_size = int(batch_size)

    def sample(self, seed: int):
        """The answers of step ``seed``: ``(z1, z0)``, each of shape (b, p)."""
        signs = _sampled_votes.draws(seed, self.thresholds, self._entries, self.batch_size)
        return signs[0] * self.log_odds, -signs[1] * self.log_odds

    def _slopes(self, x: np.ndarray, seed: int):
        """The surrogate's value and the per-task slopes ``(m, 2 b)`` for the answers of
        ``seed``."""
        s1, s0 = _sampled_votes.support_sums(
            seed, x, self._entries, self.n_tasks, self.log_odds, self.thresholds, self.batch_size
        )
        prior, r, tau = self.prior, self.r, self.temperature
        a1 = expit((s1 - r) / tau)
        a0 = expit((r - s0) / tau)
        value = float(np.mean(np.sum(prior * a1 + (1.0 - prior) * a0, axis=1)))
        d1 = prior * a1 * (1.0 - a1) / tau  # (b, m)
        d0 = (1.0 - prior) * a0 * (1.0 - a0) / tau
        return value, np.ascontiguousarray(np.concatenate((d1, d0)).T)

    def step(self, x: np.ndarray, rng: np.random.Generator, step: float):
        """One stochastic gradient step from ``x``.

        Parameters
        ----------
        x : ndarray, shape (p,)
            The iterate at the pairs searched.
        rng : numpy.random.Generator
            Gives the step's seed.
        step : float

        Returns
        -------
        value : float
            The sampled surrogate at ``x``.
        y : ndarray, shape (p,)
            ``x + step * gradient``.
        projection_input : ndarray, shape (p,)
            ``sqrt(gain(y))`` with ineligible pairs 0 (see :mod:`assignment.engine.tvcs_iht`).
        """
        seed = int(rng.integers(0, 2**63))
        x = np.ascontiguousarray(x, dtype=np.float64)
        value, slopes = self._slopes(x, seed)
        y, v = _sampled_votes.gradient_step(
            seed,
            x,
            self._entries,
            self.n_tasks,
            self.log_odds,
            self.thresholds,
            slopes,
            float(step),
            self.eligible,
        )
        return value, y, v
