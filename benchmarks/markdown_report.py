"""A benchmark's Markdown report: printed on stdout and, with ``--out FILE``, written there.

The one ``--out`` option and the one way to hand the report over, for the benchmarks that
print a report (``budgets.py``, ``figure4.py``, ``projection.py``, ``q_lp.py`` and others).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

OUT_HELP = "also write the Markdown report here"


def add_out_option(parser: argparse.ArgumentParser) -> None:
    """``--out FILE``: also write the report there."""
    parser.add_argument("--out", type=Path, help=OUT_HELP)


def publish(lines: list[str], out: Path | None) -> None:
    """Print the report ``lines`` (joined by newlines) and write them to ``out`` when given
    (its folder made if need be), ending in a newline, as UTF-8."""
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
