"""``tvcs-iht``: stochastic iterative hard thresholding with the exact TVCS projection.

Yang et al. (ICML 2017) §5.2 and supplementary §4; Nguyen, Needell & Woolf (2014). From
greedy's assignment (:func:`~assignment.engine.greedy.greedy_run`, ``X`` its support at weight
1), ascend the smooth surrogate of expected accuracy (:mod:`assignment.engine.surrogate`,
:mod:`assignment.engine.surrogate_multiclass` for ``K > 2``) by stochastic gradient steps
``Y = X + step * grad``, step ``t`` scaled by ``1 / sqrt(1 + t / 10)``, and project each onto
``{X in [0, 1]^(n x m) : supp(X) respects the caps}``: keep the support maximising
``sum gain(Y_ij)``, ``gain(y) = y^2`` on ``(0, 1]``, ``2 y - 1`` above 1, 0 below 0 (the exact
TVCS projection of ``sqrt(gain(Y))``), and clip ``Y`` to ``[0, 1]`` on it. The loop is
:func:`projections.solvers.stochastic_iht`; the best support by exact accuracy is kept, so the
result is never below greedy's. A final pass (:func:`assignment.engine.local_search.improve`)
repairs what the surrogate cannot see, and tasks capped at the exact limit of workers during
the search (``MAX_EXACT_WORKERS`` for two labels, fewer for more) are topped up afterwards.

No steps are taken (``details["stopped"]``, :data:`STOPPED_BEFORE_STEPS`) when every task takes
at most one worker (one exact projection is the optimum, :mod:`assignment.engine.single_worker`),
when greedy's assignment spends the whole budget (two labels) or is within ``bound_gap`` of the
upper bound (:mod:`assignment.engine.upper_bound`), and above :data:`DENSE_PAIRS_MAX` pairs
``n * m`` (greedy's pairs are returned). Large problems search candidate pairs
(:mod:`assignment.engine.search_pairs`).

Entry points: :func:`tvcs_iht`, :data:`OPTIONS`, :func:`check_options`. The steps, the stops,
the final pass, ``K > 2`` and what was measured: docs/design.md#tvcs-iht.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from assignment.engine._problem_accuracy import accuracy_of as exact_accuracy
from assignment.engine.accuracy import MAX_EXACT_WORKERS
from assignment.engine.greedy import greedy_assignment, greedy_pairs, greedy_run
from assignment.engine.local_search import improve, prune
from assignment.engine.method_output import MethodOutput
from assignment.engine.options import Option
from assignment.engine.problem import AssignmentProblem
from assignment.engine.search_pairs import exact_workers_limit, search_pairs
from assignment.engine.single_worker import single_worker_optimum
from assignment.engine.surrogate import Surrogate
from assignment.engine.surrogate_multiclass import MulticlassSurrogate
from assignment.engine.upper_bound import accuracy_upper_bound
from projections import TVCSStructure
from projections.solvers import stochastic_iht, tvcs_projection
from projections.tvcs import project

__all__ = [
    "DENSE_PAIRS_MAX",
    "FOLLOW_UP_PAIRS",
    "OPTIONS",
    "STOPPED_BEFORE_STEPS",
    "check_options",
    "tvcs_iht",
]

logger = logging.getLogger(__name__)

#: The run's progress bar: the greedy start fills it to _START_SHARE with the default
#: _START_STEPS steps (less with more, :func:`_start_share`), the IHT steps to _IHT_SHARE, and
#: the final pass the rest.
_START_SHARE, _IHT_SHARE, _START_STEPS = 0.6, 0.8, 10


def _start_share(max_iter: int) -> float:
    """Where the greedy start's part of the progress bar ends: ``_START_SHARE`` at up to the
    default 10 steps, shrinking in proportion with more (1,500 steps: 0.4%), so that the bar
    moves with the work: a QA pass saw 1,500 steps reach 60% in 3 s and crawl to 79% over
    the next 52 s."""
    return _START_SHARE * min(1.0, _START_STEPS / max(max_iter, 1))


#: Above this many pairs ``n * m``, tvcs-iht returns greedy's assignment: its steps and final
#: pass hold dense (n, m) arrays (docs/design.md#tvcs-iht).
DENSE_PAIRS_MAX = 600_000_000

#: ``details["stopped"]`` of a run that took no IHT step, and why: greedy's assignment above
#: ``DENSE_PAIRS_MAX`` pairs, the exact optimum when every task takes at most one worker,
#: greedy's start spending the whole budget, or within ``bound_gap`` of the upper bound. A run
#: that stepped has its steps' status instead: ``"max_iter"``, ``"no_improvement"``,
#: ``"time_limit"`` (or another status of :func:`~projections.solvers.stochastic_iht`).
STOPPED_BEFORE_STEPS = ("too_large", "single_worker", "budget_spent", "near_bound")


def _greedy_only(problem: AssignmentProblem, progress) -> MethodOutput:
    """Greedy's assignment as pairs, for a problem above ``DENSE_PAIRS_MAX`` pairs."""
    greedy = greedy_pairs(problem, progress=progress)
    n, m = problem.shape
    message = (
        f"greedy's assignment ({greedy.message}), without IHT steps or final pass: "
        f"{n:,} x {m:,} = {n * m:.3g} pairs is above tvcs-iht's limit of "
        f"{DENSE_PAIRS_MAX:.3g} for its dense (n, m) arrays"
    )
    logger.info("tvcs-iht: %s", message)
    accuracy = greedy.details["accuracy"]
    details = {
        "accuracy": accuracy,
        "start_accuracy": accuracy,
        "stopped": "too_large",
        "topped_up": 0,
        "final_pass": False,
        "searched_pairs": None,
    }
    return MethodOutput(
        greedy.rows, greedy.cols, problem.shape, message, 0, [(0, accuracy)], details
    )


