"""K-class greedy before and after its numba moves (issue 12), beside binary greedy, in one run.

What it measures
----------------
The instances of ``benchmarks/multiclass_solvers.py`` (``--workers`` x ``--tasks``, cap ratio
0.03, budget 0.8 of what the caps allow, qualities U[0.5, 0.9], uniform priors or
``--prior dirichlet``), the same qualities for every ``K``. For each of ``--seeds`` instances
and each ``K`` of ``--labels`` (default 3 and 4) it runs, interleaved (the order of old and new
alternates from seed to seed),

* **new**: today's :class:`~assignment.engine._greedy_multiclass.MulticlassGreedyState`,
* **old**: the state of commit ``--old`` (default 2a6314a, before the numba moves), read with
  ``git show`` into a temporary module outside the repository,

and, once per instance, **binary** greedy at ``K = 2`` on the same qualities and caps. With
``--categories C`` the instances are by category instead (a worker x category table U[0.5, 0.9]
and each task's category uniform in ``[0, C)``, as ``benchmarks/scale.py`` builds them), and
**new, no memo** (the new state with its memo of best moves per category switched off) joins
in; ``--skip-old`` leaves the old state out (hours on large problems). Each run
is the state's construction, the greedy loop (:func:`~assignment.engine.greedy.fill`) and its
pairs: ``greedy_pairs`` without its final accuracy. Old and new must return the same pairs and
the same per-task accuracies, bit for bit (the script stops otherwise). One untimed run of each
first (numba compiles or loads its kernels). Then, on the first instance, one more run of each
under :mod:`tracemalloc` for the peak of memory allocated during the run (numpy arrays
included; the problem itself is allocated before).

Times are means over the seeds; the ratios are of those means. Run from the repository root::

    python benchmarks/multiclass_greedy.py
    python benchmarks/multiclass_greedy.py --workers 200 --tasks 10000 --seeds 1
    python benchmarks/multiclass_greedy.py --workers 1000 --tasks 20000 --categories 10 \
        --ratio 0.005 --labels 3 --seeds 1 --skip-old
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing the project
    sys.path.insert(0, str(ROOT))

from assignment.engine._greedy_multiclass import MulticlassGreedyState  # noqa: E402
from assignment.engine.greedy import GreedyState, fill  # noqa: E402
from assignment.engine.problem import AssignmentProblem, QualityByCategory  # noqa: E402
from benchmarks.multiclass_solvers import instance  # noqa: E402

OLD_COMMIT = "2a6314a"
OLD_PATH = "assignment/engine/_greedy_multiclass.py"


def old_state_class(commit: str, folder: Path):
    """``MulticlassGreedyState`` as it was at ``commit``, imported from a copy in ``folder``."""
    source = subprocess.run(
        ["git", "show", f"{commit}:{OLD_PATH}"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    path = folder / "old_greedy_multiclass.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("old_greedy_multiclass", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MulticlassGreedyState


class NoMemoState(MulticlassGreedyState):
    """The new state with its memo of best moves off: every task evaluated by the kernel."""

    def __init__(self, problem) -> None:
        super().__init__(problem)
        self._memo_on = False


def problem_of(args, seed: int, n_labels: int) -> AssignmentProblem:
    """``multiclass_solvers``'s instance, or by category with ``--categories``."""
    if args.categories is None:
        return instance(args, seed, n_labels)
    rng = np.random.default_rng([seed, args.workers, args.tasks, args.categories])
    n, m = args.workers, args.tasks
    quality = QualityByCategory(
        rng.uniform(args.low, args.high, (n, args.categories)),
        rng.integers(0, args.categories, m),
    )
    per_task, per_worker = max(1, round(args.ratio * n)), max(1, round(args.ratio * m))
    return AssignmentProblem(
        quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=int(args.budget * min(per_task * m, per_worker * n)),
        n_labels=n_labels,
    )


