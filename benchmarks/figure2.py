"""Figure 2 of Yang et al. (ICML 2017, section 5.1): sparse regression on a 20 x 20 weight matrix.

What it generates (per trial ``t`` and number of samples ``n``, from
``np.random.default_rng([seed, n, t])``)
-------------------------------------------------------------------------------------------
* row caps and column caps drawn uniformly from the integers ``1..20``; the total cap is
  ``floor(0.8 * min(sum(row caps), sum(column caps)))``;
* the true support: the support of the exact TVCS projection of a standard Gaussian 20 x 20
  matrix (so it is feasible under every cap and uses the whole total when it can);
* the true values on that support: standard normal; zero elsewhere;
* the design: ``n`` i.i.d. standard Gaussian 20 x 20 matrices ``X_i``;
* the targets: ``y_i = <X_i, w*> + e_i`` with ``e_i ~ N(0, 0.01^2)``.

Methods: IHT and GradMP (``projections.solvers``, least squares with mean reduction, default
options; ``--no-escape`` runs IHT with ``escape=0``, plain Algorithm 1) each with (a) ``top-k``:
the projection onto the total cap alone (overall sparsity) and (b) ``tvcs``: the exact TVCS
projection (row, column and total caps). Metrics of the returned ``w``: relative error ``||w -
w*|| / ||w*||``, support recall ``|supp w & supp w*| / |supp w*|`` and the exact-support rate
(``supp w == supp w*``); means over ``--trials`` trials (default 10).

Run::

    python benchmarks/figure2.py --trials 10 --out docs/benchmarks/figure2.md
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from projections import TVCSStructure  # noqa: E402
from projections.solvers import LeastSquares, gradmp, iht, tvcs_projection  # noqa: E402

logger = logging.getLogger("figure2")

SIDE = 20
NOISE = 0.01
DEFAULT_NS = (100, 150, 200, 250, 300, 350, 400)
PAPER_HEADLINE = (
    "Figure 2: the model with all the sparsity constraints (TVCS) has the best selection "
    "recall and successful recovery rate at every n, for IHT and GradMP alike."
)


def generate(n: int, trial: int, seed: int = 0):
    """One regression instance of section 5.1.

    Returns
    -------
    A : ndarray, shape (n, 20, 20)
    y : ndarray, shape (n,)
    w_true : ndarray, shape (20, 20)
    structure : TVCSStructure
        Row caps, column caps and total cap.
    """
    rng = np.random.default_rng([seed, n, trial])
    rows = rng.integers(1, SIDE + 1, size=SIDE)
    cols = rng.integers(1, SIDE + 1, size=SIDE)
    total = int(0.8 * min(rows.sum(), cols.sum()))
    structure = TVCSStructure.from_matrix(
        (SIDE, SIDE), max_per_row=rows, max_per_col=cols, total=total
    )
    support = tvcs_projection(structure)(rng.standard_normal((SIDE, SIDE))).support
    w_true = np.zeros((SIDE, SIDE))
    w_true[support] = rng.standard_normal(int(support.sum()))
    A = rng.standard_normal((n, SIDE, SIDE))
    y = np.einsum("nij,ij->n", A, w_true) + NOISE * rng.standard_normal(n)
    return A, y, w_true, structure


def projections_for(structure: TVCSStructure) -> dict:
    """``{"top-k": P_total, "tvcs": P_tvcs}`` for one instance."""
    top_k = TVCSStructure.from_matrix(
        (SIDE, SIDE), max_per_row=SIDE, max_per_col=SIDE, total=structure.total
    )
    return {"top-k": tvcs_projection(top_k), "tvcs": tvcs_projection(structure)}


SOLVERS = {"iht": iht, "gradmp": gradmp}


def metrics(w: np.ndarray, w_true: np.ndarray) -> dict:
    """Relative error, support recall and exact support of ``w`` (both shape (20, 20))."""
    s, s_true = w != 0, w_true != 0
    return {
        "rel_error": float(np.linalg.norm(w - w_true) / np.linalg.norm(w_true)),
        "recall": float((s & s_true).sum() / s_true.sum()),
        "exact": float(np.array_equal(s, s_true)),
    }


def run(ns, trials: int, seed: int, solvers, solver_options: dict) -> dict:
    """``{(solver, projection, n): list of metric dicts}`` over ``trials`` trials."""
    rows: dict = {}
    for n in ns:
        for t in range(trials):
            A, y, w_true, structure = generate(n, t, seed)
            loss = LeastSquares(A, y)
            for proj_name, proj in projections_for(structure).items():
                for name in solvers:
                    res = SOLVERS[name](loss, proj, **solver_options.get(name, {}))
                    rows.setdefault((name, proj_name, n), []).append(metrics(res.solution, w_true))
        logger.info("n=%d done", n)
    return rows


def headline(rows: dict, ns, solvers) -> str:
    """Per solver, the n where TVCS falls below top-k on recall, exact rate or relative error.

    Means are compared as the tables print them (3 decimals).
    """

    def mean(s, p, n, key):
        return round(float(np.mean([r[key] for r in rows[(s, p, n)]])), 3)

    parts = []
    for s in solvers:
        worse = [
            f"{key} at n={n}"
            for n in ns
            for key, sign in (("recall", 1), ("exact", 1), ("rel_error", -1))
            if sign * (mean(s, "tvcs", n, key) - mean(s, "top-k", n, key)) < 0
        ]
        verdict = "worse on " + ", ".join(worse) if worse else "at least as good at every n"
        parts.append(f"{s} with TVCS vs top-k: {verdict}")
    return "; ".join(parts) + "."


def report(rows: dict, ns, solvers, command: str, seconds: float) -> str:
    """Markdown tables: one per metric, a row per n, a column per (solver, projection)."""
    cols = [(s, p) for s in solvers for p in ("top-k", "tvcs")]
    out = [
        "# Figure 2 (Yang et al., ICML 2017, section 5.1): sparse regression, 20 x 20 weights",
        "",
        f"Command: `{command}` ({seconds:.0f} s).",
        "",
        f"Paper: {PAPER_HEADLINE}",
        "",
        "Measured: " + headline(rows, ns, solvers),
        "",
    ]
    for key, title in (
        ("rel_error", "relative error (mean)"),
        ("recall", "support recall (mean)"),
        ("exact", "exact-support rate"),
    ):
        out += [f"## {title}", "", "| n | " + " | ".join(f"{s} {p}" for s, p in cols) + " |"]
        out.append("|---|" + "---|" * len(cols))
        for n in ns:
            vals = [np.mean([r[key] for r in rows[(s, p, n)]]) for s, p in cols]
            out.append(f"| {n} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ns", type=int, nargs="+", default=list(DEFAULT_NS))
    parser.add_argument("--solvers", nargs="+", choices=sorted(SOLVERS), default=["iht", "gradmp"])
    parser.add_argument(
        "--no-escape",
        action="store_true",
        help="IHT without its fixed-point escape (escape=0): the solver before issue 15's fix",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    start = time.perf_counter()
    options = {"iht": {"escape": 0}} if args.no_escape else {}
    rows = run(args.ns, args.trials, args.seed, args.solvers, options)
    command = "python benchmarks/figure2.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(rows, args.ns, args.solvers, command.strip(), time.perf_counter() - start)
    logger.info("%s", text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
