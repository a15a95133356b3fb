"""python manage.py export_assignment --run ID [--format csv|json] [--output FILE]"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assignment.exporters import FORMATS, write_pairs
from assignment.management.commands._domain_errors import domain_errors_as_command_errors
from assignment.management.commands.export_data import _Raw
from assignment.models import AssignmentRun
from assignment.selectors import run_assignment_rows


class Command(BaseCommand):
    help = (
        "Export the assignment of a succeeded run as worker_id,task_id pairs (the project's "
        "ids), CSV or JSON, to stdout or --output."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, required=True, metavar="ID")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--output", type=Path, metavar="FILE", help="default: stdout")

    def handle(self, *args, run, format, output, **options):
        found = AssignmentRun.objects.filter(pk=run).first()
        if found is None:
            raise CommandError(f"no run has id {run}")
        with domain_errors_as_command_errors():
            rows = list(run_assignment_rows(run=found))
        if output is None:
            write_pairs(rows, format, _Raw(self.stdout))
            return
        try:
            with output.open("w", encoding="utf-8", newline="") as out:
                write_pairs(rows, format, out)
        except OSError as exc:
            raise CommandError(f"cannot write {output}: {exc.strerror}") from exc
        self.stdout.write(f"Wrote {len(rows):,} pairs of run {run} to {output}.")
