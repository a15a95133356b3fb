"""Fixtures of the API tests: users with tokens, authenticated clients and a filled project (the
broker edge is the suite's ``queued`` recorder)."""

from __future__ import annotations

import pytest
from api_helpers import client_for, fill_project, make_user
from rest_framework.test import APIClient

from assignment import services


@pytest.fixture
def alice(db):
    return make_user("alice")


@pytest.fixture
def bob(db):
    return make_user("bob")


@pytest.fixture
def api(alice) -> APIClient:
    return client_for(alice)


@pytest.fixture
def other_api(bob) -> APIClient:
    return client_for(bob)


@pytest.fixture
def project(alice):
    """Alice's project, filled and with a quality matrix (through the services)."""
    project = services.project_create(owner=alice, name="birds")
    fill_project(project)
    return project
