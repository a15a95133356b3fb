"""Domain errors as HTTP responses: 400 with the message, 409 for a run in the wrong state.

An :class:`~assignment.errors.ImportValidationError` also says where: ``file``, ``line`` and
``column`` (None when the problem is not in one line or column) beside ``detail``, the whole
message as the import service words it.
"""

from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from assignment.errors import DomainError, ImportValidationError, RunStateError


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler, plus :class:`~assignment.errors.DomainError` subclasses."""
    if isinstance(exc, ImportValidationError):
        return Response(
            {"file": exc.file, "line": exc.line, "column": exc.column, "detail": str(exc)},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, RunStateError):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, DomainError):
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)
