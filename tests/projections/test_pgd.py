"""Tests of ``method="pgd"``, the paper's §4.2 projected gradient on problem (7)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from projections._pgd import _round_and_repair
from projections.structure import TVCSStructure
from projections.tvcs import project, project_matrix


def lp_optimum(v, structure: TVCSStructure) -> float:
    """Optimum of LP (5), max <v**2, x> s.t. A x <= s, 0 <= x <= 1, by HiGHS."""
    w = np.square(np.asarray(v, dtype=float).ravel())
    p = structure.n_elements
    rows, cols = [np.zeros(p, dtype=int)], [np.arange(p)]
    offset = 1
    for labels, caps in (
        (structure.labels1, structure.caps1),
        (structure.labels2, structure.caps2),
    ):
        member = np.flatnonzero(labels >= 0)
        rows.append(offset + labels[member])
        cols.append(member)
        offset += caps.shape[0]
    r, c = np.concatenate(rows), np.concatenate(cols)
    A = sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=(offset, p))
    b = np.concatenate([[structure.total], structure.caps1, structure.caps2]).astype(float)
    res = linprog(-w, A_ub=A, b_ub=b, bounds=(0, 1), method="highs")
    assert res.status == 0, res.message
    return -res.fun


def random_matrix_instance(seed: int, shape=(4, 5), zero_fraction=0.0):
    rng = np.random.default_rng(seed)
    n_rows, n_cols = shape
    V = rng.standard_normal(shape) * (rng.random(shape) >= zero_fraction)
    max_per_row = rng.integers(0, n_cols + 1, n_rows)
    max_per_col = rng.integers(0, n_rows + 1, n_cols)
    total = int(rng.integers(0, n_rows * n_cols + 1))
    return V, max_per_row, max_per_col, total


def random_labelled_instance(seed: int, p=18):
    """A general TVCS where some elements belong to no group of a view (label -1)."""
    rng = np.random.default_rng(seed)
    labels1 = rng.integers(-1, 4, p)
    labels2 = rng.integers(-1, 5, p)
    structure = TVCSStructure.from_labels(
        labels1,
        labels2,
        caps1=rng.integers(0, 4, 4),
        caps2=rng.integers(0, 3, 5),
        total=int(rng.integers(1, p)),
    )
    return rng.standard_normal(p), structure


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize(("max_iter", "check_every"), [(0, 50), (7, 1), (300, 3), (3000, 50)])
def test_pgd_result_is_always_feasible(seed, max_iter, check_every):
    V, rows, cols, total = random_matrix_instance(seed)
    res = project_matrix(
        V,
        max_per_row=rows,
        max_per_col=cols,
        total=total,
        method="pgd",
        max_iter=max_iter,
        check_every=check_every,
    )
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    assert structure.is_feasible(res.support), structure.violations(res.support)
    assert res.support.shape == V.shape
    np.testing.assert_array_equal(res.x, np.where(res.support, V, 0.0))
    assert res.iterations <= max_iter


@pytest.mark.parametrize("seed", range(6))
def test_pgd_result_is_feasible_on_a_general_structure_with_ungrouped_elements(seed):
    v, structure = random_labelled_instance(seed)
    res = project(v, structure, method="pgd", max_iter=3000, accelerated=bool(seed % 2))
    assert structure.is_feasible(res.support), structure.violations(res.support)
    if res.optimal:
        assert res.objective == pytest.approx(lp_optimum(v, structure), rel=1e-8)


@pytest.mark.parametrize("seed", range(6))
def test_pgd_never_selects_zero_weight_elements(seed):
    V, _, _, _ = random_matrix_instance(seed, zero_fraction=0.5)
    # Loose caps: nothing but the zero weights themselves keeps an element out.
    res = project_matrix(V, max_per_row=5, max_per_col=4, method="pgd", max_iter=2000)
    assert not np.any(res.support & (V == 0))


@pytest.mark.slow
@pytest.mark.parametrize("accelerated", [False, True])
def test_pgd_claims_optimality_only_at_the_lp_optimum(accelerated):
    n_optimal = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        V = rng.standard_normal((4, 5))
        rows, cols = rng.integers(1, 4, 4), rng.integers(1, 3, 5)
        total = int(0.8 * min(rows.sum(), cols.sum()))
        res = project_matrix(
            V,
            max_per_row=rows,
            max_per_col=cols,
            total=total,
            method="pgd",
            accelerated=accelerated,
        )
        structure = TVCSStructure.from_matrix(
            V.shape, max_per_row=rows, max_per_col=cols, total=total
        )
        reference = lp_optimum(V, structure)
        assert res.objective <= reference * (1 + 1e-9)
        assert res.optimal == res.converged
        if res.optimal:
            n_optimal += 1
            assert res.objective == pytest.approx(reference, rel=1e-8)
            assert res.details["stopped"] == "converged"
            assert res.details["duality_gap"] <= 1e-9  # pgd's default tol
    # The tests above would be vacuous if pgd never finished on these tiny instances.
    assert n_optimal >= (6 if accelerated else 4)


@pytest.mark.parametrize("seed", range(3))
def test_pgd_keeps_everything_when_caps_are_loose(seed):
    # Magnitudes in [1, 2]: x_i moves at a speed proportional to v_i ** 2 in (7), so an
    # entry near zero would keep plain PGD busy far beyond its default max_iter.
    rng = np.random.default_rng(seed)
    V = rng.choice([-1.0, 1.0], (4, 5)) * rng.uniform(1.0, 2.0, (4, 5))
    res = project_matrix(V, max_per_row=5, max_per_col=4, total=20, method="pgd")
    assert res.support.all()
    assert res.optimal
    assert res.converged
    np.testing.assert_array_equal(res.x, V)


def test_pgd_selects_nothing_when_every_weight_is_zero():
    res = project_matrix(np.zeros((3, 4)), max_per_row=2, max_per_col=2, method="pgd")
    assert not res.support.any()
    assert res.optimal


def test_pgd_reports_an_unfinished_run_as_neither_converged_nor_optimal():
    V, rows, cols, total = random_matrix_instance(1)
    res = project_matrix(
        V, max_per_row=rows, max_per_col=cols, total=total, method="pgd", max_iter=10
    )
    assert res.iterations == 10
    assert not res.converged
    assert not res.optimal
    assert res.details["stopped"] == "max_iter"
    assert res.status == "max_iter"  # SolverResult's word for it
    assert res.details["duality_gap"] > 1e-9  # above pgd's default tol


def test_pgd_stops_at_the_time_limit():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((20, 40))
    res = project_matrix(
        V,
        max_per_row=rng.integers(1, 10, 20),
        max_per_col=rng.integers(1, 5, 40),
        total=60,
        method="pgd",
        max_iter=10**9,
        time_limit=0.2,
    )
    assert res.details["stopped"] == "time_limit"
    assert res.status == "time_limit"
    assert res.seconds < 2.0
    assert not res.optimal


def test_pgd_is_reproducible_and_leaves_its_inputs_untouched():
    V, rows, cols, total = random_matrix_instance(5)
    copies = [a.copy() for a in (V, rows, cols)]
    first = project_matrix(
        V, max_per_row=rows, max_per_col=cols, total=total, method="pgd", max_iter=500, seed=7
    )
    second = project_matrix(
        V,
        max_per_row=rows,
        max_per_col=cols,
        total=total,
        method="pgd",
        max_iter=500,
        seed=7,
        warm_start=first.warm_start,
    )
    for original, copy in zip((V, rows, cols), copies, strict=True):
        np.testing.assert_array_equal(original, copy)
    np.testing.assert_array_equal(first.support, second.support)
    assert (first.iterations, first.details) == (second.iterations, second.details)


def test_repair_drops_the_lightest_elements_of_over_cap_groups():
    # 2 x 3 matrix, everything rounded in; row caps (1, 3), column caps 1, total 2.
    structure = TVCSStructure.from_matrix((2, 3), max_per_row=[1, 3], max_per_col=1, total=2)
    w = np.array([1.0, 5.0, 2.0, 4.0, 3.0, 6.0])
    chosen, was_feasible = _round_and_repair(np.ones(6), np.arange(6), structure, w)
    assert not was_feasible
    # Row 0 keeps 5.0; columns keep (4.0 | 5.0 | 6.0); the total keeps 6.0 and 5.0.
    np.testing.assert_array_equal(chosen, [1, 5])
    assert structure.is_feasible(np.isin(np.arange(6), chosen))


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("max_iter", -1, "max_iter must be a non-negative integer"),
        ("max_iter", 2.5, "max_iter must be a non-negative integer"),
        ("time_limit", 0, "time_limit must be a positive number"),
        ("time_limit", float("nan"), "time_limit must be a positive number"),
        ("tol", -1e-3, r"tol must be a relative duality-gap tolerance in \[0, 1\)"),
        ("tol", 1.0, r"tol must be a relative duality-gap tolerance in \[0, 1\)"),
        ("seed", -3, "seed must be a non-negative integer or None"),
        ("check_every", 0, "check_every must be a positive integer"),
        ("accelerated", "yes", "accelerated must be True or False"),
    ],
)
def test_pgd_rejects_invalid_options(option, value, match):
    with pytest.raises(ValueError, match=match):
        project_matrix(
            np.ones((2, 2)), max_per_row=1, max_per_col=1, method="pgd", **{option: value}
        )


@pytest.mark.parametrize("scale", [10.0, 100.0, 1e-3])
def test_pgd_finds_the_same_support_whatever_the_scale_of_v(scale):
    # unscaled weights made the step depend on ||v||: 10 V stalled on an empty support
    V = np.random.default_rng(0).standard_normal((4, 5))
    kwargs = {"max_per_row": 2, "max_per_col": 1, "total": 3, "method": "pgd"}
    reference = project_matrix(V, **kwargs)
    scaled = project_matrix(scale * V, **kwargs)
    assert reference.optimal
    assert scaled.optimal
    np.testing.assert_array_equal(scaled.support, reference.support)


def test_pgd_selects_every_element_when_no_cap_binds():
    V = np.random.default_rng(0).standard_normal((4, 5))
    result = project_matrix(V, max_per_row=10, max_per_col=10, method="pgd")
    assert result.optimal
    assert result.support.all()
