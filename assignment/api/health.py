"""Health checks of the services the product depends on: the database, the Celery broker and
the shared cache (where the throttles and sign-in lockouts count).

Each check says whether its service answers. Why one does not (with hosts, ports and driver
messages) goes to the log, never to the unauthenticated answer of ``/healthz``. The broker
connection is built from the current settings on every call (not from the Celery app's
configuration, loaded once), so a changed ``CELERY_BROKER_URL`` is what gets checked.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from kombu import Connection

logger = logging.getLogger(__name__)

#: Seconds to wait for the broker to accept a connection.
BROKER_TIMEOUT = 2.0


def database_ok() -> bool:
    """Whether ``SELECT 1`` works on the default database."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure is the answer, never a crash of the check
        logger.warning("health: database check failed: %s: %s", type(exc).__name__, exc)
        return False
    return True


def broker_ok() -> bool:
    """Whether a connection to ``CELERY_BROKER_URL`` opens (one attempt, short timeout)."""
    url = settings.CELERY_BROKER_URL
    options = {}
    if url.startswith("filesystem://"):
        options = dict(getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}))
    broker = Connection(url, connect_timeout=BROKER_TIMEOUT, transport_options=options)
    try:
        broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=5)
    except Exception as exc:
        logger.warning("health: broker check failed: %s: %s", type(exc).__name__, exc)
        return False
    finally:
        broker.release()
    return True


def cache_ok() -> bool:
    """Whether a value written to the default cache reads back."""
    key = "tvcs:health"
    try:
        cache.set(key, "ok", timeout=30)
        answered = cache.get(key) == "ok"
    except Exception as exc:
        logger.warning("health: cache check failed: %s: %s", type(exc).__name__, exc)
        return False
    if not answered:
        logger.warning("health: cache check failed: a value written did not read back")
    return answered
