"""Methods on a problem with confusion matrices (docs/design.md#under-confusion-matrices).

:func:`~assignment.engine.solve.solve` hands a problem with
:attr:`~assignment.engine.problem.AssignmentProblem.confusion` here. Only greedy has an
objective written for the matrices; the others search under the symmetric model of the
problem's quality, and every number this module reports is the accuracy of the Dawid–Skene vote
(the posterior's argmax under the matrices), never the symmetric model's:

* **greedy**: :func:`~assignment.engine.greedy_confusion.greedy_confusion`, chosen by the exact
  Dawid–Skene accuracy.
* **tvcs-iht**: that greedy's assignment improved by tvcs-iht's final pass under the matrices
  (:func:`~assignment.engine.local_search.improve` scores a problem with matrices by the
  Dawid–Skene vote: prune by its leave-one-out losses, refill by the Dawid–Skene greedy's
  moves, destroy-and-repair rounds kept only when its accuracy rises; ``refine`` and
  ``refine_rounds`` as for the symmetric pass; ``time_limit`` bounds the pass and the search
  together), and tvcs-iht's search on the symmetric surrogate with its upper-bound stop turned
  off (``bound_gap = 0``: the bound of :mod:`~assignment.engine.upper_bound` is the symmetric
  model's, no bound under the matrices) and its steps taken even when the symmetric greedy
  spends the whole budget (``search_when_spent``: that rule was measured without matrices);
  the one of higher Dawid–Skene accuracy is kept, the final pass's on a tie. The pass never
  lowers the accuracy, so the result is never below greedy. The search starts from the
  symmetric greedy, not from this one.
* **q-lp, random** and any registered method: chosen as without the matrices, scored by them.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from assignment.engine._problem_accuracy import confusion_accuracy_of
from assignment.engine.greedy_confusion import greedy_confusion, max_confusion_workers
from assignment.engine.local_search import improve
from assignment.engine.method_output import MethodOutput
from assignment.engine.problem import AssignmentProblem

__all__ = [
    "OBJECTIVE",
    "choose_under_confusion",
    "dawid_skene_accuracy",
    "most_workers_a_task",
]

#: The time limit tvcs-iht's symmetric search gets under the matrices when the Dawid–Skene
#: greedy and final pass used all of the run's: its greedy start completes, no step is taken.
_LEAST_TIME = 1e-3

#: What ``details["objective"]`` says of every number reported under the matrices.
OBJECTIVE = "accuracy of the Dawid\u2013Skene vote under the confusion matrices"


def dawid_skene_accuracy(
    problem: AssignmentProblem, workers, tasks, *, seed=None
) -> tuple[float, float | None]:
    """The Dawid–Skene vote's expected accuracy of the pairs and its standard error (None when
    exact: every task within ``MAX_EXACT_PATTERNS`` answer patterns; else Monte Carlo seeded
    by ``seed``), :func:`~assignment.engine.confusion.confusion_accuracy` of pairs in range
    (a method's own; the edge, :func:`~assignment.engine.solve.evaluate_pairs`, checks a
    user's)."""
    result = confusion_accuracy_of(
        problem,
        np.asarray(workers, dtype=np.int64),
        np.asarray(tasks, dtype=np.int64),
        seed=0 if seed is None else seed,
    )
    exact = not np.any(result.task_standard_error)
    return result.expected_accuracy, (None if exact else result.standard_error)


#: The methods that choose their assignment under the confusion matrices (greedy by the
#: Dawid–Skene vote's exact accuracy, tvcs-iht by its final pass and choice under them); every
#: other is chosen under the symmetric model and only scored under them.
CHOSEN_UNDER_MATRICES = ("greedy", "tvcs-iht")


def most_workers_a_task(method: str, *, n_labels: int, max_workers_per_task: int) -> int:
    """The most workers ``method`` may give one task under the matrices, given the largest
    task cap: greedy stops at :func:`~assignment.engine.greedy_confusion.max_confusion_workers`
    (its accuracies stay exact), the others, chosen under the symmetric model, at the cap."""
    if method == "greedy":
        return min(max_workers_per_task, max_confusion_workers(n_labels))
    return max_workers_per_task


def choose_under_confusion(
    problem: AssignmentProblem,
    method: str,
    run_symmetric: Callable[..., MethodOutput],
    *,
    rng: np.random.Generator,
    options: dict,
    seed=None,
    progress=None,
) -> MethodOutput:
    """``method``'s assignment for ``problem`` with confusion matrices (module docstring).

    Parameters
    ----------
    problem : AssignmentProblem
        With ``confusion`` (n_workers, K, K).
    method : str
    run_symmetric : callable
        ``run_symmetric(symmetric_problem, **option_overrides)`` runs ``method`` as
        :func:`~assignment.engine.solve.solve` would without the matrices.
    rng : numpy.random.Generator
        Orders the workers of tvcs-iht's final pass under the matrices.
    options : dict
        Every option of ``method``, the defaults filled in; tvcs-iht's final pass under the
        matrices reads ``refine``, ``refine_rounds`` and ``time_limit``.
    seed : int or None
        Seed of the Monte Carlo sums beyond the exact limit.
    progress : callable, optional

    Returns
    -------
    MethodOutput
        ``details["accuracy"]`` the Dawid–Skene accuracy, ``details["objective"]``
        :data:`OBJECTIVE`; no history (the search's is under the symmetric model). tvcs-iht's
        ``details`` also hold ``greedy_accuracy``, ``final_pass_accuracy`` and
        ``search_accuracy`` (the Dawid–Skene accuracies of the three candidates), ``kept``
        (``"final pass"`` or ``"search"``), ``final_pass`` (bool: the final pass under the
        matrices ran; False with ``refine=False``), ``final_pass_rounds`` (int: its rounds, as
        :attr:`~assignment.engine.local_search.ImproveResult.rounds`; 0 when it did not run),
        ``final_pass_stopped`` (str or None: why it stopped, a key of
        :data:`~assignment.engine.local_search.STOP_REASONS`; None when it did not run) and
        ``search_stopped`` (the symmetric search's ``details["stopped"]``, never
        ``"near_bound"``: its upper-bound stop is off).
    """
    if method == "greedy":
        out = greedy_confusion(problem, progress=progress)
        message = f"chosen by the Dawid\u2013Skene vote's exact accuracy; {out.message}"
        return _relabelled(out, message, {**out.details, "objective": OBJECTIVE})
    if method == "tvcs-iht":
        return _tvcs_iht(problem, run_symmetric, seed, rng=rng, options=options)
    out = run_symmetric(problem.symmetric())
    accuracy, _ = dawid_skene_accuracy(problem, out.rows, out.cols, seed=seed)
    message = (
        f"chosen under the symmetric model, scored under the confusion matrices; {out.message}"
    )
    details = {k: v for k, v in out.details.items() if "accuracy" not in k}
    return _relabelled(out, message, {**details, "accuracy": accuracy, "objective": OBJECTIVE})


def _tvcs_iht(problem, run_symmetric, seed, *, rng, options) -> MethodOutput:
    """The Dawid–Skene greedy and final pass against tvcs-iht's symmetric search, the better
    kept."""
    limit = options["time_limit"]
    deadline = None if limit is None else time.perf_counter() + limit
    greedy = greedy_confusion(problem)
    greedy_acc = greedy.details["accuracy"]
    refined, refined_acc, note, pass_facts = _final_pass(
        problem, greedy, rng=rng, deadline=deadline, options=options
    )
    overrides = {"bound_gap": 0.0, "search_when_spent": True}
    if deadline is not None:  # what is left of the limit (the search's greedy start completes)
        overrides["time_limit"] = max(deadline - time.perf_counter(), _LEAST_TIME)
    search = run_symmetric(problem.symmetric(), **overrides)
    search_acc, search_se = dawid_skene_accuracy(problem, search.rows, search.cols, seed=seed)
    kept, accuracy = (
        ("search", search_acc) if search_acc > refined_acc else ("final pass", refined_acc)
    )
    estimated = "" if search_se is None else f" (Monte Carlo, standard error {search_se:.1e})"
    message = (
        f"Dawid\u2013Skene greedy {greedy_acc:.4f}, final pass under the confusion matrices "
        f"{refined_acc:.4f} ({note}); tvcs-iht's search on the symmetric surrogate, "
        f"no upper-bound stop, {search_acc:.4f}{estimated} under the confusion matrices; "
        f"kept the {kept}"
    )
    details = {
        "accuracy": accuracy,
        "greedy_accuracy": greedy_acc,
        "final_pass_accuracy": refined_acc,
        "search_accuracy": search_acc,
        "kept": kept,
        "objective": OBJECTIVE,
        **pass_facts,
        "search_stopped": search.details["stopped"],
    }
    if kept == "search":
        rows, cols = search.rows, search.cols
    else:
        rows, cols = np.nonzero(refined)
    return MethodOutput(rows, cols, problem.shape, message, search.iterations, details=details)


def _final_pass(problem, greedy: MethodOutput, *, rng, deadline, options):
    """tvcs-iht's final pass under the matrices from the Dawid–Skene greedy's assignment,
    starting no round after ``deadline``: ``(assignment, accuracy, note, facts)``, greedy's own
    when ``refine`` is off or the pass found nothing better; ``facts`` are the ``details``
    ``final_pass``, ``final_pass_rounds`` and ``final_pass_stopped`` of :func:`_tvcs_iht`."""
    start = greedy.assignment
    if not options["refine"]:
        facts = {"final_pass": False, "final_pass_rounds": 0, "final_pass_stopped": None}
        return start, greedy.details["accuracy"], "refine off", facts
    out = improve(
        problem,
        start,
        rng=rng,
        max_rounds=options["refine_rounds"],
        deadline=deadline,
        filled=True,  # the Dawid-Skene greedy's own assignment: its round 0 would find nothing
    )
    facts = {"final_pass": True, "final_pass_rounds": out.rounds, "final_pass_stopped": out.stopped}
    if out.accuracy <= greedy.details["accuracy"]:
        return start, greedy.details["accuracy"], out.message, facts
    return out.assignment, out.accuracy, out.message, facts


def _relabelled(out: MethodOutput, message: str, details: dict) -> MethodOutput:
    """``out`` with ``message`` and ``details``, and no history."""
    return MethodOutput(out.rows, out.cols, out.shape, message, out.iterations, details=details)
