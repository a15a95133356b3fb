"""Issue 12, goal 3: time, peak memory and accuracy of every method as problems grow (a benchmark).

Instances (``--sizes``, comma-separated; ``@r`` after one sets its own cap ratio):

* ``NxM``: dense quality, ``Q ~ U[0.5, 0.9]`` i.i.d. as in Figure 4, drawn from
  ``np.random.default_rng([seed, n, m])``;
* ``NxMxC``: quality by category, a worker x category table ``T ~ U[0.5, 0.9]`` and each
  task's category uniform in ``[0, C)``, drawn from ``np.random.default_rng([seed, n, m, c])``,
  given to the engine as a :class:`~assignment.engine.problem.QualityByCategory` (so
  ``Q[i, j] = T[i, c_j]`` is never built unless a method asks for it).

Caps as in Figure 4 with the cap ratio ``r`` (``--ratio``)::

    max_workers_per_task = max(1, round(r * n))
    max_tasks_per_worker = max(1, round(r * m))
    budget               = floor(0.8 * min(m * max_workers_per_task, n * max_tasks_per_worker))

Each method (``--methods``) runs on each instance and seed (``range(--seeds)``) in a process of
its own (``benchmarks/child_runs.py``), one at a time, after loading its kernels on a tiny
instance; measured: accuracy (exact, or estimated where a task has more than 20 workers),
the solve's seconds, and its peak memory above the built instance (MB and bytes per pair,
``/ (n * m)``). A child still running after ``--timeout`` seconds (default 1200: the issue's
20 minutes) is stopped and recorded as timed out, with lower bounds; one that fails (beyond
``--memory-limit-gb`` of address space, default 12, or an exception) is reported with its last
error line.

The report (stdout, and ``--out``) has one table per instance and a least-squares slope of
log(seconds) against log(pairs) per method over the instances it finished (1 means linear in
``n * m``). Every finished run is appended as one JSON line to ``--results`` (default
``benchmarks/out/scale.jsonl``) and not run again on a restart (``--fresh`` starts over).

Run from the repository root::

    python benchmarks/scale.py --sizes 200x10000,500x50000 --methods greedy,tvcs-iht
    python benchmarks/scale.py --sizes 2000x200000x20@0.005 --methods greedy
    python benchmarks/scale.py --out docs/benchmarks/scale.md      # the default grid: hours
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from assignment.engine.problem import AssignmentProblem, QualityByCategory  # noqa: E402
from assignment.engine.solve import METHODS  # noqa: E402
from benchmarks.child_runs import (  # noqa: E402
    code_version,
    header,
    measure_solve,
    result_line,
    run_child,
)
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402
from benchmarks.results_file import append_row, load_rows, set_aside  # noqa: E402

DEFAULT_SIZES = "200x10000,500x50000,1000x100000,2000x200000x20,10000x1000000x50"
DEFAULT_RESULTS = ROOT / "benchmarks" / "out" / "scale.jsonl"


def parse_size(text: str, ratio: float) -> tuple[int, int, int | None, float]:
    """``NxM`` or ``NxMxC``, optionally ``@r``, as ``(n, m, categories or None, r)``."""
    size, _, own_ratio = text.lower().partition("@")
    parts = [int(x) for x in size.split("x")]
    if len(parts) not in (2, 3) or min(parts) < 1:
        raise ValueError(f"{text!r}: a size is NxM or NxMxC with positive numbers")
    r = float(own_ratio) if own_ratio else ratio
    if not 0 < r <= 1:
        raise ValueError(f"{text!r}: the cap ratio must be in (0, 1]")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None, r


def size_name(n: int, m: int, categories: int | None) -> str:
    return f"{n}x{m}" if categories is None else f"{n}x{m}x{categories}"


def make_problem(n: int, m: int, categories: int | None, ratio: float, seed: int):
    per_task = max(1, round(ratio * n))
    per_worker = max(1, round(ratio * m))
    budget = math.floor(0.8 * min(m * per_task, n * per_worker))
    if categories is None:
        quality = np.random.default_rng([seed, n, m]).uniform(0.5, 0.9, (n, m))
    else:
        rng = np.random.default_rng([seed, n, m, categories])
        quality = QualityByCategory(
            rng.uniform(0.5, 0.9, (n, categories)), rng.integers(0, categories, m)
        )
    return AssignmentProblem(
        quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        prior=0.5,
    )


def child(spec: dict) -> dict:
    """Load the method's kernels, build the instance, solve once; the measured fields.

    The process's address space is limited to ``spec["memory_limit_gb"]``: a method that needs
    more fails with a ``MemoryError`` instead of pushing the machine into its out-of-memory
    killer."""
    import resource

    from assignment.engine.solve import solve
    from assignment.engine.warm_up import warm_up

    limit = int(spec["memory_limit_gb"] * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    warm_up(methods=[spec["method"]])
    solve(make_problem(6, 30, spec["categories"] and 2, 0.2, 0), method=spec["method"], seed=0)
    problem = make_problem(spec["n"], spec["m"], spec["categories"], spec["ratio"], spec["seed"])
    cpu = time.process_time()
    measured = measure_solve(problem, method=spec["method"], seed=spec["seed"])
    # CPU seconds of the solve (and its measurement): less sensitive than wall time to other
    # work on a shared machine, so old and new engines can be compared in one period.
    return measured | {"cpu_seconds": time.process_time() - cpu}


def row_key(row: dict) -> tuple:
    return (row["size"], f"{row['ratio']:g}", row["seed"], row["method"])


def run_all(sizes, methods, seeds, timeout, memory_limit_gb, results: Path) -> dict:
    rows = load_rows(results, key=row_key)
    commit = code_version()
    for n, m, categories, ratio in sizes:
        name = size_name(n, m, categories)
        for method in methods:
            for seed in seeds:
                key = (name, f"{ratio:g}", seed, method)
                if key in rows:
                    continue
                spec = {"n": n, "m": m, "categories": categories, "ratio": ratio}
                spec |= {"seed": seed, "method": method, "memory_limit_gb": memory_limit_gb}
                print(f"{name} seed {seed} {method} ...", file=sys.stderr, flush=True)
                try:
                    measured = run_child(Path(__file__).resolve(), spec, timeout, n_pairs=n * m)
                except RuntimeError as exc:
                    measured = {"failed": str(exc), "expected_accuracy": None, "seconds": None}
                row = {"size": name, **spec, **measured, "code": commit}
                row["date"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
                append_row(results, row)
                rows[key] = row
                print(f"  {outcome(row)}", file=sys.stderr, flush=True)
    return rows


def outcome(row: dict) -> str:
    if row.get("failed"):
        return f"failed: {row['failed']}"
    if row.get("timed_out"):
        return f"stopped after {row['seconds_at_least']:.0f} s"
    return f"accuracy {row['expected_accuracy']:.4f} in {row['seconds']:.1f} s"


def cell(value, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log(seconds) against log(pairs)."""
    if len(points) < 2:
        return None
    x, y = np.log([p for p, _ in points]), np.log([s for _, s in points])
    return float(np.polyfit(x, y, 1)[0])


