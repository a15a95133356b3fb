"""Exclusive LASSO over overlapping groups (rows and columns): the iterative prox and FISTA with
it, against numerical minimisers, the closed form and the optimality conditions."""

import numpy as np
import pytest
from scipy.optimize import minimize

from projections.groups import OverlappingGroups
from projections.solvers import (
    LeastSquares,
    SquaredHinge,
    exclusive_lasso,
    exclusive_lasso_penalty,
    prox_exclusive_lasso,
    prox_exclusive_lasso_overlapping,
    views_from_groups,
)
from projections.solvers.exclusive_lasso import _prox_views


def _rows_and_columns(n_rows: int, n_cols: int):
    rows = np.repeat(np.arange(n_rows), n_cols)
    cols = np.tile(np.arange(n_cols), n_rows)
    return rows, cols


def _groups_of(*views) -> list[np.ndarray]:
    return [np.flatnonzero(lab == g) for lab in views for g in range(lab.max(initial=-1) + 1)]


def _numerical_minimiser(smooth, grad, p: int, groups, lam: float) -> np.ndarray:
    """``argmin smooth(w) + lam/2 sum_g ||w_g||_1^2`` over any (overlapping) ``groups`` by
    L-BFGS-B on ``w = a - b``, ``a, b >= 0``: smooth with bounds, slow and obviously correct."""

    def fun(ab):
        a, b = ab[:p], ab[p:]
        sums = np.array([np.sum(a[g] + b[g]) for g in groups])
        gw = grad(a - b)
        gpen = np.zeros(p)
        for g, s in zip(groups, sums, strict=True):
            gpen[g] += lam * s
        value = smooth(a - b) + 0.5 * lam * float(sums @ sums)
        return value, np.concatenate([gw + gpen, -gw + gpen])

    res = minimize(
        fun,
        np.zeros(2 * p),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * (2 * p),
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20_000},
    )
    return res.x[:p] - res.x[p:]


def _group_sums_per_entry(w, views) -> np.ndarray:
    """``sum_{g ∋ i} ||w_g||_1`` for every coefficient ``i``."""
    flat, out = np.abs(np.ravel(w)), np.zeros(np.size(w))
    for lab in views:
        grouped = lab >= 0
        sums = np.bincount(lab[grouped], weights=flat[grouped])
        out[grouped] += sums[lab[grouped]]
    return out


@pytest.mark.parametrize("lam", [0.05, 0.4, 2.0])
@pytest.mark.parametrize("seed", range(4))
def test_the_rows_and_columns_prox_equals_a_numerical_minimiser(seed, lam):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((3, 4)) * 2
    views = _rows_and_columns(3, 4)

    def smooth(x):
        return 0.5 * float(np.sum((x - v.ravel()) ** 2))

    expected = _numerical_minimiser(smooth, lambda x: x - v.ravel(), 12, _groups_of(*views), lam)
    x, info = prox_exclusive_lasso_overlapping(v, views, lam, tol=1e-10, full_output=True)

    assert info["converged"]
    assert x.shape == (3, 4)
    np.testing.assert_allclose(x.ravel(), expected, atol=1e-6)
    # the duality gap certifies the distance to the true prox
    assert np.linalg.norm(x.ravel() - expected) <= np.sqrt(2 * info["gap"]) + 1e-6


@pytest.mark.parametrize("seed", range(3))
def test_the_prox_of_general_overlapping_groups_equals_a_numerical_minimiser(seed):
    rng = np.random.default_rng(seed)
    groups = OverlappingGroups.contiguous(4, 4, 2)  # a chain: 10 coefficients, 2 views
    v = rng.standard_normal(groups.n_features) * 2
    views = views_from_groups(groups)
    assert len(views) == 2

    def smooth(x):
        return 0.5 * float(np.sum((x - v) ** 2))

    expected = _numerical_minimiser(smooth, lambda x: x - v, v.size, groups.members, 0.3)
    np.testing.assert_allclose(
        prox_exclusive_lasso_overlapping(v, groups, 0.3, tol=1e-10), expected, atol=1e-6
    )
    np.testing.assert_allclose(
        prox_exclusive_lasso_overlapping(v, views, 0.3, tol=1e-10), expected, atol=1e-6
    )


def test_the_prox_satisfies_its_soft_threshold_fixed_point_equation():
    rng = np.random.default_rng(7)
    v = rng.standard_normal((6, 5))
    views = _rows_and_columns(6, 5)
    lam = 0.3
    x = prox_exclusive_lasso_overlapping(v, views, lam, tol=1e-12)
    # x_i = sign(v_i) max(|v_i| - lam (||x_row||_1 + ||x_col||_1), 0)
    tau = lam * (np.abs(x).sum(axis=1, keepdims=True) + np.abs(x).sum(axis=0, keepdims=True))
    np.testing.assert_allclose(x, np.sign(v) * np.maximum(np.abs(v) - tau, 0.0), atol=1e-10)


