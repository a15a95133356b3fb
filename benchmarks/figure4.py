"""Figure 4 of Yang et al. (ICML 2017, §5.2): expected accuracy against the cap ratio (a benchmark).

What it measures
----------------
Instances as in the paper: ``Q ~ U[0.5, 0.9]`` i.i.d. (drawn by
``np.random.default_rng([seed, n, m]).uniform(0.5, 0.9, (n, m))``), prior 0.5, n workers and
m tasks (``--sizes``, default 100x1000 and 200x10000). For each cap ratio ``r`` (``--ratios``)::

    max_workers_per_task = max(1, round(r * n))
    max_tasks_per_worker = max(1, round(r * m))
    budget               = max(1, floor(0.8 * min(m * max_workers_per_task,
                                                  n * max_tasks_per_worker)))

(built by ``benchmarks/instances.py``, shared with ``benchmarks/budgets.py``).

For every seed in ``range(--seeds)`` and every method (``--methods``; a method whose module
does not import is skipped with a note) it calls
``solve(problem, method=..., seed=seed)`` and records the exact expected accuracy of the
returned assignment and ``SolveResult.seconds`` (the method's wall time; the final exact
evaluation that ``solve`` adds is recorded apart as ``wall_seconds``, the whole call). Numba
kernels are compiled on a tiny warm-up instance first, so compilation is never timed. It also
computes :func:`~assignment.engine.upper_bound.accuracy_upper_bound` per instance (``--no-bound``
skips it).

Every finished run is appended at once as one JSON line to ``--results`` (default
``benchmarks/out/figure4.jsonl``); on a restart, (size, ratio, seed, method) rows already
there are not run again, so an interrupted run resumes where it stopped (``--fresh`` moves the
old file to ``*.bak`` and starts over). A run that raises is reported and not written, so a
restart retries it.

The report (stdout, and ``--out``) gives per size a table of mean ± sd accuracy over seeds, the
bound, the differences that Figure 4 is about and where greedy stands (in accuracy points, i.e.
percent, paired over seeds), a table of mean seconds (with the time ratio tvcs-iht / greedy,
the ratio of the means over seeds, that issue 12's speed target is stated in; the budget sweep
of that target is ``benchmarks/budgets.py``), and one PASS/FAIL line per target,
computed from the data:

* tvcs-iht >= q-lp and >= random at every ratio (means over seeds);
* on average over the ratios, tvcs-iht >= 1.0 point above q-lp and >= 5 points above random;
* tvcs-iht within 0.5 point of the upper bound at every ratio;
* at 200x10000, tvcs-iht no slower than q-lp (mean seconds over all its runs there).

A PNG (``--plot``) shows accuracy against ratio, one panel per size, one line per method with sd
error bars, the bound dashed.

``--iteration-cost`` runs a separate measurement instead: tvcs-iht's cost per iteration against
``n * m`` (``--cost-sizes``, ratio ``--cost-ratio``). Each size runs ``tvcs_iht`` with
``max_iter = 1`` and ``max_iter = 1 + --cost-iters`` (same seed, ``eval_every = 10**9``, so the
only exact evaluation is the final one, in both runs); the difference of the two times (best
of ``--cost-repeats``) divided by ``--cost-iters`` is the time per iteration, free of the
fixed start-up (first projection, start and final evaluation; the final local-improvement pass
is switched off in both). Reported: seconds per iteration,
nanoseconds per iteration and entry, a least-squares line of time against ``n * m`` (slope,
intercept, R²) and the log-log exponent. Linear cost shows as a roughly constant ns per entry
at the larger sizes.

Run from the repository root (the script puts the root on ``sys.path``)::

    python benchmarks/figure4.py                                     # the full figure: long
    python benchmarks/figure4.py --sizes 30x200 --ratios 0.02,0.05 --seeds 2 \\
        --methods tvcs-iht,random,q-lp                                # a quick check
    python benchmarks/figure4.py --iteration-cost --cost-sizes 20x200,40x400,80x800
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from assignment.engine.problem import AssignmentProblem  # noqa: E402
from assignment.engine.solve import METHODS, solve  # noqa: E402
from benchmarks.child_runs import code_version, header, solve_fields  # noqa: E402
from benchmarks.instances import caps, make_problem  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402
from benchmarks.results_file import (  # noqa: E402
    add_results_options,
    append_row,
    end_torn_line,
    load_rows,
    set_aside,
)

BOUND = "upper-bound"  # the method name of the bound's rows in the results file
MODULES = {
    "tvcs-iht": "assignment.engine.tvcs_iht",
    "random": "assignment.engine.baselines",
    "q-lp": "assignment.engine.baselines",
    "greedy": "assignment.engine.greedy",
}
DEFAULT_RESULTS = ROOT / "benchmarks" / "out" / "figure4.jsonl"
DEFAULT_PLOT = ROOT / "benchmarks" / "out" / "figure4.png"
SPEED_SIZE = (200, 10000)  # the size the speed target is stated at

# targets, in accuracy points (percent)
MIN_MEAN_OVER_QLP = 1.0
MIN_MEAN_OVER_RANDOM = 5.0
MAX_GAP_TO_BOUND = 0.5
# --iteration-cost: "roughly constant" ns per entry means max / min at most this at the larger sizes
LINEAR_SPREAD = 1.5


# ---------------------------------------------------------------------------------------------
# instances and runs


def size_name(n: int, m: int) -> str:
    return f"{n}x{m}"


def ratio_key(ratio: float) -> str:
    return f"{ratio:g}"


def row_key(row: dict) -> tuple[str, str, int, str]:
    return (row["size"], ratio_key(row["ratio"]), int(row["seed"]), row["method"])


def importable(method: str) -> str | None:
    """``None`` if the method's module imports, else the reason it does not."""
    try:
        importlib.import_module(MODULES[method])
    except Exception as exc:  # a module being written may fail in any way
        return f"{type(exc).__name__}: {exc}"
    return None


