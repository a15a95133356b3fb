"""``tvcs-iht``: stochastic iterative hard thresholding with the exact TVCS projection.

Yang et al. (ICML 2017) §5.2 and supplementary §4: ascend the smooth surrogate of expected
accuracy (:mod:`assignment.engine.surrogate`) by stochastic gradient steps and project every
iterate onto the caps with the exact TVCS projection (Algorithm 1 with a stochastic gradient,
Nguyen, Needell & Woolf 2014). The iterate ``X`` is kept in the box ``[0, 1]`` (a worker's vote
weight); the projection onto ``{X in [0, 1]^(n x m) : supp(X) respects the caps}`` keeps, for
``Y = X + step * grad``, the support maximising ``sum gain(Y_ij)`` with ``gain(y) = y^2`` on
``(0, 1]``, ``2 y - 1`` above 1 and 0 below 0, and clips ``Y`` to ``[0, 1]`` on it: the TVCS
projection of ``sqrt(gain(Y))`` does exactly that. Consecutive projections are warm-started.

The assignment is the support of ``X``. Its exact expected accuracy is evaluated every
``eval_every`` iterations and the best support seen is returned, so the result is never worse
than the starting point: the projection of the linear weights ``(2 Q - 1)^2``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from assignment.engine.accuracy import expected_accuracy
from assignment.engine.problem import AssignmentProblem
from assignment.engine.surrogate import Surrogate
from projections.tvcs import project

__all__ = ["IHTOutcome", "tvcs_iht"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IHTOutcome:
    assignment: np.ndarray
    expected_accuracy: float
    start_accuracy: float
    iterations: int
    history: list = field(default_factory=list)  # (iteration, exact accuracy of the support)
    message: str = ""


def _box_gain(y: np.ndarray) -> np.ndarray:
    return np.where(y > 1.0, 2.0 * y - 1.0, np.where(y > 0.0, y * y, 0.0))


def tvcs_iht(
    problem: AssignmentProblem,
    *,
    rng: np.random.Generator,
    max_iter: int = 100,
    step: float = 5.0,
    batch_size: int = 4,
    temperature: float = 1.0,
    eval_every: int = 10,
    progress=None,
    time_limit: float | None = None,
) -> IHTOutcome:
    """Run stochastic IHT; see the module docstring for the method.

    Parameters
    ----------
    problem : AssignmentProblem
    rng : numpy.random.Generator
        Source of the answer samples.
    max_iter : int
        Number of stochastic gradient steps.
    step : float
        Step size of iteration ``t`` is ``step / sqrt(1 + t / 10)``.
    batch_size, temperature
        Passed to :class:`~assignment.engine.surrogate.Surrogate`.
    eval_every : int
        Exact evaluation period.
    progress : callable, optional
        ``progress(fraction, message)``.
    time_limit : float, optional
        Stop after this many seconds (the best support so far is returned).
    """
    start = time.perf_counter()
    q, prior, structure = problem.quality, problem.prior, problem.structure
    oracle = Surrogate(problem, temperature=temperature, batch_size=batch_size)
    first = project(problem.mask(np.abs(2.0 * q - 1.0)), structure)
    x = first.support.astype(np.float64)
    warm = first.warm_start
    best = first.support
    best_acc = start_acc = expected_accuracy(q, best, prior=prior)
    history = [(0, start_acc)]
    iterations = 0
    message = f"{max_iter} iterations"
    for t in range(1, max_iter + 1):
        _, grad = oracle.value_and_gradient(x, rng)
        y = x + step / np.sqrt(1.0 + t / 10.0) * grad
        res = project(np.sqrt(problem.mask(_box_gain(y))), structure, warm_start=warm)
        warm = res.warm_start
        x = np.where(res.support, np.clip(y, 0.0, 1.0), 0.0)
        iterations = t
        if t % eval_every == 0 or t == max_iter:
            acc = expected_accuracy(q, res.support, prior=prior)
            history.append((t, acc))
            if acc > best_acc:
                best, best_acc = res.support, acc
            logger.debug("tvcs-iht %d: support accuracy %.5f (best %.5f)", t, acc, best_acc)
            if progress is not None:
                progress(t / max_iter, f"iteration {t}/{max_iter}, best accuracy {best_acc:.4f}")
        if time_limit is not None and time.perf_counter() - start > time_limit:
            message = f"stopped by the time limit after {t} iterations"
            break
    return IHTOutcome(best, best_acc, start_acc, iterations, history, message)
