"""Who may do what: a token for everything but the token itself and /healthz; each user sees
and touches only their own projects and what is in them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from api_helpers import WORKERS_CSV, execute, upload
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from assignment import services
from assignment.models import AssignmentRun, Comparison, Project, QualityMatrix, Worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def objects(filled_project, queued):
    """Alice's project, a succeeded run and a comparison."""
    run = services.run_create(project=filled_project, method="random")
    execute(run.pk)
    comparison = services.comparison_create(project=filled_project, methods=["random"])
    return {"pid": filled_project.pk, "rid": run.pk, "cid": comparison.pk}


#: Every endpoint that names an object, as (method, path, JSON body or None).
OBJECT_ENDPOINTS = [
    ("get", "/api/projects/{pid}/", None),
    ("patch", "/api/projects/{pid}/", {"name": "mine now"}),
    ("delete", "/api/projects/{pid}/", None),
    ("get", "/api/projects/{pid}/data/workers/", None),
    ("get", "/api/projects/{pid}/labels/", None),
    ("get", "/api/projects/{pid}/quality/", None),
    ("post", "/api/projects/{pid}/quality/estimate/", {}),
    ("post", "/api/projects/{pid}/runs/", {"method": "random"}),
    ("get", "/api/projects/{pid}/comparisons/", None),
    ("post", "/api/projects/{pid}/comparisons/", {"methods": ["random"]}),
    ("get", "/api/runs/{rid}/", None),
    ("post", "/api/runs/{rid}/cancel/", None),
    ("get", "/api/runs/{rid}/assignment/", None),
    ("get", "/api/comparisons/{cid}/", None),
]

#: Endpoints without an object.
OTHER_ENDPOINTS = [
    ("get", "/api/projects/", None),
    ("post", "/api/projects/", {"name": "x"}),
    ("get", "/api/runs/", None),
    ("get", "/api/schema/", None),
    ("get", "/api/docs/", None),
]


def call(client: APIClient, method: str, path: str, data, ids: dict):
    path = path.format(**ids)
    if data is None:
        return getattr(client, method)(path)
    return getattr(client, method)(path, data, format="json")


def snapshot() -> tuple:
    return (
        sorted(Project.objects.values_list("pk", "name", "owner_id")),
        sorted(AssignmentRun.objects.values_list("pk", "status")),
        Comparison.objects.count(),
        QualityMatrix.objects.count(),
        Worker.objects.count(),
    )


@pytest.mark.parametrize(("method", "path", "data"), OBJECT_ENDPOINTS)
def test_another_users_objects_are_not_found_and_left_alone(other_api, objects, method, path, data):
    before = snapshot()
    response = call(other_api, method, path, data, objects)
    assert response.status_code == 404
    assert response.json()["detail"].startswith("You have no ")
    assert snapshot() == before


def test_another_users_project_takes_no_upload(other_api, objects):
    before = snapshot()
    assert upload(other_api, objects["pid"], "workers", WORKERS_CSV).status_code == 404
    assert snapshot() == before


def test_a_missing_object_is_not_found_too(api, objects):
    assert api.get("/api/projects/999999/").status_code == 404
    assert api.get("/api/runs/999999/").status_code == 404
    assert api.get("/api/comparisons/999999/").status_code == 404


def test_lists_show_only_the_callers_own_objects(api, other_api, objects):
    assert other_api.get("/api/projects/").json()["count"] == 0
    assert other_api.get("/api/runs/").json()["count"] == 0
    assert other_api.get("/api/runs/", {"project": objects["pid"]}).json()["count"] == 0
    other_api.post("/api/projects/", {"name": "bobs"})
    assert [p["name"] for p in other_api.get("/api/projects/").json()["results"]] == ["bobs"]
    assert [p["name"] for p in api.get("/api/projects/").json()["results"]] == ["birds"]
    assert api.get("/api/runs/").json()["count"] == 2


def test_two_users_may_both_have_a_project_of_the_same_name(api, other_api, objects):
    response = other_api.post("/api/projects/", {"name": "birds"})
    assert response.status_code == 201


@pytest.mark.parametrize(("method", "path", "data"), OBJECT_ENDPOINTS + OTHER_ENDPOINTS)
def test_a_request_without_a_token_is_unauthorised(objects, method, path, data):
    before = snapshot()
    response = call(APIClient(), method, path, data, objects)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert snapshot() == before


def test_an_upload_without_a_token_is_unauthorised(objects):
    assert upload(APIClient(), objects["pid"], "workers", WORKERS_CSV).status_code == 401


def test_a_wrong_token_is_unauthorised(objects):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    response = client.get("/api/projects/")
    assert response.status_code == 401
    assert response.json()["detail"] == "Invalid token."


def test_a_token_of_an_inactive_user_is_unauthorised(api, alice):
    alice.is_active = False
    alice.save()
    assert api.get("/api/projects/").status_code == 401


def test_the_token_endpoint_and_the_health_check_need_no_token(alice):
    client = APIClient()
    response = client.post(
        "/api/token/", {"username": "alice", "password": "alice-password"}, format="json"
    )
    assert response.status_code == 200
    assert client.get("/healthz").status_code == 200


def test_token_requests_are_throttled_per_address_whatever_x_forwarded_for_says(alice, monkeypatch):
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "token", "2/minute")
    client = APIClient()
    for k in range(2):
        response = client.post(
            "/api/token/",
            {"username": "alice", "password": "guess"},
            format="json",
            HTTP_X_FORWARDED_FOR=f"10.0.0.{k}",
        )
        assert response.status_code == 400
    response = client.post(
        "/api/token/",
        {"username": "alice", "password": "alice-password"},
        format="json",
        HTTP_X_FORWARDED_FOR="10.0.0.9",
    )
    assert response.status_code == 429


def test_a_token_expires_after_its_maximum_age_and_signing_in_again_gives_a_new_one(
    alice, settings
):
    settings.TVCS_TOKEN_MAX_AGE_DAYS = 30
    key = (
        APIClient()
        .post("/api/token/", {"username": "alice", "password": "alice-password"})
        .json()["token"]
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/projects/").status_code == 200
    Token.objects.filter(key=key).update(created=timezone.now() - timedelta(days=31))
    response = client.get("/api/projects/")
    assert response.status_code == 401
    assert "this token expired on" in response.json()["detail"]
    again = (
        APIClient()
        .post("/api/token/", {"username": "alice", "password": "alice-password"})
        .json()["token"]
    )
    assert again != key
    client.credentials(HTTP_AUTHORIZATION=f"Token {again}")
    assert client.get("/api/projects/").status_code == 200
    # Signing in again while the token is valid gives the same token.
    assert (
        APIClient()
        .post("/api/token/", {"username": "alice", "password": "alice-password"})
        .json()["token"]
        == again
    )


def test_tokens_never_expire_with_a_maximum_age_of_zero(alice, settings):
    settings.TVCS_TOKEN_MAX_AGE_DAYS = 0
    token = Token.objects.create(user=alice)
    Token.objects.filter(key=token.key).update(created=timezone.now() - timedelta(days=3650))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/projects/").status_code == 200