def _top_up(
    problem: AssignmentProblem, assignment: np.ndarray, limit: int
) -> tuple[np.ndarray, int]:
    """Spend left-over budget on tasks at the exact ``limit`` of workers whose cap allows
    more, the most informative workers first (``|K Q - 1| / (K - 1)``, the rounds' order):
    an extra answer never lowers the Bayes vote's expected accuracy."""
    counts = assignment.sum(axis=0)
    room = np.where(counts >= limit, problem.max_workers_per_task - counts, 0).clip(min=0)
    left = problem.budget - int(counts.sum())
    if left <= 0 or not room.any():
        return assignment, 0
    k = problem.n_labels
    informative = np.abs(k * problem.quality - 1.0) / (k - 1.0)
    weights = np.where(assignment, 0.0, informative)
    extra = project(
        problem.mask(weights),
        TVCSStructure.from_matrix(
            assignment.shape,
            max_per_row=problem.max_tasks_per_worker - assignment.sum(axis=1),
            max_per_col=room,
            total=left,
        ),
    ).support
    return assignment | extra, int(extra.sum())


#: The options users may set, with their bounds; the defaults are ``tvcs_iht``'s own.
OPTIONS = (
    Option(
        "max_iter",
        int,
        "Stochastic gradient steps of the IHT phase at most. More steps explore more supports "
        "and take longer.",
        minimum=0,
        maximum=10_000,
    ),
    Option(
        "step",
        float,
        "Step size: step t moves by step / sqrt(1 + t / 10) along the sampled gradient.",
        minimum=0,
        exclusive_minimum=True,
        maximum=1_000,  # 1e308 overflowed the iterate (a QA pass)
    ),
    Option(
        "batch_size",
        int,
        "Answer samples per gradient step: larger batches give smoother gradients and cost more.",
        minimum=1,
        maximum=64,
    ),
    Option(
        "temperature",
        float,
        "Smoothing of the vote's sigmoid in the surrogate objective: larger is smoother.",
        minimum=0.001,  # 1e-320 overflowed the sigmoid (a QA pass)
        maximum=1_000,
    ),
    Option(
        "eval_every",
        int,
        "Evaluate the exact expected accuracy of the support every this many steps and keep "
        "the best.",
        minimum=1,
        maximum=10_000,
    ),
    Option(
        "bound_gap",
        float,
        "Return the greedy start as it is when its expected accuracy is within this of the "
        "upper bound on any assignment's (0: always search).",
        minimum=0,
        maximum=1,
    ),
    Option(
        "search_when_spent",
        bool,
        "Take the IHT steps even when greedy's start spends the whole budget (where they have "
        "found nothing better so far).",
    ),
    Option(
        "patience",
        int,
        "Stop the steps after this many exact evaluations in a row that found no better "
        "assignment.",
        minimum=1,
        maximum=10_000,
    ),
    Option(
        "min_improvement",
        float,
        "Expected accuracy a step's assignment must add to the best so far to count as better "
        "for patience (0.0001 = 0.01 points).",
        minimum=0,
        maximum=1,
    ),
    Option(
        "refine",
        bool,
        "Run the final improvement pass scored by exact accuracy on an assignment the steps "
        "found better than greedy's (recommended).",
    ),
    Option(
        "refine_rounds",
        int,
        "Destroy-and-repair rounds of the final pass at most.",
        minimum=0,
        maximum=1_000,
    ),
    Option(
        "time_limit",
        float,
        "Stop after this many seconds and return the best assignment found so far; empty = "
        "no limit.",
        minimum=0,
        exclusive_minimum=True,
        maximum=86_400,
        nullable=True,
    ),
)
_OPTIONS = {option.name: option for option in OPTIONS}


