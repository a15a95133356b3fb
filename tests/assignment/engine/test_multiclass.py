"""The K-class Bayes vote: exact accuracy against brute force, the reduction to the binary
module at K = 2, Monte Carlo, invariants, leave-one-out losses and validation."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from assignment.engine import multiclass as multiclass_module
from assignment.engine.accuracy import AccuracyEstimate, removal_losses, task_accuracy
from assignment.engine.aggregate import aggregate_pairs
from assignment.engine.multiclass import (
    EPS,
    MAX_EXACT_STATES,
    MulticlassAggregate,
    aggregate_multiclass,
    column_accuracy_multiclass,
    estimate_accuracy_multiclass,
    exact_state_counts,
    expected_accuracy_multiclass,
    removal_losses_multiclass,
    set_accuracy_multiclass,
    task_accuracy_multiclass,
)
from assignment.engine.problem import QualityByCategory

# --------------------------------------------------------------------------- references


def vote_by_hand(scores, tolerance):
    """The highest label whose score is within the tolerance of the best one."""
    top = max(scores)
    return max(y for y, s in enumerate(scores) if s >= top - tolerance)


def brute_force_accuracy(q, prior, n_labels):
    """Sum over the true label y and all K^k answer patterns of P(y) P(answers | y) [vote = y],
    in plain Python, one pattern at a time."""
    q = [min(max(float(qi), EPS), 1.0 - EPS) for qi in q]
    w = [math.log(qi * (n_labels - 1) / (1.0 - qi)) for qi in q]
    log_prior = [math.log(p) for p in prior]
    tolerance = 1e-9 * (1.0 + max(log_prior) - min(log_prior) + sum(abs(wi) for wi in w))
    accuracy = 0.0
    for y in range(n_labels):
        for answers in itertools.product(range(n_labels), repeat=len(q)):
            p_answers = 1.0
            scores = list(log_prior)
            for qi, wi, a in zip(q, w, answers, strict=True):
                p_answers *= qi if a == y else (1.0 - qi) / (n_labels - 1)
                scores[a] += wi
            if vote_by_hand(scores, tolerance) == y:
                accuracy += prior[y] * p_answers
    return accuracy


def enumerated_accuracy(q, prior, n_labels):
    """The same sum vectorised over the K^k patterns (for k up to about 9)."""
    q = np.clip(np.asarray(q, dtype=float), EPS, 1.0 - EPS)
    prior = np.asarray(prior, dtype=float)
    patterns = np.array(list(itertools.product(range(n_labels), repeat=q.size)), dtype=int)
    patterns = patterns.reshape(-1, q.size)
    w = np.log(q * (n_labels - 1) / (1.0 - q))
    scores = np.tile(np.log(prior), (patterns.shape[0], 1))
    for i in range(q.size):
        scores[np.arange(patterns.shape[0]), patterns[:, i]] += w[i]
    tolerance = 1e-9 * (1.0 + np.ptp(np.log(prior)) + np.abs(w).sum())
    within = scores >= scores.max(axis=1, keepdims=True) - tolerance
    votes = n_labels - 1 - np.argmax(within[:, ::-1], axis=1)
    accuracy = 0.0
    for y in range(n_labels):
        p = np.prod(np.where(patterns == y, q, (1.0 - q) / (n_labels - 1)), axis=1)
        accuracy += prior[y] * p[votes == y].sum()
    return accuracy


def random_case(rng, n_labels, *, n_max=5, m_max=5):
    """Qualities in [0.2, 0.99] (or from a few values, so that ties and groups of equally good
    workers are frequent), Dirichlet priors (or uniform ones), a task without workers."""
    n = int(rng.integers(1, n_max + 1))
    m = int(rng.integers(2, m_max + 1))
    if rng.random() < 0.5:
        quality = rng.uniform(0.2, 0.99, (n, m))
    else:
        quality = rng.choice([0.2, 1.0 / n_labels, 0.6, 0.9], (n, m))
    assignment = rng.random((n, m)) < rng.uniform(0.3, 1.0)
    assignment[:, 0] = False
    if rng.random() < 0.7:
        prior = rng.dirichlet(np.ones(n_labels), m)
    else:
        prior = np.full((m, n_labels), 1.0 / n_labels)
    return quality, assignment, prior


def binary_prior(p):
    return np.column_stack([1.0 - p, p])


# --------------------------------------------------------------------------- exact accuracy


@pytest.mark.parametrize("n_labels", [2, 3, 4])
@pytest.mark.parametrize("seed", range(12))
def test_exact_accuracy_equals_brute_force_over_labels_and_answer_patterns(n_labels, seed):
    quality, assignment, prior = random_case(np.random.default_rng(seed), n_labels)
    expected = [
        brute_force_accuracy(quality[assignment[:, j], j], prior[j], n_labels)
        for j in range(quality.shape[1])
    ]
    got = task_accuracy_multiclass(quality, assignment, prior=prior, n_labels=n_labels)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert expected_accuracy_multiclass(
        quality, assignment, prior=prior, n_labels=n_labels
    ) == pytest.approx(np.mean(expected), abs=1e-12)


@pytest.mark.parametrize(
    ("n_labels", "k"), [(3, 7), (3, 9), (4, 6), (4, 8), (5, 6), (6, 5), (2, 14)]
)
def test_exact_accuracy_equals_enumeration_for_more_workers_and_labels(n_labels, k):
    rng = np.random.default_rng(10 * n_labels + k)
    columns = [
        rng.uniform(0.2, 0.99, k),  # distinct qualities: K^k states
        rng.uniform(0.9, 0.999, k),  # confident workers: the sum is pruned early
        rng.choice([0.35, 0.7], k),  # two groups of equal workers
        np.full(k, 0.6),  # one group
        np.concatenate([[1.0, 0.0, 1e-9], rng.uniform(0.0, 1.0, k - 3)]),  # clipped
    ]
    quality = np.column_stack(columns)
    prior = np.vstack([rng.dirichlet(np.ones(n_labels)), np.full(n_labels, 1.0 / n_labels)] * 3)[
        : len(columns)
    ]
    expected = [enumerated_accuracy(quality[:, j], prior[j], n_labels) for j in range(5)]
    got = task_accuracy_multiclass(quality, np.ones_like(quality), prior=prior, n_labels=n_labels)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("n_labels", "c"), [(2, 60), (3, 30), (4, 20), (7, 9)])
def test_many_equally_good_workers_are_summed_exactly_over_the_splits_of_their_votes(n_labels, c):
    # c workers of quality 0.55 (and one of 0.8): the vote depends only on how many chose each
    # label, a multinomial distribution summed here split by split.
    prior = np.linspace(1.0, 2.0, n_labels)
    prior /= prior.sum()
    q, q_other = 0.55, 0.8
    w = math.log(q * (n_labels - 1) / (1 - q))
    w_other = math.log(q_other * (n_labels - 1) / (1 - q_other))
    tolerance = 1e-9 * (1 + np.ptp(np.log(prior)) + c * abs(w) + abs(w_other))
    expected = 0.0
    for split in itertools.combinations_with_replacement(range(n_labels), c):
        counts = np.bincount(split, minlength=n_labels)
        ways = math.factorial(c) / math.prod(math.factorial(int(x)) for x in counts)
        for other in range(n_labels):
            scores = np.log(prior) + counts * w
            scores[other] += w_other
            y = vote_by_hand(list(scores), tolerance)
            p = (q ** counts[y]) * ((1 - q) / (n_labels - 1)) ** (c - counts[y])
            p *= q_other if other == y else (1 - q_other) / (n_labels - 1)
            expected += prior[y] * ways * p
    quality = np.full((c + 1, 1), q)
    quality[c, 0] = q_other
    got = task_accuracy_multiclass(quality, np.ones_like(quality), prior=prior, n_labels=n_labels)
    assert got[0] == pytest.approx(expected, abs=1e-12)


def test_a_task_without_workers_gets_its_largest_prior_probability():
    prior = np.array([[0.2, 0.5, 0.3], [0.25, 0.25, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    got = task_accuracy_multiclass(np.zeros((2, 3)), np.zeros((2, 3)), prior=prior, n_labels=3)
    np.testing.assert_allclose(got, [0.5, 0.5, 1 / 3], rtol=0, atol=1e-15)


def test_one_prior_of_shape_k_is_every_tasks_prior():
    rng = np.random.default_rng(2)
    quality, assignment = rng.uniform(0.2, 0.9, (5, 7)), rng.random((5, 7)) < 0.6
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_array_equal(
        task_accuracy_multiclass(quality, assignment, prior=prior, n_labels=4),
        task_accuracy_multiclass(quality, assignment, prior=np.tile(prior, (7, 1)), n_labels=4),
    )


def test_a_worker_no_better_than_chance_adds_nothing_and_one_below_it_is_read_in_reverse():
    prior = np.full(3, 1 / 3)
    alone = column_accuracy_multiclass([0.8], prior, n_labels=3)
    assert column_accuracy_multiclass([0.8, 1 / 3], prior, n_labels=3) == pytest.approx(
        alone, abs=1e-12
    )
    # Q = 0: the answer is never the truth, so the truth is one of the two other labels.
    assert column_accuracy_multiclass([0.0], prior, n_labels=3) == pytest.approx(0.5, abs=2e-6)
    assert column_accuracy_multiclass([1.0], prior, n_labels=3) == pytest.approx(1.0, abs=2e-6)


# --------------------------------------------------------------------------- K = 2


def random_binary_case(rng, k_max=12):
    n = int(rng.integers(1, k_max + 1))
    m = 8
    kind = rng.integers(3)
    if kind == 0:
        quality = rng.uniform(0.0, 1.0, (n, m))
    elif kind == 1:  # equal qualities: exact ties under prior 0.5
        quality = rng.choice([0.3, 0.7, 0.8], (n, m))
    else:
        quality = rng.choice([0.0, 1e-9, 0.5, 0.7, 1.0 - 1e-9, 1.0], (n, m))
    assignment = rng.random((n, m)) < rng.uniform(0.3, 1.0)
    p = np.where(rng.random(m) < 0.5, 0.5, rng.uniform(0.02, 0.98, m))
    return quality, assignment, p


@pytest.mark.parametrize("seed", range(30))
def test_two_labels_give_the_binary_modules_accuracy(seed):
    quality, assignment, p = random_binary_case(np.random.default_rng(seed))
    np.testing.assert_allclose(
        task_accuracy_multiclass(quality, assignment, prior=binary_prior(p), n_labels=2),
        task_accuracy(quality, assignment, prior=p),
        rtol=0,
        atol=1e-12,
    )


def test_two_labels_give_the_binary_accuracy_up_to_twelve_workers_per_task():
    rng = np.random.default_rng(7)
    for k in range(13):
        quality = np.concatenate([rng.uniform(0.2, 0.99, (k, 5)), np.full((k, 3), 0.7)], 1)
        p = np.array([0.3, 0.5, 0.9, 0.5, 0.05, 0.5, 0.5, 0.2])
        assignment = np.ones_like(quality, dtype=bool)
        np.testing.assert_allclose(
            task_accuracy_multiclass(quality, assignment, prior=binary_prior(p), n_labels=2),
            task_accuracy(quality, assignment, prior=p),
            rtol=0,
            atol=1e-12,
        )


TIES = [  # exact ties whose floating-point log-odds do not cancel (from test_accuracy.py)
    ([Fraction(3, 5), Fraction(7, 10), Fraction(7, 9)], Fraction(1, 2)),
    ([Fraction(3, 5), Fraction(3, 5), Fraction(9, 13)], Fraction(1, 2)),
    ([Fraction(7, 10)], Fraction(3, 10)),
    ([Fraction(3, 5), Fraction(7, 10)], Fraction(2, 9)),
    ([Fraction(3, 5), Fraction(7, 10), Fraction(7, 9)] * 2, Fraction(1, 2)),
]


@pytest.mark.parametrize(("q", "p"), TIES)
def test_exact_ties_at_two_labels_give_the_binary_labels_and_accuracy(q, p):
    q = np.array([float(x) for x in q])
    p = float(p)
    quality = q[:, None]
    got = task_accuracy_multiclass(quality, np.ones_like(quality), prior=[1 - p, p], n_labels=2)
    assert got[0] == pytest.approx(
        task_accuracy(quality, np.ones_like(quality), prior=p)[0], abs=1e-12
    )
    patterns = np.array(list(itertools.product((0, 1), repeat=q.size)))  # every answer pattern
    tasks = np.repeat(np.arange(patterns.shape[0]), q.size)
    priors = np.full(patterns.shape[0], p)
    binary = aggregate_pairs(
        task_index=tasks,
        quality=np.tile(q, patterns.shape[0]),
        said_one=patterns.ravel() == 1,
        prior=priors,
    )
    multi = aggregate_multiclass(
        task_index=tasks,
        quality=np.tile(q, patterns.shape[0]),
        label=patterns.ravel(),
        prior=binary_prior(priors),
        n_labels=2,
    )
    np.testing.assert_array_equal(multi.labels, binary.labels)
    np.testing.assert_allclose(multi.posterior[:, 1], binary.posterior, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_two_labels_aggregate_as_the_binary_vote(seed):
    rng = np.random.default_rng(seed)
    m, n_answers = 200, 900
    tasks = rng.integers(0, m, n_answers)
    quality = np.where(
        rng.random(n_answers) < 0.5,
        rng.choice([0.3, 0.7, 1.0], n_answers),
        rng.uniform(0, 1, n_answers),
    )
    said = rng.integers(0, 2, n_answers)
    p = np.where(rng.random(m) < 0.5, 0.5, rng.uniform(0.01, 0.99, m))
    binary = aggregate_pairs(task_index=tasks, quality=quality, said_one=said == 1, prior=p)
    multi = aggregate_multiclass(
        task_index=tasks, quality=quality, label=said, prior=binary_prior(p), n_labels=2
    )
    np.testing.assert_array_equal(multi.labels, binary.labels)
    np.testing.assert_allclose(multi.posterior[:, 1], binary.posterior, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_two_labels_give_the_binary_removal_losses(seed):
    quality, assignment, p = random_binary_case(np.random.default_rng(100 + seed), k_max=9)
    workers, tasks, loss = removal_losses(quality, assignment, prior=p)
    got = removal_losses_multiclass(quality, assignment, prior=binary_prior(p), n_labels=2)
    np.testing.assert_array_equal(got[0], workers)
    np.testing.assert_array_equal(got[1], tasks)
    np.testing.assert_allclose(got[2], loss, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- aggregation


def test_aggregate_matches_a_hand_computed_vote_and_posterior():
    # task 0: answers 2 (q 0.9) and 1 (q 0.6, q 0.7); task 1: none; K = 3.
    prior = np.array([[0.2, 0.3, 0.5], [0.5, 0.2, 0.3]])
    result = aggregate_multiclass(
        task_index=[0, 0, 0], quality=[0.9, 0.6, 0.7], label=[2, 1, 1], prior=prior, n_labels=3
    )
    joint = np.array(
        [
            0.2 * 0.05 * 0.2 * 0.15,  # y = 0: every answer wrong
            0.3 * 0.05 * 0.6 * 0.7,  # y = 1
            0.5 * 0.9 * 0.2 * 0.15,  # y = 2
        ]
    )
    assert isinstance(result, MulticlassAggregate)
    np.testing.assert_allclose(result.posterior[0], joint / joint.sum(), rtol=1e-12)
    np.testing.assert_allclose(result.posterior[1], prior[1], rtol=1e-12)
    np.testing.assert_array_equal(result.labels, [int(np.argmax(joint)), 0])


def test_ties_go_to_the_highest_label():
    uniform = np.full((3, 4), 0.25)
    result = aggregate_multiclass(
        task_index=[1, 1, 2, 2],
        quality=[0.7, 0.7, 0.7, 0.7],
        label=[0, 2, 3, 1],
        prior=uniform,
        n_labels=4,
    )
    np.testing.assert_array_equal(result.labels, [3, 2, 3])


@pytest.mark.parametrize(("n_labels", "seed"), [(3, 0), (3, 1), (4, 2), (4, 3), (5, 4)])
def test_labels_over_every_answer_pattern_achieve_exactly_the_expected_accuracy(n_labels, seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 5))
    q = rng.choice([0.2, 0.6, 0.9, rng.uniform(0.2, 0.99)], k)
    prior = rng.dirichlet(np.ones(n_labels)) if seed % 2 else np.full(n_labels, 1 / n_labels)
    patterns = np.array(list(itertools.product(range(n_labels), repeat=k)))
    labels = aggregate_multiclass(
        task_index=np.repeat(np.arange(patterns.shape[0]), k),
        quality=np.tile(q, len(patterns)),
        label=patterns.ravel(),
        prior=np.tile(prior, (len(patterns), 1)),
        n_labels=n_labels,
    ).labels
    accuracy = 0.0
    for y in range(n_labels):
        p = np.prod(np.where(patterns == y, q, (1 - q) / (n_labels - 1)), axis=1)
        accuracy += prior[y] * p[labels == y].sum()
    assert accuracy == pytest.approx(
        column_accuracy_multiclass(q, prior, n_labels=n_labels), abs=1e-12
    )


def test_confident_answers_give_finite_posteriors_that_sum_to_one():
    result = aggregate_multiclass(
        task_index=np.zeros(60, dtype=int),
        quality=np.ones(60),
        label=np.zeros(60, dtype=int),
        prior=[[1e-300, 0.5, 0.5 - 1e-300]],
        n_labels=3,
    )
    assert np.all(np.isfinite(result.posterior))
    assert result.posterior.sum() == pytest.approx(1.0)
    assert result.labels[0] == 0


# --------------------------------------------------------------------------- Monte Carlo


@pytest.mark.parametrize("n_labels", [2, 3, 5])
def test_monte_carlo_is_within_four_standard_errors_of_the_exact_accuracy(n_labels):
    rng = np.random.default_rng(n_labels)
    quality = rng.uniform(0.2, 0.95, (10, 40))
    assignment = rng.random((10, 40)) < 0.4
    assignment[:, :3] = False
    prior = rng.dirichlet(np.ones(n_labels), 40)
    exact = expected_accuracy_multiclass(quality, assignment, prior=prior, n_labels=n_labels)
    estimate = estimate_accuracy_multiclass(
        quality, assignment, prior=prior, n_labels=n_labels, n_samples=4000, seed=1
    )
    assert isinstance(estimate, AccuracyEstimate)
    assert estimate.n_samples == 4000
    assert 0 < estimate.standard_error < 0.01
    assert abs(estimate.mean - exact) <= 4 * estimate.standard_error


def test_monte_carlo_is_reproducible_and_chunking_does_not_change_it(monkeypatch):
    rng = np.random.default_rng(9)
    quality, assignment = rng.uniform(0.3, 0.9, (6, 30)), rng.random((6, 30)) < 0.5
    prior = np.full(3, 1 / 3)
    args = {"prior": prior, "n_labels": 3, "n_samples": 500, "seed": 3}
    first = estimate_accuracy_multiclass(quality, assignment, **args)
    assert estimate_accuracy_multiclass(quality, assignment, **args) == first
    monkeypatch.setattr(multiclass_module, "_MC_CHUNK_ELEMENTS", 1)
    assert estimate_accuracy_multiclass(quality, assignment, **args) == first


def test_monte_carlo_takes_tasks_beyond_the_exact_bound():
    quality = np.full((30, 2), 0.6)
    quality[:, 1] = np.linspace(0.3, 0.9, 30)  # distinct: 4^30 states
    assignment = np.ones((30, 2), dtype=bool)
    with pytest.raises(ValueError, match=r"task 1 has .* states.*estimate_accuracy_multiclass"):
        expected_accuracy_multiclass(quality, assignment, prior=np.full(4, 0.25), n_labels=4)
    estimate = estimate_accuracy_multiclass(
        quality, assignment, prior=np.full(4, 0.25), n_labels=4, n_samples=200, seed=0
    )
    assert 0.9 < estimate.mean <= 1.0


# --------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("n_labels", [2, 3, 4])
@pytest.mark.parametrize("seed", range(6))
def test_the_vote_is_at_least_as_accurate_as_the_most_likely_label(n_labels, seed):
    quality, assignment, prior = random_case(np.random.default_rng(seed), n_labels, n_max=7)
    got = task_accuracy_multiclass(quality, assignment, prior=prior, n_labels=n_labels)
    assert np.all(got >= prior.max(axis=1) - 1e-12)
    assert np.all(got <= 1.0 + 1e-12)


@pytest.mark.parametrize("n_labels", [2, 3, 4, 6])
@pytest.mark.parametrize("seed", range(5))
def test_adding_a_worker_never_lowers_the_accuracy_of_the_vote(n_labels, seed):
    rng = np.random.default_rng(seed)
    k = 8 if n_labels <= 4 else 6
    quality = rng.choice([rng.uniform(0.0, 1.0), 0.2, 0.5, 0.8], (k, 30))
    quality[:, 15:] = rng.uniform(0.0, 1.0, (k, 15))
    prior = rng.dirichlet(np.ones(n_labels) * 0.7, 30)
    nested = np.tril(np.ones((k + 1, k), dtype=bool), -1)  # row r: the first r workers
    accuracies = np.array(
        [
            task_accuracy_multiclass(
                quality, np.repeat(row[:, None], 30, 1), prior=prior, n_labels=n_labels
            )
            for row in nested
        ]
    )
    assert np.all(np.diff(accuracies, axis=0) >= -1e-12)
    losses = removal_losses_multiclass(
        quality, np.ones_like(quality), prior=prior, n_labels=n_labels
    )[2]
    assert np.all(losses >= -1e-12)


# --------------------------------------------------------------------------- the solver API


def test_column_accuracy_equals_the_task_accuracy_of_that_column():
    rng = np.random.default_rng(4)
    quality = rng.uniform(0.2, 0.99, (9, 10))
    assignment = np.tril(np.ones((9, 10), dtype=bool), -1)  # column j has j workers
    prior = rng.dirichlet(np.ones(3), 10)
    per_task = task_accuracy_multiclass(quality, assignment, prior=prior, n_labels=3)
    for j in range(10):
        got = column_accuracy_multiclass(quality[assignment[:, j], j], prior[j], n_labels=3)
        assert got == pytest.approx(per_task[j], abs=1e-12)


def test_set_accuracy_scores_every_task_with_each_candidate_worker_added_in_one_call():
    rng = np.random.default_rng(8)
    quality = rng.choice([0.3, 0.6, 0.8, rng.uniform()], (6, 9))
    assignment = rng.random((6, 9)) < 0.4
    prior = rng.dirichlet(np.ones(3), 9)
    sets, members, q, set_prior, expected = [], [], [], [], []
    for j in range(9):
        for i in np.flatnonzero(~assignment[:, j]):
            with_i = assignment[:, j].copy()
            with_i[i] = True
            workers = np.flatnonzero(with_i)
            members += [len(sets)] * workers.size
            q += list(quality[workers, j])
            set_prior.append(prior[j])
            expected.append(column_accuracy_multiclass(quality[workers, j], prior[j], n_labels=3))
            sets.append((i, j))
    set_prior.append(prior[0])  # and an empty set
    expected.append(prior[0].max())
    got = set_accuracy_multiclass(set_index=members, quality=q, prior=set_prior, n_labels=3)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"set_index": [0, 2]}, r"set_index must be in \[0, 2\), got 2 at member 1"),
        ({"quality": [0.7]}, "set_index and quality must have one entry per member"),
        ({"quality": [0.7, -0.1]}, r"quality must be finite and in \[0, 1\], got -0.1 at member 1"),
        ({"prior": [0.5, 0.5]}, r"prior must have shape \(n_tasks, 2\)"),
        ({"quality": np.full((2, 8), 0.6), "set_index": np.zeros((2, 8), int)}, "1-D array"),
        ({"quality": np.linspace(0.5, 0.9, 21), "set_index": np.zeros(21, int)}, "set 0 has"),
    ],
)
def test_set_accuracy_refuses_invalid_sets_naming_the_field_and_member(kwargs, message):
    args = {"set_index": [0, 1], "quality": [0.7, 0.8], "prior": [[0.5, 0.5]] * 2, "n_labels": 2}
    with pytest.raises(ValueError, match=message):
        set_accuracy_multiclass(**{**args, **kwargs})


@pytest.mark.parametrize("n_labels", [3, 4])
def test_removal_losses_are_the_accuracy_lost_without_each_worker(n_labels):
    rng = np.random.default_rng(n_labels)
    quality = rng.choice([0.2, 0.5, 0.75, 0.9, rng.uniform()], (7, 12))
    assignment = rng.random((7, 12)) < 0.6
    assignment[:, 0] = False
    assignment[0, 1], assignment[1:, 1] = True, False  # a task with one worker
    prior = rng.dirichlet(np.ones(n_labels), 12)
    full = task_accuracy_multiclass(quality, assignment, prior=prior, n_labels=n_labels)
    workers, tasks, loss = removal_losses_multiclass(
        quality, assignment, prior=prior, n_labels=n_labels
    )
    expected_pairs = np.nonzero(assignment.T)[::-1]
    np.testing.assert_array_equal(workers, expected_pairs[0])
    np.testing.assert_array_equal(tasks, expected_pairs[1])
    for i, j, lost in zip(workers, tasks, loss, strict=True):
        without = assignment.copy()
        without[i, j] = False
        rest = task_accuracy_multiclass(quality, without, prior=prior, n_labels=n_labels)[j]
        assert lost == pytest.approx(full[j] - rest, abs=1e-12)
    some = removal_losses_multiclass(
        quality, assignment, prior=prior, n_labels=n_labels, tasks=[5, 2, 5]
    )
    keep = np.isin(tasks, [2, 5])
    for got, expected in zip(some, (workers[keep], tasks[keep], loss[keep]), strict=True):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_quality_by_category_gives_the_same_as_its_dense_matrix():
    rng = np.random.default_rng(6)
    table = rng.choice([0.3, 0.6, 0.85, 0.95], (8, 3))
    by_category = QualityByCategory(table, rng.integers(0, 3, 25))
    dense = by_category.dense()
    assignment = rng.random((8, 25)) < 0.5
    prior = rng.dirichlet(np.ones(4), 25)
    args = {"prior": prior, "n_labels": 4}
    np.testing.assert_array_equal(
        task_accuracy_multiclass(by_category, assignment, **args),
        task_accuracy_multiclass(dense, assignment, **args),
    )
    for got, expected in zip(
        removal_losses_multiclass(by_category, assignment, **args),
        removal_losses_multiclass(dense, assignment, **args),
        strict=True,
    ):
        np.testing.assert_array_equal(got, expected)
    assert estimate_accuracy_multiclass(
        by_category, assignment, n_samples=50, seed=2, **args
    ) == estimate_accuracy_multiclass(dense, assignment, n_samples=50, seed=2, **args)
    np.testing.assert_array_equal(
        exact_state_counts(by_category, assignment, n_labels=4),
        exact_state_counts(dense, assignment, n_labels=4),
    )


def test_state_counts_are_k_to_the_k_for_distinct_workers_and_binomial_for_equal_ones():
    quality = np.column_stack(
        [np.linspace(0.3, 0.9, 10), np.full(10, 0.7), np.repeat([0.6, 0.8], 5), np.zeros(10)]
    )
    assignment = np.ones((10, 4), dtype=bool)
    assignment[:, 3] = False
    counts = exact_state_counts(quality, assignment, n_labels=4)
    np.testing.assert_array_equal(counts, [4**10, math.comb(13, 3), math.comb(8, 3) ** 2, 1])


def test_the_exact_bound_admits_exactly_max_exact_states():
    assert MAX_EXACT_STATES == 4**10
    quality = np.linspace(0.3, 0.9, 11)[:, None]
    prior = np.full(4, 0.25)
    ten = column_accuracy_multiclass(quality[:10, 0], prior, n_labels=4)
    assert 0.25 < ten < 1.0
    with pytest.raises(ValueError, match="q_col_assigned has 4,194,304 answer states"):
        column_accuracy_multiclass(quality[:, 0], prior, n_labels=4)
    # 200 equally good workers on four labels: binom(203, 3) = 1,373,701 states
    with pytest.raises(ValueError, match="task 0 has 1,373,701 answer states"):
        task_accuracy_multiclass(np.full((200, 1), 0.7), np.ones((200, 1)), prior=prior, n_labels=4)
    # ... and 100 of them: 176,851 states, exact
    many = task_accuracy_multiclass(
        np.full((100, 1), 0.7), np.ones((100, 1)), prior=prior, n_labels=4
    )
    assert many[0] == pytest.approx(1.0, abs=1e-9)


def test_inputs_are_not_mutated():
    rng = np.random.default_rng(1)
    quality, assignment = rng.uniform(0.2, 0.9, (4, 5)), rng.random((4, 5)) < 0.5
    prior = rng.dirichlet(np.ones(3), 5)
    copies = [a.copy() for a in (quality, assignment, prior)]
    task_accuracy_multiclass(quality, assignment, prior=prior, n_labels=3)
    removal_losses_multiclass(quality, assignment, prior=prior, n_labels=3)
    estimate_accuracy_multiclass(quality, assignment, prior=prior, n_labels=3, n_samples=10)
    for original, copy in zip((quality, assignment, prior), copies, strict=True):
        np.testing.assert_array_equal(original, copy)


# --------------------------------------------------------------------------- validation

GOOD_Q = np.full((2, 3), 0.7)
GOOD_X = np.ones((2, 3), dtype=bool)
GOOD_PRIOR = np.full((3, 3), 1 / 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_labels": 1}, "n_labels must be an integer >= 2, got 1"),
        ({"n_labels": 3.0}, "n_labels must be an integer >= 2, got 3.0"),
        ({"n_labels": True}, "n_labels must be an integer >= 2, got True"),
        ({"n_labels": 4}, r"prior must have shape \(3, 4\) .*or \(4,\).*got shape \(3, 3\)"),
        ({"prior": np.full((2, 3), 1 / 3)}, r"prior must have shape \(3, 3\).*got shape \(2, 3\)"),
        ({"prior": [[0.5, 0.5, 0.0]] * 3}, r"positive, got 0.0 at \(task 0, label 2\)"),
        ({"prior": [[0.5, 0.5, np.nan]] * 3}, r"positive, got nan at \(task 0, label 2\)"),
        ({"prior": [0.5, -0.5, 1.0]}, "positive, got -0.5 at label 1"),
        ({"prior": [[1 / 3] * 3, [1 / 3] * 3, [0.5, 0.3, 0.3]]}, "sum to 1.*got 1.1.* at task 2"),
        ({"prior": [0.4, 0.4, 0.4]}, "prior must sum to 1 over the labels, got 1.2"),
        ({"prior": "a"}, "prior must be an array of probabilities"),
        ({"quality": [[0.7, 1.5, 0.7]] * 2}, r"quality must be in \[0, 1\], got 1.5 at"),
        ({"quality": np.full((2, 0), 0.5), "assignment": np.ones((2, 0))}, "at least one task"),
        ({"assignment": np.ones((3, 2))}, "assignment must have the shape of quality"),
        ({"assignment": np.full((2, 3), 2)}, "assignment must hold only 0 and 1"),
    ],
)
def test_invalid_inputs_are_refused_naming_the_field_and_position(kwargs, message):
    args = {"quality": GOOD_Q, "assignment": GOOD_X, "prior": GOOD_PRIOR, "n_labels": 3}
    args.update(kwargs)
    quality, assignment = args.pop("quality"), args.pop("assignment")
    for function in (
        task_accuracy_multiclass,
        expected_accuracy_multiclass,
        removal_losses_multiclass,
        estimate_accuracy_multiclass,
    ):
        with pytest.raises(ValueError, match=message):
            function(quality, assignment, **args)


@pytest.mark.parametrize("n_samples", [1, 2.5, True, "10"])
def test_monte_carlo_refuses_a_bad_number_of_samples(n_samples):
    with pytest.raises(ValueError, match="n_samples must be an integer >= 2"):
        estimate_accuracy_multiclass(
            GOOD_Q, GOOD_X, prior=GOOD_PRIOR, n_labels=3, n_samples=n_samples
        )


def test_removal_losses_refuse_task_indices_out_of_range():
    with pytest.raises(ValueError, match=r"tasks must be indices in \[0, 3\)"):
        removal_losses_multiclass(GOOD_Q, GOOD_X, prior=GOOD_PRIOR, n_labels=3, tasks=[0, 3])


@pytest.mark.parametrize(
    ("q", "prior", "message"),
    [
        ([[0.7]], [0.5, 0.5], "q_col_assigned must be 1-D"),
        ([0.7, np.nan], [0.5, 0.5], r"q_col_assigned must be finite and in \[0, 1\], got nan at 1"),
        ([0.7], [0.5, 0.3, 0.2], r"prior must have shape \(1, 2\) or \(2,\)"),
    ],
)
def test_column_accuracy_refuses_invalid_inputs(q, prior, message):
    with pytest.raises(ValueError, match=message):
        column_accuracy_multiclass(q, prior, n_labels=2)


AGGREGATE_ARGS = {
    "task_index": [0, 1, 1],
    "quality": [0.7, 0.8, 0.9],
    "label": [0, 2, 1],
    "prior": np.full((2, 3), 1 / 3),
    "n_labels": 3,
}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"label": [0, 3, 1]}, r"label must be in \[0, 3\), got 3 at answer 1"),
        ({"label": [0, -1, 1]}, r"label must be in \[0, 3\), got -1 at answer 1"),
        ({"label": [0.0, 2.0, 1.0]}, "label must be a 1-D array of integers"),
        ({"task_index": [0, 2, 1]}, r"task_index must be in \[0, 2\), got 2 at answer 1"),
        ({"task_index": [0, 1]}, "one entry per answer, got shapes"),
        ({"label": [0, 1]}, r"label must have one entry per answer \(3\), got shape \(2,\)"),
        (
            {"quality": [0.7, 1.2, 0.9]},
            r"quality must be finite and in \[0, 1\], got 1.2 at answer 1",
        ),
        ({"prior": np.full(3, 1 / 3)}, r"prior must have shape \(n_tasks, 3\)"),
        ({"prior": np.full((2, 2), 0.5)}, r"prior must have shape \(2, 3\)"),
        ({"prior": [[0.2, 0.2, 0.6], [0.2, 0.8, 0.0]]}, r"got 0.0 at \(task 1, label 2\)"),
        ({"n_labels": 0}, "n_labels must be an integer >= 2"),
    ],
)
def test_aggregate_refuses_invalid_answers_naming_the_field_and_position(kwargs, message):
    with pytest.raises(ValueError, match=message):
        aggregate_multiclass(**{**AGGREGATE_ARGS, **kwargs})


def test_a_prior_a_little_off_one_is_normalised():
    prior = np.array([0.2, 0.3, 0.5]) * (1 + 5e-7)
    got = aggregate_multiclass(task_index=[], quality=[], label=[], prior=[prior], n_labels=3)
    np.testing.assert_allclose(got.posterior[0], [0.2, 0.3, 0.5], rtol=1e-15)


def test_the_engine_exports_the_k_class_functions_without_importing_numba():
    code = (
        "import sys, assignment.engine as e; "
        "print(all(hasattr(e, n) for n in ('aggregate_multiclass', 'task_accuracy_multiclass',"
        " 'expected_accuracy_multiclass', 'estimate_accuracy_multiclass')), 'numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]
