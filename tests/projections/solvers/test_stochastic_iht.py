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
    assert result.details["returned_iteration"] == result.history_iterations[best]


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
    assert result.status == "callback"


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


# -- the hooks a caller with its own step, score and stopping rule uses -------------------------


class Proposing:
    """An oracle that proposes ``(z, y)``: the plain gradient step, or (``box=True``) the step
    clipped to ``[0, 1]`` with ``z`` its distance from zero, as a box-constrained caller's."""

    def __init__(self, loss, *, box=False):
        self.loss, self.box, self.calls = loss, box, 0

    def proposal(self, w, rng, step):
        self.calls += 1
        y = w - step * self.loss.stochastic_gradient(w, rng)
        return (np.abs(y), np.clip(y, 0.0, 1.0)) if self.box else (y, y)


KW = {"step": 0.1, "seed": 0, "max_iter": 25}


def test_a_proposal_of_the_plain_step_gives_the_gradient_steps_iterates_bit_for_bit(planted):
    loss = LeastSquares(planted.A, planted.y, batch_size=8)
    plain = stochastic_iht(GradientOnly(loss), planted.projection, w0=np.zeros((10, 10)), **KW)
    oracle = Proposing(loss)
    proposed = stochastic_iht(oracle, planted.projection, w0=np.zeros((10, 10)), **KW)

    assert oracle.calls == KW["max_iter"]
    np.testing.assert_array_equal(proposed.solution, plain.solution)
    np.testing.assert_array_equal(proposed.support, plain.support)


def test_with_a_proposal_the_next_iterate_is_its_iterate_on_the_projections_support(planted):
    loss = LeastSquares(planted.A, planted.y, batch_size=8)
    seen = []

    def recording(v, warm_start=None):
        seen.append(np.array(v))
        return planted.projection(v, warm_start=warm_start)

    result = stochastic_iht(
        Proposing(loss, box=True), recording, w0=np.zeros((10, 10)), step=0.1, seed=0, max_iter=1
    )

    y = -0.1 * loss.stochastic_gradient(np.zeros((10, 10)), np.random.default_rng(0))
    np.testing.assert_array_equal(seen[0], np.abs(y))
    np.testing.assert_array_equal(result.support, planted.projection(np.abs(y)).support)
    np.testing.assert_array_equal(result.solution, np.where(result.support, y.clip(0, 1), 0.0))
    assert result.solution.min() >= 0.0
    assert result.solution.max() <= 1.0


def test_the_shifted_inverse_sqrt_schedule_steps_step_over_sqrt_of_one_plus_t_over_ten(planted):
    steps = []

    class Recording(Proposing):
        def proposal(self, w, rng, step):
            steps.append(step)
            return super().proposal(w, rng, step)

    stochastic_iht(
        Recording(LeastSquares(planted.A, planted.y)),
        planted.projection,
        w0=np.zeros((10, 10)),
        step=2.0,
        schedule="inv_sqrt_shifted",
        seed=0,
        max_iter=30,
    )

    assert steps == [2.0 / np.sqrt(1.0 + t / 10.0) for t in range(1, 31)]


def test_evaluate_replaces_the_oracles_value_in_the_history_and_the_choice_of_the_best(planted):
    loss = LeastSquares(planted.A, planted.y, batch_size=4)
    scores = []

    def evaluate(w, support):  # a score of the support alone, the caller's own
        scores.append(int(support.sum()) - int(np.count_nonzero(support & (planted.w_true != 0))))
        return float(scores[-1])

    result = stochastic_iht(
        loss, planted.projection, step=0.05, seed=1, max_iter=40, eval_every=4, evaluate=evaluate
    )

    np.testing.assert_array_equal(result.history, scores)
    np.testing.assert_array_equal(result.history_iterations, [0, *range(4, 41, 4)])
    assert len(set(scores)) > 1  # the iterates' scores differ, so the choice is a real one
    assert result.objective == min(scores)
    assert evaluate(result.solution, result.support) == min(scores)


