"""python manage.py estimate_quality --project NAME [--owner USERNAME]"""

from __future__ import annotations

import argparse

from django.core.management.base import BaseCommand

from assignment.engine.quality import DEFAULT_CATEGORY_STRENGTH, DEFAULT_WORKER_STRENGTH
from assignment.lookups import project_get_by_name
from assignment.management.commands._domain_errors import domain_errors_as_command_errors
from assignment.selectors import quality_matrix_statistics
from assignment.services import quality_estimate


def _strength(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number or 'auto', got {text!r}")
    return value


class Command(BaseCommand):
    help = (
        "Estimate the project's worker x task quality matrix from its gold answers "
        "(shrunk from category to worker to population) and store it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="NAME")
        parser.add_argument(
            "--owner", metavar="USERNAME", help="the project's owner, if several have that name"
        )
        parser.add_argument(
            "--worker-strength",
            type=_strength,
            default=DEFAULT_WORKER_STRENGTH,
            help="pseudo-counts pulling a worker's accuracy to the population, or 'auto' "
            f"(default {DEFAULT_WORKER_STRENGTH:g})",
        )
        parser.add_argument(
            "--category-strength",
            type=_strength,
            default=DEFAULT_CATEGORY_STRENGTH,
            help="pseudo-counts pulling a worker's accuracy on a category to its overall "
            f"accuracy, or 'auto' (default {DEFAULT_CATEGORY_STRENGTH:g})",
        )

    def handle(self, *args, project, owner, worker_strength, category_strength, **options):
        with domain_errors_as_command_errors():
            target = project_get_by_name(name=project, owner_username=owner)
            matrix = quality_estimate(
                project=target,
                worker_strength=worker_strength,
                category_strength=category_strength,
            )
        details = matrix.details
        summary = quality_matrix_statistics(matrix=matrix)
        self.stdout.write(
            f"Estimated quality matrix {matrix.pk} of project {target.name!r}: "
            f"{matrix.n_workers:,} workers x {matrix.n_tasks:,} tasks from "
            f"{details['gold_answers']:,} gold answers; population accuracy "
            f"{details['population_accuracy']:.3f}, mean quality {summary.mean:.3f}; "
            f"{summary.workers_without_gold:,} workers without gold answers get the population "
            "estimate."
        )
