"""Password guessing: every way of signing in counts failures and locks the account a while."""

from __future__ import annotations

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.cache import cache
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

LIMIT = 10


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.TVCS_SIGN_IN_MAX_FAILURES = LIMIT


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user(
        "boss", password="the-right-one", is_staff=True, is_superuser=True
    )


def attempt(password: str, address: str = "10.0.0.1"):
    request = RequestFactory().post("/", REMOTE_ADDR=address)
    return authenticate(request, username="boss", password=password)


def test_sixty_wrong_passwords_then_the_right_one_is_refused_until_the_lockout_ends(staff):
    for _ in range(60):
        assert attempt("guess") is None
    assert attempt("the-right-one") is None
    cache.clear()  # the lockout window has passed
    assert attempt("the-right-one") == staff


def test_a_success_before_the_limit_clears_the_count(staff):
    for _ in range(LIMIT - 1):
        attempt("guess")
    assert attempt("the-right-one") == staff
    for _ in range(LIMIT - 1):
        attempt("guess")
    assert attempt("the-right-one") == staff


def test_one_address_trying_many_usernames_is_locked_too(staff):
    for k in range(5 * LIMIT):
        request = RequestFactory().post("/", REMOTE_ADDR="10.9.9.9")
        authenticate(request, username=f"nobody{k}", password="x")
    assert attempt("the-right-one", address="10.9.9.9") is None
    assert attempt("the-right-one", address="10.0.0.2") == staff  # another address still may


def test_the_admin_sign_in_is_locked_and_says_so(staff):
    client = Client()
    for _ in range(LIMIT):
        client.post("/admin/login/", {"username": "boss", "password": "guess"})
    response = client.post("/admin/login/", {"username": "boss", "password": "the-right-one"})
    assert response.status_code == 200  # the form again, not a redirect into the admin
    assert "Too many failed sign-ins" in response.content.decode()
    assert client.get("/admin/").status_code == 302


def test_the_pages_sign_in_is_locked_and_says_so(staff):
    client = Client()
    for _ in range(LIMIT):
        client.post("/accounts/login/", {"username": "boss", "password": "guess"})
    response = client.post("/accounts/login/", {"username": "boss", "password": "the-right-one"})
    assert "Too many failed sign-ins" in response.content.decode()
    assert client.get("/").status_code == 302


def test_the_api_token_endpoint_counts_and_is_locked_the_same_way(staff):
    client = APIClient()
    for _ in range(LIMIT):
        assert (
            client.post("/api/token/", {"username": "boss", "password": "guess"}).status_code == 400
        )
    response = client.post("/api/token/", {"username": "boss", "password": "the-right-one"})
    assert response.status_code == 400
    assert "token" not in response.json()
    assert response.json()["detail"].startswith("Too many failed sign-ins")  # not "wrong"


@pytest.mark.parametrize("username", [[None, None], {"a": 1}, 5, None])
def test_a_token_request_whose_username_is_not_text_is_a_400_not_a_500(staff, username):
    response = APIClient().post(
        "/api/token/", {"username": username, "password": "x"}, format="json"
    )
    assert response.status_code == 400
