"""python manage.py export_assignment --run ID [--format csv|json] [--output FILE]"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assignment.exporters import FORMATS, write_pairs
from assignment.management.commands._domain_errors import domain_errors_as_command_errors
from assignment.management.commands._output import output_format, write_output
from assignment.models import AssignmentRun
from assignment.selectors import run_assignment_rows


class Command(BaseCommand):
    help = (
        "Export the assignment of a succeeded run as worker_id,task_id pairs (the project's "
        "ids), CSV or JSON, to stdout or --output."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, metavar="ID")
        parser.add_argument(
            "--format", choices=FORMATS, help="default: the --output file's suffix, else csv"
        )
        parser.add_argument("--output", type=Path, metavar="FILE", help="default (or -): stdout")

    def handle(self, *args, run, format, output, **options):
        found = AssignmentRun.objects.filter(pk=run).first()
        if found is None:
            raise CommandError(f"no run has id {run}")
        with domain_errors_as_command_errors():
            rows = list(run_assignment_rows(run=found))
        format = output_format(format, output)
        write_output(self, output, lambda out: write_pairs(rows, format, out))
        if output is not None and str(output) != "-":
            self.stdout.write(f"Wrote {len(rows):,} pairs of run {run} to {output}.")