def check_options(**options) -> None:
    """Raise ``ValueError`` naming the first unknown or invalid option of :func:`tvcs_iht`."""
    for name, value in options.items():
        if name not in _OPTIONS:
            raise ValueError(f"unknown option {name!r}; valid: {', '.join(_OPTIONS)}")
        _OPTIONS[name].check(value)


#: From the second step on, the steps search the pairs whose projection input at the first step
#: was among the ``FOLLOW_UP_PAIRS * budget`` largest (with greedy's start and the current
#: support); the others get 0. The first step searches every pair: its gains come from spending
#: the budget greedy left, often on pairs with small inputs, and it does nearly all the steps'
#: work (docs/design.md#tvcs-iht, step 5). The later steps' projections then solve a problem of
#: at most this many usable pairs instead of every pair: at 200 x 10,000 a second projection
#: took 0.05 s instead of 0.46 s, for the same supports' accuracy within 0.00002.
FOLLOW_UP_PAIRS = 5


class _BoxSteps:
    """The surrogate's stochastic gradient steps as the proposal of
    :func:`~projections.solvers.stochastic_iht`, for the projection onto the box-TVCS set
    ``{X in [0, 1]^p : supp(X) respects the caps}``.

    That projection of ``y = x + step * grad`` is ``y`` clipped to ``[0, 1]`` on the support that
    the TVCS projection of ``sqrt(gain(y))`` keeps (module docstring). The surrogate's fused
    kernel gives ``y`` and ``sqrt(gain(y))`` (0 at ineligible pairs) in one pass; the proposal is
    ``(sqrt(gain(y)), clip(y, 0, 1))`` and the solver keeps the second on the support of the
    projection of the first. From the second step on, ``sqrt(gain(y))`` is 0 outside the pairs
    the first step ranked among its ``follow_up`` largest, the start's and the current
    support's (:data:`FOLLOW_UP_PAIRS`).

    Parameters
    ----------
    surrogate : Surrogate or MulticlassSurrogate
        Its ``step(x, rng, step) -> (value, y, sqrt(gain(y)))``, each of shape (p,).
    follow_up : int
        How many of the first step's largest projection inputs the later steps search.
    """

    def __init__(self, surrogate, *, follow_up: int) -> None:
        self.surrogate = surrogate
        self.follow_up = follow_up
        self.searched = None  # bool (p,) once the first step is taken

    def proposal(self, x: np.ndarray, rng: np.random.Generator, step: float):
        """``(sqrt(gain(y)), clip(y, 0, 1))`` for ``y = x + step * grad``, shapes (p,)."""
        _, y, projection_input = self.surrogate.step(x, rng, step)
        if self.searched is None:
            self.searched = _largest(projection_input, self.follow_up) | (x > 0)
        else:
            projection_input[~(self.searched | (x > 0))] = 0.0
        return projection_input, np.clip(y, 0.0, 1.0, out=y)


