"""Side-by-side timing of the TVCS projection methods (a benchmark, not a test).

What it measures
----------------
On random instances -- an n x m matrix V ~ N(0, 1) (n workers = rows, m tasks = columns, as in
docs/design.md#the-assignment-problem; ``--weights lognormal``: exp(2 N(0, 1)), heavy-tailed;
``--weights rank1``: outer(a, b), a ~ U[0, 1] per row, b ~ U[0.2, 1] per column, the square root
of q-lp's weights on skill x difficulty quality, where every column ranks the rows alike),
per-row caps uniform in
[1, m/4], per-column caps uniform in [1, n/4], and a large and a small budget, floor(0.8 * C)
and floor(0.1 * C) with C = min(sum of row caps, sum of column caps) -- it runs:

* ``exact``, ``greedy``, ``lp``, ``pgd``: ours, through ``projections.tvcs.project_matrix``
  (timed around the whole call);
* ``ortools``: the reference, OR-Tools' C++ min-cost flow on the full graph (source -> row i,
  cap a_i; row i -> column j, cap 1, cost -round(v_ij^2 * scale); column j -> sink, cap b_j;
  a source -> sink bypass of cap ``total``), timed as graph build + solve + reading the flows
  back (build and solve are also shown apart); its objective is recomputed in float from the
  selected entries, not taken from the scaled integer cost;
* ``argpartition``: one ``np.argpartition`` pass over the flattened v**2 matrix, the
  memory-bound floor (it ignores the row and column caps, so it has no gap or feasibility).

Every (instance, method) runs in a fresh child process (this script re-invoked with a hidden
``--child`` flag), which first warms the method up on a tiny instance (so Numba compilation is
not timed), then generates the instance from the seed (all methods see the same instance), then
runs the method ``--repeats`` times (``pgd`` once: it stops on its own time limit). The table
gives the median wall time, the ratio to ``exact``'s time (> 1: exact is faster), the objective
gap (best - objective) / best against the best feasible objective any method found on that
instance, the optimal flag and message, and the peak resident memory above the input (Linux:
the peak mark is reset through /proc/self/clear_refs once the instance exists). ``lp`` and
``pgd`` are slow, so they are skipped on instances with more than ``--slow-limit`` entries.
A method whose module has not landed yet is skipped with a note; a support that breaks a cap is
flagged INFEASIBLE and left out of the best objective.

Run from the repository root (the script puts the root on ``sys.path``, so the project need
not be installed)::

    python benchmarks/projection.py                                  # all sizes, ~minutes
    python benchmarks/projection.py --sizes 100x1000 --repeats 1     # quick check
    python benchmarks/projection.py --methods exact,ortools --out results.md
    python benchmarks/projection.py --weights lognormal --methods exact,ortools,argpartition
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.child_runs import header, memory_mib, reset_peak_memory  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402

OURS = ("exact", "greedy", "lp", "pgd")
METHODS = (*OURS, "ortools", "argpartition")
SLOW = ("lp", "pgd")
BUDGETS = {"large": 0.8, "small": 0.1}
WEIGHTS = ("normal", "lognormal", "rank1")


def make_instance(n_rows: int, n_cols: int, seed: int, weights: str = "normal"):
    """Return ``V, row_caps, col_caps, totals`` (``totals`` maps budget name to the total cap).

    ``weights="lognormal"``: ``V = exp(2 Z)`` instead of ``Z`` (heavy tails: ``V ** 2`` spans
    some 60 octaves at 1,000 x 10,000); ``weights="rank1"``: ``V = outer(a, b)`` with
    ``a ~ U[0, 1]``, ``b ~ U[0.2, 1]`` (rank one: every column ranks the rows alike). The caps
    and budgets are the same.
    """
    rng = np.random.default_rng([seed, n_rows, n_cols])
    V = rng.standard_normal((n_rows, n_cols))
    if weights == "lognormal":
        V = np.exp(2 * V)
    elif weights == "rank1":
        V = np.outer(rng.uniform(0.0, 1.0, n_rows), rng.uniform(0.2, 1.0, n_cols))
    elif weights != "normal":
        raise ValueError(f"unknown weights {weights!r}; choose from {', '.join(WEIGHTS)}")
    row_caps = rng.integers(1, max(1, n_cols // 4), size=n_rows, endpoint=True)
    col_caps = rng.integers(1, max(1, n_rows // 4), size=n_cols, endpoint=True)
    cap = min(int(row_caps.sum()), int(col_caps.sum()))
    totals = {name: max(1, int(np.floor(frac * cap))) for name, frac in BUDGETS.items()}
    return V, row_caps, col_caps, totals


def ortools_support(V, row_caps, col_caps, total):
    """Solve on the full graph with OR-Tools; return ``(support, build_seconds, solve_seconds)``."""
    from ortools.graph.python import min_cost_flow

    start = time.perf_counter()
    n, m = V.shape
    W = np.square(V).ravel()
    scale = 2.0**30 / W.max()  # |cost| <= 2**30: far from OR-Tools' int64 overflow checks
    source, sink = 0, n + m + 1
    rows = np.arange(1, n + 1, dtype=np.int32)
    cols = np.arange(n + 1, n + m + 1, dtype=np.int32)
    tails = np.concatenate([np.full(n, source), np.repeat(rows, m), cols, [source]], dtype=np.int32)
    heads = np.concatenate([rows, np.tile(cols, n), np.full(m, sink), [sink]], dtype=np.int32)
    caps = np.concatenate([row_caps, np.ones(n * m, np.int64), col_caps, [total]], dtype=np.int64)
    costs = np.zeros(n + n * m + m + 1, dtype=np.int64)
    costs[n : n + n * m] = -np.rint(W * scale)
    smcf = min_cost_flow.SimpleMinCostFlow()
    smcf.add_arcs_with_capacity_and_unit_cost(tails, heads, caps, costs)
    smcf.set_nodes_supplies(
        np.array([source, sink], dtype=np.int32), np.array([total, -total], dtype=np.int64)
    )
    del tails, heads, caps, costs
    built = time.perf_counter()
    status = smcf.solve()
    solved = time.perf_counter()
    if status != smcf.OPTIMAL:
        raise RuntimeError(f"OR-Tools min-cost flow ended with status {status}")
    flows = np.asarray(smcf.flows(np.arange(n, n + n * m, dtype=np.int32)))
    return (flows > 0).reshape(n, m), built - start, solved - built


def run_method(method, V, row_caps, col_caps, total, **options):
    """Run ``method`` once; return ``(seconds, support, optimal, message)``.

    ``support`` is None for ``argpartition``, which ignores the row and column caps.
    """
    start = time.perf_counter()
    if method == "ortools":
        support, build, solve = ortools_support(V, row_caps, col_caps, total)
        seconds = time.perf_counter() - start
        return seconds, support, True, f"build {build:.3f} s + solve {solve:.3f} s"
    if method == "argpartition":
        np.argpartition(np.square(V).ravel(), V.size - total)
        seconds = time.perf_counter() - start
        return seconds, None, False, "top-total v², no row/column caps (a floor, not feasible)"
    from projections.tvcs import project_matrix

    res = project_matrix(
        V, max_per_row=row_caps, max_per_col=col_caps, total=total, method=method, **options
    )
    seconds = time.perf_counter() - start
    return seconds, res.support, res.optimal, res.message


def measure(spec: dict) -> dict:
    """Child-process body: warm up, build the instance, time ``repeats`` runs of one method."""
    method, total_name = spec["method"], spec["budget"]
    V, row_caps, col_caps, totals = make_instance(8, 40, spec["seed"])
    warm_options = {"time_limit": 1.0} if method == "pgd" else {}
    run_method(method, V, row_caps, col_caps, totals["large"], **warm_options)  # JIT, imports

    V, row_caps, col_caps, totals = make_instance(
        spec["n"], spec["m"], spec["seed"], spec.get("weights", "normal")
    )
    total = totals[total_name]
    baseline = reset_peak_memory()
    times = []
    for _ in range(spec["repeats"]):
        out = None  # free the previous run's output before the next one
        out = run_method(method, V, row_caps, col_caps, total)
        times.append(out[0])
    peak = memory_mib()[0] - baseline
    _, support, optimal, message = out
    result = {"seconds": times, "optimal": bool(optimal), "message": message, "peak_mib": peak}
    if support is not None:
        result["objective"] = float(np.square(V)[support].sum())
        result["feasible"] = bool(
            (support.sum(axis=1) <= row_caps).all()
            and (support.sum(axis=0) <= col_caps).all()
            and support.sum() <= total
        )
    return result


def run_child(spec: dict, timeout: float) -> dict:
    """Run :func:`measure` in a fresh interpreter; errors come back as ``{"error": ...}``."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:g} s"}
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"]
        return {"error": lines[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def available(method: str) -> bool:
    if method in OURS:
        return importlib.util.find_spec(f"projections._{method}") is not None
    if method == "ortools":
        return importlib.util.find_spec("ortools") is not None
    return True


def table(rows: list[dict]) -> list[str]:
    """Markdown table; ``rows`` are dicts with size, budget, total, method and a child result."""
    lines = [
        "| size | budget (total) | method | median s | time / exact | gap | optimal | message "
        "| peak MiB |",
        "|---|---|---|---:|---:|---:|---|---|---:|",
    ]
    for row in rows:
        same = [r for r in rows if (r["size"], r["budget"]) == (row["size"], row["budget"])]
        best = max((r["objective"] for r in same if r.get("feasible")), default=None)
        exact = next((r for r in same if r["method"] == "exact" and "seconds" in r), None)
        cells = [row["size"], f"{row['budget']} ({row['total']:,})", row["method"]]
        if "error" in row:
            cells += ["—", "—", "—", "—", row["error"], "—"]
        else:
            median = statistics.median(row["seconds"])
            ratio = f"{median / statistics.median(exact['seconds']):.2f}" if exact else "—"
            gap = "—"
            if "objective" in row and best:
                gap = f"{(best - row['objective']) / best:.2e}" if row["objective"] < best else "0"
            message = row["message"]
            if not row.get("feasible", True):
                message = "INFEASIBLE: " + message
            cells += [
                f"{median:.3f}",
                ratio,
                gap,
                "yes" if row["optimal"] else "no",
                message,
                f"{row['peak_mib']:.0f}",
            ]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return lines


def parse_sizes(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in item.lower().split("x")) for item in text.split(",")]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="100x1000,300x3000,1000x10000",
        help="comma-separated ROWSxCOLS (default: %(default)s)",
    )
    parser.add_argument(
        "--methods", default=",".join(METHODS), help="comma-separated subset of %(default)s"
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per (instance, method)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--weights",
        choices=WEIGHTS,
        default="normal",
        help="V ~ N(0, 1), exp(2 N(0, 1)) for heavy tails, or outer(a, b) of rank one "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--slow-limit",
        type=int,
        default=300_000,
        help="skip lp and pgd above this many entries; 0: never skip",
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per child process")
    add_out_option(parser)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(json.dumps(measure(json.loads(args.child))))
        return

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        parser.error(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    report = header(
        "TVCS projection benchmark",
        sys.argv,
        None,
        packages=("numpy", "scipy", "numba", "ortools"),
    )
    for method in methods:
        if not available(method):
            report.append(f"Note: skipping {method}: its module is not available.")
    methods = [m for m in methods if available(m)]

    rows = []
    for n, m in parse_sizes(args.sizes):
        run_here = [x for x in methods if not (x in SLOW and 0 < args.slow_limit < n * m)]
        for method in sorted(set(methods) - set(run_here), key=methods.index):
            report.append(f"Note: skipping {method} at {n}x{m} (more than --slow-limit entries).")
        for budget, total in make_instance(n, m, args.seed)[3].items():
            for method in run_here:
                print(f"running {method} on {n}x{m}, {budget} budget ...", file=sys.stderr)
                spec = {
                    "n": n,
                    "m": m,
                    "seed": args.seed,
                    "weights": args.weights,
                    "method": method,
                    "budget": budget,
                    "repeats": 1 if method == "pgd" else args.repeats,
                }
                result = run_child(spec, args.timeout)
                rows.append(
                    {
                        "size": f"{n}x{m}",
                        "budget": budget,
                        "total": total,
                        "method": method,
                        **result,
                    }
                )
    report += ["", *table(rows), ""]
    publish(report, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
