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

import math

import numpy as np

from projections.graph import Graph, GraphProjection
from projections.solvers._common import (
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
from projections.solvers._loop import Steps, run
from projections.solvers.intercept import FreeIntercept
from projections.solvers.result import SolverResult

__all__ = ["dual_averaging", "graph_da"]


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
        Bad ``gamma``, ``max_iter``, ``eval_every``, ``warm_start``, ``loss.n_samples`` or
        ``loss.feature_shape`` (missing included), or a gradient of the wrong shape.
    TypeError
        A ``loss`` without ``sample_gradient``, or a projection, head or callback that is not
        callable.

    References
    ----------
    Zhou, Chen & Ying, "Dual averaging method for online graph-structured sparsity",
    KDD 2019 (Algorithm 1, Theorems 1 and 2).
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
    w = np.zeros(_feature_shape(loss), dtype=np.float64)
    deadline = Deadline(time_limit)
    steps = _DualAveragingSteps(
        loss, proj, head_proj, w, gamma=gamma, eval_every=eval_every, max_iter=max_iter
    )
    return run(steps, w, max_iter=max_iter, callback=callback, deadline=deadline)


def _feature_shape(loss) -> tuple[int, ...]:
    """``loss.feature_shape`` (the shape of ``w``, which starts at 0), checked: a ValueError
    naming it when it is missing or not a tuple of non-negative integers."""
    shape = getattr(loss, "feature_shape", None)
    try:
        dims = tuple(check_int(d, "loss.feature_shape", minimum=0) for d in shape)
    except (TypeError, ValueError):
        dims = None
    if shape is None or dims is None:
        raise ValueError(
            f"loss.feature_shape must be the shape of w (a tuple of non-negative integers): "
            f"dual averaging starts from w = 0; {type(loss).__name__} has {shape!r}"
        )
    return dims


class _DualAveragingSteps(Steps):
    """Dual averaging's side of the shared loop (see :func:`dual_averaging`): the running sum
    of sample gradients, the head and tail projections, and the evaluations when the loss has
    ``value``. The callback gets no value, and a step is no iteration in its messages."""

    name = "dual_averaging"
    callback_gets_value = False
    breakdown_message = "stopped at step {it}: {exc}"

    def __init__(self, loss, proj, head, w, *, gamma, eval_every, max_iter) -> None:
        self.loss, self.proj, self.head, self.gamma = loss, proj, head, gamma
        self.eval_every, self.max_iter = eval_every, max_iter
        self.n = loss.n_samples
        self.counters = proj.counters
        self.obj = Objective(loss, maximize=False, shape=w.shape)
        self.evaluate = callable(getattr(loss, "value", None))
        self.total = np.zeros_like(w)
        self.f0 = self.obj.f(w) if self.evaluate else None

    def initial_value(self, w, support) -> float | None:
        return self.f0

    def advance(self, it, w, support):
        t = it - 1
        self.total += self.obj.check_array(
            self.loss.sample_gradient(readonly(w), t % self.n), "the sample gradient"
        )
        average = self.total / (t + 1)
        b = average if self.head is None else self.head(average)[0]
        return self.proj(-(math.sqrt(t + 1) / self.gamma) * b)

    def value(self, it, w, support) -> float | None:
        every = self.eval_every
        if self.evaluate and every is not None and it % every == 0 and it < self.max_iter:
            return self.obj.f(w)
        return None

    def returned(self, w, support, done, history):
        """The last iterate, evaluated here (when the loss has ``value``) if the loop did not,
        after a breakdown too."""
        if self.evaluate and not history.has(done):
            history.record(done, self.obj.f(w))
        return w, support, history.value_at(done), done

    def describe(self) -> str:
        return f"gamma={self.gamma:g}, {'head and tail' if self.head else 'one'} projection"

    def step_size(self) -> None:
        return None


def graph_da(
    loss,
    graph: Graph,
    *,
    sparsity: int,
    gamma: float,
    head_sparsity: int | None = None,
    n_components: int = 1,
    fit_intercept: bool = False,
    **options,
) -> SolverResult:
    """GraphDA (Zhou et al., KDD 2019, Algorithm 1): dual averaging with head and tail projections.

    :func:`dual_averaging` with ``head = GraphProjection(graph, head_sparsity, "head")`` and
    ``projection = GraphProjection(graph, sparsity, "tail")``, both with ``n_components``.

    Parameters
    ----------
    loss : object
        As for :func:`dual_averaging`; ``feature_shape`` must have ``graph.n_nodes`` elements
        (``graph.n_nodes + 1`` with ``fit_intercept``).
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
    fit_intercept : bool, default False
        The loss's last weight is an intercept (its samples end with a column of ones,
        :func:`~projections.solvers.with_intercept_column`): both projections act on the
        ``n_nodes`` node weights and leave it free (:class:`~projections.solvers.FreeIntercept`),
        as the authors' code does. ``solution[-1]`` is then the intercept and
        ``support[-1]`` is True.
    **options
        Passed to :func:`dual_averaging` (``max_iter``, ``eval_every``, ...).

    Returns
    -------
    SolverResult
        As :func:`dual_averaging` returns it: ``solution`` is the last iterate, its
        ``support`` at most ``n_components`` trees of ``graph`` (plus the intercept with
        ``fit_intercept``); ``converged`` is False (an online method has no stopping test).

    Raises
    ------
    ValueError
        ``graph`` not a :class:`~projections.graph.Graph`; ``loss.feature_shape`` without
        ``graph.n_nodes`` elements (``+ 1`` with ``fit_intercept``); a bad ``sparsity``,
        ``head_sparsity`` or ``n_components`` (above ``graph.n_nodes`` included), or what
        :func:`dual_averaging` refuses.
    TypeError
        As for :func:`dual_averaging`.

    References
    ----------
    Zhou, Chen & Ying, "Dual averaging method for online graph-structured sparsity",
    KDD 2019, Algorithm 1.
    """
    if not isinstance(graph, Graph):
        raise ValueError(f"graph must be a projections.graph.Graph, got {type(graph).__name__}")
    fit_intercept = check_bool(fit_intercept, "fit_intercept")
    weights = graph.n_nodes + int(fit_intercept)
    if math.prod(getattr(loss, "feature_shape", (-1,))) != weights:
        with_b = " + 1 (the intercept)" if fit_intercept else ""
        raise ValueError(f"loss.feature_shape must have graph.n_nodes{with_b} = {weights} elements")
    if head_sparsity is None:
        head_sparsity = max(graph.n_nodes // 2, sparsity)
    head = GraphProjection(graph, head_sparsity, "head", n_components=n_components)
    tail = GraphProjection(graph, sparsity, "tail", n_components=n_components)
    if fit_intercept:
        head, tail = FreeIntercept(head), FreeIntercept(tail)
    return dual_averaging(loss, tail, gamma=gamma, head=head, **options)
