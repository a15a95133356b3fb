"""Labels: the Bayes vote of the collected answers, least or most confident first."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from assignment import selectors
from assignment.data_files import FORMATS
from assignment.errors import ExportError
from frontend.access import user_project

LABELS_PER_PAGE = 50
#: ``?order=``: least confident first (the tasks to look at), or most confident first.
ORDERS = {"confidence": False, "-confidence": True}


@login_required
@require_GET
def labels(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    order = request.GET.get("order", "confidence")
    if order not in ORDERS:
        order = "confidence"
    context = {"project": project, "order": order, "formats": FORMATS, "tab": "labels"}
    try:
        rows = selectors.project_labels(project=project)
    except ExportError as exc:
        context["problem"] = str(exc)
    else:
        rows.sort(key=lambda row: (row.posterior, row.task_id), reverse=ORDERS[order])
        context["page"] = Paginator(rows, LABELS_PER_PAGE).get_page(request.GET.get("page"))
        context["total"] = len(rows)
    return render(request, "frontend/labels.html", context)
