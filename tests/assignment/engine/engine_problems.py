"""Small engine problems the solve and tvcs-iht tests share (not a test module)."""

from __future__ import annotations

import numpy as np

from assignment.engine.problem import AssignmentProblem

FAST = {"tvcs-iht": {"max_iter": 15, "eval_every": 5}}


def options(method):
    return FAST.get(method, {})


def make_problem(seed=0, n=12, m=30, r=0.2, **kwargs):
    rng = np.random.default_rng(seed)
    q = kwargs.pop("quality", None)
    if q is None:
        q = rng.uniform(0.5, 0.9, (n, m))
    n, m = q.shape
    per_task = kwargs.pop("max_workers_per_task", max(1, round(r * n)))
    per_worker = kwargs.pop("max_tasks_per_worker", max(1, round(r * m)))
    budget = kwargs.pop("budget", int(0.8 * min(m * np.max(per_task), n * np.max(per_worker))))
    return AssignmentProblem(
        q,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        **kwargs,
    )


def skill_difficulty_problem(seed=0, n=20, m=60, r=0.3):
    """Skill x difficulty quality, ``Q = 0.5 + 0.45 skill_i ease_j``, with the whole budget the
    caps allow: tvcs-iht's steps find better supports than greedy's assignment here (greedy
    gives no task the third and later workers it would need next to a reliable one)."""
    rng = np.random.default_rng(seed)
    quality = 0.5 + 0.45 * np.outer(rng.uniform(0, 1, n), rng.uniform(0.2, 1, m))
    per_task, per_worker = max(1, round(r * n)), max(1, round(r * m))
    budget = min(m * per_task, n * per_worker)
    return make_problem(
        quality=quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
    )


ROBUSTNESS = {
    "spammers (Q = 0.5)": lambda rng: np.where(rng.random((12, 30)) < 0.5, 0.5, 0.8),
    "adversarial (Q < 0.5)": lambda rng: rng.uniform(0.05, 0.95, (12, 30)),
    "near 0 and 1": lambda rng: np.where(rng.random((12, 30)) < 0.5, 1e-9, 1 - 1e-9),
    "exact 0 and 1": lambda rng: rng.integers(0, 2, (12, 30)).astype(float),
    "skill x difficulty": lambda rng: (
        0.5 + 0.45 * np.outer(rng.uniform(0, 1, 12), rng.uniform(0.2, 1, 30))
    ),
}
