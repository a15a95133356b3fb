"""Warm-started against cold exact projections inside IHT (a benchmark, not a test).

What it measures
----------------
IHT projects a slowly moving sequence of vectors. This records the sequence that
``tvcs-iht`` (:mod:`assignment.engine.tvcs_iht`) actually projects on a Figure-4 instance (Q
uniform in [0.5, 0.9], prior 0.5, ratio r), then times, in one run, projecting every vector of
the sequence cold and warm (``warm_start=`` the previous projection's state), and checks that
both give the same objective. It reports the total seconds of each and the ratio cold / warm.

Run from the repository root::

    python benchmarks/warm_start.py                       # 100x1000 and 200x10000, r = 0.03
    python benchmarks/warm_start.py --sizes 100x1000 --iterations 20
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assignment.engine.problem import AssignmentProblem
from assignment.engine.surrogate import Surrogate
from assignment.engine.tvcs_iht import _box_gain
from projections.tvcs import project


def figure4_problem(n: int, m: int, ratio: float, seed: int) -> AssignmentProblem:
    q = np.random.default_rng([seed, n, m]).uniform(0.5, 0.9, (n, m))
    per_task = max(1, round(ratio * n))
    per_worker = max(1, round(ratio * m))
    budget = int(0.8 * min(m * per_task, n * per_worker))
    return AssignmentProblem(
        q, max_workers_per_task=per_task, max_tasks_per_worker=per_worker, budget=budget
    )


def iht_inputs(problem: AssignmentProblem, iterations: int, seed: int) -> list[np.ndarray]:
    """The vectors tvcs-iht projects (its default step, batch and temperature)."""
    rng = np.random.default_rng(seed)
    oracle = Surrogate(problem)
    first = np.sqrt(problem.mask(np.abs(2.0 * problem.quality - 1.0)))
    res = project(first, problem.structure)
    x = res.support.astype(np.float64)
    inputs = [first]
    for t in range(1, iterations + 1):
        _, grad = oracle.value_and_gradient(x, rng)
        y = x + 5.0 / np.sqrt(1.0 + t / 10.0) * grad
        v = np.sqrt(problem.mask(_box_gain(y)))
        inputs.append(v)
        res = project(v, problem.structure, warm_start=res.warm_start)
        x = np.where(res.support, np.clip(y, 0.0, 1.0), 0.0)
    return inputs


def timed(inputs, structure, *, warm: bool):
    state, objectives, start = None, [], time.perf_counter()
    for v in inputs:
        res = project(v, structure, warm_start=state if warm else None)
        state = res.warm_start
        objectives.append(res.objective)
    return time.perf_counter() - start, np.array(objectives)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100x1000,200x10000")
    parser.add_argument("--ratio", type=float, default=0.03)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print("# Warm-started exact projections inside tvcs-iht\n")
    print(f"- command: `python benchmarks/warm_start.py {' '.join(argv or sys.argv[1:])}`")
    print(f"- python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}\n")
    print("| size | ratio | projections | cold s | warm s | cold / warm | same objectives |")
    print("|---|---:|---:|---:|---:|---:|---|")
    warm_up = figure4_problem(10, 50, 0.1, 0)
    timed(iht_inputs(warm_up, 3, 0), warm_up.structure, warm=True)
    for size in args.sizes.split(","):
        n, m = (int(x) for x in size.split("x"))
        problem = figure4_problem(n, m, args.ratio, args.seed)
        inputs = iht_inputs(problem, args.iterations, args.seed)
        cold_s, cold_obj = timed(inputs, problem.structure, warm=False)
        warm_s, warm_obj = timed(inputs, problem.structure, warm=True)
        same = bool(np.allclose(cold_obj, warm_obj, rtol=1e-9, atol=0))
        print(
            f"| {size} | {args.ratio} | {len(inputs)} | {cold_s:.3f} | {warm_s:.3f} | "
            f"{cold_s / warm_s:.2f} | {'yes' if same else 'NO'} |"
        )


if __name__ == "__main__":
    main()
