"""Fixtures shared by the app's tests; the data they build comes from ``project_data.py``."""

from __future__ import annotations

import pytest
from project_data import answer_every_pair, executed, make_project, project_for_rounds, queued_round


@pytest.fixture
def empty_project(db):
    """User "owner"'s project "demo", with nothing imported."""
    return make_project()


@pytest.fixture
def project_with_round_defaults(db):
    """:func:`~project_data.project_for_rounds`: 8 workers, 20 tasks, a default budget of 40
    and prior of 0.4, no run yet."""
    return project_for_rounds()


@pytest.fixture
def after_a_round(project_with_round_defaults):
    """:func:`project_with_round_defaults` after a first greedy round of 16 pairs, all answered
    (seed 3): 24 pairs of the budget left."""
    first = queued_round(project_with_round_defaults, budget=16)
    answer_every_pair(executed(first), seed=3)
    return project_with_round_defaults
