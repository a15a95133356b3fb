"""Stochastic IHT (Nguyen, Needell & Woolf 2014) with the exact TVCS projection."""

import numpy as np
import pytest

from projections.solvers import LeastSquares, SquaredHinge, stochastic_iht


class GradientOnly:
    """A stochastic oracle with nothing but ``stochastic_gradient``."""

    def __init__(self, loss):
        self.loss = loss

    def stochastic_gradient(self, w, rng):
        return self.loss.stochastic_gradient(w, rng)


def test_stochastic_iht_recovers_the_planted_model_with_a_fixed_seed(planted):
    # Batches of 64 of the 120 samples: with this fixed seed it converges in ~200 iterations
    # (smaller batches also recover the model in most runs, but more slowly).
    loss = LeastSquares(planted.A, planted.y, batch_size=64)
    result = stochastic_iht(loss, planted.projection, seed=0, max_iter=2000, tol=1e-9)

    assert result.converged
    np.testing.assert_array_equal(result.support, planted.w_true != 0)
    assert np.linalg.norm(result.solution - planted.w_true) < 1e-5
    assert result.objective == pytest.approx(loss.value(result.solution))


def test_stochastic_iht_is_reproducible_for_a_seed_and_differs_across_seeds(planted):
    loss = LeastSquares(planted.A, planted.y, batch_size=8)
    a = stochastic_iht(loss, planted.projection, seed=3, max_iter=30)
    b = stochastic_iht(loss, planted.projection, seed=3, max_iter=30)
    c = stochastic_iht(loss, planted.projection, seed=4, max_iter=30)

    np.testing.assert_array_equal(a.solution, b.solution)
    np.testing.assert_array_equal(a.history, b.history)
    assert not np.array_equal(a.solution, c.solution)


def test_stochastic_iht_returns_the_best_evaluated_iterate(planted):
    loss = LeastSquares(planted.A, planted.y, batch_size=4)
    # A deliberately large step makes the iterates noisy.
    result = stochastic_iht(loss, planted.projection, step=0.05, seed=1, max_iter=60)

    best = int(np.argmin(result.history))
    assert result.objective == result.history[best]
    assert loss.value(result.solution) == pytest.approx(result.history.min())
    if best != len(result.history) - 1:
        assert "best iterate" in result.message


def test_stochastic_iht_evaluates_the_value_every_eval_every_iterations_and_at_the_end(planted):
    loss = LeastSquares(planted.A, planted.y)
    result = stochastic_iht(loss, planted.projection, seed=0, max_iter=23, eval_every=10)

    np.testing.assert_array_equal(result.history_iterations, [0, 10, 20, 23])
    assert result.iterations == 23


def test_stochastic_iht_with_an_inverse_sqrt_schedule_decreases_the_step(planted):
    loss = LeastSquares(planted.A, planted.y)
    result = stochastic_iht(
        loss, planted.projection, step=0.1, schedule="inv_sqrt", seed=0, max_iter=16
    )

    assert result.step == pytest.approx(0.1 / 4)
    assert result.history[-1] < result.history[0]


def test_stochastic_iht_on_the_squared_hinge_reaches_a_low_training_error(planted_classification):
    data = planted_classification
    loss = SquaredHinge(data.A, data.labels, batch_size=32)
    result = stochastic_iht(loss, data.projection, seed=0, max_iter=1500, eval_every=50)

    assert loss.error_rate(result.solution) < 0.1
    assert data.structure.is_feasible(result.support)


def test_stochastic_iht_with_maximize_ascends_the_negated_loss_to_the_planted_model(planted):
    loss = LeastSquares(planted.A, planted.y, batch_size=64)

    class Negated:
        feature_shape = loss.feature_shape

        def value(self, w):
            return -loss.value(w)

        def stochastic_gradient(self, w, rng):
            return -loss.stochastic_gradient(w, rng)

        def stochastic_lipschitz(self):
            return loss.stochastic_lipschitz()

    result = stochastic_iht(Negated(), planted.projection, maximize=True, seed=0, max_iter=400)

    assert result.objective == result.history.max()
    assert result.objective > 1e-9 * result.history[0]  # both negative: next to the maximum 0
    np.testing.assert_array_equal(result.support, planted.w_true != 0)


def test_stochastic_iht_works_with_an_oracle_that_only_has_stochastic_gradient(planted):
    oracle = GradientOnly(LeastSquares(planted.A, planted.y))
    result = stochastic_iht(
        oracle, planted.projection, w0=np.zeros((10, 10)), step=0.1, seed=0, max_iter=20
    )

    assert result.history.size == 0
    assert np.isnan(result.objective)
    assert result.iterations == 20
    assert result.n_warm_started == 19


def test_stochastic_iht_calls_the_callback_and_stops_when_it_returns_true(planted):
    calls = []

    def callback(iteration, w, value):
        calls.append((iteration, value))
        return iteration >= 5

    result = stochastic_iht(
        LeastSquares(planted.A, planted.y),
        planted.projection,
        seed=0,
        eval_every=2,
        callback=callback,
    )

    assert [c[0] for c in calls] == [1, 2, 3, 4, 5]
    assert [c[1] is None for c in calls] == [True, False, True, False, True]
    assert result.iterations == 5
    assert not result.converged
    assert "callback" in result.message


def test_stochastic_iht_requires_a_step_when_the_oracle_cannot_suggest_one(planted):
    oracle = GradientOnly(LeastSquares(planted.A, planted.y))
    with pytest.raises(ValueError, match="step is required"):
        stochastic_iht(oracle, planted.projection, w0=np.zeros((10, 10)))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"schedule": "linear"}, "'constant', 'inv_sqrt'"),
        ({"step": -0.1}, "step"),
        ({"max_iter": -5}, "max_iter"),
        ({"eval_every": 0}, "eval_every"),
        ({"patience": 0}, "patience"),
        ({"tol": -1.0}, "tol"),
        ({"seed": "abc"}, "seed"),
        ({"w0": np.zeros(7)}, "shape"),
    ],
)
def test_stochastic_iht_rejects_bad_arguments_with_value_error(planted, kwargs, match):
    with pytest.raises(ValueError, match=match):
        stochastic_iht(LeastSquares(planted.A, planted.y), planted.projection, **kwargs)


def test_stochastic_iht_rejects_an_oracle_without_stochastic_gradient(planted):
    with pytest.raises(TypeError, match="stochastic_gradient"):
        stochastic_iht(object(), planted.projection, w0=np.zeros(100), step=0.1)
