"""``solve``: one entry point for every assignment method, with one result type."""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import time
from dataclasses import dataclass, field

import numpy as np

from assignment.engine._problem_accuracy import (
    accuracy_of,
    accuracy_of_pairs,
    accuracy_of_sorted_pairs,
)
from assignment.engine.accuracy import (
    MAX_EXACT_WORKERS,
    _estimate_accuracy,
    _validate_assignment,
    _validate_pairs,
)
from assignment.engine.method_output import MethodOutput, PairsOfShape
from assignment.engine.multiclass import (
    MAX_EXACT_STATES,
    _estimate_accuracy_multiclass,
    _exact_state_counts,
    _log_prior,
    _task_accuracy_multiclass,
)
from assignment.engine.options import Option
from assignment.engine.problem import AssignmentProblem

__all__ = [
    "METHODS",
    "MethodSpec",
    "SolveResult",
    "check_options",
    "evaluate",
    "evaluate_pairs",
    "method_options",
    "method_spec",
    "register_method",
    "solve",
]

logger = logging.getLogger(__name__)

#: Monte Carlo samples of :func:`evaluate` beyond the exact limit (the estimators' default).
_SAMPLES = 10_000


@dataclass(frozen=True, eq=False)
class SolveResult(PairsOfShape):
    """Outcome of :func:`solve`.

    Attributes
    ----------
    rows, cols : ndarray of int64, shape (pairs,)
        The assignment as pairs: worker ``rows[e]`` on task ``cols[e]``, sorted by worker,
        then task (``np.nonzero`` of :attr:`assignment`). Feasible: every cap and the
        eligibility mask hold.
    shape : tuple of int
        ``(n_workers, n_tasks)``.
    assignment : ndarray of bool, shape (n_workers, n_tasks)
        The same assignment as a matrix, built on first access (``n_workers * n_tasks``
        bytes: read :attr:`rows` and :attr:`cols` for large problems).
    expected_accuracy : float
        Mean expected accuracy of the Bayes vote over tasks; exact unless some task has more
        than ``MAX_EXACT_WORKERS`` workers (two labels) or more than ``MAX_EXACT_STATES``
        answer states (``K > 2`` labels, :func:`~assignment.engine.multiclass.exact_state_counts`),
        when it is a Monte Carlo estimate whose standard error is ``accuracy_standard_error``.
    accuracy_standard_error : float or None
        ``None`` when ``expected_accuracy`` is exact.
    method : str
    iterations : int
        Method iterations (tvcs-iht steps, greedy additions; 1 for random and q-lp).
    history : list of (iteration, accuracy)
        Exact accuracy of the support along the run (tvcs-iht).
    seconds : float
        Wall-clock time of the method's run (without this function's final evaluation).
    cpu_seconds : float
        This process's CPU time over the same span: the run's cost without what other
        processes took from it on a shared machine (the engine runs on one thread).
    seed : int or None
    message : str
    details : dict
        Method-specific figures, the method's
        :attr:`~assignment.engine.method_output.MethodOutput.details` (q-lp: LP objective and
        credit cap; greedy: pairs added; tvcs-iht: its start and support accuracies).
    """

    rows: np.ndarray
    cols: np.ndarray
    shape: tuple[int, int]
    expected_accuracy: float
    accuracy_standard_error: float | None
    method: str
    iterations: int
    history: list
    seconds: float
    cpu_seconds: float
    seed: int | None
    message: str
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Registered:
    """One method of the registry: what users see, and where its solver lives (imported only
    when a method is described or run, so that ``METHODS`` costs no numba import)."""

    name: str
    title: str
    description: str
    module: str
    solver: str
    options: str | None  # the module's tuple of Option, if users may set any


