"""A soak of the running docker stack: mixed traffic while worker containers are SIGKILLed.

For ``--minutes`` (30), against the stack that ``docker/stack --keep`` started:

* ``--pollers`` (4) clients poll the status of the latest runs (``GET /api/runs/{id}/``, a new
  connection per request), and every latency is recorded;
* a run of the next method (in the order of the live schema) is requested every
  ``--run-every`` seconds (40), a comparison of two methods x two budgets every
  ``--comparison-every`` (300), an answers file is uploaded every ``--upload-every`` (60) and
  a new quality matrix every ``--quality-every`` (360): within the default per-user throttles;
* every ``--kill-every`` seconds (300) one worker container, in turn, gets SIGKILL on its main
  process from the host (as the kernel's OOM killer would); its restart policy starts it again.

Then the traffic stops and the script waits (``--drain`` seconds at most, 900) until no run is
queued or running: the stale-run sweep (beat) must re-queue what the killed workers held. It
checks through the API that no run is left queued or running, and that every succeeded run's
assignment downloads with exactly ``n_assigned`` distinct pairs within its budget and caps; it
reports the answers by status class (any 5xx fails the soak), runs by final status and attempts,
and the polling latency percentiles. Only ever talks to the stack's loopback address.

    docker/stack --keep        # prints nothing secret; make a user with createsuperuser
    python3 docker/soak.py --url http://127.0.0.1:58000 --username U --password P
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_check import CheckFailed, Client, check_assignment

log = logging.getLogger("soak")

N_WORKERS, N_TASKS = 80, 800
CAPS = {"default_max_workers_per_task": 3, "default_max_tasks_per_worker": 40}
ENDED = {"succeeded", "failed", "cancelled"}


class Traffic:
    """Counts of answers and polling latencies, shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answers: Counter[str] = Counter()
        self.poll_ms: list[float] = []
        self.server_errors: list[str] = []
        self.run_ids: list[int] = []

    def record(self, what: str, status: int, content: bytes = b"") -> None:
        with self.lock:
            self.answers[f"{status // 100}xx"] += 1
            if status >= 500:
                self.server_errors.append(f"{what}: {status} {content[:200]!r}")


def csv_text(header: str, rows) -> str:
    return header + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows)


def quality_file(rng: random.Random) -> str:
    skill = [rng.uniform(0.5, 0.95) for _ in range(N_WORKERS)]
    return csv_text(
        "worker_id,task_id,quality",
        (
            (f"w{i}", f"t{j}", f"{min(0.99, max(0.5, skill[i] + rng.gauss(0, 0.05))):.3f}")
            for i in range(N_WORKERS)
            for j in range(N_TASKS)
        ),
    )


def answers_file(rng: random.Random) -> str:
    return csv_text(
        "worker_id,task_id,answer",
        ((f"w{rng.randrange(N_WORKERS)}", f"t{j}", rng.randint(0, 1)) for j in range(200)),
    )


def project_create(client: Client, rng: random.Random) -> str:
    project = client.json(
        "POST", "/api/projects/", expect=(201,), body={"name": f"soak {os.getpid()}", **CAPS}
    )
    base = f"/api/projects/{project['id']}"
    workers = csv_text("worker_id,name", ((f"w{i}", f"W{i}") for i in range(N_WORKERS)))
    tasks = csv_text("task_id,category", ((f"t{j}", f"c{j % 4}") for j in range(N_TASKS)))
    client.upload(f"{base}/data/workers/", "workers.csv", workers)
    client.upload(f"{base}/data/tasks/", "tasks.csv", tasks)
    client.upload(f"{base}/data/quality/", "quality.csv", quality_file(rng))
    return base


def every(seconds: float, stop: threading.Event, action) -> None:
    """Call ``action`` now and then every ``seconds`` until ``stop``."""
    while not stop.is_set():
        started = time.monotonic()
        action()
        stop.wait(max(0.0, seconds - (time.monotonic() - started)))


