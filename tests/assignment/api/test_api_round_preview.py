"""GET /api/projects/{id}/rounds/preview/: the next round's expected gain, as the page's."""

from __future__ import annotations

import pytest

from assignment import services
from assignment.models import Answer, Task

pytestmark = pytest.mark.django_db


def url(project) -> str:
    return f"/api/projects/{project.pk}/rounds/preview/"


def test_the_preview_is_greedys_next_round_as_a_round_run_would_be(api, filled_project):
    response = api.get(url(filled_project))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok", body["message"]
    assert body["method"] == "greedy"
    assert body["answers"] == Answer.objects.filter(task__project=filled_project).count()
    assert body["gain"] == pytest.approx(body["expected_accuracy"] - body["accuracy_now"])
    service = services.round_preview(project=filled_project)  # the cached value, the same numbers
    assert body["gain"] == pytest.approx(service.gain, abs=1e-12)
    assert body["n_assigned"] <= body["budget"]


def test_the_rounds_options_are_taken_and_checked(api, filled_project):
    body = api.get(url(filled_project), {"budget": 1, "target_posterior": 0.99}).json()
    assert body["status"] == "ok", body["message"]
    assert body["budget"] == 1
    assert body["n_assigned"] <= 1
    assert body["target_posterior"] == 0.99
    bad = api.get(url(filled_project), {"target_posterior": 0, "budget": -1, "rounds_left": 0})
    assert bad.status_code == 400
    assert "target_posterior" in bad.json()["detail"]
    assert "budget" in bad.json()["detail"]
    assert "rounds_left" in bad.json()["detail"]
    at_half = api.get(url(filled_project), {"target_posterior": 0.5})  # 1/K, K = 2
    assert at_half.status_code == 400
    assert "target_posterior must be a number above 0.5, at most" in at_half.json()["detail"]


def test_a_preview_for_rounds_to_go_is_one_layer_of_their_plan(api, filled_project):
    last = api.get(url(filled_project)).json()
    layered = api.get(url(filled_project), {"rounds_left": 3}).json()
    assert layered["status"] == "ok", layered["message"]
    assert layered["rounds_left"] == 3
    assert last["rounds_left"] == 1
    service = services.round_preview(project=filled_project, rounds_left=3)
    assert layered["gain"] == pytest.approx(service.gain, abs=1e-12)
    assert layered["n_assigned"] <= last["n_assigned"]


def test_a_stale_matrix_and_nothing_to_do_are_statuses_not_errors(api, filled_project):
    services.project_update(
        project=filled_project,
        default_budget=Answer.objects.filter(task__project=filled_project).count(),
    )
    done = api.get(url(filled_project)).json()
    assert done["status"] == "done"
    assert "nothing left to spend" in done["message"]
    assert done["gain"] is None
    Task.objects.create(project=filled_project, external_id="late", category="c")
    stale = api.get(url(filled_project)).json()
    assert stale["status"] == "stale"
    assert "late" in stale["message"]
    # The round was not read: its counts are unknown, not 0.
    assert done["answers"] == Answer.objects.filter(task__project=filled_project).count()
    counts = ("answers", "tasks", "open_tasks", "budget", "pending", "n_assigned")
    assert {name: stale[name] for name in counts} == dict.fromkeys(counts)


def test_a_target_below_the_label_sets_bound_and_options_it_does_not_take_are_400s(
    api, filled_project
):
    below = api.get(url(filled_project), {"target_posterior": 0.4})
    assert below.status_code == 400
    assert "target_posterior must be a number above 0.5" in below.json()["detail"]
    caps = api.get(url(filled_project), {"max_tasks_per_worker": 60, "colour": "red"})
    assert caps.status_code == 400
    detail = caps.json()["detail"]
    assert "max_tasks_per_worker: Not taken: the preview plans with greedy" in detail
    assert "colour: Unknown field" in detail


def test_another_users_project_is_not_found(other_api, filled_project):
    assert other_api.get(url(filled_project)).status_code == 404


def test_a_budget_of_zero_is_told_apart_from_a_project_budget_spent(api, filled_project):
    zero = api.get(url(filled_project), {"budget": 0}).json()
    assert zero["status"] == "done"
    left = services.round_preview(project=filled_project).budget
    assert left > 0
    assert zero["message"] == (
        "a budget of 0 has nothing to spend: give this round a positive budget, or none to "
        f"spend what remains of the project's ({left} pairs)"
    )
    assert api.get(url(filled_project)).json()["status"] == "ok"
