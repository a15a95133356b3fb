"""The solvers' exact accuracy on a problem's arrays (assignment/engine/_problem_accuracy.py):
the public, checking functions' kernels without the checks, so the same numbers to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine._problem_accuracy import (
    accuracy_of,
    accuracy_of_pairs,
    confusion_accuracy_of,
    pair_losses,
    task_accuracies_of,
)
from assignment.engine.accuracy import expected_accuracy, removal_losses
from assignment.engine.confusion import confusion_accuracy
from assignment.engine.multiclass import expected_accuracy_multiclass, removal_losses_multiclass
from assignment.engine.problem import AssignmentProblem, QualityByCategory


def random_case(seed: int, n_labels: int, by_category: bool):
    """A problem with per-task priors and eligibility, and an eligible assignment of it."""
    rng = np.random.default_rng(seed)
    n, m = 12, 30
    if by_category:
        quality = QualityByCategory(rng.uniform(0.2, 0.95, (n, 4)), rng.integers(0, 4, m))
    else:
        quality = np.round(rng.uniform(0.2, 0.95, (n, m)), 1)  # repeated qualities too
    prior = rng.uniform(0.1, 0.9, m) if n_labels == 2 else rng.dirichlet([2.0] * n_labels, m)
    eligible = rng.random((n, m)) < 0.7
    problem = AssignmentProblem(
        quality,
        max_workers_per_task=5,
        max_tasks_per_worker=10,
        budget=100,
        prior=prior,
        eligible=eligible,
        n_labels=n_labels,
    )
    assignment = eligible & (rng.random((n, m)) < 0.3)
    return problem, assignment


def public(problem: AssignmentProblem, assignment: np.ndarray):
    """``(mean accuracy, removal losses)`` by the public functions."""
    q = problem.quality_form
    if problem.n_labels == 2:
        return (
            expected_accuracy(q, assignment, prior=problem.prior),
            removal_losses(q, assignment, prior=problem.prior),
        )
    labels = {"prior": problem.prior_distribution, "n_labels": problem.n_labels}
    return (
        expected_accuracy_multiclass(q, assignment, **labels),
        removal_losses_multiclass(q, assignment, **labels),
    )


@pytest.mark.parametrize("n_labels", [2, 3])
@pytest.mark.parametrize("by_category", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_the_kernels_on_a_problem_give_the_public_functions_numbers_to_the_bit(
    seed, by_category, n_labels
):
    problem, assignment = random_case(seed, n_labels, by_category)
    accuracy, (workers, tasks, loss) = public(problem, assignment)

    assert accuracy_of(problem, assignment) == accuracy
    rows, cols = np.nonzero(assignment)
    shuffled = np.random.default_rng(seed).permutation(rows.size)
    assert accuracy_of_pairs(problem, rows[shuffled], cols[shuffled]) == accuracy
    losses = pair_losses(problem, assignment, np.arange(problem.n_tasks))
    for got, expected in zip(losses, (workers, tasks, loss), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_pair_losses_refuse_a_task_beyond_the_exact_limit_as_removal_losses_do():
    problem = AssignmentProblem(
        np.full((25, 2), 0.7), max_workers_per_task=25, max_tasks_per_worker=2, budget=50
    )
    assignment = np.zeros(problem.shape, dtype=bool)
    assignment[:, 1] = True
    message = "task 1 has more than MAX_EXACT_WORKERS = 20 assigned workers"
    with pytest.raises(ValueError, match=message):
        removal_losses(problem.quality, assignment)
    with pytest.raises(ValueError, match=message):
        pair_losses(problem, assignment, np.arange(2))


@pytest.mark.parametrize("n_labels", [2, 3])
@pytest.mark.parametrize("workers_a_task", [4, 9])  # 3**9 patterns: beyond the exact limit
def test_the_confusion_kernel_on_a_problem_gives_confusion_accuracy_s_numbers_to_the_bit(
    n_labels, workers_a_task
):
    problem, _ = random_case(3, n_labels, by_category=False)
    rng = np.random.default_rng(4)
    confusion = rng.dirichlet([1.0] * n_labels, (12, n_labels)) * 0.5 + np.eye(n_labels) * 0.5
    problem = AssignmentProblem(
        problem.quality_form,
        max_workers_per_task=12,
        max_tasks_per_worker=30,
        budget=360,
        prior=problem.prior_distribution,
        n_labels=n_labels,
        confusion=confusion,
    )
    order = rng.permutation(12 * 30)
    workers, tasks = (order // 30)[: 30 * workers_a_task], (order % 30)[: 30 * workers_a_task]
    got = confusion_accuracy_of(problem, workers, tasks, seed=5)
    want = confusion_accuracy(confusion, workers, tasks, prior=problem.prior_distribution, seed=5)
    assert got.task_accuracy.tobytes() == want.task_accuracy.tobytes()
    assert got.task_standard_error.tobytes() == want.task_standard_error.tobytes()
    assert np.any(got.task_standard_error) == (n_labels**workers_a_task > 4096)


@pytest.mark.parametrize("by_category", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_task_accuracies_of_any_subset_of_tasks_are_the_whole_assignments_to_the_bit(
    seed, by_category
):
    problem, assignment = random_case(seed, 2, by_category)
    every = task_accuracies_of(problem, assignment)
    assert float(every.mean()) == accuracy_of(problem, assignment)
    rng = np.random.default_rng(seed)
    for size in (0, 1, 7, problem.n_tasks):
        tasks = np.sort(rng.choice(problem.n_tasks, size, replace=False))
        np.testing.assert_array_equal(task_accuracies_of(problem, assignment, tasks), every[tasks])


def test_task_accuracies_of_refuses_more_than_two_labels():
    problem, assignment = random_case(0, 3, False)
    with pytest.raises(ValueError, match="two labels"):
        task_accuracies_of(problem, assignment)
