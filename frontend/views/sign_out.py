"""Signing out: Django's ``LogoutView`` (POST signs out), and its address opened as a page."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import LogoutView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render


class SignOutView(LogoutView):
    """POST signs out and goes to the sign-in page, as Django's view does. GET (the address
    typed or bookmarked, which Django answers with an empty 405) shows a page with the Sign out
    button to a signed-in user, and sends anyone else to sign in."""

    http_method_names = ["get", "post", "options"]

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect(settings.LOGIN_URL)
        return render(request, "frontend/sign_out.html")
