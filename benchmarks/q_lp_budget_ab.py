"""Issue 12, goal 1: q-lp and tvcs-iht of two trees on the budget grid, side by side.

What it measures
----------------
Each (size, cap ratio, fraction, seed, method) runs once per tree, each run in a process of
its own (``--child``): it loads both methods' kernels on a tiny instance, builds the
instance of :func:`benchmarks.instances.make_problem` (``--quality``, default skill x
difficulty) and times one :func:`~assignment.engine.solve.solve` with its peak RSS above the
built instance (:func:`benchmarks.child_runs.measure_solve`). The two trees alternate,
old-new then new-old, so that load from other jobs hits both alike. ``--old`` and ``--new``
are folders holding a checkout (e.g. ``git archive main | tar -x -C /tmp/qlp-old``); each
child runs with its tree first on ``PYTHONPATH``.

The report has one row per (size, ratio, fraction): mean seconds over seeds of q-lp and
tvcs-iht in each tree, the ratios new / old and q-lp / tvcs-iht, q-lp's largest bytes per
pair and whether both trees' q-lp reach the same accuracy on every seed. Run from the
repository root::

    python benchmarks/q_lp_budget_ab.py --old /tmp/qlp-old --new /tmp/qlp-new \\
        --cases 200x10000:0.03:0.75,200x10000:0.03:1 --seeds 3 --out /tmp/ab.md
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
from pathlib import Path

logger = logging.getLogger("q_lp_budget_ab")

METHODS = ("q-lp", "tvcs-iht")
PREFIX = "AB-RESULT "


def child(n: int, m: int, ratio: float, fraction: float, seed: int, method: str, quality: str):
    """One solve in this process (this tree): its measured fields, printed for the parent."""
    from assignment.engine.solve import solve
    from benchmarks.child_runs import measure_solve
    from benchmarks.instances import make_problem

    tiny = make_problem(30, 300, 0.05, 0, fraction=1.0, quality="skill-difficulty")
    for warm in METHODS:  # the kernels' compilation and loading stay outside the measurement
        solve(tiny, method=warm, seed=0)
    problem = make_problem(n, m, ratio, seed, fraction=fraction, quality=quality)
    result = measure_solve(problem, method=method, seed=0)
    sys.stdout.write(PREFIX + json.dumps(result) + "\n")


def run_one(tree: Path, case: dict, timeout: float) -> dict:
    """``case`` solved by the tree ``tree`` in a child process."""
    args = [str(case[k]) for k in ("n", "m", "ratio", "fraction", "seed", "method", "quality")]
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", *args]
    proc = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(PREFIX)]
    if not lines:
        return {**case, "error": proc.stderr[-2000:]}
    return {**case, **json.loads(lines[-1][len(PREFIX) :])}


def cases(spec: str, seeds: int, quality: str):
    """Every run: ``NxM:RATIO:FRACTION`` cases, seeds 0 .. seeds-1, both methods."""
    for item in spec.split(","):
        size, ratio, fraction = item.split(":")
        n, m = (int(v) for v in size.split("x"))
        for seed in range(seeds):
            for method in METHODS:
                yield {
                    "n": n,
                    "m": m,
                    "ratio": float(ratio),
                    "fraction": float(fraction),
                    "seed": seed,
                    "method": method,
                    "quality": quality,
                }


def report(rows: list[dict]) -> str:
    """The Markdown table of the module docstring."""
    out = [
        "| size | r | f | q-lp old s | q-lp new s | new / old | tvcs-iht old s | "
        "tvcs-iht new s | q-lp / tvcs-iht old | q-lp / tvcs-iht new | q-lp new B/pair | "
        "q-lp old B/pair | same q-lp accuracy |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    keys = sorted({(r["n"], r["m"], r["ratio"], r["fraction"]) for r in rows})
    for key in keys:

        def pick(method, tree, field, key=key):
            return [
                r[field]
                for r in rows
                if (r["n"], r["m"], r["ratio"], r["fraction"]) == key
                and r["method"] == method
                and r["tree"] == tree
                and "error" not in r
            ]

        qo, qn, to, tn = (
            statistics.mean(pick(meth, tree, "seconds") or [float("nan")])
            for meth, tree in (
                ("q-lp", "old"),
                ("q-lp", "new"),
                ("tvcs-iht", "old"),
                ("tvcs-iht", "new"),
            )
        )
        same = pick("q-lp", "old", "expected_accuracy") == pick("q-lp", "new", "expected_accuracy")
        out.append(
            f"| {key[0]}x{key[1]} | {key[2]} | {key[3]} | {qo:.2f} | {qn:.2f} | {qn / qo:.2f} | "
            f"{to:.2f} | {tn:.2f} | {qo / to:.2f} | {qn / tn:.2f} | "
            f"{max(pick('q-lp', 'new', 'bytes_per_pair') or [0]):.0f} | "
            f"{max(pick('q-lp', 'old', 'bytes_per_pair') or [0]):.0f} | {same} |"
        )
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=7, help=argparse.SUPPRESS)
    parser.add_argument("--old", type=Path, help="a folder holding the reference checkout")
    parser.add_argument("--new", type=Path, help="a folder holding the checkout to compare")
    parser.add_argument("--cases", default="200x10000:0.03:0.75,200x10000:0.03:1")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quality", default="skill-difficulty")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per run")
    parser.add_argument("--results", type=Path, help="also write every run here (JSON lines)")
    parser.add_argument("--out", type=Path, help="also write the Markdown report here")
    args = parser.parse_args(argv)
    if args.child:
        n, m, ratio, fraction, seed, method, quality = args.child
        child(int(n), int(m), float(ratio), float(fraction), int(seed), method, quality)
        return
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rows = []
    for k, case in enumerate(cases(args.cases, args.seeds, args.quality)):
        trees = [("old", args.old), ("new", args.new)]
        for label, tree in trees[:: 1 if k % 2 == 0 else -1]:
            row = {**run_one(tree, case, args.timeout), "tree": label}
            logger.info("%s %s: %s s", label, case, row.get("seconds", row.get("error")))
            rows.append(row)
            if args.results:
                with args.results.open("a") as f:
                    f.write(json.dumps(row) + "\n")
    text = report(rows)
    logger.info("%s", text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
