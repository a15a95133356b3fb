"""Finding a user or a project by the names people type (management commands, later forms).

Reads, like :mod:`assignment.selectors`, but of single objects by name, raising a domain error
that says what to do when there is none (or more than one).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from assignment.errors import AmbiguousProjectError, ProjectNotFoundError, UserNotFoundError
from assignment.models import Project

__all__ = ["project_get_by_name", "user_get_by_username"]


def user_get_by_username(*, username: str) -> AbstractBaseUser:
    """The user called ``username``; :class:`UserNotFoundError` if there is none."""
    user_model = get_user_model()
    try:
        return user_model.objects.get(**{user_model.USERNAME_FIELD: username})
    except user_model.DoesNotExist:
        raise UserNotFoundError(
            f"there is no user {username!r}; create it first "
            "(python manage.py createsuperuser, or in the admin)"
        ) from None


def project_get_by_name(*, name: str, owner_username: str | None = None) -> Project:
    """The project called ``name`` (of ``owner_username`` when given).

    Raises
    ------
    UserNotFoundError
        ``owner_username`` is given and no such user exists.
    ProjectNotFoundError
        No such project.
    AmbiguousProjectError
        No owner given and several owners have a project of that name.
    """
    name = name.strip()  # as project_create stores it
    projects = Project.objects.filter(name=name).select_related("owner")
    if owner_username is not None:
        owner = user_get_by_username(username=owner_username)
        try:
            return projects.get(owner=owner)
        except Project.DoesNotExist:
            raise ProjectNotFoundError(f"user {owner_username!r} has no project {name!r}") from None
    found = list(projects[:11])
    if not found:
        raise ProjectNotFoundError(
            f"there is no project {name!r}; create it with: python manage.py create_project "
            f"{name!r} --owner USERNAME"
        )
    if len(found) > 1:
        owners = sorted(project.owner.get_username() for project in found[:10])
        more = ", ..." if len(found) > 10 else ""
        raise AmbiguousProjectError(
            f"several users have a project {name!r} (owners: {', '.join(owners)}{more}); "
            "say whose with --owner USERNAME"
        )
    return found[0]
