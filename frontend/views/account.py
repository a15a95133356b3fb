"""The signed-in user's API token and the way to the API docs."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.timezone import now
from django.views.decorators.http import require_http_methods

from assignment import selectors, services


@login_required
@require_http_methods(["GET", "POST"])
def account(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        services.api_token_renew(user=request.user)
        messages.success(request, "A new API token was made; any older one no longer works.")
        return redirect("frontend:account")
    token = selectors.api_token_of(user=request.user)
    expiry = None if token is None else selectors.api_token_expiry(token=token)
    return render(
        request,
        "frontend/account.html",
        {"token": token, "expiry": expiry, "expired": expiry is not None and expiry <= now()},
    )
