"""Under Dawid–Skene matrices, is tvcs-iht's symmetric search ever the candidate kept?

Under confusion matrices tvcs-iht used to run two candidates and keep the better by the
Dawid–Skene vote's accuracy (docs/design.md#under-confusion-matrices): the Dawid–Skene greedy
improved by the final pass under the matrices, and tvcs-iht's search on the symmetric
(one-coin) model of the same problem with its upper-bound stop off. This script measures, per
crowd, the two candidates apart:

* **DS path**: ``solve(problem, method="tvcs-iht", seed=seed)`` with the matrices; its
  ``details["final_pass_accuracy"]`` is the DS greedy + final pass candidate's accuracy, and
  its time is the whole run's at the commit measured (with the search at commits whose
  ``details`` hold ``search_accuracy``, without it after);
* **symmetric search**: ``solve(problem.symmetric(), method="tvcs-iht", seed=seed,
  bound_gap=0.0)``, the same call the DS path made (same options and random stream), timed
  apart and scored by the exact Dawid–Skene accuracy under the matrices.

The search "would be kept" on a crowd when its DS accuracy is above the final pass's (the rule
was strict: a tie kept the final pass). Where the DS path still ran the search, the script
checks that its ``search_accuracy`` equals the one recomputed here.

Crowds (``np.random.default_rng([seed, K, r, kind, size])``): ``K`` = 2, 3, 4 labels; priors
Dirichlet around a skewed base as in :mod:`benchmarks.greedy_confusion`; workers either
``mixed`` (that benchmark's one-coin, biased and class-expert thirds), ``one-coin``
(symmetric matrices, accuracy ``U(0.55, 0.9)``: the matrices are the one-coin model, where the
symmetric search optimises the right objective) or ``ds-estimated`` (what a project gets from
one-coin workers: the matrices Dawid–Skene's EM learns from 20 answers a worker); at most 6
workers a task, ``ceil(1.5 r m / n)`` tasks a worker, budget ``r m``. ``--second-round``
adds, per crowd, the next round after one answer a task chosen by DS greedy and simulated
from the matrices (posteriors as priors, answered pairs ineligible, caps over both rounds; the
round's budget ``r m``).

Run from the repository root::

    nice -n 10 python benchmarks/confusion_search_kept.py --second-round

(``--out FILE`` writes the report as markdown too; ``docs/benchmarks/confusion_search_kept.md``.)
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from assignment.engine.answer_quality import estimate_from_answers  # noqa: E402
from assignment.engine.greedy_confusion import greedy_confusion  # noqa: E402
from assignment.engine.problem import AssignmentProblem  # noqa: E402
from assignment.engine.rounds import next_round  # noqa: E402
from assignment.engine.solve import solve  # noqa: E402
from benchmarks.confusion_crowds import (  # noqa: E402
    MAX_WORKERS_PER_TASK,
    crowd,
    ds_accuracy,
    problem_of_answers,
    skewed_priors,
)

KINDS = ("mixed", "one-coin", "ds-estimated")


def one_coin_crowd(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Symmetric matrices (n, K, K): right with ``q ~ U(0.55, 0.9)``, else a wrong label
    uniformly, mixed with 1% of the uniform answer."""
    q = rng.uniform(0.55, 0.9, size=n)
    confusion = np.repeat(((1 - q) / (k - 1))[:, None, None], k, axis=1).repeat(k, axis=2)
    confusion[:, np.arange(k), np.arange(k)] = q[:, None]
    return 0.99 * confusion + 0.01 / k


