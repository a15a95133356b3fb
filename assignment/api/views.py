"""API views: validate with a serializer, call a service or a selector, serialise the result.

Every object is looked up through the caller's own projects (``selectors.*_for_user``), so
another user's project, run or comparison is a 404, as is one that does not exist.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework import status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import NotAuthenticated, NotFound, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from assignment import selectors, services
from assignment.api import health
from assignment.api.pagination import BoundedLimitOffsetPagination
from assignment.api.parsers import JSONParser
from assignment.api.serializers import (
    ComparisonCreateSerializer,
    ComparisonSerializer,
    DownloadSerializer,
    ErrorSerializer,
    HealthSerializer,
    ImportErrorSerializer,
    ImportResultSerializer,
    LabelsDownloadSerializer,
    ProjectCreateSerializer,
    ProjectSerializer,
    ProjectUpdateSerializer,
    QualityEstimateSerializer,
    QualityMatrixSummarySerializer,
    RoundPreviewQuerySerializer,
    RoundPreviewSerializer,
    RunCreateSerializer,
    RunFilterSerializer,
    RunSerializer,
    SignInSerializer,
    TokenSerializer,
    UploadSerializer,
)
from assignment.downloads import file_response
from assignment.exporters import EXPORT_KINDS, LABEL_AGGREGATIONS, export_data, write_pairs
from assignment.importers import KINDS
from assignment.models import MAX_ID, AssignmentRun, Comparison, Project
from assignment.sign_in import client_address, lockout_message, sign_in_locked

_NOT_FOUND = OpenApiResponse(ErrorSerializer, description="Not found, or not yours.")
_INVALID = OpenApiResponse(ErrorSerializer, description="Invalid request; `detail` says why.")
_CONFLICT = OpenApiResponse(ErrorSerializer, description="The run's status does not allow it.")
_TOO_MANY_RUNS = OpenApiResponse(
    ErrorSerializer, description="You have as many runs queued or running as one user may."
)

_FORMAT_PARAMETER = OpenApiParameter(
    "format",
    str,
    OpenApiParameter.QUERY,
    enum=["csv", "json"],
    default="csv",
    description="CSV (UTF-8, CRLF, formula-like cells quoted) or a JSON list of objects.",
)


def _download_responses(description: str) -> dict:
    return {
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description=description),
        (200, "application/json"): OpenApiResponse(
            {"type": "array", "items": {"type": "object"}}, description=description
        ),
        (400, "application/json"): _INVALID,
        (404, "application/json"): _NOT_FOUND,
    }


class _AnyAccept(DefaultContentNegotiation):
    """Downloads are CSV or JSON by ``?format=``, whatever the Accept header asks for;
    errors are JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def _paginated(view: APIView, queryset, serializer_class) -> Response:
    paginator = view.pagination_class()
    page = paginator.paginate_queryset(queryset, view.request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


def _yours(queryset, pk: int, what: str):
    """The row ``pk`` of ``queryset`` (the user's own), else a 404 in the user's words: another
    user's row is not found either, and says nothing of whether it exists."""
    try:
        key = int(pk)
    except (TypeError, ValueError):
        key = 0
    row = queryset.filter(pk=key).first() if 0 < key <= MAX_ID else None
    if row is None:
        raise NotFound(f"You have no {what} {pk}.")
    return row


def _project(request, project_id: int) -> Project:
    return _yours(selectors.project_list_for_user(user=request.user), project_id, "project")


def _run(request, run_id: int) -> AssignmentRun:
    return _yours(selectors.run_list_for_user(user=request.user), run_id, "run")


def _run_status(request, run_id: int) -> AssignmentRun:
    """The run with only what :class:`RunSerializer` shows (the poll: one row of one table)."""
    run = selectors.run_status_for_user(user=request.user, run_id=run_id)
    if run is None:
        raise NotFound(f"You have no run {run_id}.")
    return run


def _comparison(request, comparison_id: int) -> Comparison:
    return _yours(
        selectors.comparison_list_for_user(user=request.user), comparison_id, "comparison"
    )


# --------------------------------------------------------------------------------------------
# Token and health


@extend_schema_view(
    post=extend_schema(
        summary="Get your API token",
        description="Send the token as `Authorization: Token <key>` with every other request.",
        auth=[],
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(
                ErrorSerializer, description="Wrong username or password, or locked."
            ),
            429: OpenApiResponse(ErrorSerializer, description="Too many requests; retry later."),
        },
    )
)
class TokenView(ObtainAuthToken):
    """POST username and password, get the token to send as ``Authorization: Token <key>``
    (a new one when the user's has expired)."""

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "token"
    serializer_class = SignInSerializer
    # ObtainAuthToken's parsers, with the API's JSON parser (a body nested too deeply is a 400).
    parser_classes = [FormParser, MultiPartParser, JSONParser]

    def post(self, request, *args, **kwargs):
        # A locked account or address says so, as the sign-in page does, instead of the
        # "unable to log in" a refused password gets (and the attempt is not counted).
        username = request.data.get("username") if isinstance(request.data, Mapping) else None
        if not isinstance(username, str):  # the serializer below says what is wrong with it
            username = None
        if sign_in_locked(username=username, address=client_address(request)):
            return Response({"detail": lockout_message()}, status=status.HTTP_400_BAD_REQUEST)
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        return Response({"token": services.api_token_for_sign_in(user=user)})


