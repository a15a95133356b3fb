"""Min-cost circulation by cost-scaling push-relabel (private kernel).

Goldberg (1997), "An efficient implementation of a scaling minimum-cost flow algorithm",
J. Algorithms 22(1). Integer capacities and costs; with every cost a multiple of
``n_nodes + 1``, an ``eps = 1`` optimal circulation is optimal (Goldberg & Tarjan 1990).

Two rooms:

* :mod:`projections._mincostflow.graph`: the residual graph, a :class:`ResidualGraph` of
  CSR slot arrays with spare room after every node's arcs and its *active* arcs first; how it
  is built (with flow, or as a skeleton that :func:`layout` completes), how arcs are added,
  and how flows are read back.
* :mod:`projections._mincostflow.scaling`: cost scaling on that graph: choosing the active
  arcs for an eps (:func:`select_active`), the eps-optimality checks (:func:`start_eps`,
  :func:`worst_inactive`), global price updates and the push-relabel :func:`refine`.
"""

from projections._mincostflow.graph import (
    ResidualGraph,
    add_arcs,
    build_residual_graph,
    fill_skeleton,
    flows_by_ident,
    layout,
    skeleton_graph,
)
from projections._mincostflow.scaling import (
    price_update,
    refine,
    select_active,
    start_eps,
    worst_inactive,
)

__all__ = [
    "ResidualGraph",
    "add_arcs",
    "build_residual_graph",
    "fill_skeleton",
    "flows_by_ident",
    "layout",
    "price_update",
    "refine",
    "select_active",
    "skeleton_graph",
    "start_eps",
    "worst_inactive",
]
