"""Assignment problems with K >= 2 labels: solve() with every method that supports K labels,
greedy against a plain reference, q-lp's weights, and the label registry (the problem's prior
is tested in test_problem.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from assignment.engine import AssignmentProblem, QualityByCategory, solve
from assignment.engine._greedy_multiclass import max_exact_workers
from assignment.engine.baselines import q_lp_credit_cap, q_lp_weights
from assignment.engine.greedy import GAIN_TOL, greedy_assignment
from assignment.engine.multiclass import (
    MAX_EXACT_STATES,
    column_accuracy_multiclass,
    exact_state_counts,
    expected_accuracy_multiclass,
    task_accuracy_multiclass,
)
from assignment.engine.solve import METHODS
from assignment.engine.upper_bound import accuracy_upper_bound

FAST = {"tvcs-iht": {"max_iter": 15, "eval_every": 5}}
LABELS = (2, 3, 4)
#: (method, K) for every method and K: every method takes any number of labels.
METHOD_LABELS = [(method, k) for k in LABELS for method in METHODS]


def make_problem(n_labels, seed=0, n=10, m=24, **kwargs):
    """Q uniform in [1/K, 0.95] (or ``quality=``), Dirichlet priors of shape (m, K)."""
    rng = np.random.default_rng(seed)
    quality = kwargs.pop("quality", None)
    if quality is None:
        quality = rng.uniform(1.0 / n_labels, 0.95, (n, m))
    prior = kwargs.pop("prior", rng.dirichlet(np.full(n_labels, 4.0), m))
    kwargs = {"max_workers_per_task": 3, "max_tasks_per_worker": 6, "budget": 50} | kwargs
    return AssignmentProblem(quality, prior=prior, n_labels=n_labels, **kwargs)


def accuracy_of(problem, assignment):
    return expected_accuracy_multiclass(
        problem.quality_form,
        assignment,
        prior=problem.prior_distribution,
        n_labels=problem.n_labels,
    )


def run(problem, method, seed=0):
    return solve(problem, method=method, seed=seed, **FAST.get(method, {}))


# --------------------------------------------------------------------------- solve


CAP_CASES = {
    "plain": {},
    "budget 0": {"budget": 0},
    "worker caps of 0": {"max_tasks_per_worker": 0},
    "task caps of 0 for half the tasks": {"max_workers_per_task": np.tile([0, 3], 12)},
    "budget above every cap": {"budget": 10_000},
    "uncoverable tasks": {"eligible": np.tile(np.arange(24) % 3 != 0, (10, 1))},
    "skewed priors": {"prior_concentration": 0.3},
    "workers below 1/K": {"quality_low": 0.0},
    "by category": {"by_category": True},
}


def case_problem(n_labels, case, seed=0):
    kwargs = dict(CAP_CASES[case])
    rng = np.random.default_rng(seed)
    low = kwargs.pop("quality_low", 1.0 / n_labels)
    if kwargs.pop("by_category", False):
        kwargs["quality"] = QualityByCategory(
            rng.uniform(low, 0.95, (10, 4)), rng.integers(0, 4, 24)
        )
    else:
        kwargs["quality"] = rng.uniform(low, 0.95, (10, 24))
    concentration = kwargs.pop("prior_concentration", 4.0)
    kwargs["prior"] = rng.dirichlet(np.full(n_labels, concentration), 24)
    # skewed Dirichlet rows can have entries of 1e-20 and worse: keep them positive
    kwargs["prior"] = np.maximum(kwargs["prior"], 1e-6)
    kwargs["prior"] /= kwargs["prior"].sum(axis=1, keepdims=True)
    return make_problem(n_labels, seed, **kwargs)


@pytest.mark.parametrize("case", list(CAP_CASES))
@pytest.mark.parametrize(("method", "n_labels"), METHOD_LABELS)
def test_every_method_returns_a_feasible_exactly_evaluated_assignment_for_k_labels(
    method, n_labels, case
):
    problem = case_problem(n_labels, case)
    result = run(problem, method, seed=1)
    assert problem.is_feasible(result.assignment)
    assert result.accuracy_standard_error is None
    assert result.expected_accuracy == pytest.approx(
        accuracy_of(problem, result.assignment), abs=1e-12
    )
    if problem.budget == 0:
        assert result.n_assigned == 0


@pytest.mark.parametrize("method", METHODS)
def test_two_labels_as_an_m_by_2_prior_give_exactly_the_assignment_of_the_m_prior(method):
    rng = np.random.default_rng(4)
    q = rng.uniform(0.3, 0.95, (10, 24))
    p = rng.uniform(0.1, 0.9, 24)
    caps = {"max_workers_per_task": 3, "max_tasks_per_worker": 6, "budget": 50}
    one = run(AssignmentProblem(q, prior=p, **caps), method)
    rows = run(AssignmentProblem(q, prior=np.column_stack([1 - p, p]), **caps), method)
    np.testing.assert_array_equal(rows.assignment, one.assignment)
    assert rows.expected_accuracy == one.expected_accuracy


@pytest.mark.parametrize("n_labels", LABELS)
def test_greedy_is_more_accurate_than_random_on_average(n_labels):
    greedy, rand = [], []
    for seed in range(4):
        problem = make_problem(n_labels, seed, n=12, m=30)
        greedy.append(run(problem, "greedy").expected_accuracy)
        rand.append(np.mean([run(problem, "random", s).expected_accuracy for s in range(3)]))
    assert np.mean(greedy) > np.mean(rand) + 0.02


@pytest.mark.parametrize("low", ["1/K", "0"], ids=["ordinary workers", "workers below 1/K"])
@pytest.mark.parametrize(("method", "n_labels"), METHOD_LABELS)
def test_no_method_beats_the_upper_bound(method, n_labels, low):
    for seed in range(3):
        rng = np.random.default_rng(seed)
        q = rng.uniform(1.0 / n_labels if low == "1/K" else 0.0, 0.95, (10, 24))
        problem = make_problem(n_labels, seed, quality=q, budget=int(rng.integers(10, 60)))
        bound = accuracy_upper_bound(problem)
        assert run(problem, method).expected_accuracy <= bound.value + 1e-12


@pytest.mark.parametrize("n_labels", [3, 4])
def test_tvcs_iht_on_k_labels_is_feasible_exact_and_between_random_and_the_bound(n_labels):
    for seed in range(3):
        problem = make_problem(n_labels, seed, n=12, m=30, budget=60)
        out = solve(problem, method="tvcs-iht", seed=seed, max_iter=15, eval_every=3, bound_gap=0)
        assert problem.is_feasible(out.assignment)
        assert out.accuracy_standard_error is None  # within the exact K-class limit
        np.testing.assert_allclose(
            out.expected_accuracy, accuracy_of(problem, out.assignment), rtol=0, atol=1e-12
        )
        assert out.iterations >= 1  # the K-class surrogate's steps ran
        # never worse than its greedy start, nor than random; never above the bound
        assert out.expected_accuracy >= out.details["start_accuracy"] - 1e-12
        assert out.expected_accuracy >= run(problem, "random", seed).expected_accuracy
        assert out.expected_accuracy <= accuracy_upper_bound(problem).value + 1e-12


def test_k_label_accuracy_beyond_the_exact_states_is_a_monte_carlo_estimate():
    rng = np.random.default_rng(2)
    problem = make_problem(
        4,
        quality=rng.uniform(0.5, 0.9, (12, 2)),
        m=2,
        max_workers_per_task=12,
        max_tasks_per_worker=2,
        budget=24,
    )
    result = solve(problem, method="random", seed=3)
    assert result.n_assigned == 24
    assert exact_state_counts(problem.quality, result.assignment, n_labels=4).max() > (
        MAX_EXACT_STATES
    )
    assert 0 < result.accuracy_standard_error < 0.01
    assert 0.9 < result.expected_accuracy <= 1.0


# --------------------------------------------------------------------------- greedy


def reference_greedy(problem):
    """Plain greedy for K labels: every step rescans every task with column_accuracy_multiclass
    and every pair (the rules of the greedy's docstring, without its queue or batching)."""
    q, prior, k = problem.quality, problem.prior_distribution, problem.n_labels
    x = np.zeros(q.shape, dtype=bool)
    left = problem.budget

    def acc(workers, j):
        return column_accuracy_multiclass(q[list(workers), j], prior[j], n_labels=k)

    def first_best(gains):
        gains = np.asarray(gains)
        return int(np.flatnonzero(gains >= gains.max() - GAIN_TOL)[0])

    while left > 0:
        best = None
        load = x.sum(axis=1)
        for j in range(problem.n_tasks):
            room = problem.max_workers_per_task[j] - x[:, j].sum()
            cands = [
                i
                for i in range(problem.n_workers)
                if not x[i, j]
                and load[i] < problem.max_tasks_per_worker[i]
                and (problem.eligible is None or problem.eligible[i, j])
            ]
            if room < 1 or not cands:
                continue
            current = list(np.flatnonzero(x[:, j]))
            now = acc(current, j)
            g1 = [acc([*current, i], j) - now for i in cands]
            b = first_best(g1)
            worth, move = g1[b], (cands[b],)
            if room >= 2 and left >= 2 and len(cands) >= 2:
                pairs = list(itertools.combinations(cands, 2))
                g2 = [acc([*current, a, c], j) - now for a, c in pairs]
                b = first_best(g2)
                if g2[b] / 2 > worth + GAIN_TOL:
                    worth, move = g2[b] / 2, pairs[b]
            key = round(worth / GAIN_TOL)
            if worth > GAIN_TOL and (best is None or key > best[0]):
                best = (key, j, move)
        if best is None:
            break
        for i in best[2]:
            x[i, best[1]] = True
        left -= len(best[2])
    return x


@pytest.mark.parametrize("n_labels", [3, 4])
@pytest.mark.parametrize("seed", range(6))
def test_greedy_for_k_labels_makes_the_moves_of_the_plain_reference_greedy(n_labels, seed):
    """Pairs and singles (seeds 1 to 5 add pairs), uniform and Dirichlet priors, workers below
    1/K (odd seeds), eligibility masks (seeds 2 and up)."""
    rng = np.random.default_rng(seed)
    n, m = 6, 5
    problem = make_problem(
        n_labels,
        seed,
        m=m,
        quality=rng.uniform(0.0 if seed % 2 else 1.0 / n_labels, 0.95, (n, m)),
        max_workers_per_task=rng.integers(0, 6, m),
        max_tasks_per_worker=rng.integers(1, 6, n),
        budget=int(rng.integers(0, 20)),
        eligible=None if seed < 2 else rng.random((n, m)) < 0.7,
        prior=None if seed % 2 == 0 else rng.dirichlet(np.full(n_labels, 4.0), m),
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    np.testing.assert_array_equal(x, reference_greedy(problem))
    assert info["accuracy"] == pytest.approx(accuracy_of(problem, x), abs=1e-12)
    assert info["assigned"] == int(x.sum())


@pytest.mark.parametrize("seed", range(3))
def test_greedy_with_more_candidates_than_the_exhaustive_pair_search_matches_the_reference(seed):
    """20 workers: pairs come from the 8 best by single gain and the 8 most reliable only."""
    rng = np.random.default_rng(seed)
    problem = make_problem(
        3,
        m=3,
        quality=rng.uniform(0.4, 0.9, (20, 3)),
        max_workers_per_task=5,
        max_tasks_per_worker=2,
        budget=15,
        prior=None,
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert info["pairs_added"] > 0
    np.testing.assert_array_equal(x, reference_greedy(problem))


def test_greedy_builds_a_majority_of_three_under_a_uniform_prior():
    """Three labels, uniform prior, equal workers: a second worker alone gains nothing (when
    two disagree the vote is a tie), so only the pair move reaches three."""
    problem = make_problem(
        3, quality=np.full((5, 1), 0.7), m=1, max_workers_per_task=5, budget=3, prior=None
    )
    output = greedy_assignment(problem)
    x, info = output.assignment, output.details
    assert x.sum() == 3
    assert info["pairs_added"] == 1
    assert info["accuracy"] > 0.7 + 0.05


def test_greedy_extends_an_initial_assignment_for_k_labels():
    problem = make_problem(3, seed=5)
    start = np.zeros(problem.shape, bool)
    start[0, :4] = start[1, :3] = True
    output = greedy_assignment(problem, initial=start)
    x, info = output.assignment, output.details
    assert problem.is_feasible(x)
    assert (x >= start).all()
    assert info["initial_accuracy"] == pytest.approx(accuracy_of(problem, start), abs=1e-12)
    assert info["accuracy"] >= info["initial_accuracy"]


def test_greedy_gives_a_task_no_more_workers_than_the_exact_accuracy_allows():
    assert [max_exact_workers(k) for k in (2, 3, 4, 5, 6)] == [20, 12, 10, 8, 7]
    rng = np.random.default_rng(0)
    problem = make_problem(
        6,
        quality=rng.uniform(0.4, 0.9, (9, 1)),
        m=1,
        max_workers_per_task=9,
        max_tasks_per_worker=1,
        budget=9,
        prior=None,
    )
    x = greedy_assignment(problem).assignment
    assert x.sum() <= 7


# --------------------------------------------------------------------------- q-lp


def test_q_lp_weights_and_credit_cap_are_the_binary_ones_bit_for_bit_at_two_labels():
    q = np.random.default_rng(0).random((30, 40))
    np.testing.assert_array_equal(q_lp_weights(q, 2), (2.0 * q - 1.0) ** 2)
    for target in (0.01, 0.05, 0.3):
        assert q_lp_credit_cap(target, 2) == 2.0 * np.log(1.0 / target)


def test_q_lp_weights_are_the_squared_skill_above_guessing():
    for k in (3, 4, 5):
        np.testing.assert_allclose(
            q_lp_weights([1.0 / k, 1.0, 0.0, 0.5], k),
            [0.0, 1.0, 1.0 / (k - 1) ** 2, ((k / 2 - 1) / (k - 1)) ** 2],
            atol=1e-15,
        )
    assert q_lp_credit_cap(0.05, 4) == pytest.approx(2 * math.log(3 / 0.05))


@pytest.mark.parametrize("n_labels", [3, 4, 5])
def test_once_a_task_earns_the_credit_cap_its_bayes_vote_errs_at_most_the_target(n_labels):
    """The derivation of the q-lp weights: error <= (K - 1) exp(-sum_i s_i^2 / 2) for the vote
    weighted by skill, so at least as well for the Bayes vote, for any prior."""
    rng = np.random.default_rng(n_labels)
    for _ in range(200):
        k = int(rng.integers(1, 8))
        q = rng.uniform(0.0, 1.0, (k, 1))
        prior = rng.dirichlet(np.ones(n_labels), 1)
        accuracy = task_accuracy_multiclass(q, np.ones((k, 1)), prior=prior, n_labels=n_labels)
        bound = (n_labels - 1) * np.exp(-q_lp_weights(q, n_labels).sum() / 2)
        assert 1.0 - accuracy[0] <= bound + 1e-12
    target = 0.1
    cap = q_lp_credit_cap(target, n_labels)
    q = np.full((40, 1), 0.9)
    k = int(np.ceil(cap / q_lp_weights(0.9, n_labels)))  # workers to reach the cap
    uniform = np.full((1, n_labels), 1.0 / n_labels)
    accuracy = task_accuracy_multiclass(q[:k], np.ones((k, 1)), prior=uniform, n_labels=n_labels)
    assert 1.0 - accuracy[0] <= target


def test_a_three_label_assignment_has_its_accuracy_histogram_over_a_third_to_one():
    from assignment.engine.distributions import assignment_distributions
    from assignment.engine.multiclass import task_accuracy_multiclass

    rng = np.random.default_rng(2)
    problem = AssignmentProblem(
        rng.uniform(0.4, 0.95, (5, 12)),
        max_workers_per_task=3,
        max_tasks_per_worker=6,
        budget=20,
        n_labels=3,
    )
    x = solve(problem, method="greedy", seed=0).assignment
    summary = assignment_distributions(problem, x)
    histogram = summary["task_accuracy"]
    assert histogram["edges"][0] == pytest.approx(1 / 3, abs=1e-6)
    assert sum(histogram["counts"]) == 12
    values = task_accuracy_multiclass(
        problem.quality, x, prior=problem.prior_distribution, n_labels=3
    )
    expected, _ = np.histogram(values, bins=np.asarray(histogram["edges"]))
    assert histogram["counts"] == expected.tolist()


@pytest.mark.parametrize("n_labels", [3, 4])
def test_tvcs_iht_steps_on_the_k_class_surrogate_climb_from_a_random_start(n_labels):
    """The surrogate drives the search, not only greedy's start: from a random assignment,
    20 steps close at least half the gap to greedy's accuracy (measured: 0.66 to 0.80 of it)."""
    from assignment.engine._problem_accuracy import accuracy_of as _accuracy
    from assignment.engine.tvcs_iht import _steps
    from projections.tvcs import project

    options = {"max_iter": 20, "step": 1.0, "eval_every": 5, "patience": 100}
    options |= {"temperature": 0.5, "batch_size": 4, "min_improvement": 0.0}
    for seed in range(3):
        rng = np.random.default_rng(seed)
        q = rng.uniform(0.3, 0.95, (15, 60))
        caps = {"max_workers_per_task": 3, "max_tasks_per_worker": 10, "budget": 120}
        problem = AssignmentProblem(q, n_labels=n_labels, **caps)
        # A random maximum-size start: the projection of random weights all near 1.
        weights = 1.0 + np.random.default_rng(seed).random(q.shape) / (q.size + 1)
        start = project(np.sqrt(weights), problem.structure).support
        start_acc = _accuracy(problem, start)
        best, best_acc, *_ = _steps(
            problem,
            start,
            start_acc,
            rng=np.random.default_rng(seed),
            options=options,
            progress=None,
            deadline=None,
        )
        greedy_acc = greedy_assignment(problem).details["accuracy"]
        assert problem.is_feasible(best)
        assert best_acc == pytest.approx(accuracy_of(problem, best), abs=1e-12)
        assert best_acc >= start_acc + 0.5 * (greedy_acc - start_acc)


def test_tvcs_iht_on_k_labels_over_a_candidate_set_is_feasible_and_exact(monkeypatch):
    from assignment.engine import search_pairs as search_pairs_module

    monkeypatch.setattr(search_pairs_module, "MAX_SEARCH_PAIRS", 200)  # 12 x 30 = 360 pairs
    problem = make_problem(4, 1, n=12, m=30, budget=60)
    out = solve(problem, method="tvcs-iht", seed=1, max_iter=10, eval_every=2, bound_gap=0)
    assert 0 < out.details["searched_pairs"] < 12 * 30
    assert problem.is_feasible(out.assignment)
    assert out.expected_accuracy >= out.details["start_accuracy"] - 1e-12
    assert out.expected_accuracy == pytest.approx(accuracy_of(problem, out.assignment), abs=1e-12)
