"""IHT-family solvers over structured-sparsity sets (Yang et al., ICML 2017, section 3).

* :func:`iht` — iterative hard thresholding, Algorithm 1: ``w <- P(w - step * grad f(w))``.
* :func:`stochastic_iht` — the same with a stochastic (mini-batch) gradient
  (Nguyen, Needell & Woolf 2014).
* :func:`gradmp` — gradient matching pursuit, Algorithm 2 (CoSaMP for general losses,
  Needell & Tropp 2009).

``P`` is any callable projection; :func:`tvcs_projection` builds the TVCS one (with the doubled
caps GradMP needs). Losses are duck-typed (:class:`Loss`, :class:`StochasticOracle`);
:class:`LeastSquares` and :class:`SquaredHinge` are the paper's section 5.1 losses. Every
solver returns a :class:`SolverResult`. The three run one loop (``projections.solvers._loop``):
each supplies its iteration and the loop records the history and stops on the callback, the
solver's own convergence test, no improvement (stochastic IHT) or the time limit, in that order,
each named in :attr:`SolverResult.status`.

Example
-------
>>> import numpy as np
>>> from projections import TVCSStructure
>>> from projections.solvers import LeastSquares, iht, tvcs_projection
>>> rng = np.random.default_rng(0)
>>> A = rng.standard_normal((60, 4, 5))          # 60 samples of 4 x 5 features
>>> w_true = np.zeros((4, 5)); w_true[0, 1], w_true[2, 3] = 1.0, -2.0
>>> loss = LeastSquares(A, np.einsum("nij,ij->n", A, w_true))
>>> caps = TVCSStructure.from_matrix((4, 5), max_per_row=1, max_per_col=1, total=2)
>>> result = iht(loss, tvcs_projection(caps))
>>> result.converged, np.flatnonzero(result.support).tolist()
(True, [1, 13])
"""

from projections.solvers.gradmp import gradmp
from projections.solvers.iht import SCHEDULE_SHIFT, SCHEDULES, iht, stochastic_iht
from projections.solvers.losses import LeastSquares, Loss, SquaredHinge, StochasticOracle
from projections.solvers.projection import TVCSProjection, double_caps, tvcs_projection
from projections.solvers.result import SolverResult

__all__ = [
    "SCHEDULES",
    "SCHEDULE_SHIFT",
    "LeastSquares",
    "Loss",
    "SolverResult",
    "SquaredHinge",
    "StochasticOracle",
    "TVCSProjection",
    "double_caps",
    "gradmp",
    "iht",
    "stochastic_iht",
    "tvcs_projection",
]
