"""Head and tail projections onto connected supports of a graph (the weighted graph model).

The model (Hegde, Indyk & Schmidt, ICML 2015; Zhou, Chen & Ying, KDD 2019, Definition 1) is the
set of supports of at most ``sparsity`` nodes that form at most ``n_components`` connected
components. GraphDA approximates the NP-hard projection onto it by a head projection (captures
at least ``c_H`` of the best energy) and a tail projection (leaves out at most ``c_T`` times the
least), both by a binary search over an edge price on the prize-collecting Steiner forest
(``pcst_fast``). The support is a forest of at most ``n_components`` trees with at most
``floor((1 + tolerance) * sparsity)`` nodes; :data:`HEAD_FACTOR` and :data:`TAIL_FACTOR` are the
factors the tests check against brute force (no worst-case constant is proved).

``pcst_fast`` is an optional dependency (``pip install 'tvcs-assign[graph]'``, the
``pcst-fast2`` build); the projections raise :class:`ImportError` saying so when it is missing
or broken. The search and its repairs:
docs/design.md#head-and-tail-projections-onto-connected-supports.
"""

from __future__ import annotations

import functools
import heapq
import math
import time
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from projections.result import ProjectionResult
from projections.tvcs import _check_values, _energy, _for_squares

__all__ = [
    "HEAD_FACTOR",
    "TAIL_FACTOR",
    "Graph",
    "GraphProjection",
    "head_projection",
    "tail_projection",
]

#: ``c_H`` the tests check: the head keeps at least this fraction of the energy of the best
#: connected support of ``sparsity`` nodes (brute force over grids, paths, stars and random
#: graphs of 9 to 12 nodes, Gaussian ``v``, sparsity 2 to 5).
HEAD_FACTOR = 0.7

#: ``c_T`` the tests check: the tail's residual is at most this multiple of the best connected
#: support's, on the same instances. With heavy-tailed ``v``, where the best residual can be
#: tiny, the ratio can be much larger: it is not a worst-case bound.
TAIL_FACTOR = 4.0

PCST_MISSING = (
    "the head and tail projections need the prize-collecting Steiner tree solver pcst_fast: "
    "pip install 'tvcs-assign[graph]' (or pip install pcst-fast2)"
)


@functools.cache
def _pcst():
    """``pcst_fast.pcst_fast``, once checked on an instance with a known answer."""
    try:
        from pcst_fast import pcst_fast
    except ImportError as exc:
        raise ImportError(PCST_MISSING) from exc
    # path 0-1-2-3 with prizes on its middle: the answer is nodes {1, 2} and edge 1
    nodes, edges = pcst_fast(
        np.array([[0, 1], [1, 2], [2, 3]], dtype=np.int64),
        np.array([0.0, 5.0, 5.0, 0.0]),
        np.ones(3),
        -1,
        1,
        "gw",
        0,
    )
    if sorted(np.asarray(nodes).tolist()) != [1, 2] or np.asarray(edges).tolist() != [1]:
        raise ImportError(
            "this pcst_fast build returns wrong results (pcst_fast 1.0.10 does under NumPy 2); "
            + PCST_MISSING
        )
    return pcst_fast


def _checked_edges(edges, n_nodes: int) -> np.ndarray:
    """``edges`` as int64 of shape (n_edges, 2), joining distinct nodes in ``[0, n_nodes)``."""
    arr = np.asarray(edges)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)  # [] is float64: no edge, whatever its dtype
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
        raise ValueError(
            f"edges must be integers of shape (n_edges, 2), got shape {arr.shape} and dtype "
            f"{arr.dtype}"
        )
    if arr.min() < 0 or arr.max() >= n_nodes:
        raise ValueError(f"edges must join nodes in [0, {n_nodes}), got {arr.min()}..{arr.max()}")
    if np.any(arr[:, 0] == arr[:, 1]):
        bad = int(np.flatnonzero(arr[:, 0] == arr[:, 1])[0])
        raise ValueError(f"edges must not be self-loops, got {arr[bad].tolist()} at edge {bad}")
    return arr.astype(np.int64)


