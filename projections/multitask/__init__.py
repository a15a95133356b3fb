"""Multi-task feature learning with the ℓ2,1 penalty, and DPC safe screening.

Wang & Ye, "Safe screening for multi-task feature learning with multiple data matrices"
(ICML 2015): ``T`` tasks, each with its own design ``X_t`` and response ``y_t``, share one
sparse set of features,

    min_W 1/2 Σ_t ||y_t − X_t w_t||² + λ Σ_ℓ ||W[ℓ, :]||₂,        W = [w_1, ..., w_T] (d x T).

* :class:`MultiTaskProblem` — the data (validated once), ``lambda_max`` in closed form, the
  dual point and the duality gap at any ``W``.
* :func:`mtfl` — FISTA with adaptive restart, stopped on the duality gap.
* :func:`dpc_screen` — the DPC rule: features guaranteed zero at ``λ`` given the solution
  at ``λ₀ >= λ``.
* :func:`mtfl_path` — a decreasing ``λ`` grid with warm starts and sequential DPC.

The maths is in docs/design.md#multi-task-feature-learning-and-dpc-screening.

Example
-------
>>> import numpy as np
>>> from projections.multitask import MultiTaskProblem, mtfl, mtfl_path
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((3, 20, 50))             # 3 tasks, 20 samples, 50 features
>>> W_true = np.zeros((50, 3)); W_true[:4] = rng.standard_normal((4, 3))
>>> Y = np.einsum("tnd,dt->tn", X, W_true)
>>> problem = MultiTaskProblem(X, Y)
>>> result = mtfl(problem, 0.1 * problem.lambda_max)
>>> result.converged, np.flatnonzero(result.support).tolist()
(True, [0, 1, 2, 3])
>>> path = mtfl_path(problem, n_lambdas=10)
>>> bool(np.all(path.rejection_ratios > 0.5))
True
"""

from projections.multitask.dpc import dpc_screen
from projections.multitask.fista import mtfl
from projections.multitask.path import lambda_grid, mtfl_path
from projections.multitask.problem import Certificate, MultiTaskProblem
from projections.multitask.result import MTFLPathResult, MTFLResult, ScreeningResult

__all__ = [
    "Certificate",
    "MTFLPathResult",
    "MTFLResult",
    "MultiTaskProblem",
    "ScreeningResult",
    "dpc_screen",
    "lambda_grid",
    "mtfl",
    "mtfl_path",
]
