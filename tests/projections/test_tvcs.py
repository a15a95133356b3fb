"""Every TVCS projection method against the same feasibility and optimality checks."""

from __future__ import annotations

import re

import numpy as np
import pytest
from brute_force import brute_force_optimum, highs_optimum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from projection_checks import assert_valid_projection, random_matrix_instance

from projections import ProjectionResult, TVCSStructure
from projections.tvcs import METHODS, project, project_matrix

EXACT_METHODS = ("exact", "lp")


@st.composite
def tiny_instances(draw):
    """General TVCS instances with p <= 12: ties, zeros, caps of 0 and above group sizes."""
    p = draw(st.integers(1, 12))
    n1 = draw(st.integers(1, 4))
    n2 = draw(st.integers(1, 4))
    labels1 = draw(st.lists(st.integers(-1, n1 - 1), min_size=p, max_size=p))
    labels2 = draw(st.lists(st.integers(-1, n2 - 1), min_size=p, max_size=p))
    caps1 = draw(st.lists(st.integers(0, p + 1), min_size=n1, max_size=n1))
    caps2 = draw(st.lists(st.integers(0, p + 1), min_size=n2, max_size=n2))
    total = draw(st.integers(0, p + 2))
    values = draw(
        st.lists(
            st.one_of(st.sampled_from([0.0, 1.0, -1.0, 2.0]), st.floats(-10, 10)),
            min_size=p,
            max_size=p,
        )
    )
    structure = TVCSStructure.from_labels(labels1, labels2, caps1=caps1, caps2=caps2, total=total)
    return np.array(values), structure


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance=tiny_instances())
def test_every_method_is_feasible_and_exact_methods_match_brute_force(method, instance):
    v, structure = instance
    result = project(v, structure, method=method)
    assert_valid_projection(v, structure, result)
    best = brute_force_optimum(v**2, structure)
    assert result.objective <= best * (1 + 1e-12) + 1e-12
    if method in EXACT_METHODS or result.optimal:
        # HiGHS treats costs within its 1e-7 dual feasibility tolerance as zero, so "lp" may
        # skip an element that weighs less than that (1e-8 next to a weight of 1 found by
        # Hypothesis); "exact" resolves every weight above 2**-40 of the largest.
        tiny = 1e-7 * float(np.max(v**2, initial=0.0)) if method == "lp" else 1e-12
        assert result.objective == pytest.approx(best, rel=1e-9, abs=tiny)
    if method == "exact":
        assert result.optimal


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 4),
    m=st.integers(1, 4),
    data=st.data(),
)
def test_exact_matches_brute_force_on_tiny_matrices(n, m, data):
    V = np.array(data.draw(st.lists(st.floats(-5, 5), min_size=n * m, max_size=n * m)))
    V = V.reshape(n, m)
    rows = data.draw(st.lists(st.integers(0, m + 1), min_size=n, max_size=n))
    cols = data.draw(st.lists(st.integers(0, n + 1), min_size=m, max_size=m))
    total = data.draw(st.one_of(st.none(), st.integers(0, n * m + 1)))
    result = project_matrix(V, max_per_row=rows, max_per_col=cols, total=total)
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    assert_valid_projection(V, structure, result)
    assert result.objective == pytest.approx(
        brute_force_optimum(V.ravel() ** 2, structure), rel=1e-9
    )


@pytest.mark.parametrize(
    ("n", "m", "budget_fraction", "seed"),
    [(20, 60, 0.8, 0), (20, 60, 0.1, 1), (40, 200, 0.8, 2), (40, 200, 0.3, 3), (60, 400, 0.8, 4)],
)
def test_exact_objective_equals_highs_on_medium_random_matrices(n, m, budget_fraction, seed):
    V, rows, cols, total = random_matrix_instance(
        np.random.default_rng(seed), n, m, budget_fraction
    )
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    result = project(V, structure)
    assert_valid_projection(V, structure, result)
    assert result.optimal
    assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_is_feasible_on_a_random_matrix(method):
    V, rows, cols, total = random_matrix_instance(np.random.default_rng(7), 15, 40, 0.8)
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    result = project(
        V, structure, method=method, **({"time_limit": 2.0} if method == "pgd" else {})
    )
    assert_valid_projection(V, structure, result)
    assert result.method == method


@pytest.mark.parametrize("method", METHODS)
def test_a_vector_with_feasible_support_is_returned_unchanged(method):
    rng = np.random.default_rng(3)
    V = rng.standard_normal((6, 9)) * (rng.random((6, 9)) < 0.3)
    V[0, 0] = 1e-9  # tiny but non-zero: must survive
    support = V != 0
    rows = support.sum(axis=1)
    cols = support.sum(axis=0)
    result = project_matrix(
        V, max_per_row=rows, max_per_col=cols, total=int(support.sum()), method=method
    )
    if method == "pgd" and not result.optimal:
        pytest.skip(
            f"pgd did not finish here ({result.message}); its output is only checked feasible"
        )
    np.testing.assert_array_equal(result.support, support)
    np.testing.assert_array_equal(result.x, V)


