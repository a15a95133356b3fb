"""Pictures of the pages and the admin: the selectors' summaries as :mod:`charts` geometry.

Every picture is drawn from a summary of a few hundred numbers at most (per-category means,
count histograms, a comparison's curve points), never from a whole quality matrix or all the
pairs of an assignment.
"""

from __future__ import annotations

import itertools

import numpy as np

from assignment.engine import METHODS
from assignment.selectors import ComparisonSummary, WorkerCategoryQuality
from charts.geometry import (
    HeatMap,
    Responsive,
    bar_chart,
    count_chart,
    heat_map,
    histogram,
    line_chart,
    responsive,
)

#: Counts by value longer than this are grouped into bars of several values.
_MAX_COUNT_BARS = 40


def worker_quality_histogram(data: WorkerCategoryQuality) -> Responsive:
    """How many workers have each mean quality (over all tasks), in bins of 0.05."""
    low = np.floor(data.worker_means.min() * 20) / 20
    high = max(np.ceil(data.worker_means.max() * 20) / 20, low + 0.05)
    return responsive(
        histogram,
        values=data.worker_means,
        bins=np.linspace(low, high, round((high - low) * 20) + 1),
        title="Distribution of worker quality",
        x_label="mean quality over the project's tasks",
        y_label="workers",
        unit="workers",
        chart_id="worker-quality",
    )


def worker_category_heat_map(data: WorkerCategoryQuality) -> HeatMap:
    """Mean quality per worker (or group of workers of consecutive rank) and category."""
    rows = "worker" if data.workers_per_row == 1 else "group of workers by rank"
    return heat_map(
        rows=data.rows,
        columns=data.columns,
        values=data.values,
        title="Quality by worker and category",
        description=f"One row per {rows}, best first; one column per category; darker is better.",
        chart_id="worker-category",
    )


def _counts_chart(
    counts: list[int], *, title: str, x_label: str, unit: str, chart_id: str
) -> Responsive:
    """A bar per value, or per range of values when there are too many to read."""
    if len(counts) <= _MAX_COUNT_BARS:
        return responsive(
            count_chart,
            counts=counts,
            title=title,
            x_label=x_label,
            y_label=unit,
            unit=unit,
            chart_id=chart_id,
        )
    width = int(np.ceil(len(counts) / _MAX_COUNT_BARS))
    starts = range(0, len(counts), width)
    spans = [(s, min(s + width, len(counts)) - 1) for s in starts]
    return responsive(
        bar_chart,
        labels=[str(s) if s == last else f"{s}\u2013{last}" for s, last in spans],
        values=[sum(counts[s : s + width]) for s in starts],
        title=title,
        x_label=x_label,
        y_label=unit,
        unit=unit,
        chart_id=chart_id,
    )


def run_charts(summary: dict) -> list[Responsive]:
    """The distributions of a succeeded run (``AssignmentRun.summary``); [] for a run that
    succeeded before runs kept them."""
    if not summary:
        return []
    charts = [
        _counts_chart(
            summary["workers_per_task"],
            title="Workers per task",
            x_label="workers assigned to a task",
            unit="tasks",
            chart_id="workers-per-task",
        ),
        _counts_chart(
            summary["tasks_per_worker"],
            title="Tasks per worker",
            x_label="tasks assigned to a worker",
            unit="workers",
            chart_id="tasks-per-worker",
        ),
    ]
    accuracy = summary.get("task_accuracy")
    if accuracy is not None:
        edges = accuracy["edges"]
        charts.append(
            responsive(
                bar_chart,
                labels=[f"{a:.3f}\u2013{b:.3f}" for a, b in itertools.pairwise(edges)],
                values=accuracy["counts"],
                title="Expected accuracy per task",
                x_label="expected accuracy of a task's vote",
                y_label="tasks",
                unit="tasks",
                chart_id="task-accuracy",
            )
        )
    return charts


def comparison_chart(summary: ComparisonSummary) -> Responsive:
    """Expected accuracy against budget, a line per method, and the upper bound dashed."""
    order = sorted(summary.methods, key=lambda m: METHODS.index(m) if m in METHODS else 99)
    series = {
        method: [(p.budget, p.expected_accuracy) for p in summary.curves.get(method, ())]
        for method in order
    }
    reference = None
    if summary.upper_bound.points:
        reference = (
            "upper bound (no per-worker caps)",
            [(p.budget, p.expected_accuracy) for p in summary.upper_bound.points],
        )
    return responsive(
        line_chart,
        series=series,
        reference=reference,
        title="Expected accuracy against budget",
        x_label="budget (worker, task pairs)",
        y_label="expected accuracy",
        chart_id="accuracy-budget",
    )