#: The registry of methods: the one place that names them. The models' choices, the API, the
#: ``assign`` command and the pages' forms all read it (``METHODS``, :func:`method_spec`).
_REGISTRY = (
    _Registered(
        "tvcs-iht",
        "stochastic IHT with the exact TVCS projection",
        "The core method: stochastic iterative hard thresholding on a smooth surrogate of "
        "expected accuracy, every step projected exactly onto the caps, then a final pass "
        "scored by exact accuracy.",
        "assignment.engine.tvcs_iht",
        "tvcs_iht",
        "OPTIONS",
    ),
    _Registered(
        "random",
        "random maximal assignment",
        "A random assignment of as many pairs as the caps allow: the floor any method must beat.",
        "assignment.engine.baselines",
        "random_pairs",
        None,
    ),
    _Registered(
        "q-lp",
        "Q-based LP (Ho, Jabbari & Vaughan 2013)",
        "The linear program of Ho, Jabbari & Vaughan (2013) with the per-task caps and the "
        "budget, rounded by the exact projection.",
        "assignment.engine.baselines",
        "q_lp_assignment",
        "Q_LP_OPTIONS",
    ),
    _Registered(
        "greedy",
        "greedy marginal gain",
        "Adds the pair (or two pairs) with the largest gain of exact expected accuracy "
        "until the budget or the caps stop it.",
        "assignment.engine.greedy",
        "greedy_pairs",
        None,
    ),
)

METHODS = tuple(entry.name for entry in _REGISTRY)
_BY_NAME = {entry.name: entry for entry in _REGISTRY}


def register_method(name, *, title, description, module, solver, options=None):
    """Add a method to the registry, as one more ``_REGISTRY`` line would (same fields).

    ``module.solver(problem, **options)`` returns a
    :class:`~assignment.engine.method_output.MethodOutput`, or the assignment as a bool
    matrix (n_workers, n_tasks) (then with no message, one iteration and no details); it is
    passed ``rng`` (a ``numpy.random.Generator``) and ``progress`` (callable or None) as
    keywords if it takes them. Modules that copied :data:`METHODS` at import time (the
    models' choices, the API's schema, the forms) see a method only when it is in
    ``_REGISTRY``.
    """
    global _REGISTRY, METHODS
    if name in _BY_NAME:
        raise ValueError(f"method {name!r} is already registered")
    entry = _Registered(name, title, description, module, solver, options)
    _REGISTRY, METHODS = (*_REGISTRY, entry), (*METHODS, name)
    _BY_NAME[name] = entry
    _specs.cache_clear()


def _solver(entry: _Registered):
    return getattr(importlib.import_module(entry.module), entry.solver)


def _run(problem, method, rng, progress, options) -> MethodOutput:
    """Run ``method``'s solver, passing ``rng`` and ``progress`` where it takes them."""
    solver = _solver(_BY_NAME[method])
    accepted = inspect.signature(solver).parameters
    extra = {"rng": rng, "progress": progress}
    output = solver(problem, **{k: v for k, v in extra.items() if k in accepted}, **options)
    if isinstance(output, MethodOutput):
        return output
    return MethodOutput.from_assignment(output)


@dataclass(frozen=True)
class MethodSpec:
    """One assignment method as users see it: its name, what it is, and its options.

    ``options`` are the :class:`~assignment.engine.options.Option` s a user may set, each with
    its default from the method's signature. Every method solves problems of any number of
    labels ``K >= 2``.
    """

    name: str
    title: str
    description: str
    options: tuple[Option, ...]


def _signature_defaults(fn) -> dict:
    return {
        name: p.default
        for name, p in inspect.signature(fn).parameters.items()
        if p.kind is p.KEYWORD_ONLY and p.default is not p.empty
    }


@functools.cache
def _specs() -> dict[str, MethodSpec]:
    specs = {}
    for entry in _REGISTRY:
        module = importlib.import_module(entry.module)
        defaults = _signature_defaults(getattr(module, entry.solver))
        options = () if entry.options is None else getattr(module, entry.options)
        specs[entry.name] = MethodSpec(
            name=entry.name,
            title=entry.title,
            description=entry.description,
            options=tuple(option.with_default(defaults[option.name]) for option in options),
        )
    return specs


