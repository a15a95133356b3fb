"""Projects: the list, a new project, its overview, its settings and its deletion."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from assignment import selectors, services
from assignment.errors import DomainError
from assignment.priors import label_prior_mapping
from frontend.access import user_project
from frontend.forms import ProjectCreateForm, ProjectSettingsForm, add_service_error
from frontend.paging import page_of

PROJECTS_PER_PAGE = 25
_DEFAULT_FIELDS = (
    "default_prior",
    "default_max_workers_per_task",
    "default_max_tasks_per_worker",
    "default_budget",
)


@login_required
def project_list(request: HttpRequest) -> HttpResponse:
    projects = selectors.project_overview_list(user=request.user)
    page = page_of(projects, PROJECTS_PER_PAGE, request.GET.get("page"))
    return render(request, "frontend/project_list.html", {"page": page})


@login_required
@require_http_methods(["GET", "POST"])
def project_create(request: HttpRequest) -> HttpResponse:
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.project_create(owner=request.user, **form.cleaned_data)
        except DomainError as exc:
            add_service_error(form, exc)
        else:
            messages.success(request, f"Project {project.name!r} created. Upload its data next.")
            return redirect("frontend:data", project_id=project.pk)
    return render(
        request,
        "frontend/project_form.html",
        {"form": form, "title": "New project"},
        status=400 if form.errors else 200,
    )


@dataclass(frozen=True)
class Step:
    """One step of a project's set-up, done or not, and the page that does it."""

    text: str
    done: bool
    url: str


def _steps(project, stats) -> list[Step]:
    def url(name: str, anchor: str = "") -> str:
        return reverse(f"frontend:{name}", kwargs={"project_id": project.pk}) + anchor

    has_quality = stats.latest_quality_matrix is not None
    return [
        Step("Upload the workers", stats.workers > 0, url("data", "#kind-workers")),
        Step("Upload the tasks", stats.tasks > 0, url("data", "#kind-tasks")),
        Step(
            "Upload gold items and the workers' gold answers (or a quality file)",
            stats.gold_answers > 0 or has_quality,
            url("data", "#kind-gold_items"),
        ),
        Step("Estimate the quality matrix (or upload one)", has_quality, url("quality")),
        Step("Start a run and download its assignment", stats.runs > 0, url("run_create")),
        Step(
            "Compare the methods over several budgets",
            stats.comparisons > 0,
            url("comparison_create"),
        ),
        Step("Upload the collected answers and read the labels", stats.answers > 0, url("labels")),
    ]


@login_required
def project_detail(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    stats = selectors.project_statistics(project=project)
    recent = selectors.run_list_for_user(user=request.user, project_id=project.pk)
    readiness = selectors.run_readiness(project=project)
    rounds = (
        selectors.round_overview(project=project, readiness=readiness) if stats.answers else None
    )
    context = {
        "project": project,
        "label_prior": label_prior_mapping(project.default_label_prior, list(project.labels)),
        "stats": stats,
        "steps": _steps(project, stats),
        "readiness": readiness,
        "rounds": rounds,
        # without JavaScript the preview is computed when asked for (?preview=1)
        "preview": services.round_preview(project=project)
        if rounds and request.GET.get("preview")
        else None,
        "recent_runs": recent[: selectors.RECENT_RUNS],
        "caps_allow": _caps_allow(project, readiness),
        "tab": "overview",
    }
    return render(request, "frontend/project_detail.html", context)


def _caps_allow(project, readiness) -> int | None:
    """The pairs the default caps allow on the matrix runs would use: the budget of a project
    without its own; None when it has one or runs cannot start."""
    if project.default_budget is not None or not readiness.ready:
        return None
    return selectors.project_budget(
        project=project,
        matrix=readiness.matrix,
        max_workers_per_task=project.default_max_workers_per_task,
        max_tasks_per_worker=project.default_max_tasks_per_worker,
    )


@login_required
@require_http_methods(["GET"])
def round_preview(request: HttpRequest, project_id: int) -> HttpResponse:
    """The next round's expected gain, an HTML fragment the project page fetches after load."""
    project = user_project(request, project_id)
    preview = services.round_preview(project=project)
    return render(request, "frontend/_round_preview.html", {"project": project, "preview": preview})


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    initial = {name: getattr(project, name) for name in ("name", "description", *_DEFAULT_FIELDS)}
    labels = list(project.labels)
    initial["default_label_prior"] = label_prior_mapping(project.default_label_prior, labels)
    form = ProjectSettingsForm(request.POST or None, initial=initial, labels=labels)
    if request.method == "POST" and form.is_valid():
        changed = {name: form.cleaned_data[name] for name in form.changed_data}
        try:
            if changed:
                services.project_update(project=project, **changed)
        except DomainError as exc:
            add_service_error(form, exc)
        else:
            messages.success(request, "Settings saved." if changed else "Nothing changed.")
            return redirect("frontend:project", project_id=project.pk)
    return render(
        request,
        "frontend/project_settings.html",
        {"form": form, "project": project, "tab": "settings"},
        status=400 if form.errors else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def project_delete(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    if request.method == "POST":
        name = project.name
        services.project_delete(project=project)
        messages.success(request, f"Project {name!r} and everything in it was deleted.")
        return redirect("frontend:projects")
    stats = selectors.project_statistics(project=project)
    return render(
        request,
        "frontend/project_delete.html",
        {"project": project, "stats": stats, "tab": "settings"},
    )
