"""The API token page, and the API used from the browser session (its docs' "Try it out")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


def test_the_token_is_made_on_request_shown_and_replaced(client, alice):
    url = reverse("frontend:account")
    assert "You have no token yet." in client.get(url).content.decode()
    assert "data-confirm" not in client.get(url).content.decode()  # nothing to replace yet
    client.post(url)
    first = Token.objects.get(user=alice).key
    page = client.get(url).content.decode()
    assert f'value="{first}"' in page
    assert 'data-confirm="Replace your API token? Every client' in page  # the browser asks
    client.post(url)
    second = Token.objects.get(user=alice).key
    assert second != first
    api = Client(HTTP_AUTHORIZATION=f"Token {second}")
    assert api.get("/api/projects/").status_code == 200
    assert Client(HTTP_AUTHORIZATION=f"Token {first}").get("/api/projects/").status_code == 401


def test_a_signed_in_browser_opens_the_api_docs_and_schema(client):
    assert client.get(reverse("api:docs")).status_code == 200
    assert client.get(reverse("api:schema")).status_code == 200
    assert Client().get(reverse("api:docs")).status_code == 401
    browser = Client().get(reverse("api:docs"), HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert browser.status_code == 302  # to the sign-in page, and back after it
    assert browser["Location"] == "/accounts/login/?next=/api/docs/"


def test_the_api_takes_the_session_and_its_csrf_token(alice, sample_project):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert browser.get(f"/api/projects/{sample_project.pk}/").json()["name"] == "birds and cars"
    refused = browser.patch(
        f"/api/projects/{sample_project.pk}/", {"description": "x"}, content_type="application/json"
    )
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
    browser.get(reverse("frontend:projects"))  # sets the CSRF cookie
    token = browser.cookies["csrftoken"].value
    accepted = browser.patch(
        f"/api/projects/{sample_project.pk}/",
        {"description": "from the docs"},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["description"] == "from the docs"


def test_the_token_page_says_until_when_the_token_works_and_when_it_expired(
    client, alice, settings
):
    settings.TVCS_TOKEN_MAX_AGE_DAYS = 10
    client.post(reverse("frontend:account"))
    assert "It works until" in client.get(reverse("frontend:account")).content.decode()
    Token.objects.filter(user=alice).update(created=timezone.now() - timedelta(days=11))
    assert "It expired on" in client.get(reverse("frontend:account")).content.decode()
