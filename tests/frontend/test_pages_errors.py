"""Error pages in the site's layout (404, 403, 400, 405, 500, a failed CSRF check), action
addresses opened as pages, and the API's errors kept as JSON beside them."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.template.loader import get_template
from django.test import Client, RequestFactory
from django.urls import reverse

from assignment import services
from assignment.api.errors import bad_request, permission_denied
from assignment.models import Project, RunStatus, Worker
from frontend.views import projects
from frontend.views.errors import csrf_failure

pytestmark = pytest.mark.django_db

#: What Chrome asks for when it opens an address.
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def assert_site_page(response, status: int, title: str) -> str:
    """The response is an HTML page of ``status`` in the site's layout; its text."""
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert f"<title>{title} · tvcs-assign</title>" in page
    assert 'class="site-header"' in page
    assert "frontend/site.css" in page
    assert '<main id="main"' in page
    return page


# --- 404, 403, 400, 500 ---------------------------------------------------------------------


def test_a_missing_run_is_a_404_page_with_the_sites_header_and_navigation(client):
    page = assert_site_page(client.get("/runs/99999/"), 404, "Page not found")
    assert "<h1>Page not found</h1>" in page
    assert "/runs/99999/" in page
    assert "Signed in as <strong>alice</strong>" in page
    assert f'href="{reverse("frontend:projects")}">Your projects</a>' in page


def test_an_upload_from_a_tab_whose_project_was_deleted_is_the_404_page(client, sample_project):
    url = reverse("frontend:data_upload", args=[sample_project.pk, "workers"])
    Project.objects.filter(pk=sample_project.pk).delete()
    response = client.post(url, {"file": ""})
    page = assert_site_page(response, 404, "Page not found")
    assert "was deleted" in page


def test_an_unknown_address_signed_out_is_the_404_page_with_a_way_to_sign_in():
    page = assert_site_page(Client().get("/no-such-page/"), 404, "Page not found")
    assert f'href="{reverse("login")}">Sign in</a>' in page


def test_a_refused_page_is_the_403_page(client, monkeypatch):
    def refuse(**kwargs):
        raise PermissionDenied

    monkeypatch.setattr(projects.selectors, "project_list_for_user", refuse)
    page = assert_site_page(client.get(reverse("frontend:projects")), 403, "Not allowed")
    assert "Nothing was changed" in page


def test_a_host_the_site_does_not_serve_is_the_400_page():
    response = Client(HTTP_HOST="evil.example").get("/")
    page = assert_site_page(response, 400, "Bad request")
    assert "Nothing was changed" in page


