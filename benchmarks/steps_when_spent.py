"""Do tvcs-iht's IHT steps find anything better than a greedy start that spends the budget?

tvcs-iht returns greedy's assignment without steps when it spends the whole budget (the module
docstring of :mod:`assignment.engine.tvcs_iht`). This benchmark is the evidence for that rule:
on many problems it runs greedy, notes whether its assignment spends the budget, and runs
tvcs-iht with the steps forced (``search_when_spent=True``), counting the problems where the
steps (and the final pass that follows them) end above greedy's accuracy, and by how much.

Families: the budget sweep's dense ``uniform``, ``skill-difficulty`` and ``spammers`` quality
(:mod:`benchmarks.instances`); ``beta``: dense ``Q = 0.5 + 0.5 Beta(3, 2)``; ``category``:
quality by category, 10 categories, ``T = 0.5 + 0.5 Beta(2, 2)`` per worker and category;
``category-masked``: the same with 70% of the pairs eligible and each task's prior uniform in
[0.2, 0.8]. Cap ratios 3%, 5% and 10% (up to 10 workers a task: see
``MAX_WORKERS_PER_TASK``), budgets 10-100% of what the caps allow
(:func:`benchmarks.instances.caps`).

Run from the repository root (about 25 minutes; resumable)::

    python benchmarks/steps_when_spent.py --out docs/benchmarks/steps-when-spent.md
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assignment.engine.problem import AssignmentProblem, QualityByCategory  # noqa: E402
from assignment.engine.solve import solve  # noqa: E402
from benchmarks.instances import QUALITIES, caps, make_problem  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402
from benchmarks.results_file import (  # noqa: E402
    add_results_options,
    append_row,
    end_torn_line,
    load_rows,
    set_aside,
)

FAMILIES = (*QUALITIES, "beta", "category", "category-masked")
SIZES = ((50, 500), (100, 1000), (100, 3000), (200, 2000), (200, 10000))
RATIOS = (0.03, 0.05, 0.1)
FRACTIONS = (0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
#: Above this many pairs, one seed and the 3% cap ratio only (the budget sweep's).
LARGE_PAIRS = 2_000_000
#: Problems whose tasks may take more workers than this are left out: on them a final pass
#: after forced steps can take many minutes (200 x 2,000 at a 10% cap ratio, 20 workers a task).
MAX_WORKERS_PER_TASK = 10


def make(family: str, n: int, m: int, ratio: float, fraction: float, seed: int):
    """The problem of ``family`` (module docstring) at this size, cap ratio, budget, seed."""
    if family in QUALITIES:
        return make_problem(n, m, ratio, seed, fraction=fraction, quality=family)
    rng = np.random.default_rng([seed, n, m, 7])
    per_task, per_worker, budget = caps(n, m, ratio, fraction)
    extra = {}
    if family == "beta":
        quality = 0.5 + 0.5 * rng.beta(3, 2, (n, m))
    else:
        table = 0.5 + 0.5 * rng.beta(2, 2, (n, 10))
        quality = QualityByCategory(table, rng.integers(0, 10, m))
    if family == "category-masked":
        extra = {"eligible": rng.random((n, m)) < 0.7, "prior": rng.uniform(0.2, 0.8, m)}
    return AssignmentProblem(
        quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        **extra,
    )


def instances(families):
    """``(family, n, m, ratio, fraction, seed)`` of every problem measured."""
    for n, m in SIZES:
        for family in families:
            for ratio in RATIOS:
                for fraction in FRACTIONS:
                    for seed in range(2):
                        if n * m > LARGE_PAIRS and (ratio != 0.03 or seed):
                            continue
                        if caps(n, m, ratio)[0] > MAX_WORKERS_PER_TASK:
                            continue
                        yield family, n, m, ratio, fraction, seed


def measure(family, n, m, ratio, fraction, seed) -> dict:
    """Greedy's spend and accuracy, and what tvcs-iht's forced steps add (points)."""
    problem = make(family, n, m, ratio, fraction, seed)
    greedy = solve(problem, method="greedy", seed=seed)
    iht = solve(problem, method="tvcs-iht", seed=seed, search_when_spent=True)
    return {
        "key": [family, n, m, ratio, fraction, seed],
        "budget": int(problem.budget),
        "spent": len(greedy.rows),
        "gain": 100 * (iht.expected_accuracy - greedy.expected_accuracy),
        "stopped": iht.details["stopped"],
    }


def report(rows: list[dict], argv: list[str]) -> list[str]:
    """The Markdown report: per family and size, problems whose greedy start spent the budget
    or left some, and how often and by how much the steps beat it."""
    groups = defaultdict(list)
    for row in rows:
        family, n, m = row["key"][:3]
        spent = "spent" if row["spent"] >= row["budget"] else "left some"
        groups[(family, f"{n}x{m}", spent)].append(row)
    lines = [
        "# tvcs-iht's steps on greedy starts that spend the budget, and on those that do not",
        "",
        f"- command: `python benchmarks/steps_when_spent.py {' '.join(argv)}`".rstrip(),
        "- steps forced (`search_when_spent=True`); a problem counts as won when tvcs-iht ends "
        "above greedy's accuracy; starts within `bound_gap` of the bound take no steps "
        "(`near_bound`)",
        f"- left out: problems whose tasks may take more than {MAX_WORKERS_PER_TASK} workers "
        "(200 x 2,000 at a 10% cap ratio: there greedy alone took minutes)",
        "",
        "| family | size | greedy's start | problems | near bound | steps won | "
        "max gain (pts) | mean gain (pts) |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for (family, size, spent), group in sorted(groups.items()):
        gains = [row["gain"] for row in group]
        lines.append(
            f"| {family} | {size} | {spent} | {len(group)} "
            f"| {sum(row['stopped'] == 'near_bound' for row in group)} "
            f"| {sum(g > 1e-10 for g in gains)} | {max(gains):.3f} | {np.mean(gains):.3f} |"
        )
    totals = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        spent = row["spent"] >= row["budget"]
        totals[spent][0] += 1
        totals[spent][1] += row["stopped"] != "near_bound"
        totals[spent][2] += row["gain"] > 1e-10
    lines += [
        "",
        f"In all: the steps won on {totals[True][2]} of {totals[True][0]} problems whose greedy "
        f"start spent the budget ({totals[True][1]} of them not near the bound, where the "
        f"steps ran), and on {totals[False][2]} of {totals[False][0]} whose start left some "
        f"({totals[False][1]} not near the bound).",
    ]
    return lines


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    add_results_options(parser, Path("steps_when_spent.jsonl"))
    add_out_option(parser)
    args = parser.parse_args(argv)
    if args.fresh:
        set_aside(args.results)
    end_torn_line(args.results)
    done = load_rows(args.results, key=lambda row: tuple(row["key"]))
    wanted = list(instances(args.families.split(",")))
    for instance in wanted:
        if instance not in done:
            row = measure(*instance)
            append_row(args.results, row)
            done[instance] = row
    publish(report([done[instance] for instance in wanted], argv), args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
