"""IHT's escape from fixed points (issue 15): the stall under a TVCS projection, and its fix."""

import numpy as np
import pytest

from projections import TVCSStructure
from projections.solvers import LeastSquares, iht, tvcs_projection

SIDE = 8


@pytest.fixture
def stalling():
    """An 8 x 8 noiseless section 5.1 instance on which plain IHT (step 1/L) stalls.

    Row and column caps from U{1..8}, total 0.8 * min(sum of caps), the true support that of the
    TVCS projection of a Gaussian matrix, standard normal values, 64 Gaussian samples.
    """
    rng = np.random.default_rng(0)
    rows = rng.integers(1, SIDE + 1, SIDE)
    cols = rng.integers(1, SIDE + 1, SIDE)
    total = int(0.8 * min(rows.sum(), cols.sum()))
    structure = TVCSStructure.from_matrix(
        (SIDE, SIDE), max_per_row=rows, max_per_col=cols, total=total
    )
    projection = tvcs_projection(structure)
    support = projection(rng.standard_normal((SIDE, SIDE))).support
    w_true = np.zeros((SIDE, SIDE))
    w_true[support] = rng.standard_normal(int(support.sum()))
    A = rng.standard_normal((SIDE * SIDE, SIDE, SIDE))
    loss = LeastSquares(A, np.einsum("nij,ij->n", A, w_true))
    return loss, projection, w_true


def test_plain_iht_stops_at_a_fixed_point_with_a_worse_loss_than_a_feasible_support(stalling):
    loss, projection, w_true = stalling

    # plain Algorithm 1: the constant step 1/L, no escape
    result = iht(loss, projection, step=1.0 / loss.lipschitz(), escape=0, tol=1e-10, max_iter=2000)

    assert result.converged
    # a fixed point: one more step leaves the support where it is ...
    step = result.step
    again = projection(result.solution - step * loss.gradient(result.solution))
    assert np.array_equal(again.support, result.support)
    # ... although the true (feasible) support fits the data exactly and this one does not.
    assert not np.array_equal(result.support, w_true != 0)
    assert result.objective > 1e-3
    assert loss.value(w_true) < 1e-20


def test_iht_escapes_the_fixed_point_and_recovers_the_true_support(stalling):
    loss, projection, w_true = stalling

    result = iht(loss, projection)

    assert result.converged
    assert np.array_equal(result.support, w_true != 0)
    assert np.linalg.norm(result.solution - w_true) < 1e-8 * np.linalg.norm(w_true)
    assert result.details["escapes"] > 0


def test_iht_with_escapes_never_increases_the_loss(stalling):
    loss, projection, _ = stalling

    history = iht(loss, projection, step=1.0 / loss.lipschitz()).history

    assert np.all(np.diff(history) <= 1e-12 * history[0])


def test_iht_escapes_without_debiasing_when_the_loss_cannot_minimise_on_a_support(stalling):
    loss, projection, _ = stalling

    class GradientOnly:
        feature_shape = loss.feature_shape
        value = staticmethod(loss.value)
        gradient = staticmethod(loss.gradient)
        lipschitz = staticmethod(loss.lipschitz)

    step = 1.0 / loss.lipschitz()
    plain = iht(GradientOnly(), projection, step=step, escape=0, tol=1e-10, max_iter=2000)
    escaped = iht(GradientOnly(), projection, step=step, tol=1e-10, max_iter=2000)

    assert escaped.objective < 1e-3 * plain.objective


def test_iht_rejects_a_negative_escape(stalling):
    loss, projection, _ = stalling

    with pytest.raises(ValueError, match="escape"):
        iht(loss, projection, escape=-1)
