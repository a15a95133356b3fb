"""The greedy group projections against brute force on tiny cases (Jain, Rao & Dhillon 2016)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from brute_force import brute_force_group_cover, brute_force_sparse_group_cover
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from projections.groups import (
    OverlappingGroups,
    greedy_guarantee,
    project_overlapping_groups,
    project_sparse_overlapping_groups,
)
from projections.tvcs import _for_squares

P = 8


@st.composite
def instances(draw, *, disjoint: bool = False):
    """``(v, members)``: up to 8 coordinates and up to 6 groups (overlapping unless
    ``disjoint``, in which case they are the blocks of a random labelling)."""
    v = np.array(
        draw(st.lists(st.one_of(st.just(0.0), st.floats(-10, 10)), min_size=P, max_size=P))
    )
    if disjoint:
        labels = np.array(draw(st.lists(st.integers(0, 4), min_size=P, max_size=P)))
        members = [np.flatnonzero(labels == g) for g in np.unique(labels)]
    else:
        subsets = st.sets(st.integers(0, P - 1), min_size=1, max_size=4)
        members = [np.array(sorted(s)) for s in draw(st.lists(subsets, min_size=1, max_size=6))]
    return v, members


def assert_feasible(result, v, members, k):
    """At most ``k`` distinct groups, their union covers the support, ``x = v`` there."""
    chosen = result.groups
    assert chosen.size <= k
    assert np.unique(chosen).size == chosen.size
    covered = np.zeros(v.size, dtype=bool)
    for g in chosen:
        covered[members[g]] = True
    assert not np.any(result.support & ~covered)
    np.testing.assert_array_equal(result.x, np.where(result.support, v, 0.0))
    assert result.objective == pytest.approx(float(np.sum(v[result.support] ** 2)))


def assert_per_group_caps_hold(result, members, per_group):
    """Every kept coordinate can be charged to a chosen group holding it, at most
    ``per_group`` to each (a bipartite matching onto ``per_group`` copies of each group)."""
    kept = np.flatnonzero(result.support)
    slots = [(g, c) for g in result.groups for c in range(per_group)]
    edges = np.array([[i in members[g] for g, _ in slots] for i in kept], dtype=float)
    if kept.size == 0:
        return
    match = maximum_bipartite_matching(csr_matrix(edges.reshape(kept.size, -1)), "column")
    assert np.all(match >= 0)


@settings(max_examples=120, deadline=None)
@given(instance=instances(), k=st.integers(0, 4))
def test_greedy_projection_is_feasible_and_within_one_minus_one_over_e_of_the_best(instance, k):
    v, members = instance
    result = project_overlapping_groups(v, members, k=k)
    assert_feasible(result, v, members, k)
    best = brute_force_group_cover(v**2, members, k)
    assert result.objective <= best * (1 + 1e-12) + 1e-12
    assert result.objective >= greedy_guarantee(k, max(k, 1)) * best - 1e-9


@settings(max_examples=60, deadline=None)
@given(instance=instances(), k=st.integers(1, 2))
def test_twice_as_many_greedy_groups_keep_one_minus_e_squared_of_the_best_k(instance, k):
    v, members = instance
    result = project_overlapping_groups(v, members, k=2 * k)
    best = brute_force_group_cover(v**2, members, k)
    assert result.objective >= (1 - math.exp(-2)) * best - 1e-9


@settings(max_examples=80, deadline=None)
@given(instance=instances(disjoint=True), k=st.integers(0, 4))
def test_greedy_projection_is_exact_when_groups_do_not_overlap(instance, k):
    v, members = instance
    result = project_overlapping_groups(v, members, k=k)
    assert result.optimal
    assert_feasible(result, v, members, k)
    assert result.objective == pytest.approx(brute_force_group_cover(v**2, members, k), abs=1e-9)


def test_greedy_projection_misses_the_optimum_when_a_middle_group_overlaps_both_best():
    # energies 1, 1.21, 1.21, 1: the middle group {1, 2} holds the most, so the greedy takes it
    # and then only one more coordinate, while {0, 1} and {2, 3} together cover all four.
    v = np.array([1.0, 1.1, 1.1, 1.0])
    members = [np.array([0, 1]), np.array([2, 3]), np.array([1, 2])]
    result = project_overlapping_groups(v, members, k=2)
    assert not result.optimal
    assert result.groups.tolist() == [2, 0]
    assert result.objective == pytest.approx(3.42)
    assert brute_force_group_cover(v**2, members, 2) == pytest.approx(4.42)


def test_greedy_projection_stops_when_no_group_adds_energy():
    v = np.array([0.0, 3.0, 0.0, 0.0])
    result = project_overlapping_groups(v, [[0, 1], [1, 2], [3]], k=3)
    assert result.groups.tolist() == [0]
    assert result.support.tolist() == [True, True, False, False]


@settings(max_examples=60, deadline=None)
@given(instance=instances(), k=st.integers(0, 3), per_group=st.integers(1, 2))
def test_sparse_group_projection_is_feasible_and_never_beats_brute_force(instance, k, per_group):
    v, members = instance
    result = project_sparse_overlapping_groups(v, members, k=k, per_group=per_group)
    assert_feasible(result, v, members, k)
    assert_per_group_caps_hold(result, members, per_group)
    assert not np.any(result.support & (v == 0))
    best = brute_force_sparse_group_cover(v**2, members, k, per_group)
    assert result.objective <= best * (1 + 1e-12) + 1e-12


@settings(max_examples=60, deadline=None)
@given(instance=instances(disjoint=True), k=st.integers(0, 3), per_group=st.integers(1, 2))
def test_sparse_group_projection_is_exact_when_groups_do_not_overlap(instance, k, per_group):
    v, members = instance
    result = project_sparse_overlapping_groups(v, members, k=k, per_group=per_group)
    best = brute_force_sparse_group_cover(v**2, members, k, per_group)
    assert result.optimal
    assert result.objective == pytest.approx(best, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(instance=instances(), k=st.integers(0, 4))
def test_sparse_groups_with_room_for_whole_groups_keep_what_the_group_projection_keeps(instance, k):
    v, members = instance
    whole = project_overlapping_groups(v, members, k=k)
    sparse = project_sparse_overlapping_groups(v, members, k=k, per_group=P)
    assert sparse.groups.tolist() == whole.groups.tolist()
    # (squares taken as the projections take them: scaled into float64's range)
    np.testing.assert_array_equal(sparse.support, whole.support & (_for_squares(v) ** 2 > 0))


def test_contiguous_groups_share_overlap_coordinates_with_their_neighbours():
    groups = OverlappingGroups.contiguous(4, 5, 2)
    assert groups.n_features == 4 * 3 + 2
    assert groups.overlapping
    for left, right in itertools.pairwise(groups.members):
        assert np.intersect1d(left, right).tolist() == left[-2:].tolist() == right[:2].tolist()
    assert not OverlappingGroups.contiguous(3, 4, 0).overlapping


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: project_overlapping_groups([1.0, np.nan], [[0, 1]], k=1), "v must be finite"),
        (lambda: project_overlapping_groups(np.ones((2, 2)), [[0]], k=1), "v must be a 1-D"),
        (lambda: project_overlapping_groups(["a"], [[0]], k=1), "v must be a real"),
        (lambda: project_overlapping_groups([1.0, 2.0], [[0, 1]], k=-1), "k must be"),
        (lambda: project_overlapping_groups([1.0, 2.0], [[0, 1]], k=True), "k must be"),
        (lambda: project_overlapping_groups([1.0, 2.0], [[0, 2]], k=1), r"groups\[0\] has"),
        (lambda: project_overlapping_groups([1.0, 2.0], [[0], []], k=1), r"groups\[1\] must"),
        (lambda: project_overlapping_groups([1.0, 2.0], [[1, 1]], k=1), r"groups\[0\] repeats"),
        (lambda: project_overlapping_groups([1.0, 2.0], [], k=1), "groups must hold"),
        (
            lambda: project_overlapping_groups([1.0], OverlappingGroups([[0]], 2), k=1),
            "v has shape",
        ),
        (
            lambda: project_sparse_overlapping_groups([1.0], [[0]], k=1, per_group=0),
            "per_group must be",
        ),
        (lambda: OverlappingGroups.contiguous(3, 4, 4), "overlap must be"),
        (lambda: OverlappingGroups([[0]], 0), "n_features must be"),
        (lambda: greedy_guarantee(1, 0), "k must be"),
    ],
)
def test_bad_input_is_refused_with_an_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (-1, r"group index -1, outside \[0, n_groups\) = \[0, 3\)"),
        (3, r"group index 3, outside \[0, n_groups\) = \[0, 3\)"),
        (True, "chosen must hold group indices"),
        (1.0, "chosen must hold group indices"),
    ],
)
def test_union_refuses_an_index_that_is_not_a_group_naming_it_and_n_groups(index, message):
    groups = OverlappingGroups.contiguous(3, 4, 1)
    with pytest.raises(ValueError, match=message):
        groups.union([index])


def test_union_of_group_indices_covers_their_members():
    groups = OverlappingGroups.contiguous(3, 4, 1)
    assert np.flatnonzero(groups.union([np.int64(2), 0])).tolist() == [0, 1, 2, 3, 6, 7, 8, 9]


def test_the_class_names_its_members_argument_and_the_functions_their_groups_argument():
    with pytest.raises(ValueError, match=r"^members\[0\] repeats an index"):
        OverlappingGroups([[0, 0]], 3)
    with pytest.raises(ValueError, match=r"^groups\[0\] repeats an index"):
        project_overlapping_groups(np.ones(3), [[0, 0]], k=1)


@pytest.mark.parametrize("dtype", [np.float16, ">f8", "m8[s]"])
def test_group_projections_take_odd_real_dtypes_and_refuse_timedeltas(dtype):
    v = np.array([1.0, 3.0, 2.0]).astype(dtype)
    if np.dtype(dtype).kind == "m":
        with pytest.raises(ValueError, match=r"^v must be a real-valued"):
            project_overlapping_groups(v, [[0, 1], [1, 2]], k=1)
    else:
        result = project_overlapping_groups(v, [[0, 1], [1, 2]], k=1)
        assert result.support.tolist() == [False, True, True]
