"""The services the API added: project_update, project_delete, comparison_create."""

from __future__ import annotations

import pytest
from api_helpers import execute, fill_project

from assignment import services
from assignment.errors import (
    ProjectAlreadyExistsError,
    ProjectValidationError,
    RunLimitError,
    RunValidationError,
)
from assignment.models import (
    Answer,
    AssignmentRun,
    Comparison,
    Project,
    QualityMatrix,
    RunStatus,
    Worker,
)

pytestmark = pytest.mark.django_db


def test_project_update_changes_the_given_fields_only(filled_project):
    services.project_update(
        project=filled_project, default_budget=20, default_max_tasks_per_worker=4
    )
    filled_project.refresh_from_db()
    assert (filled_project.default_budget, filled_project.default_max_tasks_per_worker) == (20, 4)
    assert filled_project.name == "birds"


def test_project_update_rejects_a_taken_name_a_bad_prior_and_a_negative_cap(filled_project, alice):
    services.project_create(owner=alice, name="cars")
    with pytest.raises(ProjectAlreadyExistsError, match="already has a project 'cars'"):
        services.project_update(project=filled_project, name=" cars ")
    with pytest.raises(ProjectValidationError, match=r"strictly between 0 and 1, got 0\.0"):
        services.project_update(project=filled_project, default_prior=0.0)
    with pytest.raises(ProjectValidationError, match="default_max_tasks_per_worker"):
        services.project_update(project=filled_project, default_max_tasks_per_worker=-1)
    assert Project.objects.get(pk=filled_project.pk).default_max_tasks_per_worker == 100
    assert (
        filled_project.default_max_tasks_per_worker == 100
    )  # the refused value is not kept either
    with pytest.raises(ProjectValidationError, match=r"default_budget.*2147483647"):
        services.project_update(project=filled_project, default_budget=2**31)
    with pytest.raises(ValueError, match="cannot update labels"):
        services.project_update(project=filled_project, labels=["a", "b"])


def test_a_budget_below_the_answers_collected_is_refused_over_the_api_and_none_is_taken(
    api, filled_project
):
    answers = Answer.objects.filter(task__project=filled_project).count()
    assert answers > 1
    url = f"/api/projects/{filled_project.pk}/"
    response = api.patch(url, {"default_budget": answers - 1}, format="json")
    assert response.status_code == 400
    assert response.json()["detail"].startswith(
        f"default_budget {answers - 1} is below the {answers} answers already collected"
    )
    assert Project.objects.get(pk=filled_project.pk).default_budget != answers - 1
    assert api.patch(url, {"default_budget": answers}, format="json").status_code == 200
    assert api.patch(url, {"default_budget": None}, format="json").status_code == 200


