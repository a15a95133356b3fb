"""Runs from the pages: the form built from the method registry, the live page, downloads."""

from __future__ import annotations

import csv
import html
import io
import json

import numpy as np
import pytest
from django.urls import reverse
from page_helpers import execute

from assignment import services
from assignment.engine import METHODS, method_spec
from assignment.models import AssignmentRun, RunStatus

pytestmark = pytest.mark.django_db


def form_defaults(client, project) -> dict:
    """What the run form posts when nothing is changed."""
    form = client.get(reverse("frontend:run_create", args=[project.pk])).context["form"]
    data = {}
    for name in form.fields:
        value = form[name].initial
        data[name] = "" if value is None else value
    return data


def test_the_form_offers_every_method_with_its_options_and_their_defaults(client, sample_project):
    page = client.get(reverse("frontend:run_create", args=[sample_project.pk])).content.decode()
    for method in METHODS:
        spec = method_spec(method)
        assert f'value="{method}"' in page
        assert html.escape(spec.description, quote=False) in page
        for option in spec.options:
            assert f'name="{method}__{option.name}"' in page
            assert html.escape(option.help, quote=False) in page


def test_a_run_started_from_the_page_is_queued_with_only_the_changed_options(
    client, sample_project, queued, django_capture_on_commit_callbacks
):
    data = {
        **form_defaults(client, sample_project),
        "method": "tvcs-iht",
        "budget": "8",
        "seed": "3",
    }
    data["tvcs-iht__max_iter"] = "5"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    run = AssignmentRun.objects.get()
    assert response["Location"] == reverse("frontend:run", args=[run.pk])
    assert (run.method, run.budget, run.seed, run.options) == ("tvcs-iht", 8, 3, {"max_iter": 5})
    assert run.max_workers_per_task == sample_project.default_max_workers_per_task
    assert queued == [run.pk]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tvcs-iht__max_iter": "1e30"}, "Enter a whole number"),
        ({"tvcs-iht__max_iter": "20000"}, "max_iter must be an integer in [0, 10000]"),
        ({"tvcs-iht__step": "0"}, "step must be a number in (0, 1000]"),
        ({"budget": "-4"}, "greater than or equal to 0"),
        ({"method": "simplex"}, "Select a valid choice"),
    ],
)
def test_a_run_the_engine_refuses_is_explained_on_the_form(client, sample_project, change, message):
    data = {**form_defaults(client, sample_project), "method": "tvcs-iht", **change}
    response = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not AssignmentRun.objects.exists()


def test_other_methods_options_may_be_left_empty(client, sample_project, queued):
    data = {**form_defaults(client, sample_project), "method": "greedy", "tvcs-iht__max_iter": ""}
    response = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    assert response.status_code == 302
    assert AssignmentRun.objects.get().options == {}


def test_a_project_without_quality_cannot_start_a_run_and_is_told_why(client, alice):
    project = services.project_create(owner=alice, name="empty")
    data = {**form_defaults(client, project), "method": "random"}
    response = client.post(reverse("frontend:run_create", args=[project.pk]), data)
    assert response.status_code == 400
    assert "has no quality matrix" in response.content.decode()


def test_the_run_page_shows_progress_while_running_and_results_when_done(
    client, sample_project, queued
):
    run = services.run_create(project=sample_project, method="greedy", seed=1)
    status_url = reverse("frontend:run_status", args=[run.pk])
    page = client.get(reverse("frontend:run", args=[run.pk])).content.decode()
    assert 'data-live-url="' + status_url + '"' in page
    assert '<progress id="run-progress" max="100" value="0">' in page
    assert "data-live-final" not in page
    AssignmentRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, progress=42, progress_message="greedy: 5 of 12 pairs"
    )
    fragment = client.get(status_url).content.decode()
    assert fragment.lstrip().startswith('<section id="run-status"')
    assert 'value="42"' in fragment
    assert "greedy: 5 of 12 pairs" in fragment
    AssignmentRun.objects.filter(pk=run.pk).update(status=RunStatus.QUEUED, progress=0)
    execute(run.pk)
    run.refresh_from_db()
    fragment = client.get(status_url).content.decode()
    assert "data-live-final" in fragment
    assert f'<div class="stat" id="run-accuracy">{run.expected_accuracy:.4f}</div>' in fragment
    assert f'<div class="stat" id="run-pairs">{run.n_assigned}</div>' in fragment
    for chart in ("workers-per-task", "tasks-per-worker", "task-accuracy"):
        assert f'id="{chart}"' in fragment


def test_the_run_charts_count_every_task_and_worker_once(client, sample_project, queued):
    run = services.run_create(project=sample_project, method="greedy", seed=1)
    execute(run.pk)
    run.refresh_from_db()
    summary = run.summary
    assert sum(summary["workers_per_task"]) == 6
    assert sum(summary["tasks_per_worker"]) == 4
    assert sum(k * n for k, n in enumerate(summary["workers_per_task"])) == run.n_assigned
    assert sum(summary["task_accuracy"]["counts"]) == 6