def timed_request(client: Client, traffic: Traffic, what: str, method: str, path: str, **kw):
    try:
        status, _, content = client.request(method, path, **kw)
    except OSError as error:  # refused or reset: counted, never raised
        with traffic.lock:
            traffic.answers["socket error"] += 1
            traffic.server_errors.append(f"{what}: {type(error).__name__}: {error}")
        return None, b""
    traffic.record(what, status, content)
    return status, content


def poller(client: Client, traffic: Traffic, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        with traffic.lock:
            recent = traffic.run_ids[-8:]
        if not recent:
            stop.wait(0.5)
            continue
        started = time.perf_counter()
        status, _ = timed_request(
            client, traffic, "poll", "GET", f"/api/runs/{rng.choice(recent)}/"
        )
        if status == 200:
            with traffic.lock:
                traffic.poll_ms.append(1000 * (time.perf_counter() - started))
        stop.wait(0.2)


def start_run(client: Client, traffic: Traffic, base: str, methods) -> None:
    body = json.dumps({"method": next(methods), "seed": random.randrange(10**6)}).encode()
    status, content = timed_request(
        client,
        traffic,
        "run",
        "POST",
        f"{base}/runs/",
        body=body,
        headers={"Content-Type": "application/json"},
    )
    if status == 202:
        with traffic.lock:
            traffic.run_ids.append(json.loads(content)["id"])


def start_comparison(client: Client, traffic: Traffic, base: str, pair: list[str]) -> None:
    body = json.dumps({"methods": pair, "budgets": [800, 1600], "seed": 3}).encode()
    timed_request(
        client,
        traffic,
        "comparison",
        "POST",
        f"{base}/comparisons/",
        body=body,
        headers={"Content-Type": "application/json"},
    )


def upload(client: Client, traffic: Traffic, base: str, kind: str, make) -> None:
    boundary = uuid.uuid4().hex
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{kind}.csv"'
        f"\r\nContent-Type: text/csv\r\n\r\n{make()}\r\n--{boundary}--\r\n"
    ).encode()
    timed_request(
        client,
        traffic,
        f"upload {kind}",
        "POST",
        f"{base}/data/{kind}/",
        body=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )


