"""The Django admin: every model, for staff. Numbers come from ``assignment.selectors``.

Worker, task, gold-answer and answer tables can hold millions of rows, so their pages use raw id
widgets for foreign keys (never a dropdown of every worker or task), filter by project only
(never by worker or task), skip the unfiltered count on filtered pages, and search ids exactly
where a substring search would scan the table. Arrays stored as ``.npy`` blobs are never loaded
for a list and never rendered.
"""

from __future__ import annotations

from django.contrib import admin
from django.template.loader import render_to_string

from assignment.models import (
    Answer,
    AssignmentRun,
    Comparison,
    GoldAnswer,
    GoldItem,
    Project,
    QualityMatrix,
    Task,
    Worker,
)
from assignment.selectors import (
    gold_answer_list,
    project_list_with_counts,
    project_statistics,
    quality_matrix_list,
    quality_matrix_statistics,
    run_list,
    workers_by_gold_answers,
)

_BIG_TABLE_PAGE = 100


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by the services (arrays, lifecycles): viewable and deletable."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "worker_count", "task_count", "gold_item_count", "created_at"]
    list_filter = ["owner", "created_at"]
    search_fields = ["name", "owner__username"]
    autocomplete_fields = ["owner"]
    readonly_fields = ["created_at", "updated_at"]
    list_per_page = 50

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

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["project_statistics"] = project_statistics(project=obj)
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
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "name", "max_tasks", "active"]
    list_filter = ["project", "active", GoldAnswersFilter]
    search_fields = ["external_id", "name"]
    list_select_related = ["project"]
    autocomplete_fields = ["project"]
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "category", "max_workers", "prior"]
    list_filter = ["project", "category"]
    search_fields = ["external_id", "category"]
    list_select_related = ["project"]
    autocomplete_fields = ["project"]
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False


@admin.register(GoldItem)
class GoldItemAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "category", "true_label"]
    list_filter = ["project", "category"]
    search_fields = ["external_id", "category"]
    list_select_related = ["project"]
    autocomplete_fields = ["project"]
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
class GoldAnswerAdmin(admin.ModelAdmin):
    list_display = ["worker", "item", "answer", "is_correct"]
    list_filter = ["item__project", CorrectFilter]
    search_fields = ["=worker__external_id", "=item__external_id"]
    search_help_text = "Exact worker or gold item id."
    raw_id_fields = ["worker", "item"]
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False

    def get_queryset(self, request):
        return gold_answer_list(queryset=super().get_queryset(request))

    @admin.display(description="correct?", boolean=True, ordering="is_correct")
    def is_correct(self, gold_answer):
        return gold_answer.is_correct


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["worker", "task", "label", "created_at"]
    list_filter = ["task__project", "created_at"]
    search_fields = ["=worker__external_id", "=task__external_id"]
    search_help_text = "Exact worker or task id."
    raw_id_fields = ["worker", "task"]
    list_select_related = ["worker", "task"]
    list_per_page = _BIG_TABLE_PAGE
    show_full_result_count = False


@admin.register(QualityMatrix)
class QualityMatrixAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "project", "source", "n_workers", "n_tasks", "created_at"]
    list_filter = ["project", "source", "created_at"]
    search_fields = ["project__name"]
    fields = ["project", "source", "n_workers", "n_tasks", "created_at", "statistics", "details"]
    readonly_fields = fields

    def get_queryset(self, request):
        return quality_matrix_list(queryset=super().get_queryset(request))

    @admin.display(description="statistics")
    def statistics(self, matrix):
        return render_to_string(
            "admin/assignment/quality_matrix_statistics.html",
            {"statistics": quality_matrix_statistics(matrix=matrix)},
        )


@admin.register(Comparison)
class ComparisonAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "project", "methods", "budgets", "created_at"]
    list_filter = ["project", "created_at"]
    search_fields = ["project__name"]
    list_select_related = ["project"]


@admin.register(AssignmentRun)
class AssignmentRunAdmin(ReadOnlyAdmin):
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
