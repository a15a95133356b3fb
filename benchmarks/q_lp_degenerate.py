"""Issue 12: q-lp against tvcs-iht where q-lp's LP is degenerate (skill x difficulty quality).

Every task ranks the workers alike there, the restricted LP's credit duals are degenerate and
pricing alone kept bringing in a task's cap of pairs per round (over 10 minutes at 200 x
10,000, r = 0.05, 75% of the caps); the Lagrangian certificate of ``assignment/engine/q_lp.py``
ends it (docs/design.md#column-generation). The target is the issue's: q-lp at most 2x
tvcs-iht's time and at most 200 bytes per pair.

Each instance is ``benchmarks.instances.make_problem(n, m, r, seed, fraction=F,
quality="skill-difficulty")``; tvcs-iht and then q-lp solve it in **one process** (this one,
after ``warm_up``), each measured by ``benchmarks.child_runs.measure_solve``: seconds and the
peak RSS above the built instance, per pair. Rows go to ``--results`` (default
``benchmarks/out/q_lp_degenerate.jsonl``) and are not run again on a restart. From the
repository root::

    python benchmarks/q_lp_degenerate.py --out docs/benchmarks/q-lp-degenerate.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from benchmarks.child_runs import code_version, header, measure_solve  # noqa: E402
from benchmarks.instances import make_problem  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402
from benchmarks.results_file import append_row, load_rows  # noqa: E402

DEFAULT_RESULTS = ROOT / "benchmarks" / "out" / "q_lp_degenerate.jsonl"
DEFAULT_CASES = ",".join(
    f"{size}@{r}@{fraction}"
    for size, ratios in (("100x1000", ("0.05", "0.1")), ("200x10000", ("0.03", "0.05")))
    for r in ratios
    for fraction in ("0.75", "1")
)
METHODS = ("tvcs-iht", "q-lp")
MAX_TIME_RATIO = 2.0
MAX_BYTES_PER_PAIR = 200.0


def parse_case(text: str) -> tuple[int, int, float, float]:
    """``NxM@R@F`` as ``(n, m, r, fraction)``."""
    size, ratio, fraction = text.lower().split("@")
    n, m = (int(x) for x in size.split("x"))
    return n, m, float(ratio), float(fraction)


def case_name(n: int, m: int, ratio: float, fraction: float) -> str:
    return f"{n}x{m} r={ratio:g} {fraction:.0%}"


def row_key(row: dict) -> tuple:
    return (row["case"], int(row["seed"]), row["method"])


def run_case(case: tuple, seed: int, method: str) -> dict:
    """One solve of the case's instance, measured; q-lp's LP details added."""
    n, m, ratio, fraction = case
    problem = make_problem(n, m, ratio, seed, fraction=fraction, quality="skill-difficulty")
    measured = measure_solve(problem, method=method, seed=seed)
    del problem
    return measured


def run_all(cases, seeds: int, results: Path) -> dict:
    from assignment.engine.warm_up import warm_up

    warm_up(methods=list(METHODS))
    rows = load_rows(results, key=row_key)
    commit = code_version()
    for case in cases:
        for seed in range(seeds):
            for method in METHODS:
                key = (case_name(*case), seed, method)
                if key in rows:
                    continue
                print(f"{key} ...", file=sys.stderr, flush=True)
                row = {"case": key[0], "seed": seed, "method": method}
                row |= run_case(case, seed, method) | {"code": commit}
                row["date"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
                append_row(results, row)
                rows[key] = row
                print(
                    f"  {row['seconds']:.2f} s, {row['bytes_per_pair']:.1f} B/pair", file=sys.stderr
                )
    return rows


def proof_of(message: str) -> str:
    """What proved q-lp's LP optimal, from its message."""
    for part in message.split("; "):
        if part.startswith(("proved optimal", "every pair in the LP")):
            return part
        if part.startswith("the caps' optimum"):
            return "the caps' optimum (one projection, no LP)"
    return message


def report(rows: dict, cases, seeds: int) -> list[str]:
    """One line per case and seed, then the targets."""
    lines = [
        "| instance | seed | tvcs-iht accuracy | tvcs-iht s | tvcs-iht B/pair | q-lp accuracy "
        "| q-lp s | q-lp B/pair | q-lp / tvcs-iht time | q-lp's proof |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    bad_time, bad_memory, count = [], [], 0
    for case in cases:
        name = case_name(*case)
        for seed in range(seeds):
            iht, qlp = rows.get((name, seed, "tvcs-iht")), rows.get((name, seed, "q-lp"))
            if iht is None or qlp is None:
                continue
            count += 1
            ratio = qlp["seconds"] / iht["seconds"]
            proof = proof_of(qlp["message"])
            lines.append(
                f"| {name} | {seed} | {iht['expected_accuracy']:.4f} | {iht['seconds']:.2f} "
                f"| {iht['bytes_per_pair']:.1f} | {qlp['expected_accuracy']:.4f} "
                f"| {qlp['seconds']:.2f} | {qlp['bytes_per_pair']:.1f} | {ratio:.2f} | {proof} |"
            )
            if ratio > MAX_TIME_RATIO:
                bad_time.append(name)
            if qlp["bytes_per_pair"] > MAX_BYTES_PER_PAIR:
                bad_memory.append(name)
    lines += ["", "## Targets", ""]
    for what, bad in (
        (f"q-lp at most {MAX_TIME_RATIO:g}x tvcs-iht's time", bad_time),
        (f"q-lp at most {MAX_BYTES_PER_PAIR:g} bytes per pair", bad_memory),
    ):
        verdict = "—" if not count else ("FAIL" if bad else "PASS")
        detail = f"fails at {', '.join(bad)}" if bad else f"holds at all {count} runs"
        lines.append(f"- {verdict}: {what} ({detail if count else 'no data'})")
    return lines


def main(argv: list[str]) -> None:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES, help="NxM@R@FRACTION, comma-separated")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0 .. SEEDS-1 (default: 1)")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--report-only", action="store_true", help="run nothing: report")
    add_out_option(parser)
    args = parser.parse_args(argv)
    cases = [parse_case(c) for c in args.cases.split(",") if c]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        rows = load_rows(args.results, key=row_key)
    else:
        rows = run_all(cases, args.seeds, args.results)
    title = "Issue 12: q-lp against tvcs-iht on skill x difficulty quality (degenerate LPs)"
    publish(header(title, sys.argv, load) + report(rows, cases, args.seeds), args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