@pytest.mark.parametrize("lam", [0.1, 1.0, 5.0])
def test_with_one_view_trivial_it_is_exactly_the_closed_form(lam):
    rng = np.random.default_rng(3)
    v = rng.standard_normal((5, 7))
    rows, _ = _rows_and_columns(5, 7)
    none = np.full(35, -1)
    closed = prox_exclusive_lasso(v, rows, lam)

    for views in ((rows, none), (none, rows), (rows,)):
        x, info = prox_exclusive_lasso_overlapping(v, views, lam, full_output=True)
        np.testing.assert_array_equal(x, closed)
        assert info["converged"]
    # and the columns alone give the closed form on the transposed matrix
    _, cols = _rows_and_columns(5, 7)
    np.testing.assert_array_equal(
        prox_exclusive_lasso_overlapping(v, (none, cols), lam),
        prox_exclusive_lasso(v.T, rows.reshape(7, 5) * 0 + np.arange(7)[:, None], lam).T,
    )


def test_lam_zero_and_zero_input_are_left_alone():
    views = _rows_and_columns(2, 3)
    v = np.arange(6.0).reshape(2, 3) - 2
    np.testing.assert_array_equal(prox_exclusive_lasso_overlapping(v, views, 0.0), v)
    np.testing.assert_array_equal(
        prox_exclusive_lasso_overlapping(np.zeros(6), views, 1.0), np.zeros(6)
    )


def test_any_warm_start_reaches_the_same_prox():
    rng = np.random.default_rng(11)
    v = rng.standard_normal(20)
    views = _rows_and_columns(4, 5)
    cold, *_ = _prox_views(v, views, 0.5, None, 1e-11, 10_000)
    duals = [rng.standard_normal(20) * (lab >= 0) for lab in views]
    warm, _, _gap, _, converged = _prox_views(v, views, 0.5, duals, 1e-11, 10_000)
    assert converged
    np.testing.assert_allclose(warm, cold, atol=1e-9)


def test_running_out_of_sweeps_warns_and_reports_the_gap():
    rng = np.random.default_rng(2)
    v = rng.standard_normal((8, 8))
    with pytest.warns(RuntimeWarning, match="duality gap"):
        _, info = prox_exclusive_lasso_overlapping(
            v, _rows_and_columns(8, 8), 3.0, tol=1e-14, max_iter=1, full_output=True
        )
    assert not info["converged"]
    assert info["gap"] > 0


