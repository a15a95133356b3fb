"""Downloads: CSV or JSON written to a temporary file, then streamed to the client.

Spooling keeps memory flat whatever the size of the export, and lets an export fail (an
:class:`~assignment.errors.ExportError` raised before its first row) with a JSON error instead of
a half-sent file.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable
from typing import TextIO

from django.http import FileResponse

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
