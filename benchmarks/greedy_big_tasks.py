"""Greedy on tasks of 17 to 20 workers, with and without move tables and carried atoms (issue 12).

A task whose atoms exceed the greedy's cache (``_ATOM_CACHE_MAX``, 2^16 atoms) had them rebuilt
from its workers, ``2^k`` patterns, at every evaluation and twice per move. The **new** path
keeps a move table per such task and carries the atoms a move rebuilt to the evaluation after
it (``greedy._MOVE_TABLES``, ``greedy._CARRY_ATOMS``); the **old** path switches both off, in
the same process. Old and new run in turn on each instance (the order alternates from repeat
to repeat), and must give the same pairs, accuracy and evaluations (the script stops
otherwise). Times are the best of ``--repeats`` of ``greedy_run`` (wall, and the process's CPU
time, steadier on a shared machine); ratios are old / new.

The instances are :mod:`benchmarks.instances`' (``--workers`` x ``--tasks``, cap ratio
``--ratio``: 20 workers per task at 200 workers, r = 0.1), at each budget fraction of
``--fractions`` and quality model of ``--qualities``; ``--normal`` adds a case where every task's
atoms are cached (200 x 10,000, r = 0.03, fraction 1, skill-difficulty), whose path is unchanged.
Run from the repository root::

    python benchmarks/greedy_big_tasks.py --out docs/benchmarks/greedy-big-tasks.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from assignment.engine import greedy  # noqa: E402
from benchmarks.instances import make_problem  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402

NORMAL = (200, 10_000, 0.03, 1.0, "skill-difficulty")


def run(problem, new: bool):
    """``(wall s, cpu s, output, state)`` of one ``greedy_run`` on the new or the old path."""
    greedy._MOVE_TABLES = greedy._CARRY_ATOMS = new
    wall, cpu = time.perf_counter(), time.process_time()
    output, state = greedy.greedy_run(problem)
    return time.perf_counter() - wall, time.process_time() - cpu, output, state


def outcome(output) -> tuple:
    """What old and new must share."""
    d = output.details
    return output.rows.tobytes(), output.cols.tobytes(), d["accuracy"], d["evaluations"]


def compare(problem, repeats: int) -> dict:
    """Old and new in turn, ``repeats`` times: best times, and the new run's counts."""
    times = {True: [], False: []}
    seen = {}
    for rep in range(repeats):
        for new in (rep % 2 == 0, rep % 2 != 0):
            wall, cpu, output, state = run(problem, new)
            times[new].append((wall, cpu))
            seen[new] = (outcome(output), output, state)
    if seen[True][0] != seen[False][0]:
        raise SystemExit("old and new greedy differ")
    output, state = seen[True][1:]
    return {
        "old": min(times[False]),
        "new": min(times[True]),
        "accuracy": output.details["accuracy"],
        "evaluations": output.details["evaluations"],
        "uncached": sum(c is None for c in state.cache),
        "tables": state.table_builds,
    }


def row(label: str, r: dict) -> str:
    (ow, oc), (nw, nc) = r["old"], r["new"]
    return (
        f"| {label} | {ow:.2f} | {nw:.2f} | {ow / nw:.2f} | {oc:.2f} | {nc:.2f} | {oc / nc:.2f} "
        f"| {r['accuracy']:.6f} | {r['evaluations']} | {r['uncached']} | {r['tables']} |"
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--ratio", type=float, default=0.1)
    parser.add_argument("--fractions", default="0.5,0.9")
    parser.add_argument("--qualities", default="uniform,spammers,skill-difficulty")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--normal", action=argparse.BooleanOptionalAction, default=True)
    add_out_option(parser)
    args = parser.parse_args(argv)
    for new in (False, True):  # load the kernels
        run(make_problem(40, 200, 0.5, 0, fraction=0.9), new)
    lines = [
        "# Greedy on tasks of 17-20 workers: move tables and carried atoms (issue 12)",
        "",
        f"- command: `python benchmarks/greedy_big_tasks.py {' '.join(argv)}`".rstrip(),
        f"- {args.workers} x {args.tasks}, cap ratio {args.ratio}, seed {args.seed}; best of "
        f"{args.repeats} turns each, old and new alternated in one process; old and new gave "
        "the same pairs, accuracy and evaluations on every instance",
        "- uncached: tasks whose atoms the cache does not hold at the end; tables: move "
        "tables built (new path)",
        "",
        "| instance | old s | new s | old/new | old cpu s | new cpu s | old/new cpu "
        "| accuracy | evaluations | uncached | tables |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for fraction in (float(f) for f in args.fractions.split(",")):
        for quality in args.qualities.split(","):
            problem = make_problem(
                args.workers, args.tasks, args.ratio, args.seed, fraction=fraction, quality=quality
            )
            lines.append(row(f"{quality}, fraction {fraction}", compare(problem, args.repeats)))
            print(lines[-1], flush=True)
    if args.normal:
        n, m, ratio, fraction, quality = NORMAL
        problem = make_problem(n, m, ratio, args.seed, fraction=fraction, quality=quality)
        label = f"{n} x {m}, r = {ratio}, {quality}, fraction {fraction} (all cached)"
        lines.append(row(label, compare(problem, args.repeats)))
    lines.append("")
    lines.append(f"numpy {np.__version__}; {time.strftime('%Y-%m-%d')}.")
    publish(lines, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
