"""Every page needs a signed-in user, and another user's project, run or comparison is a 404."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from page_helpers import execute

from assignment import services
from assignment.models import Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def objects(sample_project, queued):
    run = services.run_create(project=sample_project, method="random", seed=1)
    execute(run.pk)
    comparison = services.comparison_create(project=sample_project, methods=["random"], budgets=[3])
    return {"project_id": sample_project.pk, "run_id": run.pk, "comparison_id": comparison.pk}


def page_urls(objects) -> list[str]:
    p, r, c = objects["project_id"], objects["run_id"], objects["comparison_id"]
    names = {
        "project": {"project_id": p},
        "project_settings": {"project_id": p},
        "project_delete": {"project_id": p},
        "data": {"project_id": p},
        "quality": {"project_id": p},
        "runs": {"project_id": p},
        "run_create": {"project_id": p},
        "run": {"run_id": r},
        "run_status": {"run_id": r},
        "comparisons": {"project_id": p},
        "comparison_create": {"project_id": p},
        "comparison": {"comparison_id": c},
        "comparison_status": {"comparison_id": c},
        "labels": {"project_id": p},
    }
    urls = [reverse(f"frontend:{name}", kwargs=kwargs) for name, kwargs in names.items()]
    urls += [
        reverse(
            "frontend:data_download", kwargs={"project_id": p, "kind": "workers", "format": "csv"}
        ),
        reverse("frontend:run_download", kwargs={"run_id": r, "format": "json"}),
    ]
    return urls


def test_every_page_sends_a_visitor_who_is_not_signed_in_to_the_sign_in_page(objects):
    for url in [reverse("frontend:projects"), reverse("frontend:account"), *page_urls(objects)]:
        response = Client().get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login") + "?next="), url


def test_the_owner_opens_every_page_of_their_project(client, objects):
    for url in page_urls(objects):
        assert client.get(url).status_code == 200, url


def test_another_user_gets_404_on_every_page_and_form_of_the_project(other_client, objects):
    for url in page_urls(objects):
        assert other_client.get(url).status_code == 404, url
    p, r = objects["project_id"], objects["run_id"]
    posts = [
        reverse("frontend:project_delete", kwargs={"project_id": p}),
        reverse("frontend:project_settings", kwargs={"project_id": p}),
        reverse("frontend:data_upload", kwargs={"project_id": p, "kind": "workers"}),
        reverse("frontend:quality", kwargs={"project_id": p}),
        reverse("frontend:run_create", kwargs={"project_id": p}),
        reverse("frontend:run_cancel", kwargs={"run_id": r}),
        reverse("frontend:comparison_create", kwargs={"project_id": p}),
    ]
    for url in posts:
        assert other_client.post(url, {"name": "stolen"}).status_code == 404, url
    assert Project.objects.get(pk=p).name == "birds and cars"


def test_the_project_list_shows_only_ones_own_projects(client, other_client, sample_project):
    services.project_create(owner=sample_project.owner, name="second")
    mine = client.get(reverse("frontend:projects")).content.decode()
    theirs = other_client.get(reverse("frontend:projects")).content.decode()
    assert "birds and cars" in mine
    assert "second" in mine
    assert "birds and cars" not in theirs
    assert "no project yet" in theirs


def test_sign_in_and_sign_out_work_with_the_password(alice):
    client = Client()
    response = client.post(
        reverse("login"), {"username": "alice", "password": "alice-password"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("frontend:projects")
    assert "Signed in as" in response.content.decode()
    wrong = Client().post(reverse("login"), {"username": "alice", "password": "nope"})
    assert wrong.status_code == 200
    assert "correct username and password" in wrong.content.decode()
    response = client.post(reverse("logout"), follow=True)
    assert response.redirect_chain[-1][0] == reverse("login")
    assert client.get(reverse("frontend:projects")).status_code == 302


def test_every_page_names_an_icon_that_is_served_so_browsers_ask_for_no_favicon_ico(client):
    from django.contrib.staticfiles import finders

    page = client.get(reverse("frontend:projects")).content.decode()
    assert '<link rel="icon" href="/static/frontend/favicon.svg" type="image/svg+xml">' in page
    assert finders.find("frontend/favicon.svg")
