"""Server time per page of the project manager's pages on a large project (a benchmark).

What it measures
----------------
Every page of the ``frontend`` app, fetched in-process with :class:`django.test.Client` (signed
in with ``force_login``): the time from the request to the last byte of the answer, through the
whole middleware stack, the views, the selectors, the database and the templates, with no
network and no browser. The set-up below runs in this process; the pages are timed in a fresh
child process (this script re-invoked with a hidden ``--child`` flag) that only starts Django
and serves them, as a server's worker would, so that the set-up's objects do not weigh on the
garbage collector. Each page is fetched ``--warmup`` times (not reported), then ``--repeats``
times (default 50); the table gives the median and the 95th percentile in milliseconds, the
size of the answer, the SQL queries it made (one further request, not timed), the full
(generation 2) garbage collections during the timed requests and whether the median and the
p95 are within the goal of 200 ms. Two downloads (the run's
assignment as CSV, the labels as CSV) are timed too, ``--download-repeats`` times each: they are
streamed files, reported for information, not held to the goal.

The project
-----------
Shaped like the paper's Figure 4 at ratio 0.02: ``--workers`` x ``--tasks`` (default
200 x 10,000) made by :func:`assignment.services.demo_project_create` (workers, tasks in 5
categories, gold answers, the estimated quality matrix), then its defaults set to the r = 0.02
caps: ``round(0.02 * workers)`` workers per task, ``round(0.02 * tasks)`` tasks per worker, a
budget of 80% of ``min(tasks * per_task, workers * per_worker)`` (4, 200 and 32,000 by default).
In it, computed in this process (``run_create(enqueue=False)``, ``run_claim``, ``run_execute``):

* one succeeded run of each of ``--methods`` (default greedy, random and tvcs-iht; tvcs-iht
  with ``max_iter=1, eval_every=1, refine=False`` to keep the set-up short: the pages do not
  care). At this size and shape a tvcs-iht projection takes seconds (~20 s for the first,
  cold one, ~3 s for each warm-started one on a 2-core machine); q-lp is left out unless
  ``--methods`` names it (the pages do not depend on the method);
* a comparison of greedy and random at 25%, 50% and 100% of the budget, its runs computed and
  its upper bound too (``comparison_upper_bound_compute``);
* answers of 3 workers on each of ``--answered`` tasks (default 5,000), imported as an
  ``answers`` file, so that the labels page has that many labelled tasks.

The run page and its status fragment are those of the tvcs-iht run (else the first run).

Everything lives in a data folder of its own (``TVCS_DATA_DIR``): a temporary one removed at the
end, or ``--data-dir`` (which must be empty or new, and is kept). The database is SQLite in that
folder unless ``DATABASE_URL`` is set: then that database is migrated and used, and the user and
project this script creates are deleted at the end.

Run from the repository root (the script puts the root on ``sys.path``)::

    python benchmarks/pages.py                                 # 200 x 10,000, ~1.5 min
    python benchmarks/pages.py --output docs/benchmarks/pages.md
    python benchmarks/pages.py --workers 50 --tasks 1000 --repeats 10   # quick check
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import io
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.django_in_process import django_setup  # noqa: E402

GOAL_MS = 200.0
RATIO = 0.02
USERNAME = f"pages-benchmark-{os.getpid()}"
#: The comparison's budgets, as fractions of the project's default budget.
COMPARISON_SHARES = (0.25, 0.5, 1.0)
#: Options of each method's run (tvcs-iht kept short: the pages only show its result).
RUN_OPTIONS = {"tvcs-iht": {"max_iter": 1, "eval_every": 1, "refine": False}}
ANSWERS_PER_TASK = 3


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def step(what: str, timings: list[tuple[str, float]]):
    """Time a set-up step, say so on stderr and keep ``(what, seconds)`` in ``timings``."""
    progress(f"{what} ...")
    start = time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    timings.append((what, seconds))
    progress(f"  {seconds:.1f} s")


# --- set-up -------------------------------------------------------------------------------------


@dataclass
class Fixtures:
    """What the pages are about: the user, the project, its runs and its comparison."""

    user: object
    project: object
    runs: dict[str, object] = field(default_factory=dict)
    comparison: object = None
    answers: int = 0


def figure4_defaults(n_workers: int, n_tasks: int) -> dict:
    """The project defaults of Figure 4 at :data:`RATIO`."""
    per_task = max(1, round(RATIO * n_workers))
    per_worker = max(1, round(RATIO * n_tasks))
    return {
        "default_max_workers_per_task": per_task,
        "default_max_tasks_per_worker": per_worker,
        "default_budget": int(0.8 * min(n_tasks * per_task, n_workers * per_worker)),
    }


def execute(run_id: int) -> None:
    """Compute a queued run in this process; fail loudly unless it succeeded."""
    from assignment import services

    if not services.run_claim(run_id=run_id):
        raise RuntimeError(f"run {run_id} could not be claimed")
    run = services.run_execute(run_id=run_id)
    if run is None or run.status != "succeeded":
        error = None if run is None else f"{run.status}: {run.error}"
        raise RuntimeError(f"run {run_id} did not succeed ({error})")


def answers_csv(n_workers: int, n_tasks: int, answered: int, seed: int) -> io.BytesIO:
    """``ANSWERS_PER_TASK`` distinct workers' answers on each of the first ``answered`` tasks,
    with the demo project's external ids (``w<i>``, ``t<j>``)."""
    rng = np.random.default_rng(seed)
    per_task = min(ANSWERS_PER_TASK, n_workers)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["worker_id", "task_id", "answer"])
    for j in range(min(answered, n_tasks)):
        workers = rng.choice(n_workers, size=per_task, replace=False)
        labels = rng.integers(0, 2, per_task)
        writer.writerows(
            (f"w{i}", f"t{j}", str(label)) for i, label in zip(workers, labels, strict=True)
        )
    return io.BytesIO(text.getvalue().encode())


