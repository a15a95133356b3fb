"""Suite-wide fixtures. The benchmarks' helper modules are scripts beside each other, not a
package: the tests import them by name, as ``benchmarks/`` does."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "benchmarks"))  # last: never shadows


@pytest.fixture(scope="session", autouse=True)
def _remove_the_test_folders():
    """The filesystem broker and cache folders of this test session (config.settings_test) go
    at the end."""
    yield
    from django.conf import settings

    folders = [os.environ.get("TVCS_TEST_BROKER_DIR"), settings.CACHES["default"]["LOCATION"]]
    for folder in folders:
        name = os.path.basename(folder or "")
        if name.startswith(("test-broker-", "test-cache-")):
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Throttle and sign-in counters live in the cache; every test starts with none."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def queued(monkeypatch) -> list[int]:
    """Run ids handed to the broker, in order: the tasks' ``apply_async`` is the broker edge.

    Comparisons' upper bounds are not queued; the tests that need one compute it.
    """
    from assignment import tasks

    sent: list[int] = []
    monkeypatch.setattr(
        tasks.run_execute_task, "apply_async", lambda args, **options: sent.append(args[0])
    )
    monkeypatch.setattr(tasks.comparison_upper_bound_task, "delay", lambda comparison_id: None)
    return sent


def _user(username: str):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username, password=f"{username}-password")


@pytest.fixture
def alice(db):
    """User "alice" (password "alice-password"), who owns the API and page tests' projects."""
    return _user("alice")


@pytest.fixture
def bob(db):
    """User "bob" (password "bob-password"), who owns none of alice's projects."""
    return _user("bob")