def test_a_failing_page_is_the_500_page_in_the_sites_style_without_what_failed(client, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(projects.selectors, "project_list_for_user", broken)
    client.raise_request_exception = False
    response = client.get(reverse("frontend:projects"))
    assert response.status_code == 500
    page = response.content.decode()
    assert "<title>Server error · tvcs-assign</title>" in page
    assert "frontend/site.css" in page
    assert "secret" not in page


@pytest.mark.django_db(databases=[])
def test_the_500_page_renders_with_no_context_and_no_database():
    # Django renders 500.html with an empty context; with databases=[] any query would fail.
    page = get_template("500.html").render()
    assert '<html lang="en">' in page
    assert "<h1>Server error</h1>" in page
    assert 'href="/static/frontend/site.css"' in page


@pytest.mark.parametrize(
    ("url", "status"),
    [("/api/no-such-thing/", 404), ("/api/runs/99999/", 404), ("/api/projects/abc/", 404)],
)
def test_the_apis_errors_stay_json_for_a_browser_signed_in_to_the_pages(client, url, status):
    response = client.get(url, HTTP_ACCEPT=BROWSER_ACCEPT)
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"]


def test_the_api_handlers_of_400_and_403_answer_json_under_the_api():
    request = RequestFactory().get("/api/projects/")
    assert bad_request(request, SuspiciousOperation()).status_code == 400
    assert bad_request(request, SuspiciousOperation())["Content-Type"] == "application/json"
    denied = permission_denied(request, PermissionDenied())
    assert denied.status_code == 403
    assert denied["Content-Type"] == "application/json"


# --- action addresses opened as pages (405) ---------------------------------------------------


@pytest.fixture
def run(sample_project, queued):
    return services.run_create(project=sample_project, method="random", seed=1)


@pytest.mark.parametrize("action", ["run_cancel", "run_withdraw", "run_hand_out"])
def test_a_runs_action_opened_as_a_page_goes_to_the_run_page_and_does_nothing(client, run, action):
    response = client.get(reverse(f"frontend:{action}", args=[run.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:run", args=[run.pk])
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED
    assert client.get(response["Location"]).status_code == 200


def test_an_upload_address_left_in_the_bar_goes_to_the_data_page_at_its_form(
    client, sample_project
):
    before = Worker.objects.count()
    response = client.get(reverse("frontend:data_upload", args=[sample_project.pk, "workers"]))
    assert response.status_code == 302
    assert response["Location"] == (
        reverse("frontend:data", args=[sample_project.pk]) + "#kind-workers"
    )
    assert Worker.objects.count() == before


def test_an_unknown_kind_of_data_is_a_404_whatever_the_method(client, sample_project):
    url = f"/projects/{sample_project.pk}/data/bogus/"
    for method in ("get", "post", "put"):
        response = getattr(client, method)(url)
        assert_site_page(response, 404, "Page not found")


def test_an_action_opened_signed_out_signs_in_first_then_lands_on_its_page(alice, run):
    client = Client()
    url = reverse("frontend:run_cancel", args=[run.pk])
    response = client.get(url)
    assert response["Location"] == f"{reverse('login')}?next={url}"
    response = client.post(
        response["Location"], {"username": "alice", "password": "alice-password"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("frontend:run", args=[run.pk])
    assert response.status_code == 200


def test_another_users_action_opened_as_a_page_ends_in_a_404(other_client, run):
    response = other_client.get(reverse("frontend:run_cancel", args=[run.pk]), follow=True)
    assert response.status_code == 404


def test_other_methods_on_an_action_are_the_405_page_with_allow(client, run):
    response = client.put(reverse("frontend:run_cancel", args=[run.pk]))
    page = assert_site_page(response, 405, "Not a page to open")
    assert response["Allow"] == "POST"
    assert "where a form of another page" in page
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED


def test_a_form_sent_to_a_page_that_takes_none_is_the_405_page(client, sample_project):
    response = client.post(reverse("frontend:data", args=[sample_project.pk]))
    page = assert_site_page(response, 405, "This page takes no form")
    assert response["Allow"] == "GET"
    assert f'href="{reverse("frontend:data", args=[sample_project.pk])}"' in page


def test_the_apis_405_stays_json(client):
    response = client.get("/api/token/")
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"


def test_the_sign_out_address_opened_signed_in_is_a_page_with_the_sign_out_button(client):
    page = assert_site_page(client.get(reverse("logout")), 200, "Sign out")
    assert '<form method="post" class="actions">' in page
    assert client.get(reverse("frontend:projects")).status_code == 200  # still signed in
    response = client.post(reverse("logout"))
    assert response["Location"] == reverse("login")
    assert client.get(reverse("frontend:projects")).status_code == 302


def test_the_sign_out_address_opened_signed_out_goes_to_sign_in():
    response = Client().get(reverse("logout"))
    assert response.status_code == 302
    assert response["Location"] == reverse("login")


# --- a failed CSRF check ----------------------------------------------------------------------


@pytest.fixture
def stale_tab(alice):
    """A browser signed in as alice that enforces CSRF, with a form's token from before a new
    sign-in (signing in rotates the CSRF secret, as another tab would)."""
    client = Client(enforce_csrf_checks=True)
    client.get(reverse("login"))
    old_token = client.cookies["csrftoken"].value
    client.post(
        reverse("login"),
        {"username": "alice", "password": "alice-password", "csrfmiddlewaretoken": old_token},
    )
    assert client.cookies["csrftoken"].value != old_token
    return client, old_token


def test_a_stale_tabs_form_gets_a_page_that_says_the_session_changed_with_a_way_back(
    stale_tab, sample_project
):
    client, old_token = stale_tab
    project_url = reverse("frontend:project_settings", args=[sample_project.pk])
    response = client.post(
        project_url,
        {"name": "renamed", "csrfmiddlewaretoken": old_token},
        HTTP_REFERER=f"http://testserver{project_url}",
    )
    page = assert_site_page(response, 403, "The form was not sent")
    assert "session changed or expired" in page
    assert "More information is available with DEBUG=True" not in page
    assert f'href="http://testserver{project_url}">Back to the page</a>' in page
    sample_project.refresh_from_db()
    assert sample_project.name == "birds and cars"


def test_the_csrf_page_links_home_not_to_another_sites_referer(stale_tab, sample_project):
    client, old_token = stale_tab
    response = client.post(
        reverse("frontend:project_settings", args=[sample_project.pk]),
        {"name": "renamed", "csrfmiddlewaretoken": old_token},
        HTTP_REFERER="https://evil.example/form",
    )
    page = assert_site_page(response, 403, "The form was not sent")
    assert "evil.example" not in page
    assert "Back to the page" not in page
    assert f'href="{reverse("frontend:projects")}">Your projects</a>' in page


def test_a_signed_out_stale_tab_is_told_to_sign_in_again(alice, sample_project):
    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = "x" * 32
    response = client.post(reverse("frontend:data_upload", args=[sample_project.pk, "workers"]))
    page = assert_site_page(response, 403, "The form was not sent")
    assert "Sign in again" in page


def test_a_failed_csrf_check_under_the_api_is_json():
    # DRF's views check CSRF themselves (and answer JSON); this is any other view under /api/.
    response = csrf_failure(RequestFactory().post("/api/projects/"), "CSRF token missing.")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {"detail": "CSRF Failed: CSRF token missing."}
