"""Greedy on tasks whose atoms are not cached: move tables and carried atoms change nothing.

With ``_ATOM_CACHE_MAX`` small, tasks of a few workers take the path of tasks of 17 to 20
(their atoms rebuilt from their workers); the greedy with its move tables and carried atoms
(:mod:`assignment.engine._move_table`) must make the moves of the greedy without them, bit for
bit: the same pairs, per-task accuracies and evaluations.
"""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine import greedy as greedy_module
from assignment.engine._move_scores import pair_accuracies, single_accuracies
from assignment.engine._move_table import MISS
from assignment.engine.accuracy import TIE_RTOL
from assignment.engine.greedy import GreedyState, fill, greedy_run
from assignment.engine.local_search import improve
from assignment.engine.problem import AssignmentProblem, QualityByCategory

WAYS = {  # (_MOVE_TABLES, _CARRY_ATOMS)
    "old": (False, False),
    "tables": (True, False),
    "carry": (False, True),
    "both": (True, True),
}


def _small_cache(monkeypatch, atoms=1 << 5):
    """Tasks of more than log2(atoms) workers take the uncached path."""
    monkeypatch.setattr(greedy_module, "_ATOM_CACHE_MAX", atoms)
    monkeypatch.setattr(greedy_module, "_ATOM_CACHE_TOTAL", 1 << 12)


def _way(monkeypatch, way):
    tables, carry = WAYS[way]
    monkeypatch.setattr(greedy_module, "_MOVE_TABLES", tables)
    monkeypatch.setattr(greedy_module, "_CARRY_ATOMS", carry)