def test_exact_projection_is_idempotent():
    V, rows, cols, total = random_matrix_instance(np.random.default_rng(11), 30, 90, 0.5)
    once = project_matrix(V, max_per_row=rows, max_per_col=cols, total=total)
    twice = project_matrix(once.x, max_per_row=rows, max_per_col=cols, total=total)
    np.testing.assert_array_equal(twice.x, once.x)


def test_exact_is_deterministic_and_does_not_mutate_its_input():
    V, rows, cols, total = random_matrix_instance(np.random.default_rng(5), 25, 70, 0.8)
    V = np.round(V, 1)  # many ties
    copy = V.copy()
    first = project_matrix(V, max_per_row=rows, max_per_col=cols, total=total)
    second = project_matrix(V, max_per_row=rows, max_per_col=cols, total=total)
    np.testing.assert_array_equal(first.support, second.support)
    np.testing.assert_array_equal(V, copy)


@pytest.mark.slow
def test_exact_needs_more_than_one_candidate_round_and_still_matches_highs():
    # Large budgets leave rows unsaturated, so the cap+2 candidate graph misses entries and
    # the certificate must add them.
    V, rows, cols, total = random_matrix_instance(np.random.default_rng(0), 100, 1000, 0.8)
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    result = project(V, structure)
    assert result.details["candidate_rounds"] > 1
    assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


def test_warm_started_projection_equals_cold_projection():
    rng = np.random.default_rng(8)
    V, rows, cols, total = random_matrix_instance(rng, 40, 120, 0.6)
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    first = project(V, structure)
    nearby = V + 0.05 * rng.standard_normal(V.shape)
    cold = project(nearby, structure)
    warm = project(nearby, structure, warm_start=first.warm_start)
    assert warm.optimal
    assert warm.objective == pytest.approx(cold.objective, rel=1e-12)


@pytest.mark.parametrize("scale", [1e-12, 1e-3, 1e6])
def test_a_warm_start_from_a_vector_on_another_scale_still_gives_the_optimum(scale):
    rng = np.random.default_rng(0)
    structure = TVCSStructure.from_matrix((10, 10), max_per_row=3, max_per_col=3, total=15)
    first = project(rng.standard_normal((10, 10)), structure)
    v = scale * rng.standard_normal((10, 10))
    warm = project(v, structure, warm_start=first.warm_start)
    cold = project(v, structure)
    assert warm.optimal
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)


def test_weights_spanning_many_orders_of_magnitude_stay_exact():
    rng = np.random.default_rng(9)
    V = rng.standard_normal((8, 12)) * 10.0 ** rng.integers(-12, 6, (8, 12))
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=3, max_per_col=2, total=15)
    result = project(V, structure)
    assert_valid_projection(V, structure, result)
    assert result.objective == pytest.approx(highs_optimum(V.ravel() ** 2, structure), rel=1e-9)


@pytest.mark.parametrize("scale", [1e-15, 1e12])
def test_lp_gives_the_same_support_whatever_the_scale_of_v(scale):
    """HiGHS' tolerances are absolute: at v ~ 1e-15 every weight used to look like zero."""
    V, rows, cols, total = random_matrix_instance(np.random.default_rng(8), 12, 30, 0.5)
    structure = TVCSStructure.from_matrix(V.shape, max_per_row=rows, max_per_col=cols, total=total)
    unit = project(V, structure, method="lp")
    scaled = project(V * scale, structure, method="lp")
    assert scaled.optimal
    assert scaled.objective == pytest.approx(unit.objective * scale**2, rel=1e-9)


def test_unknown_method_error_lists_the_valid_choices():
    structure = TVCSStructure.from_matrix((2, 2), max_per_row=1, max_per_col=1)
    with pytest.raises(ValueError, match="'exact', 'lp', 'pgd', 'greedy'"):
        project(np.ones(4), structure, method="simplex")


@pytest.mark.parametrize(
    ("v", "message"),
    [
        (np.ones(5), r"shape \(5,\)"),
        (np.array([1.0, np.nan, 0, 1]), "finite"),
        (np.array([1.0, np.inf, 0, 1]), "finite"),
        (np.array(["a", "b", "c", "d"]), "real-valued"),
    ],
)
@pytest.mark.parametrize("method", ["exact", "greedy"])
def test_bad_vectors_are_rejected_with_a_clear_message(v, message, method):
    # "exact" checks finiteness in its own first pass, the other methods before solving
    structure = TVCSStructure.from_matrix((2, 2), max_per_row=1, max_per_col=1)
    with pytest.raises(ValueError, match=message):
        project(v, structure, method=method)


