"""warm_up: after it, a run of any method on any problem compiles no numeric kernel."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from assignment.engine import METHODS
from assignment.engine.warm_up import warm_up

# In a fresh interpreter: nothing compiled in this test process can hide a kernel that the
# warm-up misses. Every numba dispatcher of the engine and of projections is listed with the
# signatures it has compiled (or loaded from the cache) after the warm-up, and again after runs
# of every method on problems of other sizes and shapes (arrays of caps and priors, an
# eligibility mask, a budget above what the caps allow; three labels, Dawid-Skene confusion
# matrices; next rounds of each taken in layers).
PROBE = textwrap.dedent(
    """
    import importlib, json, pkgutil
    import numpy as np
    from numba.core.registry import CPUDispatcher
    import assignment.engine, projections
    from assignment.engine import METHODS, AssignmentProblem, solve
    from assignment.engine.warm_up import warm_up

    def compiled():
        found = {}
        for package in (projections, assignment.engine):
            for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
                module = importlib.import_module(info.name)
                for name, obj in vars(module).items():
                    if isinstance(obj, CPUDispatcher):
                        found[f"{obj.py_func.__module__}.{name}"] = sorted(map(str, obj.signatures))
        return found

    warm_up()
    after_warm_up = compiled()
    rng = np.random.default_rng(5)
    for n, m in ((7, 23), (30, 200)):
        problems = [
            AssignmentProblem(rng.uniform(0.4, 1.0, (n, m)), max_workers_per_task=2,
                              max_tasks_per_worker=m, budget=n * m),
            AssignmentProblem(rng.uniform(0.5, 0.9, (n, m)),
                              max_workers_per_task=rng.integers(1, 5, m),
                              max_tasks_per_worker=rng.integers(1, m // 2, n),
                              budget=m, prior=rng.uniform(0.2, 0.8, m),
                              eligible=rng.random((n, m)) < 0.7),
        ]
        # three labels, and Dawid-Skene confusion matrices over two and three labels
        quality, caps = problems[1].quality, {"max_workers_per_task": 3,
                                              "max_tasks_per_worker": m // 2, "budget": m}
        problems.append(AssignmentProblem(quality, n_labels=3, **caps))
        for k in (2, 3):
            confusion = rng.dirichlet(np.ones(k), size=(n, k)) + 2.0 * np.eye(k)
            confusion /= confusion.sum(axis=2, keepdims=True)
            problems.append(AssignmentProblem(quality, n_labels=k, confusion=confusion, **caps))
        for problem in problems:
            for method in METHODS:
                solve(problem, method=method, seed=1)
        # a next round of each, planned for three rounds and taken in layers
        from assignment.engine.rounds import next_round
        for problem in problems:
            k = problem.n_labels
            nxt = next_round(problem, worker_index=rng.integers(0, n, m), task_index=np.arange(m),
                             label=rng.integers(0, k, m))
            for method in METHODS:
                nxt.solve_layered(lambda p: solve(p, method=method, seed=1), rounds_left=3)
    # quality by category, and tvcs-iht's steps over candidate pairs (a large problem's)
    import assignment.engine.search_pairs as search_pairs
    search_pairs.MAX_SEARCH_PAIRS = 300
    problem = AssignmentProblem(
        assignment.engine.QualityByCategory(rng.uniform(0.5, 0.9, (20, 3)), rng.integers(0, 3, 90)),
        max_workers_per_task=3, max_tasks_per_worker=10, budget=150,
    )
    search = {"bound_gap": 0, "search_when_spent": True}
    for method in METHODS:
        solve(problem, method=method, seed=1, **(search if method == "tvcs-iht" else {}))
    print(json.dumps({"after_warm_up": after_warm_up, "after_runs": compiled()}))
    """
)


@pytest.mark.slow
def test_after_warm_up_no_run_compiles_a_kernel():
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=600
    )
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    assert any(found["after_warm_up"].values())  # the probe does see compiled kernels
    new = {
        name: sorted(set(signatures) - set(found["after_warm_up"].get(name, [])))
        for name, signatures in found["after_runs"].items()
    }
    assert {name: added for name, added in new.items() if added} == {}


def test_warm_up_solves_with_every_method_and_says_how_long_each_took():
    result = warm_up()
    assert set(result.seconds) == {
        *METHODS,
        "warm-started projection",
        "step over candidate pairs",
        "three labels and confusion matrices",
        "next rounds",
    }
    assert all(seconds >= 0 for seconds in result.seconds.values())
    assert result.total_seconds == pytest.approx(sum(result.seconds.values()))
