"""The signed-in user's own objects: anything else, another user's or none, is a 404.

Every page looks its objects up here, through the same selectors as the API.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from assignment import selectors
from assignment.models import AssignmentRun, Comparison, Project


def user_project(request: HttpRequest, project_id: int) -> Project:
    """The user's project ``project_id``, with its worker, task and gold item counts."""
    return get_object_or_404(selectors.project_list_for_user(user=request.user), pk=project_id)


def user_run(request: HttpRequest, run_id: int) -> AssignmentRun:
    """The user's run ``run_id``, with its project."""
    return get_object_or_404(selectors.run_list_for_user(user=request.user), pk=run_id)


def user_comparison(request: HttpRequest, comparison_id: int) -> Comparison:
    """The user's comparison ``comparison_id``, with its project."""
    return get_object_or_404(
        selectors.comparison_list_for_user(user=request.user).select_related("project"),
        pk=comparison_id,
    )
