"""Aggregation by the Bayes vote: hand-computed cases, ties, and the accuracy it achieves."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from assignment.engine.accuracy import expected_accuracy, task_accuracy
from assignment.engine.aggregate import AggregateResult, aggregate, aggregate_pairs

#   worker 0: q = (0.9, 0.6)    says (1, 0)
#   worker 1: q = (0.6, 0.8)    says (0, -)
#   worker 2: q = (0.7, 0.3)    says (0, 1)
QUALITY = np.array([[0.9, 0.6], [0.6, 0.8], [0.7, 0.3]])
ANSWERS = np.array([[1, 0], [0, -1], [0, 1]])


def test_aggregate_matches_a_hand_computed_bayes_vote():
    # Task 0, prior 1/2: posterior odds = 9 * (0.4 / 0.6) * (0.3 / 0.7) = 18/7 -> 18/25.
    # Task 1, prior 1/2: odds = (0.4 / 0.6) * (0.3 / 0.7) = 2/7 -> 2/9 (worker 1 is silent).
    result = aggregate(ANSWERS, QUALITY)
    assert isinstance(result, AggregateResult)
    np.testing.assert_array_equal(result.labels, [1, 0])
    assert result.labels.dtype.kind == "i"
    np.testing.assert_allclose(result.posterior, [18 / 25, 2 / 9], rtol=1e-12)


def test_a_skewed_prior_multiplies_the_posterior_odds():
    # Task 1 with prior 0.9: odds = 9 * 2/7 = 18/7 -> 18/25, so the label flips to 1.
    # Task 0 with prior 0.1: odds = (1/9) * 18/7 = 2/7 -> 2/9.
    result = aggregate(ANSWERS, QUALITY, prior=[0.1, 0.9])
    np.testing.assert_array_equal(result.labels, [0, 1])
    np.testing.assert_allclose(result.posterior, [2 / 9, 18 / 25], rtol=1e-12)


def test_nan_for_missing_in_a_float_array_means_the_same_as_minus_one():
    as_float = ANSWERS.astype(float)
    as_float[1, 1] = np.nan
    a, b = aggregate(ANSWERS, QUALITY, prior=0.3), aggregate(as_float, QUALITY, prior=0.3)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.posterior, b.posterior)


def test_a_bool_answer_array_means_every_worker_answered():
    answers = np.array([[True, False], [False, True]])
    quality = np.array([[0.8, 0.8], [0.7, 0.7]])
    expected = aggregate(answers.astype(int), quality)
    got = aggregate(answers, quality)
    np.testing.assert_array_equal(got.labels, expected.labels)
    np.testing.assert_array_equal(got.posterior, expected.posterior)


@pytest.mark.parametrize("prior", [0.2, 0.5, 0.7])
def test_a_task_without_answers_gets_its_prior(prior):
    result = aggregate(np.full((3, 1), -1), np.full((3, 1), 0.9), prior=prior)
    assert result.posterior[0] == pytest.approx(prior, rel=1e-12)
    assert result.labels[0] == (1 if prior >= 0.5 else 0)


@pytest.mark.parametrize(
    ("answers", "quality", "prior"),
    [
        ([1, 0], [0.7, 0.7], 0.5),  # two equal workers who disagree
        ([1, 1, 0], [0.6, 0.7, 7 / 9], 0.5),  # odds 3/2 * 7/3 = 7/2; float sum is -4e-16
        ([0, 0, 1], [0.6, 0.7, 7 / 9], 0.5),
        ([1], [0.7], 0.3),  # the answer's odds 7/3 equal the prior's 7/3
        ([0], [0.3], 0.3),  # the same with a worker below 1/2
    ],
)
def test_exact_ties_are_labelled_one_despite_rounding(answers, quality, prior):
    result = aggregate(np.array(answers)[:, None], np.array(quality)[:, None], prior=prior)
    assert result.labels[0] == 1
    assert result.posterior[0] == pytest.approx(0.5, abs=1e-12)


def test_a_worker_below_one_half_is_believed_in_reverse():
    result = aggregate([[1]], [[0.2]])
    assert result.labels[0] == 0
    assert result.posterior[0] == pytest.approx(0.2)


def test_confident_workers_give_finite_posteriors_without_warnings():
    answers = np.zeros((200, 2), dtype=int)
    answers[:, 1] = 1
    quality = np.ones((200, 2))  # clipped to 1 - 1e-6: log-odds ~13.8 each, sum ~2760
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = aggregate(answers, quality)
    np.testing.assert_array_equal(result.labels, [0, 1])
    assert result.posterior[0] == 0.0
    assert result.posterior[1] == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_labels_over_every_answer_pattern_achieve_exactly_the_expected_accuracy(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    quality = rng.choice([0.2, 0.6, 0.7, 0.9, rng.random()], (k, 1))
    prior = float(rng.choice([0.5, 0.3, rng.random()]))
    patterns = np.array(list(itertools.product((0, 1), repeat=k))).T  # (k, 2^k)
    labels = aggregate(patterns, np.repeat(quality, patterns.shape[1], axis=1), prior=prior).labels
    q = np.clip(quality[:, 0], 1e-6, 1 - 1e-6)
    accuracy = 0.0
    for y, p_y in ((1, prior), (0, 1 - prior)):
        p_patterns = np.prod(np.where(patterns == y, q[:, None], 1 - q[:, None]), axis=0)
        accuracy += p_y * p_patterns[labels == y].sum()
    assert accuracy == pytest.approx(
        task_accuracy(quality, np.ones((k, 1)), prior=prior)[0], abs=1e-12
    )


def test_empirical_accuracy_of_aggregated_simulated_answers_matches_expected_accuracy():
    rng = np.random.default_rng(11)
    n, m, n_rounds = 12, 400, 50
    quality = rng.uniform(0.25, 0.95, (n, m))
    assignment = rng.random((n, m)) < 0.4
    prior = rng.uniform(0.2, 0.8, m)
    per_round = np.empty(n_rounds)
    for t in range(n_rounds):
        truth = (rng.random(m) < prior).astype(int)
        correct = rng.random((n, m)) < quality
        answers = np.where(correct, truth, 1 - truth)
        answers[~assignment] = -1
        per_round[t] = np.mean(aggregate(answers, quality, prior=prior).labels == truth)
    standard_error = per_round.std(ddof=1) / np.sqrt(n_rounds)
    exact = expected_accuracy(quality, assignment, prior=prior)
    assert abs(per_round.mean() - exact) <= 4 * standard_error


def test_inputs_are_not_mutated():
    answers, quality = ANSWERS.copy(), QUALITY.copy()
    prior = np.array([0.3, 0.6])
    aggregate(answers, quality, prior=prior)
    np.testing.assert_array_equal(answers, ANSWERS)
    np.testing.assert_array_equal(quality, QUALITY)
    np.testing.assert_array_equal(prior, [0.3, 0.6])


@pytest.mark.parametrize(
    ("answers", "quality", "prior", "message"),
    [
        ([[1, 2], [0, 0], [1, 1]], QUALITY, 0.5, r"answers must hold only 1, 0 and -1.*got 2"),
        ([[1, 0.5], [0, 0], [1, 1]], QUALITY, 0.5, r"answers must hold only.*worker 0, task 1"),
        ([[1, np.inf], [0, 0], [1, 1]], QUALITY, 0.5, r"answers must hold only"),
        ([[1, -2], [0, 0], [1, 1]], QUALITY, 0.5, r"answers must hold only"),
        (ANSWERS[:2], QUALITY, 0.5, r"answers must have the shape of quality \(3, 2\)"),
        (np.full((3, 2), "1"), QUALITY, 0.5, r"answers must be integers"),
        (ANSWERS, QUALITY[0], 0.5, r"quality must be 2-D"),
        (ANSWERS, QUALITY + 0.5, 0.5, r"quality must be in \[0, 1\]"),
        (ANSWERS, QUALITY * np.nan, 0.5, r"quality must be finite"),
        (ANSWERS, QUALITY, 1.0, r"prior must be finite and in \(0, 1\), got 1.0"),
        (ANSWERS, QUALITY, [0.5, -0.1], r"prior .*got -0.1 at task 1"),
        (ANSWERS, QUALITY, [0.5, 0.5, 0.5], r"prior must be a scalar or have length 2"),
    ],
)
def test_invalid_inputs_raise_a_value_error_naming_the_argument(answers, quality, prior, message):
    with pytest.raises(ValueError, match=message):
        aggregate(answers, quality, prior=prior)


@pytest.mark.parametrize("seed", range(5))
def test_aggregating_the_answers_alone_gives_the_dense_grids_labels_and_posteriors(seed):
    rng = np.random.default_rng(seed)
    n, m = 9, 40
    quality = rng.uniform(0.3, 0.99, (n, m))
    answers = np.where(rng.random((n, m)) < 0.3, rng.integers(0, 2, (n, m)), -1)
    prior = rng.uniform(0.1, 0.9, m)
    dense = aggregate(answers, quality, prior=prior)
    workers, tasks = np.nonzero(answers >= 0)
    order = rng.permutation(len(tasks))  # the answers may come in any order
    pairs = aggregate_pairs(
        task_index=tasks[order],
        quality=quality[workers, tasks][order],
        said_one=answers[workers, tasks][order] == 1,
        prior=prior,
    )
    np.testing.assert_array_equal(pairs.labels, dense.labels)
    np.testing.assert_allclose(pairs.posterior, dense.posterior, rtol=0, atol=1e-12)
    unanswered = (answers < 0).all(axis=0)
    np.testing.assert_allclose(pairs.posterior[unanswered], prior[unanswered])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task_index": [0, 3]}, r"in \[0, 3\)"),
        ({"task_index": [0]}, "one entry per answer"),
        ({"quality": [0.5, 1.5]}, "quality"),
        ({"prior": [0.5, 1.0, 0.5]}, "prior"),
    ],
)
def test_aggregating_answers_refuses_inconsistent_inputs(kwargs, message):
    arguments = {
        "task_index": [0, 2],
        "quality": [0.8, 0.7],
        "said_one": [True, False],
        "prior": [0.5, 0.5, 0.5],
        **kwargs,
    }
    with pytest.raises(ValueError, match=message):
        aggregate_pairs(**arguments)
