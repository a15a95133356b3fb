"""Issue 12, goal 1: tvcs-iht against greedy and q-lp across budgets, as ratios (a benchmark).

What it measures
----------------
Goal 1 of issue 12 asks, side by side in one run:

1. tvcs-iht takes at most 1.5 x greedy's time,
2. at greedy's accuracy or better (so it stays ahead where it is ahead today: skill x
   difficulty quality),
3. q-lp takes at most 2 x tvcs-iht's time,
4. q-lp uses at most 200 bytes of memory per (worker, task) pair,

on budgets from 10% to 100% of what the caps allow at 100 x 1,000 and 200 x 10,000 (the Figure 4
grid itself is ``benchmarks/figure4.py``, whose report has the tvcs-iht / greedy time ratio).

Instances: n workers and m tasks (``--sizes``, default 100x1000 and 200x10000), prior 0.5, caps
from the cap ratio ``r`` (``--ratio``, default 0.03) and budgets as fractions ``f``
(``--budgets``, default 0.1, 0.25, 0.5, 0.75, 1.0) of what the caps allow::

    max_workers_per_task = max(1, round(r * n))
    max_tasks_per_worker = max(1, round(r * m))
    budget               = max(1, floor(f * min(m * max_workers_per_task,
                                                n * max_tasks_per_worker)))

Quality models (``--quality``, default ``uniform,skill-difficulty``; the instances are built by
``benchmarks/instances.py``, shared with ``benchmarks/figure4.py``):

* ``uniform``: ``Q ~ U[0.5, 0.9]`` i.i.d., ``np.random.default_rng([seed, n, m])`` as in
  Figure 4;
* ``skill-difficulty``: ``Q = 0.5 + 0.45 * outer(skill, ease)`` with ``skill ~ U[0, 1]`` per
  worker and ``ease ~ U[0.2, 1]`` per task, drawn from ``default_rng([seed, n, m, 1])``;
* ``spammers`` (not in the default): a fifth of the workers (chosen at random) at ``Q = 0.5``
  exactly, the others ``U[0.6, 0.95]`` i.i.d., from ``default_rng([seed, n, m, 2])``.

Each method (``--methods``, default tvcs-iht, greedy, q-lp, random) runs on each instance and
seed (``range(--seeds)``, default 3) as ``solve(problem, method=..., seed=seed)`` **in its own
process** (this script with an internal ``--child`` flag), one process at a time. The child
compiles or loads its Numba kernels first (``assignment.engine.warm_up`` for that method, then
a solve of a tiny instance of the same quality model), so compilation is never timed, then
builds the instance and measures:

* accuracy: ``SolveResult.expected_accuracy`` (exact);
* time: ``SolveResult.seconds``, the method's wall time without ``solve``'s final exact
  evaluation, and ``SolveResult.cpu_seconds``, the process's CPU time over the same span;
  ``--clock cpu`` computes the time ratios from the second, which other processes on a shared
  machine disturb far less (the engine runs on one thread);
* memory: the peak resident set size during the ``solve`` call (which includes ``solve``'s
  final evaluation and the returned n x m bool matrix) minus the resident set size just before
  it, with the instance built; reported in MB and as bytes per pair, ``/ (n * m)``. The peak is
  Linux's ``VmHWM`` after resetting it (``echo 5 > /proc/self/clear_refs``) once the instance is
  built. Not ``getrusage(RUSAGE_SELF).ru_maxrss``: in a child started by fork + exec it keeps
  the parent's peak from before the exec (measured here: a child of a 650 MB parent reports
  650 MB), and it would also hold the kernels' compilation peak. ``ru_maxrss`` is recorded in
  the results for reference; where ``clear_refs`` cannot be written it is used instead, and
  the report says so.

Every finished run is appended at once as one JSON line to ``--results`` (default
``benchmarks/out/budgets.jsonl``); on a restart, (size, ratio, quality, budget fraction, seed,
method) rows already there are not run again (``--fresh`` moves the old file to ``*.bak`` and
starts over). A run that fails (exception, crash) is reported, not written, and retried on a
restart. A child still running after ``--timeout`` seconds (default 300) is stopped and
recorded as timed out, with its solve time so far and its memory peak so far (read from
``/proc/PID/status``) as lower bounds; the other seeds of that method at that budget are then
skipped (they would take as long). The report shows such figures as "> x" and a target
check uses a bound only where it decides (a q-lp stopped after 300 s against a 110 s tvcs-iht
fails the 2x target; two bounds decide nothing). q-lp once gave HiGHS every pair and, on
skill x difficulty quality at 200x10000, ran for more than 10 minutes on one instance, which is
why the timeout exists; it now solves by column generation (``assignment/engine/q_lp.py``),
whose degenerate duals on that quality model still cost it many pricing rounds.

The report (stdout, and ``--out``) has one table per size and quality model, one row per budget
fraction: the budget, accuracy mean ± sd over seeds per method, tvcs-iht - greedy in accuracy
points (percent, paired over seeds), mean seconds per method, the time ratios tvcs-iht / greedy
and q-lp / tvcs-iht (ratios of the means over seeds), and the memory of each method (bytes per
pair, MB in brackets; the largest over seeds). Then PASS/FAIL lines computed from the data, per
size and quality model, each saying where and by how much a target fails:

* tvcs-iht <= 1.5 x greedy's time at every budget;
* tvcs-iht >= greedy's accuracy at every budget (means over seeds, 1e-6 allowed for rounding);
* q-lp <= 2 x tvcs-iht's time at every budget;
* q-lp <= 200 bytes per pair at every budget.

The machine's load average at the start is in the report's header: times on a shared machine
are noisy, and each ratio compares runs made minutes apart.

How long (2 cores, AMD EPYC, shared with other work): at commit 4f22aa2 (tvcs-iht before its
greedy start) the default run took about 83 minutes, most of it tvcs-iht and q-lp at 200x10000
(q-lp stopped by the timeout at 4 of the 5 skill-difficulty budgets there). Since the greedy
start, ``--sizes 100x1000`` (all four methods, 3 seeds) takes 6.5 minutes and ``--sizes
200x10000 --seeds 2 --methods tvcs-iht,greedy`` about 6 minutes; q-lp at 200x10000 still takes
minutes per solve. ``--quick`` (100x1000 only, 2 seeds, budgets 0.25 and 1.0; 32 solves) takes
about a minute, about 2 s of each solve being the child's start-up and kernel loading.

Run from the repository root (the script puts the root on ``sys.path``)::

    python benchmarks/budgets.py                                  # the default: long (q-lp)
    python benchmarks/budgets.py --quick                          # a fast check
    python benchmarks/budgets.py --sizes 30x200 --seeds 2 --quality uniform,spammers
    python benchmarks/budgets.py --fresh --out docs/benchmarks/budgets.md
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from assignment.engine.solve import METHODS, solve  # noqa: E402
from benchmarks.child_runs import (  # noqa: E402
    code_version,
    header,
    measure_solve,
    result_line,
    run_child,
)
from benchmarks.instances import QUALITIES, caps, make_problem  # noqa: E402
from benchmarks.markdown_report import add_out_option, publish  # noqa: E402
from benchmarks.results_file import (  # noqa: E402
    add_results_options,
    append_row,
    end_torn_line,
    load_rows,
    set_aside,
)

DEFAULT_RESULTS = ROOT / "benchmarks" / "out" / "budgets.jsonl"
DEFAULTS = {
    "sizes": "100x1000,200x10000",
    "ratio": 0.03,
    "budgets": "0.1,0.25,0.5,0.75,1.0",
    "quality": "uniform,skill-difficulty",
    "seeds": 3,
    "methods": "tvcs-iht,greedy,q-lp,random",
}
QUICK = {"sizes": "100x1000", "seeds": 2, "budgets": "0.25,1.0"}

# targets (issue 12, goal 1)
MAX_IHT_OVER_GREEDY_TIME = 1.5
MAX_QLP_OVER_IHT_TIME = 2.0
MAX_QLP_BYTES_PER_PAIR = 200.0
ACCURACY_SLACK = 1e-6  # in accuracy (not points): rounding of the exact evaluation


# ---------------------------------------------------------------------------------------------
# names and keys (the instances are built by benchmarks/instances.py)


#: ``--clock``: the results field each clock reads, and what the report calls it.
CLOCKS = {
    "wall": ("seconds", "`SolveResult.seconds`, the wall clock"),
    "cpu": ("cpu_seconds", "`SolveResult.cpu_seconds`, the solving process's CPU time"),
}


def size_name(n: int, m: int) -> str:
    return f"{n}x{m}"


def row_key(row: dict) -> tuple:
    return (
        row["size"],
        f"{row['ratio']:g}",
        row["quality"],
        f"{row['fraction']:g}",
        int(row["seed"]),
        row["method"],
    )


# ---------------------------------------------------------------------------------------------
# the child: one method on one instance, in a process of its own


def child(spec: dict) -> dict:
    """Warm up, build the instance, solve once; return the measured fields of a results row."""
    from assignment.engine.warm_up import warm_up

    method, quality, seed = spec["method"], spec["quality"], spec["seed"]
    n, m, ratio, fraction = spec["n"], spec["m"], spec["ratio"], spec["fraction"]
    start = time.perf_counter()
    warm_up(methods=[method])
    solve(make_problem(6, 30, 0.2, 0, fraction=0.8, quality=quality), method=method, seed=0)
    warm_seconds = time.perf_counter() - start

    problem = make_problem(n, m, ratio, seed, fraction=fraction, quality=quality)
    return {**measure_solve(problem, method=method, seed=seed), "warm_up_seconds": warm_seconds}


# ---------------------------------------------------------------------------------------------
# runs


def run_all(grid: dict, results: Path, timeout: float, notes: list[str]) -> dict:
    """Run what is missing from ``results``, one child at a time; return every row by key."""
    rows = load_rows(results, key=row_key)
    ratio = grid["ratio"]
    todo = [
        (n, m, quality, fraction, seed, method)
        for n, m in grid["sizes"]
        for quality in grid["qualities"]
        for fraction in grid["fractions"]
        for seed in grid["seeds"]
        for method in grid["methods"]
        if (size_name(n, m), f"{ratio:g}", quality, f"{fraction:g}", seed, method) not in rows
    ]
    total = math.prod(len(grid[k]) for k in ("sizes", "qualities", "fractions", "seeds", "methods"))
    print(f"{total - len(todo)} runs already in {results}, {len(todo)} to do", file=sys.stderr)
    if not todo:
        return rows
    commit = code_version()
    end_torn_line(results)
    started = time.perf_counter()
    ran = skipped = 0
    for count, (n, m, quality, fraction, seed, method) in enumerate(todo, 1):
        cell = (size_name(n, m), f"{ratio:g}", quality, f"{fraction:g}")
        label = f"[{count}/{len(todo)}] {size_name(n, m)} {quality} f={fraction:g} seed {seed} "
        label += method
        cut = [s for s in grid["seeds"] if rows.get((*cell, s, method), {}).get("timed_out")]
        if cut:  # the other seeds would take as long: not run, not recorded
            skipped += 1
            print(f"{label}: skipped, it timed out at seed {cut[0]}", file=sys.stderr)
            continue
        ran += 1
        per_task, per_worker, budget = caps(n, m, ratio, fraction)
        spec = {
            "n": n,
            "m": m,
            "ratio": ratio,
            "fraction": fraction,
            "quality": quality,
            "seed": seed,
            "method": method,
        }
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        try:
            measured = run_child(Path(__file__).resolve(), spec, timeout, n_pairs=n * m)
        except Exception as exc:  # report it, keep going, retry on restart
            message = f"{label}: failed: {type(exc).__name__}: {exc}"
            print(message, file=sys.stderr)
            notes.append(f"Note: {message} (not recorded; a restart retries it).")
            continue
        if Path(measured["engine"]) != ROOT / "assignment":
            raise SystemExit(f"the child imported the engine from {measured['engine']}, not {ROOT}")
        row = {
            "size": size_name(n, m),
            **spec,
            "max_workers_per_task": per_task,
            "max_tasks_per_worker": per_worker,
            "budget": budget,
            **measured,
            "load_average_1min": load,  # when the child started: other work on the machine
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "code": commit,
        }
        append_row(results, row)
        rows[row_key(row)] = row
        if row.get("timed_out"):
            outcome = f"stopped after {row['seconds_at_least']:.0f} s of solving"
        else:
            outcome = f"accuracy {row['expected_accuracy']:.4f} in {row['seconds']:.2f} s"
        print(
            f"{label}: {outcome}, {fmt(row['bytes_per_pair'], '.0f')} B/pair "
            f"({time.perf_counter() - started:.0f} s so far)",
            file=sys.stderr,
        )
    notes.append(
        f"This invocation ran {ran} solves in {time.perf_counter() - started:.0f} s"
        + (
            f" and skipped {skipped} (their method had timed out at another seed)."
            if skipped
            else "."
        )
    )
    return rows


# ---------------------------------------------------------------------------------------------
# summaries


def mean_sd(xs) -> tuple[float, float]:
    xs = list(xs)
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def summarize(rows, grid) -> dict:
    """Per (size, quality): one item per budget fraction with ``{method: {seed: row}}``."""
    out = {}
    ratio = f"{grid['ratio']:g}"
    for n, m in grid["sizes"]:
        for quality in grid["qualities"]:
            items = []
            for fraction in grid["fractions"]:
                got = {
                    method: {
                        seed: rows[key]
                        for seed in grid["seeds"]
                        if (key := (size_name(n, m), ratio, quality, f"{fraction:g}", seed, method))
                        in rows
                    }
                    for method in grid["methods"]
                }
                items.append(
                    {
                        "fraction": fraction,
                        "budget": caps(n, m, grid["ratio"], fraction)[2],
                        "runs": got,
                        "n_seeds": len(grid["seeds"]),
                    }
                )
            out[(n, m, quality)] = items
    return out


def field(item, method, name="expected_accuracy") -> dict[int, float]:
    """``{seed: value}`` over the runs of ``method`` that finished."""
    return {
        seed: float(row[name])
        for seed, row in item["runs"].get(method, {}).items()
        if not row.get("timed_out") and row.get(name) is not None
    }


def stopped(item, method) -> dict[int, dict]:
    """``{seed: row}`` of the runs of ``method`` stopped by ``--timeout``."""
    return {seed: row for seed, row in item["runs"].get(method, {}).items() if row.get("timed_out")}


# A figure that a timed-out run makes a bound: (value, op), op "=" exact, ">" at least, "<" at
# most.


def mean_seconds(item, method, clock: str = "seconds") -> tuple[float, str] | None:
    """Mean of ``clock`` (``"seconds"``, the wall clock, or ``"cpu_seconds"``) over seeds. On
    the wall clock a run stopped by the timeout counts its time so far (">"); it has no CPU
    time, so on the CPU clock such a run leaves the mean undecided (None)."""
    times = list(field(item, method, clock).values())
    cut = [row["seconds_at_least"] for row in stopped(item, method).values()]
    if clock != "seconds" and cut:
        return None
    if not times and not cut:
        return None
    return statistics.fmean(times + cut), (">" if cut else "=")


def largest_bytes(item, method, name="bytes_per_pair") -> tuple[float, str] | None:
    """Largest memory over seeds; a stopped run's peak so far makes it a lower bound (">")."""
    done = list(field(item, method, name).values())
    cut = [row[name] for row in stopped(item, method).values() if row.get(name) is not None]
    if not done and not cut:
        return None
    return max(done + cut), (">" if cut else "=")


