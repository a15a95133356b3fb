"""PreparedRead: the ORM's SQL compiled once, run with each call's values."""

from __future__ import annotations

import pytest

from assignment import services
from assignment.models import Project
from assignment.prepared import PreparedRead

pytestmark = pytest.mark.django_db


@pytest.fixture
def projects(django_user_model):
    alice = django_user_model.objects.create_user("alice")
    bob = django_user_model.objects.create_user("bob")
    return {
        "alice": services.project_create(owner=alice, name="a"),
        "bob": services.project_create(owner=bob, name="b"),
    }


def test_the_values_go_where_the_query_has_them_whatever_the_order_of_the_names(projects):
    alice = projects["alice"]
    for name in ("c", "d", "e"):  # project keys unlike the users' keys
        alice = services.project_create(owner=alice.owner, name=name)
    assert alice.pk not in {alice.owner_id, projects["bob"].owner_id}
    read = PreparedRead(lambda pk, owner: Project.objects.filter(owner=owner, pk=pk), "pk", "owner")
    assert read.first(pk=alice.pk, owner=alice.owner_id) == alice
    assert read.first(pk=alice.pk, owner=projects["bob"].owner_id) is None
    assert read.first(pk=alice.owner_id, owner=alice.pk) is None


def test_the_query_s_own_constants_stay(projects):
    read = PreparedRead(lambda pk: Project.objects.filter(pk=pk, name="a"), "pk")
    assert read.first(pk=projects["alice"].pk) == projects["alice"]
    assert read.first(pk=projects["bob"].pk) is None  # named "b"


def test_it_is_compiled_once_per_database(projects):
    built = []

    def build(pk):
        built.append(pk)
        return Project.objects.filter(pk=pk)

    read = PreparedRead(build, "pk")
    for project in projects.values():
        assert read.first(pk=project.pk) == project
    assert len(built) == 1


def test_only_the_selected_columns_are_read_the_others_deferred(projects):
    read = PreparedRead(lambda pk: Project.objects.only("name").filter(pk=pk), "pk")
    project = read.first(pk=projects["alice"].pk)
    assert project.name == "a"
    assert "description" in project.get_deferred_fields()


def test_a_value_no_key_can_have_matches_nothing_without_a_query(
    projects, django_assert_num_queries
):
    read = PreparedRead(lambda pk: Project.objects.filter(pk=pk), "pk")
    with django_assert_num_queries(0):
        assert read.first(pk=2**63) is None
        assert read.first(pk=-(2**63) - 1) is None


@pytest.mark.parametrize("value", ["1", 1.0, True, None])
def test_values_must_be_integers(value):
    read = PreparedRead(lambda pk: Project.objects.filter(pk=pk), "pk")
    with pytest.raises(TypeError, match="pk must be an integer"):
        read.first(pk=value)


def test_every_named_value_and_only_those_must_be_given():
    read = PreparedRead(lambda pk: Project.objects.filter(pk=pk), "pk")
    with pytest.raises(TypeError, match="values of pk expected"):
        read.first(id=1)


def test_a_name_that_is_not_a_value_of_the_query_is_an_error():
    read = PreparedRead(lambda pk, other: Project.objects.filter(pk=pk), "pk", "other")
    with pytest.raises(ValueError, match=r"\['other'\] are not values of the query"):
        read.first(pk=1, other=2)
