"""Bytes stored, time and peak memory of an estimated quality matrix: by category against dense.

What it measures
----------------
A project of ``--workers`` x ``--tasks`` in ``--categories`` categories (default 2,000 x 200,000
x 20), filled through the import path: workers, tasks (category ``c<j mod C>``), ``--items``
gold items per category and ``--answers`` gold answers per worker and category (accuracy drawn
uniformly from [0.5, 0.9] per worker and category). Then, each step timed, with the peak of the
memory Python and numpy allocate in it (``tracemalloc``; the database's own buffers are not
counted):

* **by category**: :func:`assignment.services.quality_estimate`, which stores the estimate as
  its worker x category table and each task's category (no chunks);
* **dense** (unless ``--no-dense``): the same quality stored as every estimate was before,
  :meth:`QualityMatrix.set_arrays` with the dense values in chunks of whole worker rows;
* for each, the bytes stored (the lengths of the matrix row's blobs and of its chunks, as the
  database reports them) and the time and peak memory of reading the quality as a run gives it
  to the engine (:meth:`QualityMatrix.quality_form`).

Everything lives in a temporary data folder (SQLite), or in the database of ``DATABASE_URL``,
from which the benchmark's user and project are deleted at the end.

Run from the repository root::

    python benchmarks/quality_storage.py                     # 2,000 x 200,000 x 20, a few minutes
    python benchmarks/quality_storage.py --workers 200 --tasks 10000 --categories 5
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.django_in_process import database, report_on_a_fresh_database  # noqa: E402

USERNAME = f"quality-storage-benchmark-{os.getpid()}"
MIB = 1024 * 1024


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def measured(what: str, into: dict):
    """Time the block and the peak of what Python and numpy allocate in it: ``into[what]``."""
    progress(f"{what} ...")
    tracemalloc.start()
    start = time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    into[what] = (seconds, peak)
    progress(f"  {seconds:.1f} s, peak {peak / MIB:,.0f} MiB")


def csv_file(header: str, lines) -> io.BytesIO:
    return io.BytesIO(("\n".join([header, *lines]) + "\n").encode())


def fill(project, args) -> None:
    """Workers, tasks, gold items and gold answers, through the import service."""
    from assignment.services import project_data_import

    rng = np.random.default_rng(args.seed)
    accuracy = rng.uniform(0.5, 0.9, (args.workers, args.categories))
    labels = rng.integers(0, 2, (args.categories, args.items))
    answers = []
    for i in range(args.workers):
        for c in range(args.categories):
            for k in rng.choice(args.items, size=args.answers, replace=False):
                right = rng.random() < accuracy[i, c]
                answers.append(f"w{i},g{c}-{k},{labels[c, k] if right else 1 - labels[c, k]}")
    files = {
        "workers": csv_file("worker_id", (f"w{i}" for i in range(args.workers))),
        "tasks": csv_file(
            "task_id,category", (f"t{j},c{j % args.categories}" for j in range(args.tasks))
        ),
        "gold_items": csv_file(
            "item_id,category,true_label",
            (
                f"g{c}-{k},c{c},{labels[c, k]}"
                for c in range(args.categories)
                for k in range(args.items)
            ),
        ),
        "gold_answers": csv_file("worker_id,item_id,answer", answers),
    }
    for kind, data in files.items():
        start = time.perf_counter()
        project_data_import(project=project, kind=kind, file=data, file_name=f"{kind}.csv")
        progress(f"imported {kind} in {time.perf_counter() - start:.1f} s")


def stored_bytes(matrix) -> tuple[int, int]:
    """Bytes of the matrix row's blobs and of its chunks, as the database stores them."""
    from django.db.models import IntegerField, Sum
    from django.db.models.functions import Coalesce, Length

    from assignment.models import QualityChunk, QualityMatrix

    blobs = [f.name for f in QualityMatrix._meta.get_fields() if f.name.endswith("_blob")]
    lengths = QualityMatrix.objects.filter(pk=matrix.pk).values_list(
        *(Coalesce(Length(name), 0, output_field=IntegerField()) for name in blobs)
    )
    chunks = QualityChunk.objects.filter(matrix=matrix).aggregate(
        total=Coalesce(Sum(Length("values_blob")), 0, output_field=IntegerField())
    )["total"]
    return sum(lengths.get()), chunks


def benchmark(args) -> str:
    from django.contrib.auth import get_user_model

    from assignment.models import QualityChunk, QualityMatrix, QualitySource
    from assignment.services import project_create, project_delete, quality_estimate

    user = get_user_model().objects.create_user(USERNAME)
    try:
        project = project_create(owner=user, name="quality storage benchmark")
        fill(project, args)
        steps: dict[str, tuple[float, int]] = {}
        with measured("by category", steps):
            by_category = quality_estimate(project=project)
        kinds = {"by category": by_category}
        if not args.no_dense:
            with measured("dense", steps):
                dense = QualityMatrix(project=project, source=QualitySource.UPLOADED)
                dense.set_arrays(
                    values=by_category.values,
                    worker_ids=by_category.worker_ids,
                    task_ids=by_category.task_ids,
                    task_categories=[by_category.categories[c] for c in by_category.task_category],
                    gold_counts=by_category.gold_counts,
                )
                dense.save()
            kinds["dense"] = dense
        lines = [
            f"Quality of {args.workers:,} workers x {args.tasks:,} tasks in {args.categories} "
            f"categories ({args.answers} gold answers per worker and category), on "
            f"{database()}:",
            "",
            "| stored | row blobs | chunks | total | store s | store peak MiB "
            "| engine form s | engine form peak MiB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for kind, matrix in kinds.items():
            fresh = QualityMatrix.objects.get(pk=matrix.pk)
            form: dict[str, tuple[float, int]] = {}
            with measured(f"quality_form of the matrix stored {kind}", form):
                fresh.quality_form()
            row, chunks = stored_bytes(matrix)
            store = steps[kind]
            [(form_seconds, form_peak)] = form.values()
            lines.append(
                f"| {kind} ({QualityChunk.objects.filter(matrix=matrix).count()} chunks) "
                f"| {row:,} | {chunks:,} | {row + chunks:,} | {store[0]:.1f} "
                f"| {store[1] / MIB:,.0f} | {form_seconds:.2f} | {form_peak / MIB:,.1f} |"
            )
        return "\n".join(lines)
    finally:
        for owned in user.projects.all():
            project_delete(project=owned)
        user.delete()


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workers", type=int, default=2_000)
    parser.add_argument("--tasks", type=int, default=200_000)
    parser.add_argument("--categories", type=int, default=20)
    parser.add_argument("--items", type=int, default=10, help="gold items per category")
    parser.add_argument(
        "--answers", type=int, default=2, help="gold answers per worker and category"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-dense", action="store_true", help="skip the dense copy")
    parser.add_argument("--output", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    if not 0 < args.answers <= args.items:
        parser.error("--answers must be between 1 and --items")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    return report_on_a_fresh_database(
        prefix="tvcs-quality-storage-", make_report=lambda: benchmark(args), output=args.output
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