def report(rows: dict, sizes, methods, seeds) -> list[str]:
    lines = []
    timing: dict[str, list[tuple[float, float]]] = {method: [] for method in methods}
    for n, m, categories, ratio in sizes:
        name = size_name(n, m, categories)
        kind = "dense" if categories is None else f"{categories} categories"
        lines += [f"## {name} ({kind}, r = {ratio:g})", ""]
        lines += [
            "| method | seed | accuracy | seconds | CPU s | peak MB | bytes / pair | outcome |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for method in methods:
            for seed in seeds:
                row = rows.get((name, f"{ratio:g}", seed, method))
                if row is None:
                    continue
                seconds = row.get("seconds")
                if seconds is None and row.get("seconds_at_least") is not None:
                    shown = f"> {row['seconds_at_least']:.0f}"
                else:
                    shown = cell(seconds, ".1f")
                if seconds is not None:
                    timing[method].append((n * m, seconds))
                message = row.get("failed") or row.get("message") or ""
                lines.append(
                    f"| {method} | {seed} | {cell(row.get('expected_accuracy'), '.4f')} "
                    f"| {shown} | {cell(row.get('cpu_seconds'), '.1f')} "
                    f"| {cell(row.get('extra_mb'), '.0f')} "
                    f"| {cell(row.get('bytes_per_pair'), '.1f')} | {message[:120]} |"
                )
        lines.append("")
    lines += ["## Time against pairs", ""]
    lines += ["| method | log-log slope | instances |", "|---|---:|---:|"]
    for method in methods:
        lines.append(f"| {method} | {cell(slope(timing[method]), '.2f')} | {len(timing[method])} |")
    return lines


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:  # internal: one run in this process, result on stdout
        print(result_line(child(json.loads(argv[1]))), flush=True)
        return
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="NxM or NxMxC, comma-separated")
    parser.add_argument("--ratio", type=float, default=0.01, help="cap ratio (default: 0.01)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0 .. SEEDS-1 (default: 1)")
    parser.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per run")
    parser.add_argument(
        "--memory-limit-gb",
        type=float,
        default=12.0,
        help="address-space limit of each run, GiB (default: %(default)s, the issue's bound)",
    )
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--fresh", action="store_true", help="move old results to *.bak")
    parser.add_argument(
        "--report-only", action="store_true", help="run nothing: report the results file"
    )
    add_out_option(parser)
    args = parser.parse_args(argv)
    try:
        sizes = [parse_size(s, args.ratio) for s in args.sizes.split(",") if s]
    except ValueError as exc:
        parser.error(str(exc))
    methods = [x.strip() for x in args.methods.split(",") if x.strip()]
    if not methods or set(methods) - set(METHODS):
        parser.error(f"--methods: choose from {', '.join(METHODS)}")
    if not 0 < args.ratio <= 1 or args.seeds < 1 or args.timeout <= 0:
        parser.error("--ratio must be in (0, 1]; --seeds and --timeout positive")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        set_aside(args.results)
    seeds = list(range(args.seeds))
    if args.report_only:
        rows = load_rows(args.results, key=row_key)
    else:
        rows = run_all(sizes, methods, seeds, args.timeout, args.memory_limit_gb, args.results)
    title = "Issue 12, goal 3: time, memory and accuracy as problems grow"
    lines = header(title, sys.argv, load) + report(rows, sizes, methods, seeds)
    publish(lines, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
