"""The next round's preview on demo-like projects (a benchmark, not a test).

For each ``--sizes`` ``n x m``: ``demo_project_create`` (``n`` workers, ``m`` tasks, quality
from simulated gold answers), a first greedy round of two rounds queued through ``run_create``
and computed, its answers simulated (the truth per task at random, each answer right with
probability 0.75) and uploaded; then ``services.round_preview`` with an empty cache (greedy on
the next round's problem) and again (from the cache), and the project page's GET, which does
not compute the preview. Django runs in this process on a temporary data folder (SQLite, the
file cache).

Run from the repository root::

    python benchmarks/round_preview.py                      # 100 x 1,000 and 200 x 10,000
    python benchmarks/round_preview.py --sizes 50x500
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.django_in_process import report_on_a_fresh_database  # noqa: E402


def answered_project(owner, n: int, m: int):
    """A demo project after a first greedy round whose answers are uploaded."""
    from assignment import services
    from assignment.models import Task, Worker

    project = services.demo_project_create(owner=owner, name=f"{n}x{m}", n_workers=n, n_tasks=m)
    run = services.run_create(
        project=project, method="greedy", next_round=True, rounds_left=2, enqueue=False
    )
    services.run_claim(run_id=run.pk)
    run = services.run_execute(run_id=run.pk)
    matrix = run.quality_matrix
    workers = dict(Worker.objects.filter(project=project).values_list("pk", "external_id"))
    tasks = dict(Task.objects.filter(project=project).values_list("pk", "external_id"))
    rng = np.random.default_rng(1)
    truth: dict[str, int] = {}
    lines = ["worker_id,task_id,answer"]
    for row, column in run.pairs.tolist():
        task = tasks[int(matrix.task_ids[column])]
        label = truth.setdefault(task, int(rng.integers(0, 2)))
        said = label if rng.random() < 0.75 else 1 - label
        lines.append(f"{workers[int(matrix.worker_ids[row])]},{task},{said}")
    services.project_data_import(
        project=project,
        kind="answers",
        file=io.BytesIO("\n".join(lines).encode()),
        file_name="answers.csv",
    )
    return project


def measure(sizes: list[tuple[int, int]]) -> str:
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.test import Client

    from assignment import services

    owner = get_user_model().objects.create_user("bench", password="x")
    client = Client(HTTP_HOST="localhost")  # a host ALLOWED_HOSTS has, without test setup
    client.force_login(owner)
    rows = [
        "| workers x tasks | answers | budget left | preview, empty cache (greedy) | "
        "from the cache | project page | gain |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, m in sizes:
        project = answered_project(owner, n, m)
        cache.clear()
        start = time.perf_counter()
        preview = services.round_preview(project=project)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        services.round_preview(project=project)
        warm = time.perf_counter() - start
        start = time.perf_counter()
        assert client.get(f"/projects/{project.pk}/").status_code == 200
        page = time.perf_counter() - start
        gain = "" if preview.gain_points is None else f"+{preview.gain_points:.2f} points"
        rows.append(
            f"| {n:,} x {m:,} | {preview.answers:,} | {preview.budget:,} | {cold:.2f} s "
            f"({preview.seconds or 0:.2f} s) | {1000 * warm:.0f} ms | {1000 * page:.0f} ms | "
            f"{preview.status} {gain} |"
        )
    return "\n".join(["# The next round's preview", "", *rows, ""])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100x1000,200x10000")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes.split(",")]
    return report_on_a_fresh_database(
        prefix="round-preview-", make_report=lambda: measure(sizes), output=args.output
    )


if __name__ == "__main__":
    sys.exit(main())
