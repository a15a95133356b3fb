"""Online dual averaging onto a structured-sparsity set: DA-IHT and GraphDA.

Zhou, Chen & Ying, "Dual averaging method for online graph-structured sparsity", KDD 2019.
One sample per step ``t = 0, 1, ...``: the gradient of that sample's loss at the current
iterate joins the running average ``sbar``, and the next iterate is the projection of
``-(sqrt(t + 1) / gamma) * sbar`` (their Theorem 1, the regularised dual averaging step of
Xiao, JMLR 2010, with ``beta_t = gamma sqrt(t + 1)``) onto the sparsity set. GraphDA
(Algorithm 1) first projects ``sbar`` with a head projection, then the scaled result with a
tail projection (:mod:`projections.graph`); DA-IHT (Theorem 2) uses one hard-thresholding
projection (top-k, or any other such as a TVCS projection).
"""

from __future__ import annotations

import logging
import math

import numpy as np

from projections.graph import Graph, GraphProjection
from projections.solvers._common import (
    Breakdown,
    Deadline,
    Objective,
    Projector,
    check_bool,
    check_callback,
    check_int,
    check_methods,
    check_time_limit,
    readonly,
)
from projections.solvers._loop import stop_reason
from projections.solvers.result import SolverResult

__all__ = ["dual_averaging", "graph_da"]

logger = logging.getLogger(__name__)


def _check_gamma(gamma) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, int | float | np.floating | np.integer):
        raise ValueError(f"gamma must be a positive number, got {gamma!r}")
    if not (math.isfinite(float(gamma)) and gamma > 0):
        raise ValueError(f"gamma must be a positive finite number, got {gamma!r}")
    return float(gamma)


def dual_averaging(
    loss,
    projection,
    *,
    gamma: float,
    head=None,
    max_iter: int | None = None,
    eval_every: int | None = None,
    warm_start: bool = True,
    callback=None,
    time_limit: float | None = None,
) -> SolverResult:
    """Online dual averaging with hard-thresholding projections (DA-IHT, GraphDA).

    From ``w_0 = 0`` and ``s_0 = 0``, step ``t`` (Zhou et al., KDD 2019, Algorithm 1 and
    Theorem 1) visits sample ``i = t mod n_samples``::

        g_t     = grad f_i(w_t)                            (loss.sample_gradient(w_t, i))
        sbar    = (g_0 + ... + g_t) / (t + 1)
        b       = head(sbar)                               (sbar itself when head is None)
        w_{t+1} = projection(-(sqrt(t + 1) / gamma) * b)

    Parameters
    ----------
    loss : object
        With ``sample_gradient(w, i) -> ndarray`` (shape of ``w``), ``n_samples`` and
        ``feature_shape``, e.g. :class:`~projections.solvers.Logistic`; ``value(w)``, if
        present, fills ``history``.
    projection : callable
        ``projection(v) -> result`` with ``.x`` and ``.support`` (as for
        :func:`~projections.solvers.iht`): top-k for DA-IHT
        (``functools.partial(projections.cardinality.project_top_k, k=s)``), a TVCS projection
        (:func:`~projections.solvers.tvcs_projection`), or the tail projection for GraphDA.
    gamma : float
        ``> 0``; larger ``gamma`` means shorter steps (``beta_t = gamma sqrt(t + 1)``).
    head : callable, optional
        Projection of the averaged gradient before scaling (GraphDA's head projection).
    max_iter : int, optional
        Number of steps (samples seen), ``>= 0``; default one pass, ``n_samples``.
    eval_every : int, optional
        Record ``loss.value`` every this many steps (and at 0 and the end); default only at 0
        and at the end. A full evaluation costs a pass over the data.
    warm_start : bool, default True
        Thread each projection's ``result.warm_start`` into its next call.
    callback : callable, optional
        ``callback(step, w, None)`` after every step; returning True stops the run.
    time_limit : float, optional
        Stop after this many seconds.

    Returns
    -------
    SolverResult
        ``solution`` is the last iterate ``w_T`` and ``support`` the last projection's support
        (always in the set: the iterate is a projection's output at every step); ``converged``
        is False (an online method has no stopping test); ``history`` holds ``loss.value`` at
        ``history_iterations`` when the loss has ``value``.

    Raises
    ------
    ValueError
        Bad ``gamma``, ``max_iter``, ``eval_every``, ``warm_start``, or a gradient of the wrong
        shape. TypeError: a ``loss`` without ``sample_gradient``, or a projection, head or
        callback that is not callable.
    """
    check_methods(loss, "loss", ("sample_gradient",))
    gamma = _check_gamma(gamma)
    n = check_int(getattr(loss, "n_samples", None), "loss.n_samples", minimum=1)
    max_iter = n if max_iter is None else check_int(max_iter, "max_iter", minimum=0)
    if eval_every is not None:
        eval_every = check_int(eval_every, "eval_every", minimum=1)
    warm_start = check_bool(warm_start, "warm_start")
    callback, time_limit = check_callback(callback), check_time_limit(time_limit)
    if head is not None and not callable(head):
        raise TypeError(f"head must be callable or None, got {type(head).__name__}")
    proj = Projector(projection, warm_start=warm_start)
    head_proj = (
        None if head is None else Projector(head, warm_start=warm_start, counters=proj.counters)
    )
    w = np.zeros(tuple(loss.feature_shape), dtype=np.float64)
    obj = Objective(loss, maximize=False, shape=w.shape)
    evaluate = callable(getattr(loss, "value", None))
    deadline = Deadline(time_limit)
    total, support = np.zeros_like(w), np.zeros(w.shape, dtype=bool)
    history, at = ([obj.f(w)], [0]) if evaluate else ([], [])
    status, message, done = "max_iter", f"max_iter ({max_iter}) reached", 0
    try:
        for t in range(max_iter):
            total += obj.check_array(
                loss.sample_gradient(readonly(w), t % n), "the sample gradient"
            )
            average = total / (t + 1)
            b = average if head_proj is None else head_proj(average)[0]
            w, support = proj(-(math.sqrt(t + 1) / gamma) * b)
            done = t + 1
            if evaluate and eval_every is not None and done % eval_every == 0 and done < max_iter:
                history.append(obj.f(w))
                at.append(done)
            stop, reason = stop_reason(
                it=done,
                w=w,
                value=None,
                callback=callback,
                converged=False,
                convergence="",
                deadline=deadline,
            )
            if stop is not None:
                status, message = stop, reason
                break
    except Breakdown as exc:
        status, message = "breakdown", f"stopped at step {done + 1}: {exc}"
        logger.warning("dual_averaging: %s", message)
    if evaluate and (not at or at[-1] != done):
        history.append(obj.f(w))
        at.append(done)
    logger.info("dual_averaging: %s after %d steps", message, done)
    return SolverResult(
        solution=w,
        support=support,
        iterations=done,
        history=np.asarray(history, dtype=np.float64),
        history_iterations=np.asarray(at, dtype=np.int64),
        converged=False,
        status=status,
        message=f"{message} (gamma={gamma:g}, {'head and tail' if head else 'one'} projection)",
        seconds=deadline.elapsed(),
        projection_seconds=proj.counters["seconds"],
        n_projections=proj.counters["calls"],
        n_warm_started=proj.counters["warm_started"],
        objective=history[-1] if evaluate else float("nan"),
    )


