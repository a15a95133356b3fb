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
(DESIGN.md §2); ``S'`` includes the ``1 / tau`` factor. Averaging ``batch_size`` samples
lowers the variance.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from assignment.engine.problem import AssignmentProblem

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
    """Stochastic oracle of the surrogate for one problem.

    Parameters
    ----------
    problem : AssignmentProblem
    temperature : float, default 1.0
        Sigmoid temperature ``tau`` (in log-odds units).
    batch_size : int, default 4
        Answer samples averaged per gradient.
    """

    def __init__(self, problem: AssignmentProblem, *, temperature=1.0, batch_size=4) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature!r}")
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        q = np.clip(problem.quality, EPS, 1.0 - EPS)
        self.quality = q
        self.log_odds = np.log(q / (1.0 - q))
        self.prior = problem.prior
        self.temperature = float(temperature)
        self.batch_size = int(batch_size)

    def sample(self, rng: np.random.Generator, batch_size: int | None = None):
        """``(z1, z0)``, each of shape (b, n, m)."""
        b = self.batch_size if batch_size is None else batch_size
        shape = (b, *self.quality.shape)
        # float32 uniforms: half the random bits, and 2^-24 resolution is ample for a coin flip
        correct1 = rng.random(shape, dtype=np.float32) < self.quality
        correct0 = rng.random(shape, dtype=np.float32) < self.quality
        z1 = np.where(correct1, self.log_odds, -self.log_odds)
        z0 = np.where(correct0, -self.log_odds, self.log_odds)
        return z1, z0

    def value_and_gradient(self, x, rng: np.random.Generator):
        """A stochastic estimate of ``F(x)`` and of its gradient, shape (n, m)."""
        z1, z0 = self.sample(rng)
        return surrogate_value_and_gradient(
            x, z1, z0, prior=self.prior, temperature=self.temperature
        )