def ratio_of(a, b) -> tuple[float, str] | None:
    """``a / b`` for bounds; None where it is unknown (both lower bounds) or missing."""
    if a is None or b is None or b[0] <= 0:
        return None
    op = {("=", "="): "=", (">", "="): ">", ("=", ">"): "<"}.get((a[1], b[1]))
    return None if op is None else (a[0] / b[0], op)


def paired_points(a: dict, b: dict) -> float | None:
    """Mean of ``100 * (a - b)`` over the seeds both have; None if none."""
    common = sorted(set(a) & set(b))
    if not common:
        return None
    return statistics.fmean(100.0 * (a[s] - b[s]) for s in common)


def iht_minus_greedy(item) -> tuple[float, str] | None:
    got = paired_points(field(item, "tvcs-iht"), field(item, "greedy"))
    return None if got is None else (got, "=")


def time_ratio(item, top: str, bottom: str, clock: str = "seconds") -> tuple[float, str] | None:
    return ratio_of(mean_seconds(item, top, clock), mean_seconds(item, bottom, clock))


def fmt(x, spec: str = ".2f", suffix: str = "") -> str:
    """A number or a bound (value, op) as text; "—" for None."""
    if x is None:
        return "—"
    value, op = x if isinstance(x, tuple) else (x, "=")
    return ("" if op == "=" else op + " ") + format(value, spec) + suffix