def build(args, timings: list[tuple[str, float]]) -> Fixtures:
    """The user, the project, its runs, its comparison and its answers (see the docstring)."""
    from django.contrib.auth import get_user_model

    from assignment import selectors, services

    with step(f"demo project {args.workers:,} x {args.tasks:,}", timings):
        user = get_user_model().objects.create_user(USERNAME)
        project = services.demo_project_create(
            owner=user,
            name="pages benchmark",
            n_workers=args.workers,
            n_tasks=args.tasks,
            seed=args.seed,
        )
        defaults = figure4_defaults(args.workers, args.tasks)
        services.project_update(project=project, **defaults)
    fixtures = Fixtures(user=user, project=project)
    for method in args.methods:
        with step(f"run {method}", timings):
            run = services.run_create(
                project=project,
                method=method,
                seed=args.seed,
                options=RUN_OPTIONS.get(method),
                enqueue=False,
            )
            execute(run.pk)
            fixtures.runs[method] = run
    budgets = [max(1, int(share * defaults["default_budget"])) for share in COMPARISON_SHARES]
    with step(f"comparison greedy, random at budgets {budgets}", timings):
        comparison = services.comparison_create(
            project=project,
            methods=["greedy", "random"],
            budgets=budgets,
            seed=args.seed,
            enqueue=False,
        )
        for run_id in comparison.runs.order_by("pk").values_list("pk", flat=True):
            execute(run_id)
        services.comparison_upper_bound_compute(comparison_id=comparison.pk)
        fixtures.comparison = comparison
    with step(f"answers: {ANSWERS_PER_TASK} workers on {args.answered:,} tasks", timings):
        data = answers_csv(args.workers, args.tasks, args.answered, args.seed)
        result = services.project_data_import(
            project=project, kind="answers", file=data, file_name="answers.csv"
        )
        fixtures.answers = result.rows
    labelled, expected = (
        len(selectors.project_labels(project=project)),
        min(args.answered, args.tasks),
    )
    if labelled != expected:
        raise RuntimeError(f"the labels page would show {labelled:,} tasks, not {expected:,}")
    return fixtures


