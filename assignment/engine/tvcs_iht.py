"""``tvcs-iht``: stochastic iterative hard thresholding with the exact TVCS projection.

Yang et al. (ICML 2017) §5.2 and supplementary §4: ascend the smooth surrogate of expected
accuracy (:mod:`assignment.engine.surrogate`) by stochastic gradient steps and project every
iterate onto the caps with the exact TVCS projection (Algorithm 1 with a stochastic gradient,
Nguyen, Needell & Woolf 2014). The iterate ``X`` is kept in the box ``[0, 1]`` (a worker's vote
weight); the projection onto ``{X in [0, 1]^(n x m) : supp(X) respects the caps}`` keeps, for
``Y = X + step * grad``, the support maximising ``sum gain(Y_ij)`` with ``gain(y) = y^2`` on
``(0, 1]``, ``2 y - 1`` above 1 and 0 below 0, and clips ``Y`` to ``[0, 1]`` on it: the TVCS
projection of ``sqrt(gain(Y))`` does exactly that. Consecutive projections are warm-started.

The assignment is the support of ``X``. Its exact expected accuracy is evaluated every
``eval_every`` iterations and the best support seen is kept, so the result is never worse than
the starting point: the projection of the linear weights ``(2 Q - 1)^2``.

Final local improvement (``refine=True``, the default). The surrogate smooths away a structure
of the exact objective: under prior 0.5 a task with two workers is exactly as accurate as with
the better one alone (DESIGN.md §4), so IHT supports spend budget on second workers that add
nothing, and the best assignments use odd counts that a smooth surrogate does not single out.
:func:`assignment.engine.local_search.improve` repairs this by exact accuracies: it prunes the
workers that add nothing, refills by exact marginal gains with a pair look-ahead, and then runs
up to ``refine_rounds`` destroy-and-repair rounds that alternately remove the pairs worth least
and all pairs of a block of workers, and refill again, keeping a round only if it helps. So the
pass never lowers the accuracy.

Tasks take at most ``MAX_EXACT_WORKERS = 20`` workers during the search (a lower per-task cap
than the problem's when it allows more), so that every support can be evaluated exactly. When
the problem allows more and budget is left, tasks that reached 20 are then topped up with the
most reliable eligible workers that still have room (the exact projection of ``(2 Q - 1)^2`` on
the remaining caps): an extra worker never lowers the Bayes vote's expected accuracy, and
:func:`~assignment.engine.solve.solve` then reports a Monte Carlo estimate.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from assignment.engine._sampled_votes import clip_to_support
from assignment.engine.accuracy import MAX_EXACT_WORKERS, expected_accuracy
from assignment.engine.local_search import improve
from assignment.engine.options import Option
from assignment.engine.problem import AssignmentProblem
from assignment.engine.surrogate import Surrogate
from projections import TVCSStructure
from projections.tvcs import project

__all__ = ["OPTIONS", "IHTOutcome", "check_options", "tvcs_iht"]

logger = logging.getLogger(__name__)

#: Share of the run's progress bar given to the IHT steps; the final pass has the rest.
_IHT_SHARE = 0.8


@dataclass(frozen=True)
class IHTOutcome:
    """What :func:`tvcs_iht` returns; ``expected_accuracy`` is exact for the searched support
    (before any top-up beyond ``MAX_EXACT_WORKERS`` workers per task)."""

    assignment: np.ndarray
    expected_accuracy: float
    start_accuracy: float
    iterations: int
    history: list = field(default_factory=list)  # (iteration, exact accuracy of the support)
    message: str = ""


def _structure(problem: AssignmentProblem) -> TVCSStructure:
    """The problem's caps, with at most ``MAX_EXACT_WORKERS`` workers per task."""
    if problem.max_workers_per_task.max(initial=0) <= MAX_EXACT_WORKERS:
        return problem.structure
    return TVCSStructure.from_matrix(
        problem.quality.shape,
        max_per_row=problem.max_tasks_per_worker,
        max_per_col=np.minimum(problem.max_workers_per_task, MAX_EXACT_WORKERS),
        total=problem.budget,
    )


