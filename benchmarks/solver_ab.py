"""The IHT-family solvers of this checkout against another tree's, interleaved in one process.

What it measures
----------------
Issue 14 moved ``iht``, ``gradmp`` and ``stochastic_iht`` onto one loop
(``projections/solvers/_loop.py``) and split ``method="pgd"``'s solver into small pieces; results
and speed must not change. Like ``benchmarks/projection_ab.py``, this script imports the *old*
tree's ``projections`` package (``--old``, a folder holding ``projections/``, e.g. made by ``git
archive main projections | tar -x -C DIR``) and this checkout's into one process. On Figure 2's
regression instances (``benchmarks/figure2.py``: 20 x 20 weights, row, column and total caps,
``n`` Gaussian samples, least squares) each side runs, alternating old-new and new-old from one
repeat to the next:

* ``iht``: :func:`~projections.solvers.iht` with its defaults (the fixed-point escape on);
* ``iht escape=0``: plain Algorithm 1;
* ``gradmp``: :func:`~projections.solvers.gradmp` with its defaults;
* ``stochastic_iht``: 300 iterations, seed 0, evaluated every 5;
* ``pgd``: the projection ``method="pgd"`` of a Gaussian 20 x 20 matrix under the same caps
  (2,000 iterations).

Each pair of runs must return the same solution, support, history and message (bit for bit;
the script stops otherwise). Per row: the median seconds of each side, the ratio of the
medians (new / old: above 1 is slower), the median of the per-repeat ratios and the ratio of the
fastest runs. ``--old`` may be this checkout itself: the ratios then show the noise.

Run from the repository root::

    git archive main projections | tar -x -C /tmp/solvers-old
    python benchmarks/solver_ab.py --old /tmp/solvers-old --out /tmp/solver_ab.md
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

SIDE = 20


def import_side(root: Path) -> dict:
    """The solvers and the projection of the ``projections`` package under ``root``.

    Any ``projections`` modules already imported are dropped first and again afterwards: the
    returned functions keep their own modules alive.
    """

    def drop() -> None:
        for name in [m for m in sys.modules if m == "projections" or m.startswith("projections.")]:
            del sys.modules[name]

    drop()
    sys.path.insert(0, str(root))
    try:
        package = importlib.import_module("projections")
        if not Path(package.__file__).resolve().is_relative_to(root.resolve()):
            raise RuntimeError(f"imported {package.__file__}, not from {root}")
        solvers = importlib.import_module("projections.solvers")
        tvcs = importlib.import_module("projections.tvcs")
        importlib.import_module("projections._pgd")  # project() imports it at call time
        importlib.import_module("projections._exact")
        side = {
            "iht": solvers.iht,
            "gradmp": solvers.gradmp,
            "stochastic_iht": solvers.stochastic_iht,
            "LeastSquares": solvers.LeastSquares,
            "tvcs_projection": solvers.tvcs_projection,
            "TVCSStructure": package.TVCSStructure,
            "project": tvcs.project,
        }
    finally:
        sys.path.remove(str(root))
    drop()
    return side


def instance(n: int, seed: int) -> dict:
    """Figure 2's generator (``benchmarks/figure2.py``) in numpy alone, so both sides build
    their own structure and projection from the same arrays."""
    rng = np.random.default_rng([seed, n])
    rows = rng.integers(1, SIDE + 1, size=SIDE)
    cols = rng.integers(1, SIDE + 1, size=SIDE)
    total = int(0.8 * min(rows.sum(), cols.sum()))
    support_of = rng.standard_normal((SIDE, SIDE))
    values = rng.standard_normal((SIDE, SIDE))
    A = rng.standard_normal((n, SIDE, SIDE))
    noise = 0.01 * rng.standard_normal(n)
    V = rng.standard_normal((SIDE, SIDE))
    return {"caps": (rows, cols, total), "support_of": support_of, "values": values, "A": A,
            "noise": noise, "V": V}  # fmt: skip


def runner(side: dict, inst: dict, case: str):
    """A function of no arguments running ``case`` on ``inst`` with ``side``'s code."""
    rows, cols, total = inst["caps"]
    structure = side["TVCSStructure"].from_matrix(
        (SIDE, SIDE), max_per_row=rows, max_per_col=cols, total=total
    )
    projection = side["tvcs_projection"](structure)
    w_true = np.where(projection(inst["support_of"]).support, inst["values"], 0.0)
    A = inst["A"]
    loss = side["LeastSquares"](A, np.einsum("nij,ij->n", A, w_true) + inst["noise"])
    if case == "iht":
        return lambda: side["iht"](loss, projection)
    if case == "iht escape=0":
        return lambda: side["iht"](loss, projection, escape=0)
    if case == "gradmp":
        return lambda: side["gradmp"](loss, projection)
    if case == "stochastic_iht":
        return lambda: side["stochastic_iht"](loss, projection, max_iter=300, seed=0, eval_every=5)
    return lambda: side["project"](
        inst["V"], structure, method="pgd", max_iter=2000, time_limit=1e9
    )


