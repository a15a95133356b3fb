"""Fixtures of the API tests: clients authenticated with the tokens of the suite's users (``alice``,
``bob``) and a filled project (the broker edge is the suite's ``queued`` recorder)."""

from __future__ import annotations

import pytest
from api_helpers import client_for, fill_project
from rest_framework.test import APIClient

from assignment import services


@pytest.fixture
def api(alice) -> APIClient:
    return client_for(alice)


@pytest.fixture
def other_api(bob) -> APIClient:
    return client_for(bob)


@pytest.fixture
def filled_project(alice):
    """Alice's project "birds", filled by ``fill_project`` (through the services): workers, tasks,
    gold, answers and a quality matrix estimated from the gold answers."""
    project = services.project_create(owner=alice, name="birds")
    fill_project(project)
    return project