def _checked_costs(costs, n_edges: int) -> np.ndarray:
    """``costs`` as float64 of shape (n_edges,), positive and finite; ones when None."""
    if costs is None:
        return np.ones(n_edges)
    arr = np.asarray(costs)
    if arr.dtype.kind not in "iuf" or arr.shape != (n_edges,):
        raise ValueError(f"costs must be {n_edges} positive finite numbers, got {costs!r}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"costs must be {n_edges} positive finite numbers, got {costs!r}")
    return arr


@dataclass(frozen=True, eq=False)
class Graph:
    """An undirected graph on nodes ``0 .. n_nodes - 1`` with positive edge costs.

    ``Graph(n_nodes, edges, costs)``, :meth:`from_edges` and :meth:`grid` all validate: edges
    and costs may be given as any array-like and are stored as the arrays below.

    Parameters
    ----------
    n_nodes : int
        Number of nodes, ``>= 1``.
    edges : array-like of int, shape (n_edges, 2)
        Endpoints of each edge, in ``[0, n_nodes)``; no self-loops. ``[]`` is no edge.
    costs : array-like of float, shape (n_edges,), optional
        Positive finite cost of each edge; None (the default) gives every edge cost 1.

    Attributes
    ----------
    n_nodes : int
    edges : ndarray of int64, shape (n_edges, 2)
    costs : ndarray of float64, shape (n_edges,)
        The ``c`` of the weighted graph model.

    Raises
    ------
    ValueError
        ``n_nodes`` not a positive integer, ``edges`` not of shape ``(n_edges, 2)`` with
        integer endpoints in range and no self-loop, ``costs`` of another length or not
        positive and finite.
    """

    n_nodes: int
    edges: np.ndarray
    costs: np.ndarray | None = None

    def __post_init__(self) -> None:
        n_nodes = self.n_nodes
        if isinstance(n_nodes, bool) or not isinstance(n_nodes, Integral) or n_nodes < 1:
            raise ValueError(f"n_nodes must be a positive integer, got {n_nodes!r}")
        edges = _checked_edges(self.edges, int(n_nodes))
        costs = _checked_costs(self.costs, edges.shape[0])
        object.__setattr__(self, "n_nodes", int(n_nodes))
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "costs", costs)

    @classmethod
    def from_edges(cls, n_nodes, edges, costs=None) -> Graph:
        """The graph of ``edges`` on ``n_nodes`` nodes; ``costs=None`` gives every edge cost 1.

        The same as ``Graph(n_nodes, edges, costs)`` (see the class for the parameters).

        Returns
        -------
        Graph

        Raises
        ------
        ValueError
            As the class does.
        """
        return cls(n_nodes, edges, costs)

    @classmethod
    def grid(cls, rows: int, cols: int) -> Graph:
        """The ``rows x cols`` grid graph, node ``r * cols + c``, unit costs (GraphDA, §5.1)."""
        for name, value in (("rows", rows), ("cols", cols)):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        ids = np.arange(rows * cols).reshape(rows, cols)
        right = np.column_stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()])
        down = np.column_stack([ids[:-1].ravel(), ids[1:].ravel()])
        return cls.from_edges(rows * cols, np.vstack([right, down]))

    def n_components(self, support) -> int:
        """Number of connected components of the subgraph induced by ``support`` (bool, p)."""
        mask = np.asarray(support, dtype=bool).reshape(-1)
        if mask.shape != (self.n_nodes,):
            raise ValueError(f"support must have {self.n_nodes} entries, got {mask.size}")
        nodes = np.flatnonzero(mask)
        if nodes.size == 0:
            return 0
        inside = mask[self.edges[:, 0]] & mask[self.edges[:, 1]]
        local = np.full(self.n_nodes, -1)
        local[nodes] = np.arange(nodes.size)
        e = local[self.edges[inside]]
        adj = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(nodes.size, nodes.size))
        return int(connected_components(adj, directed=False)[0])


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_options(graph, sparsity, n_components, tolerance, max_iter) -> tuple[int, int]:
    """Validate the common arguments; return the target range ``(low, high)`` of sizes."""
    if not isinstance(graph, Graph):
        raise ValueError(f"graph must be a projections.graph.Graph, got {type(graph).__name__}")
    sparsity = _check_int(sparsity, "sparsity", 1)
    if sparsity > graph.n_nodes:
        raise ValueError(
            f"sparsity ({sparsity}) must not exceed the graph's n_nodes ({graph.n_nodes})"
        )
    n_components = _check_int(n_components, "n_components", 1)
    if n_components > sparsity:
        raise ValueError(f"n_components ({n_components}) must not exceed sparsity ({sparsity})")
    _check_int(max_iter, "max_iter", 1)
    if (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, Real)
        or not 0 <= tolerance < math.inf
    ):
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    return sparsity, math.floor((1.0 + tolerance) * sparsity + 1e-9)


