"""Warm-started against cold exact projections inside IHT (a benchmark, not a test).

What it measures
----------------
IHT projects a sequence of vectors, one per iteration. For two IHT runs this records the
sequence actually projected, then times, in one run, projecting every vector of the sequence
cold and warm (``warm_start=`` the previous projection's state), and checks that both give the
same objectives. It reports the total seconds of each (the best of ``--repeats`` timings of
the whole sequence) and the ratio cold / warm.

* ``tvcs-iht``: the sequence that :mod:`assignment.engine.tvcs_iht` projects on a Figure-4
  instance (Q uniform in [0.5, 0.9], prior 0.5, ratio r). Its stochastic gradient steps move
  the iterate a lot between iterations.
* ``least squares``: :func:`projections.solvers.iht` (constant ``--step``) on a planted
  sparse linear regression ``y = <A_i, w*>`` whose ``n_rows x n_cols`` model ``w*`` satisfies
  the caps (row cap 4, column cap 1, total ``n_rows // 4`` entries; ``A`` standard Gaussian,
  ``--samples`` samples, the loss averaged over them). Its iterates converge (the table gives
  how far the last projected vector moved), so consecutive projections differ less and less;
  with this few samples they need not converge to ``w*`` (the model error is shown too).

Run from the repository root::

    python benchmarks/warm_start.py                       # both, default sizes
    python benchmarks/warm_start.py --sizes 100x1000 --iterations 20 --ls-sizes 100x1000
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assignment.engine._sampled_votes import clip_to_support
from assignment.engine.problem import AssignmentProblem
from assignment.engine.surrogate import Surrogate
from projections import TVCSStructure
from projections.solvers import LeastSquares, iht, tvcs_projection
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
    x = res.support.reshape(-1).astype(np.float64)  # the oracle works on flat pairs
    inputs = [first]
    for t in range(1, iterations + 1):
        _, y, v = oracle.step(x, rng, 5.0 / np.sqrt(1.0 + t / 10.0))
        inputs.append(v.reshape(problem.shape))
        res = project(v, problem.structure, warm_start=res.warm_start)
        x = clip_to_support(y, res.support)
    return inputs


def least_squares_inputs(n: int, m: int, samples: int, step: float, iterations: int, seed: int):
    """The vectors :func:`projections.solvers.iht` projects on a planted regression."""
    rng = np.random.default_rng([seed, n, m])
    k = max(1, n // 4)
    structure = TVCSStructure.from_matrix((n, m), max_per_row=4, max_per_col=1, total=k)
    w_true = np.zeros((n, m))
    rows, cols = rng.permutation(n)[:k], rng.permutation(m)[:k]  # distinct rows and columns
    w_true[rows, cols] = rng.choice([-1.0, 1.0], k) * rng.uniform(1.0, 2.0, k)
    A = rng.standard_normal((samples, n, m))
    loss = LeastSquares(A, np.einsum("kij,ij->k", A, w_true))
    projection = tvcs_projection(structure)
    inputs = []

    def recording(v, warm_start=None):
        inputs.append(np.array(v, copy=True))
        return projection(v, warm_start=warm_start)

    result = iht(loss, recording, step=step, max_iter=iterations, tol=0.0)
    error = np.linalg.norm(result.solution - w_true) / np.linalg.norm(w_true)
    change = np.linalg.norm(inputs[-1] - inputs[-2]) / np.linalg.norm(inputs[-1])
    note = f"last input moved by {change:.1e} (relative); model error {error:.1e}"
    return inputs, structure, note


def timed(inputs, structure, *, warm: bool):
    state, objectives, start = None, [], time.perf_counter()
    for v in inputs:
        res = project(v, structure, warm_start=state if warm else None)
        state = res.warm_start
        objectives.append(res.objective)
    return time.perf_counter() - start, np.array(objectives)


def row(label, size, inputs, structure, note, repeats):
    cold = [timed(inputs, structure, warm=False) for _ in range(repeats)]
    warm = [timed(inputs, structure, warm=True) for _ in range(repeats)]
    cold_s, cold_obj = min(cold, key=lambda t: t[0])
    warm_s, warm_obj = min(warm, key=lambda t: t[0])
    same = bool(np.allclose(cold_obj, warm_obj, rtol=1e-9, atol=0))
    print(
        f"| {label} | {size} | {len(inputs)} | {cold_s:.3f} | {warm_s:.3f} | "
        f"{cold_s / warm_s:.2f} | {'yes' if same else 'NO'} | {note} |"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100x1000,200x10000", help="tvcs-iht sizes")
    parser.add_argument("--ratio", type=float, default=0.03)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument(
        "--ls-sizes", default="100x1000,150x1500", help="least-squares sizes ('' to skip)"
    )
    parser.add_argument("--samples", type=int, default=300, help="least-squares samples")
    parser.add_argument("--step", type=float, default=0.3, help="least-squares IHT step")
    parser.add_argument("--repeats", type=int, default=3, help="timings per sequence (best kept)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print("# Warm-started exact projections inside IHT\n")
    print(f"- command: `python benchmarks/warm_start.py {' '.join(argv or sys.argv[1:])}`")
    print(f"- python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}\n")
    print("| IHT | size | projections | cold s | warm s | cold / warm | same objectives | run |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    warm_up = figure4_problem(10, 50, 0.1, 0)
    timed(iht_inputs(warm_up, 3, 0), warm_up.structure, warm=True)
    for size in filter(None, args.sizes.split(",")):
        n, m = (int(x) for x in size.split("x"))
        problem = figure4_problem(n, m, args.ratio, args.seed)
        inputs = iht_inputs(problem, args.iterations, args.seed)
        row("tvcs-iht", size, inputs, problem.structure, f"ratio {args.ratio}", args.repeats)
    for size in filter(None, args.ls_sizes.split(",")):
        n, m = (int(x) for x in size.split("x"))
        inputs, structure, note = least_squares_inputs(
            n, m, args.samples, args.step, args.iterations, args.seed
        )
        note = f"{args.samples} samples, step {args.step:g}; {note}"
        row("least squares", size, inputs, structure, note, args.repeats)


if __name__ == "__main__":
    main()