def warm_up(methods: list[str]) -> None:
    """Compile the Numba kernels and load the modules on a tiny instance (not timed)."""
    problem = make_problem(6, 30, 0.2, 0)
    for method in methods:
        solve(problem, method=method, seed=0)
    from assignment.engine.upper_bound import accuracy_upper_bound

    accuracy_upper_bound(problem)


def run_method(problem: AssignmentProblem, method: str, seed: int) -> dict:
    """Solve once; return the measured fields of a results row."""
    start = time.perf_counter()
    res = solve(problem, method=method, seed=seed)
    return solve_fields(res, time.perf_counter() - start)


def run_bound(problem: AssignmentProblem) -> dict:
    from assignment.engine.upper_bound import accuracy_upper_bound

    start = time.perf_counter()
    bound = accuracy_upper_bound(problem)
    seconds = time.perf_counter() - start
    return {
        "expected_accuracy": bound.value,
        "accuracy_standard_error": None,
        "integral": bound.integral,
        "seconds": seconds,
        "wall_seconds": seconds,
        "iterations": 0,
        "n_assigned": int(bound.workers_per_task.sum()),
        "message": "knapsack LP bound without per-worker caps",
    }


def run_all(args, sizes, ratios, methods, results: Path, notes: list[str]) -> dict:
    """Run what is missing from ``results``; return every row (old and new) by key."""
    rows = load_rows(results, key=row_key)
    jobs = [BOUND] * (not args.no_bound) + methods
    todo = [
        (n, m, r, seed, job)
        for n, m in sizes
        for r in ratios
        for seed in range(args.seeds)
        for job in jobs
        if (size_name(n, m), ratio_key(r), seed, job) not in rows
    ]
    done_before = len(sizes) * len(ratios) * args.seeds * len(jobs) - len(todo)
    print(f"{done_before} runs already in {results}, {len(todo)} to do", file=sys.stderr)
    if not todo:
        return rows
    warm_up(sorted({job for *_, job in todo if job != BOUND}, key=methods.index))
    commit = code_version()
    end_torn_line(results)
    problem, problem_key = None, None
    for count, (n, m, r, seed, job) in enumerate(todo, 1):
        if problem_key != (n, m, r, seed):
            problem, problem_key = make_problem(n, m, r, seed), (n, m, r, seed)
        per_task, per_worker, budget = caps(n, m, r)
        label = f"[{count}/{len(todo)}] {size_name(n, m)} r={r:g} seed {seed} {job}"
        try:
            measured = run_bound(problem) if job == BOUND else run_method(problem, job, seed)
        except Exception as exc:  # report it, keep going, retry on restart
            message = f"{label}: failed: {type(exc).__name__}: {exc}"
            print(message, file=sys.stderr)
            notes.append(f"Note: {message} (not recorded; a restart retries it).")
            continue
        row = {
            "size": size_name(n, m),
            "n": n,
            "m": m,
            "ratio": r,
            "seed": seed,
            "method": job,
            "max_workers_per_task": per_task,
            "max_tasks_per_worker": per_worker,
            "budget": budget,
            **measured,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "code": commit,
        }
        append_row(results, row)
        rows[row_key(row)] = row
        print(
            f"{label}: accuracy {row['expected_accuracy']:.4f} in {row['seconds']:.2f} s",
            file=sys.stderr,
        )
    return rows


