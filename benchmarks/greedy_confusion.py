"""Greedy under Dawid–Skene confusion matrices against today's greedy on the one-coin quality.

What it generates (per crowd, from ``np.random.default_rng([seed, K, answers a task])``)
-----------------------------------------------------------------------------------------
``--workers`` workers (default 100) and ``--tasks`` tasks (default 1,000), ``K`` labels (3 and
4). Each task's prior is Dirichlet(20 b) around the skewed base ``b`` proportional to
``K, K - 1, ..., 1``. Workers are of three kinds, a third each:

* **one-coin**: right with probability ``q ~ U(0.55, 0.85)``, else a wrong label uniformly;
* **biased**: with probability ``beta ~ U(0.3, 0.6)`` they answer their favourite label (one
  drawn per worker), else as a one-coin worker of ``q ~ U(0.6, 0.9)``;
* **class experts**: right with probability 0.95 on their class (one drawn per worker), and on
  the other classes an answer uniform over the ``K`` labels.

Every entry is then mixed with 1% of the uniform answer, so no probability is 0. The caps:
at most 6 workers a task (within the exact limit of the matrices for ``K <= 4``), at most
``ceil(1.5 r m / n)`` tasks a worker, and a budget of ``r`` answers a task (``r`` = 2 and 4).

What it compares
----------------
* **DS greedy**: :func:`assignment.engine.greedy_confusion.greedy_confusion` on the problem
  with the matrices;
* **one-coin greedy**: today's :func:`assignment.engine.greedy.greedy_pairs` on the same problem
  without them, quality ``Q[i, j] = sum_c pi_jc C_i[c, c]`` (each worker's accuracy under the
  task's prior), as a one-coin estimate of the same crowd would give.

Both assignments are scored by the exact expected accuracy of the Dawid–Skene vote under the
matrices (:func:`assignment.engine.confusion.confusion_accuracy`), and by the realised accuracy
of the Dawid–Skene vote's labels on one draw of true labels (from the priors) and answers (from
the matrices) per crowd, the same draw for both methods. Mean ± sd over ``--seeds`` crowds
(default 10), and the paired difference DS − one-coin. Times are wall-clock seconds of each
greedy in the same process, side by side (numba kernels compiled before timing); the ratio is
DS / one-coin.

A last table runs both greedies on tiny crowds of the same kinds (4 workers, 2 tasks, budget
5, at most 2 tasks a worker) against the brute-force optimum over every feasible assignment.

Run from the repository root::

    nice -n 10 python benchmarks/greedy_confusion.py --out docs/benchmarks/greedy_confusion.md
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

from assignment.engine.greedy import greedy_pairs  # noqa: E402
from assignment.engine.greedy_confusion import greedy_confusion  # noqa: E402
from assignment.engine.problem import AssignmentProblem  # noqa: E402
from benchmarks.confusion_crowds import (  # noqa: E402
    MAX_WORKERS_PER_TASK,
    brute_force_optimum,
    crowd,
    ds_accuracy,
    problem_of_answers,
    skewed_priors,
)


def instance(seed: int, k: int, r: int, n: int, m: int) -> AssignmentProblem:
    rng = np.random.default_rng([seed, k, r])
    prior = skewed_priors(rng, k, m)
    return problem_of_answers(prior, crowd(rng, n, k), r)


def realised(problem: AssignmentProblem, rows, cols, truth, answer_u) -> float:
    """Share of tasks whose Dawid–Skene label (posterior argmax) is the drawn truth; answers
    drawn by inverting each pair's answer distribution at the uniform ``answer_u[i, j]``."""
    conf = problem.confusion
    cdf = np.cumsum(conf[rows, truth[cols]], axis=1)
    answers = np.minimum((answer_u[rows, cols][:, None] >= cdf).sum(axis=1), conf.shape[1] - 1)
    log_post = np.log(problem.prior_distribution).copy()
    np.add.at(log_post, cols, np.log(conf[rows, :, answers]))
    return float(np.mean(log_post.argmax(axis=1) == truth))


def timed(function, *args):
    started = time.perf_counter()
    out = function(*args)
    return out, time.perf_counter() - started


def one_crowd(seed: int, k: int, r: int, n: int, m: int) -> dict:
    problem = instance(seed, k, r, n, m)
    ds, ds_seconds = timed(greedy_confusion, problem)
    coin, coin_seconds = timed(greedy_pairs, problem.symmetric())
    rng = np.random.default_rng([seed, k, r, 1])
    cum = np.cumsum(problem.prior_distribution, axis=1)
    truth = np.minimum((rng.random(m)[:, None] >= cum).sum(axis=1), k - 1)
    answer_u = rng.random((n, m))
    return {
        "exact": (
            ds_accuracy(problem, ds.rows, ds.cols),
            ds_accuracy(problem, coin.rows, coin.cols),
        ),
        "realised": (
            realised(problem, ds.rows, ds.cols, truth, answer_u),
            realised(problem, coin.rows, coin.cols, truth, answer_u),
        ),
        "seconds": (ds_seconds, coin_seconds),
        "pairs": (ds.n_assigned, coin.n_assigned),
    }


