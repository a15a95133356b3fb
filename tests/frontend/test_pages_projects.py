"""Projects from the pages: create, change the defaults, delete with a confirmation."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse
from page_helpers import execute, form_inputs

from assignment import services
from assignment.models import AssignmentRun, Project, RunStatus, Worker

pytestmark = pytest.mark.django_db

NEW = {
    "name": "birds",
    "description": "Which birds are in the photos",
    "labels": "no bird, bird",
    "default_prior": "0.3",
    "default_max_workers_per_task": "5",
    "default_max_tasks_per_worker": "40",
    "default_budget": "",
}


def test_a_new_project_gets_its_labels_and_defaults_and_leads_to_its_data_page(client, alice):
    response = client.post(reverse("frontend:project_create"), NEW, follow=True)
    project = Project.objects.get(owner=alice, name="birds")
    assert response.redirect_chain[-1][0] == reverse("frontend:data", args=[project.pk])
    assert project.labels == ["no bird", "bird"]
    assert (project.default_prior, project.default_max_workers_per_task) == (0.3, 5)
    assert project.default_max_tasks_per_worker == 40
    assert project.default_budget is None
    assert "Project &#x27;birds&#x27; created" in response.content.decode()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"default_prior": "1"}, "strictly between 0 and 1"),
        ({"default_prior": ""}, "Required for a project of two labels"),
        ({"labels": "cat, dog, bird"}, "For two labels only; this project has 3"),  # 0.3 typed
        (
            {
                "labels": "cat, dog, bird",
                "default_prior": "0.5",
                "default_label_prior": "cat=1, cat=0",
            },
            "the label &#x27;cat&#x27; is given twice",
        ),
        ({"labels": "bird"}, "at least two labels"),
        ({"labels": "a, a"}, "given twice"),
        ({"default_max_workers_per_task": "-1"}, "greater than or equal to 0"),
        ({"name": ""}, "This field is required"),
    ],
)
def test_a_project_the_services_refuse_is_shown_with_the_reason_and_not_created(
    client, change, message
):
    response = client.post(reverse("frontend:project_create"), {**NEW, **change})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Project.objects.exists()


def test_a_label_too_long_is_named_beside_the_label_set_and_quoted_in_part(client):
    response = client.post(reverse("frontend:project_create"), {**NEW, "labels": "a" * 150 + ", b"})
    assert response.status_code == 400
    (error,) = response.context["form"].errors["labels"]
    assert error.startswith("Label 1 of 2 is 150 characters long, and a label may have at most 100")
    assert "a" * 81 not in error
    assert "(152 characters)" in error  # the quotation's length, quotes included


def test_a_second_project_of_the_same_name_is_refused(client, sample_project):
    response = client.post(reverse("frontend:project_create"), {**NEW, "name": sample_project.name})
    assert response.status_code == 400
    assert "already has a project" in response.content.decode()
    assert Project.objects.count() == 1


def test_settings_change_only_what_was_changed(client, sample_project):
    url = reverse("frontend:project_settings", args=[sample_project.pk])
    form = client.get(url).context["form"]
    data = {name: "" if value is None else value for name, value in form.initial.items()}
    response = client.post(url, {**data, "default_budget": "12", "description": "new"})
    assert response.status_code == 302
    sample_project.refresh_from_db()
    assert (sample_project.default_budget, sample_project.description) == (12, "new")
    assert sample_project.default_max_tasks_per_worker == 3
    refused = client.post(url, {**data, "default_prior": "0"})
    assert refused.status_code == 400
    assert "strictly between 0 and 1" in refused.content.decode()
    sample_project.refresh_from_db()
    assert sample_project.default_prior == 0.5


def test_settings_saved_in_two_tabs_keep_each_tabs_own_change(client, sample_project):
    url = reverse("frontend:project_settings", args=[sample_project.pk])
    tab_a = form_inputs(client.get(url).content.decode(), 1)  # the site header's is the first
    tab_b = form_inputs(client.get(url).content.decode(), 1)
    assert client.post(url, {**tab_a, "name": "renamed"}).status_code == 302
    assert client.post(url, {**tab_b, "default_max_tasks_per_worker": "7"}).status_code == 302
    sample_project.refresh_from_db()
    assert (sample_project.name, sample_project.default_max_tasks_per_worker) == ("renamed", 7)


def test_settings_refuse_a_budget_below_the_answers_and_the_pairs_awaiting_answers(
    client, sample_project
):
    services.project_update(project=sample_project, default_max_tasks_per_worker=6)
    run = services.run_create(
        project=sample_project, method="random", next_round=True, budget=3, seed=0, enqueue=False
    )
    execute(run.pk)  # its 3 pairs have no answer yet
    url = reverse("frontend:project_settings", args=[sample_project.pk])
    form = client.get(url).context["form"]
    data = {name: "" if value is None else value for name, value in form.initial.items()}
    refused = client.post(url, {**data, "default_budget": "11"})
    assert refused.status_code == 400
    assert (
        "11 is below the 9 answers already collected and 3 pairs of earlier rounds awaiting "
        "answers" in refused.content.decode()
    )
    assert "give at least 12 pairs" in refused.content.decode()
    assert client.post(url, {**data, "default_budget": "12"}).status_code == 302


def test_deleting_asks_first_and_then_removes_everything(client, sample_project):
    url = reverse("frontend:project_delete", args=[sample_project.pk])
    page = client.get(url).content.decode()
    assert "4 workers, 6 tasks" in page
    assert "cannot be undone" in page
    assert Project.objects.exists()
    response = client.post(url, follow=True)
    assert response.redirect_chain[-1][0] == reverse("frontend:projects")
    assert not Project.objects.exists()
    assert not Worker.objects.exists()


def test_deleting_says_which_runs_are_computing_now_and_counts_in_words(
    client, sample_project, queued
):
    for status in (RunStatus.RUNNING, RunStatus.SUCCEEDED, RunStatus.QUEUED):
        run = services.run_create(project=sample_project, method="random", enqueue=False)
        AssignmentRun.objects.filter(pk=run.pk).update(status=status)
    page = client.get(reverse("frontend:project_delete", args=[sample_project.pk]))
    text = " ".join(page.content.decode().split())
    assert "3 runs, 1 of them computing now (it will be stopped), 1 queued (it will not" in text
    assert "1 quality matrix," in text


def test_the_overview_counts_the_data_and_says_what_to_do_next(client, sample_project):
    page = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    assert "Start a run and download its assignment</a>" in page
    assert "Upload the workers</a> <span>(done)</span>" in page
    assert "Start a run and download its assignment</a> <span>(done)" not in page
    assert '9</div><div class="stat-label">collected answers' in page


def test_the_new_project_form_starts_from_the_models_defaults(client):
    form = client.get(reverse("frontend:project_create")).context["form"]
    initial = {name: form[name].initial for name in form.fields}
    assert initial["labels"] == "0, 1"
    assert initial["default_prior"] == Project._meta.get_field("default_prior").default
    assert initial["default_max_workers_per_task"] == 3
    assert initial["default_max_tasks_per_worker"] == 100
    assert initial["default_budget"] is None


def test_a_stale_quality_matrix_is_flagged_with_an_offer_to_estimate_it_again(
    client, sample_project
):
    from assignment.models import Task

    Task.objects.create(project=sample_project, external_id="new <task>", category="birds")
    quality_url = reverse("frontend:quality", args=[sample_project.pk])
    for name in ("project", "run_create", "comparison_create", "quality"):
        page = client.get(reverse(f"frontend:{name}", args=[sample_project.pk])).content.decode()
        assert 'id="run-readiness"' in page, name
        assert "no quality for 1 task (e.g. &#x27;new &lt;task&gt;&#x27;)" in page, name
        assert f'href="{quality_url}#estimate"' in page, name
        # quality may come from the collected answers too, not only from gold answers
        assert "(from the gold answers, the collected answers or both)" in page, name
    assert 'id="estimate"' in client.get(quality_url).content.decode()


def test_a_project_with_three_labels_shows_a_uniform_prior_and_no_warning(client, sample_project):
    sample_project.labels = ["cat", "dog", "bird"]
    sample_project.save()
    page = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    assert "Runs cannot start:" not in page
    assert "uniform over the 3 labels" in page


def test_a_project_of_three_labels_sets_its_prior_over_them_in_its_settings(client, alice):
    project = services.project_create(owner=alice, name="pets", labels=["cat", "dog", "bird"])
    services.project_data_import(
        project=project,
        kind="tasks",
        file=io.BytesIO(
            b'task_id,category,prior\nt1,x,"{""cat"": 0.2, ""dog"": 0.2, ""bird"": 0.6}"\n'
        ),
        file_name="tasks.csv",
    )
    url = reverse("frontend:project_settings", args=[project.pk])
    form = client.get(url).context["form"]
    assert "default_label_prior" in form.fields
    assert "default_prior" not in form.fields  # P(second label) means nothing here
    data = {name: "" if value is None else value for name, value in form.initial.items()}
    data.pop("default_prior")
    response = client.post(url, {**data, "default_label_prior": "cat=0.5, dog=0.3, bird=0.2"})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.default_label_prior == pytest.approx([0.5, 0.3, 0.2])
    page = client.get(reverse("frontend:project", args=[project.pk])).content.decode()
    shares = [f"P(<code>{label}</code>) = {p}" for label, p in (("cat", 0.5), ("dog", 0.3))]
    assert ", ".join([*shares, "P(<code>bird</code>) = 0.2"]) in page
    assert "1 task with a prior of its own" in page
    shown = client.get(url).content.decode()
    assert 'value="cat=0.5, dog=0.3, bird=0.2"' in shown
    for wrong, message in (
        ("cat=0.5, dog=0.5, bird=0.5", "must sum to 1, got 1.5"),
        ("cat 0.5", "write each label and its probability as label=probability"),
    ):
        refused = client.post(url, {**data, "default_label_prior": wrong})
        assert refused.status_code == 400
        assert message in refused.content.decode()
    project.refresh_from_db()
    assert project.default_label_prior == pytest.approx([0.5, 0.3, 0.2])


def test_a_project_ready_to_run_shows_no_warning(client, sample_project):
    page = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    assert 'id="run-readiness"' not in page


def test_a_project_of_three_labels_is_created_with_the_binary_prior_left_as_it_was(client, alice):
    data = {**NEW, "labels": "cat, dog, bird", "default_prior": "0.5"}
    response = client.post(reverse("frontend:project_create"), data)
    assert response.status_code == 302
    project = Project.objects.get(owner=alice)
    assert project.labels == ["cat", "dog", "bird"]
    assert project.default_label_prior is None  # uniform


def test_a_project_of_three_labels_is_created_with_the_binary_prior_emptied(client, alice):
    data = {**NEW, "labels": "cat, dog, bird", "default_prior": ""}
    response = client.post(reverse("frontend:project_create"), data)
    assert response.status_code == 302, response.content.decode()
    assert Project.objects.get(owner=alice).labels == ["cat", "dog", "bird"]


def test_a_label_with_a_comma_is_written_in_quotes_and_its_settings_save_unchanged(client, alice):
    data = {**NEW, "labels": '"a, b", c, "say ""hi"""', "default_prior": "0.5"}
    assert client.post(reverse("frontend:project_create"), data).status_code == 302
    project = Project.objects.get(owner=alice)
    assert project.labels == ["a, b", "c", 'say "hi"']
    services.project_update(
        project=project, default_label_prior={"a, b": 0.2, "c": 0.3, 'say "hi"': 0.5}
    )
    url = reverse("frontend:project_settings", args=[project.pk])
    form = client.get(url).context["form"]
    data = {name: "" if value is None else value for name, value in form.initial.items()}
    shown = form["default_label_prior"].value()
    assert form.fields["default_label_prior"].prepare_value(shown) == (
        '"a, b=0.2", c=0.3, "say ""hi""=0.5"'
    )
    data["default_label_prior"] = form.fields["default_label_prior"].prepare_value(shown)
    data["name"] = "renamed"
    assert client.post(url, data).status_code == 302  # saved as shown: no error
    project.refresh_from_db()
    assert project.name == "renamed"
    assert project.default_label_prior == pytest.approx([0.2, 0.3, 0.5])


