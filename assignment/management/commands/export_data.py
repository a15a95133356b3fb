"""python manage.py export_data --project NAME --kind KIND --format csv|json [--output FILE]"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assignment.exporters import EXPORT_KINDS, FORMATS, export_data, export_data_to_path
from assignment.lookups import project_get_by_name
from assignment.management.commands._domain_errors import domain_errors_as_command_errors


class _Raw:
    """The command's stdout without the line ending Django adds to every write."""

    def __init__(self, stdout) -> None:
        self._stdout = stdout

    def write(self, text: str) -> None:
        self._stdout.write(text, ending="")


class Command(BaseCommand):
    help = (
        "Export a project's data as CSV or JSON (to stdout, or to --output). Every importable "
        "kind exports in its import format; 'labels' gives the Bayes-vote label of every "
        "answered task with its posterior."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="NAME")
        parser.add_argument(
            "--owner", metavar="USERNAME", help="the project's owner, if several have that name"
        )
        parser.add_argument("--kind", required=True, choices=list(EXPORT_KINDS))
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--output", type=Path, metavar="FILE", help="default: stdout")

    def handle(self, *args, project, owner, kind, format, output, **options):
        with domain_errors_as_command_errors():
            target = project_get_by_name(name=project, owner_username=owner)
            if output is None:
                export_data(project=target, kind=kind, format=format, out=_Raw(self.stdout))
                return
            try:
                rows = export_data_to_path(project=target, kind=kind, format=format, path=output)
            except OSError as exc:
                raise CommandError(f"cannot write {output}: {exc.strerror}") from exc
        self.stdout.write(f"Wrote {rows:,} {kind} rows to {output}.")
