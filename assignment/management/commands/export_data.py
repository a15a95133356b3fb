"""python manage.py export_data --project NAME --kind KIND --format csv|json [--output FILE]"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assignment.exporters import EXPORT_KINDS, FORMATS, export_data
from assignment.lookups import project_get_by_name
from assignment.management.commands._domain_errors import domain_errors_as_command_errors
from assignment.management.commands._output import output_format, write_output


class Command(BaseCommand):
    help = (
        "Export a project's data as CSV or JSON (to stdout, or to --output). Every importable "
        "kind exports in its import format (a kind without rows exports as a header alone or "
        "[], which an import refuses as empty). Kinds: "
        + "; ".join(f"{name}: {kind.description}" for name, kind in EXPORT_KINDS.items())
        + "."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="NAME")
        parser.add_argument(
            "--owner", metavar="USERNAME", help="the project's owner, if several have that name"
        )
        parser.add_argument("--kind", required=True, choices=list(EXPORT_KINDS))
        parser.add_argument(
            "--format", choices=FORMATS, help="default: the --output file's suffix, else csv"
        )
        parser.add_argument("--output", type=Path, metavar="FILE", help="default (or -): stdout")

    def handle(self, *args, project, owner, kind, format, output, **options):
        format = output_format(format, output)
        with domain_errors_as_command_errors():
            target = project_get_by_name(name=project, owner_username=owner)
            try:
                rows = write_output(
                    self,
                    output,
                    lambda out: export_data(project=target, kind=kind, format=format, out=out),
                )
            except KeyboardInterrupt:
                written = "" if output is None or str(output) == "-" else f": {output} not written"
                raise CommandError(f"interrupted{written}") from None
        if output is not None and str(output) != "-":
            self.stdout.write(f"Wrote {rows:,} {kind} rows to {output}.")