# ---------------------------------------------------------------------------------------------
# summaries


def values(rows, size, ratio, method, seeds, field="expected_accuracy") -> dict[int, float]:
    """``{seed: value}`` for the seeds that have a row."""
    out = {}
    for seed in seeds:
        row = rows.get((size, ratio_key(ratio), seed, method))
        if row is not None:
            out[seed] = float(row[field])
    return out


def mean_sd(xs) -> tuple[float, float]:
    xs = list(xs)
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def paired_points(a: dict, b: dict) -> float | None:
    """Mean of ``100 * (a - b)`` over the seeds both have; None if none."""
    common = sorted(set(a) & set(b))
    if not common:
        return None
    return statistics.fmean(100.0 * (a[s] - b[s]) for s in common)


def fmt(x, spec: str = ".2f") -> str:
    return "—" if x is None else format(x, spec)


def summarize(rows, sizes, ratios, methods, seeds) -> dict:
    """Per size and ratio: accuracy stats, bound, paired differences, mean seconds."""
    out = {}
    for n, m in sizes:
        size = size_name(n, m)
        per_ratio = []
        for r in ratios:
            acc = {meth: values(rows, size, r, meth, seeds) for meth in [*methods, BOUND]}
            sec = {meth: values(rows, size, r, meth, seeds, "seconds") for meth in methods}
            sec[BOUND] = values(rows, size, r, BOUND, seeds, "seconds")
            iht = acc.get("tvcs-iht", {})
            per_ratio.append(
                {
                    "ratio": r,
                    "budget": caps(n, m, r)[2],
                    "acc": acc,
                    "sec": sec,
                    "over_qlp": paired_points(iht, acc.get("q-lp", {})),
                    "over_random": paired_points(iht, acc.get("random", {})),
                    "over_greedy": paired_points(iht, acc.get("greedy", {})),
                    "gap_bound": paired_points(acc[BOUND], iht),
                    "mc": any(
                        rows[(size, ratio_key(r), s, meth)].get("accuracy_standard_error")
                        is not None
                        for meth in methods
                        for s in acc[meth]
                    ),
                }
            )
        out[(n, m)] = per_ratio
    return out