def worker_containers(project: str) -> list[str]:
    out = subprocess.run(
        [
            "docker",
            "ps",
            "--quiet",
            "--filter",
            f"label=com.docker.compose.project={project}",
            "--filter",
            "label=com.docker.compose.service=worker",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(out.split())


def killer(project: str, seconds: float, stop: threading.Event, kills: list[str]) -> None:
    """SIGKILL one worker container's main process every ``seconds``, in turn."""
    turn = 0
    while not stop.wait(seconds):
        containers = worker_containers(project)
        if not containers:
            log.warning("soak: no worker container to kill")
            continue
        container = containers[turn % len(containers)]
        turn += 1
        pid = subprocess.run(
            ["docker", "inspect", "--format", "{{.State.Pid}}", container],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        os.kill(int(pid), signal.SIGKILL)
        kills.append(container[:12])
        log.info("soak: SIGKILL to worker container %s (pid %s)", container[:12], pid)


def runs_of(client: Client, project_path: str) -> list[dict]:
    project_id = project_path.rstrip("/").rsplit("/", 1)[1]
    runs, offset = [], 0
    while True:
        page = client.json("GET", f"/api/runs/?project={project_id}&limit=1000&offset={offset}")
        runs += page["results"]
        offset += len(page["results"])
        if not page["next"]:
            return runs


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def soak(args) -> int:
    client = Client(args.url)
    token = client.json(
        "POST", "/api/token/", body={"username": args.username, "password": args.password}
    )
    client.token = token["token"]
    schema = client.json("GET", "/api/schema/", accept="application/vnd.oai.openapi+json")
    method_names = schema["components"]["schemas"]["MethodEnum"]["enum"]
    rng = random.Random(11)
    base = project_create(client, rng)
    traffic, stop, kills = Traffic(), threading.Event(), []
    methods = itertools.cycle(method_names)
    periodic = [  # (seconds between calls, the call)
        (args.run_every, partial(start_run, client, traffic, base, methods)),
        (args.comparison_every, partial(start_comparison, client, traffic, base, method_names[:2])),
        (
            args.upload_every,
            partial(upload, client, traffic, base, "answers", partial(answers_file, rng)),
        ),
        (
            args.quality_every,
            partial(upload, client, traffic, base, "quality", partial(quality_file, rng)),
        ),
    ]
    threads = [
        threading.Thread(target=poller, args=(client, traffic, stop, k))
        for k in range(args.pollers)
    ]
    threads += [
        threading.Thread(target=every, args=(seconds, stop, action)) for seconds, action in periodic
    ]
    threads.append(
        threading.Thread(target=killer, args=(args.project, args.kill_every, stop, kills))
    )
    started = time.monotonic()
    log.info("soak: %s for %.0f min, %s", args.url, args.minutes, base)
    for thread in threads:
        thread.start()
    try:
        while time.monotonic() - started < 60 * args.minutes:
            time.sleep(min(60.0, 60 * args.minutes - (time.monotonic() - started)))
            log.info("soak: %.0f s, answers %s", time.monotonic() - started, dict(traffic.answers))
    finally:
        stop.set()
        for thread in threads:
            thread.join()

    drain_started = time.monotonic()
    while True:
        runs = runs_of(client, base)
        open_runs = [r for r in runs if r["status"] not in ENDED]
        if not open_runs or time.monotonic() - drain_started > args.drain:
            break
        time.sleep(10)
    drained = time.monotonic() - drain_started
    bad = []
    for run in runs:
        if run["status"] == "succeeded":
            try:
                check_assignment(client, run)
            except CheckFailed as error:
                bad.append(str(error))
    statuses = Counter(r["status"] for r in runs)
    attempts = Counter(r["attempts"] for r in runs)
    failed = [f"{r['id']} {r['method']}: {r['error']}" for r in runs if r["status"] == "failed"]
    lines = [
        f"soak of {args.url}: {args.minutes:g} min, {args.pollers} pollers, a worker SIGKILLed "
        f"every {args.kill_every:g} s ({len(kills)} kills: {', '.join(kills)})",
        f"answers: {dict(sorted(traffic.answers.items()))}",
        f"runs: {len(runs)} {dict(statuses)}; attempts {dict(sorted(attempts.items()))}; "
        f"drained in {drained:.0f} s",
        f"left queued or running: {len(open_runs)}; succeeded runs whose assignment is "
        f"wrong (duplicate, partial, over a cap): {len(bad)}",
    ]
    if traffic.poll_ms:
        ms = traffic.poll_ms
        lines.append(
            f"run polling: {len(ms)} requests, latency ms p50 {percentile(ms, 50):.1f}, "
            f"p90 {percentile(ms, 90):.1f}, p99 {percentile(ms, 99):.1f}, max {max(ms):.1f}"
        )
    lines += [f"  5xx/socket: {e}" for e in traffic.server_errors[:20]]
    lines += [f"  failed run {f}" for f in failed[:20]] + [f"  bad: {b}" for b in bad[:20]]
    report = "\n".join(lines)
    print(report)  # noqa: T201 (the report is the output)
    if args.out:
        Path(args.out).write_text(report + "\n", encoding="utf-8")
    ok = not open_runs and not bad and not traffic.server_errors
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument(
        "--project", default="tvcs-assign", help="the compose project (TVCS_STACK_PROJECT)"
    )
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--pollers", type=int, default=4)
    parser.add_argument("--run-every", type=float, default=40)
    parser.add_argument("--comparison-every", type=float, default=300)
    parser.add_argument("--upload-every", type=float, default=60)
    parser.add_argument("--quality-every", type=float, default=360)
    parser.add_argument("--kill-every", type=float, default=300)
    parser.add_argument("--drain", type=float, default=900)
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    return soak(args)


if __name__ == "__main__":
    sys.exit(main())
