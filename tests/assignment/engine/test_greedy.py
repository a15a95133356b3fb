"""Greedy marginal gain with pair lookahead: feasibility, exactness, lookahead, optimality cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assignment.engine import greedy as greedy_module
from assignment.engine._move_scores import pair_accuracies, pair_positions, single_accuracies
from assignment.engine.accuracy import (
    EPS,
    TIE_RTOL,
    column_accuracy,
    expected_accuracy,
    task_accuracy,
)
from assignment.engine.greedy import GAIN_TOL, greedy_assignment
from assignment.engine.problem import AssignmentProblem
from assignment.engine.upper_bound import accuracy_upper_bound

STOP_REASONS = {"budget spent", "no positive gain", "no feasible addition"}


# --------------------------------------------------------------------------- references


def _candidates(problem, x, j):
    load = x.sum(axis=1)
    return [
        i
        for i in range(problem.n_workers)
        if not x[i, j]
        and load[i] < problem.max_tasks_per_worker[i]
        and (problem.eligible is None or problem.eligible[i, j])
    ]


def first_best(gains):
    gains = np.asarray(gains)
    return int(np.flatnonzero(gains >= gains.max() - GAIN_TOL)[0])


def reference_greedy(problem, *, lookahead=True):
    """Plain greedy: every step rescans every task with column_accuracy; exhaustive pairs.

    The rule of the module docstring: a single is worth its gain, a pair half its gain; on a
    task the pair is taken only if it beats the best single by more than GAIN_TOL; the most
    worthy move over tasks wins, the lowest task and then the lowest workers on ties (within
    GAIN_TOL).
    Without ``lookahead`` it is the one-step greedy (singles only).
    """
    q, prior = problem.quality, problem.prior
    x = np.zeros(q.shape, dtype=bool)
    left = problem.budget
    while left > 0:
        best = None
        for j in range(problem.n_tasks):
            room = problem.max_workers_per_task[j] - x[:, j].sum()
            cands = _candidates(problem, x, j)
            if room < 1 or not cands:
                continue
            current = list(np.flatnonzero(x[:, j]))
            acc = column_accuracy(q[current, j], prior[j])
            g1 = [column_accuracy(q[[*current, i], j], prior[j]) - acc for i in cands]
            k = first_best(g1)
            worth, move = g1[k], (cands[k],)
            if lookahead and room >= 2 and left >= 2 and len(cands) >= 2:
                pairs = list(itertools.combinations(cands, 2))
                g2 = [column_accuracy(q[[*current, a, b], j], prior[j]) - acc for a, b in pairs]
                k = first_best(g2)
                if g2[k] / 2 > worth + GAIN_TOL:
                    worth, move = g2[k] / 2, pairs[k]
            key = round(worth / GAIN_TOL)  # worths are compared in units of GAIN_TOL
            if worth > GAIN_TOL and (best is None or key > best[0]):
                best = (key, j, move)
        if best is None:
            break
        for i in best[2]:
            x[i, best[1]] = True
        left -= len(best[2])
    return x


def brute_force_optimum(problem):
    """Best exact accuracy over every feasible assignment (tiny problems only)."""
    n, m = problem.quality.shape
    best = -1.0
    for bits in range(1 << (n * m)):
        x = ((bits >> np.arange(n * m)) & 1).astype(bool).reshape(n, m)
        if x.sum() <= problem.budget and problem.is_feasible(x):
            best = max(best, expected_accuracy(problem.quality, x, prior=problem.prior))
    return best


def random_problem(rng, n, m, *, max_budget=12):
    """Small problems over the edge cases: caps of 0, masks, Q < 0.5 and near 0/1, priors."""
    kind = rng.integers(5)
    if kind == 0:
        q = rng.uniform(0.5, 1.0, (n, m))
    elif kind == 1:
        q = rng.uniform(0.0, 1.0, (n, m))  # Q < 0.5: inverted workers
    elif kind == 2:
        q = rng.choice([0.0, 1e-9, 0.3, 0.5, 0.7, 1.0 - 1e-9, 1.0], (n, m))  # clipping, ties
    elif kind == 3:
        q = np.full((n, m), 0.7)  # every pattern count ties
    else:
        q = rng.uniform(0.55, 0.95, (n, m))
    priors = [0.5, rng.uniform(0.02, 0.98), rng.uniform(0.02, 0.98, m), 0.9]
    prior = priors[rng.integers(len(priors))]  # skewed and per-task priors too
    eligible = None if rng.random() < 0.4 else rng.random((n, m)) < 0.6
    return AssignmentProblem(
        q,
        max_workers_per_task=rng.integers(0, 6, m),
        max_tasks_per_worker=rng.integers(0, 4, n),
        budget=int(rng.integers(0, max_budget + 1)),
        prior=prior,
        eligible=eligible,
    )


def check_info(problem, x, info):
    assert info["stopped"] in STOP_REASONS
    assert info["assigned"] == int(x.sum())
    assert info["steps"] == info["singles_added"] + info["pairs_added"]
    assert info["assigned"] == info["singles_added"] + 2 * info["pairs_added"]
    assert (info["stopped"] == "budget spent") == (info["assigned"] == problem.budget)
    assert info["accuracy"] == pytest.approx(
        expected_accuracy(problem.quality, x, prior=problem.prior), abs=1e-12
    )
    assert info["accuracy"] >= info["initial_accuracy"] - 1e-12


# --------------------------------------------------------------------------- feasibility


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 8),
    m=st.integers(1, 6),
)
def test_the_result_is_always_feasible_and_its_info_consistent(seed, n, m):
    problem = random_problem(np.random.default_rng(seed), n, m, max_budget=20)
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert x.dtype == np.bool_
    assert x.shape == (n, m)
    assert problem.is_feasible(x)
    check_info(problem, x, info)


def test_budget_zero_assigns_nothing_and_says_the_budget_is_spent():
    problem = AssignmentProblem(
        np.full((3, 4), 0.8), max_workers_per_task=3, max_tasks_per_worker=4, budget=0
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert not x.any()
    assert info["stopped"] == "budget spent"
    assert info["steps"] == 0


@pytest.mark.parametrize("zero", ["max_workers_per_task", "max_tasks_per_worker"])
def test_caps_of_zero_assign_nothing_and_say_no_addition_is_feasible(zero):
    caps = {"max_workers_per_task": 3, "max_tasks_per_worker": 3, zero: 0}
    problem = AssignmentProblem(np.full((3, 4), 0.8), budget=10, **caps)
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert not x.any()
    assert info["stopped"] == "no feasible addition"


def test_an_eligibility_mask_that_leaves_tasks_uncoverable_is_respected():
    rng = np.random.default_rng(3)
    q = rng.uniform(0.6, 0.9, (5, 6))
    eligible = np.ones((5, 6), dtype=bool)
    eligible[:, [1, 4]] = False  # nobody may label tasks 1 and 4
    eligible[2, :] = False  # worker 2 may label nothing
    problem = AssignmentProblem(
        q, max_workers_per_task=3, max_tasks_per_worker=6, budget=30, eligible=eligible
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert problem.is_feasible(x)
    assert not x[:, [1, 4]].any()
    assert not x[2].any()
    assert x[:, [0, 2, 3, 5]].sum(axis=0).tolist() == [3, 3, 3, 3]
    assert info["stopped"] == "no feasible addition"


def test_a_second_equally_good_worker_has_no_gain_so_it_stops_with_no_positive_gain():
    problem = AssignmentProblem(
        np.full((4, 5), 0.75), max_workers_per_task=2, max_tasks_per_worker=5, budget=10
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert x.sum(axis=0).tolist() == [1] * 5
    assert info["stopped"] == "no positive gain"


def test_tasks_never_get_more_workers_than_the_exact_accuracy_handles():
    problem = AssignmentProblem(
        np.full((25, 1), 0.6), max_workers_per_task=25, max_tasks_per_worker=1, budget=25
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert x.sum() == greedy_module.MAX_EXACT_WORKERS - 1  # odd: the 20th adds nothing
    assert info["stopped"] == "no positive gain"


# --------------------------------------------------------------------------- exactness


def _random_task_state(rng, k, c):
    lo = rng.choice([0.0, 0.5, 0.55])
    hi = rng.choice([0.8, 0.95, 1.0])
    qs = rng.uniform(lo, hi, k + c)
    if rng.random() < 0.3:  # equal qualities: merged atoms and exact ties
        qs = np.round(qs, 1)
    qs = np.clip(qs, EPS, 1.0 - EPS)
    ws = np.log(qs) - np.log1p(-qs)
    prior = float(rng.choice([0.5, rng.uniform(0.05, 0.95)]))
    r = math.log1p(-prior) - math.log(prior)
    s, tail = greedy_module._atoms(ws[:k], qs[:k])
    abs_sum = float(np.abs(ws[:k]).sum())
    acc = column_accuracy(qs[:k], prior)
    return qs, ws, s, tail, prior, r, abs_sum, acc


def test_the_gains_of_singles_and_pairs_are_the_exact_accuracy_increases():
    rng = np.random.default_rng(11)
    for _ in range(60):
        k = int(rng.integers(0, 7))
        qs, ws, s, tail, prior, r, abs_sum, _ = _random_task_state(rng, k, 5)
        w, q = ws[k:], qs[k:]
        singles = single_accuracies(s, tail, prior, r, abs_sum, w, q, TIE_RTOL)
        expected = [column_accuracy(np.append(qs[:k], qi), prior) for qi in q]
        np.testing.assert_allclose(singles, expected, rtol=0, atol=1e-12)
        a, b = np.triu_indices(5, 1)
        pairs = pair_accuracies(s, tail, prior, r, abs_sum, w[a], q[a], w[b], q[b], TIE_RTOL)
        expected = [
            column_accuracy(np.append(qs[:k], [q[i], q[j]]), prior)
            for i, j in zip(a, b, strict=True)
        ]
        np.testing.assert_allclose(pairs, expected, rtol=0, atol=1e-12)


def test_the_restricted_pair_search_finds_the_best_pair_of_an_exhaustive_search():
    rng = np.random.default_rng(5)
    c = 40  # above PAIR_EXHAUSTIVE_MAX, so the restriction is in force
    assert c > greedy_module.PAIR_EXHAUSTIVE_MAX
    for _ in range(300):
        k = int(rng.integers(0, 7))
        qs, ws, s, tail, prior, r, abs_sum, acc = _random_task_state(rng, k, c)
        w, q = ws[k:], qs[k:]
        g1 = single_accuracies(s, tail, prior, r, abs_sum, w, q, TIE_RTOL) - acc
        a, b = pair_positions(
            g1,
            np.abs(w),
            c,
            greedy_module.PAIR_EXHAUSTIVE_MAX,
            greedy_module.PAIR_TOP_GAIN,
            greedy_module.PAIR_TOP_RELIABLE,
        )
        pool = greedy_module.PAIR_TOP_GAIN + greedy_module.PAIR_TOP_RELIABLE
        assert len(np.union1d(a, b)) <= pool
        restricted = pair_accuracies(
            s, tail, prior, r, abs_sum, w[a], q[a], w[b], q[b], TIE_RTOL
        ).max()
        a, b = np.triu_indices(c, 1)
        exhaustive = pair_accuracies(
            s, tail, prior, r, abs_sum, w[a], q[a], w[b], q[b], TIE_RTOL
        ).max()
        assert restricted == pytest.approx(exhaustive, abs=1e-12)


def test_it_makes_the_same_moves_as_a_plain_greedy_that_rescans_everything():
    rng = np.random.default_rng(2024)
    for _ in range(60):
        n, m = int(rng.integers(1, 12)), int(rng.integers(1, 6))
        problem = random_problem(rng, n, m, max_budget=25)
        x = greedy_assignment(problem).assignment
        np.testing.assert_array_equal(x, reference_greedy(problem))


# --------------------------------------------------------------------------- lookahead


@pytest.mark.parametrize("equal", [True, False])
def test_with_prior_one_half_and_room_for_three_workers_it_assigns_three_not_two(equal):
    rng = np.random.default_rng(7)
    n, m = 10, 20
    q = np.full((n, m), 0.7) if equal else rng.uniform(0.6, 0.8, (n, m))
    problem = AssignmentProblem(
        q, max_workers_per_task=3, max_tasks_per_worker=m, budget=3 * m, prior=0.5
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert x.sum(axis=0).tolist() == [3] * m
    assert info["pairs_added"] == m
    assert info["stopped"] == "budget spent"
    # the one-step greedy cannot see the majority of three and stays below
    one_step = expected_accuracy(q, reference_greedy(problem, lookahead=False), prior=0.5)
    assert info["accuracy"] > one_step + 0.03


def test_on_tiny_problems_it_is_at_least_as_accurate_as_the_one_step_greedy():
    rng = np.random.default_rng(99)
    for _ in range(60):
        n, m = (3, 2) if rng.random() < 0.5 else (4, 3)
        problem = random_problem(rng, n, m)
        info = greedy_assignment(problem).details
        one_step = reference_greedy(problem, lookahead=False)
        assert (
            info["accuracy"]
            >= expected_accuracy(problem.quality, one_step, prior=problem.prior) - 1e-12
        )


def test_on_tiny_problems_it_is_optimal_mostly_and_never_far_from_the_brute_force_optimum():
    """Greedy is myopic where workers are scarce: it may give a worker who is perfect on both
    tasks to the task where he gains slightly more, leaving the other task with a weak worker
    (seed 17 has such a case, 0.15 below the optimum on two tasks). So: optimal on most,
    close on average, and never more than 0.2 (of mean accuracy over two tasks) below."""
    rng = np.random.default_rng(17)
    gaps = []
    for _ in range(40):
        problem = random_problem(rng, 3, 2, max_budget=6)
        info = greedy_assignment(problem).details
        gap = brute_force_optimum(problem) - info["accuracy"]
        assert gap >= -1e-12
        gaps.append(gap)
    gaps = np.array(gaps)
    assert gaps.max() <= 0.2
    assert gaps.mean() <= 0.01
    assert np.mean(gaps <= 1e-12) >= 0.85


@pytest.mark.parametrize("qualities", ["equal", "close"])
def test_on_one_task_without_binding_worker_caps_it_is_optimal(qualities):
    """One task, prior 0.5, workers of (nearly) equal quality: the optimum of budget B is the B
    (or, equal qualities and B even, B - 1) most reliable workers, and greedy builds exactly
    that: the best single, then the best pair while the budget allows, then a last single."""
    rng = np.random.default_rng(4)
    n = 7
    q = np.full((n, 1), 0.7) if qualities == "equal" else rng.uniform(0.70, 0.74, (n, 1))
    for budget in range(n + 1):
        problem = AssignmentProblem(
            q, max_workers_per_task=n, max_tasks_per_worker=1, budget=budget, prior=0.5
        )
        info = greedy_assignment(problem).details
        assert info["accuracy"] == pytest.approx(brute_force_optimum(problem), abs=1e-12)


def test_it_never_loses_accuracy_as_the_budget_grows():
    rng = np.random.default_rng(8)
    q = rng.uniform(0.3, 0.95, (6, 8))
    accuracies = []
    for budget in range(0, 30):
        problem = AssignmentProblem(
            q, max_workers_per_task=4, max_tasks_per_worker=4, budget=budget, prior=0.6
        )
        info = greedy_assignment(problem).details
        accuracies.append(info["accuracy"])
    assert accuracies[0] == pytest.approx(0.6)  # the empty assignment: the prior's guess
    assert np.all(np.diff(accuracies) >= -1e-12)


def test_it_is_within_a_hair_of_the_upper_bound_on_the_figure_4_setting():
    n, m, r = 100, 1000, 0.04
    q = np.random.default_rng(0).uniform(0.5, 0.9, (n, m))
    per_task, per_worker = max(1, round(r * n)), max(1, round(r * m))
    problem = AssignmentProblem(
        q,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=math.floor(0.8 * min(m * per_task, n * per_worker)),
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert problem.is_feasible(x)
    bound = accuracy_upper_bound(problem).value
    assert bound - 0.001 <= info["accuracy"] <= bound + 1e-12


# --------------------------------------------------------------------------- API


def test_it_is_deterministic():
    problem = random_problem(np.random.default_rng(12), 8, 6, max_budget=25)
    output = greedy_assignment(problem)
    x1, info1 = output.assignment, output.details
    output = greedy_assignment(problem)
    x2, info2 = output.assignment, output.details
    np.testing.assert_array_equal(x1, x2)
    info1.pop("seconds"), info2.pop("seconds")
    assert info1 == info2


def test_ties_go_to_the_lowest_task_and_then_the_lowest_worker():
    problem = AssignmentProblem(
        np.full((3, 3), 0.8), max_workers_per_task=1, max_tasks_per_worker=1, budget=2
    )
    x = greedy_assignment(problem).assignment
    expected = np.zeros((3, 3), dtype=bool)
    expected[0, 0] = expected[1, 1] = True
    np.testing.assert_array_equal(x, expected)


def test_progress_is_reported_about_every_percent_and_ends_at_one():
    rng = np.random.default_rng(1)
    problem = AssignmentProblem(
        rng.uniform(0.55, 0.9, (20, 100)),
        max_workers_per_task=5,
        max_tasks_per_worker=25,
        budget=400,
    )
    calls = []
    greedy_assignment(problem, progress=lambda f, msg: calls.append((f, msg)))
    fractions = [f for f, _ in calls]
    assert fractions[-1] == 1.0
    assert all(0.0 < f <= 1.0 for f in fractions)
    assert np.all(np.diff(fractions) >= 0)
    assert 50 <= len(calls) <= 102
    assert all(isinstance(msg, str) and msg for _, msg in calls)


@pytest.mark.parametrize("bad", [3, "progress", [print]])
def test_a_progress_that_is_not_callable_raises_value_error(bad):
    problem = AssignmentProblem(
        np.full((2, 2), 0.8), max_workers_per_task=1, max_tasks_per_worker=1, budget=1
    )
    with pytest.raises(ValueError, match="progress"):
        greedy_assignment(problem, progress=bad)


def test_a_problem_that_is_not_an_assignment_problem_raises_type_error():
    with pytest.raises(TypeError, match="AssignmentProblem"):
        greedy_assignment(np.full((2, 2), 0.8))


def test_greedy_extends_a_feasible_initial_assignment_without_removing_it():
    rng = np.random.default_rng(4)
    q = rng.uniform(0.5, 0.9, (8, 20))
    problem = AssignmentProblem(q, max_workers_per_task=3, max_tasks_per_worker=6, budget=40)
    initial = np.zeros(q.shape, dtype=bool)
    initial[0, :5] = True
    output = greedy_assignment(problem, initial=initial)
    assignment, info = output.assignment, output.details
    assert problem.is_feasible(assignment)
    assert np.all(assignment[initial])
    assert info["accuracy"] >= info["initial_accuracy"]


def test_greedy_rejects_an_infeasible_initial_assignment():
    problem = AssignmentProblem(
        np.full((3, 4), 0.7), max_workers_per_task=1, max_tasks_per_worker=1, budget=4
    )
    with pytest.raises(ValueError, match="initial must be a feasible assignment"):
        greedy_assignment(problem, initial=np.ones((3, 4), dtype=bool))


@pytest.mark.parametrize("seed", range(3))
def test_starting_from_an_assignment_builds_the_same_state_as_adding_its_workers_one_by_one(seed):
    rng = np.random.default_rng(seed)
    n, m = 16, 12
    q = rng.uniform(0.0, 1.0, (n, m))
    q[:, :4] = np.round(q[:, :4], 1)  # equal qualities: merged atoms
    counts = rng.integers(0, n + 1, m)  # up to 16 workers: both the enumeration and apply paths
    x = np.zeros((n, m), dtype=bool)
    for j, c in enumerate(counts):
        x[rng.choice(n, c, replace=False), j] = True
    problem = AssignmentProblem(
        q,
        max_workers_per_task=n,
        max_tasks_per_worker=m,
        budget=n * m,
        prior=rng.uniform(0.1, 0.9, m),
    )
    bulk = greedy_module.GreedyState(problem)
    bulk.start_from(x)
    single = greedy_module.GreedyState(problem)
    for j in range(m):
        if counts[j]:
            single.apply(j, tuple(np.flatnonzero(x[:, j]).tolist()))
    np.testing.assert_array_equal(bulk.assigned, single.assigned)
    np.testing.assert_array_equal(bulk.load, single.load)
    assert bulk.workers == single.workers
    np.testing.assert_allclose(bulk.acc, single.acc, rtol=0, atol=1e-12)
    np.testing.assert_allclose(bulk.acc, task_accuracy(q, x, prior=problem.prior), atol=1e-12)
    for j in range(m):
        (s1, t1), (s2, t2) = bulk._dist(j), single._dist(j)
        np.testing.assert_allclose(s1, s2, rtol=0, atol=1e-9)
        np.testing.assert_allclose(t1, t2, rtol=0, atol=1e-12)


def assert_same_state(a, b, problem):
    np.testing.assert_array_equal(a.assigned, b.assigned)
    np.testing.assert_array_equal(a.load, b.load)
    np.testing.assert_array_equal(a.open_worker, b.open_worker)
    assert [sorted(ws) for ws in a.workers] == [sorted(ws) for ws in b.workers]
    np.testing.assert_allclose(a.abs_sum, b.abs_sum, rtol=1e-12)
    expected = task_accuracy(problem.quality, a.assignment, prior=problem.prior)
    np.testing.assert_allclose(a.acc, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.acc, expected, rtol=0, atol=1e-12)
    for j in range(problem.n_tasks):
        (s1, t1), (s2, t2) = a._dist(j), b._dist(j)
        np.testing.assert_allclose(s1, s2, rtol=0, atol=1e-9)
        np.testing.assert_allclose(t1, t2, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_state_that_loses_pairs_is_the_state_of_what_is_left(seed):
    rng = np.random.default_rng(seed)
    n, m = 14, 10
    q = rng.uniform(0.0, 1.0, (n, m))
    problem = AssignmentProblem(
        q, max_workers_per_task=n, max_tasks_per_worker=6, budget=60, prior=rng.uniform(0.1, 0.9, m)
    )
    full = greedy_assignment(problem).assignment
    state = greedy_module.GreedyState(problem)
    state.start_from(full)
    workers, tasks = np.nonzero(full)
    gone = rng.random(workers.size) < 0.4
    gone[tasks == tasks[0]] = True  # one task loses every worker
    untouched = state.copy()
    state.remove(workers[gone], tasks[gone])
    left = full.copy()
    left[workers[gone], tasks[gone]] = False
    fresh = greedy_module.GreedyState(problem)
    fresh.start_from(left)
    assert_same_state(state, fresh, problem)
    assert state.budget_left == problem.budget - left.sum()
    original = greedy_module.GreedyState(problem)
    original.start_from(full)
    assert_same_state(untouched, original, problem)  # the copy kept what it had


def test_filling_a_state_again_is_greedy_from_what_it_holds():
    q = np.random.default_rng(3).uniform(0.5, 0.9, (20, 120))
    problem = AssignmentProblem(q, max_workers_per_task=3, max_tasks_per_worker=14, budget=220)
    full = greedy_assignment(problem).assignment
    workers, tasks = np.nonzero(full)
    keep = np.random.default_rng(0).random(workers.size) < 0.5
    partial = np.zeros_like(full)
    partial[workers[keep], tasks[keep]] = True
    state = greedy_module.GreedyState(problem)
    state.start_from(full)
    state.remove(workers[~keep], tasks[~keep])
    greedy_module.fill(state)
    refilled = greedy_assignment(problem, initial=partial).assignment
    np.testing.assert_array_equal(state.assignment, refilled)


@pytest.mark.parametrize("eligible", [False, True])
def test_evaluating_every_task_at_once_finds_each_tasks_own_best_move(eligible):
    rng = np.random.default_rng(4)
    q = rng.uniform(0.2, 0.95, (18, 40))
    problem = AssignmentProblem(
        q,
        max_workers_per_task=rng.integers(0, 6, 40),
        max_tasks_per_worker=rng.integers(1, 8, 18),
        budget=90,
        prior=rng.uniform(0.2, 0.8, 40),
        eligible=rng.random(q.shape) < 0.7 if eligible else None,
    )
    half = problem.budget // 2
    partial = greedy_assignment(
        AssignmentProblem(
            q,
            max_workers_per_task=problem.max_workers_per_task,
            max_tasks_per_worker=problem.max_tasks_per_worker,
            budget=half,
            prior=problem.prior,
            eligible=problem.eligible,
        )
    ).assignment
    state = greedy_module.GreedyState(problem)
    state.start_from(partial)
    for budget_left in (problem.budget - half, 1):
        one_by_one = [(j, state.evaluate(j, budget_left)) for j in range(problem.n_tasks)]
        assert state.evaluate_all(budget_left) == [(j, b) for j, b in one_by_one if b is not None]


@pytest.mark.parametrize("seed", range(5))
def test_a_states_assignment_and_pairs_are_its_per_task_lists(seed):
    """After greedy and a removal (lists in the order the workers came, not sorted), the
    dense assignment holds exactly the pairs of the lists, and ``pairs`` are its
    ``np.nonzero``."""
    rng = np.random.default_rng(seed)
    n, m = 9, 40
    problem = AssignmentProblem(
        rng.uniform(0.5, 0.95, (n, m)),
        max_workers_per_task=5,
        max_tasks_per_worker=20,
        budget=120,
    )
    state = greedy_module.greedy_run(problem)[1]
    workers, tasks = state.pairs()
    drop = rng.random(workers.size) < 0.3
    state.remove(workers[drop], tasks[drop])
    expected = np.zeros((n, m), dtype=bool)
    for j, on_task in enumerate(state.workers):
        expected[on_task, j] = True
    assert np.array_equal(state.assignment, expected)
    assert any(on_task != sorted(on_task) for on_task in state.workers)
    rows, cols = state.pairs()
    expected_rows, expected_cols = np.nonzero(expected)
    assert np.array_equal(rows, expected_rows)
    assert np.array_equal(cols, expected_cols)
    assert np.array_equal(state.load, expected.sum(axis=1))