def test_the_budget_floor_counts_the_pairs_of_earlier_rounds_awaiting_answers_over_the_api(
    api, filled_project
):
    answers = Answer.objects.filter(task__project=filled_project).count()
    run = services.run_create(
        project=filled_project, method="random", next_round=True, budget=3, seed=0, enqueue=False
    )
    execute(run.pk)  # its 3 pairs have no answer yet: pending, spent
    url = f"/api/projects/{filled_project.pk}/"
    response = api.patch(url, {"default_budget": answers + 2}, format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == (
        f"default_budget {answers + 2} is below the {answers} answers already collected and 3 "
        "pairs of earlier rounds awaiting answers, which the project's rounds count as spent: "
        f"give at least {answers + 3} pairs, or none (as many as the caps allow)"
    )
    assert Project.objects.get(pk=filled_project.pk).default_budget is None
    assert api.patch(url, {"default_budget": answers + 3}, format="json").status_code == 200


def test_a_budget_of_zero_is_refused_for_a_run_and_as_the_projects_default(api, filled_project):
    runs = f"/api/projects/{filled_project.pk}/runs/"
    response = api.post(runs, {"method": "greedy", "budget": 0}, format="json")
    assert response.status_code == 400
    assert "a budget of 0 has nothing to spend" in response.json()["detail"]
    project = f"/api/projects/{filled_project.pk}/"
    response = api.patch(project, {"default_budget": 0}, format="json")
    assert response.status_code == 400  # one floor, the answers in hand, not two messages
    assert "default_budget 0 is below the" in response.json()["detail"]
    assert not AssignmentRun.objects.filter(project=filled_project).exists()
    Answer.objects.filter(task__project=filled_project).delete()
    response = api.patch(project, {"default_budget": 0}, format="json")
    assert response.status_code == 400
    assert "default_budget 0 has nothing to spend" in response.json()["detail"]


def test_project_update_may_keep_the_name_of_the_project_itself(filled_project):
    services.project_update(project=filled_project, name="birds", description="new")
    assert Project.objects.get(pk=filled_project.pk).description == "new"


def test_project_delete_removes_runs_matrices_and_data(filled_project, queued):
    execute(services.run_create(project=filled_project, method="random").pk)
    services.comparison_create(project=filled_project, methods=["greedy"])
    services.project_delete(project=filled_project)
    for model in (Project, AssignmentRun, Comparison, QualityMatrix, Worker):
        assert not model.objects.exists()


def test_comparison_create_queues_one_run_per_method_and_budget_after_commit(
    filled_project, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        comparison = services.comparison_create(
            project=filled_project,
            methods=["tvcs-iht", "random"],
            budgets=[4, 8, 12],
            max_workers_per_task=2,
            seed=5,
        )
        assert queued == []
    runs = AssignmentRun.objects.filter(comparison=comparison)
    assert sorted(runs.values_list("method", "budget")) == sorted(
        (method, budget) for method in ("tvcs-iht", "random") for budget in (4, 8, 12)
    )
    assert set(runs.values_list("status", "seed", "max_workers_per_task")) == {
        (RunStatus.QUEUED, 5, 2)
    }
    assert sorted(queued) == sorted(runs.values_list("pk", flat=True))


def test_comparison_create_without_budgets_runs_each_method_once_with_the_default_budget(
    filled_project, queued
):
    comparison = services.comparison_create(project=filled_project, methods=["random", "greedy"])
    budgets = set(comparison.runs.values_list("budget", flat=True))
    assert budgets == {min(10 * 3, 6 * 100)}
    assert comparison.runs.count() == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": []}, "at least one method"),
        ({"methods": ["random", "simplex"]}, "every one of methods must be one of"),
        ({"methods": ["random", "random"]}, "must not repeat"),
        ({"methods": ["random"], "budgets": [5, 5]}, "must not repeat"),
        ({"methods": ["random"], "budgets": [0]}, "must be an integer from 1 to .*, got 0"),
        ({"methods": ["random"], "budgets": [True]}, "must be an integer from 1 to"),
        ({"methods": ["random"], "budgets": [4, 2**31]}, "from 1 to 2,147,483,647, got 2147483648"),
        ({"methods": "random"}, "must be a list"),
        ({"methods": ["random", "greedy"], "budgets": list(range(1, 32))}, "at most 60 runs"),
    ],
)
def test_comparison_create_rejects_bad_requests_and_writes_nothing(filled_project, kwargs, message):
    with pytest.raises(RunValidationError, match=message):
        services.comparison_create(project=filled_project, **kwargs)
    assert not Comparison.objects.exists()
    assert not AssignmentRun.objects.exists()


def test_comparison_create_on_a_project_without_quality_writes_nothing(alice):
    project = services.project_create(owner=alice, name="empty")
    with pytest.raises(RunValidationError, match="has no quality matrix"):
        services.comparison_create(project=project, methods=["random"])
    assert not Comparison.objects.exists()


def test_a_comparison_gets_an_upper_bound_above_every_run_at_each_budget(
    filled_project, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        comparison = services.comparison_create(
            project=filled_project, methods=["greedy", "random"], budgets=[12, 4, 8], seed=1
        )
    assert comparison.upper_bound == {"status": "pending"}
    for run_id in queued:
        execute(run_id)
    stored = services.comparison_upper_bound_compute(comparison_id=comparison.pk)
    assert stored["status"] == "done"
    assert [budget for budget, _ in stored["points"]] == [4, 8, 12]
    bound = dict(stored["points"])
    values = list(bound.values())
    assert values == sorted(values)
    for run in AssignmentRun.objects.filter(comparison=comparison):
        assert run.status == RunStatus.SUCCEEDED
        assert run.expected_accuracy <= bound[run.budget] + 1e-12
    comparison.refresh_from_db()
    assert comparison.upper_bound == stored
    # Computed once: a second delivery of the task finds nothing pending.
    assert services.comparison_upper_bound_compute(comparison_id=comparison.pk) is None


def test_a_user_may_have_only_so_many_runs_queued_or_running(
    filled_project, alice, queued, settings
):
    settings.TVCS_MAX_ACTIVE_RUNS = 3
    first = services.run_create(project=filled_project, method="random")
    services.run_create(project=filled_project, method="random")
    with pytest.raises(RunLimitError, match="this request adds 2"):
        services.comparison_create(project=filled_project, methods=["random", "greedy"])
    assert not Comparison.objects.exists()
    services.run_create(project=filled_project, method="greedy")
    with pytest.raises(RunLimitError, match="you have 3 runs queued or running"):
        services.run_create(project=filled_project, method="greedy")
    assert AssignmentRun.objects.count() == 3
    services.run_cancel(run=first)  # an ended run frees its place
    services.run_create(project=filled_project, method="greedy")
    # Runs computed in this process (the assign command) take no worker and are not counted.
    services.run_create(project=filled_project, method="greedy", enqueue=False)


def test_the_limit_is_per_user(filled_project, bob, queued, settings):
    settings.TVCS_MAX_ACTIVE_RUNS = 1
    services.run_create(project=filled_project, method="random")
    theirs = services.project_create(owner=bob, name="theirs")
    fill_project(theirs)
    services.run_create(project=theirs, method="random")


def test_the_api_answers_429_beyond_the_limit(api, filled_project, queued, settings):
    settings.TVCS_MAX_ACTIVE_RUNS = 1
    assert (
        api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).status_code
        == 202
    )
    response = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"})
    assert response.status_code == 429
    assert "may have at most 1" in response.json()["detail"]


