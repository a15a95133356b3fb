"""The next round with K >= 2 labels: answers as labels, posterior distributions as priors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from assignment.engine import AssignmentProblem, solve
from assignment.engine.multiclass import aggregate_multiclass, expected_accuracy_multiclass
from assignment.engine.rounds import POSTERIOR_EPS, next_round


def likelihood(q, answers, y, n_labels):
    """``P(answers | y)`` of workers of qualities ``q`` under the one-coin model."""
    return np.prod(
        [qi if a == y else (1 - qi) / (n_labels - 1) for qi, a in zip(q, answers, strict=True)]
    )


def brute_force_final_accuracy(q, prior, answers, new, n_labels):
    """E[final K-class Bayes vote correct | answers in hand], by enumerating the labels and the
    new answers. ``answers``: (n, m), -1 where nobody answered yet; ``new``: the next round's
    pairs. The final vote is over *all* answers with the *original* prior."""
    m = q.shape[1]
    total = 0.0
    for j in range(m):
        old = np.flatnonzero(answers[:, j] >= 0)
        joint = [
            prior[j, y] * likelihood(q[old, j], answers[old, j], y, n_labels)
            for y in range(n_labels)
        ]
        posterior = np.array(joint) / sum(joint)
        workers = np.flatnonzero(new[:, j])
        for pattern in itertools.product(range(n_labels), repeat=len(workers)):
            column = answers[:, j].copy()
            column[workers] = pattern
            who = np.flatnonzero(column >= 0)
            label = aggregate_multiclass(
                task_index=np.zeros(who.size, np.int64),
                quality=q[who, j],
                label=column[who],
                prior=prior[[j]],
                n_labels=n_labels,
            ).labels[0]
            total += posterior[label] * likelihood(q[workers, j], pattern, label, n_labels)
    return total / m


def simulated_answers(rng, q, per_task, n_labels):
    """Answers of ``per_task`` random workers per task, as an (n, m) grid of labels (-1: none)."""
    n, m = q.shape
    truth = rng.integers(0, n_labels, m)
    grid = np.full((n, m), -1)
    for j in range(m):
        for i in rng.choice(n, per_task, replace=False):
            wrong = (truth[j] + rng.integers(1, n_labels)) % n_labels
            grid[i, j] = truth[j] if rng.random() < q[i, j] else wrong
    return grid


def round_of(problem, grid, **kwargs):
    workers, tasks = np.nonzero(grid >= 0)
    return next_round(
        problem, worker_index=workers, task_index=tasks, label=grid[workers, tasks], **kwargs
    )


def problem_of(q, prior, n_labels, **kwargs):
    caps = {"max_workers_per_task": 5, "max_tasks_per_worker": 4, "budget": 20} | kwargs
    return AssignmentProblem(q, prior=prior, n_labels=n_labels, **caps)


@pytest.mark.parametrize("seed", range(6))
def test_posterior_as_prior_gives_the_expected_accuracy_of_the_final_k_label_vote(seed):
    rng = np.random.default_rng(seed)
    n, m, k = 5, 4, 3
    q = rng.uniform(0.2, 0.95, (n, m))
    prior = rng.dirichlet(np.full(k, 3.0), m)
    grid = simulated_answers(rng, q, 2, k)
    nxt = round_of(problem_of(q, prior, k), grid)
    new = np.zeros((n, m), bool)
    for j in range(m):
        free = np.flatnonzero(grid[:, j] < 0)
        new[rng.choice(free, rng.integers(0, len(free) + 1), replace=False), j] = True
    engine = expected_accuracy_multiclass(q, new, prior=nxt.problem.prior_distribution, n_labels=k)
    assert engine == pytest.approx(brute_force_final_accuracy(q, prior, grid, new, k), abs=1e-12)


def test_the_round_of_k_labels_keeps_its_labels_and_starts_from_the_posterior():
    rng = np.random.default_rng(1)
    q = rng.uniform(0.4, 0.9, (5, 6))
    prior = rng.dirichlet(np.ones(4), 6)
    grid = simulated_answers(rng, q, 2, 4)
    nxt = round_of(problem_of(q, prior, 4), grid)
    assert nxt.problem.n_labels == 4
    assert nxt.posterior_distribution.shape == (6, 4)
    np.testing.assert_allclose(nxt.posterior_distribution.sum(axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(nxt.problem.prior_distribution, nxt.posterior_distribution)
    np.testing.assert_array_equal(nxt.task_accuracy_now, nxt.posterior_distribution.max(axis=1))
    empty = expected_accuracy_multiclass(
        q, np.zeros_like(q, bool), prior=nxt.problem.prior_distribution, n_labels=4
    )
    assert empty == pytest.approx(nxt.accuracy_now, abs=1e-12)
    result = solve(nxt.problem, method="greedy")
    assert result.expected_accuracy >= nxt.accuracy_now - 1e-12
    with pytest.raises(ValueError, match="two-label project; this one has 4 labels"):
        _ = nxt.posterior


def test_with_no_answers_the_k_label_round_is_the_problem_itself():
    prior = np.tile([0.5, 0.3, 0.2], (6, 1))
    problem = problem_of(np.full((4, 6), 0.7), prior, 3, budget=10)
    empty = np.zeros(0, np.int64)
    nxt = next_round(problem, worker_index=empty, task_index=empty, label=empty)
    np.testing.assert_allclose(nxt.problem.prior_distribution, prior, rtol=1e-15)
    assert nxt.accuracy_now == pytest.approx(0.5)
    assert nxt.problem.budget == 10


def test_a_certain_k_label_posterior_is_held_away_from_zero_and_renormalised():
    problem = problem_of(np.full((30, 1), 1.0), None, 3, max_workers_per_task=30, budget=30)
    grid = np.full((30, 1), -1)
    grid[:10, 0] = 2
    nxt = round_of(problem, grid)
    assert nxt.posterior_distribution[0, 2] == 1.0
    prior = nxt.problem.prior_distribution[0]
    assert prior.min() >= POSTERIOR_EPS / (1 + 2 * POSTERIOR_EPS)
    assert prior.sum() == pytest.approx(1.0, abs=1e-15)


def test_tasks_at_the_target_posterior_get_nobody_with_k_labels():
    problem = problem_of(np.full((4, 3), 0.8), None, 3, max_workers_per_task=4, budget=12)
    grid = np.full((4, 3), -1)
    grid[:2, 0] = 1  # two agreeing answers: 0.64 / (0.64 + 2 * 0.01) = 0.9697
    grid[0, 1], grid[1, 1] = 0, 2  # a tie between two labels: 0.08 / (0.08 + 0.08 + 0.01)
    nxt = round_of(problem, grid, target_posterior=0.9)
    assert nxt.posterior_distribution[0, 1] == pytest.approx(0.64 / 0.66)
    assert nxt.posterior_distribution[1, 0] == pytest.approx(0.08 / 0.17)
    np.testing.assert_array_equal(nxt.problem.max_workers_per_task, [0, 2, 4])
    assert next_round(
        problem, worker_index=[0], task_index=[0], label=[0], target_posterior=0.34
    ).open_tasks.tolist() == [False, True, True]  # 0.8 against 1/3


def test_two_labels_given_as_labels_are_the_round_of_said_one():
    rng = np.random.default_rng(2)
    q = rng.uniform(0.3, 0.95, (6, 8))
    problem = AssignmentProblem(
        q,
        max_workers_per_task=4,
        max_tasks_per_worker=5,
        budget=30,
        prior=rng.uniform(0.2, 0.8, 8),
    )
    grid = simulated_answers(rng, q, 2, 2)
    workers, tasks = np.nonzero(grid >= 0)
    said = next_round(
        problem, worker_index=workers, task_index=tasks, said_one=grid[workers, tasks] == 1
    )
    labels = round_of(problem, grid)
    np.testing.assert_array_equal(labels.posterior, said.posterior)
    np.testing.assert_array_equal(labels.problem.prior, said.problem.prior)
    np.testing.assert_array_equal(labels.task_accuracy_now, said.task_accuracy_now)
    np.testing.assert_array_equal(
        labels.posterior_distribution, np.column_stack([1 - said.posterior, said.posterior])
    )


@pytest.mark.parametrize(
    ("n_labels", "kwargs", "message"),
    [
        (3, {"label": [3]}, r"label must be in \[0, 3\), got 3 at answer 0"),
        (3, {"label": [-1]}, r"label must be in \[0, 3\), got -1 at answer 0"),
        (3, {"label": [0.5]}, "label must be a 1-D array of integers"),
        (3, {"label": [0, 1]}, "worker_index, task_index and label must have one entry per"),
        (3, {"label": None, "said_one": [True]}, "said_one is for two labels; this project has 3"),
        (3, {"label": None}, "give the answers as label"),
        (2, {"said_one": [True]}, "not both"),
        (3, {"target_posterior": 1 / 3}, r"target_posterior must be a number in \(1/3, 1\]"),
        (2, {"label": [2]}, r"label must be in \[0, 2\), got 2 at answer 0"),
    ],
)
def test_bad_k_label_answers_are_refused_naming_the_field(n_labels, kwargs, message):
    problem = problem_of(np.full((3, 2), 0.7), None, n_labels)
    arguments = {"worker_index": [0], "task_index": [0], "label": [1]} | kwargs
    arguments = {
        k: v if v is None or np.isscalar(v) else np.asarray(v) for k, v in arguments.items()
    }
    with pytest.raises(ValueError, match=message):
        next_round(problem, **arguments)
