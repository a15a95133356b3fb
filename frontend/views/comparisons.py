"""Comparisons: methods side by side over budgets, a table and an accuracy-against-budget plot."""

from __future__ import annotations

from dataclasses import asdict

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from assignment import pictures, selectors, services
from assignment.errors import DomainError
from assignment.models import RunStatus
from frontend.access import user_comparison, user_project
from frontend.forms import ComparisonForm
from frontend.paging import page_of
from frontend.rates import rate_refusal

COMPARISONS_PER_PAGE = 20


@login_required
@require_GET
def comparison_list(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    comparisons = selectors.comparison_list_for_user(user=request.user, project_id=project.pk)
    page = page_of(comparisons, COMPARISONS_PER_PAGE, request.GET.get("page"))
    summaries = [selectors.comparison_summary(comparison=c) for c in page]
    return render(
        request,
        "frontend/comparison_list.html",
        {"project": project, "page": page, "summaries": summaries, "tab": "compare"},
    )


@login_required
@require_http_methods(["GET", "POST"])
def comparison_create(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    form = ComparisonForm(
        request.POST or None,
        initial={"next_round": "round" in request.GET},
        n_labels=len(project.labels),
    )
    refusal = request.method == "POST" and rate_refusal(request, scope="runs")
    if refusal:
        form.add_error(None, refusal)
    elif request.method == "POST" and form.is_valid():
        try:
            comparison = services.comparison_create(project=project, **form.comparison_arguments())
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            if form.note:
                messages.info(request, form.note)
            return redirect("frontend:comparison", comparison_id=comparison.pk)
    readiness = selectors.run_readiness(project=project)
    return render(
        request,
        "frontend/comparison_form.html",
        {
            "project": project,
            "form": form,
            "tab": "compare",
            "readiness": readiness,
            "overview": selectors.round_overview(project=project, readiness=readiness),
        },
        status=429 if refusal else 400 if form.errors else 200,
    )


def _comparison_context(comparison) -> dict:
    summary = selectors.comparison_summary(comparison=comparison)
    bound = {point.budget: point.expected_accuracy for point in summary.upper_bound.points}
    out = (row for row in summary.rows if row.handed_out_at and not row.withdrawn_at)
    handed_out = next(out, None)
    return {
        "comparison": comparison,
        "project": comparison.project,
        "summary": summary,
        "rows": [{**asdict(row), "bound": bound.get(row.budget)} for row in summary.rows],
        "chart": pictures.comparison_chart(summary),
        "handed_out": handed_out,
        "succeeded": any(row.status == RunStatus.SUCCEEDED for row in summary.rows),
        "heading": f"comparison #{comparison.pk}",
    }


@login_required
@require_GET
def comparison_detail(request: HttpRequest, comparison_id: int) -> HttpResponse:
    comparison = user_comparison(request, comparison_id)
    context = _comparison_context(comparison)
    settings = comparison.runs.order_by("pk").first()  # every run of it has the same
    return render(
        request,
        "frontend/comparison_detail.html",
        {**context, "tab": "compare", "settings": settings},
    )


@login_required
@require_GET
def comparison_status(request: HttpRequest, comparison_id: int) -> HttpResponse:
    """The live part of the comparison page: its table and its plot."""
    context = _comparison_context(user_comparison(request, comparison_id))
    return render(request, "frontend/_comparison_status.html", context)