class HealthView(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="health",
        summary="Health of the database and the Celery broker",
        responses={
            200: HealthSerializer,
            503: OpenApiResponse(HealthSerializer, description="Something failed."),
        },
        auth=[],
    )
    def get(self, request):
        working = {
            "database": health.database_ok(),
            "broker": health.broker_ok(),
            "cache": health.cache_ok(),
        }
        body = {name: "ok" if ok else "failing" for name, ok in working.items()}
        return Response(
            body,
            status=status.HTTP_200_OK
            if all(working.values())
            else status.HTTP_503_SERVICE_UNAVAILABLE,
        )


# --------------------------------------------------------------------------------------------
# Projects


class ProjectListView(APIView):
    pagination_class = BoundedLimitOffsetPagination

    @extend_schema(
        summary="Your projects",
        responses={200: ProjectSerializer(many=True), 400: _INVALID},
    )
    def get(self, request):
        return _paginated(
            self, selectors.project_list_for_user(user=request.user), ProjectSerializer
        )

    @extend_schema(
        summary="Create a project",
        request=ProjectCreateSerializer,
        responses={201: ProjectSerializer, 400: _INVALID},
    )
    def post(self, request):
        serializer = ProjectCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        project = services.project_create(owner=request.user, **serializer.validated_data)
        project = _project(request, project.pk)
        return Response(ProjectSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailView(APIView):
    @extend_schema(summary="A project", responses={200: ProjectSerializer, 404: _NOT_FOUND})
    def get(self, request, project_id: int):
        return Response(ProjectSerializer(_project(request, project_id)).data)

    @extend_schema(
        summary="Rename a project or change its defaults",
        request=ProjectUpdateSerializer,
        responses={200: ProjectSerializer, 400: _INVALID, 404: _NOT_FOUND},
    )
    def patch(self, request, project_id: int):
        project = _project(request, project_id)
        serializer = ProjectUpdateSerializer(
            data=request.data,
            partial=True,
            context={"current": ProjectSerializer(project).data},
        )
        serializer.is_valid(raise_exception=True)
        if serializer.validated_data:
            services.project_update(project=project, **serializer.validated_data)
        return Response(ProjectSerializer(_project(request, project_id)).data)

    @extend_schema(
        summary="Delete a project and everything in it",
        responses={204: None, 404: _NOT_FOUND},
    )
    def delete(self, request, project_id: int):
        services.project_delete(project=_project(request, project_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --------------------------------------------------------------------------------------------
# Data files


_KIND_PARAMETERS = [
    OpenApiParameter("project_id", int, OpenApiParameter.PATH),
    OpenApiParameter(
        "kind", str, OpenApiParameter.PATH, enum=list(KINDS), description="The kind of data file."
    ),
]


class ProjectDataView(APIView):
    """Upload (POST) or download (GET) one kind of a project's data."""

    throttle_scope = "uploads"
    content_negotiation_class = _AnyAccept

    def get_throttles(self):
        return [ScopedRateThrottle()] if self.request.method == "POST" else []

    def get_parsers(self):
        return [MultiPartParser()]

    @extend_schema(
        summary="Upload a data file",
        description=(
            "All of it or nothing: the first problem is a 400 naming the file, the line and "
            "the column, and nothing is written. Re-uploading the same file changes nothing."
        ),
        parameters=_KIND_PARAMETERS,
        request={"multipart/form-data": UploadSerializer},
        responses={
            201: ImportResultSerializer,
            400: OpenApiResponse(ImportErrorSerializer, description="The file was rejected."),
            404: _NOT_FOUND,
            429: OpenApiResponse(ErrorSerializer, description="Too many uploads; retry later."),
        },
    )
    def post(self, request, project_id: int, kind: str):
        project = _project(request, project_id)
        serializer = UploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        result = services.project_data_import(
            project=project,
            kind=kind,
            file=upload,
            file_name=upload.name,
            format=serializer.validated_data.get("format"),
        )
        return Response(ImportResultSerializer(result).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Download a project's data",
        parameters=[*_KIND_PARAMETERS, _FORMAT_PARAMETER],
        responses=_download_responses("The rows, in the upload format of the kind."),
    )
    def get(self, request, project_id: int, kind: str):
        return _export(request, project_id, kind)


def _export(request, project_id: int, kind: str, serializer_class=DownloadSerializer):
    project = _project(request, project_id)
    serializer = serializer_class(data=request.query_params.dict())
    serializer.is_valid(raise_exception=True)
    format = serializer.validated_data["format"]
    if "aggregation" in serializer.validated_data:
        kind = LABEL_AGGREGATIONS[serializer.validated_data["aggregation"]]
    return file_response(
        write=lambda out: export_data(project=project, kind=kind, format=format, out=out),
        format=format,
        filename=f"project-{project.pk}-{kind}.{format}",
    )


class ProjectLabelsView(APIView):
    content_negotiation_class = _AnyAccept

    @extend_schema(
        summary="Labels aggregated from the collected answers",
        description="task_id, label, posterior, n_answers for every task with answers: "
        + "; or ".join(
            f"{EXPORT_KINDS[kind].description} (aggregation={name})"
            for name, kind in LABEL_AGGREGATIONS.items()
        )
        + ".",
        parameters=[LabelsDownloadSerializer],
        responses=_download_responses("One row per task with answers."),
    )
    def get(self, request, project_id: int):
        return _export(request, project_id, "labels", LabelsDownloadSerializer)


# --------------------------------------------------------------------------------------------
# Quality


class QualityView(APIView):
    @extend_schema(
        summary="The latest quality matrix",
        responses={
            200: QualityMatrixSummarySerializer,
            404: OpenApiResponse(ErrorSerializer, description="No project, or no matrix yet."),
        },
    )
    def get(self, request, project_id: int):
        matrix = selectors.quality_matrix_latest(project=_project(request, project_id))
        if matrix is None:
            return Response(
                {"detail": "this project has no quality matrix yet"},
                status=status.HTTP_404_NOT_FOUND,
            )
        summary = selectors.quality_matrix_statistics(matrix=matrix)
        return Response(QualityMatrixSummarySerializer(summary).data)


class QualityEstimateView(APIView):
    @extend_schema(
        summary="Estimate the quality matrix from gold answers, collected answers, or both",
        description="source gold counts the gold answers; answers and both fit worker quality "
        "to the collected answers by EM (model one-coin or dawid-skene), both with the gold "
        "items as known truths. An EM that did not converge is stored all the same, "
        "details.converged false. 400 when the source has no data.",
        request=QualityEstimateSerializer,
        responses={201: QualityMatrixSummarySerializer, 400: _INVALID, 404: _NOT_FOUND},
    )
    def post(self, request, project_id: int):
        project = _project(request, project_id)
        serializer = QualityEstimateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        matrix = services.quality_estimate(project=project, **serializer.validated_data)
        summary = selectors.quality_matrix_statistics(matrix=matrix)
        return Response(
            QualityMatrixSummarySerializer(summary).data, status=status.HTTP_201_CREATED
        )


# --------------------------------------------------------------------------------------------
# Runs


class ProjectRunsView(APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "runs"

    @extend_schema(
        summary="Queue an assignment run",
        description="The run is computed by a worker; poll GET /api/runs/{id}/.",
        request=RunCreateSerializer,
        responses={202: RunSerializer, 400: _INVALID, 404: _NOT_FOUND, 429: _TOO_MANY_RUNS},
    )
    def post(self, request, project_id: int):
        project = _project(request, project_id)
        serializer = RunCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = services.run_create(project=project, **serializer.validated_data)
        return Response(RunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class ProjectRoundPreviewView(APIView):
    @extend_schema(
        summary="The next round's expected gain, before it starts",
        description="The round POST /api/projects/{id}/runs/ with round true would queue under "
        "the project's defaults (and the given budget and target_posterior), planned by "
        "greedy: gain is the expected accuracy of the final labels after it less the expected "
        "accuracy now; tvcs-iht, which starts from greedy's plan, is at least as good. Cached "
        "until the answers, the quality, the workers, the tasks or the defaults change. Never "
        "an error for the project's state: status says why there is no gain.",
        parameters=[RoundPreviewQuerySerializer],
        responses={200: RoundPreviewSerializer, 400: _INVALID, 404: _NOT_FOUND},
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id)
        query = RoundPreviewQuerySerializer(
            data=request.query_params.dict(), context={"project": project}
        )
        query.is_valid(raise_exception=True)
        preview = services.round_preview(project=project, **query.validated_data)
        return Response(RoundPreviewSerializer(preview).data)


class RunListView(APIView):
    pagination_class = BoundedLimitOffsetPagination

    @extend_schema(
        summary="Your runs, newest first",
        parameters=[RunFilterSerializer],
        responses={200: RunSerializer(many=True), 400: _INVALID},
    )
    def get(self, request):
        filters = RunFilterSerializer(data=request.query_params.dict())
        filters.is_valid(raise_exception=True)
        runs = selectors.run_status_list_for_user(
            user=request.user,
            project_id=filters.validated_data.get("project"),
            status=filters.validated_data.get("status"),
        )
        return _paginated(self, runs, RunSerializer)


def _refuse_body(request) -> None:
    """A 400 naming the fields of a body sent to an action that takes none (a client that
    sends ``{"force": true}`` to cancel must not believe it was read)."""
    if not request.data:
        return
    if isinstance(request.data, Mapping):
        unknown = "Unknown field; this request takes no body."
        raise ValidationError({name: [unknown] for name in sorted(request.data)})
    raise ValidationError("This request takes no body.")


class RunDetailView(APIView):
    @extend_schema(
        summary="A run: status, progress, timings and result",
        responses={200: RunSerializer, 404: _NOT_FOUND},
    )
    def get(self, request, run_id: int):
        return Response(RunSerializer(_run_status(request, run_id)).data)


class RunCancelView(APIView):
    @extend_schema(
        summary="Cancel a queued or running run",
        request=None,
        responses={200: RunSerializer, 404: _NOT_FOUND, 409: _CONFLICT},
    )
    def post(self, request, run_id: int):
        _refuse_body(request)
        run = services.run_cancel(run=_run(request, run_id))
        return Response(RunSerializer(run).data)


class RunWithdrawView(APIView):
    @extend_schema(
        summary="Withdraw a succeeded round that was not handed out",
        description="Later rounds stop counting its unanswered pairs as pending (budget, caps, "
        "never assigned again) and may assign them; answers that came in for its pairs still "
        "count. Final. 409 if the run is neither a round started on its own nor a comparison's "
        "run handed out, has not succeeded, or was withdrawn already.",
        request=None,
        responses={200: RunSerializer, 404: _NOT_FOUND, 409: _CONFLICT},
    )
    def post(self, request, run_id: int):
        _refuse_body(request)
        run = services.run_withdraw(run=_run(request, run_id))
        return Response(RunSerializer(run).data)


class RunHandOutView(APIView):
    @extend_schema(
        summary="Hand out a comparison's succeeded run to the workers",
        description="From then on it counts like a round started on its own: its unanswered "
        "pairs are pending (budget, caps, never assigned again) and it can be withdrawn. The "
        "run shows handed_out_at. 409 if it is not a comparison's run, has not succeeded, was "
        "handed out or withdrawn already, another run of its comparison is out, a round is "
        "queued or running, the rounds the project counts changed since the comparison was "
        "computed, or its pairs no longer fit the project (answered or pending pairs, caps, "
        "budget); the detail says which.",
        request=None,
        responses={200: RunSerializer, 404: _NOT_FOUND, 409: _CONFLICT},
    )
    def post(self, request, run_id: int):
        _refuse_body(request)
        run = services.run_hand_out(run=_run(request, run_id))
        return Response(RunSerializer(run).data)


class RunAssignmentView(APIView):
    content_negotiation_class = _AnyAccept

    @extend_schema(
        summary="Download a succeeded run's assignment",
        description="One row per assigned pair: worker_id, task_id (the project's ids).",
        parameters=[_FORMAT_PARAMETER],
        responses={
            **_download_responses("The assigned (worker_id, task_id) pairs."),
            (409, "application/json"): _CONFLICT,
        },
    )
    def get(self, request, run_id: int):
        run = _run(request, run_id)
        serializer = DownloadSerializer(data=request.query_params.dict())
        serializer.is_valid(raise_exception=True)
        format = serializer.validated_data["format"]
        rows = selectors.run_assignment_rows(run=run)
        return file_response(
            write=lambda out: write_pairs(rows, format, out),
            format=format,
            filename=f"run-{run.pk}-assignment.{format}",
        )


# --------------------------------------------------------------------------------------------
# Comparisons


class ProjectComparisonsView(APIView):
    pagination_class = BoundedLimitOffsetPagination
    throttle_scope = "runs"

    def get_throttles(self):
        return [ScopedRateThrottle()] if self.request.method == "POST" else []

    @extend_schema(
        summary="The project's comparisons, newest first",
        responses={200: ComparisonSerializer(many=True), 400: _INVALID, 404: _NOT_FOUND},
    )
    def get(self, request, project_id: int):
        project = _project(request, project_id)
        comparisons = selectors.comparison_list_for_user(user=request.user, project_id=project.pk)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(comparisons, request, view=self)
        summaries = [selectors.comparison_summary(comparison=c) for c in page]
        return paginator.get_paginated_response(ComparisonSerializer(summaries, many=True).data)

    @extend_schema(
        summary="Compare methods: one run per method and budget, computed in parallel",
        request=ComparisonCreateSerializer,
        responses={
            202: ComparisonSerializer,
            400: _INVALID,
            404: _NOT_FOUND,
            429: _TOO_MANY_RUNS,
        },
    )
    def post(self, request, project_id: int):
        project = _project(request, project_id)
        serializer = ComparisonCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        comparison = services.comparison_create(project=project, **serializer.validated_data)
        summary = selectors.comparison_summary(comparison=comparison)
        return Response(ComparisonSerializer(summary).data, status=status.HTTP_202_ACCEPTED)


class ComparisonDetailView(APIView):
    @extend_schema(
        summary="A comparison: a row per run and an accuracy-against-budget curve per method",
        responses={200: ComparisonSerializer, 404: _NOT_FOUND},
    )
    def get(self, request, comparison_id: int):
        summary = selectors.comparison_summary(comparison=_comparison(request, comparison_id))
        return Response(ComparisonSerializer(summary).data)


class _JsonErrors:
    """Errors as JSON, as everywhere under ``/api/``, whatever the view's own renderer (the
    docs page's HTML, the schema's YAML)."""

    def handle_exception(self, exc):
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response


class SchemaView(_JsonErrors, SpectacularAPIView):
    """The OpenAPI schema: YAML, or JSON for ``Accept: application/json``."""


class DocsView(_JsonErrors, SpectacularSwaggerView):
    """The API docs page. A browser that is not signed in is sent to the sign-in page and back
    here, instead of a bare 401 (a client that does not ask for HTML gets the 401 as JSON)."""

    def handle_exception(self, exc):
        browser = "text/html" in self.request.headers.get("Accept", "")
        if isinstance(exc, NotAuthenticated) and browser:
            return redirect_to_login(self.request.get_full_path())
        return super().handle_exception(exc)
