"""The first run after a fresh install against a warm one (a benchmark, not a test).

What it measures
----------------
numba compiles the numeric kernels on first call and caches them on disk. A fresh install has
no cache: before :mod:`assignment.engine.warm_up`, its first run paid the whole compilation.
For each method in ``--methods`` this starts two fresh interpreters, each with an empty numba
cache of its own (``NUMBA_CACHE_DIR`` in a temporary folder), on the demo problem's shape
(``--workers`` x ``--tasks``, quality uniform in [0.5, 0.95], 3 workers per task, budget 2 per
task):

* ``no warm-up``: the first solve, then a second one on another problem of the same size (what
  a user saw before: the first run compiles);
* ``warm-up``: first ``python -m assignment.engine.warm_up`` in a process of its own on that
  cache (what a worker does when it starts, before its pool starts), then the same two solves
  in a fresh interpreter, whose first solve loads the kernels from the cache;
* ``warm-up, pool loads``: the same, but the fresh interpreter first calls
  :func:`~assignment.engine.warm_up.warm_up` itself, as each pool process of a worker does as
  it starts, before it takes a run (``assignment.tasks._load_kernels``); the seconds of that
  load are reported apart.

It reports the seconds of the warm-up, of the pool process's load, of the first and of the
second solve, and the ratio first / second (the goal: at most 1.5 with the warm-up).

Run from the repository root::

    python benchmarks/first_run.py                              # 100 x 1,000, every method
    python benchmarks/first_run.py --workers 200 --tasks 10000 --methods tvcs-iht,greedy
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    from assignment.engine import AssignmentProblem, solve

    method, n, m, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    out = {"load": 0.0}
    if mode == "load":  # what a pool process does as it starts (assignment.tasks._load_kernels)
        from assignment.engine.warm_up import warm_up
        started = time.perf_counter()
        warm_up()
        out["load"] = time.perf_counter() - started
    for key, seed in (("first", 1), ("second", 2)):
        rng = np.random.default_rng(seed)
        problem = AssignmentProblem(
            rng.uniform(0.5, 0.95, (n, m)), max_workers_per_task=3,
            max_tasks_per_worker=max(1, 6 * m // n), budget=2 * m,
        )
        started = time.perf_counter()
        solve(problem, method=method, seed=seed)
        out[key] = time.perf_counter() - started
    print(json.dumps(out))
    """
)


#: The rows of the table: ``(name, warm-up subprocess first, what the solving process does
#: first)``: nothing, or load the kernels as a pool process does.
STARTS = (
    ("no warm-up", False, "none"),
    ("warm-up", True, "none"),
    ("warm-up, pool loads", True, "load"),
)


def measure(method: str, n: int, m: int, with_warm_up: bool, mode: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="tvcs-numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
        started = time.perf_counter()
        if with_warm_up:
            warm = [sys.executable, "-m", "assignment.engine.warm_up"]
            subprocess.run(warm, cwd=ROOT, env=env, check=True)
        warm_up_seconds = time.perf_counter() - started if with_warm_up else 0.0
        child = subprocess.run(
            [sys.executable, "-c", CHILD, method, str(n), str(m), mode],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return {"warm_up": warm_up_seconds, **json.loads(child.stdout.strip().splitlines()[-1])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--methods", default="tvcs-iht,random,q-lp,greedy")
    args = parser.parse_args(argv)
    print(
        f"# first run on an empty numba cache, {args.workers} x {args.tasks}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores\n"
    )
    print(
        "| method | start | warm-up s | pool load s | first run s | second run s | first / second |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for method in args.methods.split(","):
        for name, with_warm_up, mode in STARTS:
            t = measure(method, args.workers, args.tasks, with_warm_up, mode)
            print(
                f"| {method} | {name} | {t['warm_up']:.1f} | {t['load']:.2f} | "
                f"{t['first']:.2f} | {t['second']:.2f} | {t['first'] / t['second']:.2f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
