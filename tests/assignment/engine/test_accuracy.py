"""Expected accuracy of the Bayes vote: exact paths against brute force, Monte Carlo, edges."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from assignment.engine import accuracy as accuracy_module
from assignment.engine.accuracy import (
    EPS,
    MAX_EXACT_WORKERS,
    AccuracyEstimate,
    column_accuracy,
    estimate_accuracy,
    expected_accuracy,
    removal_losses,
    task_accuracy,
)


def brute_force_task_accuracies(quality, assignment, prior):
    """Plain enumeration over the true label and every answer pattern, one task at a time."""
    n, m = quality.shape
    priors = np.broadcast_to(np.asarray(prior, dtype=float), (m,))
    out = []
    for j in range(m):
        workers = [i for i in range(n) if assignment[i, j]]
        q = [min(max(float(quality[i, j]), EPS), 1.0 - EPS) for i in workers]
        w = [math.log(qi / (1.0 - qi)) for qi in q]
        pi = float(priors[j])
        threshold = math.log((1.0 - pi) / pi)
        tolerance = 1e-9 * (1.0 + abs(threshold) + sum(abs(wi) for wi in w))
        accuracy = 0.0
        for y in (0, 1):
            p_y = pi if y == 1 else 1.0 - pi
            for answers in itertools.product((0, 1), repeat=len(workers)):
                p_answers = 1.0
                vote = 0.0
                for qi, wi, a in zip(q, w, answers, strict=True):
                    p_answers *= qi if a == y else 1.0 - qi
                    vote += (2 * a - 1) * wi
                predicted = 1 if vote >= threshold - tolerance else 0
                if predicted == y:
                    accuracy += p_y * p_answers
        out.append(accuracy)
    return np.array(out)


def enumerate_one_task(q, prior):
    """Vectorised plain enumeration of one task's 2^k correctness patterns (for k up to 16)."""
    q = np.clip(np.asarray(q, dtype=float), EPS, 1.0 - EPS)
    correct = np.array(list(itertools.product((0, 1), repeat=q.size)), dtype=float)
    probs = np.prod(np.where(correct == 1, q, 1.0 - q), axis=1)
    w = np.log(q / (1.0 - q))
    vote_if_y1 = (2.0 * correct - 1.0) @ w  # correct answers say 1 when y = 1 ...
    vote_if_y0 = -vote_if_y1  # ... and say 0 when y = 0
    threshold = math.log((1.0 - prior) / prior)
    tolerance = 1e-9 * (1.0 + abs(threshold) + np.abs(w).sum())
    predict1_if_y1 = vote_if_y1 >= threshold - tolerance
    predict1_if_y0 = vote_if_y0 >= threshold - tolerance
    return prior * probs[predict1_if_y1].sum() + (1.0 - prior) * probs[~predict1_if_y0].sum()


def random_case(rng, *, n_max=6, m_max=6):
    n = int(rng.integers(1, n_max + 1))
    m = int(rng.integers(1, m_max + 1))
    kind = rng.integers(4)
    if kind == 0:
        quality = rng.random((n, m))
    elif kind == 1:  # near and at 0 and 1
        quality = rng.choice([0.0, 1e-9, 1e-7, 0.3, 0.5, 0.7, 1.0 - 1e-7, 1.0 - 1e-9, 1.0], (n, m))
    elif kind == 2:  # mostly below 0.5
        quality = rng.uniform(0.0, 0.6, (n, m))
    else:  # few distinct values, so that ties are frequent
        quality = rng.choice([0.2, 0.6, 0.8], (n, m))
    assignment = rng.random((n, m)) < rng.uniform(0.2, 0.9)
    assignment[:, 0] = False  # always at least one task without workers
    prior_kind = rng.integers(3)
    if prior_kind == 0:
        prior = 0.5
    elif prior_kind == 1:
        prior = float(rng.choice([0.01, 0.2, 0.8, 0.97]))
    else:
        prior = rng.uniform(0.02, 0.98, m)
    return quality, assignment, prior


