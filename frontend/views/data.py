"""Data files: one upload form per kind, downloads, and the sample files."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.http import require_GET

from assignment import selectors, services
from assignment.data_files import FORMATS
from assignment.downloads import file_response
from assignment.errors import DomainError, ExportError
from assignment.exporters import EXPORT_KINDS, export_data
from assignment.importers import KINDS
from assignment.models import Project
from frontend.access import user_project
from frontend.forms import UploadForm
from frontend.methods import post_action
from frontend.rates import rate_refusal
from frontend.samples import sample_text


@dataclass(frozen=True)
class KindPanel:
    """One kind of data file on the data page: what it is, what is stored, its form."""

    kind: str
    title: str
    description: str
    columns: tuple[str, ...]
    stored: int
    sample_urls: tuple[tuple[str, str], ...]  # (format, address): a sample file in each
    form: UploadForm
    error: DomainError | None
    #: What the last upload of this kind said (shown beside its form, where it was sent from).
    messages: tuple = ()


def _stored(stats, kind: str) -> int:
    if kind == "quality":
        return stats.quality_matrices
    return getattr(stats, kind)


def _panels(
    project: Project, *, failed_kind: str = "", form=None, error=None, said=None
) -> list[KindPanel]:
    stats = selectors.project_statistics(project=project)
    said = said or {}
    return [
        KindPanel(
            kind=kind,
            title=kind.replace("_", " ").capitalize(),
            description=EXPORT_KINDS[kind].description,
            columns=EXPORT_KINDS[kind].columns,
            stored=_stored(stats, kind),
            sample_urls=tuple(
                (format, reverse("frontend:data_sample", args=[project.pk, kind, format]))
                for format in FORMATS
            ),
            form=form if kind == failed_kind else UploadForm(auto_id=f"id_{kind}_%s"),
            error=error if kind == failed_kind else None,
            messages=tuple(said.get(kind, ())),
        )
        for kind in KINDS
    ]


def _render(request, project, panels, *, status: int = 200, other_messages=None) -> HttpResponse:
    if other_messages is None:
        other_messages = list(messages.get_messages(request))
    context = {
        "project": project,
        "panels": panels,
        "formats": FORMATS,
        "tab": "data",
        "other_messages": other_messages,
        # the form sent, when it has errors: the page's error summary and title say so
        "form": next((p.form for p in panels if p.form.errors), None),
        "has_error": any(p.error for p in panels),
    }
    return render(request, "frontend/data.html", context, status=status)


#: The extra tag of an upload's message: which kind's panel shows it.
_UPLOADED = "uploaded-"


@login_required
@require_GET
def data(request: HttpRequest, project_id: int) -> HttpResponse:
    project = user_project(request, project_id)
    said, other = {}, []
    for message in messages.get_messages(request):
        kind = message.extra_tags.removeprefix(_UPLOADED)
        if message.extra_tags.startswith(_UPLOADED) and kind in KINDS:
            said.setdefault(kind, []).append(message)
        else:
            other.append(message)
    return _render(request, project, _panels(project, said=said), other_messages=other)


def _upload_page(project_id: int, kind: str) -> str:
    """Where an upload form of ``kind`` is: the data page at that kind (404: no such kind)."""
    if kind not in KINDS:
        raise Http404(f"no data kind {kind!r}")
    return reverse("frontend:data", kwargs={"project_id": project_id}) + f"#kind-{kind}"


@login_required
@post_action(_upload_page)
def data_upload(request: HttpRequest, project_id: int, kind: str) -> HttpResponse:
    project = user_project(request, project_id)
    if kind not in KINDS:
        raise Http404(f"no data kind {kind!r}")
    form = UploadForm(request.POST, request.FILES, auto_id=f"id_{kind}_%s")
    refusal = rate_refusal(request, scope="uploads")
    if refusal:
        panels = _panels(project, failed_kind=kind, form=form, error=DomainError(refusal))
        return _render(request, project, panels, status=429)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            result = services.project_data_import(
                project=project,
                kind=kind,
                file=upload,
                file_name=upload.name,
                format=form.cleaned_data["format"] or None,
            )
        except DomainError as exc:
            panels = _panels(project, failed_kind=kind, form=form, error=exc)
            return _render(request, project, panels, status=400)
        messages.success(request, _imported(result), extra_tags=_UPLOADED + kind)
        return redirect(
            reverse("frontend:data", kwargs={"project_id": project.pk}) + f"#kind-{kind}"
        )
    panels = _panels(project, failed_kind=kind, form=form)
    return _render(request, project, panels, status=400)


def _imported(result) -> str:
    rows = f"{result.rows:,} row{pluralize(result.rows)}"
    if result.added is None:
        return f"{result.file}: {rows} read into a new quality matrix."
    kind = result.kind.replace("_", " ")
    return f"{result.file}: {rows} of {kind} imported ({result.new_and_existing})."


@login_required
@require_GET
def data_download(request: HttpRequest, project_id: int, kind: str, format: str) -> HttpResponse:
    project = user_project(request, project_id)
    if kind not in EXPORT_KINDS or format not in FORMATS:
        raise Http404("no such download")
    try:
        return file_response(
            write=lambda out: export_data(project=project, kind=kind, format=format, out=out),
            format=format,
            filename=f"project-{project.pk}-{kind}.{format}",
        )
    except ExportError as exc:
        messages.error(request, str(exc))
        target = "labels" if kind == "labels" else "data"
        return redirect("frontend:" + target, project_id=project.pk)


@login_required
@require_GET
def data_sample(request: HttpRequest, project_id: int, kind: str, format: str) -> HttpResponse:
    """A sample file of ``kind`` as ``format`` in the project's own labels
    (:mod:`frontend.samples`)."""
    project = user_project(request, project_id)
    if kind not in KINDS or format not in FORMATS:
        raise Http404("no such sample file")
    text = sample_text(kind, list(project.labels), format=format)
    return file_response(
        write=lambda file: file.write(text), format=format, filename=f"{kind}.{format}"
    )
