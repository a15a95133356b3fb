"""Runs: the list, the form that starts one, its live page, cancel, withdraw, hand out and
downloads."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from assignment import pictures, selectors, services
from assignment.data_files import FORMATS
from assignment.downloads import file_response
from assignment.engine import METHODS, method_spec
from assignment.errors import DomainError, RunStateError
from assignment.exporters import write_pairs
from assignment.models import RunStatus
from frontend.access import user_project, user_run
from frontend.forms import RunForm
from frontend.methods import post_action
from frontend.paging import page_of
from frontend.rates import rate_refusal

RUNS_PER_PAGE = 25


@login_required
@require_GET
def run_list(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    runs = selectors.run_list_for_user(user=request.user, project_id=project.pk)
    page = page_of(runs, RUNS_PER_PAGE, request.GET.get("page"))
    return render(
        request, "frontend/run_list.html", {"project": project, "page": page, "tab": "runs"}
    )


@login_required
@require_http_methods(["GET", "POST"])
def run_create(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    form = RunForm(
        request.POST or None,
        initial={"next_round": "round" in request.GET},
        n_labels=len(project.labels),
    )
    refusal = request.method == "POST" and rate_refusal(request, scope="runs")
    if refusal:
        form.add_error(None, refusal)
    elif request.method == "POST" and form.is_valid():
        try:
            run = services.run_create(project=project, **form.run_arguments())
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("frontend:run", run_id=run.pk)
    methods = [(method_spec(m), form.option_fields(m)) for m in METHODS]
    readiness = selectors.run_readiness(project=project)
    return render(
        request,
        "frontend/run_form.html",
        {
            "project": project,
            "form": form,
            "methods": methods,
            "tab": "runs",
            "readiness": readiness,
            "overview": selectors.round_overview(project=project, readiness=readiness),
        },
        status=429 if refusal else 400 if form.errors else 200,
    )


def _run_context(run) -> dict:
    context = {
        "run": run,
        "project": run.project,
        "finished": run.status != RunStatus.RUNNING and run.status != RunStatus.QUEUED,
        "formats": FORMATS,
    }
    if run.status == RunStatus.SUCCEEDED:
        context["charts"] = pictures.run_charts(run.summary)
        if run.next_round:
            context["gain"] = run.expected_accuracy - run.round_start["accuracy_now"]
        # A round counts once handed out: one started on its own, or a comparison's run.
        context["counts"] = (run.next_round and not run.comparison_id) or bool(run.handed_out_at)
        if run.comparison_id and not run.handed_out_at:
            context["other_out"] = selectors.comparison_run_handed_out(
                comparison_id=run.comparison_id
            )
            if not context["other_out"] and not run.withdrawn_at:
                # the button only where the service would hand it out, else why not
                context["hand_out_refusal"] = services.run_hand_out_refusal(run=run)
    return context


@login_required
@require_GET
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = user_run(request, run_id)
    context = {
        **_run_context(run),
        "tab": "runs",
        "heading": f"run #{run.pk}",
        "options": sorted(run.options.items()),
    }
    return render(request, "frontend/run_detail.html", context)


@login_required
@require_GET
def run_status(request: HttpRequest, run_id: int) -> HttpResponse:
    """The live part of the run page, polled while the run is queued or running."""
    return render(request, "frontend/_run_status.html", _run_context(user_run(request, run_id)))


def _run_page(run_id: int) -> str:
    """Where a run's buttons (cancel, withdraw, hand out) are."""
    return reverse("frontend:run", kwargs={"run_id": run_id})


@login_required
@post_action(_run_page)
def run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    run = user_run(request, run_id)
    try:
        services.run_cancel(run=run)
    except RunStateError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Run #{run.pk} cancelled.")
    return redirect("frontend:run", run_id=run.pk)


@login_required
@post_action(_run_page)
def run_withdraw(request: HttpRequest, run_id: int) -> HttpResponse:
    run = user_run(request, run_id)
    try:
        services.run_withdraw(run=run)
    except RunStateError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"{'Run' if run.comparison_id else 'Round'} #{run.pk} withdrawn: later rounds no "
            "longer count its unanswered pairs as pending and may assign them.",
        )
    return redirect("frontend:run", run_id=run.pk)


@login_required
@post_action(_run_page)
def run_hand_out(request: HttpRequest, run_id: int) -> HttpResponse:
    run = user_run(request, run_id)
    try:
        services.run_hand_out(run=run)
    except RunStateError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Run #{run.pk} handed out: the project counts it as a round from now on, its "
            "unanswered pairs as pending (budget, caps, never assigned again).",
        )
    return redirect("frontend:run", run_id=run.pk)


@login_required
@require_GET
def run_download(request: HttpRequest, run_id: int, format: str) -> HttpResponse:
    run = user_run(request, run_id)
    if format not in FORMATS:
        raise Http404("no such format")
    try:
        rows = selectors.run_assignment_rows(run=run)
    except RunStateError as exc:
        messages.error(request, str(exc))
        return redirect("frontend:run", run_id=run.pk)
    return file_response(
        write=lambda out: write_pairs(rows, format, out),
        format=format,
        filename=f"run-{run.pk}-assignment.{format}",
    )
