"""DS greedy against one-coin greedy at scale: time and peak memory, each in its own process.

What it generates
-----------------
For each ``K`` (``--labels``, default 2 and 3) and cap ratio ``r`` (``--ratios``, default 0.02
and 0.05): ``--workers`` x ``--tasks`` (default 200 x 10,000) crowds of the three kinds of
worker of ``benchmarks/greedy_confusion.py`` (:func:`~benchmarks.confusion_crowds.crowd`), each
task's prior Dirichlet(20 b) around the skewed base ``b`` proportional to ``K, ..., 1``, drawn
from ``np.random.default_rng([seed, K, n, m])``. Caps and budget as ``benchmarks/scale.py``::

    max_workers_per_task = max(1, round(r n)),   max_tasks_per_worker = max(1, round(r m)),
    budget = floor(0.8 min(m max_workers_per_task, n max_tasks_per_worker)).

(DS greedy gives a task at most :func:`~assignment.engine.greedy_confusion.max_confusion_workers`
workers: 12 for two labels, 7 for three.)

What it measures
----------------
* **DS greedy**: :func:`~assignment.engine.greedy_confusion.greedy_confusion` on the problem
  with the matrices;
* **one-coin greedy**: :func:`~assignment.engine.greedy.greedy_pairs` on the same problem
  without them (quality ``Q[i, j] = sum_c pi_jc C_i[c, c]``).

Each greedy runs in a process of its own (``benchmarks/child_runs.py``) after compiling its
kernels on a tiny crowd: wall seconds of the greedy call alone, its peak memory above the
built instance (``VmHWM``), its CPU seconds (``time.process_time``: less sensitive than wall
time to other work on a shared machine; the DS / one-coin ratio is of these), pairs assigned,
and the exact accuracy of the Dawid-Skene vote of
its assignment under the matrices (computed after the timing). ``--digest`` adds a SHA-256 of
the assignment's pairs (to compare engines).

Run from the repository root::

    nice -n 10 python benchmarks/greedy_confusion_scale.py
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assignment.engine.problem import AssignmentProblem  # noqa: E402
from benchmarks.child_runs import (  # noqa: E402
    header,
    proc_status_kb,
    reset_peak,
    result_line,
    ru_maxrss_kb,
    run_child,
)
from benchmarks.confusion_crowds import crowd, ds_accuracy, skewed_priors  # noqa: E402

METHODS = ("ds", "one-coin")


def instance(seed: int, k: int, ratio: float, n: int, m: int) -> AssignmentProblem:
    """The crowd and caps of the module docstring."""
    rng = np.random.default_rng([seed, k, n, m])
    prior = skewed_priors(rng, k, m)
    confusion = crowd(rng, n, k)
    per_task, per_worker = max(1, round(ratio * n)), max(1, round(ratio * m))
    return AssignmentProblem(
        np.einsum("jc,icc->ij", prior, confusion),
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=math.floor(0.8 * min(m * per_task, n * per_worker)),
        prior=prior,
        n_labels=k,
        confusion=confusion,
    )


def _greedy(method: str):
    from assignment.engine.greedy import greedy_pairs
    from assignment.engine.greedy_confusion import greedy_confusion

    if method == "ds":
        return greedy_confusion
    return lambda problem: greedy_pairs(problem.symmetric())


def child(spec: dict) -> dict:
    """Compile, build the instance, run one greedy; the measured fields."""
    run = _greedy(spec["method"])
    run(instance(0, spec["k"], 0.2, 10, 30))
    problem = instance(spec["seed"], spec["k"], spec["ratio"], spec["n"], spec["m"])
    gc.collect()
    hwm = reset_peak()
    baseline_kb = proc_status_kb("VmRSS") if hwm else ru_maxrss_kb()
    print(
        "CHILD-BASELINE "
        + json.dumps({"baseline_kb": baseline_kb, "hwm": hwm, "time": time.time()}),
        flush=True,
    )
    start, cpu = time.perf_counter(), time.process_time()
    out = run(problem)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak_kb = proc_status_kb("VmHWM") if hwm else ru_maxrss_kb()
    rows, cols = np.asarray(out.rows, np.int64), np.asarray(out.cols, np.int64)
    digest = hashlib.sha256(rows.tobytes() + cols.tobytes()).hexdigest()[:16]
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "extra_mb": max(0, peak_kb - baseline_kb) / 1024,
        "peak_method": "VmHWM" if hwm else "ru_maxrss",
        "pairs": int(rows.shape[0]),
        "budget": problem.budget,
        "ds_accuracy": ds_accuracy(problem, rows, cols),
        "digest": digest,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--labels", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--ratios", type=float, nargs="+", default=[0.02, 0.05])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--digest", action="store_true", help="show the pairs' SHA-256 prefix")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(result_line(child(json.loads(args.child))), flush=True)
        return
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    lines = header("DS greedy against one-coin greedy at scale", sys.argv, load)
    lines += [
        "| K | r | budget | method | pairs | seconds | CPU s | peak MB | DS-vote accuracy | "
        "DS / one-coin CPU time |" + (" digest |" if args.digest else ""),
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|" + ("---|" if args.digest else ""),
    ]
    for k in args.labels:
        for ratio in args.ratios:
            rows = {}
            for method in METHODS:
                spec = {"n": args.workers, "m": args.tasks, "k": k, "ratio": ratio}
                spec |= {"seed": args.seed, "method": method}
                print(f"K {k} r {ratio} {method} ...", file=sys.stderr, flush=True)
                rows[method] = run_child(
                    Path(__file__).resolve(), spec, args.timeout, n_pairs=args.workers * args.tasks
                )
                print(f"  {rows[method]}", file=sys.stderr, flush=True)
            ratio_text = f"{rows['ds']['cpu_seconds'] / rows['one-coin']['cpu_seconds']:.1f}x"
            for method in METHODS:
                row = rows[method]
                lines.append(
                    f"| {k} | {ratio:g} | {row['budget']:,} | {method} greedy | {row['pairs']:,} | "
                    f"{row['seconds']:.1f} | {row['cpu_seconds']:.1f} | {row['extra_mb']:.0f} | "
                    f"{row['ds_accuracy']:.4f} | "
                    + (ratio_text if method == "ds" else "")
                    + " |"
                    + (f" {row['digest']} |" if args.digest else "")
                )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
