"""Many writers at once over HTTP: parallel uploads and parallel run creations (a check).

Starts the product on a data folder of its own, with a demo project: a Celery worker and the web
server chosen by ``--server``: ``gunicorn`` (the production WSGI server of ``docker/``, with
``config/gunicorn.py``; the default) or ``runserver`` (what ``runproduct`` uses). Then it sends
at once, each from its own thread and connection on loopback:

* ``--uploads`` uploads of a workers file (3,000 rows), one to each of as many projects;
* ``--runs`` run creations (``random``, ``greedy``) on the demo project,

and reports the answers by status code, whether every accepted run ended ``succeeded``, and
whether the rows written are exactly those sent (every upload's 3,000 workers, one run per 202).
Throttles and the active-runs limit are raised out of the way: this measures the database and
the server under contention, not the limits. A "socket error" is a connection the server did not
take: Django's development server (``runserver``, which ``runproduct`` uses) listens with a
backlog of 5 connections and resets the rest; a production WSGI server listens with a far
larger one. SQLite by default; PostgreSQL and Redis when
``DATABASE_URL`` and ``CELERY_BROKER_URL`` are set. Run from the repository root::

    python benchmarks/concurrency.py                     # 50 uploads, 100 runs, gunicorn
    python benchmarks/concurrency.py --server runserver
    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... python benchmarks/concurrency.py
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = 3_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request(url: str, token: str, *, data: bytes | None = None, content_type: str = "") -> tuple:
    """(status, body) of one request on its own connection; status 0 for a socket error."""
    headers = {"Authorization": f"Token {token}"}
    if content_type:
        headers["Content-Type"] = content_type
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data=data, headers=headers), timeout=120
        ) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except OSError as error:
        return 0, str(error).encode()


def multipart(name: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: text/csv\r\n\r\n"
        ).encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def at_once(jobs) -> list:
    """Run every job in its own thread, released together; their results in order."""
    results = [None] * len(jobs)
    start = threading.Barrier(len(jobs))

    def run(k, job):
        start.wait()
        results[k] = job()

    threads = [threading.Thread(target=run, args=(k, job)) for k, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def setup(n_projects: int) -> dict:
    """A user with a token, a demo project and ``n_projects`` empty projects."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from assignment import services

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user(f"load-{uuid.uuid4().hex[:8]}", password="x")
    demo = services.demo_project_create(owner=user, n_workers=40, n_tasks=300, seed=1)
    empty = [services.project_create(owner=user, name=f"upload-{k}").pk for k in range(n_projects)]
    return {"token": services.api_token_renew(user=user), "demo": demo.pk, "empty": empty}


