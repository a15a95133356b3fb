"""Rounds from the pages: where the project stands, the next-round button, the round's run."""

from __future__ import annotations

import pytest
from django.urls import reverse
from page_helpers import execute, fill_from_samples

from assignment import services
from assignment.importers import KINDS
from assignment.models import Answer, AssignmentRun

pytestmark = pytest.mark.django_db


def form_data(client, project, **changes) -> dict:
    form = client.get(reverse("frontend:run_create", args=[project.pk])).context["form"]
    data = {name: "" if form[name].initial is None else form[name].initial for name in form.fields}
    return {**data, **changes}


def test_the_project_page_says_where_the_answers_leave_the_labels_and_offers_a_round(
    client, sample_project
):
    assert Answer.objects.filter(task__project=sample_project).exists()
    page = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    assert '<section id="rounds">' in page
    answers = Answer.objects.filter(task__project=sample_project).count()
    assert f"{answers} answers collected. Expected accuracy of the labels now:" in page
    start = reverse("frontend:run_create", args=[sample_project.pk]) + "?round=1#round"
    assert f'href="{start}"' in page


def test_the_round_link_opens_the_run_form_with_next_round_ticked(client, sample_project):
    url = reverse("frontend:run_create", args=[sample_project.pk])
    plain = client.get(url).content.decode()
    ticked = client.get(url + "?round=1").content.decode()
    assert 'name="next_round" id="id_next_round" checked' not in plain
    assert 'id="id_next_round" checked' in ticked or 'checked id="id_next_round"' in ticked
    assert "answers collected; expected accuracy of the labels now" in ticked


def test_a_next_round_started_from_the_form_counts_the_answers_and_shows_its_gain(
    client, sample_project, queued
):
    data = form_data(
        client, sample_project, method="greedy", next_round="on", target_posterior="0.99"
    )
    response = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    assert response.status_code == 302
    run = AssignmentRun.objects.get()
    assert run.next_round
    assert run.target_posterior == 0.99
    assert run.round_start["answers"] == Answer.objects.filter(task__project=sample_project).count()
    execute(run.pk)
    run.refresh_from_db()
    page = client.get(reverse("frontend:run", args=[run.pk])).content.decode()
    assert 'id="round-start"' in page
    gain = run.expected_accuracy - run.round_start["accuracy_now"]
    assert f"(expected gain {gain:.4f})" in page
    overview = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    assert f"was expected to gain {100 * gain:+.2f} points of accuracy." in overview
    # A round with rounds to go says its gain is its own pairs', the first of a plan.
    AssignmentRun.objects.filter(pk=run.pk).update(rounds_left=3)
    overview = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    assert "points of accuracy by its own pairs, the first of a plan for 3 rounds" in overview


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("target_posterior", "0.5", "Target posterior must be a number above 0.5, at most 1"),
        ("target_accuracy", "2", "less than or equal to 1"),
    ],
)
def test_a_round_target_out_of_range_is_a_form_error(
    client, sample_project, queued, field, value, message
):
    data = form_data(client, sample_project, method="greedy", next_round="on", **{field: value})
    response = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not AssignmentRun.objects.exists()


def test_a_three_label_project_takes_a_target_posterior_above_one_third_on_both_forms(
    client, alice, queued
):
    project = services.project_create(owner=alice, name="pets", labels=["cat", "dog", "bird"])
    fill_from_samples(project, [kind for kind in KINDS if kind != "answers"])  # all open
    round_fields = {"next_round": "on", "target_posterior": "0.4"}
    compare_url = reverse("frontend:comparison_create", args=[project.pk])
    comparison = {"methods": ["greedy"], "budget_mode": "list", "budgets": "3", **round_fields}
    response = client.post(compare_url, comparison)
    assert response.status_code == 302, response.content.decode()
    run_url = reverse("frontend:run_create", args=[project.pk])
    response = client.post(run_url, form_data(client, project, method="greedy", **round_fields))
    assert response.status_code == 302, response.content.decode()
    assert [run.target_posterior for run in AssignmentRun.objects.all()] == [0.4, 0.4]
    # Below 1/3 is refused by the services' rule, in the field's words.
    response = client.post(compare_url, {**comparison, "target_posterior": "0.3"})
    assert response.status_code == 400
    assert "Target posterior must be a number above 1/3" in response.content.decode()


def test_a_target_without_the_round_ticked_is_told_why(client, sample_project, queued):
    data = form_data(client, sample_project, method="greedy", target_accuracy="0.9")
    response = client.post(reverse("frontend:run_create", args=[sample_project.pk]), data)
    assert response.status_code == 400
    assert "stopping rules of a next round" in response.content.decode()


def test_a_comparison_in_rounds_started_from_the_page_queues_rounds_of_every_method(
    client, sample_project, queued
):
    url = reverse("frontend:comparison_create", args=[sample_project.pk])
    assert 'id="id_next_round" checked' in client.get(url + "?round=1").content.decode()
    data = {
        "methods": ["greedy", "random"],
        "budget_mode": "list",
        "budgets": "3, 6",
        "next_round": "on",
        "target_posterior": "0.97",
    }
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()
    runs = AssignmentRun.objects.all()
    assert runs.count() == 4
    assert all(run.next_round and run.target_posterior == 0.97 for run in runs)
    assert {run.budget for run in runs} == {3, 6}


