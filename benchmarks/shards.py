"""Issue 12, goal 4: a run solved in shards by several real Celery workers, against one machine.

Usage::

    python benchmarks/shards.py [--sizes 200x10000@0.02,500x50000x20@0.02] [--shards 4]
        [--workers 4] [--method greedy] [--out docs/benchmarks/shards.md]

On a fresh data folder (SQLite database, filesystem broker: ``benchmarks/django_in_process``)
it starts ``--workers`` ``celery worker`` processes of concurrency 1 and, for each instance
(dense ``NxM`` or by category ``NxMxC``, caps and quality as in ``benchmarks/scale.py``), stores
it as a project with its quality matrix and measures, one after the other:

* **one machine, in process**: ``solve(problem, method=...)`` in this process;
* **one worker**: a product run with ``shards=1`` (one worker solves it, as every run);
* **sharded**: a product run with ``shards=--shards``, its shards solved by the workers and
  coordinated by prices (``assignment.services.shards``).

Two small sharded runs warm the workers up first (each pool process loads its kernels once).
Runs are timed from their creation to their success as the database shows it (polled every
0.1 s): queueing, loading the problem on each worker, the shards, the coordination rounds and
storing the answer. The report gives each one's accuracy, whether the stored assignment is
feasible, the accuracy difference in points (sharded minus one machine) and the wall-clock
ratios; and the sharded run's rounds. The workers share this machine's cores: the report's
header says how many.

``--sweep`` measures the engine alone instead (no Django, no Celery): ``solve_sharded`` in
this process for ``--sweep-shards`` shard counts, with 0 and 4 price rounds, against ``solve``.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from django_in_process import report_on_a_fresh_database  # noqa: E402
from markdown_report import publish  # noqa: E402
from scale import make_problem, parse_size, size_name  # noqa: E402


def start_workers(count: int, data: Path) -> list[subprocess.Popen]:
    env = dict(os.environ)
    procs = []
    for k in range(count):
        log = (data / f"worker-{k}.log").open("w")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config", "worker", "--concurrency", "1",
                 "--loglevel", "INFO", "--hostname", f"shard{k}@%h"],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        )  # fmt: skip
    deadline = time.monotonic() + 300
    logs = [data / f"worker-{k}.log" for k in range(count)]
    while not all("ready." in p.read_text() for p in logs):
        if time.monotonic() > deadline:
            raise RuntimeError("the workers did not start within 300 s")
        time.sleep(0.5)
    return procs


def stop_workers(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def store_project(problem, name: str):
    """The problem as a project (its caps as defaults) with its quality matrix."""
    from django.contrib.auth import get_user_model

    from assignment.models import Project, QualityMatrix, QualitySource, Task, Worker

    owner, _ = get_user_model().objects.get_or_create(username="bench")
    project = Project.objects.create(
        owner=owner,
        name=name,
        default_max_workers_per_task=int(problem.max_workers_per_task[0]),
        default_max_tasks_per_worker=int(problem.max_tasks_per_worker[0]),
        default_budget=problem.budget,
    )
    n, m = problem.shape
    workers = Worker.objects.bulk_create(
        [Worker(project=project, external_id=f"w{i}") for i in range(n)], batch_size=2000
    )
    categories = [f"c{c}" for c in problem.task_column] if problem.by_category else ["c"] * m
    tasks = Task.objects.bulk_create(
        [Task(project=project, external_id=f"t{j}", category=categories[j]) for j in range(m)],
        batch_size=2000,
    )
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
    keys = {"worker_ids": [w.pk for w in workers], "task_ids": [t.pk for t in tasks]}
    if problem.by_category:
        table = problem.quality_table
        matrix.set_by_category(
            table=table,
            table_categories=[f"c{c}" for c in range(table.shape[1])],
            task_categories=categories,
            **keys,
        )
    else:
        matrix.set_arrays(values=problem.quality_table, task_categories=categories, **keys)
    matrix.save()
    return project


def timed_run(project, *, method: str, seed: int, shards: int) -> tuple:
    from assignment import services
    from assignment.models import AssignmentRun, RunStatus

    started = time.perf_counter()
    run = services.run_create(project=project, method=method, seed=seed, shards=shards)
    while True:
        run = AssignmentRun.objects.get(pk=run.pk)
        if run.status not in (RunStatus.QUEUED, RunStatus.RUNNING):
            break
        time.sleep(0.1)
    seconds = time.perf_counter() - started
    if run.status != RunStatus.SUCCEEDED:
        raise RuntimeError(f"run {run.pk} {run.status}: {run.error}")
    return run, seconds


def warm_up(args) -> None:
    """Two small sharded runs first, so that the workers' pool processes have loaded their
    kernels (about a second each) before anything is timed; and one solve here."""
    from assignment.engine import solve

    solve(make_problem(20, 400, None, 0.1, args.seed), method=args.method)
    project = store_project(make_problem(20, 400, None, 0.1, args.seed), "warm-up")
    for _ in range(2):
        timed_run(project, method=args.method, seed=args.seed, shards=args.workers)


def feasible(problem, run) -> bool:
    x = np.zeros(problem.shape, dtype=bool)
    x[run.pairs[:, 0], run.pairs[:, 1]] = True
    return bool(problem.is_feasible(x)) and int(x.sum()) == run.n_assigned


def measure(spec, args) -> list[str]:
    from assignment.engine import solve
    from assignment.services.runs import _whole_problem

    n, m, categories, ratio = spec
    name = size_name(n, m, categories)
    project = store_project(make_problem(n, m, categories, ratio, args.seed), name)
    one, one_seconds = timed_run(project, method=args.method, seed=args.seed, shards=1)
    problem = _whole_problem(one)
    started = time.perf_counter()
    local = solve(problem, method=args.method, seed=args.seed)
    local_seconds = time.perf_counter() - started
    sharded, sharded_seconds = timed_run(
        project, method=args.method, seed=args.seed, shards=args.shards
    )
    diff = 100 * (sharded.expected_accuracy - local.expected_accuracy)
    rows = [
        f"## {name} ({'by category' if categories else 'dense'}, r = {ratio}, "
        f"budget {problem.budget:,})",
        "",
        "| solve | accuracy | feasible | wall-clock s | ratio to one worker |",
        "|---|---:|---|---:|---:|",
        f"| one machine, in process | {local.expected_accuracy:.4f} | "
        f"{problem.is_feasible(local.assignment)} | {local_seconds:.1f} | "
        f"{local_seconds / one_seconds:.2f} |",
        f"| one worker (run, shards=1) | {one.expected_accuracy:.4f} | {feasible(problem, one)} "
        f"| {one_seconds:.1f} | 1.00 |",
        f"| {args.shards} shards on {args.workers} workers (run) | "
        f"{sharded.expected_accuracy:.4f} | {feasible(problem, sharded)} | "
        f"{sharded_seconds:.1f} | {sharded_seconds / one_seconds:.2f} |",
        "",
        f"Accuracy difference, sharded minus one machine: {diff:+.4f} points "
        f"({'within' if abs(diff) <= 0.1 else 'NOT within'} 0.1). Sharded / in-process "
        f"wall-clock: {sharded_seconds / local_seconds:.2f}.",
        "",
        "Price rounds of the sharded run (seconds: from the run's start to the round's "
        "coordination; shard solve: the engine's solve of one shard on its worker):",
        "",
        "| round | merged accuracy | kept | shards solved | slowest shard solve s | "
        "all shard solves s | price spread after | done at s |",
        "|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for h in sharded.shard_state["history"]:
        solves = list(sharded.shard_rows.filter(round=h["round"]).values_list("seconds", flat=True))
        rows.append(
            f"| {h['round']} | {h['accuracy']:.5f} | {h['accepted']} | {h['shards']} | "
            f"{max(solves):.2f} | {sum(solves):.2f} | {h['price_spread']:.4f} | "
            f"{h['seconds']:.1f} |"
        )
    return [*rows, ""]


def make_report(args) -> str:
    import numba
    from django.conf import settings

    data = Path(settings.DATA_DIR)
    procs = start_workers(args.workers, data)
    try:
        warm_up(args)
        body = [line for spec in args.sizes for line in measure(spec, args)]
    finally:
        stop_workers(procs)
    commit = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    header = [
        "# Issue 12, goal 4: a run in shards on several Celery workers",
        "",
        f"- command: `python benchmarks/shards.py {' '.join(sys.argv[1:])}` (commit {commit})",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
        f"- python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}",
        f"- machine: {platform.platform()}, {os.cpu_count()} CPUs "
        f"({len(os.sched_getaffinity(0))} usable), load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end",
        f"- {args.workers} `celery worker` processes of concurrency 1 on this machine, "
        f"filesystem broker, SQLite; method {args.method}, seed {args.seed}",
        "",
    ]
    return "\n".join(header + body)


def sweep_report(args) -> str:
    """``--sweep``: the engine alone (no Celery, one process): ``solve_sharded`` with
    ``--sweep-shards`` shard counts, without and with price rounds, against ``solve``."""
    from assignment.engine import solve
    from assignment.engine.shards import solve_sharded

    solve(make_problem(20, 400, None, 0.1, args.seed), method=args.method)  # load the kernels
    lines = [
        "# Shards in one process: accuracy against the shard count (engine only)",
        "",
        f"- command: `python benchmarks/shards.py {' '.join(sys.argv[1:])}`",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; method "
        f"{args.method}, seed {args.seed}; one process, shards solved one after the other",
        "",
    ]
    for n, m, categories, ratio in args.sizes:
        problem = make_problem(n, m, categories, ratio, args.seed)
        started = time.perf_counter()
        single = solve(problem, method=args.method, seed=args.seed)
        seconds = time.perf_counter() - started
        lines += [
            f"## {size_name(n, m, categories)}, r = {ratio}: one solve "
            f"{single.expected_accuracy:.5f} in {seconds:.1f} s",
            "",
            "| shards | rounds | accuracy | minus one solve, points | rounds kept | seconds |",
            "|---:|---:|---:|---:|---|---:|",
        ]
        for shards in args.sweep_shards:
            for rounds in (0, 4):
                started = time.perf_counter()
                result = solve_sharded(
                    problem, method=args.method, n_shards=shards, rounds=rounds, seed=args.seed
                )
                seconds = time.perf_counter() - started
                kept = ",".join(str(r.round) for r in result.rounds if r.accepted)
                diff = 100 * (result.expected_accuracy - single.expected_accuracy)
                lines.append(
                    f"| {shards} | {rounds} | {result.expected_accuracy:.5f} | {diff:+.4f} | "
                    f"{kept} | {seconds:.1f} |"
                )
        lines.append("")
    return "\n".join(lines + one_shard_workers(args))


def one_shard_workers(args) -> list[str]:
    """An instance where shards differ: worker ``i`` may only label tasks ``j`` with
    ``j % 4 == i % 4``, so with 4 shards dealt round robin each worker is eligible in one shard."""
    from assignment.engine import AssignmentProblem, solve
    from assignment.engine.shards import solve_sharded

    n, m = 40, 2000
    eligible = (np.arange(m)[None, :] % 4) == (np.arange(n)[:, None] % 4)
    problem = AssignmentProblem(
        np.random.default_rng(args.seed).uniform(0.5, 0.9, (n, m)),
        max_workers_per_task=5,
        max_tasks_per_worker=200,
        budget=8000,
        eligible=eligible,
    )
    single = solve(problem, method=args.method, seed=args.seed).expected_accuracy
    lines = [
        f"## 40x2000, each worker eligible on the tasks j = i mod 4 (one shard of 4), caps 5 per "
        f"task and 200 per worker, budget 8,000: one solve {single:.5f}",
        "",
        "| shards | rounds | accuracy | minus one solve, points | accuracy by round |",
        "|---:|---:|---:|---:|---|",
    ]
    for rounds in (0, 2, 4):
        result = solve_sharded(problem, method=args.method, n_shards=4, rounds=rounds)
        by_round = ", ".join(
            f"{r.accuracy:.4f}{'' if r.accepted else ' (rejected)'}" for r in result.rounds
        )
        diff = 100 * (result.expected_accuracy - single)
        lines.append(
            f"| 4 | {rounds} | {result.expected_accuracy:.5f} | {diff:+.3f} | {by_round} |"
        )
    return [*lines, ""]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200x10000@0.02,500x50000x20@0.02")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--method", default="greedy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--sweep", action="store_true", help="the engine alone, in process")
    parser.add_argument("--sweep-shards", default="4,16,64")
    args = parser.parse_args(argv)
    args.sizes = [parse_size(text, 0.02) for text in args.sizes.split(",")]
    if args.sweep:
        args.sweep_shards = [int(x) for x in args.sweep_shards.split(",")]
        publish([sweep_report(args)], args.out)
        return 0
    return report_on_a_fresh_database(
        prefix="tvcs-shards-", make_report=lambda: make_report(args), output=args.out
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