def delete() -> None:
    """Remove the benchmark's user and projects (from a database that outlives the script)."""
    from django.contrib.auth import get_user_model

    from assignment import services

    for user in get_user_model().objects.filter(username=USERNAME):
        for project in user.projects.all():
            services.project_delete(project=project)
        user.delete()


# --- measuring ----------------------------------------------------------------------------------


def pages(fixtures: Fixtures) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(name, URL)`` of every page, and of the downloads."""
    from django.urls import reverse

    project = {"project_id": fixtures.project.pk}
    run = {"run_id": fixtures.runs.get("tvcs-iht", next(iter(fixtures.runs.values()))).pk}
    comparison = {"comparison_id": fixtures.comparison.pk}
    labels = reverse("frontend:labels", kwargs=project)
    listed = [
        ("projects list", reverse("frontend:projects")),
        ("project overview", reverse("frontend:project", kwargs=project)),
        ("data", reverse("frontend:data", kwargs=project)),
        ("quality", reverse("frontend:quality", kwargs=project)),
        ("runs list", reverse("frontend:runs", kwargs=project)),
        ("run form", reverse("frontend:run_create", kwargs=project)),
        ("run page", reverse("frontend:run", kwargs=run)),
        ("run status fragment", reverse("frontend:run_status", kwargs=run)),
        ("comparisons list", reverse("frontend:comparisons", kwargs=project)),
        ("comparison page", reverse("frontend:comparison", kwargs=comparison)),
        ("comparison status fragment", reverse("frontend:comparison_status", kwargs=comparison)),
        ("labels (first page)", labels),
        ("labels, most confident first", labels + "?order=-confidence"),
        ("settings", reverse("frontend:project_settings", kwargs=project)),
        ("delete confirmation", reverse("frontend:project_delete", kwargs=project)),
        ("account", reverse("frontend:account")),
    ]
    downloads = [
        ("run assignment CSV", reverse("frontend:run_download", kwargs={**run, "format": "csv"})),
        (
            "labels CSV",
            reverse(
                "frontend:data_download", kwargs={**project, "kind": "labels", "format": "csv"}
            ),
        ),
    ]
    return listed, downloads


def fetch(client, url: str) -> int:
    """GET ``url`` and read the whole answer; its size in bytes. Fails unless it is a 200."""
    response = client.get(url)
    if response.streaming:
        size = sum(len(chunk) for chunk in response.streaming_content)
    else:
        size = len(response.content)
    response.close()
    if response.status_code != 200:
        raise RuntimeError(f"GET {url} answered {response.status_code}, not 200")
    return size


def count_queries(client, url: str) -> int:
    """The SQL queries one (untimed) GET of ``url`` makes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        fetch(client, url)
    return len(captured)


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(values, p))  # linear interpolation between closest ranks


class FullCollections:
    """Counts the garbage collector's full (generation 2) collections while it is entered."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            self.count += 1

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self)


def measure(client, name: str, url: str, *, warmup: int, repeats: int) -> dict:
    """Time ``repeats`` GETs of ``url`` after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fetch(client, url)
    times = []
    size = 0
    with FullCollections() as collections:
        for _ in range(repeats):
            start = time.perf_counter()
            size = fetch(client, url)
            times.append((time.perf_counter() - start) * 1000)
    row = {
        "name": name,
        "url": url,
        "median": percentile(times, 50),
        "p95": percentile(times, 95),
        "max": max(times),
        "bytes": size,
        "queries": count_queries(client, url),
        "full_gcs": collections.count,
    }
    progress(f"  {name}: median {row['median']:.1f} ms, p95 {row['p95']:.1f} ms")
    return row


