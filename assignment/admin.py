"""The Django admin: every model, for staff. Numbers come from ``assignment.selectors``.

Worker, task, gold-answer and answer tables can hold millions of rows, so their pages use raw id
widgets for foreign keys (never a dropdown of every worker or task), filter by project only
(never by worker or task), skip the unfiltered count on filtered pages, and search ids exactly
where a substring search would scan the table. Arrays stored as ``.npy`` blobs are never loaded
for a list and never rendered.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.db.models import Count, Q
from django.template.loader import render_to_string
from django.utils.html import format_html

from assignment.errors import DomainError
from assignment.models import (
    Answer,
    AssignmentRun,
    Comparison,
    GoldAnswer,
    GoldItem,
    Project,
    QualityMatrix,
    RunStatus,
    Task,
    Worker,
)
from assignment.pictures import comparison_chart
from assignment.selectors import (
    ComparisonSummary,
    comparison_summary,
    gold_answer_list,
    project_list_with_counts,
    project_statistics,
    quality_matrix_list,
    quality_matrix_statistics,
    run_list,
    runs_handed_out,
    workers_by_gold_answers,
)
from assignment.services import PROJECT_UPDATABLE_FIELDS, project_update, project_update_check
from assignment.sign_in import LockoutFormMixin

_BIG_TABLE_PAGE = 100


class AdminSignInForm(LockoutFormMixin, AdminAuthenticationForm):
    """The admin's sign-in form, locked like every other sign-in (assignment.sign_in)."""


admin.site.login_form = AdminSignInForm
_ENDED = [RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by the services (arrays, lifecycles) or by the importers, which check
    every line against the project (its labels, workers and tasks): viewable and deletable."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ImportedRowAdmin(admin.ModelAdmin):
    """Workers and tasks: entered by the importers; their own caps, prior and activity may be
    changed here (the model's checks hold them), never their project, id or category."""

    fixed_fields: tuple[str, ...] = ("project", "external_id")

    def has_add_permission(self, request):
        return False

    def get_readonly_fields(self, request, obj=None):
        return self.fixed_fields


class ProjectAdminForm(forms.ModelForm):
    """A change of a project's defaults, checked by the service the site and the API call."""

    def clean(self):
        cleaned = super().clean()
        changed = {name: cleaned[name] for name in self.changed_data if name in cleaned}
        try:
            project_update_check(project=self.instance, **changed)
        except DomainError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return cleaned


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "owner",
        "worker_count",
        "task_count",
        "gold_item_count",
        "created_at",
        "page",
    ]
    list_filter = ["owner", "created_at"]
    search_fields = ["name", "owner__username"]
    form = ProjectAdminForm
    #: Projects are created on the site or over the API, whose service checks their labels; a
    #: project's owner and labels are fixed (every prior, answer and gold label reads them).
    readonly_fields = ["owner", "labels", "created_at", "updated_at"]
    list_per_page = 50

    def has_add_permission(self, request):
        return False

    def get_fields(self, request, obj=None):
        return ["owner", "labels", *PROJECT_UPDATABLE_FIELDS, "created_at", "updated_at"]

    def save_model(self, request, obj, form, change):
        """Through :func:`~assignment.services.project_update`, as the site and the API."""
        changed = {name: form.cleaned_data[name] for name in form.changed_data}
        project_update(project=type(obj).objects.get(pk=obj.pk), **changed)

    def get_queryset(self, request):
        return project_list_with_counts(queryset=super().get_queryset(request))

    @admin.display(description="workers", ordering="worker_count")
    def worker_count(self, project):
        return project.worker_count

    @admin.display(description="tasks", ordering="task_count")
    def task_count(self, project):
        return project.task_count

    @admin.display(description="gold items", ordering="gold_item_count")
    def gold_item_count(self, project):
        return project.gold_item_count

    @admin.display(description="page")
    def page(self, project):
        """A link to the project's page on the site (the frontend), as its owner sees it."""
        return format_html('<a href="{}">Open the project\'s page</a>', project.get_absolute_url())

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["project_statistics"] = project_statistics(project=obj)
            context["project_page_url"] = obj.get_absolute_url()
        return super().render_change_form(request, context, add, change, form_url, obj)


