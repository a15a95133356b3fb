"""tvcs-iht's time as a multiple of greedy's, the two alternated in one process.

:mod:`benchmarks.budgets` runs every solve in a process of its own, one after another, to
measure memory; on a machine shared with other work its time ratios move with the load between
two runs (±0.3 seen at a 1-minute load of 2-4 on 2 cores). Here greedy and tvcs-iht run in
turn on the same instance, ``--repeats`` times, in one process whose kernels are loaded first,
and the ratio is the best tvcs-iht time over the best greedy time (``SolveResult.seconds``):
load that comes and goes hits both alike. The instances are the budget sweep's
(:mod:`benchmarks.instances`, cap ratio ``--ratio``).

Run from the repository root::

    python benchmarks/paired_times.py --out docs/benchmarks/paired-times.md
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assignment.engine.solve import solve  # noqa: E402
from benchmarks.instances import make_problem  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402


def best_times(problem, repeats: int) -> tuple[float, float, float]:
    """``(greedy s, tvcs-iht s, tvcs-iht - greedy in points)``: best of ``repeats`` turns."""
    greedy, iht = [], []
    for _ in range(repeats):
        g = solve(problem, method="greedy", seed=0)
        t = solve(problem, method="tvcs-iht", seed=0)
        greedy.append(g.seconds)
        iht.append(t.seconds)
    return min(greedy), min(iht), 100 * (t.expected_accuracy - g.expected_accuracy)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="200x10000,100x1000", help="comma-separated NxM")
    parser.add_argument("--quality", default="uniform,skill-difficulty")
    parser.add_argument("--budgets", default="0.1,0.25,0.5,0.75,1.0")
    parser.add_argument("--ratio", type=float, default=0.03)
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0 .. SEEDS-1")
    parser.add_argument("--repeats", type=int, default=3)
    add_out_option(parser)
    args = parser.parse_args(argv)
    # Load the kernels: greedy, the bound, the steps and the pass (skill x difficulty quality
    # with the whole budget, where the steps beat greedy and the pass runs).
    solve(make_problem(20, 60, 0.3, 1, fraction=1.0, quality="skill-difficulty"), method="tvcs-iht")
    lines = [
        "# tvcs-iht / greedy time, alternated in one process",
        "",
        f"- command: `python benchmarks/paired_times.py {' '.join(argv)}`".rstrip(),
        f"- cap ratio {args.ratio}, best of {args.repeats} turns each, seeds 0..{args.seeds - 1}; "
        f"1-minute load at start {os.getloadavg()[0]:.2f}",
        "",
        "| size | quality | f | seed | greedy s | tvcs-iht s | tvcs-iht / greedy | "
        "tvcs-iht - greedy (pts) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for size in args.sizes.split(","):
        n, m = (int(x) for x in size.split("x"))
        for quality in args.quality.split(","):
            for fraction in (float(f) for f in args.budgets.split(",")):
                for seed in range(args.seeds):
                    problem = make_problem(
                        n, m, args.ratio, seed, fraction=fraction, quality=quality
                    )
                    greedy, iht, points = best_times(problem, args.repeats)
                    lines.append(
                        f"| {size} | {quality} | {fraction:g} | {seed} | {greedy:.3f} "
                        f"| {iht:.3f} | {iht / greedy:.2f}x | {points:+.3f} |"
                    )
    lines.append(f"\n1-minute load at the end {os.getloadavg()[0]:.2f}.")
    publish(lines, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