def test_cancel_stops_a_queued_run_and_a_finished_one_says_it_cannot(
    client, sample_project, queued
):
    run = services.run_create(project=sample_project, method="random")
    url = reverse("frontend:run_cancel", args=[run.pk])
    page = client.post(url, follow=True).content.decode()
    assert f"Run #{run.pk} cancelled." in page
    assert AssignmentRun.objects.get(pk=run.pk).status == RunStatus.CANCELLED
    page = client.post(url, follow=True).content.decode()
    assert "only queued or running runs can be cancelled" in page
    assert client.get(url)["Location"] == reverse("frontend:run", args=[run.pk])  # acts not


@pytest.mark.parametrize("format", ["csv", "json"])
def test_the_downloaded_assignment_is_the_stored_one_and_is_feasible(
    client, sample_project, queued, format
):
    run = services.run_create(project=sample_project, method="greedy", seed=2)
    execute(run.pk)
    run.refresh_from_db()
    response = client.get(reverse("frontend:run_download", args=[run.pk, format]))
    body = b"".join(response).decode()
    if format == "csv":
        rows = list(csv.reader(io.StringIO(body)))
        assert rows[0] == ["worker_id", "task_id"]
        pairs = [tuple(row) for row in rows[1:]]
    else:
        pairs = [(row["worker_id"], row["task_id"]) for row in json.loads(body)]
    assert len(pairs) == len(set(pairs)) == run.n_assigned
    workers = [w for w, _ in pairs]
    tasks = [t for _, t in pairs]
    caps = {"w2": 3, "w4": 2}  # the sample workers' own caps; the project's default is 3
    for worker in set(workers):
        assert workers.count(worker) <= caps.get(worker, 3)
    task_caps = {"t2": 2, "t6": 1}  # the sample tasks' own caps; the default is 3
    for task in set(tasks):
        assert tasks.count(task) <= task_caps.get(task, 3)
    assert np.isfinite(run.expected_accuracy)


