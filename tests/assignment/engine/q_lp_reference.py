"""The q-lp LP over every eligible pair, by SciPy's HiGHS: the slow, obviously correct
reference both q-lp forms (column generation, task classes) are checked against."""

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from assignment.engine.baselines import q_lp_weights
from assignment.engine.problem import AssignmentProblem


def full_lp_optimum(problem: AssignmentProblem, credit_cap: float) -> float:
    """The LP over every eligible pair, by SciPy's HiGHS (the formulation q-lp had before)."""
    n, m = problem.shape
    w = q_lp_weights(problem.quality, problem.n_labels)
    allowed = w > 0 if problem.eligible is None else (w > 0) & problem.eligible
    rows, cols = np.nonzero(allowed)
    k = rows.size
    var = np.arange(k)
    A = sp.csr_matrix(
        (
            np.concatenate([w[rows, cols], np.ones(3 * k)]),
            (
                np.concatenate([cols, m + rows, m + n + cols, np.full(k, 2 * m + n)]),
                np.tile(var, 4),
            ),
        ),
        shape=(2 * m + n + 1, k),
    )
    b = np.concatenate(
        [
            np.full(m, credit_cap),
            problem.max_tasks_per_worker,
            problem.max_workers_per_task,
            [problem.budget],
        ]
    )
    res = linprog(-w[rows, cols], A_ub=A, b_ub=b, bounds=(0, 1), method="highs")
    assert res.status == 0
    return -res.fun
