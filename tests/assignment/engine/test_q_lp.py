"""The q-lp LP by column generation: HiGHS's optimum over every pair, on a few pairs, without the
dense matrix of a problem given by category."""

import tracemalloc

import numpy as np
import pytest
from q_lp_reference import full_lp_optimum

from assignment.engine import q_lp
from assignment.engine.baselines import q_lp_assignment, q_lp_credit_cap, q_lp_weights
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.q_lp import solve_q_lp


def random_problem(seed: int, *, by_category: bool, masked: bool, n_labels: int):
    """Small problems where every kind of row binds: credit (up to 12 workers of weight up to
    1 against C ~ 4-9), worker caps, task caps and the budget."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(5, 13)), int(rng.integers(8, 40))
    low = 1.0 / n_labels
    if by_category:
        table = rng.uniform(low - 0.1, 1.0, size=(n, int(rng.integers(1, 5))))
        quality = QualityByCategory(table, rng.integers(0, table.shape[1], size=m))
    else:
        quality = rng.uniform(low - 0.1, 1.0, size=(n, m))
    per_task = rng.integers(1, n + 1, size=m)
    per_worker = rng.integers(1, m + 1, size=n)
    budget = int(rng.integers(1, int(min(per_task.sum(), per_worker.sum())) + 2))
    return AssignmentProblem(
        quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        eligible=rng.random((n, m)) < 0.7 if masked else None,
        n_labels=n_labels,
    )


def assert_feasible(problem: AssignmentProblem, lp, credit_cap: float) -> None:
    """Every constraint of the full LP holds for ``lp.x`` (0 at every other pair)."""
    n, m = problem.shape
    tol = 1e-7
    assert np.all((lp.x >= 0) & (lp.x <= 1))
    w = problem.quality_at(lp.workers, lp.tasks)
    w = q_lp_weights(w, problem.n_labels)
    assert np.all(w > 0)
    if problem.eligible is not None:
        assert np.all(problem.eligible[lp.workers, lp.tasks])
    assert np.all(np.bincount(lp.tasks, w * lp.x, m) <= credit_cap + tol)
    assert np.all(np.bincount(lp.workers, lp.x, n) <= problem.max_tasks_per_worker + tol)
    assert np.all(np.bincount(lp.tasks, lp.x, m) <= problem.max_workers_per_task + tol)
    assert lp.x.sum() <= problem.budget + tol
    assert np.unique(lp.tasks * n + lp.workers).size == lp.x.size  # each pair once
    np.testing.assert_allclose(lp.objective, np.sum(w * lp.x), rtol=1e-9)


@pytest.mark.parametrize("path", ["relaxation first", "column generation only"])
@pytest.mark.parametrize("solver", ["dual simplex", "interior point"])
@pytest.mark.parametrize("n_labels", [2, 4])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("by_category", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_the_lp_optimum_is_highs_over_every_pair(
    seed, by_category, masked, n_labels, solver, path, monkeypatch
):
    if path == "column generation only":
        monkeypatch.setattr(q_lp, "RELAXATION_MAX_PAIRS", 0)
    if solver == "interior point":  # what the restricted LPs of large problems go to
        monkeypatch.setattr(q_lp, "SIMPLEX_MAX_PAIRS", 0)
    problem = random_problem(seed, by_category=by_category, masked=masked, n_labels=n_labels)
    credit_cap = q_lp_credit_cap([0.3, 0.05, 0.01][seed % 3], n_labels)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.optimal
    assert_feasible(problem, lp, credit_cap)
    want = full_lp_optimum(problem, credit_cap)
    assert lp.objective == pytest.approx(want, rel=1e-6, abs=1e-9)


def test_pricing_brings_in_the_pairs_the_start_lacks(monkeypatch):
    """One strong worker per task is the start, but he can take one task only: the other
    tasks' optimum needs the pairs pricing finds, over tasks split into many blocks."""
    monkeypatch.setattr(q_lp, "BLOCK_PAIRS", 7)
    monkeypatch.setattr(q_lp, "RELAXATION_MAX_PAIRS", 0)
    rng = np.random.default_rng(4)
    quality = rng.uniform(0.6, 0.8, size=(6, 30))
    quality[0] = 1.0
    problem = AssignmentProblem(
        quality, max_workers_per_task=1, max_tasks_per_worker=[1, 30, 30, 30, 30, 30], budget=30
    )
    credit_cap = q_lp_credit_cap(0.05)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.rounds > 1
    assert lp.optimal
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-6)
    assert_feasible(problem, lp, credit_cap)


