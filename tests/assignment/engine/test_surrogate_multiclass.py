"""The K-class surrogate: the binary one at K = 2 (same seeds, same values and steps), its
gradient is the derivative of its value (central finite differences on common answers), a step
is that formula on its own sampled answers, the answers follow the one-coin model, and at a low
temperature its value is the exact K-class expected accuracy."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine.multiclass import expected_accuracy_multiclass
from assignment.engine.problem import AssignmentProblem
from assignment.engine.search_pairs import SearchPairs
from assignment.engine.surrogate import Surrogate
from assignment.engine.surrogate_multiclass import (
    MulticlassSurrogate,
    multiclass_surrogate_value_and_gradient,
)


def _problem(rng, shape, n_labels, *, eligible=None, low=0.2):
    m = shape[1]
    q = rng.uniform(low, 0.97, shape)
    if n_labels == 2:
        prior = rng.uniform(0.1, 0.9, m)
    else:
        prior = rng.dirichlet(np.full(n_labels, 3.0), m)
    return AssignmentProblem(
        q,
        max_workers_per_task=3,
        max_tasks_per_worker=4,
        budget=2 * m,
        prior=prior,
        n_labels=n_labels,
        eligible=eligible,
    )


def _reference(oracle, problem, x, seed):
    answers = oracle.sample(seed).reshape(-1, *problem.shape)
    return multiclass_surrogate_value_and_gradient(
        x,
        answers,
        oracle.weight.reshape(problem.shape),
        log_prior=oracle.log_prior,
        temperature=oracle.temperature,
    )


@pytest.mark.parametrize("eligible", [None, "half"])
@pytest.mark.parametrize("batch_size", [1, 3, 4])
def test_two_labels_give_the_binary_surrogate_on_the_same_seeds(eligible, batch_size):
    rng = np.random.default_rng(2)
    mask = None if eligible is None else rng.random((6, 9)) < 0.5
    problem = _problem(rng, (6, 9), 2, eligible=mask)
    binary = Surrogate(problem, temperature=0.7, batch_size=batch_size)
    multi = MulticlassSurrogate(problem, temperature=0.7, batch_size=batch_size)
    # the same answers: label 1's draws first, then label 0's
    z1, z0 = binary.sample(123)
    answers = multi.sample(123).reshape(2, batch_size, -1)
    np.testing.assert_array_equal(answers[0] == 1, z1 / binary.log_odds > 0)
    np.testing.assert_array_equal(answers[1] == 0, -z0 / binary.log_odds > 0)
    for t in range(3):
        x = np.where(rng.random(problem.shape) < 0.4, rng.uniform(0, 1, problem.shape), 0.0)
        x[0, 0] = 1.0
        value_b, y_b, v_b = binary.step(x.ravel(), np.random.default_rng(t), 2.5)
        value_m, y_m, v_m = multi.step(x.ravel(), np.random.default_rng(t), 2.5)
        np.testing.assert_allclose(value_m, value_b, rtol=1e-12)
        np.testing.assert_allclose(y_m, y_b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(v_m, v_b, rtol=1e-12, atol=1e-12)


def test_two_labels_give_the_binary_surrogate_over_a_candidate_set():
    rng = np.random.default_rng(3)
    problem = _problem(rng, (7, 11), 2)
    entries = np.flatnonzero(rng.random(77) < 0.5).astype(np.int64)
    pairs = SearchPairs(problem, entries)
    binary = Surrogate(problem, pairs=pairs, temperature=0.4, batch_size=3)
    multi = MulticlassSurrogate(problem, pairs=pairs, temperature=0.4, batch_size=3)
    x = rng.uniform(0, 1, entries.size) * (rng.random(entries.size) < 0.5)
    for t in range(3):
        out_b = binary.step(x, np.random.default_rng(t), 1.5)
        out_m = multi.step(x, np.random.default_rng(t), 1.5)
        for a, b in zip(out_m, out_b, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_labels", [3, 4])
@pytest.mark.parametrize("temperature", [1.0, 0.3])
def test_gradient_matches_central_finite_differences(n_labels, temperature):
    rng = np.random.default_rng(n_labels)
    problem = _problem(rng, (5, 4), n_labels)
    oracle = MulticlassSurrogate(problem, temperature=temperature, batch_size=3)
    answers = oracle.sample(7).reshape(-1, *problem.shape)  # common answers for every x
    w = oracle.weight.reshape(problem.shape)
    kwargs = {"log_prior": oracle.log_prior, "temperature": temperature}
    x = rng.random(problem.shape)
    _, grad = multiclass_surrogate_value_and_gradient(x, answers, w, **kwargs)
    h = 1e-6
    numeric = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        f_up, _ = multiclass_surrogate_value_and_gradient(up, answers, w, **kwargs)
        f_down, _ = multiclass_surrogate_value_and_gradient(down, answers, w, **kwargs)
        numeric[idx] = (f_up - f_down) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)
    assert np.abs(grad).max() > 1e-3  # the check is not vacuous


@pytest.mark.parametrize("n_labels", [3, 4])
@pytest.mark.parametrize("eligible", [None, "half"])
@pytest.mark.parametrize("batch_size", [1, 3])
def test_a_step_is_the_formula_applied_to_its_own_sampled_answers(n_labels, eligible, batch_size):
    rng = np.random.default_rng(5)
    mask = None if eligible is None else rng.random((6, 9)) < 0.5
    problem = _problem(rng, (6, 9), n_labels, eligible=mask)
    oracle = MulticlassSurrogate(problem, temperature=0.7, batch_size=batch_size)
    x = np.where(rng.random(problem.shape) < 0.4, rng.uniform(0.0, 1.0, problem.shape), 0.0)
    value, y, projection_input = oracle.step(x.ravel(), np.random.default_rng(11), 2.5)
    seed = int(np.random.default_rng(11).integers(0, 2**63))
    ref_value, grad = _reference(oracle, problem, x, seed)
    ref_y = x + 2.5 * grad
    gain = np.where(ref_y > 1, 2 * ref_y - 1, np.where(ref_y > 0, ref_y**2, 0.0))
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(y.reshape(problem.shape), ref_y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        projection_input.reshape(problem.shape), np.sqrt(problem.mask(gain)), atol=1e-12
    )


@pytest.mark.parametrize("n_labels", [3, 4])
def test_answers_follow_the_one_coin_model(n_labels):
    q = np.array([[0.9, 0.6, 0.3], [0.7, 0.05, 1.0]])
    problem = AssignmentProblem(
        q, max_workers_per_task=2, max_tasks_per_worker=2, budget=4, n_labels=n_labels
    )
    b = 16
    oracle = MulticlassSurrogate(problem, batch_size=b)
    answers = np.stack([oracle.sample(s).reshape(n_labels, b, -1) for s in range(500)], axis=1)
    qf = q.ravel()
    count = answers.shape[1] * b
    for slot in range(n_labels):
        y = n_labels - 1 - slot
        a = answers[slot].reshape(count, -1)
        for label in range(n_labels):
            expected = qf if label == y else (1 - qf) / (n_labels - 1)
            tolerance = 4 * np.sqrt(expected * (1 - expected) / count) + 2.0**-16
            assert np.all(np.abs(np.mean(a == label, axis=0) - expected) <= tolerance)


@pytest.mark.parametrize("n_labels", [3, 4])
def test_at_a_low_temperature_the_value_is_the_exact_expected_accuracy(n_labels):
    rng = np.random.default_rng(40 + n_labels)
    problem = _problem(rng, (6, 8), n_labels, low=0.3)
    x = np.zeros(problem.shape, dtype=bool)
    for j in range(problem.n_tasks):
        x[rng.choice(6, size=j % 4, replace=False), j] = True  # 0 to 3 workers
    exact = expected_accuracy_multiclass(
        problem.quality, x, prior=problem.prior_distribution, n_labels=n_labels
    )
    oracle = MulticlassSurrogate(problem, temperature=1e-4, batch_size=64)
    values = np.array([oracle.value(x.ravel().astype(float), s) for s in range(150)])
    values /= problem.n_tasks  # F is a sum over tasks; the accuracy their mean
    # Monte Carlo: 150 x 64 answer sets per label; 5 standard errors of the mean
    tolerance = 5 * values.std(ddof=1) / np.sqrt(values.size)
    assert abs(values.mean() - exact) <= tolerance
    assert tolerance < 0.01


def test_bad_oracle_options_are_rejected():
    problem = AssignmentProblem(
        np.full((2, 2), 0.7), max_workers_per_task=1, max_tasks_per_worker=1, budget=2, n_labels=3
    )
    with pytest.raises(ValueError, match="temperature must be positive"):
        MulticlassSurrogate(problem, temperature=0)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        MulticlassSurrogate(problem, batch_size=0)


@pytest.mark.parametrize("n_labels", [3, 4])
def test_a_step_over_candidates_is_the_full_step_at_those_pairs(n_labels):
    rng = np.random.default_rng(4)
    problem = _problem(rng, (8, 15), n_labels)
    entries = np.flatnonzero(rng.random(problem.n_workers * problem.n_tasks) < 0.3)
    pairs = SearchPairs(problem, entries)
    x_full = np.zeros(problem.n_workers * problem.n_tasks)
    x_full[entries] = rng.uniform(0.0, 1.0, entries.size) * (rng.random(entries.size) < 0.5)
    full = MulticlassSurrogate(problem, temperature=0.6, batch_size=3)
    part = MulticlassSurrogate(problem, pairs=pairs, temperature=0.6, batch_size=3)
    value, y, v = full.step(x_full, np.random.default_rng(5), 1.5)
    value_p, y_p, v_p = part.step(x_full[entries], np.random.default_rng(5), 1.5)
    assert value_p == value
    np.testing.assert_array_equal(y_p, y[entries])
    np.testing.assert_array_equal(v_p, v[entries])
