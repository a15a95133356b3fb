"""Issue 12, goal 1: q-lp's time and memory against tvcs-iht's, before and after (a benchmark).

The target: q-lp at most 2x tvcs-iht's time and at most 200 bytes per pair at the Figure 4
sizes (``--sizes``, default 100x1000 and 200x10000) and cap ratios (``--ratios``, default
0.01 to 0.05), with the same or better accuracy than before.

Each (size, ratio, seed) instance is the one ``benchmarks/scale.py`` builds (dense
``Q ~ U[0.5, 0.9]``, Figure 4's caps); each method runs once on it in a process of its own
through ``scale.py --child`` (``benchmarks/child_runs.py``: the solve's seconds and its peak
RSS above the built instance):

* ``q-lp`` and ``tvcs-iht`` of this checkout;
* ``q-lp before``: ``q-lp`` of another checkout (``--before DIR``, e.g. the commit before the
  change, exported with ``git archive 91a656d | tar -x -C /tmp/qlp-before``); its
  ``scale.py`` puts its own tree first on ``sys.path``, and the row's ``engine`` says which
  package ran.

The report has one row per instance: accuracy, seconds and bytes per pair of each method, the
time ratio q-lp / tvcs-iht (ratio of the means over seeds) and a PASS/FAIL line per target.
Rows are appended to ``--results`` (default ``benchmarks/out/q_lp.jsonl``) and not run again
on a restart. Run from the repository root::

    python benchmarks/q_lp.py --before /tmp/qlp-before --out docs/benchmarks/q-lp.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.child_runs import code_version, header, run_child  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402
from benchmarks.results_file import append_row, load_rows  # noqa: E402

DEFAULT_RESULTS = ROOT / "benchmarks" / "out" / "q_lp.jsonl"
BEFORE = "q-lp before"
MAX_TIME_RATIO = 2.0  # q-lp at most 2x tvcs-iht's time
MAX_BYTES_PER_PAIR = 200.0


def row_key(row: dict) -> tuple:
    return (row["size"], f"{row['ratio']:g}", int(row["seed"]), row["job"])


def run_one(job: str, spec: dict, before: Path | None, timeout: float) -> dict:
    """One child: ``q-lp`` / ``tvcs-iht`` here, or ``q-lp`` in the ``before`` checkout."""
    tree = before if job == BEFORE else ROOT
    spec = spec | {"method": "q-lp" if job == BEFORE else job}
    try:
        return run_child(
            tree / "benchmarks" / "scale.py", spec, timeout, n_pairs=spec["n"] * spec["m"]
        )
    except RuntimeError as exc:
        return {"failed": str(exc), "expected_accuracy": None, "seconds": None}


def run_all(args, sizes, ratios, jobs, results: Path) -> dict:
    rows = load_rows(results, key=row_key)
    commit = code_version()
    for n, m in sizes:
        for ratio in ratios:
            for seed in range(args.seeds):
                for job in jobs:
                    key = (f"{n}x{m}", f"{ratio:g}", seed, job)
                    if key in rows:
                        continue
                    spec = {"n": n, "m": m, "categories": None, "ratio": ratio, "seed": seed}
                    spec["memory_limit_gb"] = args.memory_limit_gb
                    print(f"{n}x{m} r={ratio:g} seed {seed} {job} ...", file=sys.stderr, flush=True)
                    measured = run_one(job, spec, args.before, args.timeout)
                    row = {"size": f"{n}x{m}", "job": job, **spec, **measured, "code": commit}
                    row["date"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
                    append_row(results, row)
                    rows[key] = row
                    seconds = measured.get("seconds")
                    print(
                        f"  {seconds} s, {measured.get('bytes_per_pair')} B/pair", file=sys.stderr
                    )
    return rows


def mean_of(rows, size, ratio, job, seeds, field) -> float | None:
    got = [rows.get((size, f"{ratio:g}", s, job), {}).get(field) for s in range(seeds)]
    got = [g for g in got if g is not None]
    return float(np.mean(got)) if got else None


def cell(value, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def report(rows, sizes, ratios, jobs, seeds) -> list[str]:
    head = ["size", "ratio"]
    for job in jobs:
        head += [f"{job} accuracy", f"{job} s", f"{job} B/pair"]
    head += ["q-lp / tvcs-iht time"]
    if BEFORE in jobs:
        head += ["q-lp before / tvcs-iht time"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    checks = {"time": [], "memory": [], "accuracy": []}
    for n, m in sizes:
        size = f"{n}x{m}"
        for ratio in ratios:
            stat = {
                (job, field): mean_of(rows, size, ratio, job, seeds, field)
                for job in jobs
                for field in ("expected_accuracy", "seconds", "bytes_per_pair")
            }
            cells = [size, f"{ratio:g}"]
            for job in jobs:
                cells += [
                    cell(stat[job, "expected_accuracy"], ".4f"),
                    cell(stat[job, "seconds"], ".3f"),
                    cell(stat[job, "bytes_per_pair"], ".1f"),
                ]
            iht = stat.get(("tvcs-iht", "seconds"))
            for job in ["q-lp"] + [BEFORE] * (BEFORE in jobs):
                mine = stat.get((job, "seconds"))
                ratio_value = mine / iht if mine is not None and iht else None
                cells.append(cell(ratio_value, ".2f"))
                if job == "q-lp" and ratio_value is not None:
                    checks["time"].append((size, ratio, ratio_value <= MAX_TIME_RATIO))
            per_pair = stat.get(("q-lp", "bytes_per_pair"))
            if per_pair is not None:
                checks["memory"].append((size, ratio, per_pair <= MAX_BYTES_PER_PAIR))
            now, then = (
                stat.get(("q-lp", "expected_accuracy")),
                stat.get((BEFORE, "expected_accuracy")),
            )
            if now is not None and then is not None:
                checks["accuracy"].append((size, ratio, now >= then - 1e-12))
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Targets", ""]
    names = {
        "time": f"q-lp at most {MAX_TIME_RATIO:g}x tvcs-iht's time",
        "memory": f"q-lp at most {MAX_BYTES_PER_PAIR:g} bytes per pair",
        "accuracy": "q-lp as accurate as before (or better)",
    }
    for name, got in checks.items():
        bad = [f"{s} r={r:g}" for s, r, ok in got if not ok]
        verdict = "—" if not got else ("FAIL" if bad else "PASS")
        detail = f"fails at {', '.join(bad)}" if bad else f"holds at all {len(got)} instances"
        lines.append(f"- {verdict}: {names[name]} ({detail if got else 'no data'})")
    return lines


def main(argv: list[str]) -> None:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100x1000,200x10000", help="NxM, comma-separated")
    parser.add_argument("--ratios", default="0.01,0.02,0.03,0.04,0.05")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0 .. SEEDS-1 (default: 1)")
    parser.add_argument("--before", type=Path, help="a checkout whose q-lp is the reference")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--memory-limit-gb", type=float, default=12.0)
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--report-only", action="store_true", help="run nothing: report")
    add_out_option(parser)
    args = parser.parse_args(argv)
    sizes = [tuple(int(x) for x in s.lower().split("x")) for s in args.sizes.split(",") if s]
    ratios = [float(r) for r in args.ratios.split(",") if r]
    if args.before is not None and not (args.before / "benchmarks" / "scale.py").exists():
        parser.error(f"--before {args.before}: no benchmarks/scale.py there")
    jobs = ["q-lp", *[BEFORE] * (args.before is not None), "tvcs-iht"]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        rows = load_rows(args.results, key=row_key)
        jobs = ["q-lp", *[BEFORE] * any(k[3] == BEFORE for k in rows), "tvcs-iht"]
    else:
        rows = run_all(args, sizes, ratios, jobs, args.results)
    title = "Issue 12, goal 1: q-lp against tvcs-iht, before and after"
    lines = header(title, sys.argv, load) + report(rows, sizes, ratios, jobs, args.seeds)
    publish(lines, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
