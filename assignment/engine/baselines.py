"""The reference methods every assignment is compared with: random and Q-based LP.

``random``
    A random feasible assignment of maximum size under the caps: the eligible pairs in a random
    order, each taken while there is room, then augmenting paths to a maximum flow; above
    ``MAX_SEARCH_PAIRS`` pairs, over a few random candidate pairs per task
    (:func:`random_pairs`).
``q-lp``
    The offline LP of Ho, Jabbari & Vaughan (ICML 2013) with the caps and budget of the TVCS
    comparison (Yang et al., ICML 2017, §5.2): maximise ``sum_ij w_ij x_ij`` under the caps and
    a credit cap ``sum_i w_ij x_ij <= C`` per task, with ``w_ij = s_ij^2``, the skill
    ``s = (K Q - 1) / (K - 1)``, and ``C = 2 ln((K - 1) / target_error)`` (``(2 Q - 1)^2`` and
    ``2 ln(1 / target_error)`` for two labels). Where the tasks fall into classes of alike
    tasks (same quality column and cap, no eligibility mask), solved with one variable per
    worker and class and rounded by a wrap-around deal (:mod:`~assignment.engine.q_lp_classes`);
    otherwise solved by column generation (:mod:`~assignment.engine.q_lp`) and made integral by
    the exact TVCS projection.

Both, and the Hoeffding argument behind q-lp's weights for ``K`` labels:
docs/design.md#random-and-q-lp.
"""

from __future__ import annotations

import logging

import numpy as np

from assignment.engine.method_output import MethodOutput
from assignment.engine.options import Option
from assignment.engine.problem import AssignmentProblem
from assignment.engine.q_lp import q_lp_weights, solve_q_lp
from assignment.engine.q_lp_classes import solve_class_lp, task_classes
from assignment.engine.search_pairs import MAX_SEARCH_PAIRS
from projections import TVCSStructure
from projections.tvcs import project

__all__ = [
    "Q_LP_OPTIONS",
    "q_lp_assignment",
    "q_lp_credit_cap",
    "q_lp_weights",
    "random_assignment",
    "random_pairs",
]

logger = logging.getLogger(__name__)

#: Default target error of the q-lp baseline: C = 2 ln(1 / 0.05) ~= 6.0.
DEFAULT_TARGET_ERROR = 0.05


#: Above this many pair visits (pairs missing after filling in order, times the pairs), random
#: takes the projection instead of augmenting paths one by one.
AUGMENT_WORK = 1 << 31


def random_assignment(problem: AssignmentProblem, *, rng: np.random.Generator) -> np.ndarray:
    """A random feasible assignment of maximal size, shape (n_workers, n_tasks).

    The eligible pairs in a random order, each taken while its worker, its task and the
    budget have room, then augmenting paths (:func:`_random_maximum`): a maximum-size
    assignment, chosen at random among the maximum-size ones (not uniformly).
    """
    if problem.eligible is None:
        entries = np.arange(problem.n_workers * problem.n_tasks, dtype=np.int64)
    else:
        entries = np.flatnonzero(problem.eligible)
    workers, tasks = _random_maximum(problem, entries, rng)
    support = np.zeros(problem.shape, dtype=bool)
    support[workers, tasks] = True
    return support