def run(state_class, problem):
    """Seconds of one greedy run with ``state_class``, its pairs and per-task accuracies."""
    started = time.perf_counter()
    state = state_class(problem)
    fill(state)
    pairs = state.pairs()
    return time.perf_counter() - started, pairs, state.acc


def peak_bytes(state_class, problem) -> int:
    """Peak of memory allocated during one run (tracemalloc)."""
    tracemalloc.start()
    try:
        run(state_class, problem)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def timed_runs(args, states) -> dict:
    """Seconds of every (K, method) over the seeds: the K-class states interleaved (their order
    rotates from seed to seed), each checked against the new one."""
    seconds: dict = {}
    for seed in range(args.seeds):
        seconds.setdefault((2, "binary"), []).append(run(GreedyState, problem_of(args, seed, 2))[0])
        for n_labels in args.labels:
            problem = problem_of(args, seed, n_labels)
            names = list(states)
            order = names[seed % len(names) :] + names[: seed % len(names)]
            results = {method: run(states[method], problem) for method in order}
            for method in order:
                for part in range(2):
                    np.testing.assert_array_equal(results[method][1][part], results["new"][1][part])
                np.testing.assert_array_equal(results[method][2], results["new"][2])
                seconds.setdefault((n_labels, method), []).append(results[method][0])
    return {key: float(np.mean(values)) for key, values in seconds.items()}


def measure(args) -> tuple[dict, dict]:
    """Mean seconds and tracemalloc peaks (bytes) by (K, method)."""
    with tempfile.TemporaryDirectory() as folder:
        states = {"new": MulticlassGreedyState}
        if args.categories is not None:
            states["new, no memo"] = NoMemoState
        if not args.skip_old:
            states["old"] = old_state_class(args.old, Path(folder))
        warm = argparse.Namespace(**{**vars(args), "workers": 20, "tasks": 50})
        run(GreedyState, problem_of(warm, 0, 2))
        for n_labels in args.labels:
            for state_class in states.values():
                run(state_class, problem_of(warm, 0, n_labels))
        seconds = timed_runs(args, states)
        peaks = {(2, "binary"): peak_bytes(GreedyState, problem_of(args, 0, 2))}
        for n_labels in args.labels:
            for method, state_class in states.items():
                peaks[n_labels, method] = peak_bytes(state_class, problem_of(args, 0, n_labels))
    return seconds, peaks


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--categories", type=int, default=None)
    parser.add_argument("--ratio", type=float, default=0.03)
    parser.add_argument("--labels", type=int, nargs="+", default=[3, 4])
    parser.add_argument("--prior", choices=["uniform", "dirichlet"], default="uniform")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--old", default=OLD_COMMIT)
    parser.add_argument("--skip-old", action="store_true")
    args = parser.parse_args(argv)
    args.budget, args.low, args.high = 0.8, 0.5, 0.9
    seconds, peaks = measure(args)
    first = problem_of(args, 0, 2)
    shape = f"{args.workers} workers x {args.tasks:,} tasks"
    if args.categories is not None:
        shape += f" x {args.categories} categories (uniform priors)"
    else:
        shape += f", {args.prior} priors"
    print(f"{shape}; {first.max_workers_per_task[0]} per task, {first.max_tasks_per_worker[0]} "
          f"per worker, budget {first.budget:,}; mean over {args.seeds} instance(s)\n")  # fmt: skip
    print("| K | greedy | time | / binary | / new | peak memory |")
    print("|---:|---|---:|---:|---:|---:|")
    binary = seconds[2, "binary"]
    print(f"| 2 | binary | {binary:,.3f} s | 1.0 | | {peaks[2, 'binary'] / 2**20:,.1f} MiB |")
    for (n_labels, method), t in seconds.items():
        if n_labels == 2:
            continue
        new = seconds[n_labels, "new"]
        print(f"| {n_labels} | {method} | {t:,.3f} s | {t / binary:,.1f} | {t / new:,.1f} | "
              f"{peaks[n_labels, method] / 2**20:,.1f} MiB |")  # fmt: skip


if __name__ == "__main__":
    main()
