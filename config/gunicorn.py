"""gunicorn's settings for the web service: ``gunicorn -c python:config.gunicorn config.wsgi``.

Read from the environment through ``config.env`` like every other setting (README, "Deploy"):

``TVCS_WEB_HOST`` / ``TVCS_WEB_PORT``
    Where to listen (``0.0.0.0:8000``).
``WEB_CONCURRENCY``
    Worker processes (``2 x cores + 1``, at most 8). Each holds a Django process of ~100 MB.
``TVCS_WEB_THREADS``
    Threads per worker process (4): a slow upload or download holds a thread, not a process.
``TVCS_WEB_TIMEOUT``
    Seconds a request may take before its worker is restarted (120; uploads of up to
    ``TVCS_MAX_IMPORT_BYTES`` are parsed inside one request).
``TVCS_WEB_MAX_REQUESTS``
    Requests after which a worker is replaced by a fresh one (2,000, with jitter; 0: never),
    a guard against slow memory growth.

The application is loaded once in the master and the workers are forked from it
(``preload_app``), with the loaded objects moved out of the garbage collector's sight first
(``gc.freeze``): the forked workers then share those memory pages instead of copying them on
the first collection.
"""

from __future__ import annotations

import gc
import os

from config.env import env_int, env_str

bind = f"{env_str('TVCS_WEB_HOST', '0.0.0.0')}:{env_int('TVCS_WEB_PORT', 8000, minimum=1)}"
workers = env_int("WEB_CONCURRENCY", min(8, 2 * (os.cpu_count() or 1) + 1), minimum=1)
worker_class = "gthread"
threads = env_int("TVCS_WEB_THREADS", 4, minimum=1)
timeout = env_int("TVCS_WEB_TIMEOUT", 120, minimum=1)
graceful_timeout = 30
keepalive = 5
max_requests = env_int("TVCS_WEB_MAX_REQUESTS", 2000, minimum=0)
max_requests_jitter = max_requests // 10
preload_app = True
# Heartbeat files in memory, not on the container's (possibly slow) overlay disk.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = "-"
errorlog = "-"
loglevel = env_str("TVCS_LOG_LEVEL", "INFO").lower()


def pre_fork(server, worker):
    """Freeze the preloaded objects so the forked workers share their pages; no database
    connection of the master's (none is opened while loading) may be shared by the workers,
    which keep theirs across requests (``CONN_MAX_AGE``)."""
    from django.db import connections

    connections.close_all()
    gc.freeze()