# --- the report ---------------------------------------------------------------------------------


def within(ms: float) -> str:
    return "yes" if ms <= GOAL_MS else "**no**"


def table(rows: list[dict], *, goal: bool) -> list[str]:
    head = "| page | URL | median ms | p95 ms | max ms | bytes | queries | full GCs |"
    rule = "|---|---|---:|---:|---:|---:|---:|---:|"
    if goal:
        head += " median ≤ 200 ms? | p95 ≤ 200 ms? |"
        rule += ":---:|:---:|"
    lines = [head, rule]
    for r in rows:
        line = (
            f"| {r['name']} | `{r['url']}` | {r['median']:.1f} | {r['p95']:.1f} | {r['max']:.1f} "
            f"| {r['bytes']:,} | {r['queries']} | {r['full_gcs']} |"
        )
        if goal:
            line += f" {within(r['median'])} | {within(r['p95'])} |"
        lines.append(line)
    return lines


def machine() -> str:
    from django.db import connection

    engine = connection.vendor
    if engine == "sqlite":
        import sqlite3

        engine += f" {sqlite3.sqlite_version}"
    else:
        with contextlib.suppress(Exception):
            engine += f" {'.'.join(map(str, connection.cursor().connection.info.server_version))}"
    import django

    return (
        f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {platform.machine()}, "
        f"{platform.system()} {platform.release()}; Python {platform.python_version()}, "
        f"Django {django.get_version()}; database: {engine}"
    )


def code_version() -> str:
    """The checked-out commit, and the application files changed since (others may be editing)."""

    def git(*argv: str) -> str:
        try:
            out = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True)
        except OSError:
            return ""
        return out.stdout.strip() if out.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git("status", "--porcelain", "--", "assignment", "frontend", "charts", "config")
    files = [line[3:] for line in changed.splitlines()]
    return commit + (f" with local changes to {', '.join(files)}" if files else "")


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages (other processes share the CPUs)."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def report(args, fixtures: Fixtures, timings, rows, downloads) -> str:
    slow = [r["name"] for r in rows if r["median"] > GOAL_MS or r["p95"] > GOAL_MS]
    verdict = (
        f"Every page's median and p95 are within {GOAL_MS:.0f} ms."
        if not slow
        else f"Over {GOAL_MS:.0f} ms (median or p95): {', '.join(slow)}."
    )
    setup = ", ".join(f"{what} {seconds:.1f} s" for what, seconds in timings)
    defaults = figure4_defaults(args.workers, args.tasks)
    lines = [
        "# Server time per page of the frontend",
        "",
        f"- command: `{shlex.join(['python', *sys.argv])}`",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        f"- machine: {machine()}",
        f"- code: {code_version()}",
        f"- project: {args.workers:,} workers x {args.tasks:,} tasks (demo project, Figure 4 "
        f"shape at r = {RATIO}: per-task cap {defaults['default_max_workers_per_task']}, "
        f"per-worker cap {defaults['default_max_tasks_per_worker']}, budget "
        f"{defaults['default_budget']:,}); runs: {', '.join(args.methods)}; a comparison of "
        f"greedy and random at 3 budgets; {fixtures.answers:,} answers on "
        f"{min(args.answered, args.tasks):,} tasks",
        f"- set-up: {sum(s for _, s in timings):.1f} s ({setup})",
        f"- each page: {args.warmup} warm-up GETs, then {args.repeats} timed; downloads: "
        f"{args.download_repeats} timed",
        f"- load average (1, 5, 15 min) before the timings: {args.load_before}; after: "
        f"{load_average()}",
        "",
        "In-process `django.test.Client` GETs, signed in, in a fresh process that only serves "
        "the pages (as a server's worker would; the set-up ran in another): server time "
        "(middleware, view, queries, template) up to the last byte of the answer, without "
        "network. Queries: those of one further, untimed GET. Full GCs: the garbage "
        "collector's generation-2 collections during the timed GETs (each walks every object "
        "of the process).",
        "",
        *table(rows, goal=True),
        "",
        verdict,
        "",
        "## Downloads (streamed files; informative, not held to the goal)",
        "",
        *table(downloads, goal=False),
    ]
    return "\n".join(lines)


