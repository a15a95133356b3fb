"""Solving a problem in shards of tasks, coordinated by prices (beyond one machine).

The tasks are split into shards (:func:`split_tasks`); each worker's cap ``c_i`` and the budget
``B`` are cut into integer shares, ``c_i = sum_s c_{s,i}`` and ``B = sum_s B_s``
(:func:`initial_shares`), so each shard is an ordinary problem (:func:`shard_problem`) that any
method of :func:`~assignment.engine.solve.solve` solves on its own, and the union of the shard
answers is feasible by construction, with accuracy ``A(X) = sum_s |J_s| A_s(X_s) / m``. Rounds
(:func:`rebalance`) move share units from a worker's cheapest shard to its dearest, priced by
the exact leave-one-out loss of its least useful pair there (:func:`shard_prices`), and keep a
round only if the merged accuracy does not fall. :func:`solve_sharded` runs it all in one
process, solving each round's :class:`ShardJob` list through ``map_shards`` (one after the
other by default); :mod:`assignment.services.shards` runs the same steps with one Celery task
per shard. Any number of labels, and Dawid–Skene quality.

The method, why it is feasible, the prices, the rounds and what was measured:
docs/design.md#shards-one-run-on-several-machines-coordinated-by-prices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from assignment.engine._problem_accuracy import pair_losses
from assignment.engine.accuracy import _validate_assignment
from assignment.engine.greedy_confusion import removal_losses_confusion
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.solve import evaluate, solve

__all__ = [
    "MIN_GAIN",
    "ROUNDS",
    "STEP",
    "TOL",
    "RoundRecord",
    "ShardJob",
    "ShardOutcome",
    "ShardedResult",
    "initial_shares",
    "judge_round",
    "merge_outcomes",
    "merged_accuracy",
    "propose_round",
    "rebalance",
    "shard_prices",
    "shard_problem",
    "smallest_step",
    "solve_shard",
    "solve_sharded",
    "split_tasks",
]


#: Coordination rounds after the proportional one, by default.
ROUNDS = 4
#: Fraction of a donor's share moved per round, by default.
STEP = 0.25
#: Price spreads at most this (accuracy of one task) are agreement, by default.
TOL = 1e-4
#: A round that raises the merged accuracy by less than this (or lowers it) is the last one,
#: by default: 1e-5 of mean accuracy is 0.001 points.
MIN_GAIN = 1e-5


@dataclass(frozen=True, eq=False)
class ShardJob:
    """What one shard's solver needs besides the problem.

    Attributes
    ----------
    index : int
        The shard ``s``.
    tasks : ndarray of int64, shape (m_s,)
        Its tasks, ascending.
    worker_caps : ndarray of int64, shape (n_workers,)
        Its shares ``c_{s,i}`` of the workers' caps.
    budget : int
        Its share ``B_s`` of the budget.
    """

    index: int
    tasks: np.ndarray
    worker_caps: np.ndarray
    budget: int


@dataclass(frozen=True, eq=False)
class ShardOutcome:
    """One shard's answer and prices.

    Attributes
    ----------
    index : int
    workers, tasks : ndarray of int64, shape (n_pairs,)
        The assigned pairs, ``tasks`` in the whole problem's numbering.
    accuracy : float
        Mean expected accuracy over the shard's tasks.
    worker_price : ndarray of float64, shape (n_workers,)
        ``p_{s,i}``: 0 where the share is slack, NaN where it is 0 (no price).
    budget_price : float
        ``q_s``.
    seconds : float
        The shard's solve time.
    """

    index: int
    workers: np.ndarray
    tasks: np.ndarray
    accuracy: float
    worker_price: np.ndarray
    budget_price: float
    seconds: float


@dataclass(frozen=True)
class RoundRecord:
    """One coordination round: the merged accuracy it reached, whether it was kept, the
    largest price spread over workers and the budget before its moves, and how many shards were
    solved."""

    round: int
    accuracy: float
    accepted: bool
    price_spread: float
    shards_solved: int


@dataclass(frozen=True, eq=False)
class ShardedResult:
    """Outcome of :func:`solve_sharded`.

    Attributes
    ----------
    assignment : ndarray of bool, shape (n_workers, n_tasks)
        The merged answer of the best accepted round; feasible.
    expected_accuracy : float
        Of ``assignment`` on the whole problem (:func:`~assignment.engine.solve.evaluate`).
    accuracy_standard_error : float or None
    rounds : list of RoundRecord
        Round 0 is the proportional split.
    worker_shares : ndarray of int64, shape (n_shards, n_workers)
        The shares of the answer; columns sum to the workers' caps.
    budget_shares : ndarray of int64, shape (n_shards,)
    shard_tasks : list of ndarray
    """

    assignment: np.ndarray
    expected_accuracy: float
    accuracy_standard_error: float | None
    rounds: list[RoundRecord]
    worker_shares: np.ndarray
    budget_shares: np.ndarray
    shard_tasks: list[np.ndarray] = field(repr=False)


def split_tasks(problem: AssignmentProblem, n_shards: int) -> list[np.ndarray]:
    """Cut the tasks into ``n_shards`` shards of sizes within one, balanced by category.

    Tasks are ordered by their column of the quality table (their category for a problem by
    category, themselves otherwise), stably, and dealt round robin: every shard gets
    ``floor`` or ``ceil`` of ``m_c / S`` tasks of each category ``c``.

    Returns
    -------
    list of ndarray of int64, each ascending; ``n_shards`` of them, partitioning ``range(m)``.

    Raises
    ------
    ValueError
        If ``n_shards`` is not an integer in ``[1, n_tasks]``.
    """
    m = problem.n_tasks
    if isinstance(n_shards, bool) or not isinstance(n_shards, int | np.integer):
        raise ValueError(f"n_shards must be an integer, got {n_shards!r}")
    if not 1 <= n_shards <= max(m, 1):
        raise ValueError(f"n_shards must be in [1, {max(m, 1)}] (the tasks), got {n_shards}")
    order = np.argsort(problem.task_column, kind="stable")
    return [np.sort(order[s::n_shards]).astype(np.int64) for s in range(n_shards)]


def initial_shares(total, sizes: Sequence[int]) -> np.ndarray:
    """Split integer caps in proportion to ``sizes``, staggered across the caps.

    Parameters
    ----------
    total : int or ndarray of int, shape (n,)
        What to split (one cap, or one per worker).
    sizes : sequence of int, length S
        The shard sizes ``|J_s|``, summing to ``m > 0``.

    Returns
    -------
    ndarray of int64, shape (S,) or (S, n)
        With ``P_s = |J_1| + ... + |J_s|`` and an offset ``o_i`` in ``[0, m)``::

            share_{s,i} = floor((c_i P_s + o_i) / m) - floor((c_i P_{s-1} + o_i) / m),

        which is ``floor`` or ``ceil`` of ``c_i |J_s| / m`` and sums to ``c_i`` exactly
        (systematic rounding, in integers). The offsets are ``m // 2`` for one cap and
        ``floor(m frac(i phi))`` (``phi`` the golden ratio) for worker ``i``: the units left
        over by the floors land in different shards for different workers. (With one offset
        for all, a worker cap below ``S`` would put every worker's units in the same shards and
        leave the others with none.)
    """
    t = np.asarray(total, dtype=np.int64)
    w = np.asarray(sizes, dtype=np.int64)
    m = int(w.sum())
    if t.ndim == 0:
        offset = np.int64(m // 2)
    else:
        offset = np.floor(m * np.modf(np.arange(t.shape[0]) * 0.6180339887498949)[0])
        offset = offset.astype(np.int64)
    cumulative = np.concatenate([[0], np.cumsum(w)])
    marks = (np.multiply.outer(cumulative, t) + offset) // m
    return np.diff(marks, axis=0).astype(np.int64)


def shard_problem(problem: AssignmentProblem, job: ShardJob) -> AssignmentProblem:
    """The problem of one shard: its tasks (their quality, caps, prior and eligibility), the
    worker caps ``job.worker_caps``, the budget ``job.budget`` and the workers' confusion
    matrices, shape (n_workers, K, K), when the problem has them.

    A problem by category stays by category (the table, ``task_category[tasks]``); a dense one
    gets the columns ``quality[:, tasks]``, shape (n_workers, m_s).
    """
    t = job.tasks
    if problem.by_category:
        quality = QualityByCategory(problem.quality_table, problem.task_column[t])
    else:
        quality = problem.quality_table[:, t]
    return AssignmentProblem(
        quality,
        max_workers_per_task=problem.max_workers_per_task[t],
        max_tasks_per_worker=job.worker_caps,
        budget=int(job.budget),
        prior=problem.prior_distribution[t],
        eligible=None if problem.eligible is None else problem.eligible[:, t],
        n_labels=problem.n_labels,
        confusion=problem.confusion,
    )


def shard_prices(problem: AssignmentProblem, assignment: np.ndarray) -> tuple[np.ndarray, float]:
    """Per-worker prices ``p_i`` and the budget price ``q`` of one shard's answer.

    Parameters
    ----------
    problem : AssignmentProblem
        The shard's problem (:func:`shard_problem`): its caps are the shares.
    assignment : ndarray of bool, shape (n_workers, m_s)

    Returns
    -------
    worker_price : ndarray of float64, shape (n_workers,)
        0 where ``|X[i]| < c_i``; NaN where ``c_i = 0``; otherwise the smallest leave-one-out
        loss of the worker's pairs, clipped at 0.
    budget_price : float
        0 if pairs are fewer than the budget, otherwise the smallest loss over all pairs.
    """
    assignment = _validate_assignment(assignment, problem.shape)
    used = assignment.sum(axis=1)
    caps = problem.max_tasks_per_worker
    workers, _, loss = _removal_losses(problem, assignment)
    loss = np.maximum(loss, 0.0)
    last = np.full(problem.n_workers, np.inf)
    np.minimum.at(last, workers, loss)
    price = np.where(used < caps, 0.0, last)
    price[caps == 0] = np.nan
    binding = problem.budget > 0 and int(used.sum()) >= problem.budget
    budget_price = float(loss.min(initial=np.inf)) if binding else 0.0
    return price, budget_price if np.isfinite(budget_price) else 0.0


def _removal_losses(problem: AssignmentProblem, assignment: np.ndarray):
    """The leave-one-out losses of every assigned pair: the Dawid–Skene vote's under the
    problem's confusion matrices when it has them, else the Bayes vote's."""
    if problem.confusion is not None:
        return removal_losses_confusion(problem, assignment)
    return pair_losses(problem, assignment, np.arange(problem.n_tasks))


def solve_shard(
    problem: AssignmentProblem,
    job: ShardJob,
    *,
    method: str,
    seed=None,
    options=None,
    progress=None,
) -> ShardOutcome:
    """Solve one shard with :func:`~assignment.engine.solve.solve` and price its answer;
    ``progress(fraction, message)`` is the solver's progress callback (an exception it raises
    stops the solve)."""
    sub = shard_problem(problem, job)
    result = solve(sub, method=method, seed=seed, progress=progress, **(options or {}))
    x = np.asarray(result.assignment, dtype=bool)
    price, budget_price = shard_prices(sub, x)
    workers, cols = np.nonzero(x)
    return ShardOutcome(
        index=job.index,
        workers=workers.astype(np.int64),
        tasks=job.tasks[cols].astype(np.int64),
        accuracy=result.expected_accuracy,
        worker_price=price,
        budget_price=budget_price,
        seconds=result.seconds,
    )


def _move(shares: np.ndarray, price: np.ndarray, used: np.ndarray, step: float, tol: float):
    """Move units of one coupling cap along its price spread (see :func:`rebalance`).

    ``shares, price, used`` have shape (S, k) (``k`` caps: workers, or 1 for the budget);
    returns the new shares and the largest spread.
    """
    holds = (shares > 0) & np.isfinite(price)
    low = np.where(holds, price, np.inf)
    high = np.where((used >= shares) & np.isfinite(price), price, -np.inf)
    donor, receiver = low.argmin(axis=0), high.argmax(axis=0)
    cols = np.arange(shares.shape[1])
    spread = high[receiver, cols] - low[donor, cols]
    spread = np.where(np.isfinite(spread), spread, 0.0)
    move = (spread > tol) & (donor != receiver)
    slack = shares[donor, cols] - used[donor, cols]  # unused units: free to move, all of them
    amount = np.maximum(np.maximum(1, np.ceil(step * shares[donor, cols])), slack)
    amount = np.where(move, np.minimum(amount, shares[donor, cols]), 0).astype(np.int64)
    out = shares.copy()
    np.subtract.at(out, (donor, cols), amount)
    np.add.at(out, (receiver, cols), amount)
    return out, float(spread.max(initial=0.0))


def rebalance(
    worker_shares: np.ndarray,
    budget_shares: np.ndarray,
    outcomes: Sequence[ShardOutcome],
    *,
    step: float,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, float]:
    """One round of price coordination: new shares with the same sums, and the price spread.

    Parameters
    ----------
    worker_shares : ndarray of int64, shape (S, n_workers)
    budget_shares : ndarray of int64, shape (S,)
    outcomes : sequence of ShardOutcome, one per shard in shard order
    step : float in (0, 1]
        Fraction of the donor's share moved (at least one unit, and at least the units the
        donor leaves unused).
    tol : float
        Spreads at most this move nothing.

    Returns
    -------
    worker_shares, budget_shares, spread
        ``spread`` is the largest ``max_s p_{s,i} - min_s p_{s,i}`` over the workers and the
        budget, before the move (0 when every share is priced alike).
    """
    price = np.stack([o.worker_price for o in outcomes])
    used = np.zeros_like(worker_shares)
    for o in outcomes:
        np.add.at(used[o.index], o.workers, 1)
    workers, w_spread = _move(worker_shares, price, used, step, tol)
    b_price = np.array([[o.budget_price] for o in outcomes])
    b_used = np.array([[o.workers.shape[0]] for o in outcomes])
    b_shares = budget_shares[:, None]
    budget, b_spread = _move(b_shares, b_price, b_used, step, tol)
    return workers, budget[:, 0], max(w_spread, b_spread)


def _local_map(problem, method, seed, options) -> Callable:
    def run(jobs: Sequence[ShardJob]) -> list[ShardOutcome]:
        return [solve_shard(problem, j, method=method, seed=seed, options=options) for j in jobs]

    return run


def merged_accuracy(outcomes: Sequence[ShardOutcome], sizes: np.ndarray) -> float:
    """``sum_s |J_s| A_s / m``: the merged answer's accuracy from the shards' (exact when
    theirs are)."""
    return float(sum(o.accuracy * s for o, s in zip(outcomes, sizes, strict=True)) / sizes.sum())


def _check(problem: AssignmentProblem, rounds: int, step: float) -> None:
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds must be a non-negative integer, got {rounds!r}")
    if not 0 < step <= 1:
        raise ValueError(f"step must be in (0, 1], got {step!r}")


def solve_sharded(
    problem: AssignmentProblem,
    *,
    method: str,
    n_shards: int,
    rounds: int = ROUNDS,
    step: float = STEP,
    tol: float = TOL,
    min_gain: float = MIN_GAIN,
    seed=None,
    map_shards: Callable[[Sequence[ShardJob]], list[ShardOutcome]] | None = None,
    **options,
) -> ShardedResult:
    """Solve ``problem`` in ``n_shards`` shards of tasks, coordinating the shares by prices.

    Parameters
    ----------
    problem : AssignmentProblem
        Any number of labels.
    method : str
        Any method of :func:`~assignment.engine.solve.solve`, for every shard.
    n_shards : int
        ``S`` in ``[1, n_tasks]``.
    rounds : int, default 4
        Coordination rounds after the proportional one (0: none).
    step : float, default 0.25
        Fraction of a donor's share moved per round; halved after a rejected round.
    tol : float, default 1e-4
        Price spreads (accuracy of one task) at most this are agreement.
    min_gain : float, default 1e-5
        A round that raises the merged accuracy by less than this is the last
        (:func:`judge_round`).
    seed : int or None
        Every shard is solved with this seed.
    map_shards : callable, optional
        ``map_shards(jobs) -> outcomes`` in job order; default solves them here, one by one.
    **options
        The method's options.

    Returns
    -------
    ShardedResult
        The merged answer of the best round; ``rounds[k].accuracy`` of accepted rounds never
        decreases.
    """
    _check(problem, rounds, step)
    tasks = split_tasks(problem, n_shards)
    if n_shards == 1:
        return _single(problem, tasks, method, seed, options)
    run = map_shards or _local_map(problem, method, seed, options)
    sizes = np.array([t.shape[0] for t in tasks])
    shares = initial_shares(problem.max_tasks_per_worker, sizes)
    budgets = initial_shares(problem.budget, sizes)
    best = run([ShardJob(s, tasks[s], shares[s], int(budgets[s])) for s in range(n_shards)])
    best_accuracy = merged_accuracy(best, sizes)
    history = [RoundRecord(0, best_accuracy, True, math.nan, n_shards)]
    min_step = smallest_step(problem)
    for k in range(1, rounds + 1):
        new_shares, new_budgets, spread, jobs = propose_round(
            tasks, shares, budgets, best, step=step, tol=tol
        )
        if not jobs or step < min_step:
            history.append(RoundRecord(k, best_accuracy, False, spread, 0))
            break
        trial = list(best)
        for outcome in run(jobs):
            trial[outcome.index] = outcome
        accuracy = merged_accuracy(trial, sizes)
        accepted, step, last = judge_round(best_accuracy, accuracy, step, min_gain=min_gain)
        history.append(RoundRecord(k, accuracy, accepted, spread, len(jobs)))
        if accepted:
            best, best_accuracy, shares, budgets = trial, accuracy, new_shares, new_budgets
        if last:
            break
    return _merge(problem, best, shares, budgets, tasks, history, seed)


def judge_round(
    best_accuracy: float, accuracy: float, step: float, *, min_gain: float = MIN_GAIN
) -> tuple[bool, float, bool]:
    """Keep a round or not, the next step, and whether it is the last round.

    A round is kept when its merged accuracy is at least the best so far (so kept rounds never
    lower it); otherwise its shares go back and ``step`` halves. It is the last round when it
    gained less than ``min_gain``: the prices are last-unit estimates, and a round that did not
    pay is not repeated with smaller moves (measured: ``docs/benchmarks/shards.md``).

    Returns
    -------
    accepted : bool
    step : float
    last : bool
    """
    accepted = accuracy >= best_accuracy
    return accepted, step if accepted else step / 2, accuracy - best_accuracy < min_gain


def smallest_step(problem: AssignmentProblem) -> float:
    """Below this ``step`` (``1 / (2 max_i c_i)``) every move is one unit: the rounds stop."""
    return 1.0 / (2 * max(1, int(problem.max_tasks_per_worker.max(initial=1))))


def propose_round(
    tasks: Sequence[np.ndarray],
    worker_shares: np.ndarray,
    budget_shares: np.ndarray,
    best: Sequence[ShardOutcome],
    *,
    step: float,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, float, list[ShardJob]]:
    """The next round's shares (:func:`rebalance`) and the jobs of the shards they change.

    Returns
    -------
    worker_shares : ndarray of int64, shape (S, n_workers)
    budget_shares : ndarray of int64, shape (S,)
    spread : float
    jobs : list of ShardJob
        One per shard whose shares changed (none: the prices agree within ``tol``).
    """
    new_shares, new_budgets, spread = rebalance(
        worker_shares, budget_shares, best, step=step, tol=tol
    )
    jobs = [
        ShardJob(s, tasks[s], new_shares[s], int(new_budgets[s]))
        for s in range(len(tasks))
        if new_budgets[s] != budget_shares[s] or np.any(new_shares[s] != worker_shares[s])
    ]
    return new_shares, new_budgets, spread, jobs


def merge_outcomes(problem: AssignmentProblem, outcomes: Sequence[ShardOutcome]) -> np.ndarray:
    """The union of the shards' pairs, shape (n_workers, n_tasks), bool; ``RuntimeError`` if
    it is infeasible (it cannot be when the shares sum to the caps)."""
    x = np.zeros(problem.shape, dtype=bool)
    for o in outcomes:
        x[o.workers, o.tasks] = True
    if not problem.is_feasible(x):
        raise RuntimeError("the merged shard answers are infeasible (a bug)")
    return x


def _merge(problem, outcomes, shares, budgets, tasks, history, seed) -> ShardedResult:
    x = merge_outcomes(problem, outcomes)
    accuracy, error = evaluate(problem, x, seed=seed)
    return ShardedResult(
        assignment=x,
        expected_accuracy=float(accuracy),
        accuracy_standard_error=error,
        rounds=history,
        worker_shares=shares,
        budget_shares=budgets,
        shard_tasks=tasks,
    )


def _single(problem, tasks, method, seed, options) -> ShardedResult:
    result = solve(problem, method=method, seed=seed, **options)
    x = np.asarray(result.assignment, dtype=bool)
    return ShardedResult(
        assignment=x,
        expected_accuracy=result.expected_accuracy,
        accuracy_standard_error=result.accuracy_standard_error,
        rounds=[RoundRecord(0, result.expected_accuracy, True, math.nan, 1)],
        worker_shares=problem.max_tasks_per_worker[None, :].copy(),
        budget_shares=np.array([problem.budget]),
        shard_tasks=tasks,
    )