def accuracy_cell(item, method) -> str:
    got = field(item, method)
    cut = len(stopped(item, method))
    if not got:
        return f"timed out ({cut} seed{'s' * (cut > 1)})" if cut else "—"
    mu, sd = mean_sd(got.values())
    text = f"{mu:.4f} ± {sd:.4f}"
    if len(got) < item["n_seeds"]:
        text += f" ({len(got)} seeds" + (f", {cut} timed out" if cut else "") + ")"
    return text


def table(items, methods, clock: str = "seconds") -> list[str]:
    head = ["f", "budget"]
    head += [f"{meth} acc" for meth in methods]
    head += ["tvcs-iht - greedy (pts)"]
    head += [f"{meth} s" for meth in methods]
    head += ["tvcs-iht / greedy time", "q-lp / tvcs-iht time"]
    head += [f"{meth} B/pair (MB)" for meth in methods]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for item in items:
        cells = [f"{item['fraction']:g}", f"{item['budget']:,}"]
        cells += [accuracy_cell(item, meth) for meth in methods]
        cells.append(fmt(iht_minus_greedy(item), "+.3f"))
        cells += [fmt(mean_seconds(item, meth, clock), ".3f") for meth in methods]
        cells.append(fmt(time_ratio(item, "tvcs-iht", "greedy", clock), ".2f", "x"))
        cells.append(fmt(time_ratio(item, "q-lp", "tvcs-iht", clock), ".2f", "x"))
        for meth in methods:
            per_pair = largest_bytes(item, meth)
            mb = largest_bytes(item, meth, "extra_mb")
            cells.append("—" if per_pair is None else f"{fmt(per_pair, '.0f')} ({mb[0]:.1f})")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def verdict(ok: bool | None) -> str:
    return "N/A " if ok is None else ("PASS" if ok else "FAIL")


