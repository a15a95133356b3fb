"""How often a run's progress moves (a benchmark, not a test).

A run's page shows a progress bar fed by the method's ``progress(fraction, message)`` calls.
For each method in ``--methods`` this solves one problem of ``--workers`` x ``--tasks``
(quality uniform in [0.5, 0.95], 3 workers per task, budget ``--per-task`` per task; the
kernels compiled first by :func:`assignment.engine.warm_up.warm_up`) and records every call.
It reports the run's seconds, the number of calls, the longest wait between two calls (from
the start to the first call, between calls, from the last call to the end) in seconds, and the
largest jump of the fraction. The goal: progress moves at least every 2 seconds or every 5%.

Run from the repository root::

    python benchmarks/progress.py                                # 200 x 10,000
    python benchmarks/progress.py --workers 100 --tasks 1000 --per-task 1
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

from assignment.engine import AssignmentProblem, solve
from assignment.engine.warm_up import warm_up


def record(problem: AssignmentProblem, method: str) -> dict:
    calls: list[tuple[float, float]] = []
    started = time.perf_counter()
    solve(
        problem,
        method=method,
        seed=1,
        progress=lambda fraction, _message: calls.append((time.perf_counter(), fraction)),
    )
    ended = time.perf_counter()
    times = [started] + [t for t, _ in calls] + [ended]
    fractions = [0.0] + [f for _, f in calls] + [1.0]
    return {
        "seconds": ended - started,
        "calls": len(calls),
        "longest_wait": max(b - a for a, b in itertools.pairwise(times)),
        "largest_jump": max(b - a for a, b in itertools.pairwise(fractions)),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--per-task", type=float, default=2.0, help="budget per task")
    parser.add_argument("--methods", default="tvcs-iht,random,q-lp,greedy")
    args = parser.parse_args(argv)
    warm_up()
    n, m = args.workers, args.tasks
    rng = np.random.default_rng(0)
    problem = AssignmentProblem(
        rng.uniform(0.5, 0.95, (n, m)),
        max_workers_per_task=3,
        max_tasks_per_worker=max(1, 6 * m // n),
        budget=int(args.per_task * m),
    )
    print(
        f"# progress of one run, {n} x {m}, budget {problem.budget}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores\n"
    )
    print("| method | run s | calls | longest wait s | largest jump |")
    print("|---|---:|---:|---:|---:|")
    for method in args.methods.split(","):
        r = record(problem, method)
        print(
            f"| {method} | {r['seconds']:.1f} | {r['calls']} | {r['longest_wait']:.2f} | "
            f"{100 * r['largest_jump']:.0f}% |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
