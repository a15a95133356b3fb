"""TVCSStructure validates at the edge and reports which caps a support breaks."""

from __future__ import annotations

import re

import numpy as np
import pytest

from projections import TVCSStructure


def test_matrix_structure_puts_rows_in_view_one_and_columns_in_view_two():
    s = TVCSStructure.from_matrix((2, 3), max_per_row=[1, 2], max_per_col=1, total=None)
    np.testing.assert_array_equal(s.labels1, [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(s.labels2, [0, 1, 2, 0, 1, 2])
    np.testing.assert_array_equal(s.caps2, [1, 1, 1])
    assert s.total == 6


def test_total_above_the_number_of_elements_is_clipped():
    s = TVCSStructure.from_matrix((2, 2), max_per_row=2, max_per_col=2, total=100)
    assert s.total == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_per_row": -1, "max_per_col": 1}, "max_per_row must be non-negative"),
        (
            {"max_per_row": 1.5, "max_per_col": 1},
            r"max_per_row must be whole numbers, got 1\.5 at row 0",
        ),
        (
            {"max_per_row": [1], "max_per_col": 1},
            r"max_per_row must be a non-negative integer or one per row \(length 2\)",
        ),
        (
            {"max_per_row": np.nan, "max_per_col": 1},
            "max_per_row must be finite, got NaN or infinity at row 0",
        ),
        (
            {"max_per_row": 1, "max_per_col": np.inf},
            "max_per_col must be finite, got NaN or infinity at column 0",
        ),
        ({"max_per_row": 1, "max_per_col": "3"}, "max_per_col must be a non-negative integer"),
        ({"max_per_row": 1, "max_per_col": 1, "total": -2}, "total must be non-negative"),
        (
            {"max_per_row": 1, "max_per_col": 1, "total": 2.5},
            r"total must be a whole number, got 2\.5",
        ),
        (
            {"max_per_row": 1, "max_per_col": 1, "total": True},
            "total must be a non-negative integer or None",
        ),
    ],
)
def test_bad_matrix_caps_raise_a_value_error_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TVCSStructure.from_matrix((2, 3), **kwargs)


def test_a_negative_or_fractional_shape_is_rejected():
    with pytest.raises(ValueError, match="shape must be two non-negative integers"):
        TVCSStructure.from_matrix((2, -1), max_per_row=1, max_per_col=1)
    with pytest.raises(ValueError, match="shape must be two non-negative integers"):
        TVCSStructure.from_matrix((2.0, 3), max_per_row=1, max_per_col=1)


@pytest.mark.parametrize(
    ("labels1", "labels2", "caps1", "message"),
    [
        ([0, 1], [0], [1, 1], "same length"),
        ([0, -2], [0, 0], [1, 1], "labels1 must be >= -1"),
        ([0, 0.5], [0, 0], [1, 1], "labels1 must hold integer group labels"),
        ([0, 3], [0, 0], [1, 1], "caps1 has 2 groups but a label 3"),
        ([[0, 1]], [0, 0], [1, 1], "labels1 must be a 1-D array"),
    ],
)
def test_bad_labels_raise_a_value_error_naming_the_problem(labels1, labels2, caps1, message):
    with pytest.raises(ValueError, match=message):
        TVCSStructure.from_labels(labels1, labels2, caps1=caps1, caps2=1)


def test_violations_name_each_broken_cap():
    s = TVCSStructure.from_labels([0, 0, -1, 1], [-1, 0, 0, 1], caps1=[1, 1], caps2=[1, 1], total=2)
    assert s.violations([True, False, False, True]) == []
    problems = s.violations([True, True, True, False])
    assert "total: 3 selected > cap 2" in problems
    assert "view 1 group 0: 2 selected > cap 1" in problems
    assert "view 2 group 0: 2 selected > cap 1" in problems
    assert not s.is_feasible([True, True, False, False])


def test_a_matrix_structure_checks_a_support_by_rows_and_columns_like_its_labels():
    rng = np.random.default_rng(3)
    matrix = TVCSStructure.from_matrix((6, 9), max_per_row=2, max_per_col=1, total=8)
    labelled = TVCSStructure.from_labels(
        matrix.labels1, matrix.labels2, caps1=matrix.caps1, caps2=matrix.caps2, total=8
    )
    for _ in range(50):
        support = rng.random((6, 9)) < 0.15
        assert matrix.violations(support) == labelled.violations(support)


