"""The TVCS paper's Table 1: gene regulatory networks from time series (Yang et al., ICML 2017).

Section 5.3 infers 30-gene GeneNetWeaver networks (10% noise) as a dynamic Bayesian network
with row and column caps, against six published methods. GeneNetWeaver's data cannot be
downloaded here, so each network is simulated by :func:`grn_simulator.simulate_grn` with its
defaults except the time series: 30 genes, 3 hubs regulating 6 genes each plus 12 random edges
(30 edges, at most 3 regulators per gene), a stable linear system ``x_{t+1} = P x_t + e_t``
(``P = 0.5 I + W``, spectral radius at most 0.9, process noise 0.1), ``--series`` series of
``--times`` points from random initial states, and 10% Gaussian measurement noise.

Methods (:mod:`grn_methods`), all told the number of true edges (``total``):

* ``TVCS (GradMP)`` and ``TVCS (IHT)`` — the paper's method: the DBN least squares with the
  exact TVCS projection, at most 3 regulators per gene (the simulator's bound), at most 8
  targets per regulator (a loose prior on hubs) and ``total`` edges, solved by GradMP
  (Algorithm 2) or IHT (Algorithm 1; the paper does not say which it used);
* ``TVCS (GradMP, stability)`` — the same regression solved on both halves of
  ``--stability-runs`` random splits of the time steps; an edge's score is the share of halves
  that select it, and the prediction the most stable edges within the caps (the TVCS
  projection of the scores): stability selection, the principle TIGRESS ranks by, with the
  caps instead of the LASSO (:func:`grn_methods.tvcs_stability_network`);
* ``TVCS (GradMP, stability area)`` — ``--area-runs`` random splits, each half solved at the
  ladder of caps :data:`AREA_LEVELS` (1 to 5 regulators per target, the other caps in
  proportion, as TIGRESS's 5 LARS steps), an edge scored by its share of the solves:
  TIGRESS's area score under the caps; the prediction is again the TVCS projection of the
  scores at the caps (default 10 splits: 100 solves, twice the row above's 50);
* ``top-k (GradMP)`` and ``top-k (IHT)`` — the same loss and solvers with only the total cap;
* ``GENIE3`` — arboreto's random forests (100 trees per target) on same-time levels;
* ``PCC``, ``partial corr.`` (same-time, symmetric) and ``lagged corr.`` (``x_j(t)`` against
  ``x_i(t + 1)``);
* ``CLR``, ``ARACNE`` and ``MRNET (MINET)`` (MRNET is the default network method of MINET, the
  package the paper cites) on the mutual information of ``--mi-estimator`` (default MINET's:
  Spearman's correlation through the Gaussian formula), and ``TIGRESS`` (``--tigress-runs``
  random splits, 5 LARS steps, alpha 0.2), all on same-time levels as published; the
  ``(lagged)`` rows score ``x_j(t)`` against ``x_i(t + 1)`` instead, the DBN's pairing (ARACNE
  and MRNET with the regulators' same-time MI as redundancy, TIGRESS with the target's own
  persistence profiled out). ARACNE predicts only pairs its pruning keeps (at most ``total``).

The regressions predict their final support; the ranking baselines their ``total`` highest
scores. Metrics (:mod:`grn_metrics`) over the 870 ordered pairs of distinct genes, mean ± sd
over ``--networks`` networks (network ``k`` from ``np.random.default_rng([seed, k])``).
``AUC`` ranks all pairs by score (the primary one); ``AUC (binary)`` is the area of the binary
prediction, ``(SN + SP) / 2``, which the paper's AUC of TVCS equals (not those of its other
rows: the report's paper table computes it beside theirs).

Run::

    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
    nice -n 10 python benchmarks/grn.py --networks 20 --out docs/benchmarks/grn.md

(one BLAS thread: on 2 shared cores numpy's default threads made the run 6 times slower; 20
networks took 30 minutes on 2026-12-07, 90 s a network, most of it in the two stability rows).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
from grn_methods import (
    MI_ESTIMATORS,
    aracne,
    clr,
    genie3,
    lagged_correlation,
    mrnet,
    partial_correlation,
    pearson_correlation,
    tigress,
    top_scores,
    true_support_loss,
    tvcs_network,
    tvcs_stability_network,
)
from grn_metrics import METRICS, edge_metrics
from grn_simulator import simulate_grn

MAX_REGULATORS = 3
MAX_TARGETS = 8
#: The cap ladder of ``TVCS (GradMP, stability area)``: 1 to 5 regulators per target.
AREA_LEVELS = tuple(r / MAX_REGULATORS for r in range(1, 6))

#: The paper's Table 1 (mean, sd), its columns SN, SP, ACC, F-measure, MCC, AUC.
PAPER = {
    "Our Method (TVCS)": "0.6875±0.0295 0.7397±0.0319 0.7119±0.0305 0.7126±0.0306 "
    "0.4264±0.0611 0.7136±0.0306",
    "GENIE3": "0.5611±0.0277 0.4984±0.0547 0.5319±0.0244 0.5279±0.0277 0.0595±0.0547 0.5662±0.0244",
    "CLR": "0.5167±0.0583 0.4476±0.1147 0.4844±0.0575 0.4795±0.0583 -0.0357±0.1147 0.5210±0.0575",
    "TIGRESS": "0.1333±0.0541 0.8302±0.0367 0.4585±0.0374 0.2258±0.0817 -0.0552±0.1061 "
    "0.5567±0.0358",
    "PCC": "0.5042±0.0124 0.4333±0.0245 0.4711±0.0101 0.4661±0.0124 -0.0625±0.0245 0.5091±0.0101",
    "ARACNE": "0.1167±0.0519 0.9127±0.0579 0.4881±0.0197 0.2051±0.0519 0.0479±0.0579 0.5808±0.0197",
    "MINET": "0.5764±0.0425 0.5381±0.0888 0.5585±0.0458 0.5547±0.0425 0.1147±0.0888 0.5910±0.0458",
}


def _regression(series, total, **options):
    r = tvcs_network(
        series, max_regulators=MAX_REGULATORS, max_targets=MAX_TARGETS, total=total, **options
    )
    return r.edges, r.scores, r.loss


def _stable_regression(series, total, levels=(1.0,), runs="stability_runs"):
    r = tvcs_stability_network(
        series,
        max_regulators=MAX_REGULATORS,
        max_targets=MAX_TARGETS,
        total=total,
        n_runs=OPTIONS[runs],
        levels=levels,
    )
    return r.edges, r.scores, r.loss


def _ranking(score_fn, series, total, *, positive=False, **options):
    """The ``total`` best-scored pairs; with ``positive``, only among pairs scored above 0
    (ARACNE's network is the pairs its pruning keeps: it may predict fewer edges)."""
    scores = score_fn(series, **options)
    edges = top_scores(scores, total)
    return (edges & (scores > 0) if positive else edges), scores, None


#: Options of the MI and TIGRESS baselines, set by ``main`` from the command line.
OPTIONS = {"estimator": "spearman", "n_runs": 50, "stability_runs": 25, "area_runs": 10}


def _mi_ranking(score_fn, series, total, *, positive=False, lag=False):
    return _ranking(
        score_fn, series, total, positive=positive, lag=lag, estimator=OPTIONS["estimator"]
    )


def _tigress_ranking(series, total, *, lag=False):
    return _ranking(tigress, series, total, lag=lag, n_runs=OPTIONS["n_runs"])


METHODS = {
    "TVCS (GradMP)": functools.partial(_regression, solver="gradmp"),
    "TVCS (IHT)": functools.partial(_regression, solver="iht"),
    "TVCS (GradMP, stability)": _stable_regression,
    "TVCS (GradMP, stability area)": functools.partial(
        _stable_regression, levels=AREA_LEVELS, runs="area_runs"
    ),
    "top-k (GradMP)": functools.partial(_regression, solver="gradmp", caps="top-k"),
    "top-k (IHT)": functools.partial(_regression, solver="iht", caps="top-k"),
    "GENIE3": functools.partial(_ranking, genie3),
    "PCC": functools.partial(_ranking, pearson_correlation),
    "partial corr.": functools.partial(_ranking, partial_correlation),
    "lagged corr.": functools.partial(_ranking, lagged_correlation),
    "CLR": functools.partial(_mi_ranking, clr),
    "ARACNE": functools.partial(_mi_ranking, aracne, positive=True),
    "MRNET (MINET)": functools.partial(_mi_ranking, mrnet),
    "TIGRESS": _tigress_ranking,
    "CLR (lagged)": functools.partial(_mi_ranking, clr, lag=True),
    "ARACNE (lagged)": functools.partial(_mi_ranking, aracne, positive=True, lag=True),
    "MRNET (lagged)": functools.partial(_mi_ranking, mrnet, lag=True),
    "TIGRESS (lagged)": functools.partial(_tigress_ranking, lag=True),
}


def run(n_networks: int, seed: int, n_series: int, n_times: int, skip: set[str]):
    """Metrics per method (arrays ``(n_networks, len(METRICS))``), seconds, loss ratios.

    The loss ratio of a regression is the DBN loss of the least-squares refit on its final
    support over that on the true edges (below 1 when a wrong support fits the noise better).
    """
    results = {name: [] for name in METHODS if name not in skip}
    seconds = dict.fromkeys(results, 0.0)
    ratios: dict[str, list[float]] = {}
    for k in range(n_networks):
        data = simulate_grn(
            n_series=n_series, n_times=n_times, rng=np.random.default_rng([seed, k])
        )
        total = int(data.edges.sum())
        reference = true_support_loss(data.series, data.edges)
        for name in results:
            start = time.perf_counter()
            edges, scores, loss = METHODS[name](data.series, total)
            seconds[name] += time.perf_counter() - start
            m = edge_metrics(data.edges, edges, scores)
            results[name].append([m[key] for key in METRICS])
            if loss is not None:
                ratios.setdefault(name, []).append(loss / reference)
    arrays = {name: np.array(rows) for name, rows in results.items()}
    return arrays, seconds, {name: np.array(r) for name, r in ratios.items()}


def ordering_check(results: dict[str, np.ndarray]) -> list[str]:
    """Whether each TVCS row beats every non-TVCS method on mean AUC, AUC (binary) and MCC.

    Names every method at least as good, with the paired difference over the networks (TVCS
    minus it: mean ± sd) and on how many networks TVCS was strictly ahead; when none is, the
    runner-up the same way.
    """
    lines = []
    baselines = {n: v for n, v in results.items() if not n.startswith("TVCS")}
    for ours in (n for n in results if n.startswith("TVCS")):
        for metric in ("AUC", "AUC (binary)", "MCC"):
            col = METRICS.index(metric)
            mine = results[ours][:, col]

            def versus(name, col=col, mine=mine):
                arr = baselines[name][:, col]
                d = mine - arr
                return (
                    f"{name} ({arr.mean():.3f}; paired difference {d.mean():+.3f} ± "
                    f"{d.std(ddof=1):.3f}, TVCS ahead on {int((d > 0).sum())} of {d.size})"
                )

            better = [
                versus(name) for name, arr in baselines.items() if arr[:, col].mean() >= mine.mean()
            ]
            if better:
                verdict = "not best: " + "; ".join(better)
            elif baselines:
                runner_up = max(baselines, key=lambda name, col=col: baselines[name][:, col].mean())
                verdict = f"best: holds; next {versus(runner_up)}"
            else:
                verdict = "best: holds"
            lines.append(f"- {ours}, {metric} {mine.mean():.3f}: {verdict}.")
    return lines


def loss_lines(ratios: dict[str, np.ndarray]) -> list[str]:
    """One line per regression: how much worse its support explains the data than the truth."""
    return [
        f"- {name}: refit loss on its support / on the true edges {r.mean():.2f} ± "
        f"{r.std(ddof=1):.2f} (min {r.min():.2f}, max {r.max():.2f}); above 1.05 on "
        f"{int((r > 1.05).sum())} of {r.size} networks."
        for name, r in ratios.items()
    ]


def paper_table() -> list[str]:
    """The paper's Table 1 as Markdown rows, with ``(SN + SP) / 2`` of its means appended
    (the AUC of a binary prediction, to hold against its AUC column)."""
    rows = [
        "| method | " + " | ".join(METRICS[:6]) + " | (SN + SP)/2, computed here |",
        "|---|" + "---:|" * 7,
    ]
    for name, cells in PAPER.items():
        sn, sp = (float(c.split("±")[0]) for c in cells.split()[:2])
        rows.append(
            f"| {name} | "
            + " | ".join(c.replace("±", " ± ") for c in cells.split())
            + f" | {(sn + sp) / 2:.4f} |"
        )
    return rows


def report(results, seconds, ratios, args) -> str:
    """The Markdown report: measured table, the paper's, and the ordering check."""
    head = "| method | " + " | ".join(METRICS) + " | s per network |"
    rule = "|---|" + "---:|" * (len(METRICS) + 1)
    rows = [head, rule]
    for name, arr in results.items():
        cells = [f"{m:.3f} ± {s:.3f}" for m, s in zip(arr.mean(0), arr.std(0, ddof=1), strict=True)]
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {seconds[name] / len(arr):.2f} |")
    return "\n".join(
        [
            "# Gene regulatory networks (TVCS paper, Table 1), measured",
            "",
            f"Command: `nice -n 10 python benchmarks/grn.py {' '.join(sys.argv[1:])}` "
            f"({datetime.date.today().isoformat()}; {args.networks} simulated networks, "
            f"{args.series} series of {args.times} points each; mutual information "
            f"{args.mi_estimator}, TIGRESS {args.tigress_runs} runs, TVCS stability "
            f"{args.stability_runs} splits, TVCS stability area {args.area_runs} splits of "
            f"{len(AREA_LEVELS)} levels).",
            "",
            "## Measured (mean ± sd over networks)",
            "",
            *rows,
            "",
            "## The paper's Table 1 (GeneNetWeaver, 30 genes, 10% noise)",
            "",
            "The last column is not the paper's: it is (SN + SP)/2 of its SN and SP, the AUC of "
            "a binary prediction, to compare with its AUC column.",
            "",
            *paper_table(),
            "",
            "## The paper's ordering (TVCS best on AUC and MCC)",
            "",
            "AUC ranks all pairs by score (the primary one); AUC (binary) = (SN + SP)/2 is the "
            "area of the binary prediction, the one the paper's AUC of TVCS equals.",
            "",
            *ordering_check(results),
            "",
            "## Where the solvers stop",
            "",
            *loss_lines(ratios),
            "",
        ]
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2017)
    parser.add_argument("--series", type=int, default=3)
    parser.add_argument("--times", type=int, default=11)
    parser.add_argument("--skip", nargs="*", default=[], help="method names to leave out")
    parser.add_argument(
        "--mi-estimator",
        choices=MI_ESTIMATORS,
        default="spearman",
        help="mutual information of CLR, ARACNE and MRNET (default: MINET's, spearman)",
    )
    parser.add_argument(
        "--tigress-runs", type=int, default=50, help="TIGRESS's random splits (default 50)"
    )
    parser.add_argument(
        "--stability-runs",
        type=int,
        default=25,
        help="random splits of the TVCS (GradMP, stability) rows (default 25: 50 halves)",
    )
    parser.add_argument(
        "--area-runs",
        type=int,
        default=10,
        help="random splits of TVCS (GradMP, stability area), each half solved at 5 cap levels "
        "(default 10: 100 solves)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.networks < 2:
        parser.error(f"--networks must be at least 2 for a standard deviation, got {args.networks}")
    unknown = sorted(set(args.skip) - set(METHODS))
    if unknown:
        parser.error(f"--skip names no method: {', '.join(unknown)}; methods: {', '.join(METHODS)}")
    if args.tigress_runs < 1:
        parser.error(f"--tigress-runs must be at least 1, got {args.tigress_runs}")
    for option in ("stability_runs", "area_runs"):
        if getattr(args, option) < 1:
            flag = "--" + option.replace("_", "-")
            parser.error(f"{flag} must be at least 1, got {getattr(args, option)}")
    OPTIONS.update(
        estimator=args.mi_estimator,
        n_runs=args.tigress_runs,
        stability_runs=args.stability_runs,
        area_runs=args.area_runs,
    )
    skip = set(args.skip)
    if importlib.util.find_spec("arboreto") is None:
        skip.add("GENIE3")
        print("arboreto is not installed (pip install arboreto): GENIE3 left out", file=sys.stderr)
    results, seconds, ratios = run(args.networks, args.seed, args.series, args.times, skip)
    text = report(results, seconds, ratios, args)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
