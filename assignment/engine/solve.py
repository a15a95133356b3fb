"""``solve``: one entry point for every assignment method, with one result type."""

from __future__ import annotations

import functools
import inspect
import logging
import time
from dataclasses import dataclass, field

import numpy as np

from assignment.engine.accuracy import MAX_EXACT_WORKERS, estimate_accuracy, expected_accuracy
from assignment.engine.options import Option
from assignment.engine.problem import AssignmentProblem

__all__ = [
    "METHODS",
    "MethodSpec",
    "SolveResult",
    "check_options",
    "method_options",
    "method_spec",
    "solve",
]

logger = logging.getLogger(__name__)

METHODS = ("tvcs-iht", "random", "q-lp", "greedy")


@dataclass(frozen=True, eq=False)
class SolveResult:
    """Outcome of :func:`solve`.

    Attributes
    ----------
    assignment : ndarray of bool, shape (n_workers, n_tasks)
        Feasible: every cap and the eligibility mask hold.
    expected_accuracy : float
        Mean expected accuracy of the Bayes vote over tasks; exact unless some task has more
        than ``MAX_EXACT_WORKERS`` workers, when it is a Monte Carlo estimate whose standard
        error is ``accuracy_standard_error``.
    accuracy_standard_error : float or None
        ``None`` when ``expected_accuracy`` is exact.
    method : str
    iterations : int
        Method iterations (tvcs-iht steps, greedy additions; 1 for random and q-lp).
    history : list of (iteration, accuracy)
        Exact accuracy of the support along the run (tvcs-iht).
    seconds : float
    seed : int or None
    message : str
    details : dict
        Method-specific figures (q-lp: LP objective and credit cap; greedy: pairs added).
    """

    assignment: np.ndarray
    expected_accuracy: float
    accuracy_standard_error: float | None
    method: str
    iterations: int
    history: list
    seconds: float
    seed: int | None
    message: str
    details: dict = field(default_factory=dict)

    @property
    def n_assigned(self) -> int:
        return int(self.assignment.sum())


def _run(problem, method, rng, progress, options):
    if method == "tvcs-iht":
        from assignment.engine.tvcs_iht import tvcs_iht

        out = tvcs_iht(problem, rng=rng, progress=progress, **options)
        details = {"start_accuracy": out.start_accuracy}
        return out.assignment, out.iterations, out.history, out.message, details
    if method == "random":
        from assignment.engine.baselines import random_assignment

        return random_assignment(problem, rng=rng, **options), 1, [], "random maximal", {}
    if method == "q-lp":
        from assignment.engine.baselines import q_lp_assignment

        assignment, info = q_lp_assignment(problem, **options)
        return assignment, 1, [], info.pop("message"), info
    from assignment.engine.greedy import greedy_assignment

    assignment, info = greedy_assignment(problem, progress=progress, **options)
    return assignment, int(info.get("steps", 0)), [], str(info.get("stopped", "")), info


@dataclass(frozen=True)
class MethodSpec:
    """One assignment method as users see it: its name, what it is, and its options.

    ``options`` are the :class:`~assignment.engine.options.Option` s a user may set, each with
    its default from the method's signature.
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
    from assignment.engine import baselines, greedy, tvcs_iht

    rows = (
        (
            "tvcs-iht",
            "stochastic IHT with the exact TVCS projection",
            "The core method: stochastic iterative hard thresholding on a smooth surrogate of "
            "expected accuracy, every step projected exactly onto the caps, then a final pass "
            "scored by exact accuracy.",
            tvcs_iht.tvcs_iht,
            tvcs_iht.OPTIONS,
        ),
        (
            "random",
            "random maximal assignment",
            "A random assignment of as many pairs as the caps allow: the floor any method "
            "must beat.",
            baselines.random_assignment,
            (),
        ),
        (
            "q-lp",
            "Q-based LP (Ho, Jabbari & Vaughan 2013)",
            "The linear program of Ho, Jabbari & Vaughan (2013) with the per-task caps and the "
            "budget, rounded by the exact projection.",
            baselines.q_lp_assignment,
            baselines.Q_LP_OPTIONS,
        ),
        (
            "greedy",
            "greedy marginal gain",
            "Adds the pair (or two pairs) with the largest gain of exact expected accuracy "
            "until the budget or the caps stop it.",
            greedy.greedy_assignment,
            (),
        ),
    )
    specs = {}
    for name, title, description, fn, options in rows:
        defaults = _signature_defaults(fn)
        specs[name] = MethodSpec(
            name=name,
            title=title,
            description=description,
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


def solve(problem: AssignmentProblem, *, method: str, seed=None, progress=None, **options):
    """Compute an assignment with one of the methods and evaluate it exactly.

    Parameters
    ----------
    problem : AssignmentProblem
    method : {"tvcs-iht", "random", "q-lp", "greedy"}
        ``tvcs-iht``: stochastic IHT with the exact TVCS projection (the core method);
        ``random``: a random maximal feasible assignment; ``q-lp``: the LP of Ho, Jabbari &
        Vaughan (2013), rounded by the exact projection; ``greedy``: greedy marginal gain of
        exact expected accuracy with a two-step look-ahead.
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
    start = time.perf_counter()
    assignment, iterations, history, message, details = _run(
        problem, method, rng, progress, options
    )
    seconds = time.perf_counter() - start
    if not problem.is_feasible(assignment):
        raise RuntimeError(f"method {method!r} returned an infeasible assignment (a bug)")
    workers_per_task = assignment.sum(axis=0)
    if workers_per_task.max(initial=0) <= MAX_EXACT_WORKERS:
        accuracy = expected_accuracy(problem.quality_form, assignment, prior=problem.prior)
        standard_error = None
    else:
        estimate = estimate_accuracy(
            problem.quality_form, assignment, prior=problem.prior, seed=seed
        )
        accuracy, standard_error = estimate.mean, estimate.standard_error
    if progress is not None:
        progress(1.0, f"{method}: done, expected accuracy {accuracy:.4f}")
    return SolveResult(
        assignment=assignment,
        expected_accuracy=float(accuracy),
        accuracy_standard_error=standard_error,
        method=method,
        iterations=iterations,
        history=history,
        seconds=seconds,
        seed=seed,
        message=message,
        details=details,
    )
