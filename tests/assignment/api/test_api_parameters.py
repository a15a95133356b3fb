"""Query parameters out of range are a 400 (or an empty page), never a 500."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

HUGE = "21861879878956437504"  # beyond a 64-bit integer


@pytest.mark.parametrize(
    "url",
    [
        f"/api/runs/?project={HUGE}",
        f"/api/runs/?project=-{HUGE}",
        f"/api/projects/?limit={HUGE}",
        f"/api/projects/?offset={HUGE}",
        f"/api/runs/?limit={HUGE}&offset={HUGE}",
        f"/api/projects/{HUGE}/",
        f"/api/runs/{HUGE}/",
        f"/api/comparisons/{HUGE}/",
    ],
)
def test_an_integer_beyond_the_database_range_is_refused_or_found_nowhere(api, filled_project, url):
    response = api.get(url)
    assert response.status_code in (200, 400, 404), response.content
    assert response["Content-Type"] == "application/json"


def test_a_huge_page_size_is_capped_and_still_lists_every_project(api, filled_project):
    response = api.get(f"/api/projects/?limit={HUGE}")
    assert response.status_code == 200
    assert [p["id"] for p in response.json()["results"]] == [filled_project.pk]


def test_a_run_filter_beyond_the_id_range_is_a_400_naming_the_parameter(api, filled_project):
    response = api.get(f"/api/runs/?project={HUGE}")
    assert response.status_code == 400
    assert "project" in response.json()["detail"]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/projects/?offset=abc", "offset"),
        ("/api/projects/?offset=-1", "offset"),
        ("/api/projects/?limit=0", "limit"),
        ("/api/projects/?limit=%C2%B2", "limit"),  # a superscript two is a digit, not a number
        ("/api/runs/?status=", "status"),
        ("/api/runs/?project=", "project"),
    ],
)
def test_a_parameter_the_schema_refuses_is_a_400_not_silently_ignored(
    api, filled_project, url, field
):
    response = api.get(url)
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]


def test_a_blank_download_format_is_a_400(api, filled_project):
    response = api.get(f"/api/projects/{filled_project.pk}/data/workers/?format=")
    assert response.status_code == 400
    assert "format" in response.json()["fields"]


@pytest.mark.parametrize("body", [{"name": 5}, {"name": "x", "description": True}])
def test_a_number_where_the_schema_says_string_is_a_400(api, body):
    response = api.post("/api/projects/", body, format="json")
    assert response.status_code == 400
    assert "Must be a string" in response.json()["detail"]


@pytest.mark.parametrize("value", ["yes", "true", "1", "on", 1, 0])
@pytest.mark.parametrize(
    ("path", "body"),
    [("runs", {"method": "greedy"}), ("comparisons", {"methods": ["greedy"], "budgets": [3]})],
)
def test_round_takes_only_json_true_or_false_and_anything_else_is_a_400_naming_it(
    api, filled_project, path, body, value
):
    from assignment.models import AssignmentRun

    url = f"/api/projects/{filled_project.pk}/{path}/"
    response = api.post(url, {**body, "round": value}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["fields"] == {"round": ["Must be true or false."]}
    assert not AssignmentRun.objects.exists()
    assert api.post(url, {**body, "round": False}, format="json").status_code == 202
    assert AssignmentRun.objects.get().next_round is False


@pytest.mark.parametrize(
    ("method", "path", "body", "field", "message"),
    [
        ("patch", "/api/projects/{pid}/", {"labels": ["a", "b"]}, "labels", "fixed once"),
        ("patch", "/api/projects/{pid}/", {"defaut_budget": 5}, "defaut_budget", "default_budget"),
        ("post", "/api/projects/", {"name": "x", "label": ["a", "b"]}, "label", "labels"),
        ("post", "/api/projects/{pid}/quality/estimate/", {"max_iteration": 5}, "max_iteration",
         "max_iterations"),
        ("post", "/api/projects/{pid}/runs/", {"method": "greedy", "round_": True}, "round_",
         "rounds_left"),
        ("post", "/api/projects/{pid}/comparisons/", {"methods": ["greedy"], "budget": [3]},
         "budget", "budgets"),
    ],
)  # fmt: skip
def test_a_field_the_request_does_not_take_is_a_400_naming_it_and_changes_nothing(
    api, filled_project, method, path, body, field, message
):
    from assignment.models import AssignmentRun, Project, QualityMatrix

    before = (Project.objects.count(), QualityMatrix.objects.count(), AssignmentRun.objects.count())
    updated_at = filled_project.updated_at
    response = getattr(api, method)(path.format(pid=filled_project.pk), body, format="json")
    assert response.status_code == 400, response.content
    assert message in " ".join(response.json()["fields"][field])
    after = (Project.objects.count(), QualityMatrix.objects.count(), AssignmentRun.objects.count())
    assert after == before
    filled_project.refresh_from_db()
    assert filled_project.updated_at == updated_at


@pytest.mark.parametrize("labels", [["0", "1"], ["cat", "dog", "bird"]])
def test_a_project_read_changed_and_written_back_is_taken(api, alice, labels):
    from assignment import services

    project = services.project_create(owner=alice, name="rw", labels=labels)
    url = f"/api/projects/{project.pk}/"
    shown = api.get(url).json()
    assert (shown["default_prior"] is None) == (len(labels) > 2)
    response = api.patch(url, {**shown, "name": "renamed", "worker_count": 99}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "renamed"
    changed = api.patch(url, {**shown, "labels": ["x", "y"]}, format="json")
    assert changed.status_code == 400
    assert changed.json()["fields"]["labels"] == ["The label set is fixed once the project exists."]
