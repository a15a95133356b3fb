"""The loop the IHT-family solvers share (``projections/solvers/_loop.py``), run on a toy solver."""

from __future__ import annotations

import numpy as np
import pytest

from projections.solvers._common import Breakdown, Deadline, new_counters
from projections.solvers._loop import Steps, run


class Halving(Steps):
    """``w <- w / 2``; ``f(w) = ||w||^2``, evaluated every ``every`` iterations; converged once
    ``||w|| <= tol``; stalled after ``stall_after`` iterations; breaks down at ``explode_at``."""

    name = "halving"
    convergence = "||w|| <= tol"

    def __init__(self, *, tol=0.0, every=1, stall_after=None, explode_at=None):
        self.tol, self.every = tol, every
        self.stall_after, self.explode_at = stall_after, explode_at
        self.counters = new_counters()
        self.it = 0

    def initial_value(self, w, support):
        return float(w @ w)

    def advance(self, it, w, support):
        if it == self.explode_at:
            raise Breakdown("the toy exploded")
        self.it = it
        x = w / 2
        self.converged = bool(np.linalg.norm(x) <= self.tol)
        return x, x != 0

    def value(self, it, w, support):
        return float(w @ w) if it % self.every == 0 else None

    def stalled(self):
        if self.stall_after is not None and self.it >= self.stall_after:
            return "the toy stalled"
        return None

    def final_value(self, it, w, support):
        return float(w @ w)

    def describe(self):
        return "toy"

    def step_size(self):
        return 0.5


def run_toy(steps, *, max_iter=50, callback=None, w0=(8.0, 0.0)):
    return run(steps, np.array(w0), max_iter=max_iter, callback=callback, deadline=Deadline(None))


def test_the_loop_records_every_value_and_stops_when_the_solver_converges():
    result = run_toy(Halving(tol=1.0))

    assert result.status == "converged"
    assert result.converged
    assert result.iterations == 3  # 8 -> 4 -> 2 -> 1
    np.testing.assert_array_equal(result.history, [64.0, 16.0, 4.0, 1.0])
    np.testing.assert_array_equal(result.history_iterations, [0, 1, 2, 3])
    np.testing.assert_array_equal(result.solution, [1.0, 0.0])
    np.testing.assert_array_equal(result.support, [True, False])
    assert result.objective == 1.0
    assert result.step == 0.5
    assert result.message.endswith("(toy)")


def test_an_iterate_the_loop_did_not_evaluate_is_evaluated_once_the_run_stops():
    result = run_toy(Halving(every=3), max_iter=4)

    assert result.status == "max_iter"
    np.testing.assert_array_equal(result.history_iterations, [0, 3, 4])
    assert result.objective == result.history[-1] == 64.0 / 4**4


def test_the_callback_is_asked_first_and_sees_none_for_an_unevaluated_iterate():
    calls = []

    def callback(it, w, value):
        calls.append((it, value))
        return it == 2

    result = run_toy(Halving(tol=100.0, every=2), callback=callback)

    assert calls == [(1, None)]  # converged at iteration 1, but the callback came first
    assert result.status == "converged"
    result = run_toy(Halving(every=2), callback=callback)
    assert calls[1:] == [(1, None), (2, 4.0)]
    assert result.status == "callback"
    assert result.iterations == 2


def test_no_improvement_stops_before_max_iter_but_is_not_the_reason_at_the_last_iteration():
    stalled = run_toy(Halving(stall_after=2), max_iter=5)
    at_the_end = run_toy(Halving(stall_after=5), max_iter=5)

    assert stalled.status == "no_improvement"
    assert stalled.iterations == 2
    assert at_the_end.status == "max_iter"
    assert at_the_end.iterations == 5


def test_a_breakdown_returns_the_last_completed_iterate():
    result = run_toy(Halving(explode_at=3))

    assert result.status == "breakdown"
    assert not result.converged
    assert result.iterations == 2
    np.testing.assert_array_equal(result.solution, [2.0, 0.0])
    np.testing.assert_array_equal(result.history_iterations, [0, 1, 2])
    assert "iteration 3" in result.message


@pytest.mark.parametrize("max_iter", [0, 1])
def test_a_run_of_at_most_one_iteration_still_has_its_starting_value(max_iter):
    result = run_toy(Halving(), max_iter=max_iter)

    assert result.history[0] == 64.0
    assert result.iterations == max_iter


class Quiet(Halving):
    """The toy with its own messages, no settings in them and a callback without values."""

    callback_gets_value = False
    max_iter_message = "ran all {max_iter}"
    breakdown_message = "failed at {it}: {exc}"

    def describe(self):
        return ""


def test_a_solver_may_keep_its_own_messages_and_withhold_values_from_the_callback():
    seen = []
    ran = run_toy(Quiet(), max_iter=3, callback=lambda it, w, value: seen.append(value))
    failed = run_toy(Quiet(explode_at=2))

    assert seen == [None, None, None]
    assert ran.message == "ran all 3"
    np.testing.assert_array_equal(ran.history, [64.0, 16.0, 4.0, 1.0])
    assert failed.message == "failed at 2: the toy exploded"