class GoldAnswersFilter(admin.SimpleListFilter):
    title = "gold answers"
    parameter_name = "gold"

    def lookups(self, request, model_admin):
        return [("yes", "has gold answers"), ("no", "no gold answers")]

    def queryset(self, request, queryset):
        if self.value() in {"yes", "no"}:
            return workers_by_gold_answers(queryset=queryset, with_gold=self.value() == "yes")
        return queryset


@admin.register(Worker)
class WorkerAdmin(ImportedRowAdmin):
    list_display = ["external_id", "project", "name", "max_tasks", "active"]
    list_filter = ["project", "active", GoldAnswersFilter]
    search_fields = ["external_id", "name"]
    list_select_related = ["project"]
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False


@admin.register(Task)
class TaskAdmin(ImportedRowAdmin):
    list_display = ["external_id", "project", "category", "max_workers", "prior"]
    list_filter = ["project", "category"]
    search_fields = ["external_id", "category"]
    list_select_related = ["project"]
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False
    # A task's category picks its quality in a matrix stored by category; its prior over
    # K > 2 labels is checked by the importer only.
    fixed_fields = ("project", "external_id", "category", "label_prior")


@admin.register(GoldItem)
class GoldItemAdmin(ReadOnlyAdmin):
    list_display = ["external_id", "project", "category", "true_label"]
    list_filter = ["project", "category"]
    search_fields = ["external_id", "category"]
    list_select_related = ["project"]
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False


class CorrectFilter(admin.SimpleListFilter):
    title = "correct"
    parameter_name = "correct"

    def lookups(self, request, model_admin):
        return [("yes", "correct"), ("no", "wrong")]

    def queryset(self, request, queryset):
        if self.value() in {"yes", "no"}:
            return queryset.filter(is_correct=self.value() == "yes")
        return queryset


@admin.register(GoldAnswer)
class GoldAnswerAdmin(ReadOnlyAdmin):
    list_display = ["worker", "item", "answer", "is_correct"]
    list_filter = ["item__project", CorrectFilter]
    search_fields = ["=worker__external_id", "=item__external_id"]
    search_help_text = "Exact worker or gold item id."
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False

    def get_queryset(self, request):
        return gold_answer_list(queryset=super().get_queryset(request))

    @admin.display(description="correct?", boolean=True, ordering="is_correct")
    def is_correct(self, gold_answer):
        return gold_answer.is_correct


@admin.register(Answer)
class AnswerAdmin(ReadOnlyAdmin):
    list_display = ["worker", "task", "label", "created_at"]
    list_filter = ["task__project", "created_at"]
    search_fields = ["=worker__external_id", "=task__external_id"]
    search_help_text = "Exact worker or task id."
    list_select_related = ["worker", "task"]
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False


@admin.register(QualityMatrix)
class QualityMatrixAdmin(ReadOnlyAdmin):
    list_display = [
        "__str__",
        "project",
        "source",
        "n_workers",
        "n_tasks",
        "by_category",
        "created_at",
    ]
    list_filter = ["project", "source", "by_category", "created_at"]
    search_fields = ["project__name"]
    fields = [
        "project",
        "source",
        "n_workers",
        "n_tasks",
        "by_category",
        "created_at",
        "statistics",
        "details",
    ]
    readonly_fields = fields

    def get_queryset(self, request):
        return quality_matrix_list(queryset=super().get_queryset(request))

    @admin.display(description="statistics")
    def statistics(self, matrix):
        return render_to_string(
            "admin/assignment/quality_matrix_statistics.html",
            {"statistics": quality_matrix_statistics(matrix=matrix)},
        )


def _handed_out_refusals(runs) -> list[str]:
    """Why the runs of ``runs`` (a queryset) that their project counts as handed out may not be
    deleted: their workers have the pairs, which a next round would assign again."""
    return [
        f"{run}: handed out to the workers (a round); withdraw it on its page first"
        for run in runs_handed_out(queryset=runs)
    ]


class _KeepsRoundsAdmin(ReadOnlyAdmin):
    """Refuses to delete, one by one or in bulk, what holds runs handed out to the workers:
    the confirmation page lists them as protected, as Django lists protected objects."""

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, perms_needed, [*protected, *self.rounds_in(objs)]

    def rounds_in(self, objs) -> list[str]:
        raise NotImplementedError


