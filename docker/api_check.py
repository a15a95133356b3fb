"""The API end-to-end check against a running deployment (docker/stack runs it on the stack).

Over plain HTTP, as an API client would, with nothing but the standard library (so it runs on
the host without the product installed): get a token, create a project, upload every kind of
data file, estimate quality, start a run of every method the live schema lists and a
comparison, poll until they end, download every assignment and check it against the caps and
the run's own count; then the JSON error shape, the health check and a static file served by
the WSGI server. Exits non-zero at the first failed check, saying which.

    python3 docker/api_check.py --url http://127.0.0.1:8000 --username U --password P
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import logging
import random
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter

log = logging.getLogger("api_check")

N_WORKERS, N_TASKS, N_GOLD = 12, 40, 10
MAX_WORKERS_PER_TASK, MAX_TASKS_PER_WORKER = 3, 8


class CheckFailed(AssertionError):
    """One of the checks did not hold."""


def check(condition: bool, what: str) -> None:
    if not condition:
        raise CheckFailed(what)


class Client:
    """A tiny JSON-over-HTTP client with a token."""

    def __init__(self, url: str, *, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.token: str | None = None

    def request(self, method: str, path: str, *, body=None, headers=None):
        """``(status, headers, bytes)`` of one request; HTTP errors are answers, not raised."""
        headers = dict(headers or {})
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        data = body
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def json(self, method: str, path: str, *, body=None, expect=(200,), accept="application/json"):
        status, _, content = self.request(method, path, body=body, headers={"Accept": accept})
        check(
            status in expect,
            f"{method} {path}: HTTP {status}, expected {expect}: {content[:300]!r}",
        )
        return json.loads(content) if content else None

    def upload(self, path: str, name: str, text: str):
        boundary = uuid.uuid4().hex
        body = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: text/csv\r\n\r\n{text}\r\n--{boundary}--\r\n"
        ).encode()
        status, _, content = self.request(
            "POST",
            path,
            body=body,
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        check(status == 201, f"upload {name}: HTTP {status}: {content[:300]!r}")
        return json.loads(content)


def data_files(rng: random.Random) -> dict[str, str]:
    """Workers, tasks, gold items and answers of a small binary project (simulated answers)."""
    skill = [rng.uniform(0.55, 0.95) for _ in range(N_WORKERS)]
    gold = [(f"g{k}", f"c{k % 2}", str(rng.randint(0, 1))) for k in range(N_GOLD)]

    def answer(i: int, label: str) -> str:
        return label if rng.random() < skill[i] else str(1 - int(label))

    return {
        "workers": "worker_id,name\n" + "".join(f"w{i},W{i}\n" for i in range(N_WORKERS)),
        "tasks": "task_id,category\n" + "".join(f"t{j},c{j % 2}\n" for j in range(N_TASKS)),
        "gold_items": "item_id,category,true_label\n"
        + "".join(f"{k},{c},{t}\n" for k, c, t in gold),
        "gold_answers": "worker_id,item_id,answer\n"
        + "".join(f"w{i},{k},{answer(i, t)}\n" for i in range(N_WORKERS) for k, _, t in gold),
        "answers": "worker_id,task_id,answer\n"
        + "".join(f"w{j % N_WORKERS},t{j},1\n" for j in range(N_TASKS)),
    }


def wait_until(condition, *, timeout: float, what: str, every: float = 1.0):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        check(time.monotonic() < deadline, f"{what}: not done after {timeout:.0f} s")
        time.sleep(every)


def check_assignment(client: Client, run: dict) -> None:
    status, _, content = client.request("GET", f"/api/runs/{run['id']}/assignment/?format=csv")
    check(status == 200, f"run {run['id']} assignment: HTTP {status}")
    rows = list(csv.reader(io.StringIO(content.decode())))
    check(rows[0] == ["worker_id", "task_id"], f"run {run['id']}: header {rows[0]}")
    pairs = [tuple(row) for row in rows[1:]]
    check(
        len(pairs) == run["n_assigned"],
        f"run {run['id']}: {len(pairs)} rows, n_assigned {run['n_assigned']}",
    )
    check(len(set(pairs)) == len(pairs), f"run {run['id']}: a pair twice")
    check(
        len(pairs) <= run["budget"],
        f"run {run['id']}: {len(pairs)} pairs over budget {run['budget']}",
    )
    per_worker = Counter(worker for worker, _ in pairs)
    per_task = Counter(task for _, task in pairs)
    check(max(per_worker.values()) <= run["max_tasks_per_worker"], f"run {run['id']}: worker cap")
    check(max(per_task.values()) <= run["max_workers_per_task"], f"run {run['id']}: task cap")


def check_product(client: Client, *, username: str, password: str, timeout: float) -> dict:
    """Every check in order; returns figures for the summary."""
    token = client.json("POST", "/api/token/", body={"username": username, "password": password})
    client.token = token["token"]
    schema = client.json("GET", "/api/schema/", accept="application/vnd.oai.openapi+json")
    methods = schema["components"]["schemas"]["MethodEnum"]["enum"]
    check(len(methods) >= 3, f"the schema lists methods {methods}")

    project = client.json(
        "POST",
        "/api/projects/",
        expect=(201,),
        body={
            "name": f"stack check {uuid.uuid4().hex[:8]}",
            "default_max_workers_per_task": MAX_WORKERS_PER_TASK,
            "default_max_tasks_per_worker": MAX_TASKS_PER_WORKER,
        },
    )
    base = f"/api/projects/{project['id']}"
    files = data_files(random.Random(7))
    for kind in ("workers", "tasks", "gold_items", "gold_answers", "answers"):
        result = client.upload(f"{base}/data/{kind}/", f"{kind}.csv", files[kind])
        check(result["rows"] > 0, f"{kind}: no rows written")
    client.json("POST", f"{base}/quality/estimate/", body={}, expect=(200, 201))
    quality = client.json("GET", f"{base}/quality/")
    check((quality["n_workers"], quality["n_tasks"]) == (N_WORKERS, N_TASKS), f"quality {quality}")

    started = time.monotonic()
    runs = [
        client.json("POST", f"{base}/runs/", body={"method": m, "seed": 1}, expect=(202,))
        for m in methods
    ]
    comparison = client.json(
        "POST",
        f"{base}/comparisons/",
        expect=(202,),
        body={"methods": methods, "budgets": [20, 40], "seed": 2},
    )

    def all_ended():
        now = [client.json("GET", f"/api/runs/{run['id']}/") for run in runs]
        summary = client.json("GET", f"/api/comparisons/{comparison['id']}/")
        ended = all(r["status"] in ("succeeded", "failed", "cancelled") for r in now)
        return (now, summary) if ended and summary["finished"] else None

    runs, summary = wait_until(all_ended, timeout=timeout, what="runs and comparison")
    seconds = time.monotonic() - started
    for run in runs:
        check(
            run["status"] == "succeeded",
            f"run {run['id']} ({run['method']}): {run['status']} {run['error']}",
        )
        check_assignment(client, run)
    check(
        {row["status"] for row in summary["rows"]} == {"succeeded"},
        f"comparison rows {summary['rows']}",
    )
    check(
        sorted(summary["curves"]) == sorted(methods),
        f"comparison curves {sorted(summary['curves'])}",
    )

    status, headers, content = client.request("GET", "/api/no-such-thing/")
    check(status == 404 and "detail" in json.loads(content), f"API 404: {status} {content[:200]!r}")
    check(headers.get_content_type() == "application/json", "API 404 is not JSON")
    health = client.json("GET", "/healthz")
    check(health == {"database": "ok", "broker": "ok", "cache": "ok"}, f"/healthz: {health}")
    return {"methods": methods, "runs": len(runs) + len(summary["rows"]), "seconds": seconds}


def check_static(client: Client) -> None:
    """The sign-in page links hashed static files that the WSGI server serves, compressed."""
    status, _, content = client.request("GET", "/accounts/login/")
    check(status == 200, f"sign-in page: HTTP {status}")
    page = content.decode()
    start = page.find("/static/frontend/site.")
    check(start >= 0, "the sign-in page links no /static/frontend/site.*.css")
    href = page[start : page.find('"', start)]
    status, headers, _ = client.request("GET", href, headers={"Accept-Encoding": "gzip"})
    check(status == 200, f"{href}: HTTP {status}")
    check("max-age=315360000" in headers.get("Cache-Control", ""), f"{href}: not cached forever")
    check(headers.get("Content-Encoding") == "gzip", f"{href}: not served compressed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the deployment's address")
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--timeout", type=float, default=600, help="seconds the runs may take")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    client = Client(args.url)
    try:
        check_static(client)
        figures = check_product(
            client, username=args.username, password=args.password, timeout=args.timeout
        )
    except (CheckFailed, OSError, KeyError, ValueError) as error:
        log.error("api_check: FAILED: %s: %s", type(error).__name__, error)
        return 1
    log.info(
        "api_check: ok: %d runs of %s succeeded in %.1f s; assignments within their caps",
        figures["runs"],
        ", ".join(figures["methods"]),
        figures["seconds"],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
