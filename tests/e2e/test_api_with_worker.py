"""The whole product path: the REST API, the database and a real Celery worker process.

Create a project through the API, upload every kind of data file, estimate quality, run every
method and a comparison, poll until they end, download an assignment and check it against the
caps and the reported expected accuracy.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from worker_process import assert_stored_assignment_is_consistent, wait_for

from assignment.engine import expected_accuracy
from assignment.models import AssignmentRun, RunStatus

pytestmark = pytest.mark.django_db(transaction=True)

METHODS = ["tvcs-iht", "random", "q-lp", "greedy"]


def data_files(rng) -> dict[str, str]:
    workers = range(12)
    tasks = range(40)
    items = [(f"g{k}", "c0" if k % 2 else "c1", str(rng.integers(0, 2))) for k in range(10)]
    skill = rng.uniform(0.55, 0.95, 12)

    def answer(i, label):
        return label if rng.random() < skill[i] else str(1 - int(label))

    return {
        "workers": "worker_id,name\n" + "".join(f"w{i},W{i}\n" for i in workers),
        "tasks": "task_id,category\n" + "".join(f"t{j},c{j % 2}\n" for j in tasks),
        "gold_items": "item_id,category,true_label\n"
        + "".join(f"{k},{c},{t}\n" for k, c, t in items),
        "gold_answers": "worker_id,item_id,answer\n"
        + "".join(f"w{i},{k},{answer(i, t)}\n" for i in workers for k, _, t in items),
        "answers": "worker_id,task_id,answer\n" + "".join(f"w{j % 12},t{j},1\n" for j in tasks),
    }


def upload(client, project_id, kind, text):
    file = SimpleUploadedFile(f"{kind}.csv", text.encode(), content_type="text/csv")
    response = client.post(
        f"/api/projects/{project_id}/data/{kind}/", {"file": file}, format="multipart"
    )
    assert response.status_code == 201, response.content


def test_a_project_goes_from_upload_to_downloaded_assignments_through_the_api(workers):
    worker = workers("api")
    user = get_user_model().objects.create_user("api-e2e", password="x")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    project = client.post(
        "/api/projects/",
        {"name": "e2e", "default_max_workers_per_task": 3, "default_max_tasks_per_worker": 8},
        format="json",
    ).json()
    files = data_files(np.random.default_rng(7))
    for kind in ("workers", "tasks", "gold_items", "gold_answers", "answers"):
        upload(client, project["id"], kind, files[kind])
    estimate = client.post(f"/api/projects/{project['id']}/quality/estimate/")
    assert estimate.status_code in (200, 201), estimate.content
    quality = "worker_id,task_id,quality\n" + "".join(
        f"w{i},t{j},{0.55 + 0.03 * ((i + j) % 12):.2f}\n" for i in range(12) for j in range(40)
    )
    upload(client, project["id"], "quality", quality)  # the uploaded matrix is now the latest

    run_ids = []
    for method in METHODS:
        response = client.post(
            f"/api/projects/{project['id']}/runs/", {"method": method, "seed": 1}, format="json"
        )
        assert response.status_code == 202, response.content
        run_ids.append(response.json()["id"])
    comparison = client.post(
        f"/api/projects/{project['id']}/comparisons/",
        {"methods": ["greedy", "random"], "budgets": [20, 40], "seed": 2},
        format="json",
    )
    assert comparison.status_code == 202, comparison.content
    comparison_id = comparison.json()["id"]

    def everything_finished():
        runs = [client.get(f"/api/runs/{run_id}/").json() for run_id in run_ids]
        summary = client.get(f"/api/comparisons/{comparison_id}/").json()
        return all(r["status"] in ("succeeded", "failed") for r in runs) and summary["finished"]

    wait_for(everything_finished, timeout=240, what="runs and comparison", workers_=[worker])

    for run_id in run_ids:
        detail = client.get(f"/api/runs/{run_id}/").json()
        assert detail["status"] == "succeeded", detail
        download = client.get(f"/api/runs/{run_id}/assignment/?format=csv")
        assert download.status_code == 200
        rows = list(csv.reader(io.StringIO(b"".join(download.streaming_content).decode())))
        assert rows[0] == ["worker_id", "task_id"]
        assert len(rows) - 1 == detail["n_assigned"]
        run = AssignmentRun.objects.get(pk=run_id)
        assert_stored_assignment_is_consistent(run)
        # The downloaded pairs, mapped back through the quality matrix, give the same accuracy.
        q = run.quality_matrix.values
        x = np.zeros(q.shape, dtype=bool)
        for worker_id, task_id in rows[1:]:
            x[int(worker_id[1:]), int(task_id[1:])] = True
        assert detail["expected_accuracy"] == pytest.approx(expected_accuracy(q, x), abs=1e-12)
    summary = client.get(f"/api/comparisons/{comparison_id}/").json()
    assert {row["status"] for row in summary["rows"]} == {RunStatus.SUCCEEDED}
    assert sorted(summary["curves"]) == ["greedy", "random"]