def test_a_service_refusal_of_a_field_is_shown_beside_it_in_words(client, alice):
    project = services.project_create(owner=alice, name="pets", labels=["cat", "dog", "bird"])
    url = reverse("frontend:project_settings", args=[project.pk])
    form = client.get(url).context["form"]
    data = {name: "" if value is None else value for name, value in form.initial.items()}
    data.pop("default_prior")
    refused = client.post(url, {**data, "default_label_prior": "cat=0.5, dog=0.6, bird=0.2"})
    assert refused.status_code == 400
    errors = refused.context["form"].errors
    assert errors["default_label_prior"] == ["The probabilities must sum to 1, got 1.3"]
    assert "__all__" not in errors
    assert "default_label_prior:" not in refused.content.decode()


def test_a_project_without_a_budget_shows_how_many_pairs_its_caps_allow(client, sample_project):
    url = reverse("frontend:project", args=[sample_project.pk])
    per_task, per_worker = 3, 3  # the model's default and the fixture's
    tasks = list(sample_project.tasks.values_list("max_workers", flat=True))
    workers = list(
        Worker.objects.filter(project=sample_project, active=True).values_list(
            "max_tasks", flat=True
        )
    )
    # The samples have caps of their own, below the defaults.
    assert any(tasks)
    assert any(workers)
    allowed = min(
        sum(min(per_worker if own is None else own, len(tasks)) for own in workers),
        sum(min(per_task if own is None else own, len(workers)) for own in tasks),
    )
    page = client.get(url).content.decode()
    assert f'as many pairs as the caps allow: <span id="caps-allow">{allowed}</span>' in page
    services.project_update(project=sample_project, default_budget=20)
    page = client.get(url).content.decode()
    assert 'id="caps-allow"' not in page


