"""The row-only / column-only projection the solvers take: brute force on tiny matrices."""

import itertools

import numpy as np
import pytest

from projections import TVCSStructure
from projections.solvers import LeastSquares, exclusive_groups_projection, gradmp, iht
from projections.tvcs import project


def _best_by_enumeration(v: np.ndarray, labels: np.ndarray, caps, total: int) -> float:
    """Largest ``sum(v[S] ** 2)`` over every support ``S`` within the caps (p <= 12)."""
    flat = v.reshape(-1)
    best = 0.0
    for mask in itertools.product([False, True], repeat=flat.size):
        s = np.array(mask)
        if s.sum() > total:
            continue
        if any(s[labels == g].sum() > cap for g, cap in enumerate(caps)):
            continue
        best = max(best, float(np.sum(flat[s] ** 2)))
    return best


@pytest.mark.parametrize("view", ["rows", "columns"])
@pytest.mark.parametrize("seed", range(6))
def test_the_projection_keeps_the_heaviest_feasible_support_of_a_tiny_matrix(view, seed):
    rng = np.random.default_rng(seed)
    n_rows, n_cols = (3, 4) if seed % 2 else (4, 3)
    v = rng.standard_normal((n_rows, n_cols))
    if view == "rows":
        labels, caps = np.repeat(np.arange(n_rows), n_cols), rng.integers(0, n_cols + 1, n_rows)
    else:
        labels, caps = np.tile(np.arange(n_cols), n_rows), rng.integers(0, n_rows + 1, n_cols)
    total = int(rng.integers(0, v.size + 1))

    result = exclusive_groups_projection(labels, caps, total)(v)

    s = result.support.reshape(-1)
    assert result.support.shape == v.shape
    assert s.sum() <= total
    assert all(s[labels == g].sum() <= cap for g, cap in enumerate(caps))
    np.testing.assert_array_equal(result.x, np.where(result.support, v, 0.0))
    assert result.objective == pytest.approx(_best_by_enumeration(v, labels, caps, total))


def test_the_projection_equals_the_tvcs_projection_with_the_other_view_unbounded():
    rng = np.random.default_rng(3)
    rows = rng.integers(1, 9, size=8)
    labels = np.repeat(np.arange(8), 8)
    structure = TVCSStructure.from_matrix((8, 8), max_per_row=rows, max_per_col=8, total=20)
    P = exclusive_groups_projection(labels, rows, 20)
    for _ in range(5):
        v = rng.standard_normal((8, 8))
        assert P(v).objective == pytest.approx(project(v, structure).objective, rel=1e-12)


def test_doubled_doubles_the_caps_and_the_total():
    P = exclusive_groups_projection([0, 0, 1, 1, -1], caps=[1, 0], total=2)
    D = P.doubled()
    np.testing.assert_array_equal(D.caps, [2, 0])
    assert D.total == 4
    assert np.array_equal(D.labels, P.labels)


@pytest.mark.parametrize("solver", [iht, gradmp])
def test_the_solvers_recover_a_row_exclusive_model_through_it(solver):
    rng = np.random.default_rng(0)
    w_true = np.zeros((6, 6))
    w_true[np.arange(6), rng.permutation(6)] = rng.choice([-1.0, 1.0], 6) * (1 + rng.random(6))
    A = rng.standard_normal((60, 6, 6))
    loss = LeastSquares(A, np.einsum("nij,ij->n", A, w_true))
    P = exclusive_groups_projection(np.repeat(np.arange(6), 6), caps=1, total=6)

    result = solver(loss, P)

    np.testing.assert_allclose(result.solution, w_true, atol=1e-5)


@pytest.mark.parametrize(
    ("args", "match"),
    [(([0, 1], [1]), "caps"), (([0, 1], [1, 1], -1), "total"), (([0, -2], [1]), "labels")],
)
def test_bad_arguments_raise_value_errors_naming_them(args, match):
    with pytest.raises(ValueError, match=match):
        exclusive_groups_projection(*args)


def test_a_vector_of_the_wrong_size_is_rejected():
    with pytest.raises(ValueError, match="v has 3 elements"):
        exclusive_groups_projection([0, 0], caps=1)(np.ones(3))
