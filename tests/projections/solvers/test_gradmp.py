"""Gradient matching pursuit (Algorithm 2) with the exact TVCS projection."""

import numpy as np
import pytest

from projections.solvers import LeastSquares, SquaredHinge, gradmp, tvcs_projection


class NegatedLoss:
    def __init__(self, loss):
        self.loss = loss
        self.feature_shape = loss.feature_shape

    def value(self, w):
        return -self.loss.value(w)

    def gradient(self, w):
        return -self.loss.gradient(w)


def test_gradmp_recovers_the_planted_support_and_values_of_a_noiseless_regression(planted):
    result = gradmp(LeastSquares(planted.A, planted.y), planted.projection)

    assert result.converged
    np.testing.assert_array_equal(result.support, planted.w_true != 0)
    assert np.linalg.norm(result.solution - planted.w_true) < 1e-8
    assert result.iterations < 10
    assert result.step is None  # the subspace problem was solved exactly, without steps
    assert result.history[-1] < 1e-12 * result.history[0]


def test_gradmp_projects_the_gradient_with_doubled_caps(planted):
    heads = []
    head = planted.projection.doubled()

    def recording_head(v):
        r = head(v)
        heads.append(r.support)
        return r

    result = gradmp(
        LeastSquares(planted.A, planted.y), planted.projection, head_projection=recording_head
    )

    doubled = head.structure
    np.testing.assert_array_equal(doubled.caps1, 2 * planted.structure.caps1)
    assert len(heads) == result.iterations
    assert all(doubled.is_feasible(s) for s in heads)
    assert heads[0].sum() > planted.structure.total  # more than s entries: it is the 2s set
    assert result.n_projections == 2 * result.iterations


def test_gradmp_needs_a_doubled_projection_or_a_head_projection(planted):
    inner = planted.projection

    def plain(v):
        return inner(v)

    loss = LeastSquares(planted.A, planted.y)
    with pytest.raises(TypeError, match="doubled"):
        gradmp(loss, plain)
    result = gradmp(loss, plain, head_projection=inner.doubled())
    np.testing.assert_array_equal(result.support, planted.w_true != 0)


def test_gradmp_on_the_squared_hinge_uses_restricted_gradient_steps(planted_classification):
    data = planted_classification
    loss = SquaredHinge(data.A, data.labels)
    result = gradmp(loss, data.projection, max_iter=50)

    assert result.step is not None  # the restricted steps' step
    assert result.step > 0
    assert loss.error_rate(result.solution) < 0.05
    assert data.structure.is_feasible(result.support)


def test_gradmp_with_maximize_ascends_the_negated_loss_to_the_planted_model(planted):
    loss = NegatedLoss(LeastSquares(planted.A, planted.y))
    result = gradmp(loss, planted.projection, maximize=True, max_iter=50)

    assert result.history[-1] > result.history[0]
    np.testing.assert_array_equal(result.support, planted.w_true != 0)
    assert np.linalg.norm(result.solution - planted.w_true) < 1e-4


def test_gradmp_calls_the_callback_and_stops_when_it_returns_true(planted):
    calls = []

    def callback(iteration, w, value):
        calls.append(iteration)
        return True

    result = gradmp(LeastSquares(planted.A, planted.y), planted.projection, callback=callback)

    assert calls == [1]
    assert result.iterations == 1
    assert not result.converged
    assert result.status == "callback"


def test_gradmp_warm_starts_only_the_s_projection(planted):
    result = gradmp(
        SquaredHinge(planted.A, planted.labels), planted.projection, max_iter=6, tol=0.0
    )

    assert result.n_projections == 12
    assert result.n_warm_started == 5


def test_gradmp_works_on_a_general_label_structure(planted):
    s = planted.structure
    general = type(s).from_labels(s.labels1, s.labels2, caps1=s.caps1, caps2=s.caps2, total=15)
    loss = LeastSquares(planted.A.reshape(len(planted.y), -1), planted.y)
    result = gradmp(loss, tvcs_projection(general))

    np.testing.assert_array_equal(result.support, planted.w_true.reshape(-1) != 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"step": 0}, "step"),
        ({"max_iter": -1}, "max_iter"),
        ({"inner_iter": 0}, "inner_iter"),
        ({"tol": float("inf")}, "tol"),
        ({"w0": np.zeros((5, 20))}, "shape"),
    ],
)
def test_gradmp_rejects_bad_arguments_with_value_error(planted, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gradmp(LeastSquares(planted.A, planted.y), planted.projection, **kwargs)


class _NaNAwayFromZero:
    """A loss that is NaN everywhere but at 0 (and has no minimize_on_support)."""

    feature_shape = (3,)

    def value(self, w):
        return float("nan") if np.any(w) else 1.0

    def gradient(self, w):
        return np.ones(3)


def test_a_loss_that_is_nan_at_every_trial_step_is_a_breakdown_as_in_iht():
    from projections.cardinality import project_top_k
    from projections.solvers import iht

    def top_two(v):
        return project_top_k(v, k=2)

    result = gradmp(_NaNAwayFromZero(), top_two, head_projection=top_two)
    assert result.status == "breakdown"
    assert not result.converged
    assert "not finite" in result.message
    assert iht(_NaNAwayFromZero(), top_two).status == "breakdown"