def test_a_form_with_errors_says_so_in_the_title_and_a_summary_linking_each_field(client):
    response = client.post(
        reverse("frontend:project_create"), {**NEW, "default_budget": "-5", "name": ""}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "<title>Error: New project · tvcs-assign</title>" in page
    summary = page.split('id="error-summary"')[1].split("</div>")[0]
    assert "data-error-summary" in summary  # focused by live.js
    assert '<a href="#id_name">Name: This field is required.</a>' in summary
    assert '<a href="#id_default_budget">Default budget: Ensure this value' in summary
    budget = page.split('name="default_budget"')[1].split(">")[0]
    assert 'aria-invalid="true"' in budget
    assert 'aria-describedby="id_default_budget_helptext id_default_budget_error"' in budget
    assert 'id="id_default_budget_error"' in page


def test_a_label_set_the_services_refuse_is_an_error_of_that_field_in_the_summary(client):
    response = client.post(reverse("frontend:project_create"), {**NEW, "labels": "a, a"})
    assert response.context["form"].errors["labels"] == ["The label 'a' is given twice"]
    page = response.content.decode()
    assert '<a href="#id_labels">Label set: The label &#x27;a&#x27; is given twice</a>' in page
    assert 'aria-invalid="true"' in page.split('name="labels"')[1].split(">")[0]


def test_a_page_without_errors_has_no_summary_and_a_plain_title(client):
    page = client.get(reverse("frontend:project_create")).content.decode()
    assert "<title>New project · tvcs-assign</title>" in page
    assert "data-error-summary" not in page