def _forest(prizes, graph: Graph, lam: float, n_components: int):
    """The pruned GW forest for edge costs ``lam * c``: a bool mask of its nodes (n_nodes,) and
    its edges' endpoints, shape (n_forest_edges, 2)."""
    nodes, edge_ids = _pcst()(graph.edges, prizes, lam * graph.costs, -1, n_components, "gw", 0)
    mask = np.zeros(graph.n_nodes, dtype=bool)
    mask[np.asarray(nodes, dtype=np.int64)] = True
    return mask, graph.edges[np.asarray(edge_ids, dtype=np.int64)]


def _neighbours(edges: np.ndarray, n_nodes: int):
    """CSR adjacency ``(indptr, indices)`` of ``edges`` (both directions of every edge)."""
    both = np.vstack([edges, edges[:, ::-1]])
    order = np.argsort(both[:, 0], kind="stable")
    indptr = np.searchsorted(both[order, 0], np.arange(n_nodes + 1))
    return indptr, both[order, 1]


def _grow(support: np.ndarray, prizes, graph: Graph, size: int) -> np.ndarray:
    """Add the heaviest neighbour of ``support`` (prize > 0) until it has ``size`` nodes.

    Each added node touches the support, so no component is created; from an empty support
    the heaviest node starts it. Returns a new mask.
    """
    support = support.copy()
    indptr, indices = _neighbours(graph.edges, graph.n_nodes)
    frontier = np.zeros(graph.n_nodes, dtype=bool)
    for u in np.flatnonzero(support):
        frontier[indices[indptr[u] : indptr[u + 1]]] = True
    while support.sum() < size:
        candidates = np.where((frontier | ~support.any()) & ~support, prizes, 0.0)
        u = int(np.argmax(candidates))
        if candidates[u] <= 0.0:
            break
        support[u] = True
        frontier[indices[indptr[u] : indptr[u + 1]]] = True
    return support


def _trim(support: np.ndarray, forest_edges: np.ndarray, prizes, size: int) -> np.ndarray:
    """Remove the lightest leaf of the forest until it has ``size`` nodes. Returns a new mask.

    Removing a leaf (or an isolated node) never splits a tree, so the number of components does
    not grow.
    """
    support = support.copy()
    indptr, indices = _neighbours(forest_edges, support.size)
    degree = np.diff(indptr)
    heap = [(prizes[u], u) for u in np.flatnonzero(support) if degree[u] <= 1]
    heapq.heapify(heap)
    while support.sum() > size and heap:
        _, u = heapq.heappop(heap)
        if not support[u]:
            continue
        support[u] = False
        for w in indices[indptr[u] : indptr[u + 1]]:
            if support[w]:
                degree[w] -= 1
                if degree[w] == 1:
                    heapq.heappush(heap, (prizes[w], w))
    return support


#: The lowest edge price the search tries, relative to ``lam_max`` (:func:`_search`).
_MIN_PRICE_RATIO = 1e-12


