"""Downloads: CSV or JSON written to a temporary file, then streamed to the client.

Spooling keeps memory flat whatever the size of the export, and lets an export fail (an
:class:`~assignment.errors.ExportError` raised before its first row) with a JSON error instead of
a half-sent file.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Callable, Iterable
from typing import TextIO

from django.http import FileResponse

from assignment.exporters import neutralise_formula

CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


def file_response(*, write: Callable[[TextIO], object], format: str, filename: str) -> FileResponse:
    """An attachment ``filename`` holding what ``write`` writes to a UTF-8 text stream."""
    spool = tempfile.TemporaryFile()
    text = io.TextIOWrapper(spool, encoding="utf-8", newline="")
    try:
        write(text)
        text.flush()
    except BaseException:
        text.close()
        raise
    text.detach()
    spool.seek(0)
    return FileResponse(
        spool, as_attachment=True, filename=filename, content_type=CONTENT_TYPES[format]
    )


def write_pairs(rows: Iterable[tuple[str, str]], format: str, out: TextIO) -> None:
    """(worker_id, task_id) rows as the exports write tables: CSV with CRLF line ends and
    formula-like cells quoted (:func:`~assignment.exporters.neutralise_formula`), or a JSON list
    of objects."""
    if format == "csv":
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(("worker_id", "task_id"))
        writer.writerows(
            (neutralise_formula(worker_id), neutralise_formula(task_id))
            for worker_id, task_id in rows
        )
        return
    first = True
    for worker_id, task_id in rows:
        out.write("[\n" if first else ",\n")
        out.write(json.dumps({"worker_id": worker_id, "task_id": task_id}, ensure_ascii=False))
        first = False
    out.write("[]\n" if first else "\n]\n")
