"""Iterative hard thresholding (Algorithm 1) with the exact TVCS projection."""

import numpy as np
import pytest

from projections.result import ProjectionResult
from projections.solvers import LeastSquares, SolverResult, SquaredHinge, iht


class NegatedLoss:
    """``-f`` of a loss: maximising it is minimising ``f``."""

    def __init__(self, loss):
        self.loss = loss
        self.feature_shape = loss.feature_shape

    def value(self, w):
        return -self.loss.value(w)

    def gradient(self, w):
        return -self.loss.gradient(w)

    def lipschitz(self):
        return self.loss.lipschitz()


class WithoutLipschitz:
    """A loss exposing only value and gradient (forces the backtracking rule)."""

    def __init__(self, loss):
        self.loss = loss

    def value(self, w):
        return self.loss.value(w)

    def gradient(self, w):
        return self.loss.gradient(w)


def test_iht_recovers_the_planted_support_and_values_of_a_noiseless_regression(planted):
    result = iht(LeastSquares(planted.A, planted.y), planted.projection, tol=1e-9)

    assert isinstance(result, SolverResult)
    assert result.converged
    assert result.status == "converged"
    np.testing.assert_array_equal(result.support, planted.w_true != 0)
    assert np.linalg.norm(result.solution - planted.w_true) < 1e-6
    assert planted.structure.is_feasible(result.support)
    assert result.solution.shape == (10, 10)


def test_iht_with_step_one_over_l_never_increases_the_least_squares_objective(planted):
    # From the feasible start 0 with an exact projection and step 1/L, each iterate minimises
    # the quadratic upper bound of f over the set, so f cannot increase.
    result = iht(LeastSquares(planted.A, planted.y), planted.projection, max_iter=40)

    assert result.history.shape == (result.iterations + 1,)
    np.testing.assert_array_equal(result.history_iterations, np.arange(result.iterations + 1))
    assert np.all(np.diff(result.history) <= 1e-12 * result.history[0])
    assert result.history[-1] < result.history[0]
    assert result.objective == result.history[-1]


def test_iht_without_a_lipschitz_constant_backtracks_and_still_recovers_the_model(planted):
    loss = WithoutLipschitz(LeastSquares(planted.A, planted.y))
    result = iht(loss, planted.projection, w0=np.zeros((10, 10)), tol=1e-9)

    assert result.details["step_rule"] == "adaptive"
    np.testing.assert_array_equal(result.support, planted.w_true != 0)
    assert np.linalg.norm(result.solution - planted.w_true) < 1e-6
    assert np.all(np.diff(result.history) <= 1e-12 * result.history[0])


def test_iht_with_maximize_ascends_the_negated_loss_to_the_same_model(planted):
    loss = NegatedLoss(LeastSquares(planted.A, planted.y))
    result = iht(loss, planted.projection, maximize=True, tol=1e-9)

    assert result.history[-1] > result.history[0]
    assert np.all(np.diff(result.history) >= -1e-12 * abs(result.history[0]))
    np.testing.assert_array_equal(result.support, planted.w_true != 0)
    assert np.linalg.norm(result.solution - planted.w_true) < 1e-6


def test_iht_on_the_squared_hinge_reaches_a_low_training_error(planted_classification):
    data = planted_classification
    loss = SquaredHinge(data.A, data.labels)
    result = iht(loss, data.projection, max_iter=300)

    assert loss.error_rate(np.zeros((10, 10))) > 0.4
    assert loss.error_rate(result.solution) < 0.1
    assert result.history[-1] < 0.5 * result.history[0]
    assert data.structure.is_feasible(result.support)


def test_iht_calls_the_callback_every_iteration_and_stops_when_it_returns_true(planted):
    seen = []

    def callback(iteration, w, value):
        seen.append((iteration, w.shape, value))
        return iteration == 3

    result = iht(LeastSquares(planted.A, planted.y), planted.projection, callback=callback)

    assert [s[0] for s in seen] == [1, 2, 3]
    assert all(shape == (10, 10) for _, shape, _ in seen)
    assert [s[2] for s in seen] == list(result.history[1:])
    assert result.iterations == 3
    assert not result.converged
    assert result.status == "callback"


def test_iht_passes_each_projections_warm_start_to_the_next_and_counts_them(planted):
    received = []
    inner = planted.projection

    def projection(v, warm_start=None):
        received.append(warm_start)
        r = inner(v)
        return ProjectionResult(
            x=r.x,
            support=r.support,
            objective=r.objective,
            method="test",
            optimal=True,
            warm_start=len(received),
        )

    # A constant step and escape=0: one projection per iteration (the adaptive rule's trials and
    # the escapes add their own calls, threaded alike).
    loss = LeastSquares(planted.A, planted.y)
    result = iht(loss, projection, step=1.0 / loss.lipschitz(), max_iter=5, tol=0.0, escape=0)

    assert received == [None, 1, 2, 3, 4]
    assert result.n_projections == 5
    assert result.n_warm_started == 4
    assert result.projection_seconds <= result.seconds


def test_iht_with_the_exact_projection_reports_warm_started_projections(planted):
    loss = LeastSquares(planted.A, planted.y)
    # a constant step: one projection per iteration
    result = iht(
        loss, planted.projection, step=1.0 / loss.lipschitz(), max_iter=10, tol=0.0, escape=0
    )

    assert result.n_projections == 10
    assert result.n_warm_started == 9