def _search(prizes, graph: Graph, low: int, high: int, n_components: int, max_iter: int, start):
    """GraphDA's Algorithm 2: bisect the edge price until the forest has ``low..high`` nodes.

    Returns ``(candidates, lam, iterations, landed)``: the supports to choose from (bool masks,
    each in the model) and the last price. ``lam`` starts at ``start * sum(prizes)`` when a warm
    start is given (then moves by factors of 4 until it brackets the target), else at half of
    ``lam_max = 2 sum(prizes) / min(c)``, where every edge costs more than all prizes together
    and the forest is at most ``n_components`` single nodes; between a bracket ``lo > 0`` and
    ``hi`` the next price is their geometric mean. When no price lands in the range within
    ``max_iter`` forests (the size can jump over it), the candidates are the forest of the
    lowest price with at most ``high`` nodes (Algorithm 2's ``lambda_h``), grown to ``low``,
    and the forest of the highest price with more, trimmed to ``high`` by removing leaves.
    """
    total = float(prizes.sum())
    lam_max = 2.0 * total / float(graph.costs.min(initial=1.0))
    # Below this price every edge is all but free: the forest no longer grows, and PCST on
    # subnormal costs may never return. A warm start carried across calls that all fell short
    # of ``low`` (fewer non-zero prizes than that) shrank by 4^max_iter a call until it hung.
    lam_min = lam_max * _MIN_PRICE_RATIO
    lo, hi, below, above = 0.0, lam_max, None, None
    lam = lam_max / 2 if start is None else min(lam_max, max(lam_min, start * total))
    for it in range(1, max_iter + 1):
        mask, edges = _forest(prizes, graph, lam, n_components)
        size = int(mask.sum())
        if low <= size <= high:
            return [mask], lam, it, True
        if size > high:
            lo, above = lam, (mask, edges)
        else:
            hi, below = lam, mask
        if lo > 0 and below is None:
            lam = min(4.0 * lo, lam_max)
        elif lo == 0:
            if hi <= lam_min:  # as large a forest as any price gives, still short of low
                break
            lam = max(lam_min, hi / (4.0 if start is not None else 2.0))
        else:
            lam = math.sqrt(lo * hi)
    if below is None:
        below = _forest(prizes, graph, lam_max, n_components)[0]
    candidates = [_grow(below, prizes, graph, low)]
    if above is not None:
        candidates.append(_trim(above[0], above[1], prizes, high))
    return candidates, hi, it, False


def _project(v, graph, kind, sparsity, n_components, tolerance, max_iter, warm_start):
    """The search, then the best of its candidates and of a greedy growth from the heaviest node."""
    start = time.perf_counter()
    low, high = _check_options(graph, sparsity, n_components, tolerance, max_iter)
    arr = _check_values(v, graph.n_nodes, np.shape(v) if np.size(v) == graph.n_nodes else None)
    shape, arr = arr.shape, arr.reshape(-1)
    if warm_start is not None and not (isinstance(warm_start, float) and warm_start > 0):
        raise ValueError(f"warm_start must be a positive float from a result, got {warm_start!r}")
    prizes = np.square(_for_squares(arr), dtype=np.float64)
    empty = np.zeros(graph.n_nodes, dtype=bool)
    candidates, lam, it, landed = [empty], None, 0, True
    if prizes.any():
        candidates, lam, it, landed = _search(
            prizes, graph, low, high, n_components, max_iter, warm_start
        )
        candidates.append(_grow(empty, prizes, graph, low))
    support = max(candidates, key=lambda m: prizes[m].sum())
    return ProjectionResult(
        x=np.where(support, arr, np.zeros((), dtype=arr.dtype)).reshape(shape),
        support=support.reshape(shape),
        objective=_energy(arr[support]),
        method=kind,
        optimal=False,
        iterations=it,
        converged=landed,
        message=_message(kind, int(support.sum()), (low, high), it, landed, lam is not None),
        seconds=time.perf_counter() - start,
        warm_start=None if lam is None else lam / float(prizes.sum()),
        details={} if landed else {"stopped": "max_iter"},
    )


def _message(kind: str, size: int, target, calls: int, landed: bool, searched: bool) -> str:
    """How the search ended, in words: landed in the target range, missed it, or never ran
    (``searched`` False: ``v`` is 0, the support is empty)."""
    if not searched:
        return f"{kind} projection: v is 0, nothing to select (empty support, no PCST call)"
    where = "landed in" if landed else "missed"
    after = "" if landed else " (its nearest forests grown or trimmed)"
    return (
        f"{kind} projection: {size} nodes; the bisection {where} [{target[0]}, {target[1]}] "
        f"after {calls} PCST calls{after}"
    )


