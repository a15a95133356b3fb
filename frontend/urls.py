"""Routes of the pages, mounted at ``/``."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from frontend.forms import SignInForm
from frontend.views import account, comparisons, data, labels, projects, quality, runs
from frontend.views.sign_out import SignOutView

app_name = "frontend"

_PROJECT = "projects/<int:project_id>/"

urlpatterns = [
    path("", projects.project_list, name="projects"),
    path("projects/new/", projects.project_create, name="project_create"),
    path(_PROJECT, projects.project_detail, name="project"),
    path(_PROJECT + "settings/", projects.project_settings, name="project_settings"),
    path(_PROJECT + "delete/", projects.project_delete, name="project_delete"),
    path(_PROJECT + "rounds/preview/", projects.round_preview, name="round_preview"),
    path(_PROJECT + "data/", data.data, name="data"),
    path(_PROJECT + "data/<str:kind>/", data.data_upload, name="data_upload"),
    path(_PROJECT + "data/<str:kind>/sample.<str:format>", data.data_sample, name="data_sample"),
    path(_PROJECT + "data/<str:kind>.<str:format>", data.data_download, name="data_download"),
    path(_PROJECT + "quality/", quality.quality, name="quality"),
    path(_PROJECT + "runs/", runs.run_list, name="runs"),
    path(_PROJECT + "runs/new/", runs.run_create, name="run_create"),
    path("runs/<int:run_id>/", runs.run_detail, name="run"),
    path("runs/<int:run_id>/status/", runs.run_status, name="run_status"),
    path("runs/<int:run_id>/cancel/", runs.run_cancel, name="run_cancel"),
    path("runs/<int:run_id>/withdraw/", runs.run_withdraw, name="run_withdraw"),
    path("runs/<int:run_id>/hand-out/", runs.run_hand_out, name="run_hand_out"),
    path("runs/<int:run_id>/assignment.<str:format>", runs.run_download, name="run_download"),
    path(_PROJECT + "comparisons/", comparisons.comparison_list, name="comparisons"),
    path(_PROJECT + "comparisons/new/", comparisons.comparison_create, name="comparison_create"),
    path("comparisons/<int:comparison_id>/", comparisons.comparison_detail, name="comparison"),
    path(
        "comparisons/<int:comparison_id>/status/",
        comparisons.comparison_status,
        name="comparison_status",
    ),
    path(_PROJECT + "labels/", labels.labels, name="labels"),
    path("account/", account.account, name="account"),
]

#: Sign in and out, at the names Django's ``LOGIN_URL`` and the templates use.
auth_urlpatterns = [
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(
            template_name="frontend/login.html",
            authentication_form=SignInForm,
            redirect_authenticated_user=True,
        ),
        name="login",
    ),
    path("accounts/logout/", SignOutView.as_view(), name="logout"),
]
