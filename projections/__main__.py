"""Demo: ``python -m projections`` projects a random worker x task matrix every way.

Options: ``--workers N --tasks M --seed S`` (defaults 100, 1000, 0).
"""

from __future__ import annotations

import argparse

import numpy as np

from projections.tvcs import project_matrix


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m projections", description=__doc__)
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    n, m = args.workers, args.tasks
    V = rng.standard_normal((n, m))
    per_worker = rng.integers(1, max(1, m // 4) + 1, n)
    per_task = rng.integers(1, max(1, n // 4) + 1, m)
    budget = int(0.8 * min(per_worker.sum(), per_task.sum()))
    print(f"TVCS projection of a {n} x {m} matrix, V ~ N(0, 1):")
    print(f"  per-worker caps in [1, {m // 4}], per-task caps in [1, {n // 4}], budget {budget}")
    print(f"  {'method':<8} {'objective':>14} {'kept':>8} {'seconds':>8}  message")
    methods = ["exact", "greedy"] + (["lp"] if n * m <= 200_000 else [])
    for method in methods:
        r = project_matrix(
            V, max_per_row=per_worker, max_per_col=per_task, total=budget, method=method
        )
        print(
            f"  {method:<8} {r.objective:>14.4f} {int(r.support.sum()):>8} {r.seconds:>8.3f}  "
            f"{r.message}"
        )


if __name__ == "__main__":
    main()