def test_from_matrix_names_the_callers_fields_in_its_errors():
    names = {"max_per_row": "per_worker", "max_per_col": "per_task", "total": "budget"}
    names |= {"row": "worker", "col": "task"}
    with pytest.raises(ValueError, match="per_task must be non-negative, got -1 at task 2"):
        TVCSStructure.from_matrix((2, 3), max_per_row=1, max_per_col=[1, 1, -1], names=names)
    with pytest.raises(ValueError, match=r"per_worker must be whole numbers, got 0\.5 at worker 1"):
        TVCSStructure.from_matrix((2, 3), max_per_row=[1, 0.5], max_per_col=1, names=names)
    # a named total is required: the caller's field has no "no cap" value
    with pytest.raises(ValueError, match="budget must be a non-negative integer, got None"):
        TVCSStructure.from_matrix((2, 3), max_per_row=1, max_per_col=1, names=names)
    with pytest.raises(ValueError, match="names has unknown keys"):
        TVCSStructure.from_matrix((2, 3), max_per_row=1, max_per_col=1, names={"rows": "x"})


def test_the_class_itself_takes_only_the_stored_form_and_says_how_to_build_one():
    caps = np.array([1, 2], dtype=np.int64)
    good = TVCSStructure(6, caps, np.array([1, 1, 1], dtype=np.int64), 3, (2, 3))
    assert good.is_feasible(np.zeros(6, dtype=bool))
    bad = [
        ((6, [1, 2], np.array([1, 1, 1]), 3, (2, 3)), "caps1 must be a 1-D int64 array"),
        ((6, caps, np.array([1, 1, 1], dtype=np.int64), 7, (2, 3)), "total 7 exceeds"),
        ((6, caps, np.array([1, 1], dtype=np.int64), 3, (2, 3)), "shape (2, 3) must have"),
        ((5, caps, np.array([1, 1, 1], dtype=np.int64), 3, (2, 3)), "shape (2, 3) must have"),
        ((6, caps, np.array([-1, 1, 1], dtype=np.int64), 3, (2, 3)), "non-negative caps"),
        ((6, caps, caps, 3, None), "needs labels1"),
        (
            (3, caps, caps, 3, None, np.array([0, 1, 2]), np.array([0, 1, 1])),
            "labels1 must be in [-1, len(caps))",
        ),
        ((-1, caps, caps, 0, None), "must be non-negative integers"),
    ]
    for args, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)) as caught:
            TVCSStructure(*args)
        assert "from_matrix or TVCSStructure.from_labels" in str(caught.value)


@pytest.mark.parametrize("cap", [1e30, 2.0**63, np.iinfo(np.int64).max, 2**70])
def test_a_cap_above_its_group_size_means_no_cap_and_is_lowered_to_the_size(cap):
    s = TVCSStructure.from_matrix((3, 4), max_per_row=cap, max_per_col=[cap, 1, 2, 9])
    np.testing.assert_array_equal(s.caps1, [4, 4, 4])
    np.testing.assert_array_equal(s.caps2, [3, 1, 2, 3])
    labelled = TVCSStructure.from_labels([0, 0, 1], [-1, 0, 0], caps1=cap, caps2=[cap])
    np.testing.assert_array_equal(labelled.caps1, [2, 1])
    np.testing.assert_array_equal(labelled.caps2, [2])


def test_a_structure_cannot_be_changed_after_validation():
    matrix = TVCSStructure.from_matrix((3, 3), max_per_row=1, max_per_col=1, total=3)
    general = TVCSStructure.from_labels([0, 1], [1, 0], caps1=1, caps2=[1, 1])
    for array in (matrix.caps1, matrix.caps2, general.labels1, general.labels2, general.caps2):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = -2


def test_the_stored_form_keeps_a_read_only_copy_and_leaves_the_callers_arrays_writeable():
    caps = np.array([1, 2], dtype=np.int64)
    s = TVCSStructure(6, caps, np.array([1, 1, 1], dtype=np.int64), 3, (2, 3))
    caps[0] = 0
    assert caps.flags.writeable
    np.testing.assert_array_equal(s.caps1, [1, 2])


def test_labels_with_one_cap_for_all_groups_are_names_renumbered_densely():
    s = TVCSStructure.from_labels([10**12, 7, -1, 10**12], [0, 0, 0, 0], caps1=1, caps2=[2])
    np.testing.assert_array_equal(s.labels1, [1, 0, -1, 1])
    np.testing.assert_array_equal(s.caps1, [1, 1])
    assert s.violations([True, False, False, True]) == ["view 1 group 1: 2 selected > cap 1"]


def test_a_shape_that_is_not_a_pair_is_a_value_error_naming_shape():
    with pytest.raises(ValueError, match="shape must be two non-negative integers, got 6"):
        TVCSStructure.from_matrix(6, max_per_row=1, max_per_col=1)
