"""The whole product through the API: token, project, uploads, quality, runs, comparisons,
downloads. Runs are computed here by the services the Celery task calls; the broker is the
recorder of ``run_execute_task.delay``."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from api_helpers import (
    ANSWERS_CSV,
    GOLD_ANSWERS_CSV,
    GOLD_ITEMS_CSV,
    TASKS_CSV,
    WORKERS_CSV,
    execute,
    upload,
)
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

from assignment.models import AssignmentRun, Comparison, Project, RunStatus

pytestmark = pytest.mark.django_db


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_a_user_gets_a_token_with_username_and_password_and_uses_it(alice):
    client = APIClient()
    response = client.post(
        "/api/token/", {"username": "alice", "password": "alice-password"}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/projects/").status_code == 200


def test_a_wrong_password_gets_no_token(alice):
    response = APIClient().post(
        "/api/token/", {"username": "alice", "password": "guess"}, format="json"
    )
    assert response.status_code == 400
    assert "token" not in response.json()


def test_a_token_request_with_a_field_it_does_not_take_is_a_400_naming_it(alice):
    response = APIClient().post(
        "/api/token/",
        {"username": "alice", "password": "alice-password", "remember": True},
        format="json",
    )
    assert response.status_code == 400
    assert "remember" in response.json()["fields"]


@pytest.mark.parametrize("action", ["cancel", "withdraw", "hand-out"])
def test_a_runs_action_with_a_body_is_a_400_and_changes_nothing(
    api, filled_project, queued, action
):
    run = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).json()
    response = api.post(f"/api/runs/{run['id']}/{action}/", {"force": True})
    assert response.status_code == 400
    assert response.json()["fields"] == {"force": ["Unknown field; this request takes no body."]}
    assert AssignmentRun.objects.get(pk=run["id"]).status == "queued"


def test_the_whole_flow_from_a_new_project_to_the_downloaded_assignment(
    api, queued, django_capture_on_commit_callbacks
):
    response = api.post(
        "/api/projects/",
        {"name": "birds", "description": "bird photos", "default_max_workers_per_task": 2},
    )
    assert response.status_code == 201, response.json()
    project = response.json()
    assert project["labels"] == ["0", "1"]
    assert project["default_max_workers_per_task"] == 2
    pid = project["id"]

    for kind, text in (
        ("workers", WORKERS_CSV),
        ("tasks", TASKS_CSV),
        ("gold_items", GOLD_ITEMS_CSV),
        ("gold_answers", GOLD_ANSWERS_CSV),
    ):
        response = upload(api, pid, kind, text)
        assert response.status_code == 201, response.json()
        assert response.json() == {
            "kind": kind,
            "file": f"{kind}.csv",
            "rows": text.count("\n") - 1,
            "added": text.count("\n") - 1,
        }
        again = upload(api, pid, kind, text).json()
        assert (again["rows"], again["added"]) == (text.count("\n") - 1, 0)
    detail = api.get(f"/api/projects/{pid}/").json()
    assert (detail["worker_count"], detail["task_count"], detail["gold_item_count"]) == (6, 10, 4)

    assert api.get(f"/api/projects/{pid}/quality/").status_code == 404
    response = api.post(f"/api/projects/{pid}/quality/estimate/", {"worker_strength": "auto"})
    assert response.status_code == 201, response.json()
    summary = response.json()
    assert (summary["n_workers"], summary["n_tasks"], summary["workers_without_gold"]) == (6, 10, 0)
    assert 0 < summary["min"] <= summary["mean"] <= summary["max"] < 1
    assert api.get(f"/api/projects/{pid}/quality/").json() == summary

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/projects/{pid}/runs/", {"method": "greedy", "budget": 12, "seed": 1}
        )
    assert response.status_code == 202, response.json()
    run = response.json()
    assert (run["status"], run["budget"], run["max_workers_per_task"]) == ("queued", 12, 2)
    assert queued == [run["id"]]

    execute(run["id"])
    run = api.get(f"/api/runs/{run['id']}/").json()
    assert run["status"] == "succeeded"
    assert run["progress"] == 100
    assert 0.5 < run["expected_accuracy"] <= 1
    assert 0 < run["n_assigned"] <= 12
    assert run["started_at"]
    assert run["finished_at"]
    assert run["seconds"] >= 0
    assert run["error"] == ""

    response = api.get(f"/api/runs/{run['id']}/assignment/", {"format": "csv"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert f'filename="run-{run["id"]}-assignment.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(body(response).decode())))
    assert rows[0] == ["worker_id", "task_id"]
    pairs = [tuple(row) for row in rows[1:]]
    assert len(pairs) == len(set(pairs)) == run["n_assigned"]
    assert {w for w, _ in pairs} <= {f"w{i}" for i in range(1, 7)}
    assert {t for _, t in pairs} <= {f"t{j}" for j in range(1, 11)}
    per_task = {t: sum(1 for _, u in pairs if u == t) for _, t in pairs}
    assert max(per_task.values()) <= 2

    response = api.get(f"/api/runs/{run['id']}/assignment/", {"format": "json"})
    assert response["Content-Type"] == "application/json"
    assert [(p["worker_id"], p["task_id"]) for p in json.loads(body(response))] == pairs

    response = upload(api, pid, "answers", ANSWERS_CSV)
    assert response.json()["rows"] == 5
    response = api.get(f"/api/projects/{pid}/labels/", {"format": "json"})
    assert response.status_code == 200
    labels = {row["task_id"]: row for row in json.loads(body(response))}
    assert set(labels) == {"t1", "t2", "t3"}
    assert labels["t1"]["n_answers"] == 3
    assert labels["t1"]["label"] in {"0", "1"}
    assert 0.5 <= labels["t1"]["posterior"] <= 1
    response = api.get(f"/api/projects/{pid}/labels/")  # CSV by default
    assert body(response).decode().splitlines()[0] == "task_id,label,posterior,n_answers"

    listed = api.get("/api/runs/", {"project": pid, "status": "succeeded"}).json()
    assert [r["id"] for r in listed["results"]] == [run["id"]]
    assert api.get("/api/runs/", {"status": "queued"}).json()["count"] == 0


def test_a_comparison_queues_a_run_per_method_and_budget_and_reports_curves(
    api, filled_project, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/projects/{filled_project.pk}/comparisons/",
            {"methods": ["random", "greedy"], "budgets": [10, 5], "seed": 2},
        )
    assert response.status_code == 202, response.json()
    comparison = response.json()
    assert [(r["method"], r["budget"], r["status"]) for r in comparison["rows"]] == [
        ("random", 5, "queued"),
        ("random", 10, "queued"),
        ("greedy", 5, "queued"),
        ("greedy", 10, "queued"),
    ]
    assert sorted(queued) == sorted(r["run_id"] for r in comparison["rows"])
    assert comparison["budgets"] == [5, 10]
    assert comparison["curves"] == {"random": [], "greedy": []}
    assert comparison["finished"] is False

    for run_id in queued:
        execute(run_id)
    comparison = api.get(f"/api/comparisons/{comparison['id']}/").json()
    assert comparison["finished"] is True
    assert {r["status"] for r in comparison["rows"]} == {"succeeded"}
    assert all(r["seconds"] is not None for r in comparison["rows"])
    for method in ("random", "greedy"):
        curve = comparison["curves"][method]
        assert [point["budget"] for point in curve] == [5, 10]
        accuracy = {(r["method"], r["budget"]): r["expected_accuracy"] for r in comparison["rows"]}
        assert [p["expected_accuracy"] for p in curve] == [
            accuracy[method, 5],
            accuracy[method, 10],
        ]
    assert (
        comparison["curves"]["greedy"][1]["expected_accuracy"]
        >= comparison["curves"]["random"][1]["expected_accuracy"]
    )
    listed = api.get(f"/api/projects/{filled_project.pk}/comparisons/").json()
    assert [c["id"] for c in listed["results"]] == [comparison["id"]]


@pytest.mark.parametrize("payload", [{}, {"budgets": []}])
def test_a_comparison_at_the_default_budget_says_which_budget_that_is(
    api, filled_project, queued, payload
):
    response = api.post(
        f"/api/projects/{filled_project.pk}/comparisons/", {"methods": ["random"], **payload}
    )
    assert response.status_code == 202, response.json()
    (row,) = response.json()["rows"]
    assert response.json()["budgets"] == [row["budget"]]
    assert row["budget"] > 0


def test_a_comparison_with_an_unknown_method_queues_nothing(api, filled_project, queued):
    response = api.post(
        f"/api/projects/{filled_project.pk}/comparisons/", {"methods": ["random", "simplex"]}
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {"methods.1": ['"simplex" is not a valid choice.']}
    response = api.post(
        f"/api/projects/{filled_project.pk}/comparisons/", {"methods": ["random", "random"]}
    )
    assert response.status_code == 400
    assert "must not repeat" in response.json()["detail"]
    assert not Comparison.objects.exists()
    assert not AssignmentRun.objects.exists()
    assert queued == []


def test_a_queued_run_can_be_cancelled_once_and_a_finished_one_not_at_all(
    api, filled_project, queued
):
    run = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).json()
    response = api.post(f"/api/runs/{run['id']}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    response = api.post(f"/api/runs/{run['id']}/cancel/")
    assert response.status_code == 409
    assert "only queued or running runs can be cancelled" in response.json()["detail"]

    done = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).json()
    execute(done["id"])
    assert api.post(f"/api/runs/{done['id']}/cancel/").status_code == 409


def test_the_assignment_of_a_run_that_has_not_succeeded_is_a_conflict(api, filled_project, queued):
    run = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).json()
    response = api.get(f"/api/runs/{run['id']}/assignment/")
    assert response.status_code == 409
    assert response.json()["detail"].endswith("only a succeeded run has an assignment to download")


@pytest.mark.parametrize(
    ("payload", "field", "message"),
    [
        ({"method": "simplex"}, "method", "is not a valid choice"),
        ({"method": "random", "budget": -1}, "budget", "greater than or equal to 0"),
        ({"method": "random", "seed": -5}, "seed", "greater than or equal to 0"),
        ({"method": "random", "options": {"speed": 1}}, "detail", "unknown option(s) speed"),
        (
            {"method": "tvcs-iht", "options": {"refine_rounds": -1}},
            "detail",
            "refine_rounds must be an integer in [0, 1000], got -1",
        ),
        ({"method": "tvcs-iht", "options": {"max_iter": None}}, "detail", "max_iter must be"),
    ],
)
def test_an_invalid_run_request_is_a_400_that_says_why(
    api, filled_project, queued, payload, field, message
):
    response = api.post(f"/api/projects/{filled_project.pk}/runs/", payload)
    assert response.status_code == 400
    assert message in str(response.json().get(field) or response.json()["fields"][field])
    assert not AssignmentRun.objects.exists()


def test_a_nullable_option_takes_null_for_none(api, filled_project, queued):
    response = api.post(
        f"/api/projects/{filled_project.pk}/runs/",
        {"method": "tvcs-iht", "options": {"time_limit": None}},
    )
    assert response.status_code == 202, response.json()
    assert AssignmentRun.objects.get().options == {"time_limit": None}


def test_a_run_of_a_project_without_a_quality_matrix_is_a_400(api, queued):
    pid = api.post("/api/projects/", {"name": "empty"}).json()["id"]
    response = api.post(f"/api/projects/{pid}/runs/", {"method": "random"})
    assert response.status_code == 400
    assert "has no quality matrix" in response.json()["detail"]
    assert f"POST /api/projects/{pid}/quality/estimate/" in response.json()["detail"]


def test_the_run_list_rejects_an_unknown_status(api):
    response = api.get("/api/runs/", {"status": "sleeping"})
    assert response.status_code == 400
    assert "status" in response.json()["fields"]


def test_a_project_is_renamed_its_defaults_changed_and_deleted_with_its_runs(
    api, filled_project, queued
):
    response = api.patch(
        f"/api/projects/{filled_project.pk}/",
        {"name": "birds 2", "default_prior": 0.3, "default_budget": None},
    )
    assert response.status_code == 200, response.json()
    assert (response.json()["name"], response.json()["default_prior"]) == ("birds 2", 0.3)
    response = api.patch(f"/api/projects/{filled_project.pk}/", {"default_prior": 1})
    assert response.status_code == 400
    assert "default_prior" in response.json()["detail"]
    assert Project.objects.get(pk=filled_project.pk).default_prior == 0.3

    run = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).json()
    execute(run["id"])
    assert api.delete(f"/api/projects/{filled_project.pk}/").status_code == 204
    assert not Project.objects.filter(pk=filled_project.pk).exists()
    assert not AssignmentRun.objects.exists()
    assert api.get(f"/api/runs/{run['id']}/").status_code == 404


def test_a_second_project_of_the_same_name_is_a_400(api, filled_project):
    response = api.post("/api/projects/", {"name": "birds"})
    assert response.status_code == 400
    assert response.json()["detail"] == "user 'alice' already has a project 'birds'"


def test_project_lists_are_paginated(api):
    for k in range(3):
        api.post("/api/projects/", {"name": f"p{k}"})
    page = api.get("/api/projects/", {"limit": 2}).json()
    assert page["count"] == 3
    assert [p["name"] for p in page["results"]] == ["p0", "p1"]
    assert page["next"]


def test_a_run_in_progress_reports_its_status(api, filled_project, queued):
    run = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).json()
    AssignmentRun.objects.filter(pk=run["id"]).update(
        status=RunStatus.RUNNING, progress=40, progress_message="iteration 20 of 50"
    )
    detail = api.get(f"/api/runs/{run['id']}/").json()
    assert (detail["status"], detail["progress"], detail["progress_message"]) == (
        "running",
        40,
        "iteration 20 of 50",
    )
    assert detail["expected_accuracy"] is None


def test_run_and_comparison_requests_are_throttled_per_user(
    api, filled_project, queued, monkeypatch
):
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "runs", "2/hour")
    assert (
        api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).status_code
        == 202
    )
    comparison = {"methods": ["random"], "budgets": [3]}
    url = f"/api/projects/{filled_project.pk}/comparisons/"
    assert api.post(url, comparison).status_code == 202
    response = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"})
    assert response.status_code == 429
    assert "throttled" in response.json()["detail"].lower()
    assert api.post(url, comparison).status_code == 429
    assert api.get(url).status_code == 200  # reading is not throttled


def test_a_run_on_a_quality_matrix_that_misses_new_tasks_is_a_400_that_says_what_to_do(
    api, filled_project, queued
):
    from assignment.models import Task

    Task.objects.create(project=filled_project, external_id="fresh", category="c")
    response = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "greedy"})
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "no quality for 1 task (e.g. 'fresh')" in detail
    assert f"POST /api/projects/{filled_project.pk}/quality/estimate/" in detail
    assert not AssignmentRun.objects.exists()


def test_a_next_round_over_the_api_counts_the_answers_and_says_what_it_started_from(
    api, filled_project, queued
):
    from api_helpers import execute

    response = api.post(
        f"/api/projects/{filled_project.pk}/runs/",
        {"method": "tvcs-iht", "round": True, "budget": 6, "target_posterior": 0.99, "seed": 0},
    )
    assert response.status_code == 202, response.json()
    run = response.json()
    assert run["round"] is True
    assert run["budget"] == 6
    assert run["target_posterior"] == 0.99
    assert run["round_start"]["answers"] == 5  # the answers of the fixture
    assert run["round_start"]["tasks"] == 10
    assert 0.5 < run["round_start"]["accuracy_now"] < 1
    execute(run["id"])
    done = api.get(f"/api/runs/{run['id']}/").json()
    assert done["status"] == "succeeded"
    assert done["expected_accuracy"] > run["round_start"]["accuracy_now"]
    pairs = {
        tuple(row)
        for row in csv.reader(
            io.StringIO(body(api.get(f"/api/runs/{run['id']}/assignment/")).decode())
        )
    }
    assert not pairs & {("w1", "t1"), ("w2", "t1"), ("w3", "t1"), ("w1", "t2"), ("w4", "t3")}


def test_a_round_over_the_api_counts_the_pending_pairs_and_waits_for_a_queued_one(
    api, filled_project, queued
):
    from api_helpers import execute

    url = f"/api/projects/{filled_project.pk}/runs/"
    first = api.post(url, {"method": "greedy", "round": True, "budget": 4, "seed": 0}).json()
    refused = api.post(url, {"method": "greedy", "round": True, "budget": 4})
    assert refused.status_code == 400
    assert f"run #{first['id']}, a round of this project, is queued" in refused.json()["detail"]
    execute(first["id"])
    first = api.get(f"/api/runs/{first['id']}/").json()
    second = api.post(url, {"method": "greedy", "round": True, "budget": 4, "seed": 0})
    assert second.status_code == 202, second.json()
    assert second.json()["round_start"]["pending"] == first["n_assigned"] > 0
    assert second.json()["round_start"]["pending_runs"] == [first["id"]]
    preview = api.get(f"/api/projects/{filled_project.pk}/rounds/preview/").json()
    assert (preview["gain"], preview["expected_accuracy"]) == (None, None)  # no figure
    assert f"run #{second.json()['id']}, a round of this project, is queued" in preview["message"]


def test_a_round_withdrawn_over_the_api_stops_counting_its_pairs_as_pending(
    api, filled_project, queued, other_api
):
    from api_helpers import execute

    url = f"/api/projects/{filled_project.pk}/runs/"
    first = api.post(url, {"method": "greedy", "round": True, "budget": 4, "seed": 0}).json()
    assert api.post(f"/api/runs/{first['id']}/withdraw/").status_code == 409  # still queued
    execute(first["id"])
    assert other_api.post(f"/api/runs/{first['id']}/withdraw/").status_code == 404
    withdrawn = api.post(f"/api/runs/{first['id']}/withdraw/")
    assert withdrawn.status_code == 200, withdrawn.json()
    assert withdrawn.json()["withdrawn_at"] is not None
    again = api.post(f"/api/runs/{first['id']}/withdraw/")
    assert again.status_code == 409
    assert "withdrawn already" in again.json()["detail"]
    second = api.post(url, {"method": "greedy", "round": True, "budget": 4, "seed": 0})
    assert second.status_code == 202, second.json()
    assert second.json()["round_start"]["pending"] == 0
    assert second.json()["round_start"]["pending_runs"] == []
    whole = api.post(url, {"method": "greedy"}).json()
    execute(whole["id"])
    assert api.post(f"/api/runs/{whole['id']}/withdraw/").status_code == 409


@pytest.mark.parametrize(
    ("payload", "field", "message"),
    [
        ({"target_posterior": 0}, "target_posterior", "greater than 0"),
        ({"target_accuracy": 0}, "target_accuracy", "greater than 0"),
        ({"target_accuracy": 1.2}, "target_accuracy", "less than or equal to 1"),
    ],
)
def test_a_round_target_out_of_range_is_a_400_naming_it(
    api, filled_project, queued, payload, field, message
):
    response = api.post(
        f"/api/projects/{filled_project.pk}/runs/", {"method": "greedy", "round": True, **payload}
    )
    assert response.status_code == 400
    assert message in str(response.json()["fields"][field])


def test_a_target_posterior_at_one_over_k_is_a_400_that_says_the_bound(api, filled_project, queued):
    response = api.post(
        f"/api/projects/{filled_project.pk}/runs/",
        {"method": "greedy", "round": True, "target_posterior": 0.5},
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith(
        "target_posterior must be a number above 0.5, at most 1 (the likeliest of 2 labels"
    )


def test_a_round_past_its_target_accuracy_is_a_400_that_says_so(api, filled_project, queued):
    response = api.post(
        f"/api/projects/{filled_project.pk}/runs/",
        {"method": "greedy", "round": True, "target_accuracy": 0.5},
    )
    assert response.status_code == 400
    assert "at least the target_accuracy 0.5" in response.json()["detail"]
    assert not AssignmentRun.objects.exists()


def test_a_comparisons_run_handed_out_over_the_api_counts_as_a_round_until_withdrawn(
    api, filled_project, queued, other_api
):
    response = api.post(
        f"/api/projects/{filled_project.pk}/comparisons/",
        {"methods": ["greedy", "random"], "budgets": [4], "round": True, "seed": 0},
    )
    assert response.status_code == 202, response.json()
    comparison = response.json()["id"]
    greedy, random = AssignmentRun.objects.filter(comparison_id=comparison).order_by("pk")
    queued_yet = api.post(f"/api/runs/{greedy.pk}/hand-out/")
    assert queued_yet.status_code == 409
    assert "only a succeeded run has pairs to hand out" in queued_yet.json()["detail"]
    execute(greedy.pk)
    execute(random.pk)
    assert other_api.post(f"/api/runs/{greedy.pk}/hand-out/").status_code == 404
    handed = api.post(f"/api/runs/{greedy.pk}/hand-out/")
    assert handed.status_code == 200, handed.json()
    assert handed.json()["handed_out_at"] is not None
    again = api.post(f"/api/runs/{greedy.pk}/hand-out/")
    assert again.status_code == 409
    assert "was handed out already" in again.json()["detail"]
    sibling = api.post(f"/api/runs/{random.pk}/hand-out/")
    assert sibling.status_code == 409
    assert f"run #{greedy.pk} of comparison" in sibling.json()["detail"]
    rows = api.get(f"/api/comparisons/{comparison}/").json()["rows"]
    assert [row["handed_out_at"] is not None for row in rows] == [True, False]
    url = f"/api/projects/{filled_project.pk}/runs/"
    nxt = api.post(url, {"method": "greedy", "round": True, "budget": 2, "seed": 0})
    assert nxt.status_code == 202, nxt.json()
    assert nxt.json()["round_start"]["pending_runs"] == [greedy.pk]
    assert nxt.json()["round_start"]["pending"] == 4
    api.post(f"/api/runs/{nxt.json()['id']}/cancel/")
    withdrawn = api.post(f"/api/runs/{greedy.pk}/withdraw/")
    assert withdrawn.status_code == 200, withdrawn.json()
    assert withdrawn.json()["withdrawn_at"] is not None
    after = api.post(url, {"method": "greedy", "round": True, "budget": 2, "seed": 0}).json()
    assert after["round_start"]["pending_runs"] == []
    whole = api.post(url, {"method": "greedy"}).json()
    execute(whole["id"])
    refused = api.post(f"/api/runs/{whole['id']}/hand-out/")
    assert refused.status_code == 409
    assert "is not a comparison's run" in refused.json()["detail"]


def test_a_comparison_in_rounds_over_the_api_queues_a_round_per_method_and_budget(
    api, filled_project, queued
):
    response = api.post(
        f"/api/projects/{filled_project.pk}/comparisons/",
        {"methods": ["greedy", "tvcs-iht"], "budgets": [2, 4], "round": True},
    )
    assert response.status_code == 202, response.json()
    runs = AssignmentRun.objects.filter(comparison_id=response.json()["id"])
    assert runs.count() == 4
    assert all(run.next_round and run.round_start["answers"] == 5 for run in runs)


def test_the_labels_api_offers_dawid_skene_and_refuses_an_unknown_aggregation(api, filled_project):
    bayes = api.get(f"/api/projects/{filled_project.pk}/labels/?format=json")
    ds = api.get(f"/api/projects/{filled_project.pk}/labels/?format=json&aggregation=dawid-skene")
    assert bayes.status_code == ds.status_code == 200
    tasks = {row["task_id"] for row in json.loads(body(ds))}
    assert tasks == {row["task_id"] for row in json.loads(body(bayes))} == {"t1", "t2", "t3"}
    assert "labels_dawid_skene" in ds["Content-Disposition"]
    wrong = api.get(f"/api/projects/{filled_project.pk}/labels/?aggregation=majority")
    assert wrong.status_code == 400
    assert "aggregation" in wrong.json()["fields"]


def test_a_round_with_rounds_to_go_over_the_api_and_a_bad_count_is_a_400(
    api, filled_project, queued
):
    ok = api.post(
        f"/api/projects/{filled_project.pk}/runs/",
        {"method": "greedy", "round": True, "rounds_left": 2},
    )
    assert ok.status_code == 202, ok.json()
    assert ok.json()["round_start"]["rounds_left"] == 2
    bad = api.post(
        f"/api/projects/{filled_project.pk}/runs/",
        {"method": "greedy", "round": True, "rounds_left": 0},
    )
    assert bad.status_code == 400
    assert "rounds_left" in bad.json()["fields"]


def test_a_run_shows_its_shard_count_and_rounds_left_null_outside_rounds(api, filled_project):
    created = api.post(
        f"/api/projects/{filled_project.pk}/runs/", {"method": "greedy", "shards": 2}, format="json"
    )
    assert created.status_code == 202, created.json()
    assert (created.json()["shards"], created.json()["rounds_left"]) == (2, None)  # not a round
    shown = api.get(f"/api/runs/{created.json()['id']}/").json()
    assert (shown["shards"], shown["rounds_left"]) == (2, None)  # not a round


def test_a_comparison_can_have_each_of_its_runs_solved_in_shards(api, filled_project, queued):
    response = api.post(
        f"/api/projects/{filled_project.pk}/comparisons/",
        {"methods": ["random", "greedy"], "budgets": [5, 10], "shards": 3},
    )
    assert response.status_code == 202, response.json()
    runs = AssignmentRun.objects.filter(comparison_id=response.json()["id"])
    assert sorted(runs.values_list("shards", flat=True)) == [3, 3, 3, 3]
    for run_id in queued:
        assert api.get(f"/api/runs/{run_id}/").json()["shards"] == 3


@pytest.mark.parametrize("shards", [65, 0])
def test_a_comparison_with_shards_it_cannot_have_queues_nothing(
    api, filled_project, queued, shards
):
    response = api.post(
        f"/api/projects/{filled_project.pk}/comparisons/", {"methods": ["greedy"], "shards": shards}
    )
    assert response.status_code == 400
    assert "shards" in response.json()["fields"]
    assert not Comparison.objects.exists()
    assert not AssignmentRun.objects.exists()


def test_a_next_round_may_be_solved_in_shards(api, filled_project, queued):
    response = api.post(
        f"/api/projects/{filled_project.pk}/runs/",
        {"method": "greedy", "round": True, "shards": 2},
    )
    assert response.status_code == 202, response.json()
    body = api.get(f"/api/runs/{response.json()['id']}/").json()
    assert (body["shards"], body["round"]) == (2, True)


def test_three_labels_end_to_end_over_the_api_from_upload_to_labels_and_a_next_round(api, queued):
    # Issue 13, "K labels end to end": a label outside the set is a line-level error; quality
    # learnt from the answers alone (Dawid-Skene); K-class labels out; a next round on them.
    from api_helpers import execute

    created = api.post(
        "/api/projects/",
        {"name": "pets", "labels": ["cat", "dog", "bird"], "default_max_workers_per_task": 4},
        format="json",
    )
    assert created.status_code == 201, created.json()
    pid = created.json()["id"]
    labels = ("cat", "dog", "bird")
    upload(api, pid, "workers", "worker_id\n" + "".join(f"w{i}\n" for i in range(6)))
    upload(api, pid, "tasks", "task_id,category\n" + "".join(f"t{j},c\n" for j in range(12)))
    bad = upload(api, pid, "answers", "worker_id,task_id,answer\nw0,t0,cat\nw1,t0,fish\n")
    assert bad.status_code == 400
    assert (bad.json()["line"], bad.json()["column"]) == (3, "answer")
    assert "('cat', 'dog', 'bird'), got 'fish'" in bad.json()["detail"]
    rng = np.random.default_rng(0)  # three answers a task, each right with probability 0.7
    truth = rng.integers(3, size=12)
    said = (truth[:, None] + (rng.random((12, 3)) > 0.7) * rng.integers(1, 3, (12, 3))) % 3
    rows = "".join(
        f"w{(j + k) % 6},t{j},{labels[said[j, k]]}\n" for j in range(12) for k in range(3)
    )
    assert upload(api, pid, "answers", "worker_id,task_id,answer\n" + rows).json()["added"] == 36
    estimate = api.post(
        f"/api/projects/{pid}/quality/estimate/",
        {"source": "answers", "model": "dawid-skene"},
        format="json",
    )
    assert estimate.status_code == 201, estimate.json()
    assert estimate.json()["details"]["model"] == "dawid-skene"
    out = json.loads(body(api.get(f"/api/projects/{pid}/labels/", {"format": "json"})))
    assert {row["label"] for row in out} <= set(labels)
    assert all(1 / 3 < row["posterior"] <= 1 and row["n_answers"] == 3 for row in out)
    response = api.post(
        f"/api/projects/{pid}/runs/",
        {"method": "greedy", "round": True, "budget": 6, "seed": 0},
        format="json",
    )
    assert response.status_code == 202, response.json()
    assert response.json()["round_start"]["answers"] == 36
    assert response.json()["round_start"]["dawid_skene"] is True
    execute(response.json()["id"])
    run = api.get(f"/api/runs/{response.json()['id']}/").json()
    assert (run["status"], run["chosen_under"]) == ("succeeded", "dawid_skene")
    assert run["expected_accuracy"] >= run["round_start"]["accuracy_now"] - 1e-12
    assert 0 < run["n_assigned"] <= 6, run["round_start"]