def check(items, value, limit: float, at_most: bool, describe) -> tuple[bool | None, str]:
    """Hold ``value(item)`` (a bound) to ``<= limit`` (``at_most``) or ``>= limit`` at every
    budget; say where and by how much it fails. A bound decides only one way: "> 3" fails
    "<= 2" but leaves "<= 5" open."""
    fails, open_, passes = [], [], []
    for item in items:
        got = value(item)
        if got is None:
            open_.append(f"f={item['fraction']:g}: no data")
            continue
        v, op = got
        ok = v <= limit if at_most else v >= limit
        sure = op == "=" or (op == ">") == (at_most != ok)  # a bound beyond the limit decides
        where = f"f={item['fraction']:g}: {describe(got)}"
        (passes if ok and sure else fails if sure else open_).append(where)
    if not fails and not passes:
        return None, "; ".join(open_) or "no data"
    if fails:
        detail = f"fails at {len(fails)} of {len(items)} budgets ({'; '.join(fails)})"
    else:
        detail = f"holds at {len(passes)} of {len(items)} budgets ({'; '.join(passes)})"
    if open_:
        detail += f"; undecided at {'; '.join(open_)}"
    return (False if fails else None if open_ else True), detail


def targets(summary, clock: str = "seconds") -> list[str]:
    """One PASS/FAIL line per target, size and quality model, computed from the summary."""
    t1, t3, cap = MAX_IHT_OVER_GREEDY_TIME, MAX_QLP_OVER_IHT_TIME, MAX_QLP_BYTES_PER_PAIR
    slack = 100.0 * ACCURACY_SLACK  # in points

    def times(limit):
        def describe(got):
            text = fmt(got, ".2f", "x")
            return text + (f" ({got[0] / limit:.2f}x the target)" if got[0] > limit else "")

        return describe

    def over(got):
        return fmt(got, ".0f", " B") + (f" ({got[0] - cap:.0f} B over)" if got[0] > cap else "")

    lines = []
    for (n, m, quality), items in summary.items():
        where = f"[{size_name(n, m)} {quality}]"
        checks = [
            (
                f"tvcs-iht ≤ {t1:g}x greedy's time at every budget",
                *check(
                    items,
                    lambda it: time_ratio(it, "tvcs-iht", "greedy", clock),
                    t1,
                    True,
                    times(t1),
                ),
            ),
            (
                "tvcs-iht ≥ greedy's accuracy at every budget (mean over seeds, 1e-6 slack)",
                *check(
                    items, iht_minus_greedy, -slack, False, lambda got: fmt(got, "+.3g", " pts")
                ),
            ),
            (
                f"q-lp ≤ {t3:g}x tvcs-iht's time at every budget",
                *check(
                    items,
                    lambda it: time_ratio(it, "q-lp", "tvcs-iht", clock),
                    t3,
                    True,
                    times(t3),
                ),
            ),
            (
                f"q-lp ≤ {cap:g} bytes per pair at every budget (largest over seeds)",
                *check(items, lambda it: largest_bytes(it, "q-lp"), cap, True, over),
            ),
        ]
        for name, ok, detail in checks:
            lines.append(f"- {verdict(ok)} {where} {name}: {detail}")
    return lines


