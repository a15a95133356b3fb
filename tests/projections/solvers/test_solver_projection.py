"""The projection object the solvers take: tvcs_projection and its doubled caps."""

import numpy as np
import pytest

from projections import ProjectionResult, TVCSStructure
from projections.solvers import TVCSProjection, double_caps, tvcs_projection
from projections.tvcs import project


def test_tvcs_projection_is_project_with_the_structure_bound():
    rng = np.random.default_rng(0)
    s = TVCSStructure.from_matrix((6, 7), max_per_row=2, max_per_col=[1, 2, 1, 2, 1, 2, 1], total=8)
    v = rng.standard_normal((6, 7))
    P = tvcs_projection(s, method="exact")
    r = P(v)

    assert isinstance(P, TVCSProjection)
    assert isinstance(r, ProjectionResult)
    np.testing.assert_array_equal(r.support, project(v, s, method="exact").support)
    again = P(v, warm_start=r.warm_start)
    np.testing.assert_array_equal(again.support, r.support)


def test_doubled_doubles_every_cap_of_a_matrix_structure_up_to_its_size():
    s = TVCSStructure.from_matrix((4, 5), max_per_row=[1, 2, 0, 3], max_per_col=1, total=6)
    d = tvcs_projection(s).doubled()

    assert d.method == "exact"
    assert d.structure.shape == (4, 5)
    np.testing.assert_array_equal(d.structure.caps1, [2, 4, 0, 5])  # a row has 5 entries
    np.testing.assert_array_equal(d.structure.caps2, [2] * 5)
    assert d.structure.total == 12
    assert s.total == 6  # the original is untouched


def test_doubling_a_general_structure_keeps_its_groups_and_caps_the_total_at_p():
    s = TVCSStructure.from_labels([0, 0, 1, -1], [1, -1, 0, 0], caps1=[1, 1], caps2=[1, 1], total=3)
    d = double_caps(s)

    np.testing.assert_array_equal(d.labels1, s.labels1)
    np.testing.assert_array_equal(d.labels2, s.labels2)
    np.testing.assert_array_equal(d.caps1, [2, 1])  # view-1 group 1 has one element
    assert d.total == 4


def test_tvcs_projection_rejects_unknown_methods_and_non_structures():
    s = TVCSStructure.from_matrix((2, 2), max_per_row=1, max_per_col=1)
    with pytest.raises(ValueError, match="'exact'"):
        tvcs_projection(s, method="fast")
    with pytest.raises(ValueError, match="TVCSStructure"):
        tvcs_projection("rows")