def head_projection(
    v,
    graph: Graph,
    *,
    sparsity: int,
    n_components: int = 1,
    tolerance: float = 0.1,
    max_iter: int = 20,
    warm_start=None,
) -> ProjectionResult:
    """Head projection: a connected support that captures most of the energy ``||v_S||^2``.

    GraphDA's Algorithm 2 (Zhou, Chen & Ying, KDD 2019, Appendix A) after Hegde, Indyk &
    Schmidt (ICML 2015): the prize-collecting Steiner forest of prizes ``v ** 2`` and edge
    costs ``lam * c``, with ``lam`` bisected until the forest has ``sparsity`` to
    ``floor((1 + tolerance) * sparsity)`` nodes. It is the same search as
    :func:`tail_projection`; the head is asked for the energy guarantee (Assumption 1,
    ``||v_H||^2 >= c_H max_S ||v_S||^2``) and GraphDA gives it a large ``sparsity`` (``p / 2``)
    so that it only zeroes the noise of the averaged gradient.

    Parameters
    ----------
    v : array-like of float, shape (n_nodes,) or any shape with ``n_nodes`` elements
        (node ``i`` is the flat index ``i``, e.g. ``r * cols + c`` on :meth:`Graph.grid`).
    graph : Graph
    sparsity : int
        Target number of nodes ``s``, in ``[n_components, graph.n_nodes]``.
    n_components : int, default 1
        Number of trees of the forest (``g`` of the weighted graph model).
    tolerance : float, default 0.1
        The output may have up to ``floor((1 + tolerance) * sparsity)`` nodes (``omega``).
    max_iter : int, default 20
        PCST calls of the bisection (the paper's ``max_iter``).
    warm_start : float, optional
        ``result.warm_start`` of an earlier call: its price relative to ``sum(v ** 2)``, where
        the search starts.

    Returns
    -------
    ProjectionResult
        ``support`` (bool, the shape of ``v``): at most ``n_components`` trees of ``graph``, at
        most ``floor((1 + tolerance) * sparsity)`` nodes, empty when ``v == 0``; ``x`` is ``v``
        on it; ``objective`` is ``||v_H||^2``; ``converged`` says whether a forest of the
        bisection landed in the target range (if not, the support is its nearest forest grown
        or trimmed into the range, ``details["stopped"]`` is ``"max_iter"``); ``iterations``
        counts PCST calls; ``optimal`` is False.

    Raises
    ------
    ValueError
        A bad ``v``, ``graph``, ``sparsity`` (above ``graph.n_nodes`` included),
        ``n_components``, ``tolerance``, ``max_iter`` or ``warm_start`` (the message names it).
    ImportError
        ``pcst_fast`` is missing or broken (see the module docstring).
    """
    return _project(v, graph, "head", sparsity, n_components, tolerance, max_iter, warm_start)


