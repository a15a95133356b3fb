"""The exact projection of this checkout against another tree's, interleaved in one process.

What it measures
----------------
A change to ``projections/`` that should not change speed (a refactor) is best timed side by
side: this script imports the *old* tree's ``projections`` package first (from ``--old``, a
folder holding ``projections/``, e.g. made by ``git archive <commit> projections | tar -x -C
DIR``), keeps its ``_exact.solve`` and ``TVCSStructure``, drops it from ``sys.modules`` and
imports this checkout's. Both kernels then run in the same process on the instances of
``benchmarks/projection.py`` (:func:`benchmarks.projection.make_instance`: both budgets),
alternating old-new and new-old from one repeat to the next, so that noise from other load
hits both alike. Per instance it gives the median seconds of each, the ratio of the medians
(new / old: above 1 is slower), the median of the per-repeat ratios and the ratio of the
fastest runs, and checks that both return the same support. ``--old`` may be this checkout
itself: the ratios then show the noise. ``cold`` times a call without a warm start; ``warm``
one from the state of the unperturbed instance's projection, on the instance plus ``1e-4``
Gaussian noise (as inside IHT). The kernel (``projections._exact.solve``) is timed, not
``projections.tvcs.project``, whose import of the kernel happens at call time.

Run from the repository root::

    python benchmarks/projection_ab.py --old /tmp/exact-old
    python benchmarks/projection_ab.py --old /tmp/exact-old --sizes 100x1000 --repeats 3
"""

from __future__ import annotations

import argparse
import importlib
import logging
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

logger = logging.getLogger("projection_ab")


def import_side(root: Path):
    """``(solve, TVCSStructure)`` of the ``projections`` package under ``root``.

    Any ``projections`` modules already imported are dropped first, and the package is
    dropped again afterwards: the returned functions keep their own modules alive.
    """
    for name in [m for m in sys.modules if m == "projections" or m.startswith("projections.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        package = importlib.import_module("projections")
        if not Path(package.__file__).resolve().is_relative_to(root.resolve()):
            raise RuntimeError(f"imported {package.__file__}, not from {root}")
        solve = importlib.import_module("projections._exact").solve
        structure = importlib.import_module("projections.structure").TVCSStructure
    finally:
        sys.path.remove(str(root))
    for name in [m for m in sys.modules if m == "projections" or m.startswith("projections.")]:
        del sys.modules[name]
    return solve, structure


def timed(solve, values, structure, warm_start=None):
    """``(seconds, output)`` of one call."""
    start = time.perf_counter()
    out = solve(values, structure, warm_start=warm_start)
    return time.perf_counter() - start, out


def compare(sides, V, caps, total, repeats, rng):
    """Cold and warm timings of both sides on one instance; ``{kind: (old, new) seconds}``."""
    row_caps, col_caps = caps
    flat = V.reshape(-1)
    nearby = (V + 1e-4 * rng.standard_normal(V.shape)).reshape(-1)
    setups = []
    for solve, structure_type in sides:
        structure = structure_type.from_matrix(
            V.shape, max_per_row=row_caps, max_per_col=col_caps, total=total
        )
        state = solve(flat, structure).warm_start  # also the first call on this structure
        setups.append((solve, structure, state))
    times = {"cold": ([], []), "warm": ([], [])}
    for r in range(repeats):
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for kind, values in (("cold", flat), ("warm", nearby)):
            supports = [None, None]
            for side in order:
                solve, structure, state = setups[side]
                seconds, out = timed(solve, values, structure, state if kind == "warm" else None)
                times[kind][side].append(seconds)
                supports[side] = out.support
            if not np.array_equal(supports[0], supports[1]):
                raise AssertionError(f"{kind}: the old and new supports differ")
    return times


def row(size, budget, total, kind, old, new) -> str:
    """A table row: medians, their ratio, the median paired ratio and the ratio of the minima."""
    ratio = statistics.median(new) / statistics.median(old)
    paired = statistics.median(n / o for o, n in zip(old, new, strict=True))
    return (
        f"| {size} | {budget} ({total:,}) | {kind} | {statistics.median(old):.4f} "
        f"| {statistics.median(new):.4f} | {ratio:.3f} | {paired:.3f} | {min(new) / min(old):.3f} |"
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a folder holding projections/")
    parser.add_argument("--sizes", default="100x1000,300x3000,1000x10000")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--weights", default="normal", help="as in benchmarks/projection.py (%(default)s)"
    )
    parser.add_argument("--out", type=Path, help="also write the Markdown report here")
    args = parser.parse_args(argv)

    sides = [import_side(args.old), import_side(ROOT)]
    sys.path.insert(0, str(ROOT))
    from benchmarks.child_runs import header
    from benchmarks.markdown_report import publish
    from benchmarks.projection import make_instance, parse_sizes

    V, rows, cols, totals = make_instance(8, 40, args.seed)
    compare(sides, V, (rows, cols), totals["large"], 2, np.random.default_rng(0))  # JIT
    report = header("Exact projection: old tree against this checkout", sys.argv, None)
    report += [
        "| size | budget (total) | call | old median s | new median s | new / old "
        "| median of paired ratios | new min / old min |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for n, m in parse_sizes(args.sizes):
        V, rows, cols, totals = make_instance(n, m, args.seed, args.weights)
        for budget, total in totals.items():
            print(f"{n}x{m}, {budget} budget ...", file=sys.stderr)
            rng = np.random.default_rng([args.seed, n, m])
            times = compare(sides, V, (rows, cols), total, args.repeats, rng)
            for kind, (old, new) in times.items():
                report.append(row(f"{n}x{m}", budget, total, kind, old, new))
    publish(report, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
