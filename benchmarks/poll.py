"""Server CPU of one run-status poll, ``GET /api/runs/{id}/``, in-process (a benchmark).

What it measures
----------------
The API's poll as a web server's worker thread serves it, without the web server and the
network: the WSGI application of ``config.wsgi`` called with a WSGI environ (``Authorization:
Token <key>``), its answer read and closed as gunicorn does (closing it ends the request: Django's
``request_finished``, which closes or keeps the database connection). Settings as deployed:
``config.settings`` with ``DJANGO_DEBUG=0``, SQLite and the file cache in a data folder of its
own, token authentication, the whole middleware stack. For each polled run it reports:

* CPU milliseconds per poll (``time.process_time``, user + system, of this process) and the
  polls per second of one thread in a loop (wall clock), over ``--polls`` polls after
  ``--warmup`` untimed ones;
* the SQL queries of one further poll (``CaptureQueriesContext``), and the status and size of
  its answer.

The runs polled, in a demo project of ``--workers`` x ``--tasks`` (default 200 x 10,000, as
``benchmarks/api.py``; :func:`assignment.services.demo_project_create`):

* **running**: a tvcs-iht run, queued (``run_create(enqueue=False)``) and then given the state a
  computing worker's progress writes leave (status ``running``, progress, message, started and
  heartbeat times) by an update, since no worker runs here;
* **succeeded**: a greedy run computed in this process (``run_claim``, ``run_execute``): it has
  the assignment blob (384 kB at the default size) and the distributions of its page;
* **another user's**: the running run polled with a second user's token (a 404).

Then where the running run's poll spends its CPU: ``--polls-profiled`` polls (default 1,000)
under ``cProfile``, split by the cumulative time of the functions doing each part (the token's
authentication, the view's read of the run, its serialisation, opening and closing a database
connection) and the rest; the shares, and those shares of the CPU measured without the
profiler (estimates: the profiler weighs on Python calls, not on the database's own work).

The set-up runs in this process; the polls are timed in a fresh child process (this script
re-invoked with a hidden ``--child`` flag) that only starts Django and polls, as a server's
worker would. ``--profile`` adds the functions with the most time of their own in that profile.

Everything lives in a data folder of its own (``TVCS_DATA_DIR``, a temporary one removed at the
end); ``DATABASE_URL`` and ``TVCS_CACHE_URL`` are ignored, so that the numbers are those of the
embedded defaults. Run from the repository root::

    python benchmarks/poll.py                                   # ~15 s
    python benchmarks/poll.py --output docs/benchmarks/poll.md
    python benchmarks/poll.py --workers 50 --tasks 1000 --profile   # quick, with a profile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

#: A line of the product's log (``config.settings.LOGGING``).
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ ")


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def django_setup(data_dir: Path) -> None:
    """The deployed settings on ``data_dir``, with the embedded database and cache."""
    os.environ["TVCS_DATA_DIR"] = str(data_dir)
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ.setdefault("TVCS_LOG_LEVEL", "WARNING")
    for name in ("DATABASE_URL", "TVCS_CACHE_URL"):
        os.environ.pop(name, None)
    import django

    django.setup()


def build(args) -> dict:
    """Migrate; two users with tokens, the demo project, a running and a succeeded run."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from assignment import services
    from assignment.models import AssignmentRun, RunStatus

    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    owner, other = users.create_user("poll-owner"), users.create_user("poll-other")
    progress(f"demo project {args.workers:,} x {args.tasks:,} ...")
    project = services.demo_project_create(
        owner=owner, name="poll benchmark", n_workers=args.workers, n_tasks=args.tasks
    )
    running = services.run_create(
        project=project, method="tvcs-iht", options={"max_iter": 10_000}, enqueue=False
    )
    now = timezone.now()
    AssignmentRun.objects.filter(pk=running.pk).update(
        status=RunStatus.RUNNING,
        attempts=1,
        worker="celery@benchmark",
        started_at=now,
        heartbeat_at=now,
        progress=3,
        progress_message="iteration 10/10000, best accuracy 0.9699",
    )
    progress("a greedy run, computed here ...")
    succeeded = services.run_create(project=project, method="greedy", enqueue=False)
    if not services.run_claim(run_id=succeeded.pk):
        raise RuntimeError("the greedy run could not be claimed")
    if services.run_execute(run_id=succeeded.pk).status != RunStatus.SUCCEEDED:
        raise RuntimeError("the greedy run did not succeed")
    owner_key = Token.objects.create(user=owner).key
    return {
        "runs": [
            ("running", running.pk, owner_key),
            ("succeeded", succeeded.pk, owner_key),
            ("another user's (404)", running.pk, Token.objects.create(user=other).key),
        ]
    }


