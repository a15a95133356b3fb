"""Data files from the pages: uploads with the importer's own checks, downloads, samples."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from page_helpers import execute, fill_from_samples, sample_bytes

from assignment import services
from assignment.importers import KINDS
from assignment.models import Answer, GoldAnswer, GoldItem, QualityMatrix, Task, Worker

pytestmark = pytest.mark.django_db


def upload(client, project, kind: str, content: bytes, name: str | None = None, **extra):
    file = SimpleUploadedFile(name or f"{kind}.csv", content, content_type="text/csv")
    url = reverse("frontend:data_upload", args=[project.pk, kind])
    return client.post(url, {"file": file, **extra})


@pytest.mark.parametrize("format", ["csv", "json"])
@pytest.mark.parametrize("labels", [["0", "1"], ["no bird", "bird"], ["cat", "dog", "bird"]])
def test_the_samples_downloaded_from_the_page_fill_a_project_of_its_labels_that_runs(
    client, alice, queued, labels, format
):
    project = services.project_create(owner=alice, name="samples", labels=labels)
    for kind in KINDS:
        response = client.get(reverse("frontend:data_sample", args=[project.pk, kind, format]))
        assert response.status_code == 200
        assert response["Content-Disposition"] == f'attachment; filename="{kind}.{format}"'
        content = b"".join(response.streaming_content)
        assert upload(client, project, kind, content, name=f"{kind}.{format}").status_code == 302
    assert (Worker.objects.count(), Task.objects.count(), Answer.objects.count()) == (4, 6, 9)
    assert set(Answer.objects.values_list("label", flat=True)) == set(labels)  # every label
    services.quality_estimate(project=project)
    run = services.run_create(project=project, method="greedy", seed=1)
    execute(run.pk)
    run.refresh_from_db()
    assert run.status == "succeeded"


def imported(project) -> dict:
    """What the imports stored in ``project``, by external ids (comparable across projects)."""
    matrix = QualityMatrix.objects.get(project=project)
    workers = dict(Worker.objects.filter(project=project).values_list("pk", "external_id"))
    tasks = dict(Task.objects.filter(project=project).values_list("pk", "external_id"))
    rows = {
        "workers": Worker.objects.filter(project=project).values_list(
            "external_id", "name", "max_tasks"
        ),
        "tasks": Task.objects.filter(project=project).values_list(
            "external_id", "category", "max_workers", "prior", "label_prior", "payload"
        ),
        "gold_items": GoldItem.objects.filter(project=project).values_list(
            "external_id", "category", "true_label"
        ),
        "gold_answers": GoldAnswer.objects.filter(worker__project=project).values_list(
            "worker__external_id", "item__external_id", "answer"
        ),
        "answers": Answer.objects.filter(task__project=project).values_list(
            "worker__external_id", "task__external_id", "label"
        ),
    }
    quality = [
        (workers[int(w)], tasks[int(t)], float(matrix.values[i, j]))
        for i, w in enumerate(matrix.worker_ids)
        for j, t in enumerate(matrix.task_ids)
    ]
    return {kind: sorted(map(repr, found)) for kind, found in rows.items()} | {
        "quality": sorted(quality)
    }


@pytest.mark.parametrize("labels", [["0", "1"], ["cat", "dog", "bird"]])
def test_the_json_samples_import_through_the_real_importer_as_the_csv_ones_do(alice, labels):
    """Each kind's sample.json, imported into a fresh project, stores what its sample.csv does
    (the same rows, caps, priors, payloads, quality and answers, in the project's labels)."""
    projects = {}
    for format in ("csv", "json"):
        project = services.project_create(owner=alice, name=f"from {format}", labels=labels)
        fill_from_samples(project, format=format)
        projects[format] = project
    assert imported(projects["json"]) == imported(projects["csv"])
    assert len(imported(projects["json"])["quality"]) == 4 * 6
    assert json.loads(sample_bytes("tasks", labels, format="json"))[0] == {
        "task_id": "t1",
        "category": "birds",
        "max_workers": None,
        "prior": None,
        "payload": {"url": "https://example.org/images/1.jpg"},
    }


def test_a_sample_of_an_unknown_kind_or_format_or_of_another_users_project_is_a_404(
    client, alice, bob
):
    project = services.project_create(owner=bob, name="bobs")
    url = reverse("frontend:data_sample", args=[project.pk, "workers", "csv"])
    assert client.get(url).status_code == 404
    mine = services.project_create(owner=alice, name="mine")
    for kind, format in (("nonsense", "csv"), ("workers", "xlsx")):
        url = reverse("frontend:data_sample", args=[mine.pk, kind, format])
        assert client.get(url).status_code == 404


def test_the_data_page_links_every_sample_and_offers_one_form_per_kind(client, sample_project):
    page = client.get(reverse("frontend:data", args=[sample_project.pk])).content.decode()
    for kind in KINDS:
        for format in ("csv", "json"):
            assert f'href="/projects/{sample_project.pk}/data/{kind}/sample.{format}"' in page
        assert f'action="/projects/{sample_project.pk}/data/{kind}/"' in page
    assert page.count('enctype="multipart/form-data"') == len(KINDS)


def test_an_upload_says_how_many_rows_were_new_and_how_many_already_there(client, alice):
    project = services.project_create(owner=alice, name="fresh")
    content = sample_bytes("workers")
    response = upload(client, project, "workers", content)
    assert response.status_code == 302
    assert response["Location"].endswith(f"/projects/{project.pk}/data/#kind-workers")
    page = client.get(response["Location"]).content.decode()
    assert "workers.csv: 4 rows of workers imported (all 4 new)." in page
    upload(client, project, "workers", content + b"w5,Eve,\n")
    page = client.get(response["Location"]).content.decode()
    assert (
        "5 rows of workers imported (1 new, 4 already there, set to the values in the file)."
        in page
    )
    upload(client, project, "workers", b"worker_id,name,max_tasks\nw6,Fay,\n")
    page = client.get(response["Location"]).content.decode()
    assert "workers.csv: 1 row of workers imported (new)." in page


def test_an_uploads_message_is_beside_its_form_where_the_page_opens(client, alice):
    project = services.project_create(owner=alice, name="fresh")
    response = upload(client, project, "workers", sample_bytes("workers"))
    page = client.get(response["Location"]).content.decode()
    section = page.split('id="kind-workers"')[1].split("</section>")[0]
    assert '<div role="status" id="uploaded-workers">' in section
    assert "workers.csv: 4 rows of workers imported (all 4 new)." in section
    assert page.count("rows of workers imported") == 1  # not above the first section too


def test_a_rejected_file_shows_its_line_and_column_and_writes_nothing(client, sample_project):
    before = Worker.objects.count()
    bad = b"worker_id,name,max_tasks\nw8,New,\nw9,Bad,-3\n"
    response = upload(client, sample_project, "workers", bad, name="bad-workers.csv")
    assert response.status_code == 400
    page = response.content.decode()
    assert '<dd class="error-line">3</dd>' in page
    assert '<dd class="error-column">max_tasks</dd>' in page
    assert "bad-workers.csv, line 3, column max_tasks: must be a non-negative integer" in page
    assert 'id="problem-workers" tabindex="-1" data-error-summary>' in page  # focused
    assert page.count("data-error-summary") == 1
    assert "<title>Error: Data · " in page
    assert Worker.objects.count() == before
    assert not Worker.objects.filter(external_id="w8").exists()


def test_a_json_file_named_csv_is_said_to_look_like_json_not_to_have_no_rows(
    client, sample_project
):
    content = b'[{"worker_id": "x9", "name": "Z"}]\n'
    response = upload(client, sample_project, "workers", content, name="bad_json_as_csv.csv")
    assert response.status_code == 400
    page = response.content.decode()
    assert "has a header but no rows" not in page
    assert (
        "bad_json_as_csv.csv, line 1: looks like JSON, not CSV (it starts with &#x27;[&#x27;): "
        "give the file a .json name or choose JSON as its format" in page
    )
    assert '<dd class="error-line">1</dd>' in page


def test_a_quality_upload_makes_a_new_matrix_and_says_so(client, sample_project):
    before = QualityMatrix.objects.count()
    response = upload(client, sample_project, "quality", sample_bytes("quality"))
    assert response.status_code == 302
    assert QualityMatrix.objects.count() == before + 1
    page = client.get(response["Location"]).content.decode()
    assert "quality.csv: 8 rows read into a new quality matrix." in page


def test_a_file_over_the_size_limit_is_refused_on_the_page(client, sample_project, settings):
    settings.TVCS_MAX_IMPORT_BYTES = 20
    response = upload(client, sample_project, "workers", sample_bytes("workers"))
    assert response.status_code == 400
    assert "larger than" in response.content.decode()


def test_an_upload_without_a_file_is_a_form_error_not_a_500(client, sample_project):
    response = client.post(reverse("frontend:data_upload", args=[sample_project.pk, "tasks"]), {})
    assert response.status_code == 400
    page = response.content.decode()
    assert '<a href="#id_tasks_file">File: This field is required.</a>' in page  # the summary
    assert "<title>Error: Data · " in page
    url = reverse("frontend:data_upload", args=[sample_project.pk, "nonsense"])
    assert client.post(url, {}).status_code == 404


def test_user_data_is_shown_as_text_never_run(client, alice):
    project = services.project_create(owner=alice, name="<b>bold</b>")
    upload(client, project, "workers", b"worker_id\n<script>alert(1)</script>\n")
    upload(client, project, "tasks", b"task_id,category\nt1,<img src=x onerror=alert(2)>\n")
    services.project_data_import(
        project=project,
        kind="quality",
        file=io.BytesIO(b"worker_id,task_id,quality\n<script>alert(1)</script>,t1,0.8\n"),
        file_name="q.csv",
    )
    pages = [
        client.get(reverse("frontend:projects")).content.decode(),
        client.get(reverse("frontend:quality", args=[project.pk])).content.decode(),
    ]
    for page in pages:
        assert "<script>alert(1)</script>" not in page
        assert "<img src=x" not in page
        assert "<b>bold</b>" not in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in pages[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[1]
    assert "&lt;img src=x onerror=alert(2)&gt;" in pages[1]


@pytest.mark.parametrize("format", ["csv", "json"])
def test_every_kind_downloads_in_the_upload_format(client, sample_project, format):
    for kind in KINDS:
        response = client.get(
            reverse("frontend:data_download", args=[sample_project.pk, kind, format])
        )
        assert response.status_code == 200, kind
        assert (
            f'filename="project-{sample_project.pk}-{kind}.{format}"'
            in response["Content-Disposition"]
        )
    body = b"".join(
        client.get(reverse("frontend:data_download", args=[sample_project.pk, "workers", "csv"]))
    ).decode()
    rows = list(csv.reader(io.StringIO(body)))
    assert rows[0] == ["worker_id", "name", "max_tasks"]
    assert [row[0] for row in rows[1:]] == ["w1", "w2", "w3", "w4"]


def test_a_download_that_cannot_be_made_says_why_on_the_page(client, alice):
    project = services.project_create(owner=alice, name="empty")
    response = client.get(
        reverse("frontend:data_download", args=[project.pk, "quality", "csv"]), follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("frontend:data", args=[project.pk])
    assert "has no quality matrix yet" in response.content.decode()


def test_page_uploads_share_the_users_api_rate_and_beyond_it_write_nothing(
    client, alice, monkeypatch
):
    from rest_framework.test import APIClient
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "uploads", "2/hour")
    project = services.project_create(owner=alice, name="fresh")
    api = APIClient()
    api.force_authenticate(alice)
    api_url = f"/api/projects/{project.pk}/data/workers/"
    file = SimpleUploadedFile("workers.csv", sample_bytes("workers"), content_type="text/csv")
    assert api.post(api_url, {"file": file}, format="multipart").status_code == 201
    assert upload(client, project, "workers", b"worker_id\nw8\n").status_code == 302
    refused = upload(client, project, "workers", b"worker_id\nw9\n")
    assert refused.status_code == 429
    page = refused.content.decode()
    assert "too many uploads for now: at most 2/hour a user" in page
    assert 'id="problem-workers"' in page
    assert Worker.objects.filter(external_id__in=["w8", "w9"]).count() == 1
    file = SimpleUploadedFile("workers.csv", sample_bytes("workers"), content_type="text/csv")
    assert api.post(api_url, {"file": file}, format="multipart").status_code == 429
