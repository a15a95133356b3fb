"""Uploads and downloads of data files through the API: the import service's validation and
messages, all or nothing, throttled uploads; exports of every kind in both formats."""

from __future__ import annotations

import csv
import io
import json

import pytest
from api_helpers import GOLD_ITEMS_CSV, TASKS_CSV, WORKERS_CSV, execute, upload
from rest_framework.throttling import ScopedRateThrottle

from assignment.importers import KINDS
from assignment.models import Task, Worker

pytestmark = pytest.mark.django_db


def body(response) -> str:
    return b"".join(response.streaming_content).decode("utf-8")


@pytest.fixture
def empty(api):
    """Alice's new project, created through the API."""
    return api.post("/api/projects/", {"name": "new"}).json()["id"]


def test_a_bad_row_is_a_400_with_file_line_and_column_and_nothing_is_written(api, empty):
    upload(api, empty, "workers", WORKERS_CSV)
    before = list(Worker.objects.order_by("pk").values_list("external_id", "max_tasks"))
    bad = "worker_id,max_tasks\nw1,5\nw9,3\nw10,-3\n"
    response = upload(api, empty, "workers", bad, name="more-workers.csv")
    assert response.status_code == 400
    assert response.json() == {
        "file": "more-workers.csv",
        "line": 4,
        "object": None,
        "column": "max_tasks",
        "detail": "more-workers.csv, line 4, column max_tasks: "
        "must be a non-negative integer, got '-3'",
    }
    assert list(Worker.objects.order_by("pk").values_list("external_id", "max_tasks")) == before


def test_a_problem_not_in_one_line_has_a_null_line_and_column(api, empty):
    response = upload(api, empty, "workers", b"", name="empty.csv")
    assert response.status_code == 400
    error = response.json()
    assert (error["file"], error["line"], error["column"]) == ("empty.csv", None, None)
    assert error["detail"].startswith("empty.csv: ")


def test_a_reference_to_a_missing_worker_names_the_line_and_column(api, empty):
    upload(api, empty, "workers", WORKERS_CSV)
    upload(api, empty, "gold_items", GOLD_ITEMS_CSV)
    response = upload(api, empty, "gold_answers", "worker_id,item_id,answer\nw1,g1,1\nw77,g1,0\n")
    assert response.status_code == 400
    assert (response.json()["line"], response.json()["column"]) == (3, "worker_id")
    assert "w77" in response.json()["detail"]


def test_a_json_file_is_read_as_json_and_the_format_field_overrides_the_name(api, empty):
    rows = [{"worker_id": "a", "max_tasks": None}, {"worker_id": "b", "max_tasks": 3}]
    response = upload(api, empty, "workers", json.dumps(rows), name="workers.json")
    assert response.status_code == 201, response.json()
    assert response.json()["rows"] == 2
    file = io.BytesIO(b"task_id,category\nt1,birds\n")
    file.name = "tasks.txt"
    response = api.post(
        f"/api/projects/{empty}/data/tasks/", {"file": file, "format": "csv"}, format="multipart"
    )
    assert response.status_code == 201, response.json()
    assert Task.objects.get().external_id == "t1"


def test_uploading_the_same_file_twice_changes_nothing(api, empty):
    upload(api, empty, "workers", WORKERS_CSV)
    upload(api, empty, "tasks", TASKS_CSV)
    first = sorted(Task.objects.values_list("external_id", "category", "prior"))
    assert upload(api, empty, "tasks", TASKS_CSV).status_code == 201
    assert sorted(Task.objects.values_list("external_id", "category", "prior")) == first


def test_an_upload_without_a_file_or_of_an_unknown_kind_is_rejected(api, empty):
    response = api.post(f"/api/projects/{empty}/data/workers/", {}, format="multipart")
    assert response.status_code == 400
    assert "file" in response.json()["fields"]
    assert upload(api, empty, "labels", "task_id\n").status_code == 404
    assert upload(api, empty, "people", "x\n").status_code == 404


def test_a_json_body_is_not_an_upload(api, empty):
    response = api.post(f"/api/projects/{empty}/data/workers/", {"file": "w1"}, format="json")
    assert response.status_code == 415


