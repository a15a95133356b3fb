"""Crowds under Dawid–Skene confusion matrices, as the confusion benchmarks draw them
(``greedy_confusion.py`` describes them), the Dawid–Skene vote's accuracy of an assignment, and
the brute-force optimum of a tiny problem, which the confusion tests check greedy against too."""

from __future__ import annotations

import itertools
import math

import numpy as np

from assignment.engine.confusion import confusion_accuracy
from assignment.engine.problem import AssignmentProblem

MAX_WORKERS_PER_TASK = 6


def crowd(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Confusion matrices (n, K, K): one-coin, biased and class-expert workers, a third each,
    mixed with 1% of the uniform answer."""
    kind = rng.permutation(np.arange(n) % 3)
    confusion = np.empty((n, k, k))
    for i in range(n):
        q = rng.uniform(0.55, 0.85) if kind[i] == 0 else rng.uniform(0.6, 0.9)
        c = np.full((k, k), (1 - q) / (k - 1))
        np.fill_diagonal(c, q)
        if kind[i] == 1:
            beta = rng.uniform(0.3, 0.6)
            c = (1 - beta) * c + beta * np.eye(k)[rng.integers(k)][None, :]
        elif kind[i] == 2:
            c = np.full((k, k), 1.0 / k)
            expert = rng.integers(k)
            c[expert] = 0.05 / (k - 1)
            c[expert, expert] = 0.95
        confusion[i] = 0.99 * c + 0.01 / k
    return confusion


def skewed_priors(rng: np.random.Generator, k: int, m: int) -> np.ndarray:
    """(m, K): each task's prior Dirichlet(20 b) around the base ``b`` proportional to
    ``K, K - 1, ..., 1``, every label kept above 1e-6."""
    base = np.arange(k, 0, -1, dtype=float)
    prior = np.clip(rng.dirichlet(20 * base / base.sum(), size=m), 1e-6, None)
    return prior / prior.sum(axis=1, keepdims=True)


def problem_of_answers(prior: np.ndarray, confusion: np.ndarray, answers: int) -> AssignmentProblem:
    """``answers`` answers a task: at most ``MAX_WORKERS_PER_TASK`` workers a task,
    ``ceil(1.5 answers m / n)`` tasks a worker, a budget of ``answers m``; quality each worker's
    accuracy under the task's prior, ``Q[i, j] = sum_c pi_jc C_i[c, c]``."""
    m, k = prior.shape
    n = confusion.shape[0]
    return AssignmentProblem(
        np.einsum("jc,icc->ij", prior, confusion),
        max_workers_per_task=MAX_WORKERS_PER_TASK,
        max_tasks_per_worker=math.ceil(1.5 * answers * m / n),
        budget=answers * m,
        prior=prior,
        n_labels=k,
        confusion=confusion,
    )


def ds_accuracy(problem: AssignmentProblem, workers, tasks) -> float:
    """The Dawid–Skene vote's expected accuracy of the pairs under the problem's matrices."""
    return confusion_accuracy(
        problem.confusion,
        np.asarray(workers, np.int64),
        np.asarray(tasks, np.int64),
        prior=problem.prior_distribution,
    ).expected_accuracy


def brute_force_optimum(problem: AssignmentProblem) -> float:
    """The best Dawid–Skene accuracy over every feasible assignment (tiny problems only)."""
    n, m = problem.shape
    every = [(i, j) for i in range(n) for j in range(m)]
    best = 0.0
    for size in range(problem.budget + 1):
        for chosen in itertools.combinations(every, size):
            workers = np.array([i for i, _ in chosen], np.int64)
            tasks = np.array([j for _, j in chosen], np.int64)
            if problem.is_feasible_pairs(workers, tasks):
                best = max(best, ds_accuracy(problem, workers, tasks))
    return best