@pytest.mark.parametrize("seed", range(40))
def test_exact_accuracy_equals_brute_force_enumeration_on_small_random_cases(seed):
    quality, assignment, prior = random_case(np.random.default_rng(seed))
    expected = brute_force_task_accuracies(quality, assignment, prior)
    np.testing.assert_allclose(
        task_accuracy(quality, assignment, prior=prior), expected, rtol=0, atol=1e-12
    )
    assert expected_accuracy(quality, assignment, prior=prior) == pytest.approx(
        expected.mean(), abs=1e-12
    )


@pytest.mark.parametrize("k", [13, 14, 15, 16])
def test_meet_in_the_middle_equals_plain_enumeration(k):
    rng = np.random.default_rng(k)
    quality = rng.random((k, 6))
    quality[:, 1] = rng.choice([0.3, 0.7], k)  # many exact ties
    quality[:, 2] = 0.7
    quality[:3, 3] = [1.0, 0.0, 1e-9]
    prior = np.array([0.5, 0.5, 0.5, 0.3, 0.9, 0.04])
    assignment = np.ones((k, 6), dtype=bool)
    expected = [enumerate_one_task(quality[:, j], prior[j]) for j in range(6)]
    np.testing.assert_allclose(
        task_accuracy(quality, assignment, prior=prior), expected, rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("k", range(2, 13))
def test_meet_in_the_middle_agrees_with_the_enumeration_path_below_its_threshold(k, monkeypatch):
    rng = np.random.default_rng(100 + k)
    quality = np.concatenate([rng.random((k, 20)), rng.choice([0.2, 0.65, 0.8], (k, 20))], 1)
    prior = np.concatenate([rng.uniform(0.05, 0.95, 20), np.full(20, 0.5)])
    assignment = np.ones_like(quality, dtype=bool)
    enumerated = task_accuracy(quality, assignment, prior=prior)
    monkeypatch.setattr(accuracy_module, "_ENUMERATE_MAX", 0)
    met_in_the_middle = task_accuracy(quality, assignment, prior=prior)
    np.testing.assert_allclose(met_in_the_middle, enumerated, rtol=0, atol=1e-12)


def test_chunked_groups_give_the_same_answer_as_one_chunk(monkeypatch):
    rng = np.random.default_rng(3)
    quality = rng.random((16, 300))
    assignment = rng.random((16, 300)) < 0.7
    whole = task_accuracy(quality, assignment, prior=0.3)
    monkeypatch.setattr(accuracy_module, "_CHUNK_ELEMENTS", 7)
    np.testing.assert_allclose(task_accuracy(quality, assignment, prior=0.3), whole, atol=1e-13)


def test_column_accuracy_equals_the_task_accuracy_of_that_column():
    rng = np.random.default_rng(4)
    quality = rng.random((20, 21))
    assignment = np.zeros((20, 21), dtype=bool)  # column j has j workers
    for j in range(21):
        assignment[:j, j] = True
    prior = rng.uniform(0.05, 0.95, 21)
    per_task = task_accuracy(quality, assignment, prior=prior)
    for j in range(21):
        assert column_accuracy(quality[:j, j], prior[j]) == pytest.approx(per_task[j], abs=1e-12)


def rational_task_accuracy(q, prior):
    """Exact rational arithmetic: predict 1 iff prod_i odds_i^(2 a_i - 1) >= (1 - pi) / pi."""
    odds = [qi / (1 - qi) for qi in q]
    accuracy = Fraction(0)
    for y in (0, 1):
        p_y = prior if y == 1 else 1 - prior
        for answers in itertools.product((0, 1), repeat=len(q)):
            p_answers = Fraction(1)
            ratio = Fraction(1)
            for qi, oi, a in zip(q, odds, answers, strict=True):
                p_answers *= qi if a == y else 1 - qi
                ratio *= oi if a == 1 else 1 / oi
            if (1 if ratio >= (1 - prior) / prior else 0) == y:
                accuracy += p_y * p_answers
    return accuracy


TIES = [  # exact ties whose floating-point log-odds do not cancel (the float sum is < 0)
    ([Fraction(3, 5), Fraction(7, 10), Fraction(7, 9)], Fraction(1, 2)),
    ([Fraction(3, 5), Fraction(3, 5), Fraction(9, 13)], Fraction(1, 2)),
    ([Fraction(7, 10)], Fraction(3, 10)),
    ([Fraction(3, 5), Fraction(7, 10)], Fraction(2, 9)),
    ([Fraction(3, 5), Fraction(7, 10), Fraction(7, 9)] * 2, Fraction(1, 2)),
]


@pytest.mark.parametrize("path", ["enumeration", "meet in the middle", "column"])
@pytest.mark.parametrize(("q", "prior"), TIES)
def test_exact_ties_give_the_rational_answer_on_every_path(q, prior, path, monkeypatch):
    expected = float(rational_task_accuracy(q, prior))
    q_float = np.array([float(qi) for qi in q])
    if path == "column":
        got = column_accuracy(q_float, float(prior))
    else:
        if path == "meet in the middle":
            monkeypatch.setattr(accuracy_module, "_ENUMERATE_MAX", 0)
        got = expected_accuracy(q_float[:, None], np.ones((len(q), 1)), prior=float(prior))
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("q_better", "q_other"),
    [(0.9, 0.6), (0.7, 0.7), (0.8, 0.3), (0.1, 0.75), (0.35, 0.35), (1.0, 1.0), (0.6, 0.5)],
)
def test_two_workers_with_prior_one_half_are_exactly_as_accurate_as_the_better_one_alone(
    q_better, q_other
):
    both = expected_accuracy([[q_better], [q_other]], [[True], [True]], prior=0.5)
    alone = expected_accuracy([[q_better]], [[True]], prior=0.5)
    assert both == pytest.approx(alone, abs=1e-12)
    assert column_accuracy([q_other, q_better], 0.5) == pytest.approx(alone, abs=1e-12)