def test_the_restricted_lp_stays_small(monkeypatch):
    """The LP is solved on far fewer pairs than the problem has."""
    monkeypatch.setattr(q_lp, "RELAXATION_MAX_PAIRS", 0)
    rng = np.random.default_rng(0)
    problem = AssignmentProblem(
        rng.uniform(0.5, 0.9, size=(60, 400)),
        max_workers_per_task=3,
        max_tasks_per_worker=20,
        budget=960,
    )
    lp = solve_q_lp(problem, q_lp_credit_cap(0.05))
    assert lp.optimal
    assert lp.x.size < 60 * 400 / 4


@pytest.mark.parametrize("masked", [False, True])
def test_q_lp_assignment_is_feasible_and_rounds_the_lp(masked):
    problem = random_problem(11, by_category=False, masked=masked, n_labels=2)
    output = q_lp_assignment(problem, target_error=0.01)
    assignment, info = output.assignment, output.details
    assert problem.is_feasible(assignment)
    assert info["lp_objective"] == pytest.approx(
        full_lp_optimum(problem, info["credit_cap"]), rel=1e-6
    )
    # the projection keeps only pairs the LP uses
    w = q_lp_weights(problem.quality)
    assert np.all(w[assignment] > 0)
    assert info["lp_pairs"] < problem.n_workers * problem.n_tasks


@pytest.mark.slow
def test_a_problem_by_category_never_gets_a_dense_float_matrix(monkeypatch):
    """Neither the cached dense quality nor any other n x m float array: NumPy's peak traced
    allocation (the LP's few pairs, the pricing blocks, the bool assignment) stays below half
    of one (8 n m bytes)."""
    monkeypatch.setattr(q_lp, "BLOCK_PAIRS", 1 << 15)
    rng = np.random.default_rng(2)
    n, m = 1000, 4000
    problem = AssignmentProblem(
        QualityByCategory(rng.uniform(0.5, 0.9, size=(n, 400)), rng.integers(0, 400, size=m)),
        max_workers_per_task=2,
        max_tasks_per_worker=10,
        budget=6000,
    )
    q_lp_assignment(problem)  # compile the projection's kernels outside the measurement
    tracemalloc.start()
    try:
        output = q_lp_assignment(problem)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "quality" not in vars(problem)
    assert peak < 4 * n * m
    assert problem.is_feasible(output.assignment)
    assert output.n_assigned > 0
    assert output.details["lp_optimal"] is True


def test_tasks_of_one_category_start_from_different_workers():
    """Tasks sharing a category rank workers alike; the start deals the category's heaviest
    workers out in turn, so within a category it fits the workers' caps instead of giving every
    task the same top two."""
    rng = np.random.default_rng(8)
    n, m = 40, 300
    problem = AssignmentProblem(
        QualityByCategory(rng.uniform(0.5, 0.9, size=(n, 3)), rng.integers(0, 3, size=m)),
        max_workers_per_task=2,
        max_tasks_per_worker=15,
        budget=600,
    )
    keys = q_lp._initial_keys(problem, problem.quality_table)
    tasks, workers = np.divmod(keys, n)
    assert np.all(np.bincount(tasks, minlength=m) == 2)
    category = problem.task_column[tasks]
    for c in range(3):  # within a category no worker is dealt more than his cap
        assert np.bincount(workers[category == c], minlength=n).max() <= 15
    assert np.unique(workers).size > 3 * 2
    credit_cap = q_lp_credit_cap(0.05)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-6)


def test_equal_columns_of_a_dense_matrix_group_as_their_categories():
    rng = np.random.default_rng(9)
    categories = rng.integers(0, 5, size=70)
    table = rng.uniform(0.5, 0.9, size=(12, 5))
    group, first = q_lp._equal_columns(table[:, categories])
    assert first.size == np.unique(categories).size
    for c in np.unique(categories):  # same category, same group; other categories, others
        assert np.unique(group[categories == c]).size == 1
        assert np.all(group[categories != c] != group[categories == c][0])
    np.testing.assert_array_equal(table[:, categories][:, first[group]], table[:, categories])