def tiny_problem(seed: int) -> AssignmentProblem:
    """A tiny crowd: 4 workers, 2 tasks, ``K = 2 + seed % 3``, budget 5, at most 3 workers a
    task and 2 tasks a worker."""
    k = 2 + seed % 3
    rng = np.random.default_rng([seed, 99])
    prior = rng.dirichlet(np.full(k, 2.0), size=2)
    confusion = crowd(rng, 4, k)
    return AssignmentProblem(
        np.einsum("jc,icc->ij", prior, confusion),
        max_workers_per_task=3,
        max_tasks_per_worker=2,
        budget=5,
        prior=prior,
        n_labels=k,
        confusion=confusion,
    )


def tiny(seeds: int) -> dict:
    """Both greedies against the optimum on tiny crowds (:func:`tiny_problem`)."""
    gaps = {"ds": [], "coin": []}
    for seed in range(seeds):
        problem = tiny_problem(seed)
        optimum = brute_force_optimum(problem)
        for name, out in (
            ("ds", greedy_confusion(problem)),
            ("coin", greedy_pairs(problem.symmetric())),
        ):
            gaps[name].append(optimum - ds_accuracy(problem, out.rows, out.cols))
    return {name: np.array(v) for name, v in gaps.items()}


def mean_sd(values) -> str:
    values = np.asarray(values)
    return f"{values.mean():.4f} ± {values.std(ddof=1):.4f}"


def report(results: dict, small: dict, args, seconds: float) -> list[str]:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Greedy under confusion matrices against the one-coin greedy",
        "",
        f"Measured {datetime.date.today()} with `nice -n 10 python {' '.join(sys.argv)}` "
        f"(commit {commit}, {platform.machine()}, {os.cpu_count()} cores shared with other work, "
        f"load average {load:.1f}; {seconds:.0f} s in all). {args.workers} workers x "
        f"{args.tasks} tasks, {args.seeds} crowds per row (seeds 0-{args.seeds - 1}), at most "
        f"{MAX_WORKERS_PER_TASK} workers a task; crowds, caps and methods as the script's "
        "docstring says. Accuracies are of the Dawid-Skene vote under the crowd's matrices; "
        "differences are DS greedy minus one-coin greedy, paired by crowd.",
        "",
        "| K | answers a task | DS greedy, exact | one-coin greedy, exact | difference | "
        "DS greedy, realised | one-coin greedy, realised | difference | time ratio DS / one-coin |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (k, r), rows in results.items():
        exact = np.array([row["exact"] for row in rows])
        real = np.array([row["realised"] for row in rows])
        secs = np.array([row["seconds"] for row in rows])
        ratio = secs[:, 0] / secs[:, 1]
        lines.append(
            f"| {k} | {r} | {mean_sd(exact[:, 0])} | {mean_sd(exact[:, 1])} | "
            f"{mean_sd(exact[:, 0] - exact[:, 1])} | {mean_sd(real[:, 0])} | "
            f"{mean_sd(real[:, 1])} | {mean_sd(real[:, 0] - real[:, 1])} | "
            f"{np.median(ratio):.1f}x (median; {secs[:, 0].mean():.2f} s vs "
            f"{secs[:, 1].mean():.2f} s) |"
        )
    ds, coin = small["ds"], small["coin"]
    lines += [
        "",
        f"Tiny crowds against the brute-force optimum ({ds.size} crowds, K = 2, 3, 4 in turn; "
        "4 workers, 2 tasks, budget 5, at most 3 workers a task and 2 tasks a worker):",
        "",
        "| | DS greedy | one-coin greedy |",
        "|---|---:|---:|",
        f"| mean loss to the optimum | {ds.mean():.4f} | {coin.mean():.4f} |",
        f"| largest loss | {ds.max():.4f} | {coin.max():.4f} |",
        f"| crowds solved optimally | {np.sum(ds <= 1e-12)} | {np.sum(coin <= 1e-12)} |",
        f"| crowds where it is below the other | {np.sum(ds > coin + 1e-12)} | "
        f"{np.sum(coin > ds + 1e-12)} |",
    ]
    return lines


def add_crowd_options(parser: argparse.ArgumentParser) -> None:
    """The crowds both DS benchmarks draw (this one and ``tvcs_iht_confusion.py``): their
    size, how many seeds, the label counts and answers per task."""
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--labels", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--answers", type=int, nargs="+", default=[2, 4])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_crowd_options(parser)
    parser.add_argument("--tiny", type=int, default=60)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    one_crowd(0, 3, 2, 10, 10)  # compile the kernels before anything is timed
    results = {}
    for k in args.labels:
        for r in args.answers:
            results[(k, r)] = [
                one_crowd(seed, k, r, args.workers, args.tasks) for seed in range(args.seeds)
            ]
            print(f"K = {k}, r = {r}: done", file=sys.stderr)
    small = tiny(args.tiny)
    text = "\n".join(report(results, small, args, time.perf_counter() - started)) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