def test_iht_without_warm_start_never_passes_state(planted):
    loss = LeastSquares(planted.A, planted.y)
    result = iht(
        loss,
        planted.projection,
        step=1.0 / loss.lipschitz(),
        max_iter=5,
        warm_start=False,
        escape=0,
    )

    assert result.n_projections == 5
    assert result.n_warm_started == 0


def test_iht_accepts_a_plain_callable_projection_without_warm_start(planted):
    inner = planted.projection

    class Plain:
        def __init__(self, x, support):
            self.x, self.support = x, support

    def projection(v):
        r = inner(v)
        return Plain(r.x, r.support)

    result = iht(LeastSquares(planted.A, planted.y), projection, tol=1e-9)

    np.testing.assert_array_equal(result.support, planted.w_true != 0)
    assert result.n_warm_started == 0


def test_iht_works_on_flat_vectors_too(planted):
    loss = LeastSquares(planted.A.reshape(len(planted.y), -1), planted.y)
    result = iht(loss, planted.projection, tol=1e-9)

    assert result.solution.shape == (100,)
    np.testing.assert_array_equal(result.support, planted.w_true.reshape(-1) != 0)


def test_iht_never_modifies_its_inputs(planted):
    A, y = planted.A.copy(), planted.y.copy()
    w0 = np.full((10, 10), 0.1)
    w0_before = w0.copy()
    iht(LeastSquares(A, y), planted.projection, w0=w0, max_iter=5)

    np.testing.assert_array_equal(A, planted.A)
    np.testing.assert_array_equal(y, planted.y)
    np.testing.assert_array_equal(w0, w0_before)


def test_iht_with_zero_iterations_returns_the_start(planted):
    w0 = np.ones((10, 10))
    result = iht(LeastSquares(planted.A, planted.y), planted.projection, w0=w0, max_iter=0)

    np.testing.assert_array_equal(result.solution, w0)
    assert result.iterations == 0
    assert result.history.shape == (1,)
    assert result.n_projections == 0


def test_iht_stops_with_the_last_finite_iterate_when_the_loss_blows_up(planted):
    loss = LeastSquares(planted.A, planted.y)

    class Exploding:
        feature_shape = loss.feature_shape
        calls = 0

        def value(self, w):
            self.calls += 1
            return np.inf if self.calls > 3 else loss.value(w)

        def gradient(self, w):
            return loss.gradient(w)

    result = iht(Exploding(), planted.projection, step=0.01, max_iter=20)

    assert not result.converged
    assert result.status == "breakdown"
    assert result.iterations == 2
    assert np.all(np.isfinite(result.solution))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"step": 0.0}, "step"),
        ({"step": -1.0}, "step"),
        ({"step": float("nan")}, "step"),
        ({"max_iter": -1}, "max_iter"),
        ({"max_iter": 2.5}, "max_iter"),
        ({"tol": -1e-3}, "tol"),
        ({"w0": np.zeros((10, 9))}, "shape"),
        ({"w0": np.full((10, 10), np.nan)}, "finite"),
        ({"maximize": "yes"}, "maximize"),
        ({"time_limit": 0}, "time_limit"),
    ],
)
def test_iht_rejects_bad_arguments_with_value_error(planted, kwargs, match):
    with pytest.raises(ValueError, match=match):
        iht(LeastSquares(planted.A, planted.y), planted.projection, **kwargs)


def test_iht_rejects_a_loss_without_gradient_and_a_non_callable_projection(planted):
    loss = LeastSquares(planted.A, planted.y)

    class ValueOnly:
        def value(self, w):
            return 0.0

    with pytest.raises(TypeError, match="gradient"):
        iht(ValueOnly(), planted.projection, w0=np.zeros(100))
    with pytest.raises(TypeError, match="projection"):
        iht(loss, "exact")
    with pytest.raises(TypeError, match="callback"):
        iht(loss, planted.projection, callback=3)


def test_iht_needs_w0_when_the_loss_has_no_feature_shape(planted):
    loss = WithoutLipschitz(LeastSquares(planted.A, planted.y))
    with pytest.raises(ValueError, match="w0"):
        iht(loss, planted.projection)


def test_iht_rejects_positional_options(planted):
    with pytest.raises(TypeError):
        iht(LeastSquares(planted.A, planted.y), planted.projection, None)  # type: ignore[misc]


def test_iht_stops_at_the_time_limit_without_claiming_convergence(planted):
    result = iht(LeastSquares(planted.A, planted.y), planted.projection, time_limit=1e-9)

    assert result.iterations == 1
    assert not result.converged
    assert result.status == "time_limit"


def test_a_run_without_iterations_reports_the_step_it_would_have_started_from():
    from projections.cardinality import project_top_k
    from projections.solvers import stochastic_iht

    A = np.random.default_rng(0).standard_normal((20, 5))
    loss = LeastSquares(A, A[:, 0])

    def top_one(v):
        return project_top_k(v, k=1)

    assert iht(loss, top_one, max_iter=0).step == pytest.approx(1.0 / loss.lipschitz())
    assert iht(loss, top_one, max_iter=0, step=0.25).step == 0.25
    assert stochastic_iht(loss, top_one, max_iter=0, step=0.25).step == 0.25
