"""Demo: ``python -m projections`` projects a random worker x task matrix with each method.

Every method is run once on a small matrix first, so that the times shown are those of the
projection, not of loading numba's compiled kernels. ``lp`` is shown up to 200,000 entries
and ``pgd`` (the slow baseline) up to 10,000.

Options: ``--workers N --tasks M --seed S`` (defaults 100, 1000, 0; N and M positive).
"""

from __future__ import annotations

import argparse

import numpy as np

from projections.tvcs import project_matrix

#: The largest ``workers * tasks`` each slow method is shown for.
LARGEST = {"lp": 200_000, "pgd": 10_000}


def positive_int(text: str) -> int:
    """An argparse type: a whole number ``>= 1``, else argparse's usage error saying so."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, got {text!r}")
    return value


def methods_for(n_entries: int) -> list[str]:
    """The methods shown for a matrix of ``n_entries``: fast ones always, slow ones when small."""
    return [m for m in ("exact", "greedy", "lp", "pgd") if n_entries <= LARGEST.get(m, n_entries)]


def warm_up(methods: list[str]) -> None:
    """Run each method on a small random matrix: numba loads (or compiles) its kernels here."""
    V = np.random.default_rng(0).standard_normal((10, 20))
    for method in methods:
        project_matrix(V, max_per_row=3, max_per_col=2, total=15, method=method)


def main(argv=None) -> None:
    """Parse the options, then print one line per method: objective, kept, seconds, message."""
    parser = argparse.ArgumentParser(prog="python -m projections", description=__doc__)
    parser.add_argument("--workers", type=positive_int, default=100)
    parser.add_argument("--tasks", type=positive_int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    n, m = args.workers, args.tasks
    V = rng.standard_normal((n, m))
    most_per_worker, most_per_task = max(1, m // 4), max(1, n // 4)
    per_worker = rng.integers(1, most_per_worker + 1, n)
    per_task = rng.integers(1, most_per_task + 1, m)
    budget = int(0.8 * min(per_worker.sum(), per_task.sum()))
    methods = methods_for(n * m)
    warm_up(methods)
    print(f"TVCS projection of a {n} x {m} matrix, V ~ N(0, 1):")
    print(
        f"  per-worker caps in [1, {most_per_worker}], per-task caps in [1, {most_per_task}], "
        f"budget {budget}"
    )
    print(f"  {'method':<8} {'objective':>14} {'kept':>8} {'seconds':>8}  message")
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
