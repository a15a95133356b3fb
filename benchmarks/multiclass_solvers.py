"""Time and accuracy of greedy and q-lp with K labels against two labels on the same instance.

What it measures
----------------
An instance of ``--workers`` workers (default 100) x ``--tasks`` tasks (default 1,000) at cap
ratio ``--ratio`` (default 0.03, as in Figure 4 of Yang et al. 2017): ``ratio * workers``
workers per task (3), ``ratio * tasks`` tasks per worker (30), and a budget of ``--budget``
(default 0.8) of what the caps allow (2,400 pairs). Qualities uniform in ``[--low, --high]``
(default ``[0.5, 0.9]``, above ``1 / K`` for every ``K <= 2``), priors uniform (``0.5`` for
two labels, ``1 / K`` for ``K``) or, with ``--prior dirichlet``, Dirichlet(1) per task (binary:
its ``P(y = 1)`` at ``K = 2``). The same qualities and caps serve every ``K`` of ``--labels``
(default 2 and 4); a ``K``-label worker of quality ``Q`` spreads his mistakes over ``K - 1``
labels, so the same ``Q`` is worth more with more labels.

For every ``K`` and method (greedy, q-lp, and random as the floor), over ``--seeds`` instances
(default 3), the mean of

* the method's wall-clock time (``SolveResult.seconds``: the solve, not the evaluation; after
  one untimed run on the first instance that compiles or loads the numba kernels),
* the time of the exact evaluation of the result (``solve``'s ``expected_accuracy``: the binary
  or the K-class exact accuracy),
* the expected accuracy, and its gap to the upper bound (:mod:`~assignment.engine.upper_bound`).

Run from the repository root::

    python benchmarks/multiclass_solvers.py
    python benchmarks/multiclass_solvers.py --labels 2 3 4 5 --prior dirichlet
    python benchmarks/multiclass_solvers.py --labels 4 --methods greedy tvcs-iht random
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

from assignment.engine import AssignmentProblem, accuracy_upper_bound, solve  # noqa: E402
from assignment.engine.solve import METHODS as ALL_METHODS  # noqa: E402
from assignment.engine.solve import evaluate  # noqa: E402

METHODS = ("greedy", "q-lp", "random")  # the default of --methods


def instance(args, seed: int, n_labels: int) -> AssignmentProblem:
    """The instance of ``seed`` with ``n_labels`` labels: the same qualities for every ``K``."""
    quality_rng, prior_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2)
    )
    n, m = args.workers, args.tasks
    quality = quality_rng.uniform(args.low, args.high, (n, m))
    per_task, per_worker = round(args.ratio * n), round(args.ratio * m)
    if args.prior == "uniform":
        prior = None
    elif n_labels == 2:
        prior = prior_rng.dirichlet(np.ones(2), m)[:, 1]
    else:
        prior = prior_rng.dirichlet(np.ones(n_labels), m)
    return AssignmentProblem(
        quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=int(args.budget * min(per_task * m, per_worker * n)),
        prior=prior,
        n_labels=n_labels,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--ratio", type=float, default=0.03)
    parser.add_argument("--budget", type=float, default=0.8)
    parser.add_argument("--labels", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--low", type=float, default=0.5)
    parser.add_argument("--high", type=float, default=0.9)
    parser.add_argument("--prior", choices=["uniform", "dirichlet"], default="uniform")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--methods", nargs="+", choices=ALL_METHODS, default=list(METHODS))
    args = parser.parse_args(argv)
    methods = args.methods
    first = instance(args, 0, args.labels[0])
    print(f"{args.workers} workers x {args.tasks:,} tasks, {first.max_workers_per_task[0]} per "
          f"task, {first.max_tasks_per_worker[0]} per worker, budget {first.budget:,}; "
          f"Q U[{args.low}, {args.high}], {args.prior} priors; mean over {args.seeds} "
          "instances\n")  # fmt: skip
    print("| K | method | solve | evaluation | expected accuracy | upper bound - accuracy |")
    print("|---:|---|---:|---:|---:|---:|")
    for n_labels in args.labels:
        for method in methods:  # untimed: numba compiles or loads its kernels
            solve(instance(args, 0, n_labels), method=method, seed=0)
        rows = {method: [] for method in methods}
        for seed in range(args.seeds):
            problem = instance(args, seed, n_labels)
            bound = accuracy_upper_bound(problem).value
            for method in methods:
                result = solve(problem, method=method, seed=seed)
                started = time.perf_counter()
                evaluate(problem, result.assignment, seed=seed)
                evaluation = time.perf_counter() - started
                assert problem.is_feasible(result.assignment)
                rows[method].append(
                    (result.seconds, evaluation, result.expected_accuracy,
                     bound - result.expected_accuracy)
                )  # fmt: skip
        for method in methods:
            solve_s, eval_s, accuracy, gap = np.mean(rows[method], axis=0)
            print(f"| {n_labels} | {method} | {solve_s:,.3f} s | {eval_s * 1e3:,.1f} ms | "
                  f"{accuracy:.4f} | {gap:.5f} |")  # fmt: skip


if __name__ == "__main__":
    main()
