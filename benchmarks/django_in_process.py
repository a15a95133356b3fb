"""Django started inside a benchmark's own process, on a data folder of its own."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.markdown_report import publish


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


def report_on_a_fresh_database(
    *, prefix: str, make_report: Callable[[], str], output: Path | None
) -> int:
    """Start Django on a new temporary data folder, make the report there, remove the folder;
    print the report and (``output``) write it to a file. The exit status: 0."""
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        django_setup(data_dir)
        text = make_report()
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    publish([text], output)
    return 0