# --- the child: polls through the WSGI application ------------------------------------------


def poller(run_id: int, key: str):
    """A function making one poll through the WSGI application; it returns (status, bytes)."""
    from config.wsgi import application

    answer: list[str] = []

    def start_response(status, headers, exc_info=None):
        answer.append(status)

    def poll() -> tuple[str, int]:
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": f"/api/runs/{run_id}/",
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1:8000",
            "HTTP_ACCEPT": "*/*",
            "HTTP_AUTHORIZATION": f"Token {key}",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(b""),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        result = application(environ, start_response)
        try:
            size = sum(len(chunk) for chunk in result)
        finally:
            result.close()  # as the server does: request_finished
        return answer[-1], size

    return poll


def measure(name: str, run_id: int, key: str, *, warmup: int, polls: int) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    poll = poller(run_id, key)
    for _ in range(warmup):
        poll()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(polls):
        poll()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    with CaptureQueriesContext(connection) as captured:
        status, size = poll()
    row = {
        "name": name,
        "cpu_ms": cpu / polls * 1000,
        "rate": polls / wall,
        "queries": len(captured),
        "status": status,
        "bytes": size,
    }
    progress(f"  {name}: {row['cpu_ms']:.2f} ms CPU per poll, {row['queries']} queries, {status}")
    return row


_CONNECT = ("django/db/backends/base/base.py", "connect")

#: The parts of a poll in its profile: (part, the functions whose cumulative time it is, those
#: whose time it leaves out), each function as the ending of its file's path and its name.
#: The authentication's query is a request's first: it opens the connection when one is opened.
PARTS = (
    (
        "token authentication (DRF's, its query)",
        [("rest_framework/authentication.py", "authenticate")],
        [_CONNECT],
    ),
    (
        "reading the run (the view's selector, its query)",
        [("assignment/api/views.py", "_run"), ("assignment/api/views.py", "_run_status")],
        [],
    ),
    ("serialising the run (RunSerializer)", [("rest_framework/serializers.py", "data")], []),
    (
        "opening and closing the database connection",
        [_CONNECT, ("django/db/backends/base/base.py", "close")],
        [],
    ),
)


def profile(run_id: int, key: str, *, polls: int, top: int = 25) -> dict:
    """Shares of :data:`PARTS` in the profile of ``polls`` polls, and the functions with the
    most time of their own."""
    poll = poller(run_id, key)
    for _ in range(20):
        poll()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(polls):
        poll()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    cumulative: dict[tuple[str, str], float] = {}
    total = 0.0
    for (path, _, function), (_, _, _, ct, _) in stats.stats.items():
        if function == "poll" and path.endswith("poll.py"):
            total = max(total, ct)
        for _, functions, less in PARTS:
            for ending, name in functions + less:
                if function == name and path.endswith(ending):  # the outermost of several
                    cumulative[ending, name] = max(cumulative.get((ending, name), 0.0), ct)

    def seconds(functions) -> float:
        return sum(cumulative.get(f, 0.0) for f in functions)

    shares = [(part, (seconds(plus) - seconds(less)) / total) for part, plus, less in PARTS]
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    return {
        "shares": shares,
        "top": text[text.index("   ncalls") :].rstrip() if "   ncalls" in text else text,
    }


def child(spec: dict) -> dict:
    rows = [
        measure(name, run_id, key, warmup=spec["warmup"], polls=spec["polls"])
        for name, run_id, key in spec["runs"]
    ]
    _, run_id, key = spec["runs"][0]
    return {
        "rows": rows,
        "profile": profile(run_id, key, polls=spec["polls_profiled"]),
        "load": load_average(),
    }


# --- the report ---------------------------------------------------------------------------------


