"""Polling a run (``GET /api/runs/{id}/``) stays cheap: two queries, one row of one table, the
same answer as the whole run's (benchmarks/poll.py measures its CPU)."""

from __future__ import annotations

import json

import pytest
from api_helpers import execute
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.serializers import ModelSerializer

from assignment import selectors
from assignment.api.serializers import FieldsBuiltOnceMixin, ProjectSerializer, RunSerializer
from assignment.models import AssignmentRun, Project, RunStatus

pytestmark = pytest.mark.django_db

#: The token with its user, then the run with its project's owner.
POLL_QUERIES = 2


@pytest.fixture
def running(api, filled_project, queued) -> int:
    run = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "random"}).json()
    AssignmentRun.objects.filter(pk=run["id"]).update(
        status=RunStatus.RUNNING,
        attempts=1,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
        progress=40,
        progress_message="iteration 20 of 50",
    )
    return run["id"]


@pytest.fixture
def succeeded(api, filled_project, queued) -> int:
    run = api.post(f"/api/projects/{filled_project.pk}/runs/", {"method": "greedy"}).json()
    execute(run["id"])
    return run["id"]


def whole_run_answer(run_id: int) -> dict:
    """The answer rendered from the run read whole (every column, its project joined)."""
    run = AssignmentRun.objects.select_related("project").get(pk=run_id)
    return json.loads(JSONRenderer().render(RunSerializer(run).data))


@pytest.mark.parametrize("which", ["running", "succeeded"])
def test_a_poll_makes_two_queries_and_answers_as_the_whole_run_would(
    api, which, request, django_assert_max_num_queries
):
    run_id = request.getfixturevalue(which)
    with django_assert_max_num_queries(POLL_QUERIES) as captured:
        response = api.get(f"/api/runs/{run_id}/")
    assert response.status_code == 200
    assert response.json() == whole_run_answer(run_id)
    run_query = captured.captured_queries[-1]["sql"]
    assert "assignment_blob" not in run_query
    assert "summary" not in run_query
    assert '"assignment_project"."name"' not in run_query  # the project is joined, not read


def test_the_run_is_read_as_the_orm_reads_it(alice, running, django_assert_num_queries):
    expected = selectors.run_status_list_for_user(user=alice).get(pk=running)
    with django_assert_num_queries(1):
        got = selectors.run_status_for_user(user=alice, run_id=running)
    assert got.get_deferred_fields() == expected.get_deferred_fields()
    for name in selectors.RUN_STATUS_FIELDS:
        attname = AssignmentRun._meta.get_field(name).attname
        assert getattr(got, attname) == getattr(expected, attname), name


def test_a_run_id_beyond_any_key_is_not_found(api):
    response = api.get(f"/api/runs/{2**64}/")
    assert response.status_code == 404
    assert response.json() == {"detail": f"You have no run {2**64}."}


def test_another_users_run_is_not_found_in_as_many_queries(
    other_api, running, django_assert_max_num_queries
):
    with django_assert_max_num_queries(POLL_QUERIES):
        response = other_api.get(f"/api/runs/{running}/")
    assert response.status_code == 404
    assert response.json() == {"detail": f"You have no run {running}."}


def test_a_list_of_runs_answers_as_the_whole_runs_would(api, running, succeeded):
    listed = api.get("/api/runs/").json()["results"]
    assert listed == [whole_run_answer(succeeded), whole_run_answer(running)]


def test_the_status_columns_are_all_the_serializer_shows():
    fields = RunSerializer().fields
    sources = {fields[name].source for name in RunSerializer.Meta.fields}
    # chosen_under is AssignmentRun's rule over columns the status selector reads too
    assert sources <= {*selectors.RUN_STATUS_FIELDS, "chosen_under"}
    read = selectors.run_status_list_for_user(user=None).query.deferred_loading[0]
    assert set(AssignmentRun.CHOSEN_UNDER_FIELDS) <= set(read)


@pytest.mark.parametrize("serializer", [RunSerializer, ProjectSerializer])
def test_serializer_fields_are_built_once_and_copied_for_each_instance(serializer, monkeypatch):
    assert serializer().fields  # built for this class now, if nothing did yet
    built: list[type] = []
    model_fields = ModelSerializer.get_fields

    def counting(self):
        built.append(type(self))
        return model_fields(self)

    monkeypatch.setattr(ModelSerializer, "get_fields", counting)
    one, two = serializer().fields, serializer().fields
    assert built == []
    assert list(one) == list(two) == list(serializer.Meta.fields)
    assert all(one[name] is not two[name] for name in one)
    assert one["id"].parent is not two["id"].parent
    assert all(field.parent is None for field in serializer._fields_built.values())


def test_a_serializer_with_fields_to_validate_gets_deep_copies_of_them():
    class Writable(FieldsBuiltOnceMixin, ModelSerializer):
        class Meta:
            model = Project
            fields = ["id", "name"]

    one, two = Writable().fields, Writable().fields
    assert not one["name"].read_only
    assert one["name"].validators is not two["name"].validators