def _top_up(problem: AssignmentProblem, assignment: np.ndarray) -> tuple[np.ndarray, int]:
    """Spend left-over budget on tasks at ``MAX_EXACT_WORKERS`` whose cap allows more."""
    counts = assignment.sum(axis=0)
    room = np.where(counts >= MAX_EXACT_WORKERS, problem.max_workers_per_task - counts, 0).clip(
        min=0
    )
    left = problem.budget - int(counts.sum())
    if left <= 0 or not room.any():
        return assignment, 0
    weights = np.where(assignment, 0.0, np.abs(2.0 * problem.quality - 1.0))
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
        "Stochastic gradient steps of the IHT phase. More steps explore more supports and take "
        "longer.",
        minimum=0,
        maximum=10_000,
    ),
    Option(
        "step",
        float,
        "Step size: step t moves by step / sqrt(1 + t / 10) along the sampled gradient.",
        minimum=0,
        exclusive_minimum=True,
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
        minimum=0,
        exclusive_minimum=True,
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
        "refine",
        bool,
        "Run the final improvement pass scored by exact accuracy (recommended).",
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


def tvcs_iht(
    problem: AssignmentProblem,
    *,
    rng: np.random.Generator,
    max_iter: int = 30,
    step: float = 5.0,
    batch_size: int = 4,
    temperature: float = 1.0,
    eval_every: int = 10,
    refine: bool = True,
    refine_rounds: int = 20,
    progress=None,
    time_limit: float | None = None,
) -> IHTOutcome:
    """Run stochastic IHT; see the module docstring for the method.

    Parameters
    ----------
    problem : AssignmentProblem
    rng : numpy.random.Generator
        Source of the answer samples.
    max_iter : int
        Number of stochastic gradient steps.
    step : float
        Step size of iteration ``t`` is ``step / sqrt(1 + t / 10)``.
    batch_size, temperature
        Passed to :class:`~assignment.engine.surrogate.Surrogate`.
    eval_every : int
        Exact evaluation period.
    refine : bool
        Run the final local improvement (see the module docstring).
    refine_rounds : int
        Destroy-and-repair rounds of the final pass at most (``max_rounds`` of
        :func:`~assignment.engine.local_search.improve`).
    progress : callable, optional
        ``progress(fraction, message)``.
    time_limit : float, optional
        Stop after this many seconds (the best support so far is returned, after a final pass
        that starts no new round once the limit has passed).
    """
    check_options(
        max_iter=max_iter,
        step=step,
        batch_size=batch_size,
        temperature=temperature,
        eval_every=eval_every,
        refine=refine,
        refine_rounds=refine_rounds,
        time_limit=time_limit,
    )
    start = time.perf_counter()
    q, prior, structure = problem.quality, problem.prior, _structure(problem)
    oracle = Surrogate(problem, temperature=temperature, batch_size=batch_size)
    first = project(problem.mask(np.abs(2.0 * q - 1.0)), structure)
    x = first.support.astype(np.float64)
    warm = first.warm_start
    best = first.support
    best_acc = start_acc = expected_accuracy(q, best, prior=prior)
    history = [(0, start_acc)]
    iterations = 0
    message = f"{max_iter} iterations"
    for t in range(1, max_iter + 1):
        _, y, projection_input = oracle.step(x, rng, step / np.sqrt(1.0 + t / 10.0))
        res = project(projection_input, structure, warm_start=warm)
        warm = res.warm_start
        x = clip_to_support(y, res.support)
        iterations = t
        if t % eval_every == 0 or t == max_iter:
            acc = expected_accuracy(q, res.support, prior=prior)
            history.append((t, acc))
            if acc > best_acc:
                best, best_acc = res.support, acc
            logger.debug("tvcs-iht %d: support accuracy %.5f (best %.5f)", t, acc, best_acc)
        if progress is not None:  # every iteration: the bar moves even between evaluations
            progress(
                _IHT_SHARE * t / max_iter,
                f"iteration {t}/{max_iter}, best accuracy {best_acc:.4f}",
            )
        if time_limit is not None and time.perf_counter() - start > time_limit:
            message = f"stopped by the time limit after {t} iterations"
            break
    if refine:

        def round_done(rnd: int, accuracy: float) -> None:
            if progress is not None:
                fraction = _IHT_SHARE + (1 - _IHT_SHARE) * (rnd + 1) / (refine_rounds + 1)
                progress(fraction, f"final pass round {rnd}, best accuracy {accuracy:.4f}")

        deadline = None if time_limit is None else start + time_limit
        out = improve(
            problem,
            best,
            rng=rng,
            max_rounds=refine_rounds,
            deadline=deadline,
            progress=round_done,
        )
        if out.accuracy > best_acc:
            history.append((iterations, out.accuracy))
        best, best_acc = out.assignment, out.accuracy
        message += "; final pass: " + out.message
    if problem.max_workers_per_task.max(initial=0) > MAX_EXACT_WORKERS:
        best, added = _top_up(problem, best)
        if added:
            message += f"; {added} pair(s) added beyond {MAX_EXACT_WORKERS} workers per task"
    return IHTOutcome(best, best_acc, start_acc, iterations, history, message)