def _quality(kind, rng, n, m):
    if kind == "uniform":
        return rng.uniform(0.5, 0.9, (n, m))
    if kind == "spammers":  # many equal gains: the tie rules decide
        q = rng.uniform(0.6, 0.95, (n, m))
        q[rng.choice(n, n // 5, replace=False)] = 0.5
        return q
    if kind == "levels":  # a few quality levels: exact ties between workers and pairs
        return rng.choice([0.55, 0.7, 0.8], (n, m))
    skill, ease = rng.uniform(0, 1, n), rng.uniform(0.2, 1, m)
    return 0.5 + 0.45 * np.outer(skill, ease)


def big_problem(seed, kind="uniform", n=40, m=60, **kwargs):
    """Tasks capped at 9 to 12 workers, budget 0.9 of what the caps allow."""
    rng = np.random.default_rng([seed, 12])
    per_task = rng.integers(9, 13, m)
    per_worker = max(1, round(0.25 * m))
    budget = int(0.9 * min(per_task.sum(), n * per_worker))
    quality = kwargs.pop("quality", None)
    return AssignmentProblem(
        _quality(kind, rng, n, m) if quality is None else quality,
        max_workers_per_task=per_task,
        max_tasks_per_worker=per_worker,
        budget=budget,
        **kwargs,
    )


def _outcome(output, state):
    return (
        output.rows.tolist(),
        output.cols.tolist(),
        output.details["accuracy"],
        output.details["evaluations"],
        output.details["steps"],
        state.acc.tobytes(),
        state.abs_sum.tobytes(),
    )


def _runs(monkeypatch, problem, ways=tuple(WAYS), **kwargs):
    found = {}
    for way in ways:
        _way(monkeypatch, way)
        output, state = greedy_run(problem, **kwargs)
        found[way] = (_outcome(output, state), state)
    return found


def _assert_same(found):
    reference = found["old"][0]
    for way, (outcome, _) in found.items():
        assert outcome == reference, way


@pytest.mark.parametrize("kind", ["uniform", "spammers", "levels", "skill-difficulty"])
@pytest.mark.parametrize("seed", [0, 1])
def test_tables_and_carried_atoms_make_the_old_moves(monkeypatch, kind, seed):
    _small_cache(monkeypatch, 1 << 3 if kind == "levels" else 1 << 5)  # levels merge atoms
    found = _runs(monkeypatch, big_problem(seed, kind))
    _assert_same(found)
    state = found["both"][1]
    assert sum(c is None for c in state.cache) > 10  # the uncached path ran
    assert 0 < state.table_builds < state.evaluations  # tables were built and reused


@pytest.mark.parametrize("seed", [0, 1])
def test_with_eligibility_and_priors_per_task(monkeypatch, seed):
    _small_cache(monkeypatch)
    rng = np.random.default_rng(seed)
    eligible = rng.random((40, 60)) < 0.8
    prior = rng.uniform(0.3, 0.7, 60)
    _assert_same(_runs(monkeypatch, big_problem(seed, eligible=eligible, prior=prior)))


@pytest.mark.parametrize("seed", [0, 1])
def test_by_category(monkeypatch, seed):
    _small_cache(monkeypatch)
    rng = np.random.default_rng(seed)
    quality = QualityByCategory(rng.uniform(0.5, 0.9, (40, 4)), rng.integers(0, 4, 60))
    _assert_same(_runs(monkeypatch, big_problem(seed, quality=quality)))


def test_from_an_initial_assignment(monkeypatch):
    _small_cache(monkeypatch)
    problem = big_problem(3)
    _way(monkeypatch, "old")
    half = greedy_run(problem)[0]
    keep = np.arange(half.rows.size) % 2 == 0
    initial = (half.rows[keep], half.cols[keep])
    _assert_same(_runs(monkeypatch, problem, initial=initial))


def test_with_a_tiny_pool_and_no_table_memory(monkeypatch):
    """Tables of the smallest pool the rules allow miss often; without memory for tables the
    kernel runs on the rebuilt atoms."""
    _small_cache(monkeypatch)
    problem = big_problem(4, n=60)
    monkeypatch.setattr(greedy_module, "_MOVE_TABLE_TOP", greedy_module.PAIR_EXHAUSTIVE_MAX)
    found = _runs(monkeypatch, problem)
    monkeypatch.setattr(greedy_module, "_MOVE_TABLE_BYTES", 0)
    found["no memory"] = _runs(monkeypatch, problem, ways=("both",))["both"]
    _assert_same(found)
    assert found["no memory"][1].table_builds == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_improve_with_a_greedy_state(monkeypatch, seed):
    """tvcs-iht's final pass copies the state, removes pairs and fills again."""
    _small_cache(monkeypatch)
    problem = big_problem(seed, "skill-difficulty")
    found = {}
    for way in WAYS:
        _way(monkeypatch, way)
        output, state = greedy_run(problem)
        start = output.assignment
        result = improve(problem, start, rng=np.random.default_rng(seed), max_rounds=4, state=state)
        found[way] = (result.assignment.tobytes(), result.accuracy, result.history)
    for way, outcome in found.items():
        assert outcome == found["old"], way


def test_copies_and_removals_keep_the_tables_right(monkeypatch):
    """A copy shares the tables; taking pairs out of it drops only its own."""
    _small_cache(monkeypatch)
    problem = big_problem(5)
    states = {}
    for way in ("old", "both"):
        _way(monkeypatch, way)
        state = greedy_run(problem)[1]
        twin = state.copy()
        workers, tasks = twin.pairs()
        out = np.arange(workers.size) % 3 == 0
        twin.remove(workers[out], tasks[out])
        fill(twin)
        fill(state)  # nothing left to do: the original is untouched
        states[way] = [s.pairs()[0].tolist() + s.pairs()[1].tolist() for s in (state, twin)]
        states[way] += [twin.acc.tobytes(), twin.evaluations]
    assert states["both"] == states["old"]


def test_a_fresh_state_rebuilds_uncached_atoms_as_greedy_does(monkeypatch):
    _small_cache(monkeypatch)
    problem = big_problem(6)
    _way(monkeypatch, "both")
    state = greedy_run(problem)[1]
    fresh = GreedyState(problem)
    fresh.start_from_pairs(*state.pairs())
    for j in np.flatnonzero([c is None for c in fresh.cache]).tolist():
        idx = np.array(fresh.workers[j])  # in its order: by worker
        row = state.row[j]
        s, tail = greedy_module._atoms(state.w[row, idx], state.q[row, idx])
        s2, tail2 = fresh._dist(j)
        assert s.tobytes() == s2.tobytes()
        assert tail.tobytes() == tail2.tobytes()


def _kernel_and_table(state, j, budget_left, table):
    room = int(state.task_cap[j]) - len(state.workers[j])
    s, tail = state._dist(j)
    kernel = state._kernel_move(j, room, budget_left, s, tail)
    return tuple(kernel), state._pick(j, table, room, budget_left)


@pytest.mark.parametrize("kind", ["uniform", "spammers", "levels"])
def test_a_table_gives_the_kernels_move_bit_for_bit_or_says_it_misses(monkeypatch, kind):
    """Against ``task_best_move`` on the same atoms, as workers close at random: the same
    worth, workers and gain (as floats, bit for bit), or MISS when a pair the kernel scores
    is outside the table's pool."""
    _small_cache(monkeypatch, 1)
    _way(monkeypatch, "both")
    problem = big_problem(7, kind, n=60, m=8)
    state = GreedyState(problem)
    rng = np.random.default_rng(7)
    state.start_from_pairs(*_some_pairs(problem, rng))
    misses = found = 0
    for j in range(problem.shape[1]):
        s, tail = state._dist(j)
        table = state._build_table(j, s, tail)
        everyone = state.open_worker
        for closed in (0.0, 0.3, 0.6, 0.75, 0.9):
            state.open_worker = everyone & (rng.random(everyone.shape) >= closed)
            for budget_left in (1, 2, 5):
                kernel, (*move, status) = _kernel_and_table(state, j, budget_left, table)
                if status == MISS:
                    misses += 1
                    continue
                found += 1
                assert np.array(move).tobytes() == np.array(kernel).tobytes()
        state.open_worker = everyone
    assert misses > 0
    assert found > misses


def _some_pairs(problem, rng):
    """Two to four workers on each task (distinct, within the caps of ``big_problem``)."""
    n, m = problem.shape
    workers = [rng.choice(n, rng.integers(2, 5), replace=False) for _ in range(m)]
    tasks = np.repeat(np.arange(m), [w.size for w in workers])
    return np.concatenate(workers), tasks


@pytest.mark.parametrize("kind", ["uniform", "skill-difficulty"])
def test_a_tables_gains_are_the_kernels_scores(monkeypatch, kind):
    """``g1`` and ``g2`` as ``single_accuracies`` and ``pair_accuracies`` give them (lower
    worker first), bit for bit."""
    _small_cache(monkeypatch, 1)
    problem = big_problem(8, kind, n=60, m=6)
    state = GreedyState(problem)
    state.start_from_pairs(*_some_pairs(problem, np.random.default_rng(8)))
    for j in range(problem.shape[1]):
        s, tail = state._dist(j)
        g1, slot, g2 = state._build_table(j, s, tail)
        w, q = state.w[j], state.q[j]
        args = (s, tail, state.prior[j], state.r[j], state.abs_sum[j])
        who = np.flatnonzero(slot >= -1)
        singles = single_accuracies(*args, w[who], q[who], TIE_RTOL) - state.acc[j]
        assert singles.tobytes() == g1[who].tobytes()
        pool = np.argsort(np.where(slot >= 0, slot, slot.size))[: g2.shape[0]]
        x, y = np.triu_indices(pool.size, 1)
        a, b = pool[x], pool[y]
        pairs = pair_accuracies(*args, w[a], q[a], w[b], q[b], TIE_RTOL) - state.acc[j]
        assert pairs.tobytes() == g2[x, y].tobytes()
