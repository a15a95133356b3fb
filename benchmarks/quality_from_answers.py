"""How well each source of a quality estimate recovers a simulated crowd's true accuracies.

What it measures
----------------
For each of ``--seeds`` seeds, a project filled through the import path: ``--workers`` workers
whose true accuracy is drawn uniformly from [``--low``, ``--high``]; ``--tasks`` binary tasks in
``--categories`` categories, each answered by ``--per-task`` distinct random workers (the
collected answers, one-coin: right with the worker's accuracy); ``--items`` gold items, of which
each worker answers ``--gold-per-worker`` (a small gold budget, as gold questions cost money).
Then :func:`assignment.services.quality_estimate` with every source and model:

* ``gold``: the gold answers, counted;
* ``answers``: the collected answers by EM, ``one-coin`` and ``dawid-skene``;
* ``both``: the collected answers by EM with the gold items as known truths, both models;
* and, as the ceilings of ``answers`` and ``both``, each worker's share of right answers
  among its collected answers (and with its gold answers) with every task's truth known: no
  estimate from those answers can beat the binomial noise of a worker's few answers.

For each: the Pearson correlation and the mean absolute difference between a worker's estimated
accuracy (the mean of its row over the tasks) and its true accuracy, the EM iterations and
whether it converged, and the seconds the service took (reading the answers, EM, storing).
The report gives the mean over the seeds (and the lowest correlation).

Everything lives in a temporary data folder (SQLite), or in the database of ``DATABASE_URL``,
from which the benchmark's user and projects are deleted at the end.

Run from the repository root::

    python benchmarks/quality_from_answers.py          # 100 workers, 2,000 tasks, 5 seeds
    python benchmarks/quality_from_answers.py --seeds 1 --tasks 500
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.django_in_process import database, report_on_a_fresh_database  # noqa: E402

USERNAME = f"quality-from-answers-benchmark-{os.getpid()}"
#: (source, model) of each estimate compared.
ESTIMATES = (
    ("gold", None),
    ("answers", "one-coin"),
    ("answers", "dawid-skene"),
    ("both", "one-coin"),
    ("both", "dawid-skene"),
)


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def csv_file(header: str, lines) -> io.BytesIO:
    return io.BytesIO(("\n".join([header, *lines]) + "\n").encode())


def fill(project, args, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The simulated crowd, through the import service: the workers' true accuracies, and the
    share of each worker's answers that are right, of its collected answers and of those with
    its gold answers (what an estimate that knew every task's truth would measure; NaN for a
    worker without answers), shape (2, n_workers)."""
    from assignment.services import project_data_import

    rng = np.random.default_rng(seed)
    n, m = args.workers, args.tasks
    accuracy = rng.uniform(args.low, args.high, n)
    truth = rng.integers(0, 2, m)
    answers = []
    right, given = np.zeros(n), np.zeros(n)
    for j in range(m):
        for i in rng.choice(n, size=args.per_task, replace=False):
            correct = rng.random() < accuracy[i]
            label = truth[j] if correct else 1 - truth[j]
            answers.append(f"w{i},t{j},{label}")
            right[i] += correct
            given[i] += 1
    gold = rng.integers(0, 2, args.items)
    gold_answers = []
    right_gold = np.zeros(n)
    for i in range(n):
        for k in rng.choice(args.items, size=args.gold_per_worker, replace=False):
            correct = rng.random() < accuracy[i]
            label = gold[k] if correct else 1 - gold[k]
            gold_answers.append(f"w{i},g{k},{label}")
            right_gold[i] += correct
    files = {
        "workers": csv_file("worker_id", (f"w{i}" for i in range(n))),
        "tasks": csv_file("task_id,category", (f"t{j},c{j % args.categories}" for j in range(m))),
        "gold_items": csv_file(
            "item_id,category,true_label",
            (f"g{k},c{k % args.categories},{gold[k]}" for k in range(args.items)),
        ),
        "gold_answers": csv_file("worker_id,item_id,answer", gold_answers),
        "answers": csv_file("worker_id,task_id,answer", answers),
    }
    for kind, data in files.items():
        project_data_import(project=project, kind=kind, file=data, file_name=f"{kind}.csv")
    with np.errstate(invalid="ignore"):
        measured = right / given, (right + right_gold) / (given + args.gold_per_worker)
    return accuracy, np.array(measured)


