"""DPC: the ball holds the dual optimum, its maximisation is exact, and no active feature is
ever discarded (Wang & Ye, ICML 2015, Theorems 4, 6 and 7)."""

import itertools

import numpy as np
import pytest
from mtfl_instances import problem_of

from projections.multitask import dpc_screen, lambda_grid, mtfl
from projections.multitask.dpc import ball_maximum_squared, dual_ball


def brute_force_ball_maximum(a, d, n_angles=200_001):
    """``max_{||τ|| <= 1} Σ (a_t + d_t τ_t)²`` for two tasks, over a fine grid of the circle."""
    phi = np.linspace(0.0, 2.0 * np.pi, n_angles)
    return float(np.max((a[0] + d[0] * np.cos(phi)) ** 2 + (a[1] + d[1] * np.sin(phi)) ** 2))


@pytest.mark.parametrize("seed", range(30))
def test_the_ball_maximum_matches_brute_force_on_two_tasks(seed):
    rng = np.random.default_rng(seed)
    a, d = rng.exponential(size=2), rng.exponential(size=2)
    if seed % 5 == 0:
        a[np.argmax(d)] = 0.0  # the "hard case": no pull along the largest d
    bound = float(ball_maximum_squared(a[None], d[None])[0])
    exact = brute_force_ball_maximum(a, d)
    assert bound >= exact * (1 - 1e-12)
    assert bound == pytest.approx(exact, rel=1e-8)


def test_the_ball_maximum_bounds_the_ball_and_is_attained_in_the_dual_space():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6))  # one feature's column in each of 4 tasks (6 samples)
    center, radius = rng.standard_normal((4, 6)), 0.3
    c, d = np.sum(x * center, axis=1), radius * np.linalg.norm(x, axis=1)
    bound = np.sqrt(ball_maximum_squared(np.abs(c)[None], d[None]))[0]
    directions = rng.standard_normal((20_000, 4, 6))
    directions /= np.linalg.norm(directions, axis=(1, 2))[:, None, None]
    values = np.linalg.norm(np.sum(x * (center + radius * directions), axis=2), axis=1)
    assert values.max() <= bound
    # the maximiser: tau_t = d_t |c_t| / (mu - d_t^2), mu the root of ||tau|| = 1 (bisection)
    low, high = np.max(d**2), np.max(d**2) + np.max(d) * np.linalg.norm(c) + 1.0
    for _ in range(200):
        mu = 0.5 * (low + high)
        low, high = (mu, high) if np.sum((d * c / (mu - d**2)) ** 2) > 1 else (low, mu)
    tau = d * np.abs(c) / (mu - d**2)
    best = center + radius * (tau * np.sign(c) / np.linalg.norm(x, axis=1))[:, None] * x
    assert np.linalg.norm(best - center) == pytest.approx(radius)
    assert np.linalg.norm(np.sum(x * best, axis=1)) == pytest.approx(bound, rel=1e-10)


def test_rows_without_radius_get_the_plain_norm():
    a = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(ball_maximum_squared(a, np.zeros((2, 2))), [25.0, 0.0])


@pytest.mark.parametrize("seed", range(8))
def test_the_ball_contains_the_dual_optimum(seed):
    problem, _, _ = problem_of(seed, samples=(7, 5, 9), n_features=12, correlation=0.4)
    lam0 = 0.6 * problem.lambda_max
    theta0 = problem.certificate(mtfl(problem, lam0, tol=1e-15).coef, lam0).theta
    for lam0_, theta in ((problem.lambda_max, None), (lam0, theta0)):
        for ratio in (0.95, 0.7, 0.4):
            lam = ratio * lam0_
            theta_star = problem.certificate(mtfl(problem, lam, tol=1e-15).coef, lam).theta
            center, radius = dual_ball(problem, lam, lam0_, theta)
            assert np.linalg.norm(theta_star - center) <= radius * (1 + 1e-6) + 1e-9


def test_screening_near_lambda_max_discards_most_features_of_a_sparse_model():
    problem, _, _ = problem_of(0, samples=(30, 30, 30), n_features=300, active=5, noise=0.01)
    screened = dpc_screen(problem, 0.95 * problem.lambda_max)
    assert screened.kept.sum() <= 30
    assert np.all((screened.bounds < 1) == ~screened.kept)


def _never_discards_an_active_feature(seed: int, n_lambdas: int) -> None:
    rng = np.random.default_rng(seed)
    samples = tuple(int(n) for n in rng.integers(3, 15, size=int(rng.integers(1, 5))))
    problem, _, _ = problem_of(
        seed,
        samples=samples,
        n_features=int(rng.integers(5, 40)),
        active=int(rng.integers(1, 5)),
        correlation=float(rng.choice([0.0, 0.5, 0.9])),
        noise=float(rng.choice([0.01, 0.5])),
    )
    grid = lambda_grid(problem.lambda_max, n_lambdas, float(rng.choice([0.01, 0.1])))
    previous = None
    for lam0, lam in itertools.pairwise(grid):
        kept = dpc_screen(problem, lam, lam0=lam0, coef0=previous).kept
        previous = mtfl(problem, lam, tol=1e-14).coef
        active = np.linalg.norm(previous, axis=1) > 0
        assert not np.any(active & ~kept), f"seed {seed}: discarded an active feature at {lam}"


@pytest.mark.parametrize("seed", range(8))
def test_the_rule_never_discards_a_feature_the_unscreened_solution_keeps(seed):
    _never_discards_an_active_feature(seed, n_lambdas=8)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8, 208))
def test_the_rule_never_discards_an_active_feature_on_many_random_paths(seed):
    _never_discards_an_active_feature(seed, n_lambdas=20)


def test_lambda_at_or_above_lambda_max_discards_everything():
    problem, _, _ = problem_of(3)
    assert not dpc_screen(problem, problem.lambda_max).kept.any()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lam": 2.0, "lam0": 1.0}, "lam must be <= lam0"),
        ({"lam": -1.0}, "lam must be a finite positive number"),
        ({"lam": 0.1, "lam0": 0.5}, "coef0 .* is required when lam0 < lambda_max"),
        ({"lam": 0.1, "lam0": 0.5, "coef0": np.zeros(3)}, "coef0 must be a real array"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, match):
    problem, _, _ = problem_of(4)
    with pytest.raises(ValueError, match=match):
        dpc_screen(problem, **kwargs)


def test_screening_above_lambda_max_discards_every_feature():
    problem, _, _ = problem_of(3)
    result = dpc_screen(problem, 2 * problem.lambda_max)
    assert not result.kept.any()
    assert mtfl(problem, 2 * problem.lambda_max).support.sum() == 0
