"""Labels: the Bayes vote (or Dawid–Skene's labels) of the collected answers, least or most
confident first."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from assignment import selectors
from assignment.data_files import FORMATS
from assignment.errors import ExportError
from assignment.exporters import LABEL_AGGREGATIONS
from frontend.access import user_project
from frontend.paging import page_of

LABELS_PER_PAGE = 50
#: Dawid-Skene's labels of tasks with fewer answers than this lean on the class prior it learns
#: (one answer from a worker it trusts little is outweighed by the prior): the page says so.
SPARSE_ANSWERS = 3
#: ``?order=``: least confident first (the tasks to look at), or most confident first.
ORDERS = {"confidence": False, "-confidence": True}


@login_required
@require_GET
def labels(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    order = request.GET.get("order", "confidence")
    if order not in ORDERS:
        order = "confidence"
    aggregation = request.GET.get("aggregation", "bayes")
    if aggregation not in LABEL_AGGREGATIONS:
        aggregation = "bayes"
    context = {
        "project": project,
        "order": order,
        "aggregation": aggregation,
        "kind": LABEL_AGGREGATIONS[aggregation],
        "dawid_skene_quality": aggregation == "dawid-skene"
        and selectors.labels_under_confusion(project=project),
        "extra": f"aggregation={aggregation}&order={order}",
        "formats": FORMATS,
        "tab": "labels",
    }
    try:
        rows = selectors.project_labels_by_confidence(
            project=project, aggregation=aggregation, most_confident_first=ORDERS[order]
        )
    except ExportError as exc:
        context["problem"] = str(exc)
    else:
        context["page"] = page_of(rows, LABELS_PER_PAGE, request.GET.get("page"))
        context["total"] = len(rows)
        if aggregation == "dawid-skene":
            context["sparse"] = sum(row.n_answers < SPARSE_ANSWERS for row in rows)
            context["sparse_answers"] = SPARSE_ANSWERS
    return render(request, "frontend/labels.html", context)
