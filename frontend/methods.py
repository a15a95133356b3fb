"""Addresses of the pages opened with a method they do not take.

A form's action is an address like any other: a browser opens it with GET when it is typed,
bookmarked, or left in the address bar by a rejected form and then reloaded. Two pieces answer
that with a page instead of the browser's bare "HTTP ERROR 405":

- :func:`post_action` decorates the views that only act (cancel a run, upload a file): a GET
  (or HEAD) redirects to the page the action belongs to, where its button is.
- :class:`MethodNotAllowedPageMiddleware` renders any other 405 of the pages (a form sent to a
  page that takes none, a PUT) as the site's ``405.html``. The API keeps its JSON 405s (DRF).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect, render

from assignment.api.errors import API_PREFIX


def post_action(page: Callable[..., str]):
    """Make a view act on POST only; GET and HEAD redirect to ``page(**kwargs)``, the address
    of the page the action belongs to (``kwargs``: the URL's), other methods are a 405.

    ``page`` may raise :class:`~django.http.Http404` for an address that names nothing (an
    unknown kind of data file), so that it is a 404 whatever the method. Put it under
    ``login_required``: a visitor who is not signed in signs in first, then lands on the page.
    """

    def decorator(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method == "POST":
                return view(request, *args, **kwargs)
            target = page(**kwargs)
            if request.method in ("GET", "HEAD"):
                return redirect(target)
            return HttpResponseNotAllowed(["POST"])

        return wrapper

    return decorator


class MethodNotAllowedPageMiddleware:
    """An empty 405 of a page becomes ``405.html`` (same status and ``Allow`` header), which
    says whether the address is a page to open or where another page's form sends."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code != 405
            or request.path.startswith(API_PREFIX)
            or getattr(response, "streaming", False)
            or response.content
        ):
            return response
        allowed = [m.strip() for m in response.get("Allow", "").split(",") if m.strip()]
        page = render(
            request,
            "405.html",
            {"allowed": allowed, "opens": "GET" in allowed},
            status=405,
        )
        if response.has_header("Allow"):
            page["Allow"] = response["Allow"]
        return page
