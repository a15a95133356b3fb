"""IHT's default adaptive step (issue 15): it follows the local curvature instead of the global
``1 / L``, never increases the loss and keeps every iterate feasible."""

import numpy as np
import pytest

from projections import TVCSStructure
from projections.solvers import SquaredHinge, iht, tvcs_projection

SIDE = 8


def classification(seed: int, n_samples: int, label_noise: float):
    """An 8 x 8 squared-hinge problem under caps of 2 per row and column and 10 in all.

    Labels are ``sign(<X_i, w*> + label_noise * e_i)`` with ``w*`` feasible and Gaussian.
    Returns ``(loss, projection, structure)``.
    """
    rng = np.random.default_rng(seed)
    structure = TVCSStructure.from_matrix((SIDE, SIDE), max_per_row=2, max_per_col=2, total=10)
    projection = tvcs_projection(structure)
    support = projection(rng.standard_normal((SIDE, SIDE))).support
    w_true = np.zeros((SIDE, SIDE))
    w_true[support] = rng.standard_normal(int(support.sum()))
    A = rng.standard_normal((n_samples, SIDE, SIDE))
    margins = np.einsum("nij,ij->n", A, w_true) + label_noise * rng.standard_normal(n_samples)
    return SquaredHinge(A, np.where(margins >= 0, 1.0, -1.0)), projection, structure


@pytest.fixture
def nearly_separable():
    """Few noisy labels: the loss can get close to 0, where its curvature is far below L."""
    return classification(seed=1, n_samples=100, label_noise=0.5)


@pytest.fixture
def noisy():
    """Many noisy labels: a well-posed problem whose fixed point both step rules reach."""
    return classification(seed=0, n_samples=400, label_noise=2.0)


def test_default_step_reaches_a_far_lower_squared_hinge_loss_than_one_over_l(nearly_separable):
    loss, projection, _ = nearly_separable
    constant = iht(loss, projection, step=1.0 / loss.lipschitz(), max_iter=500)

    adaptive = iht(loss, projection, max_iter=500)

    assert adaptive.details["step_rule"] == "adaptive"
    assert constant.status == "max_iter"  # 1/L is still creeping after 500 iterations
    assert adaptive.objective < 1e-3 * constant.objective


def test_adaptive_step_grows_beyond_one_over_l_where_the_curvature_is_small(nearly_separable):
    loss, projection, _ = nearly_separable

    result = iht(loss, projection, max_iter=500)

    assert result.step >= 4.0 / loss.lipschitz()


def test_adaptive_step_never_increases_the_loss_and_keeps_every_iterate_feasible(
    nearly_separable,
):
    loss, projection, structure = nearly_separable
    infeasible = []

    def check(_it, w, _value):
        if not structure.is_feasible(w != 0):
            infeasible.append(_it)
        return False

    history = iht(loss, projection, max_iter=300, callback=check).history

    assert not infeasible
    assert np.all(np.diff(history) <= 1e-12 * history[0])
    assert history[-1] < 0.1 * history[0]


def test_adaptive_step_reaches_the_fixed_point_of_one_over_l_in_fewer_iterations(noisy):
    loss, projection, _ = noisy
    constant = iht(loss, projection, step=1.0 / loss.lipschitz(), tol=1e-9, max_iter=2000)

    adaptive = iht(loss, projection, tol=1e-9, max_iter=2000)

    assert constant.converged
    assert adaptive.converged
    assert adaptive.iterations < constant.iterations / 2
    np.testing.assert_array_equal(adaptive.support, constant.support)
    assert adaptive.objective == pytest.approx(constant.objective, rel=1e-6)


def test_adaptive_step_stops_where_the_gradient_vanishes_on_the_support(noisy):
    loss, projection, _ = noisy

    result = iht(loss, projection, tol=1e-9, max_iter=2000)

    on_support = np.linalg.norm(loss.gradient(result.solution)[result.support])
    at_zero = np.linalg.norm(loss.gradient(np.zeros((SIDE, SIDE))))
    assert result.converged
    assert on_support <= 1e-6 * at_zero