def method_spec(method: str) -> MethodSpec:
    """The :class:`MethodSpec` of ``method``; ``ValueError`` for an unknown one."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    return _specs()[method]


def method_options(method: str) -> list[str]:
    """Names of the options a user may set for ``method``."""
    return [option.name for option in method_spec(method).options]


def check_options(method: str, options: dict) -> None:
    """Raise ``ValueError`` for an unknown method, an unknown option or an invalid value.

    The same checks ``solve`` makes before it computes, without a problem: services call this
    when a run is requested, so a bad option is refused then rather than failing the run.
    """
    specs = {option.name: option for option in method_spec(method).options}
    unknown = sorted(set(options) - set(specs))
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for method {method!r}; valid: "
            f"{', '.join(specs) or 'none'}"
        )
    for name, value in options.items():
        specs[name].check(value)


def evaluate_pairs(
    problem: AssignmentProblem, workers, tasks, *, seed=None
) -> tuple[float, float | None]:
    """:func:`evaluate` of the assignment given as pairs ``(workers[e], tasks[e])``.

    For two labels with at most ``MAX_EXACT_WORKERS`` workers per task, computed from the
    pairs (memory ``O(pairs + n_tasks)``); otherwise from the dense matrix. A problem with
    ``confusion`` is scored by the Dawid–Skene vote under its matrices
    (:func:`~assignment.engine.under_confusion.dawid_skene_accuracy`).

    Raises
    ------
    ValueError
        If ``workers`` and ``tasks`` are not 1-D integers of one length, or a pair is out of
        range or given twice.
    """
    workers, tasks = np.asarray(workers), np.asarray(tasks)
    by_task = _validate_pairs(workers, tasks, problem.shape)  # the one sort of the pairs
    pairs = (workers.astype(np.int64), tasks.astype(np.int64))
    return _evaluate_pairs(problem, pairs, seed, by_task=by_task)


def _evaluate_pairs(
    problem: AssignmentProblem, pairs, seed, *, by_task=None
) -> tuple[float, float | None]:
    """:func:`evaluate_pairs` of distinct pairs in range (a method's own: :func:`solve` scores
    its result here).

    ``pairs`` is ``(workers, tasks)``, int64 arrays of shape (pairs,), in the caller's order
    (under confusion matrices a task's workers are summed in it, as
    :func:`~assignment.engine.distributions.assignment_distributions` sums them); ``by_task``
    the same pairs sorted by task, then worker, when the caller has them: the two-label kernel
    takes that order, and sorts the pairs itself only without them.
    """
    if problem.confusion is not None:
        from assignment.engine.under_confusion import dawid_skene_accuracy

        return dawid_skene_accuracy(problem, *pairs, seed=seed)
    workers, tasks = pairs
    counts = np.bincount(tasks, minlength=problem.n_tasks)
    if problem.n_labels == 2 and counts.max(initial=0) <= MAX_EXACT_WORKERS:
        if by_task is None:
            return accuracy_of_pairs(problem, workers, tasks), None
        return accuracy_of_sorted_pairs(problem, *by_task), None
    dense = np.zeros(problem.shape, dtype=bool)
    dense[workers, tasks] = True
    return _evaluate(problem, dense, seed)


def evaluate(problem: AssignmentProblem, assignment, *, seed=None) -> tuple[float, float | None]:
    """Mean expected accuracy of ``assignment`` under ``problem``, and its standard error.

    Exact (standard error ``None``) when every task is within the exact limit: at most
    ``MAX_EXACT_WORKERS`` workers for two labels, at most ``MAX_EXACT_STATES`` answer states
    for ``K > 2``. Otherwise the Monte Carlo estimate (10,000 samples, seeded by ``seed``).
    A problem with ``confusion`` is scored by the Dawid–Skene vote (:func:`evaluate_pairs`).

    Raises
    ------
    ValueError
        If ``assignment`` is not a bool (or 0/1) matrix of the problem's shape
        (n_workers, n_tasks).
    """
    return _evaluate(problem, _validate_assignment(assignment, problem.shape), seed)


def _evaluate(problem: AssignmentProblem, x: np.ndarray, seed) -> tuple[float, float | None]:
    """:func:`evaluate` of a bool matrix ``x`` of the problem's shape: the problem's arrays
    were checked when it was made, so the kernels score them unchecked."""
    if problem.confusion is not None:
        return _evaluate_pairs(problem, np.nonzero(x), seed)
    q, rng = problem.quality_form, np.random.default_rng(seed)
    if problem.n_labels == 2:
        if x.sum(axis=0).max(initial=0) <= MAX_EXACT_WORKERS:
            return accuracy_of(problem, x), None
        estimate = _estimate_accuracy(q, x, problem.prior, _SAMPLES, rng)
        return estimate.mean, estimate.standard_error
    log_prior = _log_prior(problem.prior_distribution)
    if _exact_state_counts(q, x, problem.n_labels).max(initial=1.0) <= MAX_EXACT_STATES:
        return float(_task_accuracy_multiclass(q, x, log_prior).mean()), None
    estimate = _estimate_accuracy_multiclass(q, x, log_prior, _SAMPLES, rng)
    return estimate.mean, estimate.standard_error


def solve(problem: AssignmentProblem, *, method: str, seed=None, progress=None, **options):
    """Compute an assignment with one of the methods and evaluate it exactly.

    Parameters
    ----------
    problem : AssignmentProblem
    method : str
        One of :data:`METHODS`; :func:`method_spec` says what each is and which options it
        takes (``tvcs-iht`` is the core method, the others the references it is compared with).
    seed : int or None
        Seeds every random choice: the same seed gives the same answer.
    progress : callable, optional
        ``progress(fraction, message)``, called during long solves.
    **options
        Method options (see each method); an unknown option raises ``ValueError`` listing the
        valid ones.

    Returns
    -------
    SolveResult
        With ``problem.confusion`` set, chosen as
        :mod:`~assignment.engine.under_confusion` says (greedy by the Dawid–Skene vote's
        exact accuracy), and ``expected_accuracy`` is that vote's accuracy under the matrices
        (``details["objective"]`` says so).

    Raises
    ------
    ValueError
        On an unknown method or option.
    """
    if not isinstance(problem, AssignmentProblem):
        raise ValueError(f"problem must be an AssignmentProblem, got {type(problem).__name__}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}")
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a callable progress(fraction, message) or None")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    check_options(method, options)
    rng = np.random.default_rng(seed)
    start, cpu_start = time.perf_counter(), time.process_time()
    if problem.confusion is None:
        output = _run(problem, method, rng, progress, options)
    else:
        from assignment.engine.under_confusion import choose_under_confusion  # numba kernels

        def run_symmetric(symmetric, **overrides):
            return _run(symmetric, method, rng, progress, {**options, **overrides})

        settings = {option.name: option.default for option in method_spec(method).options}
        output = choose_under_confusion(
            problem,
            method,
            run_symmetric,
            rng=rng.spawn(1)[0],  # its own stream: the symmetric run's draws stay as they were
            options={**settings, **options},
            seed=seed,
            progress=progress,
        )
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    rows, cols = output.rows, output.cols
    if not problem.is_feasible_pairs(rows, cols):
        raise RuntimeError(f"method {method!r} returned an infeasible assignment (a bug)")
    accuracy, standard_error = _evaluate_pairs(problem, (rows, cols), seed)
    if progress is not None:
        progress(1.0, f"{method}: done, expected accuracy {accuracy:.4f}")
    return SolveResult(
        rows=rows,
        cols=cols,
        shape=problem.shape,
        expected_accuracy=float(accuracy),
        accuracy_standard_error=standard_error,
        method=method,
        iterations=output.iterations,
        history=list(output.history),
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        seed=seed,
        message=output.message,
        details=output.details,
    )
