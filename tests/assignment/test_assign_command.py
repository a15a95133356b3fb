"""manage.py assign computes runs in-process and prints them."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from assignment import services
from assignment.models import AssignmentRun, RunStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    owner = get_user_model().objects.create_user("assigner", password="x")
    return services.demo_project_create(owner=owner, n_workers=10, n_tasks=30, seed=4)


def test_one_method_is_computed_stored_and_printed(project):
    out = io.StringIO()
    call_command(
        "assign", project=project.name, method="greedy", budget=20, stdout=out, stderr=io.StringIO()
    )
    run = AssignmentRun.objects.get(project=project)
    assert run.status == RunStatus.SUCCEEDED
    assert run.n_assigned <= 20
    assert f"Run {run.pk} (greedy): expected accuracy {run.expected_accuracy:.4f}" in out.getvalue()


def test_compare_runs_every_method_and_prints_a_table(project):
    out = io.StringIO()
    call_command("assign", project=project.name, compare=True, stdout=out, stderr=io.StringIO())
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:2] == ["method", "accuracy"]
    assert sorted(line.split()[0] for line in lines[1:]) == ["greedy", "q-lp", "random", "tvcs-iht"]
    assert AssignmentRun.objects.filter(project=project, status=RunStatus.SUCCEEDED).count() == 4


def test_an_unknown_project_is_a_command_error():
    with pytest.raises(CommandError, match="project"):
        call_command("assign", project="nope", method="random")