def _largest(values: np.ndarray, k: int) -> np.ndarray:
    """Bool mask, shape (p,), of the positive ``values`` at least the ``k``-th largest (ties
    at the threshold all in): every positive value when ``k >= p``, none when ``k <= 0``."""
    if k <= 0:
        return np.zeros(values.shape[0], dtype=bool)
    if k >= values.shape[0]:
        return values > 0
    threshold = np.partition(values, values.shape[0] - k)[values.shape[0] - k]
    return (values >= threshold) & (values > 0)


#: A time limit that has already passed still lets the steps take one (as they always have).
_ONE_STEP_SECONDS = 1e-9


def _steps(problem, start, start_acc, *, rng, options, progress, deadline):
    """The IHT steps from the assignment ``start``: ``(best, best_acc, t, history, status,
    searched_pairs, message)``, ``status`` the solver's (``"max_iter"``, ``"no_improvement"``,
    ...), ``searched_pairs`` the number of candidate pairs searched (None when every pair was).

    :func:`~projections.solvers.stochastic_iht` runs the loop: ascent on the surrogate with the
    step ``step / sqrt(1 + t / 10)`` (its ``"inv_sqrt_shifted"`` schedule), the proposal of
    :class:`_BoxSteps`, the exact TVCS projection over the searched pairs (warm-started), the
    support's exact accuracy every ``eval_every`` steps (greedy's ``start_acc`` at step 0), the
    best support kept, a stop after ``patience`` evaluations found nothing better by more than
    ``min_improvement`` or at the
    ``deadline`` (a ``time.perf_counter()`` value), and ``progress`` after every step. Stopped
    by the deadline between two evaluations, the solver evaluates the last support too (its
    rule: the result's objective is always evaluated), which the engine's own loop did not.
    """
    max_iter, patience = options["max_iter"], options["patience"]
    pairs = search_pairs(problem, start)
    surrogate = (Surrogate if problem.n_labels == 2 else MulticlassSurrogate)(
        problem,
        pairs=pairs,
        temperature=options["temperature"],
        batch_size=options["batch_size"],
    )
    result = stochastic_iht(
        _BoxSteps(surrogate, follow_up=FOLLOW_UP_PAIRS * problem.budget),
        tvcs_projection(pairs.structure),
        w0=pairs.restrict(start).astype(np.float64),
        step=options["step"],
        schedule="inv_sqrt_shifted",
        maximize=True,
        max_iter=max_iter,
        eval_every=options["eval_every"],
        evaluate=lambda x, support: exact_accuracy(problem, pairs.expand(support)),
        w0_value=start_acc,
        n_evals_no_change=patience,
        min_improvement=options["min_improvement"],
        seed=rng,
        callback=_step_report(progress, max_iter, start_acc),
        time_limit=(
            None if deadline is None else max(deadline - time.perf_counter(), _ONE_STEP_SECONDS)
        ),
    )
    history = [
        (int(t), float(a)) for t, a in zip(result.history_iterations, result.history, strict=True)
    ]
    searched = None if pairs.entries is None else int(pairs.size)
    over = "" if searched is None else f" over {searched:,} candidate pairs"
    t = result.iterations
    message = {
        "max_iter": f"{t} steps{over}",
        "no_improvement": (
            f"{t} steps{over} (the last {patience} evaluations found nothing better by more "
            f"than {options['min_improvement']:g})"
        ),
        "time_limit": f"stopped by the time limit after {t} steps{over}",
    }.get(result.status, f"{t} steps{over}, then {result.message}")
    if not result.objective > start_acc:  # nothing better than the start: keep it as it is
        return start, start_acc, t, history, result.status, searched, message
    best = pairs.expand(result.support)
    return best, result.objective, t, history, result.status, searched, message


