"""python manage.py estimate_quality --project NAME [--owner USERNAME] [--source gold|answers|both]
[--model one-coin|dawid-skene]"""

from __future__ import annotations

import argparse

from django.core.management.base import BaseCommand

from assignment.engine.answer_quality import MODELS
from assignment.engine.quality import DEFAULT_CATEGORY_STRENGTH, DEFAULT_WORKER_STRENGTH
from assignment.lookups import project_get_by_name
from assignment.management.commands._arguments import non_negative
from assignment.management.commands._domain_errors import domain_errors_as_command_errors
from assignment.models import EstimateSource
from assignment.selectors import quality_matrix_statistics, quality_strength_warnings
from assignment.services import EM_MAX_ITERATIONS, quality_estimate


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
        "Estimate the project's worker x task quality matrix and store it: from its gold "
        "answers (counted), its collected answers (EM) or both (EM, gold as known truths); "
        "shrunk from category to worker to population."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="NAME")
        parser.add_argument(
            "--owner", metavar="USERNAME", help="the project's owner, if several have that name"
        )
        parser.add_argument(
            "--source",
            choices=EstimateSource.values,
            default=EstimateSource.GOLD.value,
            help="what to learn from: "
            + "; ".join(f"{choice.value}: {choice.label}" for choice in EstimateSource)
            + " (default gold)",
        )
        parser.add_argument(
            "--model",
            choices=MODELS,
            help=f"the EM's worker model, for --source answers or both (default {MODELS[0]})",
        )
        parser.add_argument(
            "--max-iterations",
            type=non_negative,
            metavar="N",
            help="with --source answers or both: at most N EM iterations; an estimate that has "
            f"not converged by then is stored all the same, saying so (default "
            f"{EM_MAX_ITERATIONS})",
        )
        parser.add_argument(
            "--worker-strength",
            type=_strength,
            default=DEFAULT_WORKER_STRENGTH,
            help="pseudo-counts pulling a worker's accuracy to the population, or 'auto' to "
            f"fit it (with --source gold only) (default {DEFAULT_WORKER_STRENGTH:g})",
        )
        parser.add_argument(
            "--category-strength",
            type=_strength,
            default=DEFAULT_CATEGORY_STRENGTH,
            help="pseudo-counts pulling a worker's accuracy on a category to its overall "
            f"accuracy, or 'auto' to fit it (with --source gold only) (default "
            f"{DEFAULT_CATEGORY_STRENGTH:g})",
        )

    def handle(
        self,
        *args,
        project,
        owner,
        source,
        model,
        max_iterations,
        worker_strength,
        category_strength,
        **options,
    ):
        with domain_errors_as_command_errors():
            target = project_get_by_name(name=project, owner_username=owner)
            matrix = quality_estimate(
                project=target,
                source=source,
                model=model,
                max_iterations=max_iterations,
                worker_strength=worker_strength,
                category_strength=category_strength,
            )
        details = matrix.details
        summary = quality_matrix_statistics(matrix=matrix)
        head = (
            f"Estimated quality matrix {matrix.pk} of project {target.name!r}: "
            f"{matrix.n_workers:,} workers x {matrix.n_tasks:,} tasks from "
        )
        if source == EstimateSource.GOLD:
            self.stdout.write(
                f"{head}{details['gold_answers']:,} gold answers; population accuracy "
                f"{details['population_accuracy']:.3f}, mean quality {summary.mean:.3f}; "
                f"{summary.workers_without_gold:,} "
                f"worker{'' if summary.workers_without_gold == 1 else 's'} without gold answers "
                f"get{'s' if summary.workers_without_gold == 1 else ''} the population estimate."
            )
            for _, text in quality_strength_warnings(matrix=matrix):
                self.stderr.write(f"Warning: {text}")
            return
        n = details["iterations"]
        iterations = f"{n} iteration{'' if n == 1 else 's'}"
        if details["converged"]:
            fit = f"converged in {iterations}"
        else:
            fit = f"did NOT converge in {iterations} (stored all the same)"
        self.stdout.write(
            f"{head}{details['n_answers']:,} answers and {details['n_gold_answers']:,} gold "
            f"answers by EM ({details['model']}): {fit}, log-likelihood "
            f"{details['log_likelihood']:.1f}; population accuracy "
            f"{details['population_accuracy']:.3f}, mean quality {summary.mean:.3f}; "
            f"{details['workers_without_answers']:,} workers without answers get the "
            "population estimate."
        )
