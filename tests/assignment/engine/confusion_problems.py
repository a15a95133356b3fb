"""Crowds under Dawid-Skene confusion matrices that the confusion tests share (not a test
module): matrices leaning to the right label, one-coin matrices and small random problems with
them. Their Dawid-Skene accuracy and brute-force optimum are the benchmarks' own
(``benchmarks/confusion_crowds.py``)."""

from __future__ import annotations

import numpy as np

from assignment.engine.problem import AssignmentProblem


def leaning_confusion(rng, n: int, k: int, concentration: float = 3.0) -> np.ndarray:
    """(n, K, K): row c of each worker a Dirichlet draw leaning to label c (asymmetric)."""
    rows = [rng.dirichlet(np.full(k, 1.0) + concentration * np.eye(k)[c], size=n) for c in range(k)]
    return np.stack(rows, axis=1)


def one_coin(q: np.ndarray, k: int) -> np.ndarray:
    """(n, K, K): right with probability q[i], else each wrong label with (1 - q[i]) / (K - 1)."""
    c = np.repeat(((1 - q) / (k - 1))[:, None, None], k, axis=1).repeat(k, axis=2)
    c[:, np.arange(k), np.arange(k)] = q[:, None]
    return c


def accuracy_under_priors(confusion: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """``Q[i, j] = sum_c pi_jc C_i[c, c]``: each worker's accuracy under each task's prior."""
    return np.einsum("jc,icc->ij", prior, confusion)


def random_problem(seed, *, n=8, m=6, k=3, per_task=3, per_worker=3, budget=14, mask=False):
    """A random crowd of ``n`` workers with leaning matrices, ``m`` tasks with Dirichlet priors."""
    rng = np.random.default_rng(seed)
    confusion = leaning_confusion(rng, n, k)
    prior = rng.dirichlet(np.full(k, 2.0), size=m)
    eligible = rng.random((n, m)) < 0.7 if mask else None
    return AssignmentProblem(
        accuracy_under_priors(confusion, prior),
        max_workers_per_task=per_task,
        max_tasks_per_worker=rng.integers(1, per_worker + 1, n),
        budget=budget,
        prior=prior,
        eligible=eligible,
        n_labels=k,
        confusion=confusion,
    )
