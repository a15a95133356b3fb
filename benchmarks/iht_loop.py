"""tvcs-iht's results and speed across a change of its step loop (a benchmark, not a test).

Issue 14 moved tvcs-iht's stochastic IHT loop (``assignment.engine.tvcs_iht._steps``) onto
:func:`projections.solvers.stochastic_iht`. The product's results must not change, and this
script shows it in two ways:

``record FILE`` / ``check FILE``
    Run :func:`~assignment.engine.tvcs_iht.tvcs_iht` on a fixed set of problems with fixed
    seeds (two labels and three, with and without an eligibility mask, over every pair and
    over a candidate set, ``eval_every`` and ``patience`` exercised, the final pass on and off)
    and write what it returns (a hash of the assignment's bits, the accuracies as hex floats,
    the iterations, the history, the message, every progress report) to ``FILE``; ``check``
    runs them again and lists every difference (exit status 1 if any).

``speed``
    Time the old loop against the current one side by side in one process: the old
    ``tvcs_iht.py`` is read from git (``--old``, default the commit before the change) into a
    temporary module, never into the product. Both ``_steps`` run on the same problem, start
    and seed, interleaved, ``--repeats`` times; the script checks that they return the same
    support, accuracy, history and message and reports the median seconds and the ratio
    new / old. Sizes: the Figure 4 demo shape (100 x 1,000, ``benchmarks/figure4.py``'s
    instance, ratio 0.1) and larger ones (``--sizes``). Figure 4's uniform quality puts greedy
    at the upper bound, where tvcs-iht does not step at all, so ``_steps`` is timed directly.

Run from the repository root::

    python benchmarks/iht_loop.py record docs/benchmarks/iht_loop-before.json
    python benchmarks/iht_loop.py check docs/benchmarks/iht_loop-before.json
    python benchmarks/iht_loop.py speed --out docs/benchmarks/iht_loop.md
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import logging
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assignment.engine import search_pairs as search_pairs_module  # noqa: E402
from assignment.engine import tvcs_iht as tvcs_iht_module  # noqa: E402
from assignment.engine.greedy import greedy_assignment  # noqa: E402
from assignment.engine.problem import AssignmentProblem  # noqa: E402
from benchmarks.instances import make_problem as figure4_problem  # noqa: E402

logger = logging.getLogger("benchmarks.iht_loop")

#: The commit whose ``tvcs_iht.py`` still holds the engine's own loop.
OLD_COMMIT = "2a6314a11e98c2dbcff78701c6664a03a79ec81b"


# -- the fixed problems ------------------------------------------------------------------------


def skill_problem(seed: int, n: int, m: int, *, n_labels=2, eligible=False, ratio=0.1, prior=None):
    """Skill x difficulty quality (greedy is not at the upper bound, so the steps run)."""
    rng = np.random.default_rng([seed, n, m, n_labels])
    quality = 0.5 + 0.45 * np.outer(rng.uniform(0, 1, n), rng.uniform(0.2, 1, m))
    if n_labels > 2:
        quality = 0.25 + 0.7 * np.outer(rng.uniform(0, 1, n), rng.uniform(0.2, 1, m))
    per_task, per_worker = max(1, round(ratio * n)), max(1, round(ratio * m))
    return AssignmentProblem(
        quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=int(0.8 * min(m * per_task, n * per_worker)),
        eligible=rng.random((n, m)) < 0.7 if eligible else None,
        prior=prior,
        n_labels=n_labels,
    )


def cases():
    """``(name, problem, options, max_search_pairs or None)``; the last forces candidate pairs."""
    search = {"bound_gap": 0.0, "max_iter": 20, "eval_every": 3, "patience": 2}
    long = {"bound_gap": 0.0, "max_iter": 25, "eval_every": 4, "patience": 100}
    prior = np.random.default_rng(7).uniform(0.2, 0.8, 120)
    return [
        ("binary", skill_problem(0, 30, 120), search, None),
        ("binary, no patience stop", skill_problem(1, 30, 120), long, None),
        ("binary, eval_every 1", skill_problem(2, 30, 120), search | {"eval_every": 1}, None),
        ("binary, eligibility mask", skill_problem(3, 30, 120, eligible=True), long, None),
        ("binary, candidate pairs", skill_problem(4, 30, 120), long, 1200),
        (
            "binary, candidates and mask",
            skill_problem(5, 30, 120, eligible=True),
            search | {"patience": 4},
            1200,
        ),
        ("binary, per-task prior", skill_problem(6, 30, 120, prior=prior), long, None),
        ("binary, prior, patience 2", skill_problem(6, 30, 120, prior=prior), search, None),
        ("binary, no final pass", skill_problem(7, 30, 120), long | {"refine": False}, None),
        ("binary, no rounds", skill_problem(8, 30, 120), search | {"refine_rounds": 0}, None),
        ("binary, step 3", skill_problem(9, 30, 120), long | {"step": 3.0}, None),
        ("binary, max_iter 0", skill_problem(10, 30, 120), long | {"max_iter": 0}, None),
        ("binary, 25 workers per task", skill_problem(11, 60, 80, ratio=0.42), search, None),
        ("Figure 4, bound gap default", figure4_problem(30, 120, 0.1, 0), {}, None),
        ("Figure 4, bound gap 0", figure4_problem(30, 120, 0.1, 0), long, None),
        ("K=3", skill_problem(20, 30, 120, n_labels=3), search, None),
        ("K=3, no patience stop", skill_problem(21, 30, 120, n_labels=3), long, None),
        (
            "K=3, eligibility mask",
            skill_problem(22, 30, 120, n_labels=3, eligible=True),
            long,
            None,
        ),
        ("K=3, candidate pairs", skill_problem(23, 30, 120, n_labels=3), long, 1200),
        ("K=3, step 3", skill_problem(25, 30, 120, n_labels=3), long | {"step": 3.0}, None),
        (
            "K=4, candidates and mask",
            skill_problem(24, 30, 120, n_labels=4, eligible=True),
            search,
            1200,
        ),
    ]


def run_case(module, problem, options, max_search_pairs, seed: int) -> dict:
    """One tvcs-iht run, reduced to what must not change."""
    saved = search_pairs_module.MAX_SEARCH_PAIRS
    if max_search_pairs is not None:
        search_pairs_module.MAX_SEARCH_PAIRS = max_search_pairs
    reports = []
    try:
        out = module.tvcs_iht(
            problem,
            rng=np.random.default_rng(seed),
            progress=lambda fraction, message: reports.append([fraction.hex(), message]),
            **options,
        )
    finally:
        search_pairs_module.MAX_SEARCH_PAIRS = saved
    return {
        "assignment_sha256": hashlib.sha256(np.packbits(out.assignment).tobytes()).hexdigest(),
        "pairs": int(out.assignment.sum()),
        "expected_accuracy": float(out.details["accuracy"]).hex(),
        "start_accuracy": float(out.details["start_accuracy"]).hex(),
        "iterations": int(out.iterations),
        "history": [[int(t), float(a).hex()] for t, a in out.history],
        "message": out.message,
        "progress": reports,
    }


def record_all(seeds=(0, 1)) -> dict:
    results = {}
    for name, problem, options, max_search_pairs in cases():
        for seed in seeds:
            results[f"{name}, seed {seed}"] = run_case(
                tvcs_iht_module, problem, options, max_search_pairs, seed
            )
    return results


def differences(expected: dict, got: dict) -> list[str]:
    lines = []
    for key in sorted(set(expected) | set(got)):
        if key not in expected or key not in got:
            lines.append(f"{key}: only in {'the record' if key in expected else 'this run'}")
            continue
        for field, value in expected[key].items():
            if got[key].get(field) != value:
                lines.append(f"{key}: {field} differs: {value!r} != {got[key].get(field)!r}")
    return lines


# -- speed: the old loop against the current one -----------------------------------------------


def old_module(rev: str):
    """``assignment/engine/tvcs_iht.py`` at ``rev``, imported as a temporary module."""
    source = subprocess.run(
        ["git", "show", f"{rev}:assignment/engine/tvcs_iht.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # greedy's _accuracy became _problem_accuracy.accuracy_of (issue 14): the same numbers
    source = source.replace(
        "from assignment.engine.greedy import _accuracy as exact_accuracy",
        "from assignment.engine._problem_accuracy import accuracy_of as exact_accuracy",
    )
    path = Path(tempfile.mkdtemp()) / "old_tvcs_iht.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_tvcs_iht", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def steps_once(module, problem, start, start_acc, options, seed):
    t0 = time.perf_counter()
    out = module._steps(
        problem,
        start,
        start_acc,
        rng=np.random.default_rng(seed),
        options=options,
        progress=lambda fraction, message: None,
        deadline=None,
    )
    return time.perf_counter() - t0, out


def same_steps(a, b) -> bool:
    # The new steps also return their status and searched pairs before the message.
    best_a, acc_a, t_a, history_a, *_, message_a = a
    best_b, acc_b, t_b, history_b, *_, message_b = b
    return (
        np.array_equal(best_a, best_b)
        and acc_a == acc_b
        and t_a == t_b
        and [(int(t), float(v)) for t, v in history_a] == [(int(t), float(v)) for t, v in history_b]
        and message_a == message_b
    )


def speed_row(old, size: tuple[int, int], options: dict, repeats: int, seed: int) -> dict:
    n, m = size
    problem = figure4_problem(n, m, 0.1, seed)
    greedy = greedy_assignment(problem)
    start, start_acc = greedy.assignment, greedy.details["accuracy"]
    times = {"old": [], "new": []}
    outs = {}
    steps_once(tvcs_iht_module, problem, start, start_acc, options, seed)  # compile, warm
    for _ in range(repeats):
        for label, module in (("old", old), ("new", tvcs_iht_module)):
            seconds, outs[label] = steps_once(module, problem, start, start_acc, options, seed)
            times[label].append(seconds)
    old_s, new_s = statistics.median(times["old"]), statistics.median(times["new"])
    return {
        "size": f"{n}x{m}",
        "iterations": outs["new"][2],
        "old": old_s,
        "new": new_s,
        "ratio": new_s / old_s,
        "identical": same_steps(outs["old"], outs["new"]),
        "message": outs["new"][-1],
    }


def speed(args) -> int:
    old = old_module(args.old)
    options = dict(tvcs_iht_module.tvcs_iht.__kwdefaults__)
    options.update(max_iter=args.iterations, eval_every=args.eval_every, patience=10_000)
    rows = []
    for size in args.sizes:
        n, m = (int(v) for v in size.split("x"))
        rows.append(speed_row(old, (n, m), options, args.repeats, args.seed))
        logger.info("%s", rows[-1])
    lines = [
        "# tvcs-iht's step loop: the engine's own (old) against projections.solvers (new)",
        "",
        f"- command: `python benchmarks/iht_loop.py speed {' '.join(sys.argv[2:])}`",
        f"- date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
        f"- old: `assignment/engine/tvcs_iht.py` at {args.old[:12]}, from a temporary file",
        f"- python {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.platform()}, {platform.processor() or 'cpu'}",
        f"- `_steps` on benchmarks/figure4.py's instance (ratio 0.1, seed {args.seed}) from "
        f"greedy's start; {args.iterations} steps, eval_every {args.eval_every}, no patience "
        f"stop; old and new interleaved, {args.repeats} runs each after one warm-up run; "
        "median seconds",
        "",
        "| size | steps | old s | new s | new / old | identical result | message |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['size']} | {row['iterations']} | {row['old']:.3f} | {row['new']:.3f} | "
            f"{row['ratio']:.3f} | {'yes' if row['identical'] else 'NO'} | {row['message']} |"
        )
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    sys.stdout.write(text)
    return 0 if all(row["identical"] for row in rows) else 1


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("projections").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("record", "check"):
        sub.add_parser(name).add_argument("file")
    fast = sub.add_parser("speed")
    fast.add_argument("--old", default=OLD_COMMIT)
    fast.add_argument("--sizes", nargs="+", default=["100x1000", "300x5000"])
    fast.add_argument("--iterations", type=int, default=30)
    fast.add_argument("--eval-every", type=int, default=5)
    fast.add_argument("--repeats", type=int, default=5)
    fast.add_argument("--seed", type=int, default=0)
    fast.add_argument("--out")
    args = parser.parse_args()
    if args.command == "speed":
        return speed(args)
    if args.command == "record":
        Path(args.file).write_text(json.dumps(record_all(), indent=1) + "\n")
        logger.info("recorded %s", args.file)
        return 0
    lines = differences(json.loads(Path(args.file).read_text()), record_all())
    for line in lines:
        logger.info("%s", line)
    logger.info("%s", "identical" if not lines else f"{len(lines)} difference(s)")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