def test_without_a_proof_after_its_rounds_the_lp_takes_every_pair(monkeypatch):
    """Where pricing keeps finding pairs, the LP over every usable pair ends it, exactly."""
    monkeypatch.setattr(q_lp, "FULL_LP_AFTER", 1)
    monkeypatch.setattr(q_lp, "RELAXATION_MAX_PAIRS", 0)
    rng = np.random.default_rng(4)
    quality = rng.uniform(0.6, 0.8, size=(6, 30))
    quality[0] = 1.0
    eligible = rng.random((6, 30)) < 0.8
    problem = AssignmentProblem(
        quality,
        max_workers_per_task=1,
        max_tasks_per_worker=[1, 30, 30, 30, 30, 30],
        budget=30,
        eligible=eligible,
    )
    credit_cap = q_lp_credit_cap(0.05)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.rounds == q_lp.FULL_LP_AFTER + 1  # the last LP took every usable pair
    assert lp.x.size == int(eligible.sum())
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-6)
    assert_feasible(problem, lp, credit_cap)


def test_when_the_caps_optimum_respects_every_credit_cap_it_is_the_lp_optimum():
    """Caps of 3 workers a task of weight at most 0.64 never reach C = 5.99: one projection
    solves the LP, with no LP solved at all."""
    problem = AssignmentProblem(
        np.random.default_rng(1).uniform(0.5, 0.9, size=(30, 200)),
        max_workers_per_task=3,
        max_tasks_per_worker=12,
        budget=500,
    )
    credit_cap = q_lp_credit_cap(0.05)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.rounds == 0
    assert lp.optimal
    np.testing.assert_array_equal(lp.x, 1.0)
    assert_feasible(problem, lp, credit_cap)
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-9)


def test_when_the_caps_optimum_overflows_a_credit_cap_the_lp_is_solved_by_pricing():
    """Ten workers of weight up to 0.81 a task overflow C = 0.6 (target error 0.74): the
    relaxation is not the LP's optimum, and the LP is solved by pricing instead."""
    problem = AssignmentProblem(
        np.random.default_rng(2).uniform(0.5, 0.95, size=(20, 60)),
        max_workers_per_task=10,
        max_tasks_per_worker=30,
        budget=600,
    )
    credit_cap = q_lp_credit_cap(0.74)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.rounds >= 1
    assert lp.optimal
    assert np.any((lp.x > 1e-9) & (lp.x < 1 - 1e-9))  # the credit caps make it fractional
    assert_feasible(problem, lp, credit_cap)
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-6)


