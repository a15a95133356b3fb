"""Every error under ``/api/`` as JSON of one shape: ``{"detail": "..."}``.

- Domain errors: 400 with the service's message, 409 for a run in the wrong state, 429 for a
  user with as many active runs as allowed. An
  :class:`~assignment.errors.ImportValidationError` also says where: ``file``, ``line`` and
  ``column`` (None when the problem is not in one line or column) beside ``detail``.
- Invalid requests (a serializer's ``ValidationError``): 400 with every problem in ``detail``
  (``"field: message; other.0: message"``) and the same by field in ``fields``.
- DRF's own errors (401, 403, 404, 405, 429) keep their ``detail``.
- A URL under ``/api/`` that matches no route, a 400 or 403 Django raises outside DRF's views,
  and any unexpected failure, get the JSON handlers below (``config.urls`` installs them)
  instead of the pages' HTML error pages (``frontend/templates/4xx.html``, ``500.html``); a 500
  never shows what failed. A failed CSRF check is ``frontend.views.errors.csrf_failure``.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, JsonResponse
from django.views import defaults
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from assignment.errors import DomainError, ImportValidationError, RunLimitError, RunStateError

API_PREFIX = "/api/"


def _messages(detail, prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(field path, message)`` of a ValidationError's nested detail; list items by index."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            yield from _messages(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(detail, list) and any(isinstance(item, dict | list) for item in detail):
        for index, value in enumerate(detail):
            yield from _messages(value, f"{prefix}.{index}" if prefix else str(index))
    elif isinstance(detail, list):
        for message in detail:
            yield prefix or "request", str(message)
    else:
        yield prefix or "request", str(detail)


def _invalid(exc: ValidationError) -> Response:
    fields: dict[str, list[str]] = {}
    for field, message in _messages(exc.detail):
        fields.setdefault(field, []).append(message)
    detail = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in fields.items())
    return Response({"detail": detail, "fields": fields}, status=status.HTTP_400_BAD_REQUEST)


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler, plus domain errors and one shape for invalid requests."""
    if isinstance(exc, ImportValidationError):
        return Response(
            {
                "file": exc.file,
                "line": exc.line,
                "object": exc.item,
                "column": exc.column,
                "detail": str(exc),
            },
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, RunStateError):
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, RunLimitError):
        return Response({"detail": str(exc)}, status=status.HTTP_429_TOO_MANY_REQUESTS)
    if isinstance(exc, DomainError):
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ValidationError):
        return _invalid(exc)
    return drf_exception_handler(exc, context)  # None for the rest: see DatabaseBusyMiddleware


def bad_request(request: HttpRequest, exception: Exception):
    """400 for a request Django refuses before any view (a host it does not serve, a
    malformed body): JSON under ``/api/``, the site's ``400.html`` elsewhere."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": _bad_request_detail(exception)}, status=400)
    return defaults.bad_request(request, exception)


def _bad_request_detail(exception: Exception) -> str:
    """What a client can do about a request Django refused: the limit it went over, by name."""
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return (
            f"the request body is larger than the {limit:,} bytes a request may send "
            "(DATA_UPLOAD_MAX_MEMORY_SIZE); send data files as multipart uploads to "
            "/api/projects/{id}/data/{kind}/"
        )
    if isinstance(exception, TooManyFieldsSent):
        return (
            f"the request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} form fields "
            "(DATA_UPLOAD_MAX_NUMBER_FIELDS): an upload takes one file and a format"
        )
    return "Bad request."


def permission_denied(request: HttpRequest, exception: Exception):
    """403 outside DRF's views (which answer their own): JSON under ``/api/``, the site's
    ``403.html`` elsewhere."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse(
            {"detail": "You do not have permission to perform this action."},
            status=status.HTTP_403_FORBIDDEN,
        )
    return defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception):
    """404 for a URL no route matches, or a page's object that is not the user's: JSON under
    ``/api/``, the site's ``404.html`` elsewhere."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Not found."}, status=status.HTTP_404_NOT_FOUND)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest):
    """500 for an unexpected failure (logged with its traceback by Django): JSON under
    ``/api/``, the site's ``500.html`` elsewhere; neither says what failed."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse(
            {"detail": "internal server error"}, status=status.HTTP_500_INTERNAL_SERVER_ERROR
        )
    return defaults.server_error(request)
