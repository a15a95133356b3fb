"""Fixtures shared by the app's tests; the data they build comes from ``project_data.py``."""

from __future__ import annotations

import pytest
from project_data import make_project


@pytest.fixture
def empty_project(db):
    """User "owner"'s project "demo", with nothing imported."""
    return make_project()