@pytest.mark.parametrize("method", ["exact", "greedy"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int16])
def test_other_dtypes_give_the_float64_support_and_keep_their_dtype(method, dtype):
    # "exact" squares v itself (no weights array): the same weights as np.square in float64
    rng = np.random.default_rng(7)
    V = (rng.standard_normal((15, 40)) * 50).astype(dtype)
    kwargs = {"max_per_row": 6, "max_per_col": 3, "total": 50, "method": method}
    result = project_matrix(V, **kwargs)
    reference = project_matrix(V.astype(np.float64), **kwargs)
    assert result.x.dtype == dtype
    np.testing.assert_array_equal(result.support, reference.support)
    np.testing.assert_array_equal(result.x, np.where(result.support, V, 0))
    assert result.objective == pytest.approx(
        float(np.square(V[result.support], dtype=np.float64).sum()), rel=1e-12
    )


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_exact_rejects_non_finite_values_on_a_general_structure(bad):
    structure = TVCSStructure.from_labels(
        [0, 0, 1, -1], [0, 1, -1, 0], caps1=[1, 1], caps2=[1, 1], total=2
    )
    with pytest.raises(ValueError, match="finite"):
        project(np.array([1.0, 2.0, bad, 0.5]), structure)


def test_a_projection_has_a_status_in_the_solvers_words():
    rng = np.random.default_rng(3)
    V = rng.standard_normal((6, 8))
    done = project_matrix(V, max_per_row=2, max_per_col=2, total=9, method="exact")
    assert done.converged
    assert done.status == "converged"
    unfinished = ProjectionResult(
        x=V, support=V > 0, objective=0.0, method="x", optimal=False, converged=False
    )
    assert unfinished.status == "max_iter"  # ran out without saying more
    stopped = ProjectionResult(
        x=V,
        support=V > 0,
        objective=0.0,
        method="x",
        optimal=False,
        converged=False,
        details={"stopped": "time_limit"},
    )
    assert stopped.status == "time_limit"


@pytest.mark.parametrize(
    ("method", "option", "message"),
    [
        ("exact", "time_limit", "method 'exact' takes no option; got time_limit"),
        ("lp", "max_iter", "method 'lp' takes time_limit; got max_iter"),
    ],
)
def test_an_option_the_method_does_not_take_is_refused_naming_what_it_takes(
    method, option, message
):
    with pytest.raises(ValueError, match=re.escape(message)):
        project_matrix(np.ones((2, 2)), max_per_row=1, max_per_col=1, method=method, **{option: 1})


@pytest.mark.parametrize("method", ["exact", "greedy", "lp"])
@pytest.mark.parametrize("dtype", [np.float16, np.longdouble, ">f8", ">i4", "<u2"])
def test_real_dtypes_the_kernels_cannot_type_are_converted_at_the_edge(method, dtype):
    V = (np.random.default_rng(0).standard_normal((4, 5)) * 20).astype(dtype)
    kwargs = {"max_per_row": 2, "max_per_col": 1, "total": 3, "method": method}
    result = project_matrix(V, **kwargs)
    reference = project_matrix(V.astype(np.float64), **kwargs)
    np.testing.assert_array_equal(result.support, reference.support)
    assert result.x.dtype.isnative


@pytest.mark.parametrize("dtype", ["m8[s]", "M8[D]", bool, complex, object])
def test_values_that_are_not_real_numbers_are_refused_naming_v_and_the_dtype(dtype):
    V = np.ones((2, 2)).astype(dtype)
    with pytest.raises(
        ValueError,
        match=f"^v must be a real-valued .* got dtype {re.escape(str(np.dtype(dtype)))}$",
    ):
        project_matrix(V, max_per_row=1, max_per_col=1)


@pytest.mark.parametrize("cap", [1e30, 2.0**63, np.iinfo(np.int64).max, 2**70])
def test_a_huge_cap_keeps_everything_the_other_caps_allow(cap):
    V = np.random.default_rng(0).standard_normal((3, 4))
    result = project_matrix(V, max_per_row=cap, max_per_col=1)
    assert result.optimal
    assert int(result.support.sum()) == 4


@pytest.mark.parametrize("time_limit", ["1", True, float("nan"), 0, -1.0])
def test_lp_refuses_a_time_limit_that_is_not_a_positive_number_of_seconds(time_limit):
    with pytest.raises(ValueError, match=r"^time_limit must be a positive number of seconds"):
        project_matrix(
            np.ones((2, 2)), max_per_row=1, max_per_col=1, method="lp", time_limit=time_limit
        )
