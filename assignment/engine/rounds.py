"""The next round of a project: an assignment problem conditioned on the answers in hand.

After the answers ``D`` of the earlier rounds, the next round is an ordinary
:class:`~assignment.engine.problem.AssignmentProblem` in which each task's prior is its
posterior given ``D`` (two labels, ``K`` labels or Dawid–Skene's confusion matrices alike),
answered pairs are not eligible, caps are reduced by the answers in hand and the budget is what
the round may spend. Pairs assigned in earlier rounds and not answered yet (*pending*) count as
spent: they are not eligible, they use the caps and the default budget, and they add nothing to
the posteriors (their answers are unknown), so the round's expected accuracy leaves them out.
Since answers are independent given the label, its expected accuracy is that of the final labels
given ``D`` (without the pending answers: a conservative figure), so every method is right for
it as it stands.
:func:`plan_layers` is the non-myopic rule for rounds to go: plan with everything left, execute
part of the plan breadth first. The public functions are :func:`next_round`, which returns a
:class:`NextRound`, and :func:`plan_layers`.

The claim, its derivation and the layers: docs/design.md#rounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from numbers import Integral, Real

import numpy as np

from assignment.engine.aggregate import aggregate_pairs
from assignment.engine.confusion import confusion_posterior, solo_accuracy
from assignment.engine.multiclass import aggregate_multiclass
from assignment.engine.problem import AssignmentProblem, _confusion

__all__ = ["POSTERIOR_EPS", "NextRound", "next_round", "plan_layers"]

#: A posterior is held inside ``[POSTERIOR_EPS, 1 - POSTERIOR_EPS]`` when it becomes the next
#: round's prior (an :class:`AssignmentProblem` needs priors in the open interval); with
#: ``K > 2`` labels every entry is held at ``POSTERIOR_EPS`` or above and the row divided by its
#: sum. Only a task whose answers already make it certain to one part in 10^12 is affected, and
#: its expected accuracy by at most about that much (``K - 1`` times it).
POSTERIOR_EPS = 1e-12


@dataclass(frozen=True, eq=False)
class NextRound:
    """The next round's problem and what the answers in hand say.

    Everything but :attr:`problem` is computed at once from the answers (``O(n + m +
    n_answers)``); :attr:`problem` builds the round's eligibility mask (``n m`` bytes) when
    first asked for.

    Attributes
    ----------
    base : AssignmentProblem
        The whole project the round belongs to.
    posterior_distribution : ndarray of float64, shape (n_tasks, K)
        ``P(y_j = l | answers in hand)`` for every label ``l`` (the round's prior, before
        holding it away from 0 and 1 by ``POSTERIOR_EPS``); for two labels ``[1 - p, p]`` of
        :attr:`posterior` ``p``. Under :attr:`confusion`, Dawid–Skene's posterior.
    task_accuracy_now : ndarray of float64, shape (n_tasks,)
        The largest posterior of each task (``max(posterior, 1 - posterior)`` for two
        labels): its expected accuracy if nobody else answered it (under :attr:`confusion`,
        the Dawid–Skene vote's).
    worker_room : ndarray of int64, shape (n_workers,)
        Each worker's cap less its answers in hand (not below 0).
    task_room : ndarray of int64, shape (n_tasks,)
        Each task's cap less its answers in hand; 0 for tasks at ``target_posterior``.
    budget : int
        Pairs the round may assign.
    answered_workers, answered_tasks : ndarray of int64, shape (n_answers,)
        The pairs already answered.
    confusion : ndarray of float64, shape (n_workers, K, K), or None
        The Dawid–Skene matrices the posteriors are computed and the round is chosen under;
        None under the symmetric model of the quality.
    pending_workers, pending_tasks : ndarray of int64, shape (n_pending,)
        The pairs assigned in earlier rounds and not answered yet: ineligible, and counted in
        the rooms and the default budget, but not in the posteriors.
    """

    base: AssignmentProblem
    posterior_distribution: np.ndarray
    task_accuracy_now: np.ndarray
    worker_room: np.ndarray
    task_room: np.ndarray
    budget: int
    answered_workers: np.ndarray
    answered_tasks: np.ndarray
    confusion: np.ndarray | None = None
    pending_workers: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    pending_tasks: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def posterior(self) -> np.ndarray:
        """``P(y_j = 1 | answers in hand)``, shape (n_tasks,): two labels only (read
        :attr:`posterior_distribution` for ``K``)."""
        if self.base.n_labels != 2:
            raise ValueError(
                f"posterior is P(y = 1) of a two-label project; this one has "
                f"{self.base.n_labels} labels: read posterior_distribution"
            )
        return self.posterior_distribution[:, 1]

    @property
    def accuracy_now(self) -> float:
        """Mean expected accuracy of the Bayes vote on the answers in hand (the Dawid–Skene
        vote under :attr:`confusion`)."""
        return float(self.task_accuracy_now.mean()) if self.task_accuracy_now.size else 1.0

    @property
    def n_answers(self) -> int:
        return int(self.answered_tasks.size)

    @property
    def n_pending(self) -> int:
        """Pairs of earlier rounds awaiting their answers (spent, not counted as answers)."""
        return int(self.pending_tasks.size)

    @property
    def open_tasks(self) -> np.ndarray:
        """Tasks the round may assign, shape (n_tasks,): below ``target_posterior`` (all
        tasks without one) and with room under their cap."""
        return self.task_room > 0

    @cached_property
    def prior_distribution(self) -> np.ndarray:
        """The round's prior, shape (n_tasks, K): :attr:`posterior_distribution` held away
        from 0 and 1 by ``POSTERIOR_EPS`` (for two labels ``[1 - p, p]``, ``p`` clipped to
        ``[POSTERIOR_EPS, 1 - POSTERIOR_EPS]``)."""
        if self.base.n_labels == 2:
            one = np.clip(self.posterior, POSTERIOR_EPS, 1.0 - POSTERIOR_EPS)
            prior = np.column_stack([1.0 - one, one])
        else:
            prior = np.maximum(self.posterior_distribution, POSTERIOR_EPS)
            prior /= prior.sum(axis=1, keepdims=True)
        prior.setflags(write=False)
        return prior

    @cached_property
    def problem(self) -> AssignmentProblem:
        """The round's problem: posteriors as priors (:attr:`prior_distribution`), answered
        and pending pairs ineligible, the rooms as caps, the round's budget, and
        :attr:`confusion`."""
        base = self.base
        if base.eligible is None:
            eligible = np.ones(base.shape, dtype=bool)
        else:
            eligible = base.eligible.copy()
        eligible[self.answered_workers, self.answered_tasks] = False
        eligible[self.pending_workers, self.pending_tasks] = False
        return AssignmentProblem(
            base.quality_form,
            max_workers_per_task=self.task_room,
            max_tasks_per_worker=self.worker_room,
            budget=self.budget,
            prior=self.prior_distribution,
            eligible=eligible,
            n_labels=base.n_labels,
            confusion=self.confusion,
        )

    def layer_budget(self, rounds_left: int) -> int:
        """Pairs this round takes under the layered rule, with ``rounds_left`` rounds to go
        (this one included).

        The last round (``rounds_left == 1``) takes :attr:`budget`, all that is left. An
        earlier round takes at most one layer, one answer per open task, and within that an
        even share ``budget // rounds_left`` of what is left, but never less than one answer
        for every open task without any (a task's first answer is worth the most; a task with
        a pending pair has one coming)::

            b_r = min(budget, n_open, max(budget // rounds_left, n_open_unanswered))

        Parameters
        ----------
        rounds_left : int >= 1

        Returns
        -------
        int

        Raises
        ------
        ValueError
            If ``rounds_left`` is not a positive integer.
        """
        rounds_left = _positive(rounds_left, "rounds_left")
        if rounds_left == 1:
            return self.budget
        started = np.concatenate([self.answered_tasks, self.pending_tasks])
        answered = np.bincount(started, minlength=self.task_room.size) > 0
        n_open = int(self.open_tasks.sum())
        unanswered = int((self.open_tasks & ~answered).sum())
        return min(self.budget, n_open, max(self.budget // rounds_left, unanswered))

    def take_layers(self, plan, *, rounds_left: int) -> np.ndarray:
        """The pairs to assign now, from ``plan``, a solution of :attr:`problem` (the rest).

        ``plan_layers(plan, self.problem, budget=self.layer_budget(rounds_left),
        check_uncovered=rounds_left > 1)``: an earlier round takes the plan's first layers and
        a check answer for every open task the plan leaves out; the last round takes the whole
        plan (solved for the rest, it fits the budget). Build the :class:`NextRound` with the
        default budget (what remains of the project) so that the plan is a plan for all the
        remaining rounds.

        Parameters
        ----------
        plan : array_like of bool, shape (n_workers, n_tasks)
            Feasible for :attr:`problem` (caps and eligibility), e.g. ``solve(nxt.problem,
            method=...).assignment`` for any method.
        rounds_left : int >= 1
            Rounds to go, this one included.

        Returns
        -------
        ndarray of bool, shape (n_workers, n_tasks)
        """
        return plan_layers(
            plan,
            self.problem,
            budget=self.layer_budget(rounds_left),
            check_uncovered=_positive(rounds_left, "rounds_left") > 1,
        )

    def solve_layered(self, solve: Callable, *, rounds_left: int):
        """Solve the rest with ``solve`` and take this round's layers of the plan.

        Parameters
        ----------
        solve : callable
            ``solve(problem) -> result`` with ``result.assignment`` a feasible bool matrix of
            ``problem``, e.g. ``functools.partial(engine.solve, method=method, seed=seed)``.
        rounds_left : int >= 1

        Returns
        -------
        take : ndarray of bool, shape (n_workers, n_tasks)
            The pairs to assign in this round (:meth:`take_layers`).
        result
            What ``solve`` returned: the plan for every remaining round.
        """
        result = solve(self.problem)
        return self.take_layers(result.assignment, rounds_left=rounds_left), result


def next_round(
    problem: AssignmentProblem,
    *,
    worker_index,
    task_index,
    said_one=None,
    label=None,
    budget: int | None = None,
    target_posterior: float | None = None,
    confusion=None,
    pending_workers=None,
    pending_tasks=None,
) -> NextRound:
    """The next round of ``problem`` after the given answers.

    Parameters
    ----------
    problem : AssignmentProblem
        The whole project: quality, the caps over all rounds, the tasks' priors before any
        answer, the total budget over all rounds, and the number of labels ``K``.
    worker_index, task_index : array_like of int, shape (n_answers,)
        The worker and the task of each answer in hand; a pair at most once.
    said_one : array_like of bool, shape (n_answers,), optional
        Whether each answer was label 1: two labels only.
    label : array_like of int, shape (n_answers,), optional
        The label of each answer, in ``[0, K)``; any number of labels. Give ``said_one`` or
        ``label``, not both (for two labels ``label == 1`` is ``said_one``).
    budget : int, optional
        Pairs this round may assign; default what remains of ``problem.budget`` after the
        answers in hand (never below 0).
    target_posterior : float in (1 / K, 1], optional
        Tasks whose posterior of their likeliest label is at least this get nobody (Toloka's
        "confidence" of dynamic overlap); default none. ``(0.5, 1]`` for two labels.
    confusion : array_like of float, shape (n_workers, K, K), optional
        Dawid–Skene's matrices, ``confusion[i, c, a] = P(worker i answers a | true label c)``,
        each row a distribution: the posteriors are theirs and the round's problem carries
        them (module docstring). Default ``problem.confusion`` (None: the symmetric model of
        the quality). Give them here or on ``problem``, not both.
    pending_workers, pending_tasks : array_like of int, shape (n_pending,), optional
        The pairs assigned in earlier rounds whose answers have not come in (none by default),
        each at most once and none of them answered. They count as spent: not eligible, each
        uses its worker's and its task's room and one pair of the default budget; they add
        nothing to the posteriors, so the round's expected accuracy is that of the final labels
        given the answers in hand *without* theirs, a conservative figure (their answers, once
        in, can only raise the Bayes vote's expected accuracy).

    Returns
    -------
    NextRound

    Raises
    ------
    ValueError
        Naming the field: indices out of range, labels outside ``[0, K)``, arrays of different
        lengths, a pair answered twice, both or neither of ``said_one`` and ``label``,
        ``said_one`` with ``K > 2``, a negative or fractional budget, a target outside
        ``(1 / K, 1]``, ``confusion`` of the wrong shape, not finite, with rows that are not
        distributions, or given twice; pending pairs out of range, of different lengths,
        repeated or answered.
    """
    n, m = problem.shape
    n_labels = problem.n_labels
    workers, tasks, answers = _validate_answers(
        worker_index, task_index, said_one, label, n, m, n_labels
    )
    target = _validate_target(target_posterior, n_labels)
    matrices = _validate_confusion(confusion, problem)
    pending = _validate_pending(pending_workers, pending_tasks, workers, tasks, n, m)
    posterior = _posterior(problem, workers, tasks, answers, matrices)
    now = posterior.max(axis=1)
    spent_workers = np.concatenate([workers, pending[0]])
    spent_tasks = np.concatenate([tasks, pending[1]])
    worker_room = np.maximum(
        problem.max_tasks_per_worker - np.bincount(spent_workers, minlength=n), 0
    ).astype(np.int64)
    task_room = np.maximum(
        problem.max_workers_per_task - np.bincount(spent_tasks, minlength=m), 0
    ).astype(np.int64)
    if target is not None:
        task_room[now >= target] = 0
    for array in (posterior, now, worker_room, task_room, workers, tasks, matrices, *pending):
        if array is not None:
            array.setflags(write=False)
    return NextRound(
        base=problem,
        posterior_distribution=posterior,
        task_accuracy_now=now,
        worker_room=worker_room,
        task_room=task_room,
        budget=max(problem.budget - spent_tasks.size, 0) if budget is None else _budget(budget),
        answered_workers=workers,
        answered_tasks=tasks,
        confusion=matrices,
        pending_workers=pending[0],
        pending_tasks=pending[1],
    )


def _validate_pending(pending_workers, pending_tasks, workers, tasks, n: int, m: int):
    """``(workers, tasks)`` of the pending pairs as int64 arrays (empty when not given),
    checked: in range, one length, each pair once, none answered."""
    if pending_workers is None and pending_tasks is None:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    arrays = [
        _indices(name, [] if value is None else value, size, "pair")
        for name, value, size in (
            ("pending_workers", pending_workers, n),
            ("pending_tasks", pending_tasks, m),
        )
    ]
    if arrays[0].shape != arrays[1].shape:
        raise ValueError(
            f"pending_workers and pending_tasks must have one entry per pending pair, got "
            f"shapes {arrays[0].shape} and {arrays[1].shape}"
        )
    flat = arrays[0] * m + arrays[1]
    if np.unique(flat).size != flat.size:
        raise ValueError("a pending pair may be given once: pending_workers/pending_tasks repeat")
    answered = np.isin(flat, workers * m + tasks)
    if answered.any():
        k = int(np.flatnonzero(answered)[0])
        raise ValueError(
            f"pending pair {k} (worker {arrays[0][k]}, task {arrays[1][k]}) is answered: "
            "a pair is pending only until its answer comes in"
        )
    return arrays[0], arrays[1]


def _validate_confusion(confusion, problem: AssignmentProblem) -> np.ndarray | None:
    """The matrices the round is under: ``confusion`` checked (a float64 copy), else the
    problem's own (None without)."""
    if confusion is None:
        return problem.confusion
    if problem.confusion is not None:
        raise ValueError(
            "the problem already has confusion matrices: give confusion to next_round or to "
            "the problem, not both"
        )
    return _confusion(confusion, problem.n_workers, problem.n_labels)


def _posterior(problem, workers, tasks, answers, confusion) -> np.ndarray:
    """Each task's posterior after the answers, shape (n_tasks, K): Dawid–Skene's under
    ``confusion``, else the Bayes vote's of the symmetric model (two labels or ``K``)."""
    if confusion is not None:
        return confusion_posterior(
            confusion,
            worker_index=workers,
            task_index=tasks,
            label=answers.astype(np.int64),
            prior=problem.prior_distribution,
        )
    quality = problem.quality_at(workers, tasks)
    if problem.n_labels == 2:
        one = aggregate_pairs(
            task_index=tasks, quality=quality, said_one=answers, prior=problem.prior
        ).posterior
        return np.column_stack([1.0 - one, one])
    return aggregate_multiclass(
        task_index=tasks,
        quality=quality,
        label=answers,
        prior=problem.prior_distribution,
        n_labels=problem.n_labels,
    ).posterior


def plan_layers(plan, problem: AssignmentProblem, *, budget, check_uncovered=False) -> np.ndarray:
    """Up to ``budget`` pairs of ``plan``, breadth first: every task's best planned worker
    before any task's second.

    Meant for a plan of *all the remaining rounds* (a solution of the round's problem with the
    whole remaining budget, by any method), of which the round executes a part before planning
    again on the answers. Each planned pair ``(i, j)`` gets

    * its informativeness ``v_ij = |K Q_ij - 1| / (K - 1)``, ``|2 Q_ij - 1|`` for two labels
      (the weight ``|log(Q_ij (K - 1) / (1 - Q_ij))|`` of the answer in the Bayes vote grows
      with it); under Dawid–Skene's matrices (``problem.confusion``) instead
      ``v_ij = (K A_i - 1) / (K - 1)`` with ``A_i = sum_a max_c C_i[c, a] / K``, worker
      ``i``'s accuracy alone on a task in doubt (below);
    * its layer ``l_ij``: 1 for task ``j``'s most informative planned worker, 2 for the next,
      and so on (equal ``v``: lower worker index first);
    * its task's confidence ``c_j = (K max_y p_j(y) - 1) / (K - 1)``, ``|2 p_j - 1|`` for two
      labels, with ``p_j`` the task's prior distribution (in a round, the posterior: 0 for a
      task in doubt, 1 for a certain one).

    The pairs are taken in the order of ``(l_ij, c_j, -v_ij, j, i)``: whole layers while they
    fit, the last partial layer's least confident tasks first. A subset of a feasible plan is
    feasible, whatever the method.

    Under Dawid–Skene's matrices the quality ``Q`` is only a one-coin summary: a worker who
    swaps two labels has ``Q`` near ``1 / K`` yet his answers decide the task. There ``v`` comes
    from the matrix: the accuracy ``A_i`` of the Dawid–Skene vote on his answer alone
    (:func:`~assignment.engine.confusion.solo_accuracy`, as local search ranks workers) on a task
    in doubt (the uniform prior), rescaled as the symmetric ``v`` is, from 0 (a guess) to 1 (never
    wrong). For a one-coin matrix of quality ``Q >= 1 / K`` (any ``Q`` for two labels) it *is*
    ``|K Q - 1| / (K - 1)``, so the layers are the symmetric ones; below ``1 / K`` with
    ``K > 2`` it is the smaller ``(1 - K Q) / (K - 1)^2`` (his answer only rules a label out:
    :mod:`~assignment.engine.upper_bound`). The uniform prior, not the task's: the task's
    state already orders the layer by ``c_j``, and under a confident prior every worker who
    alone cannot overturn it has the same accuracy, the prior's, which would not order them.

    With ``check_uncovered``, every task the plan leaves out and whose cap allows one more
    worker also gets a place in layer 1 (at its confidence, with ``v`` of its most informative
    eligible worker): when its turn comes it is given its most informative eligible worker
    with room left by the pairs taken before it (equal ``v``: lower index). This is the *check*
    answer a myopic plan never gives (its value is in the later rounds). A planned pair whose
    worker such checks have used up is then skipped; the result stays feasible for ``problem``.

    Parameters
    ----------
    plan : array_like of bool (or 0/1), shape (n_workers, n_tasks)
        Respects ``problem``'s caps and eligibility; its size may exceed ``problem.budget``.
    problem : AssignmentProblem
        The round's problem (:attr:`NextRound.problem`): quality, caps, eligibility, priors,
        and the confusion matrices if any (``v`` is then theirs).
    budget : int >= 0
        Pairs to take at most. With ``budget >= plan.sum()`` and no checks: the whole plan.
    check_uncovered : bool, default False

    Returns
    -------
    ndarray of bool, shape (n_workers, n_tasks)
        At most ``budget`` pairs; all of them in ``plan`` unless ``check_uncovered``.

    Raises
    ------
    ValueError
        Naming the field: a plan of the wrong shape or values, on an ineligible pair or over a
        cap; a negative or fractional budget.
    """
    if not isinstance(problem, AssignmentProblem):
        raise ValueError(f"problem must be an AssignmentProblem, got {type(problem).__name__}")
    x = _validate_plan(plan, problem)
    budget = _budget(budget)
    workers, tasks, layer, value = _layers(x, problem)
    k = problem.n_labels
    confidence = (k * problem.prior_distribution.max(axis=1) - 1.0) / (k - 1.0)
    if check_uncovered:
        checks = np.flatnonzero(~x.any(axis=0) & (problem.max_workers_per_task > 0))
        best = _best_values(problem, checks)
        checks, best = checks[best >= 0], best[best >= 0]  # tasks without an eligible worker
        workers = np.concatenate([workers, np.full(checks.size, -1, dtype=np.int64)])
        tasks = np.concatenate([tasks, checks])
        layer = np.concatenate([layer, np.ones(checks.size, dtype=np.int64)])
        value = np.concatenate([value, best])
    order = np.lexsort((workers, tasks, -value, confidence[tasks], layer))
    take = np.zeros(problem.shape, dtype=bool)
    if not check_uncovered or not np.any(workers < 0):
        chosen = order[:budget]
        take[workers[chosen], tasks[chosen]] = True
        return take
    room = problem.max_tasks_per_worker.copy()
    taken = 0
    # under confusion matrices a worker's informativeness is the same on every task: once
    shared = None if problem.confusion is None else _dawid_skene_informativeness(problem.confusion)
    n = problem.n_workers
    for k in order:
        if taken >= budget:
            break
        i, j = int(workers[k]), int(tasks[k])
        if i < 0:
            if shared is None:
                value = _pair_informativeness(problem, np.arange(n), np.full(n, j))
            i = _best_worker(problem, j, room, take[:, j], value if shared is None else shared)
            if i < 0:
                continue
        elif room[i] <= 0:
            continue
        take[i, j] = True
        room[i] -= 1
        taken += 1
    return take


def _validate_plan(plan, problem: AssignmentProblem) -> np.ndarray:
    x = np.asarray(plan)
    if x.shape != problem.shape:
        raise ValueError(f"plan must have the problem's shape {problem.shape}, got {x.shape}")
    if x.dtype != np.bool_:
        if not (np.issubdtype(x.dtype, np.number) and np.all((x == 0) | (x == 1))):
            raise ValueError("plan must be a bool (or 0/1) matrix")
        x = x.astype(bool)
    if problem.eligible is not None and np.any(x & ~problem.eligible):
        i, j = np.argwhere(x & ~problem.eligible)[0]
        raise ValueError(f"plan assigns an ineligible pair (worker {i}, task {j})")
    for name, counts, caps, what in (
        ("max_workers_per_task", x.sum(axis=0), problem.max_workers_per_task, "task"),
        ("max_tasks_per_worker", x.sum(axis=1), problem.max_tasks_per_worker, "worker"),
    ):
        over = np.flatnonzero(counts > caps)
        if over.size:
            k = over[0]
            raise ValueError(f"plan exceeds {name} at {what} {k}: {counts[k]} pairs, cap {caps[k]}")
    return x


def _layers(x: np.ndarray, problem: AssignmentProblem):
    """The plan's pairs by task, most informative first: workers, tasks, layer (1, 2, ...)
    and informativeness (:func:`_pair_informativeness`), each of shape (n_pairs,)."""
    tasks, workers = np.nonzero(x.T)  # by task, then worker
    value = _pair_informativeness(problem, workers, tasks)
    by_task = np.lexsort((workers, -value, tasks))
    workers, tasks, value = workers[by_task], tasks[by_task], value[by_task]
    starts = np.flatnonzero(np.r_[True, tasks[1:] != tasks[:-1]]) if tasks.size else tasks
    first = np.repeat(starts, np.diff(np.r_[starts, tasks.size]))
    layer = np.arange(tasks.size) - first + 1
    return workers.astype(np.int64), tasks.astype(np.int64), layer.astype(np.int64), value


def _best_values(problem: AssignmentProblem, tasks: np.ndarray) -> np.ndarray:
    """For each task, the informativeness of its most informative eligible worker with room;
    -1 if it has none. Shape (len(tasks),)."""
    if tasks.size == 0:
        return np.zeros(0)
    n = problem.n_workers
    value = _pair_informativeness(problem, np.arange(n)[:, None], tasks[None, :])
    usable = (problem.max_tasks_per_worker > 0)[:, None]
    if problem.eligible is not None:
        usable = usable & problem.eligible[:, tasks]
    return np.where(usable, value, -1.0).max(axis=0)


def _best_worker(
    problem: AssignmentProblem, j: int, room: np.ndarray, taken: np.ndarray, value: np.ndarray
) -> int:
    """Task ``j``'s most informative eligible worker with room, not yet taken; -1 if none.
    ``value``: every worker's informativeness on the task, shape (n_workers,)."""
    usable = (room > 0) & ~taken
    if problem.eligible is not None:
        usable &= problem.eligible[:, j]
    if not usable.any():
        return -1
    return int(np.argmax(np.where(usable, value, -1.0)))  # first maximum: lowest index


def _pair_informativeness(problem: AssignmentProblem, workers, tasks) -> np.ndarray:
    """Each pair's informativeness (:func:`plan_layers`), shape of ``workers`` and ``tasks``
    broadcast: :func:`_dawid_skene_informativeness` of the worker's matrix under
    ``problem.confusion``, else :func:`_informativeness` of the pair's quality."""
    if problem.confusion is None:
        return _informativeness(problem.quality_at(workers, tasks), problem.n_labels)
    value = _dawid_skene_informativeness(problem.confusion)[workers]
    return np.broadcast_to(value, np.broadcast_shapes(np.shape(workers), np.shape(tasks)))


def _dawid_skene_informativeness(confusion: np.ndarray) -> np.ndarray:
    """``(K A - 1) / (K - 1)`` of each worker's Dawid–Skene accuracy alone on a task in doubt,
    ``A = sum_a max_c C_i[c, a] / K`` (:func:`~assignment.engine.confusion.solo_accuracy`
    under the uniform prior), shape (n_workers,): ``|K Q - 1| / (K - 1)`` for a one-coin
    matrix of quality ``Q >= 1 / K`` (any ``Q`` for two labels)."""
    k = confusion.shape[-1]
    accuracy = solo_accuracy(confusion, np.full(k, 1.0 / k))
    return (k * accuracy - 1.0) / (k - 1.0)


def _informativeness(q: np.ndarray, n_labels: int) -> np.ndarray:
    """``|K Q - 1| / (K - 1)``: how far an answer is from a uniform guess (``|2 Q - 1|`` for
    two labels)."""
    return np.abs(n_labels * q - 1.0) / (n_labels - 1.0)


def _positive(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _indices(name: str, value, size: int, item: str) -> np.ndarray:
    """``value`` as a 1-D int64 array of indices in ``[0, size)``, or a ValueError naming
    ``name`` and the first ``item`` (answer, pair) out of range."""
    a = np.asarray(value)
    if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"{name} must be a 1-D array of integers, got {a.dtype} {a.shape}")
    a = a.astype(np.int64)
    bad = np.flatnonzero((a < 0) | (a >= size))
    if bad.size:
        raise ValueError(f"{name} must be in [0, {size}), got {a[bad[0]]} at {item} {bad[0]}")
    return a


def _validate_answers(worker_index, task_index, said_one, label, n: int, m: int, n_labels: int):
    """``(workers, tasks, answers)``: ``answers`` is ``said_one`` (bool) for two labels, the
    labels (int64) for ``K > 2``."""
    workers = _indices("worker_index", worker_index, n, "answer")
    tasks = _indices("task_index", task_index, m, "answer")
    name, said = _validate_said(said_one, label, n_labels)
    if not workers.shape == tasks.shape == said.shape:
        raise ValueError(
            f"worker_index, task_index and {name} must have one entry per answer, got shapes "
            f"{workers.shape}, {tasks.shape} and {said.shape}"
        )
    if name == "label":
        bad = np.flatnonzero((said < 0) | (said >= n_labels))
        if bad.size:
            raise ValueError(
                f"label must be in [0, {n_labels}), got {said[bad[0]]} at answer {bad[0]}"
            )
        if n_labels == 2:
            said = said == 1
    flat = workers * m + tasks
    unique, first, counts = np.unique(flat, return_index=True, return_counts=True)
    if unique.size != flat.size:
        k = int(np.flatnonzero(counts > 1)[0])
        again = int(np.flatnonzero(flat == unique[k])[1])
        raise ValueError(
            f"a pair may be answered once: answer {again} repeats (worker {workers[again]}, "
            f"task {tasks[again]}) of answer {first[k]}"
        )
    return workers, tasks, said


def _validate_said(said_one, label, n_labels: int) -> tuple[str, np.ndarray]:
    """The answers' field name and values: ``said_one`` as a bool array or ``label`` as int64
    (range checked by the caller, once the lengths are known to agree)."""
    if (said_one is None) == (label is None):
        raise ValueError(
            "give the answers as label (ints in [0, n_labels)) or, for two labels, said_one "
            "(bools)" + (", not both" if label is not None else "")
        )
    if said_one is not None:
        if n_labels != 2:
            raise ValueError(
                f"said_one is for two labels; this project has {n_labels}: give label (ints "
                f"in [0, {n_labels}))"
            )
        said = np.asarray(said_one)
        if said.dtype != np.bool_:
            raise ValueError(f"said_one must be a bool array, got dtype {said.dtype}")
        return "said_one", said
    given = np.asarray(label)
    if given.ndim != 1 or (given.size and not np.issubdtype(given.dtype, np.integer)):
        raise ValueError(f"label must be a 1-D array of integers, got {given.dtype} {given.shape}")
    return "label", given.astype(np.int64)


def _validate_target(target, n_labels: int = 2) -> float | None:
    if target is None:
        return None
    low = 1.0 / n_labels
    if isinstance(target, bool) or not isinstance(target, Real) or not low < target <= 1.0:
        bound = "0.5" if n_labels == 2 else f"1/{n_labels}"
        raise ValueError(f"target_posterior must be a number in ({bound}, 1], got {target!r}")
    return float(target)


def _budget(value) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer) or value < 0:
        raise ValueError(f"budget must be a non-negative integer, got {value!r}")
    return int(value)