def estimated_crowd(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Dawid–Skene matrices as a project would have them: EM without gold
    (:func:`~assignment.engine.answer_quality.estimate_from_answers`, its default shrinkage) on
    20 answers a worker (``4 n`` earlier tasks, 5 answers each, labels uniform) from one-coin
    workers of accuracy ``U(0.55, 0.9)``."""
    accuracy = rng.uniform(0.55, 0.9, size=n)
    tasks = 4 * n
    truth = rng.integers(k, size=tasks)
    worker = np.concatenate([rng.choice(n, 5, replace=False) for _ in range(tasks)])
    task = np.repeat(np.arange(tasks), 5)
    wrong = (truth[task] + rng.integers(1, k, size=task.size)) % k
    label = np.where(rng.random(task.size) < accuracy[worker], truth[task], wrong)
    fitted = estimate_from_answers(
        worker_index=worker,
        task_index=task,
        label=label,
        n_workers=n,
        n_tasks=tasks,
        n_labels=k,
        model="dawid-skene",
    )
    return fitted.confusion


def instance(seed, k, r, kind, n, m, *, budget_answers=None) -> AssignmentProblem:
    rng = np.random.default_rng([seed, k, r, KINDS.index(kind), n, m])
    prior = skewed_priors(rng, k, m)
    makers = {"mixed": crowd, "one-coin": one_coin_crowd, "ds-estimated": estimated_crowd}
    confusion = makers[kind](rng, n, k)
    return problem_of_answers(prior, confusion, r if budget_answers is None else budget_answers)


def second_round(seed, k, r, kind, n, m) -> AssignmentProblem:
    """The round after one DS-greedy answer a task, answers simulated from the matrices."""
    whole = instance(seed, k, r, kind, n, m, budget_answers=r + 1)
    first = greedy_confusion(
        AssignmentProblem(
            whole.quality,
            max_workers_per_task=MAX_WORKERS_PER_TASK,
            max_tasks_per_worker=whole.max_tasks_per_worker,
            budget=m,
            prior=whole.prior_distribution,
            n_labels=k,
            confusion=whole.confusion,
        )
    )
    rng = np.random.default_rng([seed, k, r, 99])
    prior = whole.prior_distribution
    truth = (rng.random(m)[:, None] > np.cumsum(prior, axis=1)).sum(axis=1).clip(max=k - 1)
    rows, cols = first.rows, first.cols
    cdf = np.cumsum(whole.confusion[rows, truth[cols]], axis=1)
    label = (rng.random(len(rows))[:, None] > cdf).sum(axis=1).clip(max=k - 1)
    return next_round(whole, worker_index=rows, task_index=cols, label=label).problem


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    out = function(*args, **kwargs)
    return out, time.perf_counter() - started


def one_crowd(problem: AssignmentProblem, seed: int) -> dict:
    full, full_s = timed(solve, problem, method="tvcs-iht", seed=seed)
    search, search_s = timed(
        solve, problem.symmetric(), method="tvcs-iht", seed=seed, bound_gap=0.0
    )
    search_acc = ds_accuracy(problem, search.rows, search.cols)
    in_path = full.details.get("search_accuracy")
    return {
        "pass": full.details["final_pass_accuracy"],
        "greedy": full.details["greedy_accuracy"],
        "search": search_acc,
        "full_s": full_s,
        "search_s": search_s,
        "with_search": in_path is not None,
        "mismatch": in_path is not None and abs(in_path - search_acc) > 1e-12,
    }


def table(results: dict) -> list[str]:
    lines = [
        "| crowd | K | n x m | r | round | crowds | search kept | search - pass, mean | "
        "search - pass, max | pass - DS greedy, mean | run s | search s | search / run |",
        "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (kind, k, size, r, rnd), rows in results.items():
        search = np.array([row["search"] for row in rows])
        refined = np.array([row["pass"] for row in rows])
        greedy = np.array([row["greedy"] for row in rows])
        full_s = np.array([row["full_s"] for row in rows])
        search_s = np.array([row["search_s"] for row in rows])
        gap = search - refined
        lines.append(
            f"| {kind} | {k} | {size} | {r} | {rnd} | {len(rows)} | {int(np.sum(gap > 0))} | "
            f"{100 * gap.mean():+.3f} | {100 * gap.max():+.3f} | "
            f"{100 * (refined - greedy).mean():+.3f} | {full_s.mean():.2f} | "
            f"{search_s.mean():.2f} | {search_s.sum() / full_s.sum():.2f} |"
        )
    return lines


def report(results: dict, args, seconds: float) -> list[str]:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    rows = [row for crowds in results.values() for row in crowds]
    gap = np.array([row["search"] - row["pass"] for row in rows])
    with_search = sum(row["with_search"] for row in rows)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return [
        f"Measured {datetime.date.today()} with `nice -n 10 python {' '.join(sys.argv)}` "
        f"(commit {commit}, {platform.machine()}, {os.cpu_count()} cores shared with other "
        f"work, load average {load:.1f}; {seconds:.0f} s in all). Accuracies are exact "
        "Dawid-Skene accuracies, differences in points (x 100); 'run s' is the whole "
        "tvcs-iht run under the matrices, 'search s' the symmetric search alone "
        f"({'the run includes it' if with_search == len(rows) else 'see the note'}).",
        "",
        *table(results),
        "",
        f"In all: the search would be kept on {int(np.sum(gap > 0))} of {len(rows)} crowds; "
        f"its largest margin over the final pass {100 * gap.max():+.4f} points, the mean "
        f"{100 * gap.mean():+.4f}. The DS path ran the search on {with_search} of {len(rows)} "
        f"crowds; its search_accuracy differed from the recomputed one on "
        f"{sum(row['mismatch'] for row in rows)}.",
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--labels", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--answers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--sizes", default="30x100,100x1000", help="n x m, comma separated")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--second-round", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    for k in args.labels:  # compile the kernels first
        one_crowd(instance(0, k, 2, "mixed", 10, 10), 0)
    results = {}
    for kind in args.kinds.split(","):
        for k in args.labels:
            for size in args.sizes.split(","):
                n, m = map(int, size.split("x"))
                for r in args.answers:
                    makers = {"first": instance}
                    if args.second_round:
                        makers["second"] = second_round
                    for rnd, make in makers.items():
                        results[(kind, k, size, r, rnd)] = [
                            one_crowd(make(seed, k, r, kind, n, m), seed)
                            for seed in range(args.seeds)
                        ]
                    print(f"{kind} K={k} {size} r={r}: done", file=sys.stderr, flush=True)
    lines = report(results, args, time.perf_counter() - started)
    text = "\n".join(lines) + "\n"
    if args.out is not None:
        args.out.write_text(f"# tvcs-iht's symmetric search under confusion matrices\n\n{text}")
    print(text)


if __name__ == "__main__":
    main()
