"""IHT's step rules side by side on Figure 3's instances: the constant ``1/L`` (the default
before issue 15's fix) and the adaptive default, same instances, same seeds.

For each ``n`` and trial of ``benchmarks/figure3.py``'s generator (and, with ``--digits``, of
its load_digits splits) runs IHT under the TVCS caps with ``step=1/L`` and with the default
(adaptive) rule, and reports, per rule, the mean support recall, test error, final training
loss (squared hinge, mean over samples), iterations and the fraction of runs that converged
within IHT's default 500 iterations. Every result is projected onto all the caps first, as in
the figure (a no-op for the TVCS projection). ``--regression`` does the same on Figure 2's
least-squares instances (``benchmarks/figure2.py``'s generator), with the exact-support rate
and the relative error instead of the test error.

Run::

    nice -n 10 python benchmarks/iht_step_ab.py --trials 30 --digits
    nice -n 10 python benchmarks/iht_step_ab.py --regression --trials 30 \
        --ns 100 150 200 250 300 350 400
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import figure2  # noqa: E402
from figure2 import header, support_metrics  # noqa: E402
from figure3 import (  # noqa: E402
    DEFAULT_NS,
    DIGIT_NS,
    digit_split,
    digit_structure,
    error_rate,
    generate,
    load_digit_pair,
)

from projections.solvers import LeastSquares, SquaredHinge, iht, tvcs_projection  # noqa: E402

RULES = ("1/L", "adaptive")
COLUMNS = ("recall", "test_error", "loss", "iterations", "converged")
#: The columns of ``--regression`` (Figure 2: no test samples, exact recovery instead).
REGRESSION_COLUMNS = ("recall", "exact", "rel_error", "loss", "iterations", "converged")


def run_rule(rule: str, loss, projection) -> tuple[np.ndarray, dict]:
    """IHT with ``rule`` (one of :data:`RULES`): ``(w, facts)``."""
    step = 1.0 / loss.lipschitz() if rule == "1/L" else None
    result = iht(loss, projection, step=step)
    facts = {
        "loss": result.objective,
        "iterations": result.iterations,
        "converged": float(result.converged),
    }
    return result.solution, facts


def synthetic(ns, trials: int, seed: int) -> dict:
    """``{(rule, n): [row, ...]}`` on Figure 3's synthetic instances."""
    rows: dict = {}
    for n in ns:
        for t in range(trials):
            A, y, A_test, y_test, w_true, structure = generate(n, t, seed)
            loss, projection = SquaredHinge(A, y), tvcs_projection(structure)
            for rule in RULES:
                w, facts = run_rule(rule, loss, projection)
                w = projection(w).x
                facts.update(support_metrics(w, w_true), test_error=error_rate(w, A_test, y_test))
                rows.setdefault((rule, n), []).append(facts)
        logging.info("n=%d done", n)
    return rows


def regression(ns, trials: int, seed: int) -> dict:
    """``{(rule, n): [row, ...]}`` on Figure 2's least-squares instances."""
    rows: dict = {}
    for n in ns:
        for t in range(trials):
            A, y, w_true, structure = figure2.generate(n, t, seed)
            loss, projection = LeastSquares(A, y), tvcs_projection(structure)
            for rule in RULES:
                w, facts = run_rule(rule, loss, projection)
                facts.update(support_metrics(projection(w).x, w_true))
                rows.setdefault((rule, n), []).append(facts)
        logging.info("regression n=%d done", n)
    return rows


def digits(ns, trials: int, seed: int) -> dict:
    """``{(rule, n): [row, ...]}`` on Figure 3's load_digits splits (no recall)."""
    X, y = load_digit_pair()
    projection = tvcs_projection(digit_structure())
    rows: dict = {}
    for n in ns:
        for t in range(trials):
            Z, train, test, _ = digit_split(X, n, t, seed)
            loss = SquaredHinge(Z[train], y[train])
            for rule in RULES:
                w, facts = run_rule(rule, loss, projection)
                w = projection(w).x
                facts.update(recall=float("nan"), test_error=error_rate(w, Z[test], y[test]))
                rows.setdefault((rule, n), []).append(facts)
    return rows


def _cell(column: str, value: float) -> str:
    if np.isnan(value):
        return ""
    if column == "iterations":
        return f"{value:.0f}"
    return f"{value:.3g}" if column == "loss" else f"{value:.3f}"


def table(rows: dict, ns, title: str, columns=COLUMNS) -> list[str]:
    """A row per n, the mean of each of ``columns`` for each rule."""
    heads = [f"{c} ({r})" for c in columns for r in RULES]
    out = [f"## {title}", "", "| n | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    for n in ns:
        cells = []
        for c in columns:
            for r in RULES:
                v = float(np.mean([row[c] for row in rows[(r, n)]]))
                cells.append(_cell(c, v))
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    return [*out, ""]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ns", type=int, nargs="+", default=list(DEFAULT_NS))
    parser.add_argument("--digits", action="store_true")
    parser.add_argument("--digit-ns", type=int, nargs="+", default=list(DIGIT_NS))
    parser.add_argument(
        "--regression",
        action="store_true",
        help="Figure 2's least-squares instances instead of Figure 3's (n from --ns)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("projections").setLevel(logging.WARNING)
    start = time.perf_counter()
    if args.regression:
        rows = regression(args.ns, args.trials, args.seed)
        text = table(rows, args.ns, "Figure 2, IHT with TVCS", REGRESSION_COLUMNS)
    else:
        rows = synthetic(args.ns, args.trials, args.seed)
        text = table(rows, args.ns, "Figure 3, IHT with TVCS")
    if args.digits:
        rows = digits(args.digit_ns, args.trials, args.seed)
        text += table(rows, args.digit_ns, "load_digits 3 vs 8, IHT with TVCS")
    command = "python benchmarks/iht_step_ab.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    figure = "Figure 2" if args.regression else "Figure 3"
    title = f"IHT's step rules on {figure}: constant 1/L against the adaptive default"
    report = "\n".join(
        [*header(title, command.strip(), time.perf_counter() - start, args.trials), *text]
    )
    print(report)
    if args.out:
        args.out.write_text(report)


if __name__ == "__main__":
    main()
