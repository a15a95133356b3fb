"""Cost of the exclusive LASSO baselines of Figures 2 and 3: rows and columns against rows only.

For each ``n`` and trial of ``benchmarks/figure2.py``'s (least squares) and
``benchmarks/figure3.py``'s (squared hinge) generators, times ``figure2._fit_exclusive_lasso``
(``lam`` chosen from ``figure2.LAMBDAS`` on a validation split, then the refit: 5 FISTA runs)
for each variant of ``figure2.EXCLUSIVE_LASSOS``, and prints the mean seconds per instance and
the support recall after the projection onto all the caps. BLAS on one thread, as the figures.

Run::

    nice -n 10 python benchmarks/exclusive_lasso_cost.py --trials 1
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import figure2  # noqa: E402
import figure3  # noqa: E402

from projections.solvers import LeastSquares, SquaredHinge, tvcs_projection  # noqa: E402


def measure(figure: str, ns, trials: int, seed: int) -> list[str]:
    """Markdown rows ``| figure | n | seconds and recall per variant |``."""
    lines = []
    for n in ns:
        cells = {m: ([], []) for m in figure2.EXCLUSIVE_LASSOS}
        for t in range(trials):
            if figure == "2":
                A, y, w_true, structure = figure2.generate(n, t, seed)
                loss_cls = LeastSquares
            else:
                A, y, _, _, w_true, structure = figure3.generate(n, t, seed)
                loss_cls = SquaredHinge
            for method in figure2.EXCLUSIVE_LASSOS:
                rng = np.random.default_rng([seed, n, t, 1])
                start = time.perf_counter()
                w = figure2._fit_exclusive_lasso(loss_cls, A, y, structure, rng, method)
                cells[method][0].append(time.perf_counter() - start)
                w = tvcs_projection(structure)(w).x
                cells[method][1].append(figure2.support_metrics(w, w_true)["recall"])
        parts = [f"{np.mean(s):.2f} s, recall {np.mean(r):.3f}" for s, r in cells.values()]
        lines.append(f"| {figure} | {n} | " + " | ".join(parts) + " |")
        print(lines[-1], flush=True)
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ns2", type=int, nargs="+", default=list(figure2.DEFAULT_NS))
    parser.add_argument("--ns3", type=int, nargs="+", default=list(figure3.DEFAULT_NS))
    args = parser.parse_args(argv)
    print("| figure | n | " + " | ".join(figure2.EXCLUSIVE_LASSOS) + " |")
    print("|---|---|" + "---|" * len(figure2.EXCLUSIVE_LASSOS))
    start = time.perf_counter()
    measure("2", args.ns2, args.trials, args.seed)
    measure("3", args.ns3, args.trials, args.seed)
    print(f"\n{time.perf_counter() - start:.0f} s in all")


if __name__ == "__main__":
    main()
