"""Settings for the test suite: the real settings with fast password hashing.

The database still comes from ``DATABASE_URL`` (SQLite by default), so CI runs the same suite
on SQLite and on PostgreSQL.
"""

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
