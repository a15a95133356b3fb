"""Suite-wide fixtures."""

from __future__ import annotations

import os
import shutil

import pytest


@pytest.fixture(scope="session", autouse=True)
def _remove_the_test_broker_folder():
    """The filesystem broker folder of this test session (config.settings_test) goes at the end."""
    yield
    folder = os.environ.get("TVCS_TEST_BROKER_DIR")
    if folder and os.path.basename(folder).startswith("test-broker-"):
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def queued(monkeypatch) -> list[int]:
    """Run ids handed to the broker, in order: the tasks' ``delay`` is the broker edge.

    Comparisons' upper bounds are not queued; the tests that need one compute it.
    """
    from assignment import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.run_execute_task, "delay", lambda run_id: sent.append(run_id))
    monkeypatch.setattr(tasks.comparison_upper_bound_task, "delay", lambda comparison_id: None)
    return sent
