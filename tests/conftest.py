"""Suite-wide fixtures. The benchmarks' helper modules are scripts beside each other, not a
package: the tests import them by name, as ``benchmarks/`` does."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "benchmarks"))  # last: never shadows


_TEST_FOLDER = re.compile(r"test-(?:broker|cache)-(\d+)")


def _is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, somebody else's
        pass
    return True


@pytest.fixture(scope="session", autouse=True)
def _remove_the_test_folders():
    """The filesystem broker and cache folders of this test session (config.settings_test) go
    at the end; those of earlier sessions that were killed before their end go at the start."""
    from django.conf import settings

    for folder in Path(settings.DATA_DIR).iterdir():
        match = _TEST_FOLDER.fullmatch(folder.name)
        if match and folder.is_dir() and not _is_running(int(match.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
    yield
    folders = [os.environ.get("TVCS_TEST_BROKER_DIR"), os.environ.get("TVCS_TEST_CACHE_DIR")]
    for folder in folders:
        if folder and _TEST_FOLDER.fullmatch(os.path.basename(folder)):
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