def tail_projection(
    v,
    graph: Graph,
    *,
    sparsity: int,
    n_components: int = 1,
    tolerance: float = 0.1,
    max_iter: int = 20,
    warm_start=None,
) -> ProjectionResult:
    """Tail projection: a connected support that leaves a small residual ``||v - v_T||^2``.

    The same search as :func:`head_projection`, asked for the tail guarantee (Assumption 2,
    ``||v - v_T||^2 <= c_T min_S ||v - v_S||^2`` over supports ``S`` of at most ``sparsity``
    nodes in ``n_components`` components). GraphDA projects its primal iterate with it, so
    the iterate always lies in the model: at most ``n_components`` trees with at most
    ``floor((1 + tolerance) * sparsity)`` nodes.

    Parameters
    ----------
    v : array-like of float, shape (n_nodes,) or any shape with ``n_nodes`` elements
        The vector to project (node ``i`` is the flat index ``i``). Not modified.
    graph : Graph
    sparsity : int
        Target number of nodes ``s``, in ``[n_components, graph.n_nodes]``.
    n_components : int, default 1
        Number of trees of the forest (``g`` of the weighted graph model).
    tolerance : float, default 0.1
        The output may have up to ``floor((1 + tolerance) * sparsity)`` nodes.
    max_iter : int, default 20
        PCST calls of the bisection.
    warm_start : float, optional
        ``result.warm_start`` of an earlier call, where the search starts.

    Returns
    -------
    ProjectionResult
        As for :func:`head_projection`: ``support`` in the model, ``converged`` whether the
        bisection landed in the target range, ``iterations`` its PCST calls (0 for ``v == 0``,
        whose support is empty).

    Raises
    ------
    ValueError
        A bad ``v``, ``graph``, ``sparsity`` (above ``graph.n_nodes`` included),
        ``n_components``, ``tolerance``, ``max_iter`` or ``warm_start``; the message names it.
    ImportError
        ``pcst_fast`` is missing or broken (see the module docstring).

    References
    ----------
    Hegde, Indyk & Schmidt, "A nearly-linear time framework for graph-structured sparsity",
    ICML 2015. Zhou, Chen & Ying, "Dual averaging method for online graph-structured
    sparsity", KDD 2019, Algorithm 2.
    """
    return _project(v, graph, "tail", sparsity, n_components, tolerance, max_iter, warm_start)


class GraphProjection:
    """A head or tail projection with its graph and options bound, as the solvers expect.

    ``GraphProjection(graph, sparsity, kind="tail")(v, warm_start=None)`` is
    ``tail_projection(v, graph, sparsity=sparsity, warm_start=warm_start, **options)``; the
    solvers thread ``result.warm_start`` from one call to the next. Everything is checked
    here, at construction, not at the first call.

    Parameters
    ----------
    graph : Graph
        The graph whose connected supports the projection keeps.
    sparsity : int
        Target number of nodes, in ``[n_components, graph.n_nodes]``.
    kind : {"head", "tail"}, default "tail"
        :func:`head_projection` or :func:`tail_projection`.
    **options
        ``n_components`` (default 1), ``tolerance`` (default 0.1) and ``max_iter`` (default
        20), as for :func:`head_projection`.

    Raises
    ------
    ValueError
        An unknown ``kind`` or option (a misspelt ``tolerence`` included), or a bad
        ``graph``, ``sparsity`` or option value; the message names it.
    """

    #: The options :func:`head_projection` and :func:`tail_projection` take besides ``v``,
    #: ``graph``, ``sparsity`` and ``warm_start``.
    OPTIONS = ("n_components", "tolerance", "max_iter")

    def __init__(self, graph: Graph, sparsity: int, kind: str = "tail", **options) -> None:
        if kind not in ("head", "tail"):
            raise ValueError(f"kind must be 'head' or 'tail', got {kind!r}")
        unknown = sorted(set(options) - set(self.OPTIONS))
        if unknown:
            raise ValueError(
                f"GraphProjection takes the options {', '.join(self.OPTIONS)}; got "
                f"{', '.join(unknown)}"
            )
        _check_options(
            graph,
            sparsity,
            options.get("n_components", 1),
            options.get("tolerance", 0.1),
            options.get("max_iter", 20),
        )
        self.graph, self.sparsity, self.kind, self.options = graph, sparsity, kind, options

    def __call__(self, v, warm_start=None) -> ProjectionResult:
        """Project ``v`` with the bound graph, sparsity and options.

        Parameters
        ----------
        v : array-like of float, shape (n_nodes,) or any shape with ``n_nodes`` elements
            The vector to project. Not modified.
        warm_start : float, optional
            ``result.warm_start`` of the previous call, where the price search starts.

        Returns
        -------
        ProjectionResult
            As :func:`head_projection` or :func:`tail_projection` returns it.
        """
        fn = head_projection if self.kind == "head" else tail_projection
        return fn(v, self.graph, sparsity=self.sparsity, warm_start=warm_start, **self.options)

    def __repr__(self) -> str:
        n, k = self.graph.n_nodes, self.sparsity
        return f"GraphProjection(n_nodes={n}, sparsity={k}, kind={self.kind!r})"
