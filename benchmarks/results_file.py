"""A benchmark's results file: one JSON object a line, appended and synced as each run ends.

A restarted benchmark reads what is there (:func:`load_rows`) and runs only what is missing; a
line torn by a crash, or unreadable, is reported on stderr and skipped (run again). The
options `--results` and `--fresh` and what they do are here too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Hashable
from pathlib import Path


def load_rows(path: Path, *, key: Callable[[dict], Hashable]) -> dict:
    """The rows of ``path`` by ``key(row)`` (a later row replaces an earlier one)."""
    rows: dict = {}
    if not path.exists():
        return rows
    with path.open() as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                rows[key(row)] = row
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                print(f"{path}:{number}: unreadable row skipped", file=sys.stderr)
    return rows


def append_row(path: Path, row: dict) -> None:
    """Append ``row`` as one line and sync it, so that a crash right after loses nothing."""
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())


def end_torn_line(path: Path) -> None:
    """End a torn last line of ``path`` (a crash mid-write), so the next row starts afresh."""
    if path.exists() and path.stat().st_size:
        with path.open("rb+") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                f.write(b"\n")


def set_aside(path: Path) -> Path | None:
    """``--fresh``: move an old results file to ``*.bak`` and return where (None if there was
    none)."""
    if not path.exists():
        return None
    backup = path.with_name(path.name + ".bak")
    path.replace(backup)
    return backup


def add_results_options(parser: argparse.ArgumentParser, default: Path) -> None:
    """``--results FILE`` (``default``) and ``--fresh``, the options of a resumable benchmark."""
    parser.add_argument(
        "--results",
        type=Path,
        default=default,
        help="JSON-lines results file, appended to and resumed from (default: %(default)s)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="move an old results file to *.bak and start over"
    )
