"""Quality: the latest matrix's summary and pictures, and estimating it from gold answers."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from assignment import pictures, selectors, services
from assignment.errors import DomainError
from frontend.access import user_project
from frontend.forms import QualityEstimateForm


@login_required
@require_http_methods(["GET", "POST"])
def quality(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    form = QualityEstimateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            matrix = services.quality_estimate(project=project, **form.cleaned_data)
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request,
                f"Quality estimated from {matrix.details['gold_answers']:,} gold answers: "
                f"{matrix.n_workers:,} workers \u00d7 {matrix.n_tasks:,} tasks.",
            )
            return redirect("frontend:quality", project_id=project.pk)
    matrix = selectors.quality_matrix_latest(project=project)
    context = {
        "project": project,
        "form": form,
        "tab": "quality",
        "matrix": matrix,
        "readiness": selectors.run_readiness(project=project),
    }
    if matrix is not None:
        context["summary"] = selectors.quality_matrix_statistics(matrix=matrix)
        data = selectors.quality_by_worker_and_category(matrix=matrix)
        if data is not None:
            context["quality_data"] = data
            context["worker_chart"] = pictures.worker_quality_histogram(data)
            context["heat_map"] = pictures.worker_category_heat_map(data)
    return render(request, "frontend/quality.html", context, status=400 if form.errors else 200)