def test_a_project_of_three_labels_takes_a_default_distribution_over_them(alice):
    project = services.project_create(
        owner=alice,
        name="pets",
        labels=["cat", "dog", "bird"],
        default_label_prior={"dog": 0.3, "bird": 0.2, "cat": 0.5},
    )
    assert project.default_label_prior == pytest.approx([0.5, 0.3, 0.2])
    with pytest.raises(
        ProjectValidationError,
        match=r"default_label_prior: the probabilities must sum to 1, got 1\.5",
    ):
        services.project_update(
            project=project, default_label_prior={"cat": 0.5, "dog": 0.5, "bird": 0.5}
        )
    assert Project.objects.get(pk=project.pk).default_label_prior == pytest.approx([0.5, 0.3, 0.2])
    services.project_update(project=project, default_label_prior=None)
    assert Project.objects.get(pk=project.pk).default_label_prior is None  # uniform


def test_a_binary_project_refuses_a_distribution_and_keeps_its_one_number(filled_project):
    with pytest.raises(ProjectValidationError, match="a binary project's prior is default_prior"):
        services.project_update(project=filled_project, default_label_prior={"0": 0.4, "1": 0.6})
    assert Project.objects.get(pk=filled_project.pk).default_label_prior is None


def test_a_project_of_three_labels_refuses_the_binary_prior_and_writes_nothing(alice):
    with pytest.raises(ProjectValidationError, match="this project has 3 labels"):
        services.project_create(
            owner=alice, name="pets", labels=["cat", "dog", "bird"], default_prior=0.9
        )
    assert not Project.objects.exists()
    project = services.project_create(owner=alice, name="pets", labels=["cat", "dog", "bird"])
    with pytest.raises(ProjectValidationError, match="give default_label_prior"):
        services.project_update(project=project, default_prior=0.9)
    assert Project.objects.get(pk=project.pk).default_prior == 0.5


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (["a\u200b", "a"], r"contains an invisible character, U\+200B \(ZERO WIDTH SPACE\)"),
        (["cat", "\ufeffdog"], "U\\+FEFF"),
        (["a\nb", "c"], "contains a line break or another control character"),
        ([f"l{k}" for k in range(51)], "at most 50 labels"),
    ],
)
def test_a_label_set_that_could_not_be_told_apart_or_computed_is_refused(alice, labels, message):
    with pytest.raises(ProjectValidationError, match=message):
        services.project_create(owner=alice, name="pets", labels=labels)
    assert not Project.objects.exists()
    services.project_create(owner=alice, name="fifty", labels=[f"l{k}" for k in range(50)])


def test_an_estimate_from_answers_over_the_api_takes_a_bound_on_em_iterations(api, filled_project):
    url = f"/api/projects/{filled_project.pk}/quality/estimate/"
    response = api.post(url, {"source": "both", "max_iterations": 1}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["details"]["iterations"] <= 1
    gold = api.post(url, {"source": "gold", "max_iterations": 1}, format="json")
    assert gold.status_code == 400
    assert "max_iterations 1 bounds the EM" in gold.json()["detail"]


@pytest.mark.parametrize("cap", ["max_workers_per_task", "max_tasks_per_worker"])
def test_caps_that_leave_no_pair_are_refused_rather_than_run_empty(api, filled_project, cap):
    runs = f"/api/projects/{filled_project.pk}/runs/"
    response = api.post(runs, {"method": "greedy", cap: 0}, format="json")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("the caps leave no pair to assign (")
    assert f"{cap} 0" in response.json()["detail"]
    assert not AssignmentRun.objects.filter(project=filled_project).exists()