def _step_report(progress, max_iter: int, start_acc: float):
    """The steps' callback: logs each evaluation and calls ``progress(fraction, message)``
    after every step (the bar moves even between evaluations); never stops the steps."""
    best_acc = start_acc

    def report(t: int, x: np.ndarray, accuracy: float | None) -> bool:
        nonlocal best_acc
        if accuracy is not None:
            best_acc = max(best_acc, accuracy)
            logger.debug("tvcs-iht %d: support accuracy %.5f (best %.5f)", t, accuracy, best_acc)
        if progress is not None:
            start = _start_share(max_iter)
            fraction = start + (_IHT_SHARE - start) * t / max_iter
            progress(fraction, f"iteration {t}/{max_iter}, best accuracy {best_acc:.4f}")
        return False

    return report


def tvcs_iht(
    problem: AssignmentProblem,
    *,
    rng: np.random.Generator,
    max_iter: int = 10,
    step: float = 1.0,
    batch_size: int = 4,
    temperature: float = 0.5,
    eval_every: int = 1,
    patience: int = 1,
    min_improvement: float = 1e-4,
    bound_gap: float = 1e-4,
    search_when_spent: bool = False,
    refine: bool = True,
    refine_rounds: int = 2,
    progress=None,
    time_limit: float | None = None,
) -> MethodOutput:
    """Run stochastic IHT from the greedy assignment; see the module docstring for the method.

    Parameters
    ----------
    problem : AssignmentProblem
    rng : numpy.random.Generator
        Source of the answer samples.
    max_iter : int
        Stochastic gradient steps at most.
    step : float
        Step size of iteration ``t`` is ``step / sqrt(1 + t / 10)``.
    batch_size, temperature
        Passed to :class:`~assignment.engine.surrogate.Surrogate`.
    eval_every : int
        Exact evaluation period.
    patience : int
        Stop the steps after this many evaluations in a row without a better support.
    min_improvement : float
        A support is better, for ``patience``, when its exact accuracy beats the best so far
        by more than this (the best is still kept by strict comparison).
    bound_gap : float
        Return the greedy start when it is within this of the accuracy upper bound.
    search_when_spent : bool
        Take the steps even when the greedy start spends the whole budget (by default it is
        then returned as it is; docs/design.md#tvcs-iht, step 3).
    refine : bool
        Run the final local improvement on a support the steps found better than greedy's
        (docs/design.md#tvcs-iht, step 6).
    refine_rounds : int
        Destroy-and-repair rounds of the final pass at most (``max_rounds`` of
        :func:`~assignment.engine.local_search.improve`).
    progress : callable, optional
        ``progress(fraction, message)``.
    time_limit : float, optional
        Stop after this many seconds (the greedy start always completes; the best support so
        far is returned, after a final pass that starts no new round once the limit has
        passed).

    Returns
    -------
    MethodOutput
        ``details`` holds ``accuracy`` (exact for the searched support, before any top-up
        beyond the exact limit of workers per task), ``start_accuracy`` (greedy's),
        ``stopped`` (str: why the search ended, one of :data:`STOPPED_BEFORE_STEPS` or the
        steps' status), ``topped_up`` (int: pairs added beyond the exact limit,
        :func:`~assignment.engine.search_pairs.exact_workers_limit`, of workers per task)
        and ``final_pass`` (bool: the final pass scored by exact accuracy ran, whether or not
        it improved the support; False with ``refine=False``, past the time limit for
        ``K > 2``, for two labels when the steps kept greedy's start, or when the run
        stopped before the steps) and ``searched_pairs`` (int or None: the number of
        candidate pairs the steps searched, None when they searched every pair or took no
        step); ``history`` the
        exact accuracy of the support along the run. The message says the same for people.
    """
    options = {
        "max_iter": max_iter,
        "step": step,
        "batch_size": batch_size,
        "temperature": temperature,
        "eval_every": eval_every,
        "patience": patience,
        "min_improvement": min_improvement,
        "bound_gap": bound_gap,
        "search_when_spent": search_when_spent,
        "refine": refine,
        "refine_rounds": refine_rounds,
        "time_limit": time_limit,
    }
    check_options(**options)
    if problem.n_workers * problem.n_tasks > DENSE_PAIRS_MAX:
        return _greedy_only(problem, progress)
    deadline = None if time_limit is None else time.perf_counter() + time_limit

    def greedy_progress(fraction: float, message: str) -> None:
        if progress is not None:
            progress(_start_share(max_iter) * fraction, f"greedy start: {message}")

    optimum = single_worker_optimum(problem)
    if optimum is not None:  # the optimum itself, at the cost of one projection
        return _single_worker_outcome(problem, optimum)
    greedy, greedy_state = greedy_run(problem, progress=greedy_progress)
    start, start_acc = greedy.assignment, greedy.details["accuracy"]
    early = _stop_before_steps(problem, start, start_acc, search_when_spent, bound_gap)
    if early is not None:
        message, stopped = early
        history = [(0, start_acc)]
        return _outcome(problem, start, start_acc, start_acc, 0, history, message, stopped)
    best, best_acc, iterations, history, stopped, searched, message = _steps(
        problem, start, start_acc, rng=rng, options=options, progress=progress, deadline=deadline
    )
    message = f"greedy start {start_acc:.4f}; {message}"
    final_pass = False
    if refine and problem.n_labels > 2:
        if deadline is not None and time.perf_counter() > deadline:
            message += "; no final pass (time limit)"
        else:
            best, best_acc, note = _refine_multiclass(problem, best, best_acc)
            final_pass = True
            if note:
                history.append((iterations, best_acc))
            message += "; final pass: " + (note or "prune and refill found nothing better")
    elif refine and best is start:  # the pass on greedy's own assignment pays too little
        message += "; no final pass (the steps found nothing better than greedy's assignment)"
    elif refine:
        out = _final_pass(problem, best, greedy_state, rng, refine_rounds, deadline, progress)
        if out.accuracy > best_acc:
            history.append((iterations, out.accuracy))
        best, best_acc = out.assignment, out.accuracy
        message += "; final pass: " + out.message
        final_pass = True
    facts = {"final_pass": final_pass, "searched_pairs": searched}
    return _outcome(
        problem, best, best_acc, start_acc, iterations, history, message, stopped, **facts
    )


