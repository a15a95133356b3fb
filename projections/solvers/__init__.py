"""IHT-family solvers over structured-sparsity sets (Yang et al., ICML 2017, section 3).

* :func:`iht` — iterative hard thresholding, Algorithm 1: ``w <- P(w - step * grad f(w))``.
* :func:`stochastic_iht` — the same with a stochastic (mini-batch) gradient
  (Nguyen, Needell & Woolf 2014).
* :func:`gradmp` — gradient matching pursuit, Algorithm 2 (CoSaMP for general losses,
  Needell & Tropp 2009).
* :func:`group_iht` — IHT and IHT-FC (fully corrective) with the greedy projection onto
  overlapping group sparsity, :func:`group_projection` (Jain, Rao & Dhillon, NIPS 2016).
* :func:`exclusive_lasso` — the convex baseline of section 5.1: proximal gradient (FISTA) on
  ``f(w) + lam/2 sum_g ||w_g||_1^2`` with the closed-form :func:`prox_exclusive_lasso` for
  disjoint groups, or :func:`prox_exclusive_lasso_overlapping` (an iterative, certified prox)
  for overlapping ones such as the rows and the columns of a matrix.
* :func:`dual_averaging` — online dual averaging with a hard-thresholding projection (DA-IHT),
  and :func:`graph_da` with head and tail projections onto connected supports (GraphDA; Zhou,
  Chen & Ying, KDD 2019).
* :func:`frank_wolfe` and :func:`cogent` — the convex competitors of Jain, Rao & Dhillon's
  Figures 1 and 2: Frank–Wolfe (Tewari, Ravikumar & Dhillon 2011) and CoGEnT (Rao, Shah &
  Wright 2015) on ``min f(w) s.t. ||w||_G <= tau``, the latent overlapping group norm, or with
  ``per_group`` on the ball of the sparse overlapping groups (SoG) atoms.
* :class:`FreeIntercept` and :func:`with_intercept_column` — an unpenalised intercept: the
  design gets a column of ones and the projection leaves that last weight free.

``P`` is any callable projection; :func:`tvcs_projection` builds the TVCS one (with the doubled
caps GradMP needs), :func:`exclusive_groups_projection` the one onto a single view of groups and
a total (rows only or columns only). Losses are duck-typed (:class:`Loss`,
:class:`StochasticOracle`; :mod:`~projections.solvers.losses`). Every solver returns a
:class:`SolverResult`; how they share one loop and when they stop:
docs/design.md#iht-family-solvers.

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

from projections.solvers.conditional_gradient import cogent, frank_wolfe
from projections.solvers.dual_averaging import dual_averaging, graph_da
from projections.solvers.exclusive_lasso import (
    exclusive_lasso,
    exclusive_lasso_penalty,
    prox_exclusive_lasso,
    prox_exclusive_lasso_overlapping,
    views_from_groups,
)
from projections.solvers.gradmp import gradmp
from projections.solvers.group_iht import group_iht, group_projection
from projections.solvers.iht import SCHEDULE_SHIFT, SCHEDULES, iht, stochastic_iht
from projections.solvers.intercept import (
    FreeIntercept,
    InterceptProjectionResult,
    with_intercept_column,
)
from projections.solvers.losses import (
    LeastSquares,
    Logistic,
    Loss,
    SquaredHinge,
    StochasticOracle,
)
from projections.solvers.projection import (
    ExclusiveGroupsProjection,
    TVCSProjection,
    double_caps,
    exclusive_groups_projection,
    tvcs_projection,
)
from projections.solvers.result import SolverResult

__all__ = [
    "SCHEDULES",
    "SCHEDULE_SHIFT",
    "ExclusiveGroupsProjection",
    "FreeIntercept",
    "InterceptProjectionResult",
    "LeastSquares",
    "Logistic",
    "Loss",
    "SolverResult",
    "SquaredHinge",
    "StochasticOracle",
    "TVCSProjection",
    "cogent",
    "double_caps",
    "dual_averaging",
    "exclusive_groups_projection",
    "exclusive_lasso",
    "exclusive_lasso_penalty",
    "frank_wolfe",
    "gradmp",
    "graph_da",
    "group_iht",
    "group_projection",
    "iht",
    "prox_exclusive_lasso",
    "prox_exclusive_lasso_overlapping",
    "stochastic_iht",
    "tvcs_projection",
    "views_from_groups",
    "with_intercept_column",
]
