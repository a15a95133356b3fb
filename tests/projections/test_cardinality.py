"""Top-k and exclusive-group projections equal brute force on small inputs."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_force_optimum
from hypothesis import given, settings
from hypothesis import strategies as st

from projections import TVCSStructure
from projections.cardinality import project_exclusive_groups, project_top_k

values = st.lists(
    st.one_of(st.sampled_from([0.0, 1.0, -1.0]), st.floats(-10, 10)), min_size=1, max_size=10
)


@settings(max_examples=80, deadline=None)
@given(v=values, k=st.integers(0, 12))
def test_top_k_keeps_the_k_largest_magnitudes(v, k):
    v = np.array(v)
    result = project_top_k(v, k=k)
    assert result.support.sum() <= k
    assert not np.any(result.support & (v == 0))
    structure = TVCSStructure.from_labels(
        np.full(v.size, -1),
        np.full(v.size, -1),
        caps1=np.zeros(0, int),
        caps2=np.zeros(0, int),
        total=k,
    )
    assert result.objective == pytest.approx(brute_force_optimum(v**2, structure), rel=1e-12)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), v=values)
def test_exclusive_groups_projection_is_feasible_and_optimal(data, v):
    v = np.array(v)
    labels = data.draw(st.lists(st.integers(-1, 2), min_size=v.size, max_size=v.size))
    caps = data.draw(st.lists(st.integers(0, 3), min_size=3, max_size=3))
    total = data.draw(st.one_of(st.none(), st.integers(0, 12)))
    result = project_exclusive_groups(v, labels, caps=caps, total=total)
    structure = TVCSStructure.from_labels(
        labels, np.full(v.size, -1), caps1=caps, caps2=np.zeros(0, int), total=total
    )
    assert structure.is_feasible(result.support)
    assert result.objective == pytest.approx(brute_force_optimum(v**2, structure), rel=1e-12)


def test_exclusive_groups_with_no_group_at_all_is_top_k():
    v = np.array([0.5, -3.0, 2.0, 1.0])
    result = project_exclusive_groups(v, np.full(4, -1), caps=np.zeros(0, int), total=2)
    np.testing.assert_array_equal(result.support, project_top_k(v, k=2).support)


def test_top_k_works_on_matrices_and_breaks_ties_towards_the_lower_index():
    V = np.array([[1.0, -2.0], [2.0, 0.5]])
    result = project_top_k(V, k=1)
    np.testing.assert_array_equal(result.x, [[0.0, -2.0], [0.0, 0.0]])


def test_top_k_rejects_a_negative_k():
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        project_top_k(np.ones(3), k=-1)


@pytest.mark.parametrize("scale", [1e-170, 1e200])
def test_magnitudes_whose_squares_float64_cannot_hold_still_project_right(scale):
    from projections.groups import project_overlapping_groups
    from projections.tvcs import project_matrix

    top = project_top_k(np.array([1.0, -3.0, 2.0]) * scale, k=1)
    assert top.support.tolist() == [False, True, False]
    matrix = project_matrix(
        np.array([[2.0, 1.0], [1.0, 3.0]]) * scale, max_per_row=1, max_per_col=1
    )
    assert matrix.support.tolist() == [[True, False], [False, True]]
    groups = project_overlapping_groups(
        np.array([1.0, 1.0, 5.0, 5.0]) * scale, [[0, 1], [2, 3]], k=1
    )
    assert groups.support.tolist() == [False, False, True, True]
    # Objectives are those of the values themselves: 0 or infinity where float64 ends.
    assert top.objective == (np.inf if scale > 1 else pytest.approx(9.0 * scale**2))


def test_exclusive_groups_errors_name_the_callers_labels_and_caps():
    from projections.solvers import exclusive_groups_projection

    v, labels = np.ones(6), np.repeat(np.arange(2), 3)
    with pytest.raises(ValueError, match=r"^caps must be non-negative, got -1 at group 0"):
        project_exclusive_groups(v, labels, caps=-1)
    with pytest.raises(ValueError, match=r"^labels must be >= -1 \(-1 = no group\), got -2"):
        project_exclusive_groups(v, np.array([0, 0, -2, 1, 1, 1]), caps=1)
    with pytest.raises(ValueError, match=r"^caps has 1 groups but a label 1"):
        exclusive_groups_projection(labels, caps=[1])


def test_labels_of_another_length_than_v_are_blamed_on_labels():
    with pytest.raises(ValueError, match=r"^labels has 4 entries but v has 6"):
        project_exclusive_groups(np.ones(6), [0, 0, 1, 1], caps=1)


def test_labels_that_are_large_ids_are_renumbered_not_used_as_indices():
    # a label of 10**12 used to index a caps array of 10**12 + 1 entries (7 TiB)
    result = project_exclusive_groups([1.0, 2.0, 3.0], [0, 10**12, 10**12], caps=1)
    assert result.support.tolist() == [True, False, True]


def test_a_huge_cap_means_no_cap_on_exclusive_groups():
    result = project_exclusive_groups([1.0, 2.0, 3.0], [0, 0, 0], caps=2**70, total=2)
    assert result.support.tolist() == [False, True, True]