def code_version() -> str:
    """The checked-out commit, and the application files changed since."""

    def git(*argv: str) -> str:
        try:
            out = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True)
        except OSError:
            return ""
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git("status", "--porcelain", "--", "assignment", "frontend", "config")
    files = [line[3:] for line in changed.splitlines()]
    return commit + (f" with local changes to {', '.join(files)}" if files else "")


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def report(args, measured: dict) -> str:
    import sqlite3

    import django
    import rest_framework

    lines = [
        "# Server CPU of a run-status poll (GET /api/runs/{id}/), in-process",
        "",
        f"- command: `{shlex.join(['python', *sys.argv])}`",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- machine: {os.cpu_count()} CPUs, {platform.machine()}, {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}, Django "
        f"{django.get_version()}, DRF {rest_framework.VERSION}, SQLite {sqlite3.sqlite_version}",
        f"- code: {code_version()}",
        f"- project: demo {args.workers:,} workers x {args.tasks:,} tasks; settings "
        "`config.settings`, DJANGO_DEBUG=0, SQLite and the file cache in a temporary folder",
        f"- each run: {args.warmup} untimed polls, then {args.polls} timed, in a fresh process; "
        f"load average before: {args._load_before}, after: {measured['load']}",
        "",
        "The WSGI application called in a loop by one thread, each answer read and closed as a "
        "server does; no web server, no network. CPU: this process's user + system time per "
        "poll. Queries: those of one further poll.",
        "",
        "| run polled | CPU ms per poll | polls/s (one thread) | queries per poll | answer |",
        "|---|---:|---:|---:|---|",
    ]
    for r in measured["rows"]:
        lines.append(
            f"| {r['name']} | {r['cpu_ms']:.2f} | {r['rate']:,.0f} | {r['queries']} "
            f"| {r['status']}, {r['bytes']:,} bytes |"
        )
    cpu = measured["rows"][0]["cpu_ms"]
    shares = measured["profile"]["shares"]
    rest = 1 - sum(share for _, share in shares)
    lines += [
        "",
        "## Where the running run's poll spends its CPU",
        "",
        f"Shares of {args.polls_profiled} polls' time under cProfile: the cumulative time of "
        "the functions doing each part; the rest is what none of them covers. The ms are "
        f"those shares of the {cpu:.2f} ms measured without the profiler, estimates only "
        "(cProfile weighs on each Python call, not on the database's own work).",
        "",
        "| part | share | ~CPU ms |",
        "|---|---:|---:|",
        *(f"| {part} | {share:.0%} | {share * cpu:.2f} |" for part, share in shares),
        f"| the rest: WSGI, middleware, URL, DRF's request and response, rendering | {rest:.0%} "
        f"| {rest * cpu:.2f} |",
    ]
    if args.profile:
        lines += [
            "",
            "## The functions with the most time of their own (cProfile)",
            "",
            "```",
            measured["profile"]["top"],
            "```",
        ]
    return "\n".join(lines)


# --- main ---------------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=200, help="demo project's workers")
    parser.add_argument("--tasks", type=int, default=10_000, help="demo project's tasks")
    parser.add_argument("--polls", type=int, default=3000, help="timed polls of each run")
    parser.add_argument("--warmup", type=int, default=200, help="untimed polls before those")
    parser.add_argument(
        "--profile", action="store_true", help="add the profile's costliest functions"
    )
    parser.add_argument("--polls-profiled", type=int, default=1000, help="polls under the profiler")
    parser.add_argument("--output", type=Path, help="also write the Markdown report here")
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.workers, args.tasks, args.polls, args.polls_profiled) < 1 or args.warmup < 0:
        parser.error("--workers, --tasks and --polls must be positive, --warmup at least 0")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.child:
        django_setup(args.data_dir)
        print(json.dumps(child(json.load(sys.stdin))))
        return 0
    args.data_dir = Path(tempfile.mkdtemp(prefix="tvcs-poll-bench-"))
    try:
        django_setup(args.data_dir)
        spec = {
            **build(args),
            "warmup": args.warmup,
            "polls": args.polls,
            "polls_profiled": args.polls_profiled,
        }
        from django.db import connections

        connections.close_all()
        args._load_before = load_average()
        progress(f"polling: {args.warmup} + {args.polls} polls of each run ...")
        out = subprocess.run(
            [sys.executable, __file__, "--child", "--data-dir", str(args.data_dir)],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        # The child's log lines (a 404 is logged, as a server logs it) are counted, not shown.
        logged = [line for line in out.stderr.splitlines() if LOG_LINE.match(line)]
        for line in out.stderr.splitlines():
            if not LOG_LINE.match(line):
                progress(line)
        if logged:
            progress(f"  (the child logged {len(logged):,} lines, such as: {logged[-1]})")
        out.check_returncode()
        measured = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(args.data_dir, ignore_errors=True)
    text = report(args, measured)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