def _comparison_summary(comparison: Comparison) -> ComparisonSummary:
    """The comparison's summary, read once per page although two fields show it."""
    summary = getattr(comparison, "_admin_summary", None)
    if summary is None:
        summary = comparison._admin_summary = comparison_summary(comparison=comparison)
    return summary


def _bound_by_budget(summary: ComparisonSummary) -> dict[int, float]:
    return {point.budget: point.expected_accuracy for point in summary.upper_bound.points}


@admin.register(Comparison)
class ComparisonAdmin(_KeepsRoundsAdmin):
    list_display = [
        "__str__",
        "project",
        "methods",
        "budgets",
        "run_count",
        "finished",
        "created_at",
    ]
    list_filter = ["project", "created_at"]
    search_fields = ["project__name"]
    list_select_related = ["project"]
    fields = ["project", "methods", "budgets", "created_at", "results", "curve"]
    readonly_fields = fields

    class Media:
        css = {"all": ["charts/charts.css"]}

    def rounds_in(self, objs) -> list[str]:
        pks = [comparison.pk for comparison in objs]
        return _handed_out_refusals(AssignmentRun.objects.filter(comparison__in=pks))

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                run_count=Count("runs"),
                unfinished_run_count=Count("runs", filter=~Q(runs__status__in=_ENDED)),
            )
        )

    @admin.display(description="runs", ordering="run_count")
    def run_count(self, comparison):
        return comparison.run_count

    @admin.display(description="finished?", boolean=True)
    def finished(self, comparison):
        """True when every run has ended (succeeded, failed or cancelled)."""
        return comparison.unfinished_run_count == 0

    @admin.display(description="results")
    def results(self, comparison):
        summary = _comparison_summary(comparison)
        bounds = _bound_by_budget(summary)
        return render_to_string(
            "admin/assignment/comparison/results.html",
            {
                "summary": summary,
                "rows": [
                    {"run": row, "upper_bound": bounds.get(row.budget)} for row in summary.rows
                ],
            },
        )

    @admin.display(description="curve")
    def curve(self, comparison):
        """Expected accuracy against budget, a line per method, the upper bound dashed: the
        project manager's comparison page's plot."""
        summary = _comparison_summary(comparison)
        chart = None
        if summary.upper_bound.points or any(summary.curves.values()):
            chart = comparison_chart(summary).wide
        return render_to_string(
            "admin/assignment/comparison/curve.html",
            {"chart": chart, "upper_bound": summary.upper_bound, "finished": summary.finished},
        )


@admin.register(AssignmentRun)
class AssignmentRunAdmin(_KeepsRoundsAdmin):
    list_display = [
        "__str__",
        "project",
        "method",
        "status",
        "budget",
        "n_assigned",
        "expected_accuracy",
        "created_at",
    ]
    list_filter = ["project", "status", "method", "created_at"]
    search_fields = ["project__name"]
    fieldsets = [
        (
            "Request",
            {
                "fields": [
                    "project",
                    "comparison",
                    "quality_matrix",
                    "method",
                    "budget",
                    "max_workers_per_task",
                    "max_tasks_per_worker",
                    "seed",
                    "options",
                    "shards",
                ]
            },
        ),
        (
            "Round",
            {
                "fields": [
                    "next_round",
                    "rounds_left",
                    "target_posterior",
                    "target_accuracy",
                    "round_start",
                    "handed_out_at",
                    "withdrawn_at",
                ]
            },
        ),
        (
            "Lifecycle",
            {
                "fields": [
                    "status",
                    "progress",
                    "progress_message",
                    "attempts",
                    "created_at",
                    "started_at",
                    "heartbeat_at",
                    "finished_at",
                    "seconds",
                ]
            },
        ),
        (
            "Result",
            {"fields": ["expected_accuracy", "accuracy_standard_error", "n_assigned", "error"]},
        ),
    ]

    def get_queryset(self, request):
        return run_list(queryset=super().get_queryset(request))

    def rounds_in(self, objs) -> list[str]:
        return _handed_out_refusals(AssignmentRun.objects.filter(pk__in=[run.pk for run in objs]))