def fingerprint(result) -> tuple:
    """What must be equal between the sides, as bytes and text."""
    if hasattr(result, "history"):
        return (result.solution.tobytes(), result.support.tobytes(), result.history.tobytes(),
                result.message, result.iterations)  # fmt: skip
    return result.x.tobytes(), result.support.tobytes(), result.message, result.iterations


def compare(sides, inst: dict, case: str, repeats: int) -> tuple[list, list]:
    """Seconds of ``repeats`` runs of each side, alternating which goes first."""
    runs = [runner(side, inst, case) for side in sides]
    for run in runs:
        run()  # compile and warm up
    times: tuple[list, list] = ([], [])
    for r in range(repeats):
        prints = [None, None]
        for s in (0, 1) if r % 2 == 0 else (1, 0):
            start = time.perf_counter()
            out = runs[s]()
            times[s].append(time.perf_counter() - start)
            prints[s] = fingerprint(out)
        if prints[0] != prints[1]:
            raise AssertionError(f"{case}: the old and new results differ")
    return times


def row(case: str, n: int, old: list, new: list) -> str:
    ratio = statistics.median(new) / statistics.median(old)
    paired = statistics.median(b / a for a, b in zip(old, new, strict=True))
    return (
        f"| {case} | {n} | {statistics.median(old):.4f} | {statistics.median(new):.4f} "
        f"| {ratio:.3f} | {paired:.3f} | {min(new) / min(old):.3f} |"
    )


CASES = ("iht", "iht escape=0", "gradmp", "stochastic_iht", "pgd")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="a folder holding projections/")
    parser.add_argument("--ns", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="also write the Markdown report here")
    args = parser.parse_args(argv)

    load = os.getloadavg()
    sides = [import_side(args.old), import_side(ROOT)]
    sys.path.insert(0, str(ROOT))
    from benchmarks.child_runs import header
    from benchmarks.markdown_report import publish

    report = header("IHT-family solvers and pgd: old tree against this checkout", sys.argv, load)
    report += [
        "| case | n | old median s | new median s | new / old | median of paired ratios "
        "| new min / old min |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    ratios = []
    for n in args.ns:
        inst = instance(n, args.seed)
        for case in CASES:
            if case == "pgd" and n != args.ns[0]:
                continue  # pgd does not depend on n
            print(f"{case}, n={n} ...", file=sys.stderr)
            old, new = compare(sides, inst, case, args.repeats)
            ratios.append(statistics.median(new) / statistics.median(old))
            report.append(row(case, n, old, new))
    geo = float(np.exp(np.mean(np.log(ratios))))
    report += ["", f"Every pair of runs returned the same result bit for bit. Geometric mean "
               f"of the ratios of the medians: {geo:.3f}."]  # fmt: skip
    publish(report, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
