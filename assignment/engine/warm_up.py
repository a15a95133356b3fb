"""Compile the numeric kernels before the first user run.

The exact projection, the min-cost-flow refinement, greedy's move scores and the other hot loops
are numba functions compiled on first call (tens of seconds on a fresh install, cached on disk
afterwards: ``__pycache__`` beside the sources, or ``NUMBA_CACHE_DIR``). :func:`warm_up` solves
one small problem with every registered method, which compiles (or loads from the cache) every
kernel a run uses, so that the first run of a user computes at the speed of the later ones.
A Celery worker runs ``python -m assignment.engine.warm_up`` when it starts, before its pool
starts, which fills the disk cache; each pool process then calls :func:`warm_up` itself before
it takes a run, which loads the kernels from that cache (about a second), so that not even its
first run loads them. The docker image runs it at build.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from assignment.engine._sampled_votes import clip_to_support
from assignment.engine.problem import AssignmentProblem
from assignment.engine.rounds import next_round
from assignment.engine.search_pairs import SearchPairs
from assignment.engine.solve import METHODS, solve
from assignment.engine.surrogate import Surrogate
from projections.tvcs import project

#: Size of the warm-up problem: large enough to reach every branch a real run takes (the
#: refinement, the local search, the sampled surrogate), small enough to solve in milliseconds
#: once compiled.
N_WORKERS, N_TASKS = 12, 80


@dataclass(frozen=True)
class WarmUpResult:
    """What :func:`warm_up` did.

    Attributes
    ----------
    seconds : dict of str to float
        Wall-clock seconds per method (compile or cache-load time plus a tiny solve), and of
        ``"warm-started projection"``.
    """

    seconds: dict[str, float]

    @property
    def total_seconds(self) -> float:
        return float(sum(self.seconds.values()))


def warm_up(*, methods=METHODS) -> WarmUpResult:
    """Solve a small fixed problem with every method, compiling every kernel on the way.

    Parameters
    ----------
    methods : sequence of str, default every registered method

    Returns
    -------
    WarmUpResult
    """
    rng = np.random.default_rng(0)
    quality = rng.uniform(0.55, 0.95, (N_WORKERS, N_TASKS))
    problem = _problem(quality)
    seconds = {}
    for method in methods:
        started = time.perf_counter()
        solve(problem, method=method, seed=0)
        seconds[method] = time.perf_counter() - started
    if "random" in methods:  # (its augmenting paths run only when filling falls short)
        started = time.perf_counter()
        _augment_once()
        seconds["random"] += time.perf_counter() - started
    started = time.perf_counter()
    _project_twice(problem, rng)
    seconds["warm-started projection"] = time.perf_counter() - started
    if "tvcs-iht" in methods:
        started = time.perf_counter()
        _step_over_candidates(problem, rng)
        seconds["step over candidate pairs"] = time.perf_counter() - started
    started = time.perf_counter()
    _solve_other_models(quality, methods, rng)
    seconds["three labels and confusion matrices"] = time.perf_counter() - started
    started = time.perf_counter()
    _rounds(quality, rng)
    seconds["next rounds"] = time.perf_counter() - started
    return WarmUpResult(seconds=seconds)


def _solve_other_models(quality: np.ndarray, methods, rng: np.random.Generator) -> None:
    """Every method on the same crowd with three labels, and under Dawid–Skene confusion
    matrices with two and three labels: the multi-class and confusion kernels (a first such
    run compiled for 11 to 24 s before they were warmed up here)."""
    problems = [_problem(quality, n_labels=3)]
    n = quality.shape[0]
    for k in (2, 3):
        confusion = rng.dirichlet(np.ones(k), size=(n, k)) + 3.0 * np.eye(k)
        confusion /= confusion.sum(axis=2, keepdims=True)
        problems.append(_problem(quality, n_labels=k, confusion=confusion))
    for problem in problems:
        for method in methods:
            solve(problem, method=method, seed=0)


def _rounds(quality: np.ndarray, rng: np.random.Generator) -> None:
    """A next round after one answer per task, binary and over three labels, planned for
    two rounds and taken in layers: the posterior and layer kernels of a round."""
    n, m = quality.shape
    workers = rng.integers(0, n, m)
    for k in (2, 3):
        nxt = next_round(
            _problem(quality, n_labels=k),
            worker_index=workers,
            task_index=np.arange(m),
            label=rng.integers(0, k, m),
        )
        nxt.solve_layered(lambda problem: solve(problem, method="greedy", seed=0), rounds_left=2)


def _problem(quality: np.ndarray, **model) -> AssignmentProblem:
    """The warm-up's problem on ``quality``: 3 workers a task, two answers a task in all."""
    n, m = quality.shape
    return AssignmentProblem(
        quality, max_workers_per_task=3, max_tasks_per_worker=2 * m // n, budget=2 * m, **model
    )


def _project_twice(problem: AssignmentProblem, rng: np.random.Generator) -> None:
    """A projection warm-started from one of a nearby vector: the kernels of that branch,
    which tvcs-iht takes when its iterates move little (whether the tiny problem's own
    iterates do is a matter of chance)."""
    values = np.abs(2.0 * problem.quality - 1.0)
    first = project(values, problem.structure)
    nearby = values * rng.uniform(1.0 - 1e-9, 1.0 + 1e-9, values.shape)
    project(nearby, problem.structure, warm_start=first.warm_start)


def _augment_once() -> None:
    """The random baseline's augmenting path on two workers and two tasks: worker 1 has room,
    its one pair's task is full, and the path moves worker 0 to the free task."""
    from assignment.engine._random_fill import augment

    workers, tasks = np.array([0, 0, 1]), np.array([0, 1, 0])
    taken = np.array([True, False, False])
    by_task, task_start = np.array([0, 2, 1]), np.array([0, 2, 3])
    augment(workers, tasks, by_task, task_start, taken, np.array([0, 1]), np.array([0, 1]), 1)


def _step_over_candidates(problem: AssignmentProblem, rng: np.random.Generator) -> None:
    """A tvcs-iht step and projection over a candidate set of pairs, the branch a problem
    above :data:`~assignment.engine.search_pairs.MAX_SEARCH_PAIRS` pairs takes."""
    pairs = SearchPairs(problem, np.arange(0, problem.n_workers * problem.n_tasks, 2))
    x = np.where(rng.random(pairs.size) < 0.2, 1.0, 0.0)
    _, y, v = Surrogate(problem, pairs=pairs).step(x, rng, 1.0)
    clip_to_support(y, project(v, pairs.structure).support)


if __name__ == "__main__":  # python -m assignment.engine.warm_up: fills numba's disk cache
    warm_up()
