"""python manage.py runproduct: the whole product on this machine, with its embedded defaults.

Migrates the database, creates a demo user (its password kept in the data folder, so that it
stays the same across restarts) and a demo project shaped like the paper's Figure 4, then
starts the web server and a Celery worker (with the beat scheduler that recovers stale runs)
and waits. Ctrl-C stops both.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from assignment.management.commands._arguments import port, positive
from assignment.services import DEMO_PASSWORD_FILE, demo_project_create, demo_user_ensure

MANAGE = Path(__file__).resolve().parents[3] / "manage.py"


class Command(BaseCommand):
    help = "Run tvcs-assign locally: migrate, demo data, web server and Celery worker."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=port, default=8000, help="1-65535 (default 8000)")
        parser.add_argument(
            "--concurrency", type=positive, default=1, help="Celery worker processes (>= 1)"
        )
        parser.add_argument("--no-demo", action="store_true", help="skip the demo user and data")

    def handle(self, *args, host: str, port: int, concurrency: int, no_demo: bool, **options):
        _check_port_free(host, port)
        self.stdout.write("Migrating the database ...")
        call_command("migrate", interactive=False, verbosity=0)
        base_url = f"http://{host}:{port}"
        if not no_demo:
            self._demo(base_url)
        children = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "--beat",
                    "--loglevel",
                    "INFO",
                    "--concurrency",
                    str(concurrency),
                    "--schedule",
                    settings.CELERY_BEAT_SCHEDULE_FILENAME,
                ],
                cwd=MANAGE.parent,
            ),
            subprocess.Popen(
                # Static files: WhiteNoise (settings), straight from the apps' folders.
                [sys.executable, str(MANAGE), "runserver", f"{host}:{port}", "--noreload"],
                cwd=MANAGE.parent,
            ),
        ]
        self.stdout.write(self.style.SUCCESS(f"tvcs-assign is running at {base_url}/"))
        self.stdout.write(f"  API docs: {base_url}/api/docs/   admin: {base_url}/admin/")
        self.stdout.write(f"  broker: {settings.CELERY_BROKER_URL}   Ctrl-C stops everything.")
        stop = []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
        try:
            while not stop and all(child.poll() is None for child in children):
                time.sleep(0.5)
        except KeyboardInterrupt:
            stop.append(True)
        finally:
            ended = [
                f"{name} (exit status {child.returncode})"
                for name, child in zip(
                    ("the Celery worker", "the web server"), children, strict=True
                )
                if child.poll() is not None
            ]
            self._stop(children)
        if not stop:  # a child ended on its own: the product is not running
            names = ", ".join(ended)
            raise CommandError(f"stopped: {names} ended on its own (its output is above)")

    def _demo(self, base_url: str) -> None:
        self.stdout.write("Preparing the demo project (Figure 4 shape, 100 x 1,000) ...")
        user, password = demo_user_ensure(
            password_file=Path(settings.DATA_DIR) / DEMO_PASSWORD_FILE
        )
        project = demo_project_create(owner=user)
        shown = password or "(changed since it was made; not shown)"
        self.stdout.write(f"  Sign in at {base_url}/ as demo, password: {shown}")
        self.stdout.write(f"  The demo project: {base_url}{project.get_absolute_url()}")

    def _stop(self, children) -> None:
        self.stdout.write("Stopping ...")
        for child in children:
            if child.poll() is None:
                child.terminate()
        deadline = time.monotonic() + 15
        for child in children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self.stdout.write("Stopped.")


def _check_port_free(host: str, port: int) -> None:
    """Refuse to start when ``host:port`` is taken, before anything is started."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the web server does
        try:
            probe.bind((host, port))
        except socket.gaierror as exc:  # not an address, nor a name that resolves to one
            raise CommandError(
                f"cannot serve on {host}:{port}: {exc.strerror}; give --host an address of "
                "this machine, such as 127.0.0.1 or 0.0.0.0"
            ) from None
        except OSError as exc:
            raise CommandError(
                f"cannot serve on {host}:{port}: {exc.strerror} (is tvcs-assign already "
                "running there?); choose another with --port"
            ) from None