def graph_da(
    loss,
    graph: Graph,
    *,
    sparsity: int,
    gamma: float,
    head_sparsity: int | None = None,
    n_components: int = 1,
    **options,
) -> SolverResult:
    """GraphDA (Zhou et al., KDD 2019, Algorithm 1): dual averaging with head and tail projections.

    :func:`dual_averaging` with ``head = GraphProjection(graph, head_sparsity, "head")`` and
    ``projection = GraphProjection(graph, sparsity, "tail")``, both with ``n_components``.

    Parameters
    ----------
    loss : object
        As for :func:`dual_averaging`; ``feature_shape`` must have ``graph.n_nodes`` elements.
    graph : projections.graph.Graph
    sparsity : int
        Nodes of the iterate's support (up to ``floor(1.1 * sparsity)``, see
        :func:`projections.graph.tail_projection`).
    gamma : float
        As for :func:`dual_averaging`.
    head_sparsity : int, optional
        Target size of the head projection's support; default ``n_nodes // 2`` (at least
        ``sparsity``), the paper's setting (Appendix A: the head only removes the noise of the
        averaged gradient).
    n_components : int, default 1
    **options
        Passed to :func:`dual_averaging` (``max_iter``, ``eval_every``, ...).
    """
    if not isinstance(graph, Graph):
        raise ValueError(f"graph must be a projections.graph.Graph, got {type(graph).__name__}")
    if math.prod(getattr(loss, "feature_shape", (-1,))) != graph.n_nodes:
        raise ValueError(f"loss.feature_shape must have graph.n_nodes = {graph.n_nodes} elements")
    if head_sparsity is None:
        head_sparsity = max(graph.n_nodes // 2, sparsity)
    head = GraphProjection(graph, head_sparsity, "head", n_components=n_components)
    tail = GraphProjection(graph, sparsity, "tail", n_components=n_components)
    return dual_averaging(loss, tail, gamma=gamma, head=head, **options)
