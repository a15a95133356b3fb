"""Methods on a problem with confusion matrices (docs/design.md#under-confusion-matrices).

:func:`~assignment.engine.solve.solve` hands a problem with
:attr:`~assignment.engine.problem.AssignmentProblem.confusion` here. Only greedy has an
objective written for the matrices; the others search under the symmetric model of the
problem's quality, and every number this module reports is the accuracy of the Dawid–Skene vote
(the posterior's argmax under the matrices), never the symmetric model's:

* **greedy**: :func:`~assignment.engine.greedy_confusion.greedy_confusion`, chosen by the exact
  Dawid–Skene accuracy.
* **tvcs-iht**: that greedy, and tvcs-iht's search on the symmetric surrogate with its
  upper-bound stop turned off (``bound_gap = 0``: the bound of
  :mod:`~assignment.engine.upper_bound` is the symmetric model's, no bound under the matrices);
  the one of higher Dawid–Skene accuracy is kept, the greedy on a tie. So it is never below
  greedy. The search starts from the symmetric greedy, not from this one.
* **q-lp, random** and any registered method: chosen as without the matrices, scored by them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from assignment.engine._problem_accuracy import confusion_accuracy_of
from assignment.engine.greedy_confusion import greedy_confusion, max_confusion_workers
from assignment.engine.method_output import MethodOutput
from assignment.engine.problem import AssignmentProblem

__all__ = [
    "OBJECTIVE",
    "choose_under_confusion",
    "dawid_skene_accuracy",
    "most_workers_a_task",
]

#: What ``details["objective"]`` says of every number reported under the matrices.
OBJECTIVE = "accuracy of the Dawid-Skene vote under the confusion matrices"


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
    seed : int or None
        Seed of the Monte Carlo sums beyond the exact limit.
    progress : callable, optional

    Returns
    -------
    MethodOutput
        ``details["accuracy"]`` the Dawid–Skene accuracy, ``details["objective"]``
        :data:`OBJECTIVE`; no history (the search's is under the symmetric model).
    """
    if method == "greedy":
        out = greedy_confusion(problem, progress=progress)
        message = f"chosen by the Dawid-Skene vote's exact accuracy; {out.message}"
        return _relabelled(out, message, {**out.details, "objective": OBJECTIVE})
    if method == "tvcs-iht":
        return _tvcs_iht(problem, run_symmetric, seed)
    out = run_symmetric(problem.symmetric())
    accuracy, _ = dawid_skene_accuracy(problem, out.rows, out.cols, seed=seed)
    message = (
        f"chosen under the symmetric model, scored under the confusion matrices; {out.message}"
    )
    details = {k: v for k, v in out.details.items() if "accuracy" not in k}
    return _relabelled(out, message, {**details, "accuracy": accuracy, "objective": OBJECTIVE})


def _tvcs_iht(problem, run_symmetric, seed) -> MethodOutput:
    """The Dawid–Skene greedy against tvcs-iht's symmetric search, the better kept."""
    greedy = greedy_confusion(problem)
    search = run_symmetric(problem.symmetric(), bound_gap=0.0)
    greedy_acc, _ = dawid_skene_accuracy(problem, greedy.rows, greedy.cols, seed=seed)
    search_acc, search_se = dawid_skene_accuracy(problem, search.rows, search.cols, seed=seed)
    kept, accuracy = ("search", search_acc) if search_acc > greedy_acc else ("greedy", greedy_acc)
    estimated = "" if search_se is None else f" (Monte Carlo, standard error {search_se:.1e})"
    message = (
        f"Dawid-Skene greedy {greedy_acc:.4f}; tvcs-iht's search on the symmetric surrogate, "
        f"no upper-bound stop, {search_acc:.4f}{estimated} under the confusion matrices; "
        f"kept the {kept}"
    )
    details = {
        "accuracy": accuracy,
        "greedy_accuracy": greedy_acc,
        "search_accuracy": search_acc,
        "kept": kept,
        "objective": OBJECTIVE,
    }
    best = search if kept == "search" else greedy
    return MethodOutput(
        best.rows, best.cols, best.shape, message, search.iterations, details=details
    )


def _relabelled(out: MethodOutput, message: str, details: dict) -> MethodOutput:
    """``out`` with ``message`` and ``details``, and no history."""
    return MethodOutput(out.rows, out.cols, out.shape, message, out.iterations, details=details)
