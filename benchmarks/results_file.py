"""A benchmark's results file: one JSON object a line, appended and synced as each run ends.

A restarted benchmark reads what is there (:func:`load_rows`) and runs only what is missing; a
line torn by a crash, or unreadable, is reported on stderr and skipped (run again).
"""

from __future__ import annotations

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