def _stop_before_steps(problem, start, start_acc, search_when_spent, bound_gap):
    """``(message, stopped)`` when greedy's ``start`` is returned without steps, else None:
    it spends the whole budget (two labels; unless ``search_when_spent``), or it is within
    ``bound_gap`` of the accuracy upper bound."""
    spent = int(start.sum())
    if spent >= problem.budget and problem.n_labels == 2 and not search_when_spent:
        message = (
            f"greedy start {start_acc:.4f} spends the whole budget ({spent:,} pairs): "
            "no IHT steps (on starts that spend it they have found nothing better)"
        )
        return message, "budget_spent"
    bound = _upper_bound(problem) if bound_gap > 0 else None
    if bound is not None and bound - start_acc <= bound_gap:
        message = (
            f"greedy start {start_acc:.4f} is within {bound_gap:g} of the upper bound "
            f"{bound:.4f}: nothing left to search for"
        )
        return message, "near_bound"
    return None


def _final_pass(problem, support, greedy_state, rng, rounds: int, deadline, progress):
    """:func:`~assignment.engine.local_search.improve` of the steps' ``support`` (two labels),
    from greedy's final state (its atoms rebuilt only on the tasks whose workers the steps
    changed), reporting ``progress`` after every round."""

    def round_done(rnd: int, accuracy: float) -> None:
        if progress is not None:
            fraction = _IHT_SHARE + (1 - _IHT_SHARE) * (rnd + 1) / (rounds + 1)
            progress(fraction, f"final pass round {rnd}, best accuracy {accuracy:.4f}")

    return improve(
        problem,
        support,
        rng=rng,
        max_rounds=rounds,
        deadline=deadline,
        progress=round_done,
        state=greedy_state if problem.confusion is None else None,
    )


