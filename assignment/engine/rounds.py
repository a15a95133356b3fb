"""The next round of a project: an assignment problem conditioned on the answers in hand.

A project assigns in rounds: assign, collect answers, assign what is left of the budget where it
helps most. After the answers ``D`` of the earlier rounds, the next round is an assignment problem
of the same form (:class:`~assignment.engine.problem.AssignmentProblem`) in which

* each task's prior is its posterior ``P(y_j = 1 | D)`` under the current quality,
* pairs already answered are not eligible (a worker answers a task once),
* each worker's and each task's cap is reduced by the answers it already has,
* the budget is what the round may spend (by default what remains of the total).

Why the objective is then exactly right (``docs/design.md``, "Rounds"): answers are independent
given the true label, so for a task with earlier answers ``D_j`` and new answers ``N_j``,
``P(y | D_j, N_j)`` is proportional to ``P(y | D_j) P(N_j | y)``: the Bayes vote over all answers
is the Bayes vote over the new answers with prior ``P(y | D_j)``, and the expected accuracy of the
final labels given ``D`` is the expected accuracy of the new round's assignment with those
posteriors as priors. Every method that maximises expected accuracy therefore maximises the
accuracy of the final labels given what is known, and the tasks' accuracies "now" (with no new
answer) are ``max(P(y_j = 1 | D), P(y_j = 0 | D))``.

With ``K > 2`` labels (``problem.n_labels``) the same holds word for word for the K-class Bayes
vote (:mod:`~assignment.engine.multiclass`): answers are labels in ``[0, K)``, the posterior is
a distribution over the labels (:func:`~assignment.engine.multiclass.aggregate_multiclass`),
it becomes the round's prior distribution, and the accuracy now is its largest entry.

The one public function is :func:`next_round`; it returns a :class:`NextRound`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from numbers import Integral, Real

import numpy as np

from assignment.engine.aggregate import aggregate_pairs
from assignment.engine.multiclass import aggregate_multiclass
from assignment.engine.problem import AssignmentProblem

__all__ = ["POSTERIOR_EPS", "NextRound", "next_round"]

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
        :attr:`posterior` ``p``.
    task_accuracy_now : ndarray of float64, shape (n_tasks,)
        The largest posterior of each task (``max(posterior, 1 - posterior)`` for two
        labels): its expected accuracy if nobody else answered it.
    worker_room : ndarray of int64, shape (n_workers,)
        Each worker's cap less its answers in hand (not below 0).
    task_room : ndarray of int64, shape (n_tasks,)
        Each task's cap less its answers in hand; 0 for tasks at ``target_posterior``.
    budget : int
        Pairs the round may assign.
    answered_workers, answered_tasks : ndarray of int64, shape (n_answers,)
        The pairs already answered.
    """

    base: AssignmentProblem
    posterior_distribution: np.ndarray
    task_accuracy_now: np.ndarray
    worker_room: np.ndarray
    task_room: np.ndarray
    budget: int
    answered_workers: np.ndarray
    answered_tasks: np.ndarray

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
        """Mean expected accuracy of the Bayes vote on the answers in hand."""
        return float(self.task_accuracy_now.mean()) if self.task_accuracy_now.size else 1.0

    @property
    def n_answers(self) -> int:
        return int(self.answered_tasks.size)

    @property
    def open_tasks(self) -> np.ndarray:
        """Tasks the round may assign, shape (n_tasks,): below ``target_posterior`` (all
        tasks without one) and with room under their cap."""
        return self.task_room > 0

    @cached_property
    def problem(self) -> AssignmentProblem:
        """The round's problem: posteriors as priors, answered pairs ineligible, the rooms as
        caps, the round's budget."""
        base = self.base
        if base.eligible is None:
            eligible = np.ones(base.shape, dtype=bool)
        else:
            eligible = base.eligible.copy()
        eligible[self.answered_workers, self.answered_tasks] = False
        if base.n_labels == 2:
            prior = np.clip(self.posterior, POSTERIOR_EPS, 1.0 - POSTERIOR_EPS)
        else:
            prior = np.maximum(self.posterior_distribution, POSTERIOR_EPS)
            prior /= prior.sum(axis=1, keepdims=True)
        return AssignmentProblem(
            base.quality_form,
            max_workers_per_task=self.task_room,
            max_tasks_per_worker=self.worker_room,
            budget=self.budget,
            prior=prior,
            eligible=eligible,
            n_labels=base.n_labels,
        )


def next_round(
    problem: AssignmentProblem,
    *,
    worker_index,
    task_index,
    said_one=None,
    label=None,
    budget: int | None = None,
    target_posterior: float | None = None,
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

    Returns
    -------
    NextRound

    Raises
    ------
    ValueError
        Naming the field: indices out of range, labels outside ``[0, K)``, arrays of different
        lengths, a pair answered twice, both or neither of ``said_one`` and ``label``,
        ``said_one`` with ``K > 2``, a negative or fractional budget, a target outside
        ``(1 / K, 1]``.
    """
    n, m = problem.shape
    n_labels = problem.n_labels
    workers, tasks, answers = _validate_answers(
        worker_index, task_index, said_one, label, n, m, n_labels
    )
    target = _validate_target(target_posterior, n_labels)
    quality = problem.quality_at(workers, tasks)
    if n_labels == 2:
        one = aggregate_pairs(
            task_index=tasks, quality=quality, said_one=answers, prior=problem.prior
        ).posterior
        posterior = np.column_stack([1.0 - one, one])
        now = np.maximum(one, 1.0 - one)
    else:
        posterior = aggregate_multiclass(
            task_index=tasks,
            quality=quality,
            label=answers,
            prior=problem.prior_distribution,
            n_labels=n_labels,
        ).posterior
        now = posterior.max(axis=1)
    worker_room = np.maximum(
        problem.max_tasks_per_worker - np.bincount(workers, minlength=n), 0
    ).astype(np.int64)
    task_room = np.maximum(
        problem.max_workers_per_task - np.bincount(tasks, minlength=m), 0
    ).astype(np.int64)
    if target is not None:
        task_room[now >= target] = 0
    for array in (posterior, now, worker_room, task_room, workers, tasks):
        array.setflags(write=False)
    return NextRound(
        base=problem,
        posterior_distribution=posterior,
        task_accuracy_now=now,
        worker_room=worker_room,
        task_room=task_room,
        budget=max(problem.budget - tasks.size, 0) if budget is None else _budget(budget),
        answered_workers=workers,
        answered_tasks=tasks,
    )


def _validate_answers(worker_index, task_index, said_one, label, n: int, m: int, n_labels: int):
    """``(workers, tasks, answers)``: ``answers`` is ``said_one`` (bool) for two labels, the
    labels (int64) for ``K > 2``."""
    arrays = []
    for name, value, size in (("worker_index", worker_index, n), ("task_index", task_index, m)):
        a = np.asarray(value)
        if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
            raise ValueError(f"{name} must be a 1-D array of integers, got {a.dtype} {a.shape}")
        a = a.astype(np.int64)
        bad = np.flatnonzero((a < 0) | (a >= size))
        if bad.size:
            raise ValueError(f"{name} must be in [0, {size}), got {a[bad[0]]} at answer {bad[0]}")
        arrays.append(a)
    workers, tasks = arrays
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
