"""Structured-sparsity projections and the IHT-family solvers that use them.

This package is a library in its own right: it imports nothing from Django or from the rest
of tvcs-assign. Its families (the README has an example and the measured table of each):

* :mod:`projections.tvcs` — the exact projection onto a Three-view Cardinality Structure
  (Yang et al., ICML 2017), and :mod:`projections.cardinality` for single views;
* :mod:`projections.solvers` — IHT, GradMP and stochastic IHT on one loop, exclusive LASSO,
  IHT and IHT-FC over overlapping groups, and dual averaging (DA-IHT, GraphDA);
* :mod:`projections.groups` — the greedy projection onto overlapping group sparsity (Jain, Rao
  & Dhillon, NIPS 2016);
* :mod:`projections.multitask` — multi-task feature learning with the l2,1 penalty and DPC safe
  screening (Wang & Ye, ICML 2015);
* :mod:`projections.graph` — head and tail projections onto connected supports (Hegde, Indyk &
  Schmidt, ICML 2015), used by GraphDA (Zhou, Chen & Ying, KDD 2019).
"""

from projections.result import ProjectionResult
from projections.structure import TVCSStructure

__all__ = ["ProjectionResult", "TVCSStructure"]
