"""A database too busy to answer is a 503 that says to retry, never a 500."""

from __future__ import annotations

import logging

from django.db import OperationalError
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

from assignment.api.errors import API_PREFIX

logger = logging.getLogger(__name__)

#: Seconds a client is told to wait before it tries again.
RETRY_AFTER = 5
_BUSY = "the database is busy; nothing was written, try again in a few seconds"


class DatabaseBusyMiddleware:
    """Turn a lock the database could not get in time ("database is locked" on SQLite, a lock
    or statement timeout on PostgreSQL) into 503 with ``Retry-After``: JSON under ``/api/``,
    the site's ``503.html`` elsewhere (self-contained: no query while the database is busy).
    Each request's writes are one transaction (the services'), so nothing of it was written."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, OperationalError) or not _is_busy(exception):
            return None
        logger.warning("database busy on %s %s: %s", request.method, request.path, exception)
        if request.path.startswith(API_PREFIX):
            response = JsonResponse({"detail": _BUSY}, status=503)
        else:
            page = render_to_string("503.html", {"retry_after": RETRY_AFTER})  # no request
            response = HttpResponse(page, status=503)
        response["Retry-After"] = str(RETRY_AFTER)
        return response


def _is_busy(exception: OperationalError) -> bool:
    text = str(exception).lower()
    return any(word in text for word in ("locked", "lock timeout", "statement timeout", "busy"))
