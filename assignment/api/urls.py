"""Routes of the REST API, mounted at ``/api/`` (``/healthz`` is routed by ``config.urls``)."""

from __future__ import annotations

from django.urls import path, re_path

from assignment.api import views
from assignment.importers import KINDS

app_name = "api"

urlpatterns = [
    path("token/", views.TokenView.as_view(), name="token"),
    path("projects/", views.ProjectListView.as_view(), name="project-list"),
    path("projects/<int:project_id>/", views.ProjectDetailView.as_view(), name="project-detail"),
    re_path(
        rf"^projects/(?P<project_id>[0-9]+)/data/(?P<kind>{'|'.join(KINDS)})/$",
        views.ProjectDataView.as_view(),
        name="project-data",
    ),
    path(
        "projects/<int:project_id>/labels/",
        views.ProjectLabelsView.as_view(),
        name="project-labels",
    ),
    path("projects/<int:project_id>/quality/", views.QualityView.as_view(), name="quality"),
    path(
        "projects/<int:project_id>/quality/estimate/",
        views.QualityEstimateView.as_view(),
        name="quality-estimate",
    ),
    path("projects/<int:project_id>/runs/", views.ProjectRunsView.as_view(), name="project-runs"),
    path(
        "projects/<int:project_id>/rounds/preview/",
        views.ProjectRoundPreviewView.as_view(),
        name="project-round-preview",
    ),
    path(
        "projects/<int:project_id>/comparisons/",
        views.ProjectComparisonsView.as_view(),
        name="project-comparisons",
    ),
    path("runs/", views.RunListView.as_view(), name="run-list"),
    path("runs/<int:run_id>/", views.RunDetailView.as_view(), name="run-detail"),
    path("runs/<int:run_id>/cancel/", views.RunCancelView.as_view(), name="run-cancel"),
    path("runs/<int:run_id>/withdraw/", views.RunWithdrawView.as_view(), name="run-withdraw"),
    path("runs/<int:run_id>/hand-out/", views.RunHandOutView.as_view(), name="run-hand-out"),
    path(
        "runs/<int:run_id>/assignment/",
        views.RunAssignmentView.as_view(),
        name="run-assignment",
    ),
    path(
        "comparisons/<int:comparison_id>/",
        views.ComparisonDetailView.as_view(),
        name="comparison-detail",
    ),
    path("schema/", views.SchemaView.as_view(), name="schema"),
    path("docs/", views.DocsView.as_view(url_name="api:schema"), name="docs"),
]
