"""Fixtures of the page tests: users, signed-in clients and a project filled from the sample
files. Runs are queued to the suite's recorder (``queued``) and computed in-process."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from page_helpers import fill_from_samples

from assignment import services


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", password="alice-password")


@pytest.fixture
def bob(db):
    return get_user_model().objects.create_user("bob", password="bob-password")


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
def project(alice):
    """Alice's project filled from every sample file (its quality matrix is the uploaded one)."""
    project = services.project_create(
        owner=alice, name="birds and cars", default_max_tasks_per_worker=3
    )
    fill_from_samples(project)
    return project
