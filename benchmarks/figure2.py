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

Methods (the paper's): IHT and GradMP (``projections.solvers``, least squares with mean
reduction, default options) each with the projection onto (a) ``overall``: the total cap alone
(top-k), (b) ``row``: the row caps and the total (bilevel exclusive sparsity, rows), (c)
``column``: the column caps and the total, (d) ``tvcs``: every cap; and (e) exclusive LASSO
(``projections.solvers.exclusive_lasso``, ``lam`` chosen along the warm-started path
``LAMBDAS`` by the loss on a 20% validation split of the training samples, then refitted on all
of them; see :data:`PROTOCOL`) in two forms: ``exclusive lasso``, the paper's (Kong et
al. 2014), penalising the row groups and the column groups, which overlap (its prox is the
iterative ``prox_exclusive_lasso_overlapping``), and ``exclusive lasso rows``, row groups only
(closed-form prox; the only form before issue 15's overlapping solver). As in the paper,
every final result is projected onto all the constraints (the exact TVCS projection) before it
is scored. GradMP's iterates do not decrease the loss monotonically, so the benchmark keeps
GradMP's iterate of smallest loss (read by the callback); IHT's loss never increases, so its
last iterate is its best. ``--no-escape`` runs IHT with ``escape=0``, ``--iht-step 1/L`` with
the constant step ``1/L`` (IHT's default before its adaptive step); both together are plain
Algorithm 1.

Metrics of the scored ``w``: relative error ``||w - w*|| / ||w*||``, support recall ``|supp w &
supp w*| / |supp w*|`` and the exact-support rate (``supp w == supp w*``); mean and standard
deviation over ``--trials`` trials. BLAS runs on one thread (on the shared 2-core machine a
threaded ``lstsq`` was 14 times slower than a single-threaded one).

Run::

    nice -n 10 python benchmarks/figure2.py --trials 10 --out docs/benchmarks/figure2.md

``--out`` rewrites the measured part of the report and keeps the notes written by hand below
:data:`NOTES_MARKER`.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import logging  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from projections import TVCSStructure  # noqa: E402
from projections.solvers import (  # noqa: E402
    LeastSquares,
    exclusive_groups_projection,
    exclusive_lasso,
    gradmp,
    iht,
    tvcs_projection,
)

logger = logging.getLogger("figure2")

SIDE = 20
NOISE = 0.01
DEFAULT_NS = (100, 150, 200, 250, 300, 350, 400)
SOLVERS = {"iht": iht, "gradmp": gradmp}
CONSTRAINTS = ("overall", "row", "column", "tvcs")
#: The exclusive LASSO variants: the paper's over rows and columns, and rows only.
EXCLUSIVE_LASSO = "exclusive lasso"
EXCLUSIVE_LASSO_ROWS = "exclusive lasso rows"
EXCLUSIVE_LASSOS = (EXCLUSIVE_LASSO, EXCLUSIVE_LASSO_ROWS)
METHODS = (*tuple(f"{s} {c}" for s in SOLVERS for c in CONSTRAINTS), *EXCLUSIVE_LASSOS)
#: Exclusive LASSO's path of penalty weights (mean-reduced losses), decreasing: 10 to 1e-6,
#: wide enough that the validation optimum of sections 5.1's instances is inside it (the
#: former grid 1e-3 .. 1 cut it off at both ends: below 1e-3 for least squares from n = 250
#: on, above 1 for the squared hinge at n = 200).
LAMBDAS = tuple(10.0**k for k in range(1, -7, -1))
NOTES_MARKER = "<!-- notes below are written by hand; benchmarks/figure*.py --out keeps them -->"
PROTOCOL = (
    "Every method is given the true row, column and total caps, as in the paper (section 5.1: "
    "IHT and GradMP as their constraint sets; exclusive LASSO through the projection of its "
    "result onto all the caps, which the paper applies to every method). Exclusive LASSO's "
    "penalty weight lam, its only other knob, is chosen on held-out training samples: the path "
    "10, 1, ..., 1e-06 (warm-started) fitted on a random 80% of the n samples, the value whose "
    "projected fit has the smallest loss on the other 20%, then refitted on all n. Nothing is "
    "chosen with the test samples or the true support. IHT and GradMP run with their default "
    "options."
)
PAPER_HEADLINE = (
    "Figure 2: the model with all the sparsity constraints (TVCS) has the best selection "
    "recall and successful recovery rate at every n, for IHT and GradMP alike; exclusive "
    "LASSO is comparable at the smallest n and worse as n grows."
)


def draw_model(rng: np.random.Generator, side: int = SIDE):
    """Caps and a true model as in section 5.1: ``(structure, w_true)``, ``w_true`` (side, side)."""
    rows = rng.integers(1, side + 1, size=side)
    cols = rng.integers(1, side + 1, size=side)
    total = int(0.8 * min(rows.sum(), cols.sum()))
    structure = TVCSStructure.from_matrix(
        (side, side), max_per_row=rows, max_per_col=cols, total=total
    )
    support = tvcs_projection(structure)(rng.standard_normal((side, side))).support
    w_true = np.zeros((side, side))
    w_true[support] = rng.standard_normal(int(support.sum()))
    return structure, w_true


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
    structure, w_true = draw_model(rng)
    A = rng.standard_normal((n, SIDE, SIDE))
    y = np.einsum("nij,ij->n", A, w_true) + NOISE * rng.standard_normal(n)
    return A, y, w_true, structure


def constraint_projection(name: str, structure: TVCSStructure):
    """The solvers' projection for one constraint set of ``structure`` (a matrix structure)."""
    if name == "tvcs":
        return tvcs_projection(structure)
    if name == "row":
        return exclusive_groups_projection(structure.labels1, structure.caps1, structure.total)
    if name == "column":
        return exclusive_groups_projection(structure.labels2, structure.caps2, structure.total)
    if name == "overall":
        none = np.full(structure.n_elements, -1)
        return exclusive_groups_projection(none, np.zeros(0, np.int64), structure.total)
    raise ValueError(f"constraint must be one of {CONSTRAINTS}, got {name!r}")


def _best_iterate(solver, loss, projection, options: dict) -> np.ndarray:
    """Run ``solver`` and return its iterate of smallest loss (the last one if none is smaller)."""
    best = {"value": np.inf, "w": None}

    def keep(_it, w, value):
        if value < best["value"]:
            best["value"], best["w"] = value, np.array(w)
        return False

    result = solver(loss, projection, callback=keep, **options)
    if best["w"] is None or result.objective <= best["value"]:
        return result.solution
    return best["w"]


def exclusive_lasso_views(method: str, structure: TVCSStructure) -> tuple:
    """The views of groups of one of :data:`EXCLUSIVE_LASSOS`: rows and columns, or rows."""
    if method == EXCLUSIVE_LASSO:
        return (structure.labels1, structure.labels2)
    if method == EXCLUSIVE_LASSO_ROWS:
        return (structure.labels1,)
    raise ValueError(f"method must be one of {EXCLUSIVE_LASSOS}, got {method!r}")


def validation_split(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(validation, fit)`` indices of ``n`` training samples: a random 20% (at least one)
    held out for choosing ``lam``, the rest to fit on."""
    order = rng.permutation(n)
    n_val = max(1, n // 5)
    return order[:n_val], order[n_val:]


def choose_lambda(loss_cls, A, y, structure, rng, method=EXCLUSIVE_LASSO):
    """Exclusive LASSO's ``lam``, chosen on held-out training samples (never the test samples
    nor the true support): the path :data:`LAMBDAS` (decreasing; each fit warm-starts the
    next) is fitted on 80% of the samples and each fit, projected onto all the constraints as
    it is scored, is rated by the same loss on the other 20%.

    Returns
    -------
    lam : float
        The value of smallest validation loss (the larger one of equal ones).
    w : ndarray, the shape of the weights (20, 20 here; 8, 8 for Figure 3's digits)
        Its fit on the 80%, to warm-start the refit on every sample.
    """
    labels = exclusive_lasso_views(method, structure)
    project_all = tvcs_projection(structure)
    val, fit = validation_split(A.shape[0], rng)
    fit_loss, val_loss = loss_cls(A[fit], y[fit]), loss_cls(A[val], y[val])
    w, scores, fits = None, [], []
    for lam in LAMBDAS:
        w = exclusive_lasso(fit_loss, *labels, lam=lam, w0=w).solution
        fits.append(w)
        scores.append(val_loss.value(project_all(w).x))
    best = int(np.argmin(scores))
    return LAMBDAS[best], fits[best]


def _fit_exclusive_lasso(loss_cls, A, y, structure, rng, method=EXCLUSIVE_LASSO):
    """Exclusive LASSO (``method``, one of :data:`EXCLUSIVE_LASSOS`) refitted on every sample
    with the ``lam`` of :func:`choose_lambda`: ``(w, lam)``, ``w`` of the weights' shape."""
    lam, w_fit = choose_lambda(loss_cls, A, y, structure, rng, method)
    labels = exclusive_lasso_views(method, structure)
    return exclusive_lasso(loss_cls(A, y), *labels, lam=lam, w0=w_fit).solution, lam


def fit_all(loss_cls, A, y, structure, *, rng, solver_options=None) -> tuple[dict, dict]:
    """Every method of :data:`METHODS` on one instance.

    Every method is given the true caps (the paper's protocol, section 5.1: IHT and GradMP as
    their constraints, exclusive LASSO through the final projection); exclusive LASSO's one
    free knob, ``lam``, is chosen on held-out training samples (:func:`choose_lambda`).

    Returns
    -------
    fits : dict
        ``{method: w}``, ``w`` of shape (20, 20) projected onto all the constraints (the exact
        TVCS projection), as the paper scores them.
    lams : dict
        ``{method: lam}`` for each of :data:`EXCLUSIVE_LASSOS`.
    """
    solver_options = solver_options or {}
    loss = loss_cls(A, y)
    project_all = tvcs_projection(structure)
    out, lams = {}, {}
    for s, solver in SOLVERS.items():
        options = _options_for(loss, solver_options.get(s, {}))
        for c in CONSTRAINTS:
            proj = constraint_projection(c, structure)
            w = (
                _best_iterate(solver, loss, proj, options)
                if s == "gradmp"
                else (solver(loss, proj, **options).solution)
            )
            out[f"{s} {c}"] = project_all(w).x
    state = rng.bit_generator.state
    for method in EXCLUSIVE_LASSOS:
        rng.bit_generator.state = state  # the same validation split for both variants
        w, lams[method] = _fit_exclusive_lasso(loss_cls, A, y, structure, rng, method)
        out[method] = project_all(w).x
    return out, lams


def _options_for(loss, options: dict) -> dict:
    """A solver's options with ``step="1/L"`` replaced by ``1 / loss.lipschitz()``."""
    if options.get("step") == "1/L":
        return {**options, "step": 1.0 / loss.lipschitz()}
    return options


def support_metrics(w: np.ndarray, w_true: np.ndarray) -> dict:
    """Relative error, support recall and exact support of ``w`` (both shape (20, 20))."""
    s, s_true = w != 0, w_true != 0
    return {
        "rel_error": float(np.linalg.norm(w - w_true) / np.linalg.norm(w_true)),
        "recall": float((s & s_true).sum() / s_true.sum()),
        "exact": float(np.array_equal(s, s_true)),
    }


def run(ns, trials: int, seed: int, solver_options: dict) -> dict:
    """``{(method, n): list of metric dicts}`` over ``trials`` trials; exclusive LASSO's
    dicts also hold the chosen ``lam``."""
    rows: dict = {}
    for n in ns:
        for t in range(trials):
            A, y, w_true, structure = generate(n, t, seed)
            fits, lams = fit_all(
                LeastSquares,
                A,
                y,
                structure,
                rng=np.random.default_rng([seed, n, t, 1]),
                solver_options=solver_options,
            )
            for method, w in fits.items():
                scores = support_metrics(w, w_true)
                if method in lams:
                    scores["lam"] = lams[method]
                rows.setdefault((method, n), []).append(scores)
        logger.info("n=%d done", n)
    return rows


def mean(rows: dict, method: str, n: int, key: str) -> float:
    return float(np.mean([r[key] for r in rows[(method, n)]]))


def verdict(rows: dict, ns, keys: dict) -> str:
    """Where each solver's TVCS is not the best of its solver's methods and exclusive LASSO.

    ``keys`` maps a metric to +1 (larger is better) or -1; means are compared as the tables
    print them (3 decimals), so ties count as best.
    """
    parts = []
    for s in SOLVERS:
        mine = f"{s} tvcs"
        rivals = [f"{s} {c}" for c in CONSTRAINTS if c != "tvcs"] + list(EXCLUSIVE_LASSOS)
        worse = []
        for key, sign in keys.items():
            for n in ns:
                m = round(mean(rows, mine, n, key), 3)
                beaten = [r for r in rivals if sign * (round(mean(rows, r, n, key), 3) - m) > 0]
                if beaten:
                    worse.append(f"{key} at n={n} (behind {', '.join(beaten)})")
        parts.append(
            f"{mine} is best or tied-best at every n"
            if not worse
            else f"{mine} is not best on " + "; ".join(worse)
        )
    return ". ".join(parts) + "."


def tables(rows: dict, ns, metrics: dict) -> list[str]:
    """One markdown table per metric: a row per n, a column per method, ``mean ± std``."""
    out = []
    for key, title in metrics.items():
        out += [f"## {title}", "", "| n | " + " | ".join(METHODS) + " |"]
        out.append("|---|" + "---|" * len(METHODS))
        for n in ns:
            cells = [
                f"{np.mean(v):.3f} ± {np.std(v):.3f}"
                for v in ([r[key] for r in rows[(m, n)]] for m in METHODS)
            ]
            out.append(f"| {n} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def lambda_table(rows: dict, ns) -> list[str]:
    """How often exclusive LASSO's validation chose each value of :data:`LAMBDAS`, per n."""
    out = [
        "## exclusive LASSO: lam chosen on the validation split (value: trials)",
        "",
        f"The path runs from {LAMBDAS[0]:g} down to {LAMBDAS[-1]:g}; a choice at either end "
        "would mean the validation optimum may lie outside it.",
        "",
        "| n | " + " | ".join(EXCLUSIVE_LASSOS) + " |",
        "|---|" + "---|" * len(EXCLUSIVE_LASSOS),
    ]
    for n in ns:
        cells = []
        for m in EXCLUSIVE_LASSOS:
            chosen = [r["lam"] for r in rows[(m, n)]]
            cells.append(", ".join(f"{v:g}: {chosen.count(v)}" for v in LAMBDAS if v in chosen))
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def plot(rows: dict, ns, metrics: dict, path: Path, title: str) -> None:
    """Mean (line) and mean ± std (band) of each metric against n, a line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = dict(zip(CONSTRAINTS, ("tab:grey", "tab:blue", "tab:green", "tab:red"), strict=True))
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 4), squeeze=False)
    for ax, (key, label) in zip(axes[0], metrics.items(), strict=True):
        for m in METHODS:
            vals = np.array([[r[key] for r in rows[(m, n)]] for n in ns])
            mu, sd = vals.mean(axis=1), vals.std(axis=1)
            solver, _, c = m.partition(" ")
            style = {
                "color": colours.get(c, "black"),
                "linestyle": "-" if solver == "iht" else "--",
            }
            if m == EXCLUSIVE_LASSO:
                style = {"color": "black", "linestyle": ":"}
            elif m == EXCLUSIVE_LASSO_ROWS:
                style = {"color": "tab:brown", "linestyle": ":"}
            ax.plot(ns, mu, marker="o", markersize=3, label=m, **style)
            ax.fill_between(ns, mu - sd, mu + sd, color=style["color"], alpha=0.08)
        ax.set_xlabel("n (training samples)")
        ax.set_title(label)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def header(title: str, command: str, seconds: float, trials: int) -> list[str]:
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"# {title}",
        "",
        f"Command: `{command}` ({seconds:.0f} s, {trials} trials per n; {date}; {machine}).",
        "",
    ]


def write_report(path: Path, text: str) -> None:
    """Write ``text``, keeping whatever followed :data:`NOTES_MARKER` in the old file."""
    notes = ""
    if path.exists() and NOTES_MARKER in path.read_text():
        notes = path.read_text().split(NOTES_MARKER, 1)[1]
    path.write_text(text + "\n\n" + NOTES_MARKER + notes.rstrip("\n") + "\n")


def add_iht_step_option(parser: argparse.ArgumentParser) -> None:
    """``--iht-step``: IHT's default step rule, or the constant ``1/L`` it had before."""
    parser.add_argument(
        "--iht-step",
        choices=("default", "1/L"),
        default="default",
        help="IHT's step: its default rule, or the constant 1/L (IHT's default before the "
        "adaptive rule), to measure the two on the same instances",
    )


def iht_options(args, options: dict) -> dict:
    """The solver options of :func:`fit_all` from ``args.iht_step`` and IHT's ``options``."""
    if args.iht_step == "1/L":
        options = {**options, "step": "1/L"}
    return {"iht": options} if options else {}


REGRESSION_METRICS = {
    "recall": "support recall",
    "exact": "successful recovery rate (exact support)",
    "rel_error": "relative error",
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ns", type=int, nargs="+", default=list(DEFAULT_NS))
    parser.add_argument(
        "--no-escape",
        action="store_true",
        help="IHT without its fixed-point escape (escape=0): the solver before issue 15's fix",
    )
    add_iht_step_option(parser)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--plot", type=Path, help="PNG of recall, recovery rate and error")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("projections").setLevel(logging.WARNING)
    start = time.perf_counter()
    options = iht_options(args, {"escape": 0} if args.no_escape else {})
    rows = run(args.ns, args.trials, args.seed, options)
    command = "python benchmarks/figure2.py " + " ".join(argv if argv is not None else sys.argv[1:])
    title = "Figure 2 (Yang et al., ICML 2017, section 5.1): sparse regression, 20 x 20 weights"
    keys = {"recall": 1, "exact": 1}
    text = "\n".join(
        [
            *header(title, command.strip(), time.perf_counter() - start, args.trials),
            f"Protocol: {PROTOCOL}",
            "",
            f"Paper: {PAPER_HEADLINE}",
            "",
            "Measured: " + verdict(rows, args.ns, keys),
            "",
            *tables(rows, args.ns, REGRESSION_METRICS),
            *lambda_table(rows, args.ns),
        ]
    )
    print(text)
    if args.out:
        write_report(args.out, text)
    if args.plot:
        plot(rows, args.ns, REGRESSION_METRICS, args.plot, "Figure 2: least squares, p = 400")


if __name__ == "__main__":
    main()
