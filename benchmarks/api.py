"""Run-status polling over the REST API, idle and while a large run computes (a benchmark).

What it measures
----------------
Requests per second and latency percentiles (p50, p90, p99, max) of ``GET /api/runs/{id}/``
with ``Authorization: Token <key>``, on loopback, against the product served by each web server
in ``--server`` (comma-separated, default both), one at a time on the same port, with the same
database, user, token and run:

* ``runserver``: as ``python manage.py runproduct`` starts it, ``manage.py runserver
  127.0.0.1:PORT --noreload --insecure`` (Django's threaded development server);
* ``gunicorn``: as the product is deployed, ``gunicorn --config python:config.gunicorn
  config.wsgi`` with ``TVCS_WEB_HOST=127.0.0.1`` and ``TVCS_WEB_PORT=PORT`` (``config/gunicorn.py``:
  gthread workers, ``WEB_CONCURRENCY`` processes, default 2 x cores + 1, of ``TVCS_WEB_THREADS``
  threads, default 4, replaced after ``TVCS_WEB_MAX_REQUESTS`` requests; these are read from
  this script's environment, so they can be set for a run of it), plus ``--no-control-socket``
  (gunicorn's management socket in the home folder, of no use here, is left to any other
  gunicorn of the machine);

and one ``celery -A config worker --beat --concurrency 1`` for the whole measurement. For each
server, each way of connecting in ``--connection`` and each number of concurrent clients in
``--clients`` it loads the endpoint for ``--seconds`` seconds, twice:

* **computing**: while the worker computes a large ``tvcs-iht`` run (the run being polled) on
  a demo project of ``--workers`` x ``--tasks`` (``services.demo_project_create``, the shape of
  the paper's Figure 4; default 200 x 10,000), with ``max_iter`` and ``patience`` high,
  ``bound_gap`` 0 and a ``time_limit``
  longer than all the servers' computing levels, so that the run is still ``running`` when each
  level ends (its status and iteration are read after each level and reported);
* **idle**: the same polling after the run is cancelled and the worker has stopped computing
  (its log says the task ended), as the reference.

The order is: the first server is started (it serves the run's creation), then the computing
levels with each server in the order of ``--server`` (stopping one, starting the next), the
run is cancelled, then the idle levels with the servers in the reverse order (the last server
stays up across the cancel, and a server measured first while computing is measured last when
idle, so that the drift of the run's iterations weighs on neither alone). A server is stopped
before the next one starts, so they never share the cores.

Two ways of connecting (``--connection``, default both):

* ``keep-alive``: each client polls on one persistent HTTP/1.1 connection, as a browser or a
  ``requests.Session`` would. ``runserver`` writes an answer in several small writes on a
  socket with Nagle's algorithm on, and the client's delayed ACK (40 ms on Linux) holds back
  the last one: a keep-alive poll takes ~40-50 ms even when the server is idle, and the
  request rate per client is bounded at ~20/s by that wait, not by the CPU. gunicorn sets
  ``TCP_NODELAY`` on its sockets and has no such wait (it closes an idle keep-alive connection
  after ``keepalive`` seconds, longer than the clients ever wait);
* ``close``: a new connection per request (``Connection: close``), as ``curl`` in a loop: no
  such wait, so this shows what the server's CPU allows.

The main table has one row per (server, state, connection, clients) with requests, req/s,
latency percentiles in milliseconds, errors (non-2xx answers, socket errors, timeouts), the
run's status at the end of the level, and the CPU used during the level by the worker's
processes, the server's (gunicorn: its master and all its workers) and the load generator's
(100% = one core, from /proc). A second table gives computing / idle per (server, connection,
clients). With both servers, a third table, "gunicorn ÷ runserver", gives per (state,
connection, clients) the req/s of each server and their ratio, and the two p99s side by side.

The load generator is a separate process: ``wrk`` (one thread, ``--clients`` connections, a Lua
script adding the token and printing the percentiles) when it is on the PATH, else this script
re-invoked as a Python client (``--load python``: one thread per client, each with an
``http.client`` connection, every latency recorded; with ``close`` the connect is timed too).
It only ever talks to 127.0.0.1, for ``--seconds`` per level, with ``--clients`` connections at
most. A short warm-up (``--warmup`` seconds at the largest level) follows each start of a
server, before its first level, and is not reported.

Everything lives in a temporary data directory (``TVCS_DATA_DIR``): the SQLite database (unless
``DATABASE_URL`` is set: then that database is migrated and used, and the user and project this
script creates are deleted at the end), the filesystem broker's folders (unless
``CELERY_BROKER_URL`` is set), the processes' logs (``server-<name>-<n>.log`` per start of a
server). The run is cancelled, the servers, the worker and the load generator are stopped and
the directory is removed at the end, also on an error or Ctrl-C (``--keep`` keeps the
directory, for the logs).

Run from the repository root (the script puts the root on ``sys.path``)::

    python benchmarks/api.py                       # both servers, 1,4,16 clients x 20 s, ~12 min
    python benchmarks/api.py --clients 1,16,64 --out results.md     # the issue's levels, ~12 min
    python benchmarks/api.py --server gunicorn     # gunicorn alone, ~7 min
    python benchmarks/api.py --workers 50 --tasks 1000 --seconds 3 --clients 1,16  # quick check
    python benchmarks/api.py --load python --server runserver --out results.md

On a machine with few cores the load generator, the server and the worker share them: the
numbers are those of this whole arrangement on one machine, not of the server alone (gunicorn's
default of 2 x cores + 1 processes then competes with the worker's computation too).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.markdown_report import add_out_option, publish  # noqa: E402

MANAGE = ROOT / "manage.py"
HOST = "127.0.0.1"
FINISHED = {"succeeded", "failed", "cancelled"}
SERVERS = ("runserver", "gunicorn")

WRK_SCRIPT = """\
wrk.headers["Authorization"] = "Token %(token)s"
%(close)s
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRK_JSON {\\"requests\\": %%d, \\"duration_us\\": %%d, \\"connect\\": %%d, " ..
    "\\"read\\": %%d, \\"write\\": %%d, \\"status\\": %%d, \\"timeout\\": %%d, " ..
    "\\"p50\\": %%f, \\"p90\\": %%f, \\"p99\\": %%f, \\"max\\": %%f}\\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
"""


# --- the Python load generator (a child process) ----------------------------------------------


def python_client(spec: dict) -> dict:
    """Poll ``spec['path']`` from ``spec['clients']`` threads for ``spec['seconds']`` seconds.

    Each thread keeps one HTTP/1.1 connection (reopened if the server closes it or on an error),
    or with ``spec['connection'] == 'close'`` opens one per request, and records the latency of
    every answered request. Returns the latencies (ms) of the 2xx
    answers and the counts of the others.
    """
    headers = {"Authorization": f"Token {spec['token']}", "Accept": "application/json"}
    close = spec["connection"] == "close"
    if close:
        headers["Connection"] = "close"
    clients, seconds = spec["clients"], spec["seconds"]
    barrier = threading.Barrier(clients + 1)
    results = [
        {"latencies": [], "status_errors": 0, "socket_errors": 0, "end": 0.0}
        for _ in range(clients)
    ]
    deadline = [0.0]

    def client(out: dict) -> None:
        conn = http.client.HTTPConnection(HOST, spec["port"], timeout=30)
        barrier.wait()
        while True:
            start = time.perf_counter()
            if start >= deadline[0]:
                break
            try:
                if close:  # a new connection per request, its connect timed too
                    conn.connect()
                conn.request("GET", spec["path"], headers=headers)
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):
                out["socket_errors"] += 1
                conn.close()
                conn = http.client.HTTPConnection(HOST, spec["port"], timeout=30)
                continue
            elapsed = time.perf_counter() - start
            if 200 <= response.status < 300:
                out["latencies"].append(round(elapsed * 1000, 4))
            else:
                out["status_errors"] += 1
            if response.will_close or close:
                conn.close()
                conn = http.client.HTTPConnection(HOST, spec["port"], timeout=30)
        out["end"] = time.perf_counter()
        conn.close()

    threads = [threading.Thread(target=client, args=(r,), daemon=True) for r in results]
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    deadline[0] = began + seconds
    barrier.wait()
    for thread in threads:
        thread.join()
    return {
        "latencies": [x for r in results for x in r["latencies"]],
        "status_errors": sum(r["status_errors"] for r in results),
        "socket_errors": sum(r["socket_errors"] for r in results),
        "duration": max(r["end"] for r in results) - began,
    }


# --- processes ----------------------------------------------------------------------------------


class Children:
    """Processes this script started, each in its own session (so that Ctrl-C reaches only us
    and each can be stopped with its own children, by its id)."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen] = []

    def start(self, argv: list[str], *, log: Path | None = None, **kwargs) -> subprocess.Popen:
        with contextlib.ExitStack() as stack:
            if log is not None:  # the child writes to its copy; ours is closed at once
                kwargs.update(stdout=stack.enter_context(log.open("w")), stderr=subprocess.STDOUT)
            process = subprocess.Popen(argv, cwd=ROOT, start_new_session=True, **kwargs)
        self.started.append(process)
        return process

    @staticmethod
    def stop(process: subprocess.Popen, timeout: float = 15.0) -> None:
        """SIGTERM the process's group, SIGKILL it after ``timeout`` s or if members remain."""
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
            # the group can outlive its leader (pool children): make sure all of it is gone
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for stream in (process.stdout, process.stderr, process.stdin):
            if stream is not None:
                stream.close()

    def stop_all(self) -> None:
        for process in reversed(self.started):
            self.stop(process)


def session_cpu_seconds(sid: int) -> float | None:
    """CPU seconds (user + system, with reaped children's) of the processes of session ``sid``."""
    if not Path("/proc/self/stat").exists():
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid:
            total += sum(int(x) for x in fields[11:15])
    return total / ticks


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


# --- HTTP from this process (setup and checks, not the measured load) -------------------------


class Api:
    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
        try:
            headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            text = response.read()
            try:
                payload = json.loads(text) if text else {}
            except ValueError:
                payload = {"detail": text.decode(errors="replace")[:300]}
            return response.status, payload
        finally:
            conn.close()

    def run(self, run_id: int) -> dict:
        status, payload = self.call("GET", f"/api/runs/{run_id}/")
        if status != 200:
            raise RuntimeError(f"GET /api/runs/{run_id}/ answered {status}: {payload}")
        return payload


def wait_for(predicate, *, timeout: float, what: str, processes=()) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, process, log in processes:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
                raise RuntimeError(
                    f"the {name} exited ({process.returncode}) while waiting for {what}:\n{tail}"
                )
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")


# --- one level of load --------------------------------------------------------------------------


def percentile(sorted_values: list[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), on a sorted list."""
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def measure(
    *,
    load: str,
    children: Children,
    tmp: Path,
    port: int,
    token: str,
    path: str,
    clients: int,
    seconds: int,
    connection: str,
    silent_close: bool = False,
) -> dict:
    """Load ``path`` with ``clients`` connections for ``seconds``; requests, rate, latencies.

    ``silent_close``: the server closes the connection after answering a ``Connection: close``
    request without saying so in its answer (``runserver`` does, gunicorn does not).
    """
    if load == "wrk":
        script = tmp / "poll.lua"
        close = 'wrk.headers["Connection"] = "close"' if connection == "close" else ""
        script.write_text(WRK_SCRIPT % {"token": token, "close": close})
        process = children.start(
            [
                "wrk",
                "--threads",
                "1",
                "--connections",
                str(clients),
                "--duration",
                f"{seconds}s",
                "--timeout",
                "30s",
                "--script",
                str(script),
                f"http://{HOST}:{port}{path}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = process.communicate(timeout=seconds + 60)
        match = re.search(r"^WRK_JSON (.*)$", out, re.MULTILINE)
        if process.returncode != 0 or match is None:
            raise RuntimeError(f"wrk failed ({process.returncode}):\n{out}\n{err}")
        r = json.loads(match.group(1))
        duration = r["duration_us"] / 1e6
        read_errors = r["read"]
        if connection == "close" and silent_close:
            # The server closes after each answer without saying so (no "Connection: close" in
            # it), so wrk finds every connection closed when it sends the next request: one read
            # error per answer, then it reconnects. Only read errors beyond that count. (A server
            # that answers "Connection: close" lets wrk reconnect without an error.)
            read_errors = max(0, read_errors - r["requests"])
        return {
            "requests": r["requests"],
            "rps": r["requests"] / duration,
            "p50": r["p50"] / 1000,
            "p90": r["p90"] / 1000,
            "p99": r["p99"] / 1000,
            "max": r["max"] / 1000,
            "errors": r["status"] + r["connect"] + read_errors + r["write"] + r["timeout"],
        }
    spec = {
        "port": port,
        "path": path,
        "token": token,
        "clients": clients,
        "seconds": seconds,
        "connection": connection,
    }
    process = children.start(
        [sys.executable, str(Path(__file__).resolve()), "--child-load"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = process.communicate(json.dumps(spec), timeout=seconds + 120)
    if process.returncode != 0:
        raise RuntimeError(f"the Python load generator failed ({process.returncode}):\n{err}")
    r = json.loads(out)
    latencies = sorted(r["latencies"])
    requests = len(latencies) + r["status_errors"]
    return {
        "requests": requests,
        "rps": requests / r["duration"],
        "p50": percentile(latencies, 50),
        "p90": percentile(latencies, 90),
        "p99": percentile(latencies, 99),
        "max": latencies[-1] if latencies else float("nan"),
        "errors": r["status_errors"] + r["socket_errors"],
    }


def run_state(run: dict) -> str:
    message = run.get("progress_message") or ""
    match = re.match(r"iteration (\d+/\d+)", message)
    return f"{run['status']} (iteration {match.group(1)})" if match else run["status"]


# --- report -------------------------------------------------------------------------------------


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine_facts() -> tuple[str, str]:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError, StopIteration):
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    cpus = f"{os.cpu_count()} CPUs"
    if hasattr(os, "sched_getaffinity"):
        cpus += f" ({len(os.sched_getaffinity(0))} usable)"
    return cpu, cpus


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def cpu_cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def table(rows: list[dict]) -> list[str]:
    lines = [
        "| server | state | connection | clients | requests | req/s | p50 ms | p90 ms | p99 ms "
        "| max ms | errors | run at the end | CPU % worker / server / load |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in rows:
        cpu = " / ".join(cpu_cell(row[k]) for k in ("cpu_worker", "cpu_server", "cpu_load"))
        cells = [
            row["server"],
            row["state"],
            row["connection"],
            row["clients"],
            f"{row['requests']:,}",
            f"{row['rps']:.0f}",
            f"{row['p50']:.1f}",
            f"{row['p90']:.1f}",
            f"{row['p99']:.1f}",
            f"{row['max']:.1f}",
            row["errors"],
            row["run"],
            cpu,
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return lines


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "—"


def find_row(rows: list[dict], **key) -> dict | None:
    return next((r for r in rows if all(r[k] == v for k, v in key.items())), None)


def ratio_table(rows: list[dict]) -> list[str]:
    """Computing / idle per (server, connection, clients)."""
    lines = [
        "| server | connection | clients | req/s idle | req/s computing "
        "| req/s computing / idle | p50 computing / idle | p99 computing / idle |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for busy in rows:
        if busy["state"] != "computing":
            continue
        key = {k: busy[k] for k in ("server", "connection", "clients")}
        idle = find_row(rows, state="idle", **key)
        if idle is None:
            continue
        lines.append(
            f"| {busy['server']} | {busy['connection']} | {busy['clients']} | {idle['rps']:.0f} "
            f"| {busy['rps']:.0f} | {ratio(busy['rps'], idle['rps'])} "
            f"| {ratio(busy['p50'], idle['p50'])} | {ratio(busy['p99'], idle['p99'])} |"
        )
    return lines


def server_table(rows: list[dict]) -> list[str]:
    """gunicorn ÷ runserver per (state, connection, clients): req/s and their ratio, the p99s."""
    lines = [
        "| state | connection | clients | req/s runserver | req/s gunicorn "
        "| req/s gunicorn ÷ runserver | p99 ms runserver | p99 ms gunicorn |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for base in rows:
        if base["server"] != "runserver":
            continue
        key = {k: base[k] for k in ("state", "connection", "clients")}
        other = find_row(rows, server="gunicorn", **key)
        if other is None:
            continue
        lines.append(
            f"| {base['state']} | {base['connection']} | {base['clients']} | {base['rps']:.0f} "
            f"| {other['rps']:.0f} | {ratio(other['rps'], base['rps'])} "
            f"| {base['p99']:.1f} | {other['p99']:.1f} |"
        )
    return lines


# --- the benchmark ------------------------------------------------------------------------------


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def setup_database(n_workers: int, n_tasks: int, seed: int) -> dict:
    """Migrate, create a user with a token and the demo project; returns their ids and token."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections
    from rest_framework.authtoken.models import Token

    from assignment.services import demo_project_create

    progress("migrating the database ...")
    call_command("migrate", interactive=False, verbosity=0)
    user = get_user_model().objects.create_user(
        f"api-bench-{os.getpid()}-{time.time_ns()}", password=None
    )
    token = Token.objects.create(user=user)
    progress(f"creating the demo project ({n_workers} x {n_tasks:,}) ...")
    started = time.perf_counter()
    project = demo_project_create(
        owner=user, name="api benchmark", n_workers=n_workers, n_tasks=n_tasks, seed=seed
    )
    progress(f"  done in {time.perf_counter() - started:.1f} s")
    facts = {
        "user_id": user.pk,
        "token": token.key,
        "project_id": project.pk,
        "database": connections["default"].vendor,
    }
    connections.close_all()
    return facts


def delete_from_database(facts: dict) -> None:
    """Remove what :func:`setup_database` created (only needed on a database we do not delete)."""
    from django.contrib.auth import get_user_model
    from django.db import connections

    from assignment.models import Project
    from assignment.services import project_delete

    for project in Project.objects.filter(owner_id=facts["user_id"]):
        project_delete(project=project)
    get_user_model().objects.filter(pk=facts["user_id"]).delete()
    connections.close_all()


def worker_finished_task(log: Path, offset: int, run_id: int) -> bool:
    text = log.read_text(errors="replace")[offset:]
    return bool(
        re.search(rf"run {run_id} (stopped while computing|finished computing)", text)
        or re.search(r"Task assignment\.run_execute\[[^\]]+\] (succeeded|raised|failed)", text)
    )


def server_argv(name: str, port: int) -> list[str]:
    """The command starting web server ``name`` (gunicorn takes its address from the env).

    gunicorn's control socket (``~/.gunicorn/gunicorn.ctl`` by default, shared by every gunicorn
    of the user) is turned off: it plays no part in serving, and another gunicorn on the machine
    keeps its own.
    """
    if name == "runserver":
        return [
            sys.executable,
            str(MANAGE),
            "runserver",
            f"{HOST}:{port}",
            "--noreload",
            "--insecure",
        ]
    config = ["--config", "python:config.gunicorn", "--no-control-socket"]
    return [sys.executable, "-m", "gunicorn", *config, "config.wsgi"]


def gunicorn_settings() -> dict:
    """What ``config/gunicorn.py`` gives gunicorn here (it reads this process's environment)."""
    import config.gunicorn as settings

    names = ("worker_class", "workers", "threads", "keepalive", "max_requests")
    return {name: getattr(settings, name) for name in (*names, "max_requests_jitter", "accesslog")}


def server_description(name: str) -> str:
    debug = os.environ.get("DJANGO_DEBUG", "0")
    if name == "runserver":
        return (
            f"`manage.py runserver {HOST}:PORT --noreload --insecure` (Django's threaded "
            f"development server, DJANGO_DEBUG={debug}, logs every request)"
        )
    g = gunicorn_settings()
    return (
        "`gunicorn --config python:config.gunicorn --no-control-socket config.wsgi` "
        f"{version('gunicorn')} "
        f"({g['worker_class']}, {g['workers']} worker processes x {g['threads']} threads, "
        f"keepalive {g['keepalive']} s, max_requests {g['max_requests']} + up to "
        f"{g['max_requests_jitter']}, access log {'on' if g['accesslog'] else 'off'}, "
        f"DJANGO_DEBUG={debug})"
    )


class WebServer:
    """The web server under load: one of ``SERVERS`` at a time, always on ``HOST:api.port``."""

    def __init__(self, children: Children, tmp: Path, api: Api, worker: tuple) -> None:
        self.children, self.tmp, self.api, self.worker = children, tmp, api, worker
        self.name: str | None = None
        self.process: subprocess.Popen | None = None
        self.log: Path | None = None
        self.warm = False  # loaded since it started (the warm-up done)
        self.logs: dict[str, list[Path]] = {name: [] for name in SERVERS}

    def watched(self) -> list[tuple]:
        """(name, process, log) of the processes a :func:`wait_for` must not outlive."""
        return [(f"web server ({self.name})", self.process, self.log), self.worker]

    def healthy(self) -> bool:
        with contextlib.suppress(OSError, http.client.HTTPException):
            return self.api.call("GET", "/healthz")[0] == 200
        return False

    def use(self, name: str) -> None:
        """Make ``name`` the running server: stop the other one, start it, wait for /healthz."""
        if name == self.name:
            return
        self.stop()
        logs = self.logs[name]
        self.log = self.tmp / f"server-{name}-{len(logs) + 1}.log"
        logs.append(self.log)
        port = self.api.port
        env = dict(os.environ, TVCS_WEB_HOST=HOST, TVCS_WEB_PORT=str(port))
        progress(f"starting {name} on {HOST}:{port} ...")
        started = time.perf_counter()
        self.process = self.children.start(server_argv(name, port), log=self.log, env=env)
        self.name, self.warm = name, False
        wait_for(self.healthy, timeout=120, what=f"{name} (/healthz)", processes=self.watched())
        progress(f"  answering after {time.perf_counter() - started:.1f} s")

    def stop(self) -> None:
        if self.process is not None:
            progress(f"stopping {self.name} ...")
            Children.stop(self.process)
            self.name = self.process = self.log = None

    def gunicorn_boots(self) -> tuple[int, int]:
        """(gunicorn starts, worker processes booted in all): boots beyond ``workers`` per start
        are workers replaced during the measurement (``max_requests``, or a crash)."""
        logs = self.logs["gunicorn"]
        boots = sum(log.read_text(errors="replace").count("Booting worker") for log in logs)
        return len(logs), boots


def benchmark(args, tmp: Path, children: Children, report: list[str]) -> None:
    levels = [int(x) for x in args.clients.split(",") if x.strip()]
    modes = [x.strip() for x in args.connection.split(",") if x.strip()]
    servers = [x.strip() for x in args.server.split(",") if x.strip()]
    facts = setup_database(args.workers, args.tasks, args.seed)
    args._facts = facts  # for the cleanup
    token, port = facts["token"], args.port or free_port()
    worker_log = tmp / "worker.log"

    progress("starting a Celery worker ...")
    worker = children.start(
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
            "1",
            "--hostname",
            f"api-bench-{os.getpid()}@%h",
            "--schedule",
            str(tmp / "celerybeat-schedule"),
        ],
        log=worker_log,
        env=dict(os.environ),
    )
    api = Api(port, token)
    web = WebServer(children, tmp, api, ("Celery worker", worker, worker_log))
    web.use(servers[0])

    # the computing levels of every server, their warm-ups and the servers' (re)starts
    per_server = len(modes) * len(levels) * (args.seconds + 15) + args.warmup + 120
    time_limit = args.run_time_limit or len(servers) * per_server + 900
    options = {
        "max_iter": args.max_iter,
        "patience": args.max_iter,  # no early stop: the run computes until its time limit
        "bound_gap": 0.0,
        "time_limit": time_limit,
    }
    status, created = api.call(
        "POST",
        f"/api/projects/{facts['project_id']}/runs/",
        {"method": "tvcs-iht", "seed": args.seed, "options": options},
    )
    if status != 202:
        raise RuntimeError(f"queueing the run answered {status}: {created}")
    run_id = created["id"]
    args._run = (api, run_id)
    path = f"/api/runs/{run_id}/"
    progress(f"queued run {run_id} (tvcs-iht, {options}); waiting until it is computing ...")

    def computing():
        run = api.run(run_id)
        if run["status"] in FINISHED:
            raise RuntimeError(f"run {run_id} ended before the measurement: {run}")
        return run if (run["progress_message"] or "").startswith("iteration") else None

    started = time.perf_counter()
    run = wait_for(
        computing,
        timeout=args.start_timeout,
        what="the run's first iterations",
        processes=web.watched(),
    )
    progress(f"  computing after {time.perf_counter() - started:.1f} s: {run['progress_message']}")

    cpu, cpus = machine_facts()
    report += [
        f"- machine: {platform.platform()}, {cpu}, {cpus}; load average at the start "
        f"{args._load_start}; this process's nice value {os.nice(0)}",
        f"- database: {facts['database']}"
        + (" (in the temporary data directory)" if "DATABASE_URL" not in os.environ else ""),
        f"- broker: {os.environ.get('CELERY_BROKER_URL', 'filesystem:// (temporary folders)')}",
        *(f"- web server {name}: {server_description(name)}" for name in servers),
        "- one `celery -A config worker --beat --concurrency 1` throughout; one web server at a "
        "time on the same port: computing levels with "
        + " then ".join(servers)
        + ", the run cancelled, idle levels with "
        + " then ".join(reversed(servers)),
        f"- load generator: {args._load_name}, {args.seconds} s per level after a "
        f"{args.warmup} s warm-up per start of a server; connection keep-alive: each client "
        "polls on one HTTP/1.1 connection; close: `Connection: close`, a new connection per "
        "request",
        f"- run polled: tvcs-iht on the demo project of {args.workers} workers x "
        f"{args.tasks:,} tasks, options {json.dumps(options)}, computing "
        f"({run['progress_message']}) when the measurement started",
        "",
    ]

    def one_level(state: str, connection: str, clients: int, seconds: int) -> dict:
        server = web.process
        worker_before = session_cpu_seconds(worker.pid)
        server_before = session_cpu_seconds(server.pid)
        load_before = children_cpu_seconds()
        wall = time.perf_counter()
        result = measure(
            load=args.load,
            children=children,
            tmp=tmp,
            port=port,
            token=token,
            path=path,
            clients=clients,
            seconds=seconds,
            connection=connection,
            silent_close=web.name == "runserver",
        )
        wall = time.perf_counter() - wall
        worker_after = session_cpu_seconds(worker.pid)
        server_after = session_cpu_seconds(server.pid)

        def pct(before, after):
            return None if before is None or after is None else 100 * (after - before) / wall

        run_now = api.run(run_id)
        result.update(
            server=web.name,
            state=state,
            connection=connection,
            clients=clients,
            run=run_state(run_now),
            run_status=run_now["status"],
            cpu_worker=pct(worker_before, worker_after),
            cpu_server=pct(server_before, server_after),
            cpu_load=100 * (children_cpu_seconds() - load_before) / wall,
        )
        return result

    def all_levels(state: str) -> list[dict]:
        """Every (connection, clients) level on the running server, warmed up first if new."""
        if args.warmup and not web.warm:
            progress(f"warm-up: {web.name}, {max(levels)} clients for {args.warmup} s ...")
            one_level("warm-up", modes[0], max(levels), args.warmup)
        web.warm = True
        rows = []
        for connection in modes:
            for clients in levels:
                progress(
                    f"{state}: {web.name}, {connection}, {clients} client(s) "
                    f"for {args.seconds} s ..."
                )
                row = one_level(state, connection, clients, args.seconds)
                rows.append(row)
                message = f"  {row['rps']:.0f} req/s, p50 {row['p50']:.1f} ms, "
                message += f"p99 {row['p99']:.1f} ms, {row['errors']} errors"
                if state == "computing":
                    message += f"; run {row['run']}"
                    if row["run_status"] != "running":
                        report.append(
                            f"WARNING: the run was {row['run']} at the end of the {web.name} "
                            f"{connection} {clients}-client level: later computing rows are "
                            "not 'while computing'."
                        )
                progress(message)
        return rows

    rows = []
    for name in servers:
        web.use(name)
        rows += all_levels("computing")

    progress(f"cancelling run {run_id} and waiting for the worker to stop computing ...")
    offset = len(worker_log.read_text(errors="replace"))
    if api.run(run_id)["status"] in FINISHED:  # it ended during the levels: its end is logged
        offset = 0
    status, payload = api.call("POST", f"/api/runs/{run_id}/cancel/")
    if status not in (200, 409):
        raise RuntimeError(f"cancelling the run answered {status}: {payload}")
    started = time.perf_counter()
    wait_for(
        lambda: worker_finished_task(worker_log, offset, run_id),
        timeout=args.start_timeout,
        what="the worker to stop computing the cancelled run",
        processes=web.watched(),
    )
    progress(f"  stopped after {time.perf_counter() - started:.1f} s")
    time.sleep(1.0)

    for name in reversed(servers):
        web.use(name)
        rows += all_levels("idle")
    web.stop()

    order = {name: i for i, name in enumerate(servers)}
    rows.sort(key=lambda r: (order[r["server"]], r["state"] != "computing"))
    report += [*table(rows), "", "Computing / idle:", "", *ratio_table(rows), ""]
    if {"runserver", "gunicorn"} <= set(servers):
        report += ["gunicorn ÷ runserver:", "", *server_table(rows), ""]
    notes = (
        "Latencies in milliseconds (wrk: from its histogram; Python: every request). Errors: "
        "non-2xx answers plus socket errors and timeouts. CPU: share of one core used during "
        "the level by the worker's processes (its pool computes the run), the server's "
        "(gunicorn: its master and workers) and the load generator's."
    )
    if "gunicorn" in servers:
        starts, boots = web.gunicorn_boots()
        notes += (
            f" gunicorn: {starts} start(s), {boots} worker processes booted in all "
            f"({gunicorn_settings()['workers']} per start; any others replaced workers that "
            "reached max_requests, or died)."
        )
    report.append(notes + " Load average at the end: " + load_average() + ".")


def cleanup(args, children: Children, tmp: Path) -> None:
    run = getattr(args, "_run", None)
    if run is not None:
        api, run_id = run
        with contextlib.suppress(Exception):
            if api.run(run_id)["status"] not in FINISHED:
                api.call("POST", f"/api/runs/{run_id}/cancel/")
    children.stop_all()
    facts = getattr(args, "_facts", None)
    if facts is not None and "DATABASE_URL" in os.environ:
        try:
            delete_from_database(facts)
        except Exception as exc:  # report, and go on removing the directory
            progress(f"could not delete the benchmark's user and project: {exc}")
    if args.keep:
        progress(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--clients", default="1,4,16", help="comma-separated concurrent clients, one row each"
    )
    parser.add_argument(
        "--connection",
        default="keep-alive,close",
        help="comma-separated: keep-alive (one connection per client) and/or close (a new "
        "connection per request); default: %(default)s",
    )
    parser.add_argument(
        "--server",
        default=",".join(SERVERS),
        help="comma-separated web servers measured in turn: runserver (Django's development "
        "server, as runproduct starts it) and/or gunicorn (config/gunicorn.py, as deployed); "
        "default: %(default)s",
    )
    parser.add_argument("--seconds", type=int, default=20, help="load duration of each level")
    parser.add_argument("--warmup", type=int, default=2, help="unreported warm-up seconds")
    parser.add_argument("--workers", type=int, default=200, help="demo project's workers")
    parser.add_argument("--tasks", type=int, default=10_000, help="demo project's tasks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-iter", type=int, default=10_000, help="the run's max_iter")
    parser.add_argument(
        "--run-time-limit",
        type=float,
        help="the run's time_limit in seconds (default: the computing levels' time + 900)",
    )
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=900.0,
        help="seconds to wait for the run to compute, and for the worker to stop after the cancel",
    )
    parser.add_argument(
        "--load",
        choices=("auto", "wrk", "python"),
        default="auto",
        help="load generator: wrk, a Python client process, or wrk when on the PATH (default)",
    )
    parser.add_argument("--port", type=int, default=0, help="server port (default: a free one)")
    add_out_option(parser)
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    parser.add_argument("--child-load", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child_load:
        print(json.dumps(python_client(json.load(sys.stdin))))
        return 0
    levels = [x.strip() for x in args.clients.split(",") if x.strip()]
    if not levels or not all(x.isdigit() and 0 < int(x) <= 1000 for x in levels):
        parser.error("--clients must be comma-separated numbers of clients from 1 to 1000")
    modes = [x.strip() for x in args.connection.split(",") if x.strip()]
    if not modes or not set(modes) <= {"keep-alive", "close"} or len(set(modes)) < len(modes):
        parser.error("--connection must be keep-alive, close, or both, comma-separated")
    servers = [x.strip() for x in args.server.split(",") if x.strip()]
    if not servers or not set(servers) <= set(SERVERS) or len(set(servers)) < len(servers):
        parser.error("--server must be runserver, gunicorn, or both, comma-separated")
    if "gunicorn" in servers and importlib.util.find_spec("gunicorn") is None:
        parser.error("gunicorn is not installed in this Python (pip install -e .)")
    if args.seconds < 1 or args.warmup < 0:
        parser.error("--seconds must be at least 1 and --warmup at least 0")
    if args.load == "auto":
        args.load = "wrk" if shutil.which("wrk") else "python"
    if args.load == "wrk":
        if not shutil.which("wrk"):
            parser.error("wrk is not on the PATH (apt-get install wrk, or --load python)")
        wrk_version = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout
        args._load_name = f"`{wrk_version.split('[')[0].strip() or 'wrk'}` (one thread)"
    else:
        args._load_name = "Python client process (one thread per client, http.client)"
    args._load_start = load_average()

    tmp = Path(tempfile.mkdtemp(prefix="tvcs-api-bench-"))
    os.environ["TVCS_DATA_DIR"] = str(tmp)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    versions = ", ".join(
        f"{p} {version(p)}"
        for p in ("django", "djangorestframework", "celery", "gunicorn", "numpy")
    )
    report = [
        "# REST API polling benchmark: GET /api/runs/{id}/, idle and while a run computes, "
        f"served by {' and '.join(servers)}",
        "",
        f"- command: `{shlex.join([Path(sys.executable).name, *sys.argv])}`",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- python {platform.python_version()}, {versions}",
    ]
    children = Children()

    def terminated(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, terminated)
    try:
        benchmark(args, tmp, children, report)
    except KeyboardInterrupt:
        progress("interrupted: tearing down ...")
        return 130
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the teardown finish
        cleanup(args, children, tmp)
    publish(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
