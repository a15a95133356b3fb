"""The surrogate's gradient is the derivative of its value (finite differences), and the fused
kernel of a step computes exactly that formula on its own sampled answers."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine.problem import AssignmentProblem
from assignment.engine.surrogate import Surrogate, surrogate_value_and_gradient


def dense_sample(oracle: Surrogate, seed: int, shape: tuple[int, int]):
    """The oracle's answers over every pair as ``(b, n, m)`` arrays, for the reference."""
    z1, z0 = oracle.sample(seed)
    return z1.reshape(-1, *shape), z0.reshape(-1, *shape)


@pytest.mark.parametrize("prior", [0.5, 0.2, 0.85])
@pytest.mark.parametrize("temperature", [1.0, 0.3])
def test_gradient_matches_central_finite_differences(prior, temperature):
    rng = np.random.default_rng(0)
    q = rng.uniform(0.3, 0.95, (5, 4))
    problem = AssignmentProblem(
        q, max_workers_per_task=3, max_tasks_per_worker=3, budget=10, prior=prior
    )
    oracle = Surrogate(problem, temperature=temperature, batch_size=3)
    z1, z0 = dense_sample(oracle, 7, q.shape)
    x = rng.random(q.shape)
    _, grad = surrogate_value_and_gradient(x, z1, z0, prior=problem.prior, temperature=temperature)
    h = 1e-6
    numeric = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        f_up, _ = surrogate_value_and_gradient(
            up, z1, z0, prior=problem.prior, temperature=temperature
        )
        f_down, _ = surrogate_value_and_gradient(
            down, z1, z0, prior=problem.prior, temperature=temperature
        )
        numeric[idx] = (f_up - f_down) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("eligible", [None, "half"])
@pytest.mark.parametrize("batch_size", [1, 3, 4])
def test_a_step_is_the_formula_applied_to_its_own_sampled_answers(eligible, batch_size):
    rng = np.random.default_rng(2)
    q = rng.uniform(0.2, 0.97, (6, 9))
    mask = None if eligible is None else rng.random(q.shape) < 0.5
    problem = AssignmentProblem(
        q,
        max_workers_per_task=3,
        max_tasks_per_worker=4,
        budget=20,
        prior=rng.uniform(0.1, 0.9, 9),
        eligible=mask,
    )
    oracle = Surrogate(problem, temperature=0.7, batch_size=batch_size)
    x = np.where(rng.random(q.shape) < 0.4, rng.uniform(0.0, 1.0, q.shape), 0.0)
    seed_source = np.random.default_rng(11)
    value, y, projection_input = oracle.step(x.ravel(), seed_source, 2.5)
    y, projection_input = y.reshape(q.shape), projection_input.reshape(q.shape)
    z1, z0 = dense_sample(oracle, int(np.random.default_rng(11).integers(0, 2**63)), q.shape)
    ref_value, grad = surrogate_value_and_gradient(x, z1, z0, prior=problem.prior, temperature=0.7)
    ref_y = x + 2.5 * grad
    gain = np.where(ref_y > 1, 2 * ref_y - 1, np.where(ref_y > 0, ref_y**2, 0.0))
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(y, ref_y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(projection_input, np.sqrt(problem.mask(gain)), atol=1e-12)


def test_samples_have_the_answer_distribution_of_the_quality_matrix():
    q = np.array([[0.9, 0.6, 0.51], [0.7, 0.55, 1.0], [0.0, 0.3, 0.999]])
    problem = AssignmentProblem(q, max_workers_per_task=2, max_tasks_per_worker=2, budget=4)
    oracle = Surrogate(problem, batch_size=64)
    z1, z0 = np.concatenate([dense_sample(oracle, seed, q.shape) for seed in range(400)], axis=1)
    log_odds = oracle.log_odds.reshape(q.shape)
    # Given label 1 a worker votes +L (correctly) with probability Q; given 0, -L.
    tolerance = 4 * np.sqrt(q * (1 - q) / z1.shape[0]) + 2.0**-16  # 4 standard errors
    assert np.all(np.abs(np.mean(z1 == log_odds, axis=0) - q) <= tolerance)
    assert np.all(np.abs(np.mean(z0 == -log_odds, axis=0) - q) <= tolerance)


def test_answers_of_different_samples_pairs_and_labels_are_uncorrelated():
    q = np.full((4, 5), 0.7)
    problem = AssignmentProblem(q, max_workers_per_task=2, max_tasks_per_worker=2, budget=4)
    oracle = Surrogate(problem, batch_size=6)
    signs = np.stack([np.stack(oracle.sample(seed)) for seed in range(3000)])  # (s, 2, b, n, m)
    flat = np.sign(signs.reshape(signs.shape[0], -1))
    corr = np.corrcoef(flat, rowvar=False)
    off_diagonal = corr[~np.eye(corr.shape[0], dtype=bool)]
    assert np.abs(off_diagonal).max() < 5 / np.sqrt(signs.shape[0])


def test_bad_oracle_options_are_rejected():
    problem = AssignmentProblem(
        np.full((2, 2), 0.7), max_workers_per_task=1, max_tasks_per_worker=1, budget=2
    )
    with pytest.raises(ValueError, match="temperature must be positive"):
        Surrogate(problem, temperature=0)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        Surrogate(problem, batch_size=0)
