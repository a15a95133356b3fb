"""Typed readers of environment variables that fail loudly.

Every setting that can come from the environment is read here, through one of these helpers;
a malformed value raises ``ImproperlyConfigured`` naming the variable and what it accepts,
instead of silently falling back to a default.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable's value, or ``default`` when it is unset."""
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    """``1/true/yes/on`` or ``0/false/no/off`` (any case); anything else is an error."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}"
    )


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    """A whole number, at least ``minimum`` when given."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_dir(name: str, default: Path) -> Path:
    """The folder ``name`` names (``default`` when unset), created (mode 0700) if missing;
    :class:`ImproperlyConfigured` naming the variable if it cannot be."""
    path = Path(env_str(name, str(default)))
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"{name} must be a folder tvcs-assign can create and write, got {str(path)!r}: "
            f"{exc.strerror}"
        ) from None
    return path


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list; blanks are dropped."""
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


#: SQLite for concurrent use (the web server's threads, uploads, several Celery workers):
#: write-ahead logging, so readers never wait for a writer; transactions that take the write
#: lock when they begin (IMMEDIATE), so two writers queue instead of deadlocking when a reader
#: turns writer ("database is locked" at once, whatever the timeout); and a writer waits up to
#: 30 s for the lock. ``synchronous=NORMAL`` is the setting SQLite recommends with WAL.
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 30,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}

#: Seconds a thread keeps its SQLite connection across requests (Django's ``CONN_MAX_AGE``).
SQLITE_CONN_MAX_AGE = 60


def _create_private_file(path: Path) -> None:
    """Create ``path`` empty and readable by its owner only (0600, in a new 0700 folder) unless
    it exists. SQLite gives its journal files the database's mode, so the API tokens and password
    hashes in it are never world-readable."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass


def database_from_url(url: str, *, name: str = "DATABASE_URL") -> dict:
    """A ``DATABASES['default']`` entry from ``sqlite:///path`` or ``postgres://...``.

    ``sqlite:///relative/path`` and ``sqlite:////absolute/path`` follow the usual convention;
    ``postgres://user:password@host:port/dbname`` (or ``postgresql://``) uses psycopg2.
    """
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
        if not path:
            raise ImproperlyConfigured(f"{name}: sqlite URL needs a file path, got {url!r}")
        _create_private_file(Path(path))
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path,
            "OPTIONS": SQLITE_OPTIONS,
            # A thread keeps its connection across requests for a minute, as on PostgreSQL:
            # opening one (the file, the pragmas, Django's SQL functions) costs as much as
            # the rest of a status poll's queries. runserver closes it with the client's
            # connection.
            "CONN_MAX_AGE": SQLITE_CONN_MAX_AGE,
        }
    if parts.scheme in {"postgres", "postgresql"}:
        dbname = unquote(parts.path.lstrip("/"))
        if not dbname:
            raise ImproperlyConfigured(f"{name}: PostgreSQL URL needs a database name, got {url!r}")
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": dbname,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            # Connections kept for a minute, and checked before a request reuses one: a
            # PostgreSQL restart costs a reconnection, not an error.
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    raise ImproperlyConfigured(
        f"{name} must start with sqlite:// or postgres:// (or postgresql://), got {url!r}"
    )


def cache_from_url(url: str | None, *, folder: Path, name: str = "TVCS_CACHE_URL") -> dict:
    """A ``CACHES['default']`` entry: Redis for ``redis://...``, else files in ``folder``.

    The cache holds the throttles' counters, so it must be shared by every process that serves
    the API (several WSGI workers, restarts): Redis in production; on one machine, files, which
    every process of it sees.
    """
    if not url:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(folder),
        }
    if urlsplit(url).scheme in {"redis", "rediss"}:
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    raise ImproperlyConfigured(f"{name} must start with redis:// or rediss://, got {url!r}")