def rank_one_problem(seed: int, *, masked: bool) -> AssignmentProblem:
    """Skill x ease quality (``w_ij`` rank one: every task ranks the workers alike) with caps
    whose heaviest workers overflow the credit cap of target error 0.05 on most tasks."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(20, 31)), int(rng.integers(40, 81))
    quality = 0.5 + 0.5 * np.outer(rng.uniform(0.3, 1.0, n), rng.uniform(0.7, 1.0, m))
    per_task = int(rng.integers(9, 13))
    per_worker = int(rng.integers(3, m // 2))
    budget = int(rng.uniform(0.5, 1.0) * min(m * per_task, n * per_worker))
    return AssignmentProblem(
        quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        eligible=rng.random((n, m)) < 0.8 if masked else None,
    )


@pytest.mark.parametrize("solver", ["dual simplex", "interior point"])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_rounds_after_the_first_carry_on_from_its_basis_to_the_lp_optimum(
    seed, masked, solver, monkeypatch
):
    """Rank-one weights with binding credit rows need several rounds of pricing; after the
    first, each round adds its pairs to the same HiGHS model and carries on from its basis
    (no fresh restricted LP), and ends at HiGHS's optimum over every pair."""
    monkeypatch.setattr(q_lp, "RELAXATION_MAX_PAIRS", 0)
    if solver == "interior point":
        monkeypatch.setattr(q_lp, "SIMPLEX_MAX_PAIRS", 0)
    fresh = []
    restricted = q_lp._restricted_lp
    monkeypatch.setattr(
        q_lp, "_restricted_lp", lambda *a, **k: fresh.append(1) or restricted(*a, **k)
    )
    problem = rank_one_problem(seed, masked=masked)
    credit_cap = q_lp_credit_cap(0.05)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.optimal
    assert lp.rounds > 1
    assert not fresh
    assert_feasible(problem, lp, credit_cap)
    w = q_lp_weights(problem.quality[lp.workers, lp.tasks])
    credit = np.bincount(lp.tasks, weights=w * lp.x, minlength=problem.n_tasks)
    assert np.any(credit > credit_cap - 1e-7)  # some credit row binds
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-9)


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("seed", [0, 2, 3])
def test_the_lagrangian_bound_proves_the_lp_optimum_where_pricing_still_finds_pairs(
    seed, masked, monkeypatch
):
    """Rank-one weights, degenerate credit duals: the round that ends it still had pairs of
    positive reduced profit (pricing alone would go on), but the Lagrangian bound ``L(u)``
    meets the restricted optimum, which is HiGHS's optimum over every pair."""
    steps = []
    step = q_lp._lagrangian_step

    def spy(lagrangian, keys, new, prices, objective):
        out = step(lagrangian, keys, new, prices, objective)
        steps.append((new.size, out[0]))
        return out

    monkeypatch.setattr(q_lp, "_lagrangian_step", spy)
    problem = rank_one_problem(seed, masked=masked)
    credit_cap = q_lp_credit_cap(0.05)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.optimal
    assert "proved optimal by the Lagrangian bound" in lp.message
    priced_in, proved = steps[-1]
    assert proved
    assert priced_in > 0
    assert_feasible(problem, lp, credit_cap)
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-9)


def test_the_lagrangian_bound_refuses_a_restricted_set_that_misses_optimal_pairs():
    """On the start's pairs alone the restricted optimum is well below the full LP's: the bound
    stays above the full optimum (at the restricted LP's prices and at random ones), refuses,
    and names pairs outside the set to add."""
    problem = rank_one_problem(0, masked=False)
    credit_cap = q_lp_credit_cap(0.05)
    table = problem.quality_table
    want = full_lp_optimum(problem, credit_cap)
    lagrangian = q_lp._Lagrangian(problem, table, credit_cap)
    keys = q_lp._initial_keys(problem, table)
    tasks, workers = np.divmod(keys, problem.n_workers)
    wk = q_lp_weights(problem.quality[workers, tasks])
    _, objective, prices, _ = q_lp._restricted_lp(problem, workers, tasks, wk, credit_cap)
    assert objective < want - 1e-3
    new = q_lp._price(problem, table, keys, prices)
    proved, gap, add = q_lp._lagrangian_step(lagrangian, keys, new, prices, objective)
    assert not proved
    assert objective + gap >= want - 1e-9
    assert add.size
    assert not np.isin(add, keys).any()
    for seed in range(5):
        u = np.random.default_rng(seed).uniform(0, 1.5, problem.n_tasks)
        assert lagrangian.bound(u)[0] >= want - 1e-9


@pytest.mark.parametrize("lagrangian", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_columns_that_leave_the_warm_lp_do_not_change_its_optimum(seed, lagrangian, monkeypatch):
    """Columns at 0 with reduced profit below ``-DROP_MARGIN`` leave the warm LP between rounds
    (here with a margin of 0, so that many do); pricing still sees them, and the optimum is
    HiGHS's over every pair."""
    monkeypatch.setattr(q_lp, "DROP_MARGIN", 0.0)
    if not lagrangian:
        monkeypatch.setattr(q_lp, "RELAXATION_MAX_PAIRS", 0)
    dropped = []
    drop = q_lp._WarmLP.drop

    def spy(self, margin):
        before = self.keys.size
        drop(self, margin)
        dropped.append(before - self.keys.size)

    monkeypatch.setattr(q_lp._WarmLP, "drop", spy)
    problem = rank_one_problem(seed, masked=bool(seed % 2))
    credit_cap = q_lp_credit_cap(0.05)
    lp = solve_q_lp(problem, credit_cap)
    assert lp.optimal
    assert sum(dropped) > 0
    assert_feasible(problem, lp, credit_cap)
    assert lp.objective == pytest.approx(full_lp_optimum(problem, credit_cap), rel=1e-9)
