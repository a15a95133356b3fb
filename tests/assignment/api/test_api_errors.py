"""Every error under /api/ is JSON of one shape: {"detail": ...}, with "fields" for a form."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from django.test import Client
from rest_framework.test import APIClient

from assignment.api import views
from frontend.views import projects

pytestmark = pytest.mark.django_db


def test_a_validation_error_says_why_in_detail_and_per_field_in_fields(api, filled_project):
    response = api.post(
        f"/api/projects/{filled_project.pk}/runs/", {"method": "simplex", "seed": -1}
    )
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"detail", "fields"}
    assert "method: " in body["detail"]
    assert "seed: " in body["detail"]
    assert "not a valid choice" in body["fields"]["method"][0]
    assert body["fields"]["seed"]


def test_an_error_inside_a_list_names_its_position(api, filled_project):
    response = api.post(
        f"/api/projects/{filled_project.pk}/comparisons/",
        {"methods": ["random"], "budgets": [4, 0]},
    )
    assert response.status_code == 400
    assert "budgets.1" in response.json()["fields"]
    assert "budgets.1: " in response.json()["detail"]


@pytest.mark.parametrize(
    ("method", "url", "status"),
    [
        ("get", "/api/no-such-thing/", 404),
        ("get", "/api/projects/abc/", 404),
        ("put", "/api/runs/", 405),
        ("get", "/api/token/", 405),
    ],
)
def test_unknown_urls_and_methods_are_json_too(api, method, url, status):
    response = getattr(api, method)(url)
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"]


def test_an_unexpected_failure_is_a_json_500_without_its_traceback(api, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(views.selectors, "project_list_for_user", broken)
    api.raise_request_exception = False
    response = api.get("/api/projects/")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "internal server error"}
    assert "secret" not in response.content.decode()


def test_pages_outside_the_api_keep_their_html_errors(client_for_pages):
    response = client_for_pages.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.fixture
def client_for_pages(alice):
    client = APIClient()
    client.force_login(alice)
    return client


def test_a_database_too_busy_to_answer_is_a_503_with_retry_after(api, filled_project, monkeypatch):
    def locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(views.services, "project_update", locked)
    api.raise_request_exception = False
    response = api.patch(f"/api/projects/{filled_project.pk}/", {"description": "x"})
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "try again" in response.json()["detail"]


def test_a_busy_database_is_a_503_on_the_pages_too(alice, monkeypatch):
    def locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(projects.services, "project_create", locked)
    browser = Client(raise_request_exception=False)
    browser.force_login(alice)
    response = browser.post(
        "/projects/new/",
        {
            "name": "n",
            "labels": "0, 1",
            "default_prior": "0.5",
            "default_max_workers_per_task": "3",
            "default_max_tasks_per_worker": "3",
        },
    )
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    # The site's page, in its layout (self-contained: the database is busy).
    page = response.content.decode()
    assert "<title>Busy · tvcs-assign</title>" in page
    assert 'class="site-header"' in page
    assert "nothing of this request was saved. Try again in\n    5 seconds" in page


@pytest.mark.parametrize("path", ["/api/token/", "/api/projects/"])
def test_a_body_nested_too_deeply_for_the_decoder_is_a_json_400(api, path):
    response = api.generic(
        "POST", path, "[" * 100_000 + "]" * 100_000, content_type="application/json"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "nested too deeply" in response.json()["detail"]


def test_a_body_over_the_size_limit_is_a_json_400_naming_the_limit(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    api.raise_request_exception = False
    response = api.post("/api/projects/", {"name": "x", "description": "d" * 2000})
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "larger than the 1,000 bytes" in response.json()["detail"]
