"""The crowdsourcing instances of Figure 4 and its budget sweep, shared by the benchmarks.

Yang et al. (ICML 2017, §5.2): ``n`` workers, ``m`` tasks, prior 0.5, quality ``Q`` of shape
``(n, m)``, caps from the cap ratio ``r`` and a budget that is a fraction ``f`` of what the
caps allow::

    max_workers_per_task = max(1, round(r * n))
    max_tasks_per_worker = max(1, round(r * m))
    budget               = max(1, floor(f * min(m * max_workers_per_task,
                                                n * max_tasks_per_worker)))

Figure 4 (``benchmarks/figure4.py``) takes ``f = 0.8`` and uniform quality; the budget sweep
(``benchmarks/budgets.py``) varies ``f`` and the quality model:

* ``uniform``: ``Q ~ U[0.5, 0.9]`` i.i.d., from ``np.random.default_rng([seed, n, m])``;
* ``skill-difficulty``: ``Q = 0.5 + 0.45 * outer(skill, ease)`` with ``skill ~ U[0, 1]`` per
  worker and ``ease ~ U[0.2, 1]`` per task, from ``default_rng([seed, n, m, 1])``;
* ``spammers``: a fifth of the workers (chosen at random) at ``Q = 0.5`` exactly, the others
  ``U[0.6, 0.95]`` i.i.d., from ``default_rng([seed, n, m, 2])``.
"""

from __future__ import annotations

import math

import numpy as np

from assignment.engine.problem import AssignmentProblem

QUALITIES = ("uniform", "skill-difficulty", "spammers")

#: Figure 4's budget: this fraction of what the caps allow.
FIGURE4_FRACTION = 0.8


def caps(n: int, m: int, ratio: float, fraction: float = FIGURE4_FRACTION) -> tuple[int, int, int]:
    """``(max_workers_per_task, max_tasks_per_worker, budget)`` for the cap ratio ``ratio`` and
    the fraction ``fraction`` of what the caps allow (see the module docstring)."""
    per_task = max(1, round(ratio * n))
    per_worker = max(1, round(ratio * m))
    budget = max(1, math.floor(fraction * min(m * per_task, n * per_worker)))
    return per_task, per_worker, budget


def make_quality(n: int, m: int, quality: str, seed: int) -> np.ndarray:
    """``Q`` of shape ``(n, m)`` under the quality model ``quality`` (one of :data:`QUALITIES`)."""
    if quality == "uniform":
        return np.random.default_rng([seed, n, m]).uniform(0.5, 0.9, (n, m))
    if quality == "skill-difficulty":
        rng = np.random.default_rng([seed, n, m, 1])
        skill = rng.uniform(0.0, 1.0, n)
        ease = rng.uniform(0.2, 1.0, m)
        return 0.5 + 0.45 * np.outer(skill, ease)
    if quality == "spammers":
        rng = np.random.default_rng([seed, n, m, 2])
        q = rng.uniform(0.6, 0.95, (n, m))
        q[rng.choice(n, n // 5, replace=False)] = 0.5
        return q
    raise ValueError(f"unknown quality model {quality!r}; choose from {', '.join(QUALITIES)}")


def make_problem(
    n: int,
    m: int,
    ratio: float,
    seed: int,
    *,
    fraction: float = FIGURE4_FRACTION,
    quality: str = "uniform",
) -> AssignmentProblem:
    """The instance of size ``n x m`` with prior 0.5, caps and budget from :func:`caps`;
    by default Figure 4's (uniform quality, ``fraction = 0.8``)."""
    per_task, per_worker, budget = caps(n, m, ratio, fraction)
    return AssignmentProblem(
        make_quality(n, m, quality, seed),
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        prior=0.5,
    )
