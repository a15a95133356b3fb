"""The K-class greedy's numba moves make the old state's moves, bit for bit (issue 12).

The old state (``multiclass_greedy_reference``) scored every candidate set through
``multiclass._units_accuracy``; the new one scores them in
:mod:`assignment.engine._multiclass_moves`.
Both run through the same loop, so equal moves give equal assignments, steps and evaluations,
and equal accuracies give equal per-task accuracies bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from multiclass_greedy_reference import reference_greedy_pairs

from assignment.engine._greedy_multiclass import MulticlassGreedyState
from assignment.engine.greedy import fill, greedy_pairs
from assignment.engine.multiclass import expected_accuracy_multiclass
from assignment.engine.problem import AssignmentProblem, QualityByCategory


def new_greedy_pairs(problem, initial=None):
    """The current state through the same loop, returned as ``reference_greedy_pairs``."""
    state = MulticlassGreedyState(problem)
    if initial is not None:
        state.start_from_pairs(*initial)
    steps, pairs = fill(state)
    return (*state.pairs(), state.acc.copy(), steps, pairs, state.evaluations)


def assert_same_run(problem, initial=None):
    new = new_greedy_pairs(problem, initial)
    old = reference_greedy_pairs(problem, initial)
    for name, a, b in zip(("workers", "tasks", "acc"), new[:3], old[:3], strict=True):
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert new[3:] == old[3:]  # steps, pairs added, evaluations
    return new


def random_problem(seed, n_labels, *, n=30, m=60, low=0.5, per_task=4, per_worker=8, **kw):
    rng = np.random.default_rng(seed)
    quality = kw.pop("quality", None)
    if quality is None:
        quality = rng.uniform(low, 0.95, (n, m))
    n, m = quality.shape
    prior = kw.pop("prior", "uniform")
    return AssignmentProblem(
        quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=kw.pop("budget", int(0.8 * min(per_task * m, per_worker * n))),
        prior=None if prior == "uniform" else rng.dirichlet(np.ones(n_labels), m),
        n_labels=n_labels,
        **kw,
    )


@pytest.mark.parametrize("n_labels", [3, 4, 5])
@pytest.mark.parametrize("prior", ["uniform", "dirichlet"])
def test_the_numba_moves_equal_the_old_state_bit_for_bit(n_labels, prior):
    _, _, _, steps, pairs, _ = assert_same_run(random_problem(n_labels, n_labels, prior=prior))
    assert steps > 100
    if prior == "uniform":
        assert pairs > 0  # the pair search ran and won somewhere


@pytest.mark.parametrize("n_labels", [3, 4])
def test_more_candidates_than_the_exhaustive_pair_search_give_the_old_moves(n_labels):
    """60 workers, 2 tasks each: pairs from the 8 best by gain and the 8 most reliable."""
    problem = random_problem(1, n_labels, n=60, m=20, low=0.3, per_task=6, per_worker=2, budget=100)
    assert assert_same_run(problem)[4] > 0


@pytest.mark.parametrize(
    "case",
    ["below 1/K", "equal qualities", "exact 0 and 1", "eligibility", "tight caps"],
)
def test_awkward_problems_give_the_old_moves(case):
    rng = np.random.default_rng(7)
    kw = {}
    if case == "below 1/K":
        kw["quality"] = rng.uniform(0.0, 0.9, (25, 40))
    elif case == "equal qualities":  # groups of equal workers, and ties between candidates
        kw["quality"] = rng.choice([0.4, 0.6, 0.8], (25, 40))
    elif case == "exact 0 and 1":
        kw["quality"] = rng.integers(0, 2, (25, 40)).astype(float)
    elif case == "eligibility":
        kw["eligible"] = rng.random((30, 60)) < 0.5
    else:
        kw.update(per_task=7, per_worker=2)
    assert_same_run(random_problem(3, 3, prior="dirichlet", **kw))


def test_an_initial_assignment_is_extended_as_the_old_state_extends_it():
    problem = random_problem(11, 4)
    rng = np.random.default_rng(0)
    tasks = np.arange(problem.n_tasks)
    workers = rng.integers(0, problem.n_workers, problem.n_tasks)
    keep = np.bincount(workers, minlength=problem.n_workers)[workers] <= 8  # within the caps
    initial = (workers[keep], tasks[keep])
    assert_same_run(problem, initial)
    info = greedy_pairs(problem, initial=initial).details
    assert info["initial_accuracy"] < info["accuracy"]


@pytest.mark.parametrize("prior", ["uniform", "dirichlet"])
def test_the_accuracy_greedy_reports_from_pairs_is_the_dense_one_bit_for_bit(prior):
    problem = random_problem(5, 4, prior=prior, m=80, budget=60)  # some tasks left empty
    output = greedy_pairs(problem)
    workers, tasks, info = output.rows, output.cols, output.details
    dense = np.zeros(problem.shape, dtype=bool)
    dense[workers, tasks] = True
    assert (tasks.size, np.unique(tasks).size < problem.n_tasks) == (info["assigned"], True)
    assert info["accuracy"] == expected_accuracy_multiclass(
        problem.quality, dense, prior=problem.prior_distribution, n_labels=4
    )


@pytest.mark.parametrize("prior", ["uniform", "dirichlet"])
def test_a_problem_by_category_gets_the_old_moves_with_fewer_evaluations(prior):
    """Tasks of one category with the same workers share their best move (the memo)."""
    rng = np.random.default_rng(3)
    quality = QualityByCategory(rng.uniform(0.3, 0.95, (30, 4)), rng.integers(0, 4, 120))
    problem = random_problem(2, 3, quality=quality, prior=prior, per_worker=12)
    new = new_greedy_pairs(problem)
    old = reference_greedy_pairs(problem)
    for name, a, b in zip(("workers", "tasks", "acc"), new[:3], old[:3], strict=True):
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert new[3:5] == old[3:5]
    if prior == "uniform":
        assert new[5] < old[5] / 2
