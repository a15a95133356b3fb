"""python manage.py create_project NAME --owner USERNAME [--description TEXT] [--labels A,B]"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from assignment.lookups import user_get_by_username
from assignment.management.commands._domain_errors import domain_errors_as_command_errors
from assignment.services import project_create


class Command(BaseCommand):
    help = "Create a project owned by an existing user."

    def add_arguments(self, parser):
        parser.add_argument("name", help="the project's name (unique per owner)")
        parser.add_argument(
            "--owner", required=True, metavar="USERNAME", help="an existing user's username"
        )
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--labels",
            metavar="A,B",
            help="the label set, comma-separated (default 0,1; the second is the one a "
            "task's prior is the probability of)",
        )

    def handle(self, *args, name, owner, description, labels, **options):
        with domain_errors_as_command_errors():
            user = user_get_by_username(username=owner)
            project = project_create(
                owner=user,
                name=name,
                description=description,
                labels=None if labels is None else labels.split(","),
            )
        self.stdout.write(
            f"Created project {project.name!r} (id {project.pk}) of {owner}, "
            f"labels {', '.join(project.labels)}."
        )