def test_a_known_w0_value_is_recorded_without_evaluating_w0(planted):
    evaluated = []

    def evaluate(w, support):
        evaluated.append(int(np.count_nonzero(w)))
        return 1.0

    result = stochastic_iht(
        LeastSquares(planted.A, planted.y),
        planted.projection,
        seed=0,
        max_iter=3,
        evaluate=evaluate,
        w0_value=5.0,
    )

    assert result.history.tolist() == [5.0, 1.0, 1.0, 1.0]
    assert len(evaluated) == 3
    assert 0 not in evaluated
    assert result.objective == 1.0


def test_it_stops_after_n_evaluations_in_a_row_that_found_nothing_strictly_better(planted):
    values = iter([3.0, 2.0, 2.0, 2.5, 1.0, 0.0])  # at iterations 0, 2, 4, 6, 8, 10

    result = stochastic_iht(
        LeastSquares(planted.A, planted.y),
        planted.projection,
        seed=0,
        max_iter=50,
        eval_every=2,
        evaluate=lambda w, support: next(values),
        n_evals_no_change=2,
    )

    assert result.status == "no_improvement"
    assert result.iterations == 6
    assert result.history_iterations.tolist() == [0, 2, 4, 6]
    assert result.objective == 2.0
    assert result.details["returned_iteration"] == 2  # the first of the equal best
    assert "the last 2 evaluations found nothing better" in result.message


def test_improvements_of_at_most_min_improvement_count_as_nothing_better(planted):
    # Minimising: three evaluations beat the best by 0.005 each, then one by 0.5.
    values = [3.0, 2.995, 2.99, 2.985, 2.485, 2.48]

    def run(min_improvement, patience):
        found = iter(values)
        return stochastic_iht(
            LeastSquares(planted.A, planted.y),
            planted.projection,
            seed=0,
            max_iter=5,
            evaluate=lambda w, support: next(found),
            n_evals_no_change=patience,
            min_improvement=min_improvement,
        )

    strict, tolerant = run(0.0, 2), run(0.01, 2)
    patient, demanding = run(0.01, 4), run(0.6, 4)

    assert (strict.status, strict.iterations) == ("max_iter", 5)
    assert (tolerant.status, tolerant.iterations) == ("no_improvement", 2)
    assert tolerant.objective == 2.99  # the best is still kept by strict comparison
    assert "improved on the best by at most 0.01" in tolerant.message
    assert (patient.status, patient.iterations) == ("max_iter", 5)  # 0.5 counts
    assert (demanding.status, demanding.iterations) == ("no_improvement", 4)  # 0.5 does not


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "0.1", True])
def test_min_improvement_must_be_a_finite_non_negative_number(planted, bad):
    with pytest.raises(ValueError, match="min_improvement"):
        stochastic_iht(
            LeastSquares(planted.A, planted.y), planted.projection, seed=0, min_improvement=bad
        )


def test_no_improvement_at_the_last_iteration_ends_the_run_as_max_iter(planted):
    result = stochastic_iht(
        LeastSquares(planted.A, planted.y),
        planted.projection,
        seed=0,
        max_iter=4,
        evaluate=lambda w, support: 1.0,
        n_evals_no_change=4,
    )

    assert result.status == "max_iter"
    assert result.iterations == 4


def test_stochastic_iht_says_why_it_stopped_in_the_same_words_as_iht(planted):
    loss = LeastSquares(planted.A, planted.y, batch_size=64)
    converged = stochastic_iht(loss, planted.projection, seed=0, max_iter=2000, tol=1e-9)
    stopped = stochastic_iht(loss, planted.projection, seed=0, callback=lambda *a: True)
    ran_out = stochastic_iht(loss, planted.projection, seed=0, max_iter=3)

    assert (converged.status, converged.converged) == ("converged", True)
    assert (stopped.status, stopped.converged) == ("callback", False)
    assert (ran_out.status, ran_out.converged) == ("max_iter", False)


@pytest.mark.parametrize(
    "kwargs", [{"w0_value": 1.0}, {"n_evals_no_change": 2}], ids=["w0_value", "n_evals"]
)
def test_a_known_value_or_a_no_improvement_stop_needs_something_to_evaluate(planted, kwargs):
    oracle = GradientOnly(LeastSquares(planted.A, planted.y))
    with pytest.raises(ValueError, match=r"needs oracle\.value or evaluate"):
        stochastic_iht(oracle, planted.projection, w0=np.zeros((10, 10)), step=0.1, **kwargs)
