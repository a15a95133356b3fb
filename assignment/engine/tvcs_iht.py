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
``eval_every`` iterations and the best support seen is kept, so the result is never worse than
the starting point: the projection of the linear weights ``(2 Q - 1)^2``.

Final local improvement (``refine=True``, the default). The surrogate smooths away a structure
of the exact objective: under prior 0.5 a task with two workers is exactly as accurate as with
the better one alone (DESIGN.md §4), so IHT supports spend budget on second workers that add
nothing. The pass removes, task by task, every worker whose removal does not lower the task's
exact accuracy (least reliable first), then spends the freed budget and caps by exact marginal
gains with a pair look-ahead (:func:`~assignment.engine.greedy.greedy_assignment` extending the
pruned support). Removals cost nothing and additions only gain, so the pass never lowers the
accuracy.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from assignment.engine.accuracy import column_accuracy, expected_accuracy
from assignment.engine.greedy import greedy_assignment
from assignment.engine.problem import AssignmentProblem
from assignment.engine.surrogate import Surrogate
from projections.tvcs import project

__all__ = ["IHTOutcome", "tvcs_iht"]

logger = logging.getLogger(__name__)

#: The final pass stops after a prune-and-refill round that gains less than this (0.01 point).
FINAL_PASS_MIN_GAIN = 1e-4


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


def _prune_useless(problem: AssignmentProblem, assignment: np.ndarray) -> np.ndarray:
    """Drop workers whose removal does not lower their task's exact accuracy."""
    q, prior = problem.quality, problem.prior
    out = assignment.copy()
    reliability = np.abs(q - 0.5)
    for j in np.flatnonzero(out.sum(axis=0) >= 2):
        members = list(np.flatnonzero(out[:, j]))
        members.sort(key=lambda i: (reliability[i, j], i))
        current = column_accuracy(q[members, j], prior[j])
        for i in list(members):
            if len(members) < 2:
                break
            rest = [k for k in members if k != i]
            without = column_accuracy(q[rest, j], prior[j])
            if without >= current - 1e-12:
                members, current = rest, without
                out[i, j] = False
    return out


def _final_pass(problem: AssignmentProblem, assignment: np.ndarray, accuracy: float):
    """Prune useless workers and refill by exact gains, until a round gains nothing.

    Refilling can add a better worker next to one that then becomes useless (a pair is only as
    accurate as its better member), so prune and refill alternate until a round gains less than
    ``FINAL_PASS_MIN_GAIN`` (the gains shrink geometrically, by about 0.6 a round at 200 x
    10,000); the result is pruned.
    """
    removed = added = rounds = 0
    start = accuracy
    for rounds in range(1, 11):  # noqa: B007 - the count is reported
        pruned = _prune_useless(problem, assignment)
        refilled, info = greedy_assignment(problem, initial=pruned)
        removed += int(assignment.sum() - pruned.sum())
        added += int(refilled.sum() - pruned.sum())
        if info["accuracy"] <= accuracy + 1e-12:
            assignment = pruned
            break
        round_gain = info["accuracy"] - accuracy
        assignment, accuracy = refilled, info["accuracy"]
        if round_gain < FINAL_PASS_MIN_GAIN:
            break
    assignment = _prune_useless(problem, assignment)  # removals here cost nothing
    accuracy = expected_accuracy(problem.quality, assignment, prior=problem.prior)
    if removed == 0 and added == 0:
        return assignment, accuracy, ""
    gain = 100 * (accuracy - start)
    return (
        assignment,
        accuracy,
        f"{rounds} round(s), {removed} removed, {added} added, {gain:+.2f} points",
    )


def tvcs_iht(
    problem: AssignmentProblem,
    *,
    rng: np.random.Generator,
    max_iter: int = 30,
    step: float = 5.0,
    batch_size: int = 4,
    temperature: float = 1.0,
    eval_every: int = 10,
    refine: bool = True,
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
    refine : bool
        Run the final local improvement (see the module docstring).
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
    if refine:
        best, best_acc, summary = _final_pass(problem, best, best_acc)
        if summary:
            message += "; final pass: " + summary
            history.append((iterations, best_acc))
    return IHTOutcome(best, best_acc, start_acc, iterations, history, message)
