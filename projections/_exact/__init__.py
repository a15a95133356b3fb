"""``method="exact"``: the TVCS projection as a min-cost flow, proved optimal on the full input.

The projection keeps ``v`` on the support ``S`` maximising ``sum(v[S] ** 2)`` under every cap: a
maximum-weight b-matching with a cardinality bound, i.e. a min-cost circulation (the constraint
matrix is totally unimodular, Yang et al., ICML 2017, Theorem 2). It is solved on a candidate
graph by cost scaling from dual starting prices, and the node prices certify optimality on the
full input; the result is optimal for the weights rounded to integer costs, and deterministic.
The long story (the network, the four steps, the warm start, the precision) is in
docs/design.md#the-tvcs-projection.

Where things are
----------------
* :mod:`~projections._exact.projection`: :func:`solve`, the steps top to bottom.
* :mod:`~projections._exact.problem`: the input, its groups and the integer cost scale.
* :mod:`~projections._exact.elements`: loops over the elements (weights, arc ends, costs).
* :mod:`~projections._exact.candidates`: step 1, candidate selection (histograms).
* :mod:`~projections._exact.graph`: arc building, the candidate graph and added candidates.
* :mod:`~projections._exact.phases`: step 3, the scaling phases.
* :mod:`~projections._exact.certificate`: step 4, the certificate pass and its pool.
* :mod:`~projections._exact.warm_start`: :class:`ExactState` and the warm start.
* :mod:`~projections._exact.support`: the support read off the flow, zero-cost weights.
* :mod:`~projections._exact.levers`: the tuning constants.
"""

from projections._exact.projection import solve
from projections._exact.warm_start import ExactState

__all__ = ["ExactState", "solve"]
