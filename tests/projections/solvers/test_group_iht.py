"""IHT and IHT-FC with greedy group projections (Jain, Rao & Dhillon, NIPS 2016)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.signal import lfilter
from sum_of_squares import SumOfSquares

from projections.groups import OverlappingGroups
from projections.solvers import LeastSquares
from projections.solvers.group_iht import group_iht, group_projection

GROUPS = OverlappingGroups.contiguous(20, 10, 3)  # p = 143
MINIMAL_LOSS = SumOfSquares(GROUPS.n_features)  # no lipschitz(), no refit
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


def test_a_given_step_is_kept_constant():
    loss, _ = planted(60)
    result = group_iht(loss, group_projection(GROUPS, k=3), step=0.3, max_iter=5, tol=0.0)
    assert result.step == 0.3
    assert result.details["step_rule"] == "constant"


class _CountingLipschitz(LeastSquares):
    """Least squares that counts its ``lipschitz()`` calls (a power iteration each, which at
    the paper's scale costs longer than the whole IHT-FC run)."""

    calls = 0

    def lipschitz(self) -> float:
        type(self).calls += 1
        return super().lipschitz()


@pytest.mark.parametrize("fully_corrective", [False, True], ids=["iht", "iht-fc"])
def test_a_given_step_never_computes_the_lipschitz_constant(fully_corrective):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((60, GROUPS.n_features))
    counting = _CountingLipschitz(A, A @ rng.standard_normal(GROUPS.n_features))
    _CountingLipschitz.calls = 0
    group_iht(
        counting, group_projection(GROUPS, k=3), fully_corrective=fully_corrective, step=0.3,
        max_iter=5,
    )  # fmt: skip
    assert _CountingLipschitz.calls == 0
    group_iht(counting, group_projection(GROUPS, k=3), fully_corrective=fully_corrective)
    assert _CountingLipschitz.calls >= 1  # the adaptive step's floor does need it


def correlated(n_samples: int, *, seed: int, rho: float = 0.75):
    """``(loss, w_true, groups)``: 4 active groups of 40 (10 features, overlap 3), features
    with an AR(1) covariance ``rho^|i-j|`` (condition number about ``((1 + rho) / (1 -
    rho))^2``, 49 for the default ``rho``), noise 0.01."""
    groups = OverlappingGroups.contiguous(40, 10, 3)
    p = groups.n_features
    rng = np.random.default_rng(seed)
    w_true = np.zeros(p)
    union = groups.union(rng.choice(groups.n_groups, 4, replace=False))
    w_true[union] = rng.uniform(-1, 1, union.sum())
    e = rng.standard_normal((n_samples, p))
    e[:, 0] /= np.sqrt(1 - rho**2)
    X = lfilter([np.sqrt(1 - rho**2)], [1.0, -rho], e, axis=1)
    return LeastSquares(X, X @ w_true + 0.01 * rng.standard_normal(n_samples)), w_true, groups


def relative_error(w, w_true) -> float:
    return float(np.linalg.norm(w - w_true) / np.linalg.norm(w_true))


def test_on_correlated_features_the_default_step_recovers_where_one_over_l_stalls():
    """Theorem 3.1's step is 1 / L over group-sparse directions, not over all of them."""
    adaptive, constant = [], []
    for seed in range(6):
        loss, w_true, groups = correlated(250, seed=seed)
        projection = group_projection(groups, k=4)
        default = group_iht(loss, projection, max_iter=500)
        assert default.details["step_rule"] == "adaptive"
        assert default.step >= 1.0 / loss.lipschitz()
        adaptive.append(relative_error(default.solution, w_true))
        fixed = group_iht(loss, projection, step=1.0 / loss.lipschitz(), max_iter=500)
        constant.append(relative_error(fixed.solution, w_true))
    assert max(adaptive) < 0.01  # the noise level: w* recovered on every seed
    assert sum(e > 0.1 for e in constant) >= 4  # 1 / L ends far from w* on most


def test_iht_fc_escapes_the_first_support_where_the_refit_makes_it_a_fixed_point():
    """After a refit the gradient vanishes on the support, so a short step keeps it."""
    default, plain, escapes = [], [], 0
    for seed in range(6):
        loss, w_true, groups = correlated(250, seed=seed)
        projection = group_projection(groups, k=4)
        result = group_iht(loss, projection, fully_corrective=True)
        default.append(relative_error(result.solution, w_true))
        escapes += result.details["escapes"]
        paper = group_iht(
            loss, projection, fully_corrective=True, step=1.0 / loss.lipschitz(), escape=0
        )
        assert paper.details["escapes"] == 0
        plain.append(relative_error(paper.solution, w_true))
    assert max(default) < 0.01
    assert escapes >= 1
    assert sum(e > 0.1 for e in plain) >= 4


@pytest.mark.parametrize("fully_corrective", [False, True], ids=["iht", "iht-fc"])
def test_every_adaptive_step_passes_the_quadratic_upper_bound_test(fully_corrective):
    """``f(x) <= f(w) + <g, x - w> + ||x - w||^2 / (2 step)`` for ``x = P(w - step g)``, the
    projection the rule accepted (IHT-FC then refits on its support)."""
    loss, _, groups = correlated(150, seed=1)
    inner = group_projection(groups, k=4)
    calls = []  # (v, P(v)) of every projection
    starts = [np.zeros(groups.n_features)]  # w_0, w_1, ...
    accepted = []  # index of each iteration's last projection: the accepted one

    def projection(v):
        result = inner(v)
        calls.append((v.copy(), result.x.copy()))
        return result

    def callback(it, w, value):
        starts.append(w.copy())
        accepted.append(len(calls) - 1)

    result = group_iht(  # no escape: its candidates are longer steps, tried after the rule
        loss, projection, fully_corrective=fully_corrective, max_iter=30, callback=callback,
        escape=0,
    )  # fmt: skip
    assert result.iterations >= 2
    for w, k in zip(starts[:-1], accepted, strict=True):
        v, x = calls[k]
        g = loss.gradient(w)
        step = float(np.median((w - v)[g != 0] / g[g != 0]))
        assert step >= 1.0 / loss.lipschitz() * (1 - 1e-9)
        d = x - w
        bound = loss.value(w) + g @ d + d @ d / (2 * step)
        assert loss.value(x) <= bound + 1e-9 * max(1.0, abs(bound))


def test_a_loss_without_lipschitz_gets_the_adaptive_step_from_its_curvature():
    result = group_iht(MINIMAL_LOSS, group_projection(GROUPS, k=2), w0=W0)
    assert result.details["step_rule"] == "adaptive"
    assert result.objective < 1e-10  # the minimiser, 0, is 2-group sparse


W0 = np.where(GROUPS.union([0, 7]), 1.0, 0.0)  # a 2-group sparse start


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
        (
            lambda loss: group_iht(loss, group_projection(GROUPS, k=1), escape=-1),
            ValueError,
            "escape",
        ),
        (lambda loss: group_projection(GROUPS, k=-1), ValueError, "k must"),
        (lambda loss: group_projection(GROUPS, k=1, per_group=0), ValueError, "per_group"),
        (lambda loss: group_projection([[0, 1], []], k=1), ValueError, r"groups\[1\] must"),
        (
            lambda loss: group_iht(
                MINIMAL_LOSS, group_projection(GROUPS, k=1), fully_corrective=True
            ),
            TypeError,
            "minimize_on_support",
        ),
    ],
)
def test_bad_input_is_refused_with_an_error_naming_the_argument(call, error, name):
    loss, _ = planted(30)
    with pytest.raises(error, match=name):
        call(loss)


def test_group_projection_takes_groups_as_a_list_of_index_lists_as_documented():
    listed = group_projection([[0, 1], [1, 2]], k=1)(np.arange(3.0))
    built = group_projection(OverlappingGroups([[0, 1], [1, 2]], 3), k=1)(np.arange(3.0))
    np.testing.assert_array_equal(listed.support, built.support)
    assert listed.support.tolist() == [False, True, True]


def test_group_projection_over_more_coordinates_than_the_groups_reach_takes_n_features():
    result = group_projection([[0, 1]], k=1, n_features=4)(np.array([1.0, 2.0, 3.0, 4.0]))
    assert result.support.tolist() == [True, True, False, False]
    with pytest.raises(ValueError, match="n_features must not be given with an OverlappingGroups"):
        group_projection(OverlappingGroups([[0, 1]], 2), k=1, n_features=2)
