"""The surrogate's gradient is the derivative of its value (finite differences)."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine.problem import AssignmentProblem
from assignment.engine.surrogate import Surrogate, surrogate_value_and_gradient


@pytest.mark.parametrize("prior", [0.5, 0.2, 0.85])
@pytest.mark.parametrize("temperature", [1.0, 0.3])
def test_gradient_matches_central_finite_differences(prior, temperature):
    rng = np.random.default_rng(0)
    q = rng.uniform(0.3, 0.95, (5, 4))
    problem = AssignmentProblem(
        q, max_workers_per_task=3, max_tasks_per_worker=3, budget=10, prior=prior
    )
    oracle = Surrogate(problem, temperature=temperature, batch_size=3)
    z1, z0 = oracle.sample(rng)
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


def test_samples_have_the_answer_distribution_of_the_quality_matrix():
    q = np.array([[0.9, 0.6], [0.7, 0.55]])
    problem = AssignmentProblem(q, max_workers_per_task=2, max_tasks_per_worker=2, budget=4)
    oracle = Surrogate(problem)
    z1, z0 = oracle.sample(np.random.default_rng(1), batch_size=40_000)
    # Given label 1 a worker votes +L (correctly) with probability Q; given 0, -L.
    np.testing.assert_allclose(np.mean(z1 > 0, axis=0), q, atol=0.01)
    np.testing.assert_allclose(np.mean(z0 < 0, axis=0), q, atol=0.01)


def test_bad_oracle_options_are_rejected():
    problem = AssignmentProblem(
        np.full((2, 2), 0.7), max_workers_per_task=1, max_tasks_per_worker=1, budget=2
    )
    with pytest.raises(ValueError, match="temperature must be positive"):
        Surrogate(problem, temperature=0)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        Surrogate(problem, batch_size=0)