def random_pairs(problem: AssignmentProblem, *, rng: np.random.Generator) -> MethodOutput:
    """A random feasible assignment of maximal size as pairs, in memory ``O(pairs)``.

    Up to ``MAX_SEARCH_PAIRS`` pairs it is :func:`random_assignment`'s, the same for the same
    ``rng``. Above, no ``(n, m)`` array is built: each task draws ``k`` workers at
    random (with replacement, duplicates and ineligible pairs dropped), and a maximum-size
    assignment within those pairs only is chosen at random as above (:func:`_random_maximum`).
    ``k`` starts at four times the largest task cap ``s`` and doubles
    while the assignment falls short of ``most = min(budget, sum_i min(c_i, m),
    sum_j min(s_j, n))``, which no assignment exceeds, up to ``max(s, MAX_SEARCH_PAIRS // m,
    1.25 most / m)`` (and ``n``); the message says whether it reached ``most`` (then it is of
    maximum size over every pair).

    Returns
    -------
    MethodOutput
        The assigned pairs and the message; one iteration. ``details`` hold
        ``searched_pairs`` (int or None: the random candidate pairs of the last draw, None when
        every pair was searched) and ``most_pairs`` (int or None: ``most`` above, which no
        assignment exceeds, reached when ``n_assigned == most_pairs``; None when every pair
        was searched: the assignment is then of maximum size).
    """
    n, m = problem.shape
    if n * m <= MAX_SEARCH_PAIRS:
        return MethodOutput.from_assignment(
            random_assignment(problem, rng=rng),
            message="random maximal",
            details={"searched_pairs": None, "most_pairs": None},
        )
    most = min(
        int(problem.budget),
        int(np.minimum(problem.max_tasks_per_worker, m).sum()),
        int(np.minimum(problem.max_workers_per_task, n).sum()),
    )
    s = int(problem.max_workers_per_task.max(initial=0))
    # At most about MAX_SEARCH_PAIRS candidates, or a quarter more than the pairs it may take.
    k_max = min(n, max(s, MAX_SEARCH_PAIRS // m, -(-5 * most // (4 * m))))
    k = min(k_max, max(1, 4 * s))
    while True:
        entries = _random_candidates(problem, k, rng)
        workers, tasks = _random_maximum(problem, entries, rng)
        if workers.size >= most or k >= k_max:
            break
        k = min(k_max, 2 * k)
    reach = "the most the caps allow" if workers.size == most else f"the caps allow {most:,}"
    message = f"random maximal over {entries.shape[0]:,} random candidate pairs ({reach})"
    details = {"searched_pairs": int(entries.shape[0]), "most_pairs": most}
    return MethodOutput.from_pairs(problem.shape, workers, tasks, message=message, details=details)


def _random_candidates(problem: AssignmentProblem, k: int, rng: np.random.Generator) -> np.ndarray:
    """Flat indices ``i * m + j`` (ascending, distinct) of ``k`` workers drawn at random for
    each task, the ineligible pairs dropped."""
    n, m = problem.shape
    entries = np.unique(rng.integers(0, n, size=(k, m), dtype=np.int64) * m + np.arange(m))
    if problem.eligible is not None:
        entries = entries[problem.eligible.reshape(-1)[entries]]
    return entries


def _random_maximum(
    problem: AssignmentProblem, entries: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A maximum-size assignment within the pairs ``entries`` (flat indices ``i m + j``,
    ascending), chosen at random: ``(workers, tasks)``, shapes (k,).

    The pairs in a random order, each taken while its worker, its task and the budget have
    room (``O(p)``): a maximal assignment. Then, while the budget lasts, augmenting paths
    (a worker with room, a pair not taken, a task, a pair taken, a worker, ... a task with
    room) each add a pair, until none is left: the assignment is then a maximum flow, of
    maximum size (:mod:`~assignment.engine._random_fill`). Filling in order leaves few or none
    to find (none when it reaches ``most = min(budget, sum_i min(c_i, d_i), sum_j
    min(s_j, d_j))``, ``d``: a worker's or a task's pairs), each one a breadth-first search,
    ``O(p)``. When it falls so far short that ``(most - taken) p`` exceeds ``AUGMENT_WORK``
    (an eligibility mask that filling in order suits badly), the exact projection of random
    weights gives the maximum size instead, in one solve (:func:`_random_projection`).
    """
    from assignment.engine._random_fill import augment, take_in_order  # (numba: not on import)

    n, m = problem.shape
    workers, tasks = np.divmod(entries, m)
    worker_room = problem.max_tasks_per_worker.astype(np.int64)
    task_room = problem.max_workers_per_task.astype(np.int64)
    order = rng.permutation(entries.shape[0])
    taken, budget = take_in_order(workers, tasks, order, worker_room, task_room, problem.budget)
    del order
    most = min(
        int(problem.budget),
        int(np.minimum(problem.max_tasks_per_worker, np.bincount(workers, minlength=n)).sum()),
        int(np.minimum(problem.max_workers_per_task, np.bincount(tasks, minlength=m)).sum()),
    )
    short = most - int(taken.sum())
    if short > 0 and short * entries.shape[0] > AUGMENT_WORK:  # (eligibility masks, rarely)
        return _random_projection(problem, workers, tasks, rng)
    if short > 0:
        by_task = np.argsort(tasks, kind="stable")
        task_start = np.searchsorted(tasks[by_task], np.arange(m + 1))
        augment(workers, tasks, by_task, task_start, taken, worker_room, task_room, budget)
    return workers[taken], tasks[taken]


def _random_projection(
    problem: AssignmentProblem, workers: np.ndarray, tasks: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A maximum-size assignment within the pairs ``(workers, tasks)`` by the exact projection
    of random weights ``1 + u / (p + 1)``: every extra pair outweighs any reshuffling."""
    structure = TVCSStructure.from_labels(
        workers,
        tasks,
        caps1=problem.max_tasks_per_worker,
        caps2=problem.max_workers_per_task,
        total=problem.budget,
    )
    weights = 1.0 + rng.random(workers.shape[0]) / (workers.shape[0] + 1)
    support = project(np.sqrt(weights), structure).support
    return workers[support], tasks[support]


#: The q-lp options users may set; the default is ``q_lp_assignment``'s own.
Q_LP_OPTIONS = (
    Option(
        "target_error",
        float,
        "Error rate a task's weighted-majority vote should reach; sets the per-task credit cap "
        "C = 2 ln((K - 1) / target_error) for K labels (2 ln(1 / target_error) for two), "
        "beyond which extra workers earn the LP nothing.",
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
        exclusive_maximum=True,
    ),
)


def q_lp_credit_cap(target_error: float, n_labels: int = 2) -> float:
    """The per-task credit cap ``C = 2 ln((K - 1) / target_error)``: once a task's credit
    ``sum_i w_ij`` reaches it, the weighted vote's error is at most ``target_error`` (module
    docstring); ``2 ln(1 / target_error)`` for two labels."""
    return float(2.0 * np.log((n_labels - 1) / target_error))


def q_lp_assignment(
    problem: AssignmentProblem, *, target_error: float = DEFAULT_TARGET_ERROR
) -> MethodOutput:
    """Solve the Q-based LP of Ho et al. (2013) and round it: by task classes where the tasks
    fall into few classes of alike tasks (:func:`~assignment.engine.q_lp_classes.task_classes`),
    else by column generation and the exact projection.

    Parameters
    ----------
    problem : AssignmentProblem
    target_error : float in (0, 1), default 0.05
        Sets the per-task credit cap ``C = 2 ln((K - 1) / target_error)`` (``K`` =
        ``problem.n_labels``; ``2 ln(1 / target_error)`` for two labels).

    Returns
    -------
    MethodOutput
        The assignment, how HiGHS ended in ``message``, and ``details``: ``lp_objective``,
        ``credit_cap``, ``fractional`` (number of fractional LP values), ``lp_pairs`` (the
        LP's variables: the pairs it was solved on, every other pair proved 0, or the
        worker-class pairs of the class LP), ``lp_rounds`` (LPs solved,
        :attr:`~assignment.engine.q_lp.QLPSolution.rounds`; 1 for the class LP),
        ``lp_optimal`` (bool: the LP is proved optimal over every pair) and ``lp_classes``
        (int: the classes of alike tasks the LP was solved over; None for column generation).
    """
    Q_LP_OPTIONS[0].check(target_error)
    credit_cap = q_lp_credit_cap(target_error, problem.n_labels)
    classes = task_classes(problem)
    if classes is not None:
        return _class_lp_assignment(problem, classes, credit_cap)
    lp = solve_q_lp(problem, credit_cap)
    if lp.x.size == 0 or problem.budget == 0:
        details = {"lp_objective": 0.0, "credit_cap": credit_cap, "fractional": 0, "lp_pairs": 0}
        details |= {"lp_rounds": lp.rounds, "lp_optimal": lp.optimal, "lp_classes": None}
        empty = np.zeros(0, dtype=np.int64)
        return MethodOutput(empty, empty, problem.shape, "nothing to assign", details=details)
    if not lp.optimal:
        logger.warning("q-lp: the LP is not proved optimal after %d rounds", lp.rounds)
    structure = TVCSStructure.from_labels(
        lp.workers,
        lp.tasks,
        caps1=problem.max_tasks_per_worker,
        caps2=problem.max_workers_per_task,
        total=problem.budget,
    )
    chosen = project(lp.x, structure).support
    proved = "optimal over every pair" if lp.optimal else "NOT proved optimal"
    return MethodOutput.from_pairs(
        problem.shape,
        lp.workers[chosen],
        lp.tasks[chosen],
        message=f"{lp.message}; {proved} after {lp.rounds} LPs on {lp.x.size:,} pairs",
        details={
            "lp_objective": lp.objective,
            "credit_cap": float(credit_cap),
            "fractional": int(np.sum((lp.x > 1e-9) & (lp.x < 1 - 1e-9))),
            "lp_pairs": int(lp.x.size),
            "lp_rounds": lp.rounds,
            "lp_optimal": lp.optimal,
            "lp_classes": None,
        },
    )


def _class_lp_assignment(problem: AssignmentProblem, classes, credit_cap: float) -> MethodOutput:
    """q-lp on a problem whose tasks fall into few classes of alike tasks: the LP over
    (worker, class), rounded by the wrap-around deal (:mod:`~assignment.engine.q_lp_classes`)."""
    lp = solve_class_lp(problem, classes, credit_cap)
    message = (
        f"HiGHS: {lp.message}; the LP over {classes.n_classes:,} classes of alike tasks "
        f"({lp.n_variables:,} worker-class variables), optimal over every pair"
    )
    return MethodOutput.from_pairs(
        problem.shape,
        lp.workers,
        lp.tasks,
        message=message,
        details={
            "lp_objective": lp.objective,
            "credit_cap": float(credit_cap),
            "fractional": lp.fractional,
            "lp_pairs": lp.n_variables,
            "lp_rounds": 1,
            "lp_optimal": True,
            "lp_classes": classes.n_classes,
        },
    )
