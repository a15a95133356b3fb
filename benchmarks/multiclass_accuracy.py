"""Time of the exact K-class expected accuracy against the binary one, at equal workers per task.

What it measures
----------------
``--tasks`` tasks (default 1,000), each given ``k`` distinct workers out of a pool of 50, for
every ``k`` of ``--workers-per-task`` (default 5 and 8). Qualities are drawn uniformly from
``[--low, --high]`` (default ``[0.3, 0.95]``), so every task's qualities are distinct: the
exact sum has ``K^k`` states before pruning. Priors are Dirichlet(1) per task (binary: ``p``
uniform in ``[0.05, 0.95]``), or uniform with ``--prior uniform``. For each ``k``,
the best of ``--repeats`` wall-clock times (after one untimed call that compiles or loads the
numba kernel) of

* :func:`assignment.engine.multiclass.expected_accuracy_multiclass` with ``--labels`` labels,
* the same at ``K = 2`` (prior ``[1 - p, p]``),
* the binary :func:`assignment.engine.accuracy.expected_accuracy` (prior ``p``).

Run from the repository root::

    python benchmarks/multiclass_accuracy.py
    python benchmarks/multiclass_accuracy.py --labels 3 --workers-per-task 4 8 12
    python benchmarks/multiclass_accuracy.py --prior uniform --low 0.26 --high 0.35  # worst case
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

from assignment.engine.accuracy import expected_accuracy  # noqa: E402
from assignment.engine.multiclass import expected_accuracy_multiclass  # noqa: E402

POOL = 50


def best_time(repeats: int, function, *args, **kwargs) -> tuple[float, float]:
    """``(value, best seconds)`` of ``repeats`` calls after a first untimed one."""
    value = function(*args, **kwargs)
    best = np.inf
    for _ in range(repeats):
        started = time.perf_counter()
        function(*args, **kwargs)
        best = min(best, time.perf_counter() - started)
    return value, best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--labels", type=int, default=4)
    parser.add_argument("--workers-per-task", type=int, nargs="+", default=[5, 8])
    parser.add_argument("--low", type=float, default=0.3)
    parser.add_argument("--high", type=float, default=0.95)
    parser.add_argument("--prior", choices=["dirichlet", "uniform"], default="dirichlet")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    m, n_labels = args.tasks, args.labels
    print(f"{m:,} tasks, qualities U[{args.low}, {args.high}], {args.prior} priors, "
          f"best of {args.repeats}\n")  # fmt: skip
    print(f"| k | K = {n_labels} | K = 2 (multiclass) | binary | K = {n_labels} / binary |")
    print("|---:|---:|---:|---:|---:|")
    for k in args.workers_per_task:
        quality = rng.uniform(args.low, args.high, (POOL, m))
        assignment = np.zeros((POOL, m), dtype=bool)
        for j in range(m):
            assignment[rng.choice(POOL, k, replace=False), j] = True
        if args.prior == "uniform":  # every label tied before the answers: less pruning
            prior, p = np.full(n_labels, 1.0 / n_labels), np.full(m, 0.5)
        else:
            prior, p = rng.dirichlet(np.ones(n_labels), m), rng.uniform(0.05, 0.95, m)
        both = (quality, assignment)
        _, t_k = best_time(args.repeats, expected_accuracy_multiclass, *both, prior=prior,
                           n_labels=n_labels)  # fmt: skip
        two, t_2 = best_time(args.repeats, expected_accuracy_multiclass, *both,
                             prior=np.column_stack([1 - p, p]), n_labels=2)  # fmt: skip
        binary, t_b = best_time(args.repeats, expected_accuracy, *both, prior=p)
        assert abs(two - binary) < 1e-12, (two, binary)
        print(f"| {k} | {t_k * 1e3:,.1f} ms | {t_2 * 1e3:,.1f} ms | {t_b * 1e3:,.1f} ms "
              f"| {t_k / t_b:,.0f}x |")  # fmt: skip


if __name__ == "__main__":
    main()