def _refine_multiclass(problem: AssignmentProblem, best: np.ndarray, best_acc: float):
    """The final pass for ``K > 2`` labels: round 0 of
    :func:`~assignment.engine.local_search.improve` (prune the workers that add nothing by
    exact K-class accuracy, refill by greedy's exact marginal gains, prune again), kept only if
    it helps. Returns ``(assignment, accuracy, note)``; ``note`` is empty when nothing changed.
    The destroy-and-repair rounds need the binary greedy state's removals, not written for
    ``K`` labels yet."""
    pruned = prune(problem, best)
    refilled = greedy_assignment(problem, initial=pruned).assignment
    refilled = prune(problem, refilled)
    acc = exact_accuracy(problem, refilled)
    if acc <= best_acc:
        return best, best_acc, ""
    note = f"prune and refill {100 * (acc - best_acc):+.2f} points"
    return refilled, acc, note


def _upper_bound(problem: AssignmentProblem) -> float | None:
    """The accuracy upper bound, or None where it is not computed (more than
    ``MAX_EXACT_WORKERS`` workers on a task, or more answer states than the exact K-class
    accuracy takes)."""
    if problem.max_workers_per_task.max(initial=0) > MAX_EXACT_WORKERS:
        return None
    if problem.n_labels == 2:
        return accuracy_upper_bound(problem).value
    try:
        return accuracy_upper_bound(problem).value
    except ValueError:  # too many answer states for the exact K-class accuracy
        return None


def _single_worker_outcome(problem, optimum) -> MethodOutput:
    """At most one worker per task: the exact optimum of
    :func:`~assignment.engine.single_worker.single_worker_optimum`, with no greedy start (its
    ``start_accuracy`` is the optimum's own)."""
    accuracy = exact_accuracy(problem, optimum)
    message = (
        "at most one worker per task, so accuracy is a sum of per-pair gains: one exact "
        f"projection of them gives the optimum {accuracy:.4f}"
    )
    if not optimum.any():
        message = (
            "at most one worker per task, and no pair the caps allow has a positive gain (one "
            f"more answer would change no task's vote): nobody is assigned, {accuracy:.4f} "
            "is the optimum"
        )
    history = [(0, accuracy)]
    return _outcome(problem, optimum, accuracy, accuracy, 0, history, message, "single_worker")


def _outcome(
    problem,
    best,
    best_acc,
    start_acc,
    iterations,
    history,
    message,
    stopped,
    *,
    final_pass=False,
    searched_pairs=None,
) -> MethodOutput:
    """The outcome, after topping up tasks at the exact limit of workers
    (:func:`~assignment.engine.search_pairs.exact_workers_limit`: 20 for two labels, 3 for
    sixty) when caps allow more; ``stopped``, ``final_pass`` and ``searched_pairs`` are the
    ``details`` of those names."""
    added = 0
    limit = exact_workers_limit(problem)
    if problem.max_workers_per_task.max(initial=0) > limit:
        best, added = _top_up(problem, best, limit)
        if added:
            message += (
                f"; {added} pair(s) added beyond {limit} workers per task, the most whose "
                "answers the search scores exactly, to the most informative workers"
            )
    details = {
        "accuracy": best_acc,
        "start_accuracy": start_acc,
        "stopped": stopped,
        "topped_up": added,
        "final_pass": final_pass,
        "searched_pairs": searched_pairs,
    }
    return MethodOutput.from_assignment(
        best, message=message, iterations=iterations, history=history, details=details
    )