def _tiny_problem(loss_cls, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((15, 3, 4))
    w_true = np.array([[1.5, 0.0, 0.0, 0.7], [0.0, -2.0, 0.5, 0.0], [0.0, 0.0, 0.0, -1.0]])
    y = np.einsum("nij,ij->n", A, w_true) + 0.1 * rng.standard_normal(15)
    if loss_cls is SquaredHinge:
        y = np.where(y >= 0, 1.0, -1.0)
    return loss_cls(A, y), _rows_and_columns(3, 4)


@pytest.mark.parametrize("loss_cls", [LeastSquares, SquaredHinge])
@pytest.mark.parametrize("lam", [0.05, 0.5])
def test_the_solver_meets_the_subgradient_optimality_conditions(loss_cls, lam):
    loss, views = _tiny_problem(loss_cls)
    result = exclusive_lasso(loss, *views, lam=lam, max_iter=20_000, tol=1e-12)
    w = result.solution
    grad = loss.gradient(w).ravel()
    level = lam * _group_sums_per_entry(w, views)  # lam * sum_{g ∋ i} ||w_g||_1
    nz = w.ravel() != 0

    assert result.converged
    assert result.details["n_views"] == 2
    assert result.details["prox_unconverged"] == 0
    assert nz.any()
    assert not nz.all()
    np.testing.assert_allclose(-grad[nz], level[nz] * np.sign(w.ravel()[nz]), atol=1e-7)
    assert np.all(np.abs(grad[~nz]) <= level[~nz] + 1e-7)

    expected = _numerical_minimiser(
        lambda x: loss.value(x.reshape(3, 4)),
        lambda x: loss.gradient(x).reshape(-1),
        12,
        _groups_of(*views),
        lam,
    )
    np.testing.assert_allclose(w.ravel(), expected, atol=1e-5)
    assert result.objective == pytest.approx(
        loss.value(w) + lam * exclusive_lasso_penalty(w, *views)
    )


def test_two_views_penalise_more_than_rows_alone_and_the_objective_never_increases():
    loss, views = _tiny_problem(LeastSquares, seed=4)
    both = exclusive_lasso(loss, *views, lam=1.0, max_iter=300)
    rows = exclusive_lasso(loss, views[0], lam=1.0, max_iter=300)
    history = both.history
    assert np.all(np.diff(history) <= 1e-12 * np.abs(history[:-1]))
    assert np.abs(both.solution).sum() < np.abs(rows.solution).sum()
    assert rows.details == {"n_views": 1, "returned_iteration": rows.iterations}


def test_the_solver_with_one_trivial_view_is_the_rows_only_solver_exactly():
    loss, (rows, _) = _tiny_problem(LeastSquares, seed=2)
    none = np.full(12, -1)
    one = exclusive_lasso(loss, rows, lam=0.3)
    two = exclusive_lasso(loss, rows, none, lam=0.3)
    np.testing.assert_array_equal(two.solution, one.solution)
    np.testing.assert_array_equal(two.history, one.history)
    assert two.details["n_views"] == 1


def test_overlapping_groups_and_their_views_give_the_same_fit():
    loss, views = _tiny_problem(LeastSquares, seed=1)
    groups = OverlappingGroups(_groups_of(*views), 12)
    a = exclusive_lasso(loss, groups, lam=0.2, tol=1e-10, max_iter=5000).solution
    b = exclusive_lasso(loss, *views, lam=0.2, tol=1e-10, max_iter=5000).solution
    np.testing.assert_allclose(a, b, atol=1e-8)


def test_views_from_groups_colours_rows_and_columns_into_two_views():
    views = views_from_groups(_groups_of(*_rows_and_columns(3, 4)), 12)
    assert len(views) == 2
    np.testing.assert_array_equal(views[0], np.repeat(np.arange(3), 4))
    np.testing.assert_array_equal(views[1], np.tile(np.arange(4), 3))
    disjoint = views_from_groups([[0, 1], [3], [2, 4]], 6)
    np.testing.assert_array_equal(disjoint[0], [0, 0, 2, 1, 2, -1])
    assert len(disjoint) == 1


def test_the_penalty_sums_over_every_group_of_every_view():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4))
    views = _rows_and_columns(3, 4)
    expected = 0.5 * (np.sum(np.abs(w).sum(axis=1) ** 2) + np.sum(np.abs(w).sum(axis=0) ** 2))
    assert exclusive_lasso_penalty(w, *views) == pytest.approx(expected)
    groups = OverlappingGroups(_groups_of(*views), 12)
    assert exclusive_lasso_penalty(w, groups) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda v, views: prox_exclusive_lasso_overlapping(v, views[0], 1.0), "sequence"),
        (lambda v, views: prox_exclusive_lasso_overlapping(v, (), 1.0), "at least one"),
        (lambda v, views: prox_exclusive_lasso_overlapping(v, views, -1.0), "lam"),
        (lambda v, views: prox_exclusive_lasso_overlapping(v, views, 1.0, tol=-1), "tol"),
        (lambda v, views: prox_exclusive_lasso_overlapping(v, views, 1.0, max_iter=0), "max_iter"),
        (lambda v, views: prox_exclusive_lasso_overlapping(v * np.nan, views, 1.0), "finite"),
        (lambda v, views: prox_exclusive_lasso_overlapping(v, (views[0], [0, 1]), 1.0), "labels"),
        (
            lambda v, views: prox_exclusive_lasso_overlapping(v, (views[0], views[1] - 2), 1.0),
            ">= -1",
        ),
        (
            lambda v, views: prox_exclusive_lasso_overlapping(
                v, OverlappingGroups([[0, 1]], 5), 1.0
            ),
            "5 coefficients",
        ),
        (lambda v, views: views_from_groups([[0, 1], [1, 2]]), "n_features"),
        (lambda v, views: views_from_groups([[0, 0]], 3), "repeats"),
    ],
)
def test_bad_inputs_raise_value_errors_naming_them(call, match):
    v = np.ones((3, 4))
    with pytest.raises(ValueError, match=match):
        call(v, _rows_and_columns(3, 4))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"prox_tol": -1.0}, "prox_tol"), ({"prox_max_iter": 0}, "prox_max_iter")],
)
def test_bad_solver_arguments_raise_value_errors_naming_them(kwargs, match):
    loss, views = _tiny_problem(LeastSquares)
    with pytest.raises(ValueError, match=match):
        exclusive_lasso(loss, *views, lam=1.0, **kwargs)
    with pytest.raises(ValueError, match="at least one"):
        exclusive_lasso(loss, lam=1.0)
