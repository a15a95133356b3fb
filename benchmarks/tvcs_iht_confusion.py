"""tvcs-iht under Dawid–Skene confusion matrices beside DS greedy and the one-coin greedy.

The crowds, priors, caps and budgets are those of :mod:`benchmarks.greedy_confusion` (three
kinds of worker, skewed Dirichlet priors, at most 6 workers a task, ``r`` answers a task).
Three methods per crowd:

* **one-coin greedy**: :func:`assignment.engine.greedy.greedy_pairs` on the problem without
  its matrices;
* **DS greedy**: :func:`assignment.engine.greedy_confusion.greedy_confusion`;
* **tvcs-iht**: ``solve(problem, method="tvcs-iht", seed=seed)`` with the matrices and default
  options: DS greedy, its final pass under the matrices (``refine_rounds`` destroy-and-repair
  rounds, 2 by default), and the symmetric search, the better under the matrices kept.
  ``--rounds`` adds a column of tvcs-iht with more rounds.

Accuracies are exact expected accuracies of the Dawid–Skene vote under the matrices, mean ±
sd over ``--seeds`` crowds, and the paired difference tvcs-iht − DS greedy per crowd. Seconds
are wall-clock of each call in one process (numba kernels compiled first). A last table runs DS
greedy and tvcs-iht on tiny crowds (4 workers, 2 tasks, budget 5) against the brute-force
optimum.

Run from the repository root::

    nice -n 10 python benchmarks/tvcs_iht_confusion.py
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assignment.engine.greedy import greedy_pairs  # noqa: E402
from assignment.engine.greedy_confusion import greedy_confusion  # noqa: E402
from assignment.engine.solve import solve  # noqa: E402
from benchmarks.confusion_crowds import brute_force_optimum, ds_accuracy  # noqa: E402
from benchmarks.greedy_confusion import (  # noqa: E402
    add_crowd_options,
    instance,
    mean_sd,
    timed,
    tiny_problem,
)


def methods(rounds: int | None) -> dict:
    """Name -> ``run(problem, seed)`` returning ``(rows, cols, kept)``."""

    def one_coin(problem, seed):
        out = greedy_pairs(problem.symmetric())
        return out.rows, out.cols, ""

    def ds_greedy(problem, seed):
        out = greedy_confusion(problem)
        return out.rows, out.cols, ""

    def tvcs(**options):
        def run(problem, seed):
            out = solve(problem, method="tvcs-iht", seed=seed, **options)
            return out.rows, out.cols, out.details["kept"]

        return run

    found = {"one-coin greedy": one_coin, "DS greedy": ds_greedy, "tvcs-iht": tvcs()}
    if rounds is not None:
        found[f"tvcs-iht, {rounds} rounds"] = tvcs(refine_rounds=rounds)
    return found


def one_crowd(seed: int, k: int, r: int, args, runs: dict) -> dict:
    problem = instance(seed, k, r, args.workers, args.tasks)
    row = {}
    for name, run in runs.items():
        (rows, cols, kept), seconds = timed(run, problem, seed)
        row[name] = (ds_accuracy(problem, rows, cols), seconds, kept)
    return row


def tiny(seeds: int, runs: dict) -> dict:
    """Each method's loss to the brute-force optimum on the tiny crowds."""
    gaps = {name: [] for name in runs}
    for seed in range(seeds):
        problem = tiny_problem(seed)
        optimum = brute_force_optimum(problem)
        for name, run in runs.items():
            rows, cols, _ = run(problem, seed)
            gaps[name].append(optimum - ds_accuracy(problem, rows, cols))
    return {name: np.array(v) for name, v in gaps.items()}


def crowd_rows(results: dict, names: list) -> list[str]:
    lines = [
        "| K | answers a task | "
        + " | ".join(f"{name}, exact" for name in names)
        + " | tvcs-iht minus DS greedy | kept (final pass / search) | "
        + " | ".join(f"{name}, s" for name in names)
        + " |",
        "|---:|---:|" + "---:|" * (2 * len(names) + 2),
    ]
    for (k, r), crowds in results.items():
        acc = {name: np.array([row[name][0] for row in crowds]) for name in names}
        secs = {name: np.array([row[name][1] for row in crowds]) for name in names}
        kept = [row["tvcs-iht"][2] for row in crowds]
        lines.append(
            f"| {k} | {r} | "
            + " | ".join(mean_sd(acc[name]) for name in names)
            + f" | {mean_sd(acc['tvcs-iht'] - acc['DS greedy'])} | "
            + f"{kept.count('final pass')} / {kept.count('search')} | "
            + " | ".join(f"{secs[name].mean():.2f}" for name in names)
            + " |"
        )
    return lines


def report(results: dict, small: dict, args, seconds: float) -> list[str]:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    names = list(small)
    lines = [
        f"Measured {datetime.date.today()} with `nice -n 10 python {' '.join(sys.argv)}` "
        f"(commit {commit}, {platform.machine()}, {os.cpu_count()} cores shared with other work, "
        f"load average {load:.1f}; {seconds:.0f} s in all). {args.workers} workers x "
        f"{args.tasks} tasks, {args.seeds} crowds per row (seeds 0-{args.seeds - 1}); exact "
        "accuracy of the Dawid-Skene vote under the crowd's matrices, mean ± sd; the "
        "difference is paired by crowd; seconds are the mean wall-clock of each call.",
        "",
        *crowd_rows(results, names),
        "",
        f"Tiny crowds against the brute-force optimum ({args.tiny} crowds, K = 2, 3, 4 in turn; "
        "4 workers, 2 tasks, budget 5, at most 3 workers a task and 2 tasks a worker):",
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
        "| mean loss to the optimum | "
        + " | ".join(f"{small[n].mean():.4f}" for n in names)
        + " |",
        "| largest loss | " + " | ".join(f"{small[n].max():.4f}" for n in names) + " |",
        "| crowds solved optimally | "
        + " | ".join(str(int(np.sum(small[n] <= 1e-12))) for n in names)
        + " |",
    ]
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_crowd_options(parser)
    parser.add_argument("--rounds", type=int, help="add tvcs-iht with this many rounds")
    parser.add_argument("--tiny", type=int, default=60)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    runs = methods(args.rounds)
    one_crowd(0, 3, 2, argparse.Namespace(workers=10, tasks=10), runs)  # compile first
    results = {}
    for k in args.labels:
        for r in args.answers:
            results[(k, r)] = [one_crowd(seed, k, r, args, runs) for seed in range(args.seeds)]
            print(f"K = {k}, r = {r}: done", file=sys.stderr, flush=True)
    small = tiny(args.tiny, runs)
    print("\n".join(report(results, small, args, time.perf_counter() - started)))


if __name__ == "__main__":
    main()
