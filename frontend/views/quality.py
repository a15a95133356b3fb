"""Quality: the latest matrix's summary and pictures, and estimating it (from gold answers,
collected answers, or both)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from assignment import pictures, selectors, services
from assignment.errors import DomainError
from assignment.models import QualityMatrix
from frontend.access import user_project
from frontend.forms import QualityEstimateForm


@login_required
@require_http_methods(["GET", "POST"])
def quality(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    form = QualityEstimateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            matrix = services.quality_estimate(project=project, **form.estimate_arguments())
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            _report_estimate(request, matrix)
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
        context["strength_warnings"] = selectors.quality_strength_warnings(matrix=matrix)
        data = selectors.quality_by_worker_and_category(matrix=matrix)
        if data is not None:
            context["quality_data"] = data
            context["worker_chart"] = pictures.worker_quality_histogram(data)
            context["heat_map"] = pictures.worker_category_heat_map(data)
    return render(request, "frontend/quality.html", context, status=400 if form.errors else 200)


def _report_estimate(request: HttpRequest, matrix: QualityMatrix) -> None:
    """The message after an estimate: what it learnt from; by EM, whether it converged."""
    details = matrix.details
    size = f"{matrix.n_workers:,} workers \u00d7 {matrix.n_tasks:,} tasks"
    if "model" not in details:
        messages.success(
            request, f"Quality estimated from {details['gold_answers']:,} gold answers: {size}."
        )
        return
    used = f"{details['n_answers']:,} collected answers"
    if details["n_gold_answers"]:
        used += f" and {details['n_gold_answers']:,} gold answers"
    text = f"Quality estimated by EM ({details['model']}) from {used}: {size}"
    if details["converged"]:
        messages.success(request, f"{text}, converged in {details['iterations']} iterations.")
    else:
        messages.warning(
            request,
            f"{text}. The EM did not converge in {details['iterations']} iteration"
            f"{'s' * (details['iterations'] != 1)}; the "
            'matrix is stored all the same. Estimate again with more "EM iterations at '
            'most" to let it converge.',
        )