def start(env: dict, data: Path, port: int, server: str) -> list[subprocess.Popen]:
    python = sys.executable
    logs = [(data / "server.log").open("w"), (data / "worker.log").open("w")]
    web = {
        "runserver": [python, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        "gunicorn": [python, "-m", "gunicorn", "--config", "python:config.gunicorn", "config.wsgi"],
    }[server]
    env = {**env, "TVCS_WEB_HOST": "127.0.0.1", "TVCS_WEB_PORT": str(port)}
    commands = [
        web,
        [
            python,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--concurrency",
            "2",
            "--loglevel",
            "WARNING",
            "--schedule",
            str(data / "beat"),
        ],
    ]
    return [
        subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        for command, log in zip(commands, logs, strict=True)
    ]


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def run_statuses(base: str, token: str, run_ids: list[int]) -> collections.Counter:
    counts = collections.Counter()
    for run_id in run_ids:
        status, body = request(f"{base}/api/runs/{run_id}/", token)
        counts[json.loads(body)["status"] if status == 200 else f"HTTP {status}"] += 1
    return counts


def check(args, base: str, facts: dict) -> list[str]:
    token = facts["token"]
    content = ("worker_id,name\n" + "".join(f"w{i},W{i}\n" for i in range(ROWS))).encode()
    body, content_type = multipart("workers.csv", content)
    upload = [
        lambda pk=pk: request(
            f"{base}/api/projects/{pk}/data/workers/", token, data=body, content_type=content_type
        )
        for pk in facts["empty"]
    ]
    began = time.perf_counter()
    uploads = at_once(upload)
    upload_seconds = time.perf_counter() - began
    runs_url = f"{base}/api/projects/{facts['demo']}/runs/"
    create = [
        lambda k=k: request(
            runs_url,
            token,
            data=json.dumps({"method": ("random", "greedy")[k % 2], "seed": k}).encode(),
            content_type="application/json",
        )
        for k in range(args.runs)
    ]
    began = time.perf_counter()
    creations = at_once(create)
    create_seconds = time.perf_counter() - began
    accepted = [json.loads(answer)["id"] for status, answer in creations if status == 202]
    ended = wait_until(
        lambda: not ({"queued", "running"} & set(run_statuses(base, token, accepted))),
        timeout=args.timeout,
    )
    return report(
        args,
        facts,
        uploads,
        upload_seconds,
        creations,
        create_seconds,
        accepted,
        run_statuses(base, token, accepted),
        ended,
    )


def report(
    args, facts, uploads, upload_seconds, creations, create_seconds, accepted, runs, ended
) -> list[str]:
    from assignment.models import AssignmentRun, Worker

    rows = Worker.objects.filter(project_id__in=facts["empty"]).count()
    stored_runs = AssignmentRun.objects.filter(project_id=facts["demo"]).count()

    def codes(answers):
        return dict(sorted(collections.Counter(status for status, _ in answers).items()))

    failed = [answer.decode() for status, answer in [*uploads, *creations] if status == 0]
    return [
        f"- socket errors (no HTTP answer): {len(failed)}"
        + (f", e.g. {failed[0]!r}" if failed else ""),
        f"- server: {args.server}; database: "
        f"{os.environ.get('DATABASE_URL', 'SQLite (embedded default)').split('@')[-1]}",
        f"- {args.uploads} uploads of {ROWS:,} workers at once: answers {codes(uploads)} in "
        f"{upload_seconds:.1f} s; workers stored {rows:,} (expected "
        f"{ROWS * sum(status == 201 for status, _ in uploads):,})",
        f"- {args.runs} run creations at once: answers {codes(creations)} in "
        f"{create_seconds:.1f} s; runs stored {stored_runs} (expected {len(accepted)})",
        f"- accepted runs at the end: {dict(runs)}"
        + ("" if ended else f" (not all ended within {args.timeout:.0f} s)"),
    ]


def stop(children: list[subprocess.Popen], *, grace: float = 30.0) -> None:
    """SIGTERM to each child's process group (a warm shutdown, as systemd asks for), then
    SIGKILL to any of these groups with a process still running ``grace`` seconds later, said on
    stderr: nothing is left behind."""
    for child in children:
        try:
            os.killpg(child.pid, signal.SIGTERM)
        except ProcessLookupError:  # the whole group has exited already
            pass
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for child in children:
        try:
            os.killpg(child.pid, 0)  # raises if no process of the group is left
        except ProcessLookupError:
            continue
        print(
            f"{child.args[2]} (process group {child.pid}) still running {grace:.0f} s after "
            "SIGTERM: SIGKILL to the group",
            file=sys.stderr,
        )
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=50)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=600.0, help="for the runs to end")
    parser.add_argument("--server", choices=["gunicorn", "runserver"], default="gunicorn")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="tvcs-concurrency-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TVCS_DATA_DIR": str(data),
        "TVCS_UPLOAD_RATE": "1000000/hour",
        "TVCS_RUN_RATE": "1000000/hour",
        "TVCS_MAX_ACTIVE_RUNS": "1000000",
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    facts = setup(args.uploads)
    port = free_port()
    children = start(env, data, port, args.server)
    base = f"http://127.0.0.1:{port}"
    try:
        if not wait_until(lambda: request(f"{base}/healthz", "")[0] == 200, timeout=60):
            raise SystemExit(f"the server did not start; see {data}/server.log")
        lines = check(args, base, facts)
        errors = (data / "server.log").read_text().count("Internal Server Error")
        lines.append(f"- server log: {errors} internal server errors")
        print("\n".join(lines))
    finally:
        stop(children)
        shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
