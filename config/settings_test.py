"""Settings for the test suite: the real settings with fast password hashing.

The database still comes from ``DATABASE_URL`` (SQLite by default), so CI runs the same suite
on SQLite and on PostgreSQL. The SQLite test database is a file (not the in-memory default) so
that a real Celery worker process started by the end-to-end tests can open it, and the
filesystem broker gets its own folders so test messages never mix with the product's. Both are
named after the test process, so two test sessions on one machine do not collide; worker
processes the tests start inherit the broker and cache folders through ``TVCS_TEST_BROKER_DIR``
and ``TVCS_TEST_CACHE_DIR`` (so they leave no folders of their own behind).
"""

import os
from pathlib import Path

from config.env import cache_from_url, env_str
from config.settings import *  # noqa: F403
from config.settings import (
    CELERY_BROKER_URL,
    DATA_DIR,
    DATABASES,
    filesystem_broker_options,
)

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if not env_str("TVCS_CACHE_URL"):  # a cache of this test session's own, shared with its workers
    _cache_dir = env_str("TVCS_TEST_CACHE_DIR") or str(DATA_DIR / f"test-cache-{os.getpid()}")
    os.environ["TVCS_TEST_CACHE_DIR"] = _cache_dir
    CACHES = {"default": cache_from_url(None, folder=Path(_cache_dir))}

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / f"test-db-{os.getpid()}.sqlite3")}

if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = env_str("TVCS_TEST_BROKER_DIR") or str(DATA_DIR / f"test-broker-{os.getpid()}")
    os.environ["TVCS_TEST_BROKER_DIR"] = _broker_dir
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(Path(_broker_dir))
