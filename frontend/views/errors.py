"""A form refused by Django's CSRF check (``CSRF_FAILURE_VIEW``).

Its usual cause on the pages is a stale tab: the user signed in or out since the tab loaded its
form (in this tab or another; signing in gives the session a new CSRF secret), or the session
expired. The page says so and links back to the page the form was on, which loads it anew (or
sends the user to sign in first). Under ``/api/`` the answer is JSON, as DRF's own is.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from assignment.api.errors import API_PREFIX


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": f"CSRF Failed: {reason}".strip()}, status=403)
    return render(
        request, "frontend/csrf_failure.html", {"back": _same_site_referer(request)}, status=403
    )


def _same_site_referer(request: HttpRequest) -> str:
    """The page the form was sent from, if it is one of this site's; else ""."""
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return referer
    return ""
