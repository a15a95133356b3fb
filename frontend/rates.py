"""The API's per-user rates, on the pages.

An upload, a run or a comparison started from a page counts against the same counter as one
over the API: rest_framework's :class:`~rest_framework.throttling.ScopedRateThrottle`, whose
cache key is the scope and the user, with the rates of ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``
(``TVCS_UPLOAD_RATE``, ``TVCS_RUN_RATE``). So a user has one allowance whichever way they come,
and a page is no way around it.
"""

from __future__ import annotations

import math

from django.http import HttpRequest
from rest_framework.throttling import ScopedRateThrottle

#: What each scope counts, for the message.
_COUNTED = {"uploads": "uploads", "runs": "runs and comparisons"}


class _Scoped:
    """What :class:`ScopedRateThrottle` reads from a view: the scope of its rate."""

    def __init__(self, scope: str) -> None:
        self.throttle_scope = scope


def rate_refusal(request: HttpRequest, *, scope: str) -> str:
    """Count ``request`` against the user's rate of ``scope`` and return "", or, beyond the
    rate, say so and when to try again (the request is then not counted)."""
    throttle = ScopedRateThrottle()
    if throttle.allow_request(request, _Scoped(scope)):
        return ""
    minutes = max(1, math.ceil((throttle.wait() or 0) / 60))
    return (
        f"too many {_COUNTED[scope]} for now: at most {throttle.rate} a user, the pages and the "
        f"API together; try again in about {minutes} minute{'s' if minutes != 1 else ''}"
    )
