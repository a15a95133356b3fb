"""python manage.py import_data --project NAME [--owner USERNAME] --kind KIND FILE"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assignment.data_files import FORMATS
from assignment.importers import KINDS
from assignment.lookups import project_get_by_name
from assignment.management.commands._domain_errors import domain_errors_as_command_errors
from assignment.services import project_data_import


class Command(BaseCommand):
    help = (
        "Import a CSV or JSON data file into a project: all of it, or nothing and a message "
        "naming the file, line and column. Rows whose ids exist are updated. File formats: "
        "README, 'Data files'."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="the CSV or JSON file")
        parser.add_argument("--project", required=True, metavar="NAME")
        parser.add_argument(
            "--owner", metavar="USERNAME", help="the project's owner, if several have that name"
        )
        parser.add_argument("--kind", required=True, choices=KINDS)
        parser.add_argument(
            "--format",
            choices=FORMATS,
            help="default: from the file's suffix (.csv, .json), else from its first character",
        )

    def handle(self, *args, file, project, owner, kind, format, **options):
        with domain_errors_as_command_errors():
            target = project_get_by_name(name=project, owner_username=owner)
            try:
                stream = file.open("rb")
            except OSError as exc:
                raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
            try:
                with stream:
                    result = project_data_import(
                        project=target, kind=kind, file=stream, file_name=file.name, format=format
                    )
            except OSError as exc:  # the file failed while being read (a disk, a device)
                raise CommandError(f"cannot read {file}: {exc.strerror or exc}") from None
            except KeyboardInterrupt:
                raise CommandError(
                    "interrupted: nothing of the file was imported (all or nothing)"
                ) from None
        how = f" ({result.new_and_existing})" if result.new_and_existing else ""
        self.stdout.write(
            f"Imported {result.rows:,} {kind} rows from {result.file} into project "
            f"{target.name!r}{how}."
        )
