"""Settings for the test suite: the real settings with fast password hashing.

The database still comes from ``DATABASE_URL`` (SQLite by default), so CI runs the same suite
on SQLite and on PostgreSQL. The SQLite test database is a file (not the in-memory default) so
that a real Celery worker process started by the end-to-end tests can open it, and the
filesystem broker gets its own folders so test messages never mix with the product's. Both are
named after the test process, so two test sessions on one machine do not collide; worker
processes the tests start inherit the broker folder through ``TVCS_TEST_BROKER_DIR``.
"""

import os

from config.env import env_str
from config.settings import *  # noqa: F403
from config.settings import CELERY_BROKER_URL, DATA_DIR, DATABASES

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / f"test-db-{os.getpid()}.sqlite3")}

if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = env_str("TVCS_TEST_BROKER_DIR") or str(DATA_DIR / f"test-broker-{os.getpid()}")
    os.environ["TVCS_TEST_BROKER_DIR"] = _broker_dir
    for _folder in ("queue", "processed", "control"):
        os.makedirs(os.path.join(_broker_dir, _folder), exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": os.path.join(_broker_dir, "queue"),
        "data_folder_out": os.path.join(_broker_dir, "queue"),
        "processed_folder": os.path.join(_broker_dir, "processed"),
        "control_folder": os.path.join(_broker_dir, "control"),
        "store_processed": False,
    }