def test_pairs_of_a_round_awaiting_answers_are_said_to_count_as_spent(
    client, sample_project, queued
):
    from assignment import services

    run = services.run_create(
        project=sample_project,
        method="random",
        next_round=True,
        budget=4,
        seed=0,
        enqueue=False,
    )
    execute(run.pk)
    run.refresh_from_db()
    assert run.n_assigned >= 2
    form_url = reverse("frontend:run_create", args=[sample_project.pk]) + "?round=1"
    urls = (reverse("frontend:project", args=[sample_project.pk]), form_url)

    def warning(pending: int) -> str:
        link = f'<a href="{reverse("frontend:run", args=[run.pk])}">#{run.pk}</a>'
        return f"{pending} pairs of earlier rounds (in run {link}) have no answer yet"

    for url in urls:
        page = client.get(url).content.decode()
        assert warning(run.n_assigned) in page, url
        assert "counts them as spent (budget and caps; never assigned again)" in page
    matrix = run.quality_matrix
    pairs = run.pairs.tolist()
    for worker, task in pairs[:-1]:
        Answer.objects.create(
            worker_id=int(matrix.worker_ids[worker]), task_id=int(matrix.task_ids[task]), label="1"
        )
    for url in urls:
        assert "1 pair of earlier rounds" in client.get(url).content.decode(), url
    worker, task = pairs[-1]
    Answer.objects.create(
        worker_id=int(matrix.worker_ids[worker]), task_id=int(matrix.task_ids[task]), label="1"
    )
    for url in urls:
        assert 'id="round-awaiting-answers"' not in client.get(url).content.decode(), url


def test_a_rounds_page_says_it_counted_pending_pairs_and_why_its_figure_is_conservative(
    client, sample_project, queued
):
    from assignment import services

    services.project_update(project=sample_project, default_max_tasks_per_worker=6)
    first = services.run_create(
        project=sample_project,
        method="random",
        next_round=True,
        budget=3,
        seed=0,
        enqueue=False,
    )
    execute(first.pk)
    second = services.run_create(
        project=sample_project, method="greedy", next_round=True, budget=2, enqueue=False
    )
    execute(second.pk)
    second.refresh_from_db()
    assert second.round_start["pending"] == 3
    page = client.get(reverse("frontend:run", args=[second.pk])).content.decode()
    assert "3 pairs of earlier rounds awaited their answers: counted as spent" in page
    assert "left out of the expected accuracy, which is therefore conservative" in page


def test_a_round_not_handed_out_is_withdrawn_from_its_page(client, sample_project, queued):
    from assignment import services

    run = services.run_create(
        project=sample_project, method="random", next_round=True, budget=4, seed=0, enqueue=False
    )
    execute(run.pk)
    run_url = reverse("frontend:run", args=[run.pk])
    project_url = reverse("frontend:project", args=[sample_project.pk])
    project_page = client.get(project_url).content.decode()
    assert "can be withdrawn on its page" in project_page
    assert f'href="{run_url}"' in project_page
    page = client.get(run_url).content.decode()
    assert 'id="withdraw-round"' in page
    response = client.post(reverse("frontend:run_withdraw", args=[run.pk]), follow=True)
    page = response.content.decode()
    assert f"Round #{run.pk} withdrawn" in page
    assert 'id="round-withdrawn"' in page
    assert "This round was withdrawn on <time datetime=" in page
    assert (
        "</time>, its pairs not handed out after all: later rounds do not count them as "
        "pending and may assign them; answers already in for them still count.</p>"
    ) in page
    assert 'id="withdraw-round"' not in page
    run.refresh_from_db()
    assert run.withdrawn_at is not None
    assert 'id="round-awaiting-answers"' not in client.get(project_url).content.decode()
    runs_page = client.get(reverse("frontend:runs", args=[sample_project.pk])).content.decode()
    row = runs_page.split(f">#{run.pk}</a>")[1].split("</tr>")[0]
    assert '<span class="muted">withdrawn</span>' in row
    listed = client.get(reverse("frontend:projects")).context["page"].object_list
    best = {project.pk: project.best_accuracy for project in listed}[sample_project.pk]
    assert best is None  # its only run is withdrawn: not the project's best
    again = client.post(reverse("frontend:run_withdraw", args=[run.pk]), follow=True)
    assert "was withdrawn already" in again.content.decode()
    opened = client.get(reverse("frontend:run_withdraw", args=[run.pk]))  # a GET acts not
    assert opened["Location"] == reverse("frontend:run", args=[run.pk])


def test_a_run_on_the_whole_project_offers_no_withdrawal(client, sample_project, queued):
    from assignment import services

    run = services.run_create(project=sample_project, method="random", seed=0, enqueue=False)
    execute(run.pk)
    assert (
        'id="withdraw-round"'
        not in client.get(reverse("frontend:run", args=[run.pk])).content.decode()
    )


def test_the_pending_warning_names_the_rounds_that_hold_the_pairs_not_the_latest(
    client, sample_project, queued
):
    from assignment import services

    services.project_update(project=sample_project, default_max_tasks_per_worker=6)
    holding = services.run_create(
        project=sample_project, method="random", next_round=True, budget=3, seed=0, enqueue=False
    )
    execute(holding.pk)
    latest = services.run_create(
        project=sample_project, method="greedy", next_round=True, budget=2, enqueue=False
    )
    execute(latest.pk)
    latest.refresh_from_db()
    matrix = latest.quality_matrix
    for worker, task in latest.pairs.tolist():  # the latest round is answered in full
        Answer.objects.create(
            worker_id=int(matrix.worker_ids[worker]), task_id=int(matrix.task_ids[task]), label="1"
        )
    page = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    warning = page.split('id="round-awaiting-answers">')[1].split("</p>")[0]
    assert f">#{holding.pk}</a>" in warning
    assert f"#{latest.pk}<" not in warning