# ---------------------------------------------------------------------------------------------
# report


def shown_path(path: Path) -> str:
    """``path`` relative to the repository root where it is inside it."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def parse_sizes(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in item.lower().split("x")) for item in text.split(",") if item]


def parse_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:  # internal: one run in this process, result on stdout
        result = child(json.loads(argv[1]))
        print(result_line(result), flush=True)
        return
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", help=f"comma-separated NxM (default: {DEFAULTS['sizes']})")
    parser.add_argument("--ratio", type=float, help=f"cap ratio (default: {DEFAULTS['ratio']})")
    parser.add_argument(
        "--budgets", help=f"fractions of what the caps allow (default: {DEFAULTS['budgets']})"
    )
    parser.add_argument(
        "--quality",
        help=f"comma-separated subset of {', '.join(QUALITIES)} (default: {DEFAULTS['quality']})",
    )
    parser.add_argument(
        "--seeds", type=int, help=f"seeds 0 .. SEEDS-1 (default: {DEFAULTS['seeds']})"
    )
    parser.add_argument(
        "--methods",
        help=f"comma-separated subset of {', '.join(METHODS)} (default: {DEFAULTS['methods']})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a fast check: --sizes 100x1000 --seeds 2 --budgets 0.25,1.0 unless given",
    )
    add_results_options(parser, DEFAULT_RESULTS)
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds per child; a run stopped by it is recorded as timed out and its other "
        "seeds at that budget are skipped (default: %(default)s)",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="time the ratios by: wall (SolveResult.seconds) or cpu (SolveResult.cpu_seconds, "
        "the solving process's CPU time: steadier on a shared machine; the engine runs on one "
        "thread) (default: %(default)s)",
    )
    add_out_option(parser)
    args = parser.parse_args(argv)
    for name, default in DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, QUICK.get(name, default) if args.quick else default)
    try:
        sizes = parse_sizes(args.sizes)
        fractions = [float(x) for x in parse_list(args.budgets)]
    except ValueError as exc:
        parser.error(f"bad --sizes or --budgets: {exc}")
    if not sizes or any(len(s) != 2 or min(s) < 1 for s in sizes):
        parser.error("sizes must be NxM with positive N and M")
    if not fractions or any(not 0 < f <= 1 for f in fractions):
        parser.error("budget fractions must be in (0, 1]")
    if not 0 < args.ratio <= 1:
        parser.error("--ratio must be in (0, 1]")
    if args.seeds < 1 or args.timeout <= 0:
        parser.error("--seeds and --timeout must be positive")
    qualities = parse_list(args.quality)
    methods = parse_list(args.methods)
    if not qualities or set(qualities) - set(QUALITIES):
        parser.error(f"--quality: choose from {', '.join(QUALITIES)}")
    if not methods or set(methods) - set(METHODS):
        parser.error(f"--methods: choose from {', '.join(METHODS)}")
    grid = {
        "sizes": sizes,
        "ratio": args.ratio,
        "fractions": fractions,
        "qualities": qualities,
        "seeds": list(range(args.seeds)),
        "methods": methods,
    }

    notes: list[str] = []
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh and (backup := set_aside(args.results)):
        notes.append(f"Note: --fresh: the old results were moved to {backup}.")
    rows = run_all(grid, args.results, args.timeout, notes)

    summary = summarize(rows, grid)
    used = [
        run
        for items in summary.values()
        for item in items
        for runs in item["runs"].values()
        for run in runs.values()
    ]
    codes = sorted({str(run.get("code")) for run in used})
    dates = sorted(str(run.get("date")) for run in used)
    if dates:
        notes.append(f"The {len(used)} runs shown were measured from {dates[0]} to {dates[-1]}.")
    loads = [run["load_average_1min"] for run in used if run.get("load_average_1min") is not None]
    if loads:
        notes.append(
            f"1-minute load average when a run started: {min(loads):.2f} to {max(loads):.2f}, "
            f"median {statistics.median(loads):.2f} ({len(loads)} runs)."
        )
    if len(codes) > 1:
        notes.append(
            f"Note: the rows come from {len(codes)} code versions ({', '.join(codes)}); "
            "use --fresh for one."
        )
    if any(run.get("peak_method") == "ru_maxrss" for run in used):
        notes.append(
            "Note: some peaks are ru_maxrss (/proc/self/clear_refs was not writable): they "
            "include the start-up and warm-up, so their memory is an overestimate."
        )
    if any(run.get("accuracy_standard_error") is not None for run in used):
        notes.append(
            "Note: some accuracies are Monte Carlo estimates (too many workers on a task)."
        )

    report = header("Issue 12, goal 1: tvcs-iht, greedy and q-lp across budgets", sys.argv, load)
    report += [
        f"Cap ratio r = {args.ratio:g}: max_workers_per_task = max(1, round(r·n)), "
        "max_tasks_per_worker = max(1, round(r·m)); budget = max(1, floor(f · min(m · "
        "max_workers_per_task, n · max_tasks_per_worker))) for each fraction f. Prior 0.5. "
        "Quality: uniform = U[0.5, 0.9] i.i.d. (rng [seed, n, m]); skill-difficulty = 0.5 + "
        "0.45 · skill_i · ease_j, skill ~ U[0, 1], ease ~ U[0.2, 1] (rng [seed, n, m, 1]); "
        "spammers = a fifth of the workers at 0.5, the others U[0.6, 0.95] (rng [seed, n, m, 2]). "
        f"Seeds 0..{args.seeds - 1}; results file `{shown_path(args.results)}`.",
        "",
        "Each solve ran in a process of its own, one at a time, after that process had loaded "
        "its kernels on a tiny instance. Accuracy: exact expected accuracy, mean ± sd over seeds; "
        "tvcs-iht - greedy in points (100 x difference), paired over seeds. Seconds: "
        f"{CLOCKS[args.clock][1]} (without solve's final exact evaluation), mean over seeds; the "
        "time ratios are ratios of those means. Memory: peak RSS during the `solve` call (its "
        "final evaluation and the nxm result included) minus RSS before it, with the instance "
        "built, in bytes per pair (n·m) and MB; the largest over seeds.",
        "",
        *notes,
        *([""] if notes else []),
    ]
    for (n, m, quality), items in summary.items():
        report += [f"## {size_name(n, m)} {quality} (n = {n} workers, m = {m} tasks)", ""]
        report += table(items, methods, CLOCKS[args.clock][0])
        report.append("")
    report += ["## Targets", "", *targets(summary, CLOCKS[args.clock][0])]
    publish(report, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
