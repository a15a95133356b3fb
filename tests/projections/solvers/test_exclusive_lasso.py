"""Exclusive LASSO: the closed-form prox and FISTA against numerical minimisers."""

import numpy as np
import pytest
from scipy.optimize import minimize

from projections.solvers import (
    LeastSquares,
    SquaredHinge,
    exclusive_lasso,
    exclusive_lasso_penalty,
    prox_exclusive_lasso,
    views_from_groups,
)


def _numerical_minimiser(smooth, grad, p: int, labels: np.ndarray, lam: float) -> np.ndarray:
    """``argmin smooth(w) + lam/2 sum_g ||w_g||_1^2`` by L-BFGS-B on ``w = a - b, a, b >= 0``.

    With the split, ``||w_g||_1 = sum_g (a + b)`` at the optimum, so the problem is smooth
    with bounds: an independent, slow and obviously correct reference.
    """
    groups = [labels == g for g in range(labels.max() + 1)]

    def fun(ab):
        a, b = ab[:p], ab[p:]
        sums = np.array([np.sum(a[m] + b[m]) for m in groups])
        gw = grad(a - b)
        gpen = np.zeros(p)
        for m, s in zip(groups, sums, strict=True):
            gpen[m] = lam * s
        value = smooth(a - b) + 0.5 * lam * float(sums @ sums)
        return value, np.concatenate([gw + gpen, -gw + gpen])

    res = minimize(
        fun,
        np.zeros(2 * p),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * (2 * p),
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000},
    )
    return res.x[:p] - res.x[p:]


@pytest.mark.parametrize("lam", [0.1, 0.7, 3.0])
@pytest.mark.parametrize("seed", range(5))
def test_the_prox_equals_a_numerical_minimiser_on_tiny_vectors(seed, lam):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(7) * 2
    labels = rng.integers(0, 3, size=7)

    def smooth(x):
        return 0.5 * float(np.sum((x - v) ** 2))

    expected = _numerical_minimiser(smooth, lambda x: x - v, 7, labels, lam)

    np.testing.assert_allclose(prox_exclusive_lasso(v, labels, lam), expected, atol=1e-6)


def test_the_prox_satisfies_its_soft_threshold_fixed_point_equation():
    rng = np.random.default_rng(1)
    v = rng.standard_normal((5, 6))
    labels = np.repeat(np.arange(5), 6)
    lam = 0.4
    x = prox_exclusive_lasso(v, labels, lam)
    tau = lam * np.abs(x).sum(axis=1, keepdims=True)  # lam ||x_g||_1 for each row
    np.testing.assert_allclose(x, np.sign(v) * np.maximum(np.abs(v) - tau, 0.0), atol=1e-12)
    assert np.all(np.count_nonzero(x, axis=1) >= 1)  # every non-zero group keeps its largest


def test_the_prox_leaves_ungrouped_entries_and_lam_zero_alone():
    v = np.array([3.0, -1.0, 2.0, 0.5])
    np.testing.assert_array_equal(prox_exclusive_lasso(v, [0, 0, 0, 1], 0.0), v)
    out = prox_exclusive_lasso(v, [-1, 0, 0, -1], 5.0)
    assert out[0] == 3.0
    assert out[3] == 0.5
    assert out[1] == 0.0


