"""The admin: every page renders with data, search and filters work, the project page shows
the project's numbers, and only staff get in."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from project_data import project_with_gold_and_answers

from assignment import services
from assignment.models import (
    Answer,
    AssignmentRun,
    Comparison,
    GoldAnswer,
    GoldItem,
    Method,
    Project,
    QualityMatrix,
    QualitySource,
    RunStatus,
    Task,
    Worker,
)

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def project_with_a_finished_run():
    """3 workers (2 active), 4 tasks in 2 categories, 2 gold items, 3 gold answers, 2 answers,
    a stored quality matrix and a finished run."""
    owner = get_user_model().objects.create_user("alice", password="x")
    project = project_with_gold_and_answers(
        owner,
        "street-signs",
        n_workers=3,
        n_tasks=4,
        categories=("cat-0", "cat-1"),
        ids=("worker-", "task-", "gold-"),
        second_answer_task=1,
    )
    workers = list(Worker.objects.filter(project=project).order_by("pk"))
    tasks = list(Task.objects.filter(project=project).order_by("pk"))
    matrix = QualityMatrix(project=project, source=QualitySource.ESTIMATED)
    matrix.set_arrays(
        values=np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.7, 0.8], [0.6, 0.6, 0.6, 0.6]]),
        worker_ids=[w.pk for w in workers],
        task_ids=[t.pk for t in tasks],
        task_categories=[t.category for t in tasks],
        gold_counts=[2, 1, 0],
    )
    matrix.save()
    comparison = Comparison.objects.create(project=project, methods=["tvcs-iht", "random"])
    AssignmentRun.objects.create(
        project=project,
        comparison=comparison,
        quality_matrix=matrix,
        method=Method.TVCS_IHT,
        budget=6,
        max_workers_per_task=2,
        max_tasks_per_worker=3,
        status=RunStatus.SUCCEEDED,
        expected_accuracy=0.8125,
        accuracy_standard_error=0.0031,
        n_assigned=6,
    )
    return project


def admin_url(model, view, *args):
    return reverse(f"admin:assignment_{model._meta.model_name}_{view}", args=args)


EVERY_MODEL = [
    Project,
    Worker,
    Task,
    GoldItem,
    GoldAnswer,
    QualityMatrix,
    Answer,
    Comparison,
    AssignmentRun,
]


@pytest.mark.parametrize("model", EVERY_MODEL, ids=lambda m: m.__name__)
def test_every_model_has_a_changelist_that_renders_its_rows(
    admin_client, project_with_a_finished_run, model
):
    row = model.objects.order_by("pk").first()
    response = admin_client.get(admin_url(model, "changelist"))
    assert response.status_code == 200
    assert row in response.context["cl"].result_list


@pytest.mark.parametrize("model", EVERY_MODEL, ids=lambda m: m.__name__)
def test_every_model_has_a_change_page_that_renders(
    admin_client, project_with_a_finished_run, model
):
    row = model.objects.order_by("pk").first()
    response = admin_client.get(admin_url(model, "change", row.pk))
    assert response.status_code == 200
    assert response.context["original"] == row


def changelist_ids(response):
    return sorted(str(row) for row in response.context["cl"].result_list)


@pytest.mark.parametrize(
    ("model", "query", "found"),
    [
        (Project, "street", ["street-signs"]),
        (Project, "alice", ["street-signs"]),
        (Worker, "worker-1", ["worker-1"]),
        (Task, "task-3", ["task-3"]),
        (GoldItem, "gold-1", ["gold-1"]),
    ],
)
def test_a_search_for_an_external_id_or_name_finds_it(
    admin_client, project_with_a_finished_run, model, query, found
):
    carol = get_user_model().objects.create_user("carol", password="x")
    other = Project.objects.create(owner=carol, name="other")
    Worker.objects.create(project=other, external_id="someone-else")
    response = admin_client.get(admin_url(model, "changelist"), {"q": query})
    assert changelist_ids(response) == found


def test_a_search_for_a_worker_id_finds_its_gold_answers_and_answers(
    admin_client, project_with_a_finished_run
):
    gold = admin_client.get(admin_url(GoldAnswer, "changelist"), {"q": "worker-1"})
    assert [(g.worker.external_id, g.item.external_id) for g in gold.context["cl"].result_list] == [
        ("worker-1", "gold-0")
    ]
    answers = admin_client.get(admin_url(Answer, "changelist"), {"q": "task-1"})
    assert [
        (a.worker.external_id, a.task.external_id) for a in answers.context["cl"].result_list
    ] == [("worker-1", "task-1")]


def test_filters_narrow_workers_by_project_activity_and_gold_answers(
    admin_client, project_with_a_finished_run
):
    other = Project.objects.create(owner=project_with_a_finished_run.owner, name="other")
    Worker.objects.create(project=other, external_id="elsewhere")
    url = admin_url(Worker, "changelist")

    by_project = admin_client.get(url, {"project__id__exact": project_with_a_finished_run.pk})
    inactive = admin_client.get(
        url, {"project__id__exact": project_with_a_finished_run.pk, "active__exact": "0"}
    )
    no_gold = admin_client.get(
        url, {"project__id__exact": project_with_a_finished_run.pk, "gold": "no"}
    )

    assert changelist_ids(by_project) == ["worker-0", "worker-1", "worker-2"]
    assert changelist_ids(inactive) == ["worker-2"]
    assert changelist_ids(no_gold) == ["worker-2"]


def test_filters_narrow_tasks_by_category_and_gold_answers_by_correctness(
    admin_client, project_with_a_finished_run
):
    tasks = admin_client.get(admin_url(Task, "changelist"), {"category": "cat-1"})
    wrong = admin_client.get(admin_url(GoldAnswer, "changelist"), {"correct": "no"})

    assert changelist_ids(tasks) == ["task-1", "task-3"]
    assert [
        (g.worker.external_id, g.item.external_id) for g in wrong.context["cl"].result_list
    ] == [("worker-0", "gold-1")]


def test_gold_answers_show_whether_they_are_correct(admin_client, project_with_a_finished_run):
    response = admin_client.get(admin_url(GoldAnswer, "changelist"))
    assert {g.pk: g.is_correct for g in response.context["cl"].result_list} == {
        g.pk: g.answer == g.item.true_label for g in GoldAnswer.objects.all()
    }
    assert "Correct?" in response.content.decode()


def test_the_project_list_shows_counts_with_a_fixed_number_of_queries(
    admin_client, project_with_a_finished_run
):
    url = admin_url(Project, "changelist")
    with CaptureQueriesContext(connection) as one_project:
        response = admin_client.get(url)
    row = response.context["cl"].result_list[0]
    assert (row.worker_count, row.task_count, row.gold_item_count) == (3, 4, 2)

    for i in range(5):
        Project.objects.create(owner=project_with_a_finished_run.owner, name=f"more-{i}")
    with CaptureQueriesContext(connection) as six_projects:
        admin_client.get(url)
    assert len(six_projects) == len(one_project)


def test_the_project_page_shows_counts_quality_statistics_and_runs(
    admin_client, project_with_a_finished_run
):
    response = admin_client.get(admin_url(Project, "change", project_with_a_finished_run.pk))
    stats = response.context["project_statistics"]
    values = QualityMatrix.objects.get().values

    assert (stats.workers, stats.active_workers, stats.workers_without_gold_answers) == (3, 2, 1)
    assert (stats.tasks, stats.categories, stats.gold_items) == (4, 2, 2)
    assert (stats.gold_answers, stats.answers, stats.quality_matrices, stats.runs) == (3, 2, 1, 1)
    quality = stats.latest_quality_matrix
    assert quality.mean == pytest.approx(values.mean())
    assert quality.std == pytest.approx(values.std())
    assert (quality.min, quality.max, quality.workers_without_gold) == (0.5, 0.9, 1)

    html = response.content.decode()
    for shown in [
        "Counts",
        "Latest quality matrix",
        f"{values.mean():.4f}",
        f"{values.std():.4f}",
        "estimated from gold answers",
        "Assignment runs",
        "0.8125 ± 0.0031",
        f"?project__id__exact={project_with_a_finished_run.pk}&amp;gold=no",
    ]:
        assert shown in html


def test_a_project_without_a_quality_matrix_or_runs_says_so(
    admin_client, project_with_a_finished_run
):
    empty = Project.objects.create(owner=project_with_a_finished_run.owner, name="empty")
    html = admin_client.get(admin_url(Project, "change", empty.pk)).content.decode()
    assert "No quality matrix yet." in html
    assert "No runs yet." in html


def test_the_quality_matrix_page_summarises_the_values_without_rendering_the_arrays(
    admin_client, project_with_a_finished_run
):
    matrix = QualityMatrix.objects.get()
    response = admin_client.get(admin_url(QualityMatrix, "change", matrix.pk))
    html = response.content.decode()
    assert f"{matrix.values.std():.4f}" in html
    assert "Workers without gold answers" in html
    assert "blob" not in html.lower()
    assert not response.context["has_change_permission"]


def change_form_data(admin_client, model, pk, **changes) -> dict:
    """The admin change form of ``model`` ``pk`` as it is shown, with ``changes``: a POST body."""
    form = admin_client.get(admin_url(model, "change", pk)).context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = field.prepare_value(value) if hasattr(field, "prepare_value") else value
    data.update(changes)
    return {name: value for name, value in data.items() if value is not None}


def test_projects_are_added_on_the_site_and_their_owner_and_labels_stay_fixed(
    admin_client, project_with_a_finished_run
):
    project = project_with_a_finished_run
    assert admin_client.get(admin_url(Project, "add")).status_code == 403
    form = admin_client.get(admin_url(Project, "change", project.pk)).context["adminform"].form
    assert "labels" not in form.fields
    assert "owner" not in form.fields
    data = change_form_data(admin_client, Project, project.pk, labels='["1", "0"]')
    response = admin_client.post(admin_url(Project, "change", project.pk), data)
    assert response.status_code == 302
    assert Project.objects.get(pk=project.pk).labels == project.labels


def test_a_change_of_defaults_in_the_admin_is_checked_by_the_service_the_site_calls(
    admin_client, project_with_a_finished_run
):
    project = project_with_a_finished_run
    answers = Answer.objects.filter(task__project=project).count()
    assert answers == 2
    url = admin_url(Project, "change", project.pk)
    data = change_form_data(admin_client, Project, project.pk, default_budget=answers - 1)
    response = admin_client.post(url, data)
    assert response.status_code == 200  # the form again, with the service's reason
    assert "below the 2 answers already collected" in response.content.decode()
    assert Project.objects.get(pk=project.pk).default_budget is None
    data = change_form_data(admin_client, Project, project.pk, default_budget=answers)
    assert admin_client.post(url, data).status_code == 302
    assert Project.objects.get(pk=project.pk).default_budget == answers


@pytest.mark.parametrize("model", [Answer, GoldItem, GoldAnswer], ids=lambda m: m.__name__)
def test_labels_and_gold_enter_by_the_importers_only_and_are_viewed_in_the_admin(
    admin_client, project_with_a_finished_run, model
):
    row = model.objects.order_by("pk").first()
    assert admin_client.get(admin_url(model, "add")).status_code == 403
    response = admin_client.get(admin_url(model, "change", row.pk))
    assert response.status_code == 200
    assert not response.context["has_change_permission"]
    assert admin_client.post(admin_url(model, "change", row.pk), {}).status_code == 403


def test_a_task_keeps_its_project_id_and_category_and_takes_a_cap_of_its_own(
    admin_client, project_with_a_finished_run
):
    task = Task.objects.filter(project=project_with_a_finished_run).order_by("pk").first()
    assert admin_client.get(admin_url(Task, "add")).status_code == 403
    data = change_form_data(
        admin_client, Task, task.pk, category="elsewhere", external_id="moved", max_workers=2
    )
    assert admin_client.post(admin_url(Task, "change", task.pk), data).status_code == 302
    task_now = Task.objects.get(pk=task.pk)
    assert (task_now.category, task_now.external_id) == (task.category, task.external_id)
    assert task_now.max_workers == 2


def handed_out_round(project) -> AssignmentRun:
    return AssignmentRun.objects.create(
        project=project,
        quality_matrix=QualityMatrix.objects.get(project=project),
        method=Method.GREEDY,
        budget=2,
        max_workers_per_task=2,
        max_tasks_per_worker=3,
        status=RunStatus.SUCCEEDED,
        next_round=True,
        n_assigned=0,
    )


def test_a_run_handed_out_to_the_workers_is_not_deleted_from_the_admin_until_withdrawn(
    admin_client, project_with_a_finished_run
):
    run = handed_out_round(project_with_a_finished_run)
    confirm = admin_client.get(admin_url(AssignmentRun, "delete", run.pk))
    assert "withdraw it on its page first" in confirm.content.decode()
    admin_client.post(admin_url(AssignmentRun, "delete", run.pk), {"post": "yes"})
    bulk = {"action": "delete_selected", "_selected_action": [run.pk], "post": "yes"}
    admin_client.post(admin_url(AssignmentRun, "changelist"), bulk)
    assert AssignmentRun.objects.filter(pk=run.pk).exists()
    services.run_withdraw(run=run)
    admin_client.post(admin_url(AssignmentRun, "delete", run.pk), {"post": "yes"})
    assert not AssignmentRun.objects.filter(pk=run.pk).exists()


def test_a_comparison_whose_run_is_handed_out_is_not_deleted_from_the_admin(
    admin_client, project_with_a_finished_run
):
    comparison = Comparison.objects.get(project=project_with_a_finished_run)
    AssignmentRun.objects.filter(comparison=comparison).update(handed_out_at=timezone.now())
    admin_client.post(admin_url(Comparison, "delete", comparison.pk), {"post": "yes"})
    assert Comparison.objects.filter(pk=comparison.pk).exists()
    AssignmentRun.objects.filter(comparison=comparison).update(withdrawn_at=timezone.now())
    admin_client.post(admin_url(Comparison, "delete", comparison.pk), {"post": "yes"})
    assert not Comparison.objects.filter(pk=comparison.pk).exists()


def test_a_project_with_runs_is_deleted_from_the_admin_but_not_a_matrix_a_run_was_computed_from(
    admin_client, project_with_a_finished_run
):
    project = project_with_a_finished_run
    matrix = QualityMatrix.objects.get(project=project)
    admin_client.post(admin_url(QualityMatrix, "delete", matrix.pk), {"post": "yes"})
    assert QualityMatrix.objects.filter(pk=matrix.pk).exists()
    admin_client.post(admin_url(Project, "delete", project.pk), {"post": "yes"})
    assert not Project.objects.filter(pk=project.pk).exists()
    assert not AssignmentRun.objects.exists()
    assert not QualityMatrix.objects.exists()


def test_a_user_whose_project_has_runs_is_deleted_from_the_admin_with_it(
    admin_client, project_with_a_finished_run
):
    owner = project_with_a_finished_run.owner
    admin_client.post(reverse("admin:auth_user_delete", args=[owner.pk]), {"post": "yes"})
    assert not get_user_model().objects.filter(pk=owner.pk).exists()
    assert not Project.objects.exists()


@pytest.mark.parametrize("path", ["/admin/", "/admin/assignment/project/"])
def test_a_logged_in_user_who_is_not_staff_is_sent_to_the_login_page(client, path):
    user = get_user_model().objects.create_user("bob", password="x")
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))


def test_an_anonymous_visitor_is_sent_to_the_login_page(client):
    response = client.get(admin_url(Project, "changelist"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("admin:login"))


def test_the_project_pages_link_to_the_project_page_on_the_site(
    admin_client, project_with_a_finished_run
):
    page_url = f"/projects/{project_with_a_finished_run.pk}/"
    assert project_with_a_finished_run.get_absolute_url() == page_url

    change = admin_client.get(
        admin_url(Project, "change", project_with_a_finished_run.pk)
    ).content.decode()
    assert f'<a href="{page_url}" class="viewsitelink">Open the project\'s page</a>' in change
    assert "View on site" in change
    changelist = admin_client.get(admin_url(Project, "changelist")).content.decode()
    assert f'<a href="{page_url}">Open the project\'s page</a>' in changelist

    view_on_site = admin_client.get(
        reverse(
            "admin:view_on_site",
            args=[ContentType.objects.get_for_model(Project).pk, project_with_a_finished_run.pk],
        )
    )
    assert view_on_site.status_code == 302
    assert view_on_site.url == f"http://testserver{page_url}"


def svg_of(page: str) -> ET.Element:
    start = page.index('<svg xmlns="http://www.w3.org/2000/svg" class="chart')
    return ET.fromstring(page[start : page.index("</svg>", start) + len("</svg>")])


@pytest.fixture
def computed_comparison(project_with_a_finished_run):
    """A comparison of two methods at three budgets, its runs and upper bound computed."""
    comparison = services.comparison_create(
        project=project_with_a_finished_run,
        methods=["greedy", "random"],
        budgets=[2, 4, 6],
        seed=1,
        enqueue=False,
    )
    for run in AssignmentRun.objects.filter(comparison=comparison).order_by("pk"):
        assert services.run_claim(run_id=run.pk)
        services.run_execute(run_id=run.pk)
    services.comparison_upper_bound_compute(comparison_id=comparison.pk)
    comparison.refresh_from_db()
    return comparison


def test_the_comparison_page_shows_a_row_per_run_with_its_accuracy_and_bound(
    admin_client, computed_comparison
):
    runs = AssignmentRun.objects.filter(comparison=computed_comparison)
    assert runs.count() == 6
    assert all(run.status == RunStatus.SUCCEEDED for run in runs)
    assert computed_comparison.upper_bound["status"] == "done"
    bounds = dict(computed_comparison.upper_bound["points"])

    html = admin_client.get(
        admin_url(Comparison, "change", computed_comparison.pk)
    ).content.decode()

    assert html.count('<tr class="comparison-run">') == 6
    for run in runs:
        row = html[html.index(f'href="{admin_url(AssignmentRun, "change", run.pk)}"') :]
        row = row[: row.index("</tr>")]
        assert f"{run.expected_accuracy:.4f}" in row
        assert f"{bounds[run.budget]:.4f}" in row
        assert f"<td>{run.method}</td>" in row
    assert "Every run has ended." in html
    runs_url = (
        f"{admin_url(AssignmentRun, 'changelist')}?comparison__id__exact={computed_comparison.pk}"
    )
    assert f'href="{runs_url}"' in html
    assert set(admin_client.get(runs_url).context["cl"].result_list) == set(runs)
    assert "charts/charts.css" in html


def test_the_comparison_page_draws_a_line_per_method_and_the_upper_bound(
    admin_client, computed_comparison
):
    html = admin_client.get(
        admin_url(Comparison, "change", computed_comparison.pk)
    ).content.decode()
    svg = svg_of(html)

    series = svg.findall(f".//{SVG}g[@class='chart-series']")
    points = f"{SVG}path[@class='chart-point']"
    assert {s.get("data-series"): len(s.findall(points)) for s in series} == {
        "greedy": 3,
        "random": 3,
    }
    bound = svg.findall(f".//{SVG}g[@class='chart-reference']")
    assert len(bound) == 1
    assert len(bound[0].findall(points)) == 3
    assert "upper bound is pending" not in html


def test_a_comparison_whose_runs_and_bound_are_pending_says_so(
    admin_client, project_with_a_finished_run
):
    comparison = services.comparison_create(
        project=project_with_a_finished_run, methods=["greedy"], budgets=[2, 4], enqueue=False
    )
    html = admin_client.get(admin_url(Comparison, "change", comparison.pk)).content.decode()
    assert html.count('<tr class="comparison-run">') == 2
    assert "The upper bound is pending" in html
    assert "No succeeded runs yet (runs are still queued or running)." in html
    assert 'class="chart chart-line-chart"' not in html


def test_the_comparison_list_counts_runs_and_says_whether_finished_in_fixed_queries(
    admin_client, project_with_a_finished_run, computed_comparison
):
    url = admin_url(Comparison, "changelist")
    response = admin_client.get(url)
    rows = {c.pk: (c.run_count, c.unfinished_run_count) for c in response.context["cl"].result_list}
    old = Comparison.objects.exclude(pk=computed_comparison.pk).get()
    assert rows == {computed_comparison.pk: (6, 0), old.pk: (1, 0)}

    with CaptureQueriesContext(connection) as two:
        admin_client.get(url)
    services.comparison_create(
        project=project_with_a_finished_run, methods=["greedy"], budgets=[2, 4], enqueue=False
    )
    with CaptureQueriesContext(connection) as three:
        response = admin_client.get(url)
    assert len(three) == len(two)
    assert {c.pk: c.unfinished_run_count for c in response.context["cl"].result_list}[
        Comparison.objects.order_by("-pk").first().pk
    ] == 2