def test_downloading_an_unfinished_run_explains_instead_of_failing(client, sample_project, queued):
    run = services.run_create(project=sample_project, method="random")
    response = client.get(reverse("frontend:run_download", args=[run.pk, "csv"]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("frontend:run", args=[run.pk])
    assert "only a succeeded run has an assignment to download" in response.content.decode()


def test_a_run_beyond_the_users_limit_is_refused_on_the_form_with_the_reason(
    client, sample_project, queued, settings
):
    settings.TVCS_MAX_ACTIVE_RUNS = 1
    services.run_create(project=sample_project, method="random")
    data = {**form_defaults(client, sample_project), "method": "random"}
    response = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    assert response.status_code == 400
    assert "may have at most 1" in response.content.decode()
    assert AssignmentRun.objects.count() == 1


def test_a_three_label_project_offers_every_method_and_runs_tvcs_iht(client, alice, queued):
    project = services.project_create(owner=alice, name="pets", labels=["cat", "dog", "bird"])
    for kind, text in (
        ("workers", "worker_id\nw1\nw2\nw3\n"),
        ("tasks", "task_id,category\nt1,x\nt2,x\nt3,y\n"),
        (
            "quality",
            "worker_id,category,quality\n"
            + "w1,x,0.9\nw2,x,0.7\nw3,x,0.5\n"
            + "w1,y,0.6\nw2,y,0.8\nw3,y,0.4\n",
        ),
    ):
        services.project_data_import(
            project=project, kind=kind, file=io.BytesIO(text.encode()), file_name=f"{kind}.csv"
        )
    url = reverse("frontend:run_create", args=[project.pk])
    response = client.post(url, {**form_defaults(client, project), "method": "tvcs-iht"})
    assert response.status_code == 302
    run = AssignmentRun.objects.get(project=project)
    execute(run.pk)
    run.refresh_from_db()
    assert run.status == "succeeded", run.error


def test_a_run_on_dawid_skene_quality_shows_its_accuracy_under_the_confusion_matrices(
    client, sample_project, queued
):
    run = services.run_create(project=sample_project, method="greedy", seed=1)
    execute(run.pk)
    status_url = reverse("frontend:run_status", args=[run.pk])
    assert 'id="run-dawid-skene"' not in client.get(status_url).content.decode()
    AssignmentRun.objects.filter(pk=run.pk).update(
        dawid_skene_accuracy={
            "dawid_skene_vote": {"expected_accuracy": 0.91234, "standard_error": 0.0},
            "bayes_vote": {"expected_accuracy": 0.8765, "standard_error": 0.0021},
        }
    )
    fragment = client.get(status_url).content.decode()
    assert 'id="run-dawid-skene"' in fragment
    assert "0.9123 with the Dawid\u2013Skene vote" in fragment
    assert "0.8765 (± 0.0021) with the Bayes vote" in fragment
    assert "the assignment was chosen under these matrices" in fragment
    # A sharded run stored before shards were chosen under the matrices says so ...
    AssignmentRun.objects.filter(pk=run.pk).update(shards=2, shard_state={"history": []})
    fragment = client.get(status_url).content.decode()
    assert "under the symmetric model the assignment was optimised for" in fragment
    # ... and one chosen under them says that.
    AssignmentRun.objects.filter(pk=run.pk).update(shard_state={"dawid_skene": True})
    fragment = client.get(status_url).content.decode()
    assert "symmetric model" not in fragment
    assert "each shard by the Dawid\u2013Skene vote" in fragment


def test_a_next_round_on_dawid_skene_quality_says_it_was_chosen_under_the_matrices(
    client, sample_project, queued
):
    run = services.run_create(project=sample_project, method="greedy", seed=1)
    execute(run.pk)
    start = {"answers": 40, "accuracy_now": 0.8, "open_tasks": 5, "tasks": 10}
    AssignmentRun.objects.filter(pk=run.pk).update(
        next_round=True,
        round_start={**start, "dawid_skene": True},
        dawid_skene_accuracy={
            "dawid_skene_vote": {"expected_accuracy": 0.91234, "standard_error": 0.0},
            "bayes_vote": {"expected_accuracy": 0.8765, "standard_error": 0.0},
        },
    )
    page = client.get(reverse("frontend:run", args=[run.pk])).content.decode()
    assert "the round was chosen under these matrices, from the Dawid\u2013Skene posteriors" in page
    assert "before it (the Dawid\u2013Skene vote under the quality's confusion matrices)" in page
    # A round from before rounds were chosen under the matrices (no round_start flag) says so,
    # as the API's chosen_under does (one rule: AssignmentRun.chosen_under).
    AssignmentRun.objects.filter(pk=run.pk).update(round_start=start)
    fragment = client.get(reverse("frontend:run_status", args=[run.pk])).content.decode()
    assert "under the symmetric model the round was chosen under" in fragment
    assert "chosen under these matrices" not in fragment
    AssignmentRun.objects.filter(pk=run.pk).update(
        round_start={**start, "dawid_skene": False}, dawid_skene_accuracy=None
    )
    page = client.get(reverse("frontend:run", args=[run.pk])).content.decode()
    assert 'id="run-dawid-skene"' not in page
    assert "under the quality's confusion matrices" not in page


def test_a_run_in_shards_is_started_from_the_page_and_its_page_says_so(
    client, sample_project, queued, django_capture_on_commit_callbacks
):
    data = {**form_defaults(client, sample_project), "method": "greedy", "shards": "3"}
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    run = AssignmentRun.objects.get()
    assert run.shards == 3
    page = client.get(reverse("frontend:run", args=[run.pk])).content.decode()
    assert '<dd id="shards">3, on separate workers, coordinated by prices' in page
    single = AssignmentRun.objects.create(
        project=sample_project,
        quality_matrix=run.quality_matrix,
        method="greedy",
        budget=4,
        max_workers_per_task=1,
        max_tasks_per_worker=1,
    )
    assert (
        'id="shards"' not in client.get(reverse("frontend:run", args=[single.pk])).content.decode()
    )


@pytest.mark.parametrize("shards", ["0", "65"])
def test_shards_out_of_range_are_refused_on_the_form(client, sample_project, queued, shards):
    data = {**form_defaults(client, sample_project), "method": "greedy", "shards": shards}
    response = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    assert response.status_code == 400
    assert "shards" in response.context["form"].errors
    assert not AssignmentRun.objects.exists()


def test_runs_and_comparisons_from_the_pages_share_the_users_api_rate(
    client, sample_project, queued, monkeypatch
):
    from rest_framework.test import APIClient
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "runs", "2/hour")
    data = {**form_defaults(client, sample_project), "method": "random", "budget": "4"}
    url = reverse("frontend:run_create", args=[sample_project.pk])
    assert client.post(url, data).status_code == 302
    api = APIClient()
    api.force_authenticate(sample_project.owner)
    api_url = f"/api/projects/{sample_project.pk}/runs/"
    assert api.post(api_url, {"method": "random"}, format="json").status_code == 202
    refused = client.post(url, data)
    assert refused.status_code == 429
    assert "too many runs and comparisons for now: at most 2/hour a user" in html.unescape(
        refused.content.decode()
    )
    compare = reverse("frontend:comparison_create", args=[sample_project.pk])
    refused = client.post(compare, {"methods": ["random"], "budget_mode": "list", "budgets": "4"})
    assert refused.status_code == 429
    assert AssignmentRun.objects.count() == 2
    assert api.post(api_url, {"method": "random"}, format="json").status_code == 429


def test_an_error_of_a_choice_links_from_the_summary_to_its_first_option(client, sample_project):
    data = {**form_defaults(client, sample_project), "method": "simplex"}
    page = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    text = page.content.decode()
    assert '<a href="#id_method_0">Method: Select a valid choice.' in text
    assert '<fieldset id="id_method_0">' in text
    url = reverse("frontend:comparison_create", args=[sample_project.pk])
    text = client.post(url, {"methods": ["simplex"], "budget_mode": "list"}).content.decode()
    assert '<a href="#id_methods_0">Methods: Select a valid choice.' in text
    assert 'id="id_methods_0"' in text