@pytest.mark.parametrize("q", [0.0, 0.05, 0.3, 0.5, 0.72, 0.99, 1.0])
def test_a_single_worker_under_prior_one_half_gives_max_of_q_and_one_minus_q(q):
    clipped = min(max(q, EPS), 1 - EPS)
    expected = max(clipped, 1 - clipped)
    assert expected_accuracy([[q]], [[1]], prior=0.5) == pytest.approx(expected, abs=1e-12)
    assert column_accuracy([q], 0.5) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("prior", [0.01, 0.3, 0.5, 0.8])
def test_a_task_without_workers_predicts_by_its_prior(prior):
    quality = np.full((3, 1), 0.9)
    assignment = np.zeros((3, 1), dtype=bool)
    assert expected_accuracy(quality, assignment, prior=prior) == pytest.approx(
        max(prior, 1 - prior), abs=1e-15
    )
    assert column_accuracy([], prior) == pytest.approx(max(prior, 1 - prior), abs=1e-15)


def test_an_odd_majority_of_equal_workers_matches_the_binomial_tail():
    k, q = 15, 0.65
    tail = sum(math.comb(k, c) * q**c * (1 - q) ** (k - c) for c in range(k // 2 + 1, k + 1))
    assert expected_accuracy(np.full((k, 1), q), np.ones((k, 1)), prior=0.5) == pytest.approx(
        tail, abs=1e-12
    )


def test_monte_carlo_agrees_with_the_exact_accuracy_within_four_standard_errors():
    rng = np.random.default_rng(5)
    quality = rng.uniform(0.3, 0.95, (40, 300))
    assignment = rng.random((40, 300)) < rng.uniform(0.0, 0.5, 300)
    assignment &= np.cumsum(assignment, axis=0) <= MAX_EXACT_WORKERS
    prior = rng.uniform(0.1, 0.9, 300)
    exact = expected_accuracy(quality, assignment, prior=prior)
    estimate = estimate_accuracy(quality, assignment, prior=prior, n_samples=3000, seed=1)
    assert isinstance(estimate, AccuracyEstimate)
    assert estimate.n_samples == 3000
    assert 0 < estimate.standard_error < 0.01
    assert abs(estimate.mean - exact) <= 4 * estimate.standard_error


def test_monte_carlo_agrees_with_a_closed_form_beyond_the_exact_limit():
    k, q = 25, 0.6
    tail = sum(math.comb(k, c) * q**c * (1 - q) ** (k - c) for c in range(k // 2 + 1, k + 1))
    quality = np.full((k, 50), q)
    estimate = estimate_accuracy(quality, np.ones((k, 50), dtype=bool), n_samples=2000, seed=2)
    assert abs(estimate.mean - tail) <= 4 * estimate.standard_error


def test_monte_carlo_standard_error_matches_the_spread_of_repeated_estimates():
    rng = np.random.default_rng(6)
    quality = rng.uniform(0.4, 0.9, (6, 20))
    assignment = rng.random((6, 20)) < 0.5
    estimates = [
        estimate_accuracy(quality, assignment, prior=0.4, n_samples=200, seed=s) for s in range(60)
    ]
    spread = np.std([e.mean for e in estimates], ddof=1)
    reported = np.mean([e.standard_error for e in estimates])
    assert 0.7 < spread / reported < 1.4


def test_monte_carlo_is_reproducible_with_a_seed_and_exact_without_workers():
    rng = np.random.default_rng(7)
    quality = rng.random((5, 8))
    assignment = rng.random((5, 8)) < 0.5
    a = estimate_accuracy(quality, assignment, n_samples=50, seed=3)
    b = estimate_accuracy(quality, assignment, n_samples=50, seed=3)
    assert a == b
    none = estimate_accuracy(quality, np.zeros((5, 8), dtype=bool), prior=0.2, n_samples=10)
    assert none.mean == pytest.approx(0.8)
    assert none.standard_error == 0.0


def test_more_than_twenty_workers_on_a_task_raises_and_points_to_monte_carlo():
    assignment = np.zeros((MAX_EXACT_WORKERS + 3, 4), dtype=bool)
    assignment[:, 2] = True
    quality = np.full(assignment.shape, 0.7)
    with pytest.raises(ValueError, match=r"task 2 has 23 assigned workers.*estimate_accuracy"):
        expected_accuracy(quality, assignment)
    with pytest.raises(ValueError, match="estimate_accuracy"):
        column_accuracy(np.full(21, 0.7), 0.5)
    assignment[3:, 2] = False  # exactly 20 is fine
    assert 0.5 < expected_accuracy(quality, assignment) <= 1.0


def test_inputs_are_not_mutated_and_zero_one_integers_are_accepted():
    rng = np.random.default_rng(8)
    quality = rng.random((4, 5))
    quality[0, 0] = 1.0
    assignment = (rng.random((4, 5)) < 0.5).astype(np.int64)
    prior = rng.uniform(0.1, 0.9, 5)
    copies = quality.copy(), assignment.copy(), prior.copy()
    from_ints = task_accuracy(quality, assignment, prior=prior)
    estimate_accuracy(quality, assignment, prior=prior, n_samples=10, seed=0)
    column_accuracy(quality[:, 0], prior[0])
    for original, copy in zip((quality, assignment, prior), copies, strict=True):
        np.testing.assert_array_equal(original, copy)
    np.testing.assert_array_equal(
        from_ints, task_accuracy(quality, assignment.astype(bool), prior=prior)
    )


GOOD_Q = np.full((2, 3), 0.7)
GOOD_X = np.ones((2, 3), dtype=bool)


@pytest.mark.parametrize(
    ("quality", "assignment", "prior", "message"),
    [
        (np.full(3, 0.7), GOOD_X, 0.5, "quality must be 2-D"),
        ([[0.7, np.nan, 0.7], [0.7] * 3], GOOD_X, 0.5, r"quality must be finite.*task 1"),
        ([[0.7] * 3, [0.7, 0.7, 1.5]], GOOD_X, 0.5, r"quality must be in \[0, 1\].*worker 1"),
        ([[0.7] * 3, [-0.1, 0.7, 0.7]], GOOD_X, 0.5, r"quality must be in \[0, 1\]"),
        ([["a"] * 3] * 2, GOOD_X, 0.5, "quality must be"),
        (np.zeros((2, 0)), np.zeros((2, 0)), 0.5, "at least one task"),
        (GOOD_Q, np.ones((3, 2), dtype=bool), 0.5, r"assignment must have the shape"),
        (GOOD_Q, [[1, 0, 2], [1, 1, 1]], 0.5, r"assignment must hold only 0 and 1"),
        (GOOD_Q, [[1, 0, 0.5], [1, 1, 1]], 0.5, r"assignment must hold only 0 and 1"),
        (GOOD_Q, np.full((2, 3), "x"), 0.5, "assignment must be bool"),
        (GOOD_Q, GOOD_X, 1.0, r"prior must be finite and in \(0, 1\), got 1.0"),
        (GOOD_Q, GOOD_X, 0.0, r"prior must be finite and in \(0, 1\)"),
        (GOOD_Q, GOOD_X, np.nan, r"prior must be finite"),
        (GOOD_Q, GOOD_X, [0.5, 0.5, 1.0], r"prior .*got 1.0 at task 2"),
        (GOOD_Q, GOOD_X, [0.5, 0.5], r"prior must be a scalar or have length 3"),
        (GOOD_Q, GOOD_X, "high", r"prior must be a number"),
    ],
)
def test_invalid_inputs_raise_a_value_error_naming_the_argument(
    quality, assignment, prior, message
):
    for function in (expected_accuracy, task_accuracy, estimate_accuracy):
        with pytest.raises(ValueError, match=message):
            function(quality, assignment, prior=prior)


@pytest.mark.parametrize("n_samples", [1, 0, 2.5, True, "10"])
def test_estimate_accuracy_needs_at_least_two_integer_samples(n_samples):
    with pytest.raises(ValueError, match="n_samples must be an integer >= 2"):
        estimate_accuracy(GOOD_Q, GOOD_X, n_samples=n_samples)


@pytest.mark.parametrize(
    ("q", "prior", "message"),
    [
        ([[0.7]], 0.5, "q_col_assigned must be 1-D"),
        ([0.7, np.nan], 0.5, r"q_col_assigned must be finite and in \[0, 1\], got nan at 1"),
        ([1.2], 0.5, r"q_col_assigned must be finite and in \[0, 1\]"),
        ([0.7], 1.0, r"prior_j must be finite and in \(0, 1\)"),
        ([0.7], np.nan, r"prior_j must be finite"),
        ([0.7], [0.5], "prior_j must be a scalar"),
    ],
)
def test_column_accuracy_validates_its_arguments(q, prior, message):
    with pytest.raises(ValueError, match=message):
        column_accuracy(q, prior)


# --------------------------------------------------------------------------- removal losses


@pytest.mark.parametrize("seed", range(4))
def test_removal_losses_are_the_accuracy_drop_of_removing_each_assigned_worker(seed):
    rng = np.random.default_rng(seed)
    q = rng.choice([0.0, 0.3, 0.5, 0.6, 0.75, 0.9, 1.0], size=(9, 14))
    q = np.where(rng.random(q.shape) < 0.5, rng.uniform(0, 1, q.shape), q)
    x = rng.random(q.shape) < 0.5
    prior = rng.uniform(0.1, 0.9, 14)
    workers, tasks, loss = removal_losses(q, x, prior=prior)
    assert sorted(zip(tasks, workers, strict=True)) == list(zip(tasks, workers, strict=True))
    assert set(zip(workers, tasks, strict=True)) == set(zip(*np.nonzero(x), strict=True))
    full = brute_force_task_accuracies(q, x, prior)
    for i, j, got in zip(workers, tasks, loss, strict=True):
        without = x.copy()
        without[i, j] = False
        expected = full[j] - brute_force_task_accuracies(q, without, prior)[j]
        assert got == pytest.approx(expected, abs=1e-12)


def test_removal_losses_can_be_restricted_to_some_tasks():
    rng = np.random.default_rng(7)
    q = rng.uniform(0.5, 0.9, (6, 10))
    x = rng.random(q.shape) < 0.6
    everything = removal_losses(q, x)
    some = removal_losses(q, x, tasks=[7, 2, 2])
    keep = np.isin(everything[1], [2, 7])
    for full, part in zip(everything, some, strict=True):
        np.testing.assert_array_equal(full[keep], part)
    with pytest.raises(ValueError, match="tasks must be indices"):
        removal_losses(q, x, tasks=[10])


def test_under_prior_one_half_the_weaker_of_two_workers_costs_nothing_to_remove():
    q = np.array([[0.9], [0.7]])
    workers, _, loss = removal_losses(q, np.ones((2, 1), dtype=bool))
    assert loss[workers == 1][0] == pytest.approx(0.0, abs=1e-15)
    assert loss[workers == 0][0] == pytest.approx(0.2)
