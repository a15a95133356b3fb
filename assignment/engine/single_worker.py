"""At most one worker per task: the exact optimum by one projection.

When no task may take more than one worker (``max_workers_per_task <= 1``), a task's expected
accuracy depends on its one worker alone, so the expected accuracy of an assignment ``S`` is

    A(S) = (1 / m) * (sum_j A_j(nobody) + sum_{(i, j) in S} g_ij),
    g_ij = A_j(worker i alone) - A_j(nobody) >= 0

(a Bayes vote never does worse than the prior alone): linear in the pairs. Maximising it under
the per-worker caps, the budget and the eligibility mask is maximising ``sum_S g`` over the
supports of the TVCS, which is what the exact TVCS projection of ``V = sqrt(g)`` does (its
support maximises ``sum_S V^2``; ``docs/design.md``, "The TVCS projection"). So one projection
gives the optimum, where the stochastic steps and greedy only approach it (greedy is not optimal
for such assignment problems: a worker taken early for one task may be the only good one for
another).
"""

from __future__ import annotations

import numpy as np

from assignment.engine.accuracy import _accuracy_rows, _clip, _log_odds
from assignment.engine.multiclass import _log_prior, _units_accuracy
from assignment.engine.problem import AssignmentProblem
from assignment.engine.search_pairs import MAX_SEARCH_PAIRS
from projections.tvcs import project

__all__ = ["single_worker_gains", "single_worker_optimum"]

#: Pairs per block of workers whose gains are computed at once (two labels).
_BLOCK_PAIRS = 1 << 20

#: Gains at most this are taken for none: such a pair adds nothing to any vote.
_NO_GAIN = 1e-15


def single_worker_gains(problem: AssignmentProblem) -> np.ndarray:
    """``g_ij``, the gain in task ``j``'s expected accuracy from worker ``i`` alone, shape
    (n_workers, n_tasks), by the engine's exact accuracy (two labels: its kernel on every pair
    of a block of workers at once, each pair a task with one worker;
    ``K`` labels: the K-class vote's, on the log prior every K-class accuracy takes,
    :func:`~assignment.engine.multiclass._log_prior`)."""
    n, m = problem.shape
    tasks = np.arange(m)
    gains = np.empty((n, m))
    if problem.n_labels == 2:
        prior = problem.prior
        nobody = np.maximum(prior, 1.0 - prior)
        rows = max(1, _BLOCK_PAIRS // max(m, 1))
        for start in range(0, n, rows):  # every pair of a block of workers is a one-worker task
            q = _clip(problem.quality_table[start : start + rows][:, problem.task_column])
            q = q.reshape(-1, 1)
            alone = _accuracy_rows(_log_odds(q), q, np.tile(prior, min(rows, n - start)))
            gains[start : start + rows] = alone.reshape(-1, m)
    else:
        distribution = problem.prior_distribution
        log_prior = _log_prior(distribution)  # the rule every K-class accuracy reads
        nobody = distribution.max(axis=1)
        for i in range(n):
            q = _clip(problem.quality_at(np.full(m, i), tasks))
            gains[i] = _units_accuracy(tasks, q, log_prior)
    return np.maximum(gains - nobody, 0.0)


def single_worker_optimum(problem: AssignmentProblem) -> np.ndarray | None:
    """The assignment of highest expected accuracy when every task takes at most one worker,
    shape (n_workers, n_tasks), bool; None when a task may take more, or above
    ``MAX_SEARCH_PAIRS`` pairs (the gains are a dense (n, m) array). Pairs that add nothing
    are left out."""
    n, m = problem.shape
    if problem.max_workers_per_task.max(initial=0) > 1 or n * m > MAX_SEARCH_PAIRS:
        return None
    gains = single_worker_gains(problem)
    support = project(problem.mask(np.sqrt(gains)), problem.structure).support
    return support & (gains > _NO_GAIN)
