"""Fixtures of the page tests: the suite's users (``alice``, ``bob``) signed in, and a project
filled from the sample files. Runs are queued to the suite's recorder (``queued``) and computed
in-process."""

from __future__ import annotations

import pytest
from django.test import Client
from page_helpers import fill_from_samples

from assignment import services


@pytest.fixture
def client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def other_client(bob) -> Client:
    client = Client()
    client.force_login(bob)
    return client


@pytest.fixture
def sample_project(alice):
    """Alice's project "birds and cars" filled from every sample file (its quality matrix is the
    uploaded one)."""
    project = services.project_create(
        owner=alice, name="birds and cars", default_max_tasks_per_worker=3
    )
    fill_from_samples(project)
    return project
