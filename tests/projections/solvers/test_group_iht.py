"""IHT and IHT-FC with greedy group projections (Jain, Rao & Dhillon, NIPS 2016)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from projections.groups import OverlappingGroups
from projections.solvers import LeastSquares
from projections.solvers.group_iht import group_iht, group_projection

GROUPS = OverlappingGroups.contiguous(20, 10, 3)  # p = 143
ACTIVE = (4, 5, 13)  # two neighbours sharing 3 coordinates, and one more


def planted(n_samples: int, *, noise: float = 0.0, per_group: int | None = None, seed: int = 0):
    """``(loss, w_true)``: ``w_true`` on the union of ``ACTIVE`` (on ``per_group`` coordinates
    of each when given), values ``±(0.5 + |N(0, 1)|)``; Gaussian design."""
    rng = np.random.default_rng(seed)
    w_true = np.zeros(GROUPS.n_features)
    for g in ACTIVE:
        members = GROUPS.members[g]
        if per_group is not None:
            members = rng.choice(members[3:-3], per_group, replace=False)  # in no other group
        w_true[members] = rng.choice([-1.0, 1.0], members.size) * (
            0.5 + np.abs(rng.standard_normal(members.size))
        )
    A = rng.standard_normal((n_samples, GROUPS.n_features))
    return LeastSquares(A, A @ w_true + noise * rng.standard_normal(n_samples)), w_true


def covered_by_at_most(support: np.ndarray, k: int) -> bool:
    """Brute force: some ``k`` groups cover ``support``."""
    return any(
        not np.any(support & ~GROUPS.union(chosen))
        for chosen in itertools.combinations(range(GROUPS.n_groups), k)
    )


@pytest.mark.parametrize("fully_corrective", [False, True], ids=["iht", "iht-fc"])
def test_noiseless_planted_model_is_recovered(fully_corrective):
    loss, w_true = planted(120)  # 4.4 samples per non-zero
    result = group_iht(
        loss, group_projection(GROUPS, k=3), fully_corrective=fully_corrective, step=0.8
    )
    assert result.converged
    np.testing.assert_allclose(result.solution, w_true, atol=1e-5)
    assert covered_by_at_most(result.solution != 0, 3)


def test_sparse_overlapping_groups_variant_recovers_a_model_sparse_inside_its_groups():
    loss, w_true = planted(50, per_group=3)
    result = group_iht(
        loss, group_projection(GROUPS, k=3, per_group=3), fully_corrective=True, step=0.8
    )
    assert result.converged
    np.testing.assert_allclose(result.solution, w_true, atol=1e-8)


def test_every_iterate_lies_in_at_most_k_groups():
    loss, _ = planted(40, noise=0.5)  # too few samples: the iterates wander
    seen = []
    group_iht(
        loss,
        group_projection(GROUPS, k=2),
        step=0.5,
        max_iter=15,
        callback=lambda it, w, value: seen.append(w.copy()) and False,
    )
    assert len(seen) == 15
    assert all(covered_by_at_most(w != 0, 2) for w in seen)


def test_fully_corrective_refit_solves_the_normal_equations_on_its_support():
    loss, _ = planted(60, noise=0.3, seed=3)
    result = group_iht(
        loss, group_projection(GROUPS, k=3), fully_corrective=True, step=0.5, max_iter=4
    )
    A, y = loss._A, loss._y
    S = result.support
    assert np.all(result.solution[~S] == 0)
    residual = A[:, S] @ result.solution[S] - y
    np.testing.assert_allclose(A[:, S].T @ residual, 0.0, atol=1e-9 * np.linalg.norm(y))


def test_history_records_the_objective_of_every_iterate():
    loss, _ = planted(60, noise=0.1)
    result = group_iht(loss, group_projection(GROUPS, k=3), step=0.5, max_iter=5, tol=0.0)
    assert result.status == "max_iter"
    assert result.iterations == 5
    assert result.history.shape == (6,)
    assert result.history[-1] == pytest.approx(loss.value(result.solution))
    assert result.n_projections == 5


def test_default_step_is_one_over_the_lipschitz_constant():
    loss, _ = planted(60)
    result = group_iht(loss, group_projection(GROUPS, k=3), max_iter=1)
    assert result.step == pytest.approx(1.0 / loss.lipschitz())


class _ValueAndGradientOnly:
    feature_shape = (GROUPS.n_features,)

    def value(self, w):
        return float(w @ w)

    def gradient(self, w):
        return 2 * w


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda loss: group_iht(loss, group_projection(GROUPS, k=1), step=0), ValueError, "step"),
        (
            lambda loss: group_iht(loss, group_projection(GROUPS, k=1), max_iter=-1),
            ValueError,
            "max_iter",
        ),
        (
            lambda loss: group_iht(loss, group_projection(GROUPS, k=1), fully_corrective=1),
            ValueError,
            "fully_corrective",
        ),
        (
            lambda loss: group_iht(loss, group_projection(GROUPS, k=1), w0=np.ones(3)),
            ValueError,
            "w0",
        ),
        (lambda loss: group_iht(loss, "top-k"), TypeError, "projection"),
        (lambda loss: group_projection(GROUPS, k=-1), ValueError, "k must"),
        (lambda loss: group_projection(GROUPS, k=1, per_group=0), ValueError, "per_group"),
        (lambda loss: group_projection([[0, 1]], k=1), ValueError, "groups must"),
        (
            lambda loss: group_iht(
                _ValueAndGradientOnly(), group_projection(GROUPS, k=1), fully_corrective=True
            ),
            TypeError,
            "minimize_on_support",
        ),
        (
            lambda loss: group_iht(_ValueAndGradientOnly(), group_projection(GROUPS, k=1)),
            ValueError,
            "step is required",
        ),
    ],
)
def test_bad_input_is_refused_with_an_error_naming_the_argument(call, error, name):
    loss, _ = planted(30)
    with pytest.raises(error, match=name):
        call(loss)