# --- main ---------------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=200, help="the project's workers")
    parser.add_argument("--tasks", type=int, default=10_000, help="the project's tasks")
    parser.add_argument("--repeats", type=int, default=50, help="timed GETs of each page")
    parser.add_argument("--warmup", type=int, default=3, help="untimed GETs before those")
    parser.add_argument("--download-repeats", type=int, default=10, help="timed downloads")
    parser.add_argument(
        "--answered", type=int, default=5_000, help="tasks with answers (3 workers each)"
    )
    parser.add_argument(
        "--methods",
        default="greedy,random,tvcs-iht",
        help="comma-separated methods with one run each (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, help="data folder (empty or new; kept)")
    parser.add_argument("--output", type=Path, help="also write the Markdown report here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return args
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not args.methods:
        parser.error("--methods must name at least one method")
    if min(args.workers, args.tasks, args.repeats, args.download_repeats) < 1 or args.warmup < 0:
        parser.error("--workers, --tasks, --repeats and --download-repeats must be positive")
    if args.data_dir is not None and args.data_dir.exists() and any(args.data_dir.iterdir()):
        parser.error(f"--data-dir {args.data_dir} is not empty")
    return args


def measure_all(spec: dict) -> dict:
    """Time the pages and downloads of ``spec`` (the child process: Django started, no set-up)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client(HTTP_HOST="localhost")  # a host ALLOWED_HOSTS has, without test setup
    client.force_login(get_user_model().objects.get(username=spec["username"]))
    load_before = load_average()
    progress(f"pages: {spec['warmup']} + {spec['repeats']} GETs each (load {load_before}) ...")
    rows = [
        measure(client, name, url, warmup=spec["warmup"], repeats=spec["repeats"])
        for name, url in spec["pages"]
    ]
    progress(f"downloads: 1 + {spec['download_repeats']} GETs each ...")
    downloads = [
        measure(client, name, url, warmup=1, repeats=spec["download_repeats"])
        for name, url in spec["downloads"]
    ]
    return {"rows": rows, "downloads": downloads, "load_before": load_before}


def run_child(args, spec: dict) -> dict:
    """:func:`measure_all` in a fresh process (this script with ``--child``), its result."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--data-dir", str(args.data_dir)],
        input=json.dumps(spec),
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def benchmark(args) -> str:
    timings: list[tuple[str, float]] = []
    with step("migrate", timings):
        django_setup(args.data_dir, migrate=True)
    try:
        fixtures = build(args, timings)
        listed, downloaded = pages(fixtures)
        spec = {
            "username": USERNAME,
            "pages": listed,
            "downloads": downloaded,
            "warmup": args.warmup,
            "repeats": args.repeats,
            "download_repeats": args.download_repeats,
        }
        measured = run_child(args, spec)
    finally:
        if "DATABASE_URL" in os.environ:
            delete()
    args.load_before = measured["load_before"]
    return report(args, fixtures, timings, measured["rows"], measured["downloads"])


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.child:
        django_setup(args.data_dir, migrate=False)
        print(json.dumps(measure_all(json.load(sys.stdin))))
        return 0
    temporary = args.data_dir is None
    if temporary:
        args.data_dir = Path(tempfile.mkdtemp(prefix="tvcs-pages-bench-"))
    args.data_dir.mkdir(parents=True, exist_ok=True)
    try:
        text = benchmark(args)
    finally:
        if temporary:
            shutil.rmtree(args.data_dir, ignore_errors=True)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