def test_uploads_are_throttled_per_user(api, other_api, empty, monkeypatch):
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "uploads", "2/hour")
    assert upload(api, empty, "workers", WORKERS_CSV).status_code == 201
    assert upload(api, empty, "workers", "bad").status_code == 400  # counted all the same
    response = upload(api, empty, "workers", WORKERS_CSV)
    assert response.status_code == 429
    assert "throttled" in response.json()["detail"].lower()
    assert api.get(f"/api/projects/{empty}/data/workers/").status_code == 200  # downloads aren't
    bobs = other_api.post("/api/projects/", {"name": "bobs"}).json()["id"]
    assert upload(other_api, bobs, "workers", WORKERS_CSV).status_code == 201


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_downloads_as_csv_and_json_with_the_same_rows(api, filled_project, kind):
    response = api.get(f"/api/projects/{filled_project.pk}/data/{kind}/", {"format": "csv"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert f'filename="project-{filled_project.pk}-{kind}.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(body(response))))
    response = api.get(f"/api/projects/{filled_project.pk}/data/{kind}/", {"format": "json"})
    assert response["Content-Type"] == "application/json"
    objects = json.loads(body(response))
    assert len(rows) == len(objects) > 0
    assert list(rows[0]) == list(objects[0])


def test_a_download_reimports_unchanged_into_another_project(api, filled_project):
    copy = api.post("/api/projects/", {"name": "copy"}).json()["id"]
    for kind in ("workers", "tasks", "gold_items", "gold_answers"):
        text = body(api.get(f"/api/projects/{filled_project.pk}/data/{kind}/"))
        assert upload(api, copy, kind, text).status_code == 201
        assert body(api.get(f"/api/projects/{copy}/data/{kind}/")) == text


def test_csv_downloads_neutralise_formula_cells(api, empty):
    upload(api, empty, "workers", "worker_id,name\n=cmd,@home\n")
    text = body(api.get(f"/api/projects/{empty}/data/workers/"))
    assert text.splitlines()[1] == "'=cmd,'@home,"


def test_a_download_that_cannot_be_produced_is_a_400_that_says_why(api, empty):
    response = api.get(f"/api/projects/{empty}/data/quality/")
    assert response.status_code == 400
    assert "has no quality matrix yet" in response.json()["detail"]
    response = api.get(f"/api/projects/{empty}/labels/")
    assert response.status_code == 400


def test_an_unknown_download_format_is_a_400(api, filled_project):
    response = api.get(f"/api/projects/{filled_project.pk}/data/workers/", {"format": "xlsx"})
    assert response.status_code == 400
    assert "format" in response.json()["fields"]


def test_a_download_ignores_the_accept_header(api, filled_project):
    response = api.get(
        f"/api/projects/{filled_project.pk}/data/workers/",
        {"format": "csv"},
        HTTP_ACCEPT="text/csv",
    )
    assert response.status_code == 200


def test_an_assignment_download_neutralises_formula_ids_in_csv_but_not_in_json(api, queued):
    pid = api.post("/api/projects/", {"name": "formulas"}).json()["id"]
    upload(api, pid, "workers", "worker_id\n-w1\n")
    upload(api, pid, "tasks", "task_id,category\n=t1,c\n")
    upload(api, pid, "quality", "worker_id,task_id,quality\n'-w1,'=t1,0.8\n")
    run = api.post(f"/api/projects/{pid}/runs/", {"method": "random"}).json()
    execute(run["id"])
    text = body(api.get(f"/api/runs/{run['id']}/assignment/"))
    assert text == "worker_id,task_id\r\n'-w1,'=t1\r\n"
    objects = json.loads(body(api.get(f"/api/runs/{run['id']}/assignment/", {"format": "json"})))
    assert objects == [{"worker_id": "-w1", "task_id": "=t1"}]


def test_an_upload_of_two_files_under_one_name_is_a_400_and_writes_nothing(api, empty):
    from django.core.files.uploadedfile import SimpleUploadedFile

    files = [
        SimpleUploadedFile("a.csv", b"worker_id\nw1\n"),
        SimpleUploadedFile("b.csv", b"worker_id\nw2\n"),
    ]
    response = api.post(f"/api/projects/{empty}/data/workers/", {"file": files}, format="multipart")
    assert response.status_code == 400
    assert response.json()["fields"]["file"] == [
        "Give one file per upload; got 2 parts named file."
    ]
    assert not Worker.objects.exists()


def test_a_bad_row_of_a_one_line_json_file_is_told_apart_by_its_object(api, empty):
    rows = [{"worker_id": f"w{k}", "max_tasks": 3} for k in range(5)]
    rows[3]["max_tasks"] = -1
    response = upload(api, empty, "workers", json.dumps(rows), name="w.json")
    assert response.status_code == 400
    body = response.json()
    assert (body["line"], body["object"], body["column"]) == (1, 4, "max_tasks")
    assert body["detail"].startswith("w.json, line 1, object 4, column max_tasks: ")
