"""tvcs-iht's steps on projections.solvers.stochastic_iht take exactly the steps of the plain
loop they replaced (tests/assignment/engine/iht_reference.py): same supports bit for bit, same
accuracies, iterations and history, for two labels and three, with an eligibility mask, over
candidate pairs, stopped by patience (with and without a minimum improvement) or by
max_iter."""

from __future__ import annotations

import numpy as np
import pytest
from engine_problems import make_problem
from iht_reference import reference_steps

from assignment.engine import search_pairs as search_pairs_module
from assignment.engine.greedy import greedy_assignment
from assignment.engine.tvcs_iht import _steps

OPTIONS = {"step": 1.0, "batch_size": 4, "temperature": 0.5, "min_improvement": 0.0}


def skill_quality(seed, n=20, m=80):
    rng = np.random.default_rng(seed)
    return 0.45 + 0.5 * np.outer(rng.uniform(0, 1, n), rng.uniform(0.2, 1, m))


CASES = {
    "two labels, patience": ({}, {"max_iter": 20, "eval_every": 2, "patience": 2}),
    "two labels, min improvement": (  # stops at step 2 where 0 would take 6 and 7 steps
        {"r": 0.3},
        {"max_iter": 20, "eval_every": 1, "patience": 2, "min_improvement": 1e-3},
    ),
    "two labels, step 3": ({}, {"max_iter": 17, "eval_every": 3, "patience": 50, "step": 3.0}),
    "per-task prior": ({"prior": True}, {"max_iter": 16, "eval_every": 2, "patience": 3}),
    "mask": ({"eligible": True}, {"max_iter": 15, "eval_every": 4, "patience": 50}),
    "three labels": ({"n_labels": 3}, {"max_iter": 12, "eval_every": 1, "patience": 3}),
    "three labels, step 3": (
        {"n_labels": 3},
        {"max_iter": 12, "eval_every": 5, "patience": 50, "step": 3.0},
    ),
}


@pytest.mark.parametrize("candidates", [False, True], ids=["every pair", "candidate pairs"])
@pytest.mark.parametrize("case", CASES)
def test_the_steps_are_those_of_the_plain_loop_bit_for_bit(case, candidates, monkeypatch):
    if candidates:
        monkeypatch.setattr(search_pairs_module, "MAX_SEARCH_PAIRS", 600)  # of 1,600
    kind, options = CASES[case]
    options = OPTIONS | options
    for seed in range(2):
        rng = np.random.default_rng(seed)
        eligible, prior = rng.random((20, 80)) < 0.7, rng.uniform(0.2, 0.8, 80)
        problem = make_problem(
            quality=skill_quality(seed),
            r=kind.get("r", 0.15),
            eligible=eligible if kind.get("eligible") else None,
            prior=prior if kind.get("prior") else None,
            n_labels=kind.get("n_labels", 2),
        )
        output = greedy_assignment(problem)
        start, info = output.assignment, output.details
        best, best_acc, t, history, status, searched, _ = _steps(
            problem,
            start,
            info["accuracy"],
            rng=np.random.default_rng(seed),
            options=options,
            progress=None,
            deadline=None,
        )
        ref = reference_steps(
            problem, start, info["accuracy"], rng=np.random.default_rng(seed), options=options
        )

        np.testing.assert_array_equal(best, ref[0])
        assert (best_acc, t, history) == ref[1:4]
        assert status == {"patience": "no_improvement", "max_iter": "max_iter"}[ref[4]]
        assert (searched is not None) == candidates
