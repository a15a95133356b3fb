"""Django started inside a benchmark's own process, on a data folder of its own."""

from __future__ import annotations

import os
from pathlib import Path


def django_setup(data_dir: Path, *, migrate: bool = True) -> None:
    """Point the settings at ``data_dir``, start Django and (``migrate``) migrate the database."""
    os.environ["TVCS_DATA_DIR"] = str(data_dir)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ.setdefault("TVCS_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)


def database() -> str:
    """The database Django uses (``sqlite``, ``postgresql``), for a report's header."""
    from django.db import connection

    return connection.vendor
