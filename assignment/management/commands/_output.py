"""Where an export command writes: stdout, or a file replaced only once it is complete."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from django.core.management.base import CommandError

from assignment.exporters import FORMATS, write_when_complete


class _Raw:
    """The command's stdout without the line ending Django adds to every write."""

    def __init__(self, stdout) -> None:
        self._stdout = stdout

    def write(self, text: str) -> None:
        self._stdout.write(text, ending="")


def output_format(format: str | None, output: Path | None) -> str:
    """``format`` if given, else the output file's suffix when it is one of :data:`FORMATS`
    (``--output pairs.json`` writes JSON, as ``import_data`` reads by the suffix), else CSV."""
    if format is not None:
        return format
    suffix = output.suffix.lower().lstrip(".") if output is not None else ""
    return suffix if suffix in FORMATS else "csv"


def write_output(command, output: Path | None, write: Callable[[TextIO], object]) -> object:
    """``write(out)`` to the command's stdout (``output`` None or ``-``) or to the file
    ``output``, replaced only once it is complete (:func:`write_when_complete`). A file that
    cannot be written is a :class:`CommandError`; a reader of stdout that goes away (``| head``)
    ends the command quietly."""
    if output is None or str(output) == "-":
        try:
            result = write(_Raw(command.stdout))
            sys.stdout.flush()
            return result
        except BrokenPipeError:
            pass
        # Python's advice for a closed stdout (the signal module's docs), out of the except
        # block, so that the error's frames (an open database cursor among them) go while the
        # database is still open and the interpreter's last flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1)
    if not output.name:
        raise CommandError("--output needs a file name")
    try:
        return write_when_complete(output, write)
    except OSError as exc:
        raise CommandError(f"cannot write {output}: {exc.strerror}") from exc
