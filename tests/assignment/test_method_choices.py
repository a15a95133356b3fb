"""A run's method choices are the engine registry's, read when they are used: a method added to
the registry is a valid run method with no migration."""

from __future__ import annotations

import numpy as np
import pytest
from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.migrations.autodetector import MigrationAutodetector
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.state import ProjectState
from django.db.models import TextChoices

from assignment import models
from assignment.engine import METHODS
from assignment.models import AssignmentRun, QualityMatrix, QualitySource, RunStatus

pytestmark = pytest.mark.django_db

TOY = "toy-reliable"


@pytest.fixture
def toy_registered(monkeypatch):
    """The run model as it is after one more registry line (and a restart): a toy method."""
    names = [*METHODS, TOY]
    choices = TextChoices("Method", [(n.upper().replace("-", "_"), (n, n)) for n in names])
    monkeypatch.setattr(models, "Method", choices)


def _pending_changes() -> dict:
    """What ``makemigrations`` would write for the assignment app, from the models as they are."""
    loader = MigrationLoader(connection)
    detector = MigrationAutodetector(loader.project_state(), ProjectState.from_apps(apps))
    return detector.changes(graph=loader.graph, trim_to_apps={"assignment"})


def _run(project, method: str) -> AssignmentRun:
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
    matrix.set_arrays(
        values=np.full((2, 3), 0.7),
        worker_ids=[1, 2],
        task_ids=[1, 2, 3],
        task_categories=["a"] * 3,
        gold_counts=[0, 0],
    )
    matrix.save()
    return AssignmentRun(
        project=project,
        quality_matrix=matrix,
        method=method,
        budget=2,
        max_workers_per_task=1,
        max_tasks_per_worker=1,
        status=RunStatus.QUEUED,
    )


def test_the_migrations_record_the_choices_as_a_reference_not_a_list_of_names():
    state = MigrationLoader(connection).project_state()
    field = state.models["assignment", "assignmentrun"].fields["method"]
    assert field.deconstruct()[3]["choices"] is models.method_choices
    constraints = state.models["assignment", "assignmentrun"].options["constraints"]
    assert not [c for c in constraints if "method" in str(c.condition)]


def test_a_method_added_to_the_registry_needs_no_migration(toy_registered):
    assert TOY in dict(models.method_choices())
    assert _pending_changes() == {}


def test_a_method_added_to_the_registry_is_a_valid_run_method(toy_registered, empty_project):
    run = _run(empty_project, TOY)
    run.full_clean()
    run.save()
    assert AssignmentRun.objects.get(pk=run.pk).method == TOY


def test_a_name_outside_the_registry_is_refused_by_full_clean(empty_project):
    run = _run(empty_project, TOY)
    with pytest.raises(ValidationError) as error:
        run.full_clean()
    assert list(error.value.message_dict) == ["method"]
