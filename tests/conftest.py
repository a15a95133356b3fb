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
