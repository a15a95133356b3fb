"""What tvcs-iht's final pass would add on greedy's own assignment, and what it would cost.

tvcs-iht runs its final pass (:func:`assignment.engine.local_search.improve`) only on a support
its IHT steps found better than greedy's assignment; when the steps find nothing, it returns
greedy's assignment as it is (the module docstring of :mod:`assignment.engine.tvcs_iht`). This
benchmark measures that rule's price: on the instances of the budget sweep
(:mod:`benchmarks.instances`, cap ratio ``r = 0.03``) it runs greedy, asks whether tvcs-iht's
steps beat it (``solve(..., method="tvcs-iht", refine=False)``), and runs the pass that used to
follow on greedy's own assignment (``improve(..., max_rounds=2, filled=True)``, the defaults of
before) with its gain in points and its time as a multiple of greedy's.

Run from the repository root::

    python benchmarks/pass_on_greedy.py --out docs/benchmarks/pass-on-greedy.md
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assignment.engine.greedy import greedy_pairs  # noqa: E402
from assignment.engine.local_search import improve  # noqa: E402
from assignment.engine.solve import solve  # noqa: E402
from benchmarks.instances import QUALITIES, make_problem  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402

logger = logging.getLogger("benchmarks.pass_on_greedy")

FRACTIONS = (0.1, 0.25, 0.5, 0.75, 1.0)


def measure(n: int, m: int, quality: str, fraction: float, seed: int) -> dict:
    """One instance: whether the steps beat greedy, the pass's gain (points) and time ratio."""
    problem = make_problem(n, m, 0.03, seed, fraction=fraction, quality=quality)
    began = time.perf_counter()
    greedy = greedy_pairs(problem)
    greedy_seconds = time.perf_counter() - began
    steps = solve(problem, method="tvcs-iht", seed=seed, refine=False).details
    began = time.perf_counter()
    out = improve(
        problem, greedy.assignment, rng=np.random.default_rng(seed), max_rounds=2, filled=True
    )
    pass_seconds = time.perf_counter() - began
    return {
        "steps_better": steps["accuracy"] > steps["start_accuracy"],
        "gain": 100 * (out.accuracy - greedy.details["accuracy"]),
        "ratio": pass_seconds / greedy_seconds,
    }


def table(rows: dict) -> list[str]:
    lines = [
        "| size | quality | instances | steps found nothing | pass gain there, max (pts) "
        "| mean (pts) | pass time / greedy's, median (max) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (size, quality), found in rows.items():
        idle = [r for r in found if not r["steps_better"]]
        gains = [r["gain"] for r in idle] or [0.0]
        ratios = [r["ratio"] for r in idle] or [0.0]
        lines.append(
            f"| {size} | {quality} | {len(found)} | {len(idle)} | {max(gains):.4f} "
            f"| {np.mean(gains):.4f} | {np.median(ratios):.2f}x ({max(ratios):.2f}x) |"
        )
    return lines


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100x1000,200x10000")
    parser.add_argument("--seeds", type=int, default=3)
    add_out_option(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("projections").setLevel(logging.WARNING)
    solve(make_problem(20, 200, 0.1, 0), method="tvcs-iht", seed=0)  # compile the kernels
    rows: dict = {}
    for size in args.sizes.split(","):
        n, m = (int(x) for x in size.split("x"))
        for quality in QUALITIES:
            rows[(size, quality)] = [
                measure(n, m, quality, fraction, seed)
                for fraction in FRACTIONS
                for seed in range(args.seeds)
            ]
            logger.info("%s %s done", size, quality)
    publish(
        [
            "# tvcs-iht's final pass on greedy's own assignment",
            "",
            f"- command: `python benchmarks/pass_on_greedy.py {' '.join(argv)}`".rstrip(),
            f"- cap ratio 0.03, budgets {', '.join(map(str, FRACTIONS))} of what the caps allow, "
            f"seeds 0..{args.seeds - 1}; the pass: `improve(max_rounds=2, filled=True)`",
            "",
            *table(rows),
        ],
        args.out,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