def truth_known(true_accuracy: np.ndarray, measured: np.ndarray) -> tuple[float, float]:
    """Correlation and mean absolute error of the accuracies measured on the collected answers
    with every truth known, over the workers with answers: the most any estimate from those
    answers can reach, since the binomial noise of a worker's few answers remains."""
    has = ~np.isnan(measured)
    corr = float(np.corrcoef(measured[has], true_accuracy[has])[0, 1])
    return corr, float(np.abs(measured[has] - true_accuracy[has]).mean())


def benchmark(args) -> str:
    from django.contrib.auth import get_user_model

    from assignment.services import project_create, project_delete, quality_estimate

    user = get_user_model().objects.create_user(USERNAME)
    results: dict[tuple, list[tuple[float, float, int | None, bool | None, float]]] = {
        estimate: [] for estimate in ESTIMATES
    }
    ceiling = []
    try:
        for seed in range(args.seeds):
            project = project_create(owner=user, name=f"crowd {seed}")
            true_accuracy, measured = fill(project, args, seed)
            ceiling.append([truth_known(true_accuracy, share) for share in measured])
            for source, model in ESTIMATES:
                start = time.perf_counter()
                matrix = quality_estimate(project=project, source=source, model=model)
                seconds = time.perf_counter() - start
                # Rows are workers in primary-key order: w0, w1, ... as imported.
                estimated = matrix.values.mean(axis=1)
                details = matrix.details
                results[(source, model)].append(
                    (
                        float(np.corrcoef(estimated, true_accuracy)[0, 1]),
                        float(np.abs(estimated - true_accuracy).mean()),
                        details.get("iterations"),
                        details.get("converged"),
                        seconds,
                    )
                )
            progress(f"seed {seed} done")
            project_delete(project=project)
    finally:
        for owned in user.projects.all():
            project_delete(project=owned)
        user.delete()
    lines = [
        f"{args.workers} workers (true accuracy uniform in [{args.low}, {args.high}]), "
        f"{args.tasks:,} binary tasks in {args.categories} categories answered by "
        f"{args.per_task} workers each ({args.tasks * args.per_task // args.workers} collected "
        f"answers a worker on average), {args.gold_per_worker} gold answers a worker on "
        f"{args.items} gold items; mean over {args.seeds} seeds, on {database()}:",
        "",
        "| source | model | correlation with true accuracy (lowest) | mean abs. error "
        "| EM iterations | converged | seconds |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (source, model), rows in results.items():
        corr, error, iterations, converged, seconds = zip(*rows, strict=True)
        em = model is not None
        lines.append(
            f"| {source} | {model or '(counted)'} | {np.mean(corr):.3f} ({min(corr):.3f}) "
            f"| {np.mean(error):.3f} | {np.mean(iterations) if em else 0:.0f} "
            f"| {f'{sum(converged)}/{len(rows)}' if em else '-'} | {np.mean(seconds):.2f} |"
        )
    for k, source in enumerate(("answers", "both")):
        corr, error = zip(*(seed_rows[k] for seed_rows in ceiling), strict=True)
        lines.append(
            f"| {source}, every truth known (its ceiling) | - | {np.mean(corr):.3f} "
            f"({min(corr):.3f}) | {np.mean(error):.3f} | - | - | - |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=2_000)
    parser.add_argument("--categories", type=int, default=4)
    parser.add_argument("--per-task", type=int, default=5, help="collected answers per task")
    parser.add_argument("--items", type=int, default=50, help="gold items")
    parser.add_argument("--gold-per-worker", type=int, default=10, help="gold answers a worker")
    parser.add_argument("--low", type=float, default=0.55, help="lowest true accuracy")
    parser.add_argument("--high", type=float, default=0.95, help="highest true accuracy")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--output", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    if not 0 < args.per_task <= args.workers:
        parser.error("--per-task must be between 1 and --workers")
    if not 0 < args.gold_per_worker <= args.items:
        parser.error("--gold-per-worker must be between 1 and --items")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    return report_on_a_fresh_database(
        prefix="tvcs-quality-from-answers-", make_report=lambda: benchmark(args), output=args.output
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