def _tiny_problem(loss_cls, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((15, 2, 3))
    w_true = np.array([[1.5, 0.0, 0.0], [0.0, -2.0, 0.5]])
    y = np.einsum("nij,ij->n", A, w_true) + 0.1 * rng.standard_normal(15)
    if loss_cls is SquaredHinge:
        y = np.where(y >= 0, 1.0, -1.0)
    return loss_cls(A, y), np.repeat(np.arange(2), 3)


@pytest.mark.parametrize("loss_cls", [LeastSquares, SquaredHinge])
def test_the_solver_reaches_the_numerical_minimiser_and_its_optimality_condition(loss_cls):
    loss, labels = _tiny_problem(loss_cls)
    lam = 0.3
    result = exclusive_lasso(loss, labels, lam=lam, max_iter=20_000, tol=1e-12)
    w = result.solution

    step = 1.0 / loss.lipschitz()
    np.testing.assert_allclose(
        prox_exclusive_lasso(w - step * loss.gradient(w), labels, step * lam), w, atol=1e-8
    )
    expected = _numerical_minimiser(
        lambda x: loss.value(x.reshape(2, 3)),
        lambda x: loss.gradient(x).reshape(-1),
        6,
        labels,
        lam,
    )
    np.testing.assert_allclose(w.reshape(-1), expected, atol=1e-5)
    assert result.objective == pytest.approx(
        loss.value(w) + lam * exclusive_lasso_penalty(w, labels)
    )


def test_the_objective_never_increases_along_the_run():
    loss, labels = _tiny_problem(LeastSquares, seed=3)
    history = exclusive_lasso(loss, labels, lam=1.0, max_iter=300).history
    assert np.all(np.diff(history) <= 1e-12 * np.abs(history[:-1]))


def test_a_larger_lam_selects_fewer_entries_per_row():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((80, 4, 8))
    loss = LeastSquares(A, np.einsum("nij,ij->n", A, rng.standard_normal((4, 8))))
    labels = np.repeat(np.arange(4), 8)
    counts = [
        np.count_nonzero(exclusive_lasso(loss, labels, lam=lam).solution)
        for lam in (0.0, 1.0, 20.0)
    ]
    assert counts[0] == 32
    assert counts[0] > counts[1] > counts[2] >= 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"lam": -1.0}, "lam"),
        ({"lam": 1.0, "step": 0.0}, "step"),
        ({"lam": 1.0, "max_iter": -1}, "max_iter"),
    ],
)
def test_bad_arguments_raise_value_errors_naming_them(kwargs, match):
    loss, labels = _tiny_problem(LeastSquares)
    with pytest.raises(ValueError, match=match):
        exclusive_lasso(loss, labels, **kwargs)


def test_labels_of_the_wrong_length_or_kind_are_rejected():
    with pytest.raises(ValueError, match="labels"):
        prox_exclusive_lasso(np.ones(3), [0, 1], 1.0)
    with pytest.raises(ValueError, match="labels"):
        prox_exclusive_lasso(np.ones(2), [0.5, 1.0], 1.0)


def test_a_list_of_groups_is_split_into_views_not_read_as_labels():
    w = np.array([1.0, 2.0, 3.0, 4.0])
    # the groups {0, 1} and {2, 3}: 0.5 * (3^2 + 7^2), not the labels [0, 1, 2, 3] (15.0)
    assert exclusive_lasso_penalty(w, [[0, 1], [2, 3]]) == pytest.approx(29.0)
    assert exclusive_lasso_penalty(w, [[0, 1], [1, 2, 3]]) == pytest.approx(0.5 * (9 + 81))


def test_exclusive_lasso_with_overlapping_groups_as_lists_equals_it_with_their_views():
    A = np.random.default_rng(0).standard_normal((30, 4))
    loss = LeastSquares(A, A @ np.array([1.0, 2.0, 3.0, 4.0]))
    listed = exclusive_lasso(loss, [[0, 1], [1, 2]], lam=1.0)
    views = exclusive_lasso(loss, *views_from_groups([[0, 1], [1, 2]], 4), lam=1.0)
    assert listed.details["n_views"] == 2
    np.testing.assert_allclose(listed.solution, views.solution)


def test_a_nested_list_of_the_matrix_shape_is_refused_as_ambiguous():
    with pytest.raises(ValueError, match=r"nested list of shape \(2, 2\).* is ambiguous"):
        exclusive_lasso_penalty(np.ones((2, 2)), [[0, 1], [2, 3]])
    # as an ndarray it is a label matrix: four groups of one
    assert exclusive_lasso_penalty(np.ones((2, 2)), np.array([[0, 1], [2, 3]])) == 2.0


def test_prox_labels_of_another_shape_than_v_are_refused_not_reshaped():
    with pytest.raises(ValueError, match=r"labels must be integer group labels of shape \(4,\)"):
        prox_exclusive_lasso(np.ones(4), [[0, 1], [2, 3]], 0.5)


def test_labels_that_are_large_ids_are_renumbered_not_used_as_indices():
    labels = [0, 10**12]
    np.testing.assert_allclose(prox_exclusive_lasso([1.0, 2.0], labels, 0.5), [2 / 3, 4 / 3])
    assert exclusive_lasso_penalty([1.0, 2.0], labels) == pytest.approx(2.5)


def test_complex_input_is_refused_not_truncated():
    with pytest.raises(ValueError, match=r"^v must be a real-valued .* got dtype complex128"):
        prox_exclusive_lasso(np.array([1 + 5j, 2.0]), [0, 0], 0.1)
    with pytest.raises(ValueError, match=r"^w must be a real-valued .* got dtype complex128"):
        exclusive_lasso_penalty(np.array([1j, 0.0]), [0, 0])
    with pytest.raises(ValueError, match=r"^w must be a real-valued .* got dtype complex128"):
        LeastSquares(np.eye(2), np.ones(2)).value(np.array([1j, 0.0]))