def accuracy_table(per_ratio, methods, seeds) -> list[str]:
    head = ["ratio", "budget", *methods, "upper bound", "tvcs-iht - q-lp (pts)"]
    head += ["tvcs-iht - random (pts)", "tvcs-iht - greedy (pts)", "tvcs-iht gap to bound (pts)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for item in per_ratio:
        cells = [f"{item['ratio']:g}", f"{item['budget']:,}"]
        for meth in methods:
            got = item["acc"][meth]
            if not got:
                cells.append("—")
                continue
            mu, sd = mean_sd(got.values())
            partial = f" ({len(got)} seeds)" if len(got) < len(seeds) else ""
            cells.append(f"{mu:.4f} ± {sd:.4f}{partial}")
        bound = item["acc"][BOUND]
        cells.append(f"{statistics.fmean(bound.values()):.4f}" if bound else "—")
        cells += [fmt(item["over_qlp"]), fmt(item["over_random"])]
        cells += [fmt(item["over_greedy"], ".3f"), fmt(item["gap_bound"], ".3f")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def seconds_table(per_ratio, methods) -> list[str]:
    # issue 12's speed target is stated as this ratio (tvcs-iht at most 1.5 x greedy's time)
    ratio = "tvcs-iht" in methods and "greedy" in methods
    head = ["ratio", *methods, "upper bound", *["tvcs-iht / greedy"] * ratio]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for item in per_ratio:
        cells = [f"{item['ratio']:g}"]
        for meth in [*methods, BOUND]:
            got = item["sec"][meth]
            cells.append(f"{statistics.fmean(got.values()):.3f}" if got else "—")
        if ratio:
            iht, greedy = item["sec"]["tvcs-iht"], item["sec"]["greedy"]
            if iht and greedy and statistics.fmean(greedy.values()) > 0:
                times = statistics.fmean(iht.values()) / statistics.fmean(greedy.values())
                cells.append(f"{times:.2f}")
            else:
                cells.append("—")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def verdict(ok: bool | None) -> str:
    return "N/A " if ok is None else ("PASS" if ok else "FAIL")


def targets(summary, methods) -> list[str]:
    """One PASS/FAIL line per target and size, computed from the summary."""
    lines = []
    for (n, m), per_ratio in summary.items():
        size = size_name(n, m)

        def every(key, test, per_ratio=per_ratio):
            got = [(item["ratio"], item[key]) for item in per_ratio if item[key] is not None]
            if not got:
                return None, "no data"
            bad = [f"{r:g} ({v:+.2f})" for r, v in got if not test(v)]
            missing = len(per_ratio) - len(got)
            detail = f"fails at {', '.join(bad)}" if bad else f"holds at all {len(got)} ratios"
            if missing:
                detail += f"; {missing} ratio(s) without data"
            return not bad, detail

        def average(key, threshold, per_ratio=per_ratio):
            got = [item[key] for item in per_ratio if item[key] is not None]
            if not got:
                return None, "no data"
            mean = statistics.fmean(got)
            return mean >= threshold, f"average {mean:+.2f} points over {len(got)} ratios"

        checks = [
            ("tvcs-iht ≥ q-lp at every ratio", *every("over_qlp", lambda v: v >= -1e-9)),
            ("tvcs-iht ≥ random at every ratio", *every("over_random", lambda v: v >= -1e-9)),
            (
                f"tvcs-iht ≥ {MIN_MEAN_OVER_QLP:g} point above q-lp on average",
                *average("over_qlp", MIN_MEAN_OVER_QLP),
            ),
            (
                f"tvcs-iht ≥ {MIN_MEAN_OVER_RANDOM:g} points above random on average",
                *average("over_random", MIN_MEAN_OVER_RANDOM),
            ),
            (
                f"tvcs-iht within {MAX_GAP_TO_BOUND:g} point of the upper bound at every ratio",
                *every("gap_bound", lambda v: v <= MAX_GAP_TO_BOUND),
            ),
        ]
        for name, ok, detail in checks:
            lines.append(f"- {verdict(ok)} [{size}] {name}: {detail}")
    speed = summary.get(SPEED_SIZE)
    name = f"tvcs-iht no slower than q-lp at {size_name(*SPEED_SIZE)} (mean seconds over all runs)"
    if speed is None:
        lines.append(f"- N/A  {name}: {size_name(*SPEED_SIZE)} is not in this run")
    else:
        iht = [t for item in speed for t in item["sec"].get("tvcs-iht", {}).values()]
        qlp = [t for item in speed for t in item["sec"].get("q-lp", {}).values()]
        if not iht or not qlp:
            lines.append(f"- N/A  {name}: no data")
        else:
            a, b = statistics.fmean(iht), statistics.fmean(qlp)
            slower = sum(
                1
                for item in speed
                if item["sec"].get("tvcs-iht") and item["sec"].get("q-lp")
                if statistics.fmean(item["sec"]["tvcs-iht"].values())
                > statistics.fmean(item["sec"]["q-lp"].values())
            )
            lines.append(
                f"- {verdict(a <= b)} {name}: tvcs-iht {a:.2f} s, q-lp {b:.2f} s "
                f"(tvcs-iht slower at {slower} of {len(speed)} ratios)"
            )
    return lines


def plot(summary, methods, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = len(summary)
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.2), squeeze=False)
    for ax, ((n, m), per_ratio) in zip(axes[0], summary.items(), strict=True):
        for meth in methods:
            pts = [(item["ratio"], *mean_sd(item["acc"][meth].values())) for item in per_ratio]
            pts = [p for p, item in zip(pts, per_ratio, strict=True) if item["acc"][meth]]
            if pts:
                x, y, sd = zip(*pts, strict=True)
                ax.errorbar(x, y, yerr=sd, marker="o", capsize=3, label=meth)
        bound = [
            (item["ratio"], statistics.fmean(item["acc"][BOUND].values()))
            for item in per_ratio
            if item["acc"][BOUND]
        ]
        if bound:
            x, y = zip(*bound, strict=True)
            ax.plot(x, y, "k--", label="upper bound")
        ax.set_title(f"n = {n} workers, m = {m} tasks")
        ax.set_xlabel("cap ratio r")
        ax.set_ylabel("expected accuracy")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# --iteration-cost


def time_iht(problem: AssignmentProblem, iterations: int, seed: int, repeats: int) -> float:
    """Best wall time of ``tvcs_iht`` with ``max_iter = iterations``, no inner evaluation and
    no final pass (its cost depends on the support, not on the iterations)."""
    from assignment.engine.tvcs_iht import tvcs_iht

    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        tvcs_iht(
            problem,
            rng=np.random.default_rng(seed),
            max_iter=iterations,
            eval_every=10**9,
            refine=False,
        )
        best = min(best, time.perf_counter() - start)
    return best


def iteration_cost(sizes, ratio: float, iters: int, repeats: int, seed: int) -> list[str]:
    time_iht(make_problem(6, 30, 0.2, 0), 2, 0, 1)  # compile the kernels
    rows = []
    for n, m in sizes:
        problem = make_problem(n, m, ratio, seed)
        low = time_iht(problem, 1, seed, repeats)
        high = time_iht(problem, 1 + iters, seed, repeats)
        per_iter = max(high - low, 0.0) / iters
        rows.append((n, m, caps(n, m, ratio)[2], low, per_iter))
        print(
            f"{size_name(n, m)}: {per_iter * 1e3:.2f} ms per iteration (start-up {low:.3f} s)",
            file=sys.stderr,
        )
    lines = [
        f"tvcs-iht cost per iteration at r = {ratio:g}: time of max_iter = {1 + iters} minus "
        f"time of max_iter = 1, over {iters}, best of {repeats} (eval_every = 10**9, seed {seed}).",
        "",
        "| size | n·m | budget | start-up s (max_iter=1) | s / iteration "
        "| ns / (iteration · n·m) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for n, m, budget, low, per_iter in rows:
        lines.append(
            f"| {size_name(n, m)} | {n * m:,} | {budget:,} | {low:.4f} | {per_iter:.5f} "
            f"| {per_iter / (n * m) * 1e9:.2f} |"
        )
    lines.append("")
    x = np.array([n * m for n, m, *_ in rows], dtype=float)
    y = np.array([r[-1] for r in rows])
    if len(rows) >= 2 and np.ptp(x) > 0:
        slope, intercept = np.polyfit(x, y, 1)
        fitted = slope * x + intercept
        ss_tot = float(((y - y.mean()) ** 2).sum())
        r2 = 1.0 - float(((y - fitted) ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")
        lines.append(
            f"Least squares, s/iteration = slope · n·m + intercept: slope {slope * 1e9:.3f} "
            f"ns per entry, intercept {intercept * 1e3:.3f} ms, R² = {r2:.4f}."
        )
        if np.all(y > 0):
            exponent = np.polyfit(np.log(x), np.log(y), 1)[0]
            lines.append(f"Log-log fit: time ∝ (n·m)^{exponent:.2f} (1 is linear).")
        order = np.argsort(x)
        larger = order[len(order) // 2 :]  # the larger half of the sizes
        per_entry = y[larger] / x[larger]
        if np.all(per_entry > 0):
            spread = float(per_entry.max() / per_entry.min())
            linear = spread <= LINEAR_SPREAD
            lines.append(
                f"{'PASS' if linear else 'FAIL'} linear cost: ns per iteration and entry at the "
                f"{len(larger)} larger sizes spans a factor {spread:.2f} "
                f"({'≤' if linear else '>'} {LINEAR_SPREAD:g} counts as roughly constant)."
            )
        else:
            lines.append("N/A  linear cost: a per-iteration time was not positive (too noisy).")
    else:
        lines.append("N/A  fit: needs at least two different n·m.")
    return lines


# ---------------------------------------------------------------------------------------------
# report


def parse_sizes(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in item.lower().split("x")) for item in text.split(",") if item]


def parse_ratios(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="100x1000,200x10000", help="comma-separated NxM (default: %(default)s)"
    )
    parser.add_argument(
        "--ratios", default="0.01,0.02,0.03,0.04,0.05", help="cap ratios (default: %(default)s)"
    )
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0 .. SEEDS-1 (default: 5)")
    parser.add_argument(
        "--methods", default=",".join(METHODS), help="comma-separated subset of %(default)s"
    )
    parser.add_argument("--no-bound", action="store_true", help="skip the upper bound")
    add_results_options(parser, DEFAULT_RESULTS)
    add_out_option(parser)
    parser.add_argument(
        "--plot", type=Path, default=DEFAULT_PLOT, help="PNG figure (default: %(default)s)"
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the figure")
    parser.add_argument(
        "--iteration-cost",
        action="store_true",
        help="instead: measure tvcs-iht's time per iteration against n·m",
    )
    parser.add_argument(
        "--cost-sizes",
        default="50x500,100x1000,200x2000,200x5000,200x10000",
        help="sizes for --iteration-cost (default: %(default)s)",
    )
    parser.add_argument("--cost-ratio", type=float, default=0.02, help="(default: %(default)s)")
    parser.add_argument(
        "--cost-iters", type=int, default=10, help="timed iterations (default: %(default)s)"
    )
    parser.add_argument(
        "--cost-repeats", type=int, default=3, help="best of this many (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    try:
        sizes = parse_sizes(args.sizes)
        cost_sizes = parse_sizes(args.cost_sizes)
        ratios = parse_ratios(args.ratios)
    except ValueError as exc:
        parser.error(f"bad --sizes, --cost-sizes or --ratios: {exc}")
    if any(len(s) != 2 or min(s) < 1 for s in [*sizes, *cost_sizes]):
        parser.error("sizes must be NxM with positive N and M")
    if not ratios or any(not 0 < r <= 1 for r in ratios):
        parser.error("ratios must be in (0, 1]")
    if args.seeds < 1 or args.cost_iters < 1 or args.cost_repeats < 1:
        parser.error("--seeds, --cost-iters and --cost-repeats must be positive")

    if args.iteration_cost:
        report = header("tvcs-iht cost per iteration", sys.argv, os.getloadavg())
        report += iteration_cost(cost_sizes, args.cost_ratio, args.cost_iters, args.cost_repeats, 0)
        publish(report, args.out)
        return

    methods = [x.strip() for x in args.methods.split(",") if x.strip()]
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        parser.error(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    notes = []
    runnable = []
    for method in methods:
        reason = importable(method)
        if reason is None:
            runnable.append(method)
        else:
            notes.append(f"Note: skipping {method}: its module does not import ({reason}).")
            print(notes[-1], file=sys.stderr)

    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh and (backup := set_aside(args.results)):
        notes.append(f"Note: --fresh: the old results were moved to {backup}.")
    rows = run_all(args, sizes, ratios, runnable, args.results, notes)

    seeds = list(range(args.seeds))
    wanted = {
        (size_name(n, m), ratio_key(r), seed, job)
        for n, m in sizes
        for r in ratios
        for seed in seeds
        for job in [BOUND, *methods]
    }
    codes = sorted({str(row.get("code")) for key, row in rows.items() if key in wanted})
    if len(codes) > 1:
        notes.append(
            f"Note: the rows come from {len(codes)} code versions ({', '.join(codes)}); "
            "use --fresh for one."
        )
    shown = [x for x in methods if x in runnable or any(k[3] == x for k in rows)]
    summary = summarize(rows, sizes, ratios, shown, seeds)
    report = header("Figure 4: expected accuracy against the cap ratio", sys.argv, os.getloadavg())
    report += [
        "Q ~ U[0.5, 0.9] i.i.d. (rng [seed, n, m]), prior 0.5; max_workers_per_task = "
        "max(1, round(r·n)), max_tasks_per_worker = max(1, round(r·m)), budget = "
        "floor(0.8 · min(m · max_workers_per_task, n · max_tasks_per_worker)). "
        f"Seeds 0..{args.seeds - 1}; results file `{args.results}`.",
        "",
        "Accuracy: exact expected accuracy, mean ± sd (sample sd) over seeds. Differences are "
        "in accuracy points (100 x difference), paired over the seeds both sides have. "
        "Seconds: the method's wall time as `SolveResult.seconds` (without solve's final "
        "exact evaluation).",
        "",
        *notes,
        *([""] if notes else []),
    ]
    for n, m in sizes:
        per_ratio = summary[(n, m)]
        report += [f"## {size_name(n, m)} (n = {n} workers, m = {m} tasks)", ""]
        report += accuracy_table(per_ratio, shown, seeds)
        if any(item["mc"] for item in per_ratio):
            report += [
                "",
                "Some accuracies are Monte Carlo estimates (too many workers on a task).",
            ]
        report += ["", "Mean seconds:", ""]
        report += seconds_table(per_ratio, shown)
        for key, name in (("over_qlp", "q-lp"), ("over_random", "random")):
            got = [item[key] for item in per_ratio if item[key] is not None]
            mean = f"{statistics.fmean(got):+.2f} points" if got else "— (no data)"
            report.append("")
            report.append(f"Average over ratios of tvcs-iht - {name}: {mean} ({len(got)} ratios).")
        report.append("")
    report += ["## Targets", "", *targets(summary, shown)]
    if not args.no_plot:
        plot(summary, shown, args.plot)
        report += ["", f"Figure: `{args.plot}`."]
    publish(report, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
