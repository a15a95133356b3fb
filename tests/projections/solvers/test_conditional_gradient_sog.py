"""Frank–Wolfe and CoGEnT over the sparse overlapping groups (SoG) atoms: unit-l2 vectors on at
most ``per_group`` coordinates of one group (Jain, Rao & Dhillon, NIPS 2016, Figure 2 left)."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from projections.groups import OverlappingGroups
from projections.solvers import LeastSquares, cogent, frank_wolfe
from projections.solvers._atoms import SparseGroupAtoms

GROUPS = OverlappingGroups.contiguous(8, 6, 2)  # p = 34, neighbours share 2 coordinates
SOLVERS = {"frank_wolfe": frank_wolfe, "cogent": cogent}

#: ``history`` of both solvers with whole-group atoms on ``random_least_squares(7)``, tau 1.5,
#: 12 iterations, then ``solution @ arange(1, 35)``, as ``float.hex``: recorded with the code
#: before ``per_group`` existed (commit 2491e8b, x86-64, one BLAS thread), compared to 1e-12.
#: CoGEnT's enhancement then had only the safe step, now ``enhance_rule="safe"``.
TODAY = {
    "frank_wolfe": [
        "0x1.21aa3a68a52dcp-1", "0x1.e3c40be44e526p-2", "0x1.9a243c2c5d23fp-2",
        "0x1.78514fab8f543p-2", "0x1.6bbd6632d5c76p-2", "0x1.5fd1c3270a62bp-2",
        "0x1.5487e29ff36bdp-2", "0x1.4f9e826032c45p-2", "0x1.4bf966ce416dfp-2",
        "0x1.4769faea5d22ep-2", "0x1.44d1604d85eebp-2", "0x1.42b31ac7328d8p-2",
        "0x1.3f6f4df35ed15p-2", "-0x1.2edb373aeb3e2p+2",
    ],
    "cogent": [
        "0x1.21aa3a68a52dcp-1", "0x1.e13200877d847p-2", "0x1.79fb7418c4800p-2",
        "0x1.35a94ee69488dp-2", "0x1.224f6c5df59cap-2", "0x1.1aec5cd81c7d6p-2",
        "0x1.18c4683e7a4aap-2", "0x1.1840ef363d36dp-2", "0x1.17fd5e837dd7dp-2",
        "0x1.17cbbedcd602ap-2", "0x1.17b18900fe480p-2", "0x1.17a303009aeb2p-2",
        "0x1.179aaab380287p-2", "-0x1.96130f345b6a5p+0",
    ],
}  # fmt: skip


@functools.cache
def random_least_squares(seed: int, n_samples: int = 60) -> LeastSquares:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_samples, GROUPS.n_features))
    return LeastSquares(A, rng.standard_normal(n_samples))


def brute_force_oracle(grad: np.ndarray, groups: OverlappingGroups, per_group: int, tau: float):
    """``(value, support)`` minimising ``<grad, s>`` over ``tau`` times every SoG atom, by
    trying every support of ``per_group`` coordinates of every group: on a support ``S`` the
    best unit vector is ``-grad_S / ||grad_S||`` (Cauchy–Schwarz), worth ``-tau ||grad_S||``,
    and a smaller support is inside a larger one, so supports of exactly ``per_group`` (or the
    whole group when smaller) cover every atom."""
    best = (np.inf, None)
    for members in groups.members:
        for support in itertools.combinations(members, min(per_group, members.size)):
            value = -tau * np.linalg.norm(grad[list(support)])
            if value < best[0]:
                best = (value, set(support))
    return best


@pytest.mark.parametrize(("seed", "per_group"), [(0, 1), (1, 2), (2, 3), (3, 5), (4, 6), (5, 9)])
def test_the_oracle_is_the_best_atom_found_by_trying_every_support(seed, per_group):
    groups = OverlappingGroups.contiguous(4, 6, 2)  # p = 18
    grad = np.random.default_rng(seed).standard_normal(groups.n_features)
    atoms = SparseGroupAtoms(groups, 2.0, per_group)
    (group, coordinates), s, score = atoms.oracle(grad)
    value, support = brute_force_oracle(grad, groups, per_group, 2.0)
    assert float(grad @ s) == pytest.approx(value, rel=1e-12)
    assert -2.0 * score == pytest.approx(value, rel=1e-12)
    assert set(np.flatnonzero(s)) == set(coordinates) == support
    assert set(coordinates) <= set(groups.members[group])
    assert np.linalg.norm(s) == pytest.approx(2.0, rel=1e-12)


def test_the_oracle_breaks_ties_towards_the_lower_coordinate_and_group():
    groups = OverlappingGroups([[0, 1, 2], [3, 4, 5]], 6)
    atoms = SparseGroupAtoms(groups, 1.0, 2)
    (group, coordinates), s, _ = atoms.oracle(np.array([1.0, -1.0, 1.0, 1.0, 1.0, -1.0]))
    assert (group, coordinates) == (0, (0, 1))
    np.testing.assert_allclose(s, [-(0.5**0.5), 0.5**0.5, 0, 0, 0, 0])


def test_a_zero_gradient_gives_the_zero_atom():
    atoms = SparseGroupAtoms(GROUPS, 1.0, 3)
    (_, coordinates), s, score = atoms.oracle(np.zeros(GROUPS.n_features))
    assert coordinates == ()
    assert not np.any(s)
    assert score == 0.0


@pytest.mark.parametrize("name", list(SOLVERS))
def test_without_per_group_the_iterates_are_exactly_those_before_sog_atoms(name):
    solver = SOLVERS[name]
    if name == "cogent":
        solver = functools.partial(cogent, enhance_rule="safe")
    result = solver(random_least_squares(7), GROUPS, tau=1.5, max_iter=12, tol=0.0)
    fingerprint = [*result.history, result.solution @ np.arange(1, GROUPS.n_features + 1)]
    # to the last bits on this machine; 1e-12 leaves room for another BLAS's summation order
    np.testing.assert_allclose(fingerprint, [float.fromhex(v) for v in TODAY[name]], rtol=1e-12)
    same = solver(random_least_squares(7), GROUPS, tau=1.5, per_group=None, max_iter=12, tol=0.0)
    np.testing.assert_array_equal(same.solution, result.solution)


@pytest.mark.parametrize("name", list(SOLVERS))
def test_per_group_as_large_as_every_group_follows_the_whole_group_run(name):
    loss = random_least_squares(8)
    whole = SOLVERS[name](loss, GROUPS, tau=1.0, max_iter=40, tol=0.0)
    sog = SOLVERS[name](loss, GROUPS, tau=1.0, per_group=6, max_iter=40, tol=0.0)
    np.testing.assert_allclose(sog.history, whole.history, rtol=1e-9)
    np.testing.assert_allclose(sog.solution, whole.solution, atol=1e-9)
    assert {g for g, _ in sog.details["atoms"]} == set(whole.details["atoms"])


def assert_sog_decomposition(result, tau: float, per_group: int) -> None:
    """Every latent vector sits on at most ``per_group`` coordinates of its group, they sum to
    the solution, and their norms sum to at most ``tau`` at every iterate."""
    assert np.all(result.details["atom_bounds"] <= tau * (1 + 1e-9))
    w = np.zeros(GROUPS.n_features)
    for (group, coordinates), v in result.details["atoms"].items():
        assert len(coordinates) <= per_group
        assert set(coordinates) <= set(GROUPS.members[group])
        assert v.shape == (len(coordinates),)
        w[list(coordinates)] += v
    np.testing.assert_allclose(w, result.solution, atol=1e-12)
    assert sum(np.linalg.norm(v) for v in result.details["atoms"].values()) <= tau * (1 + 1e-9)


@pytest.mark.parametrize("name", list(SOLVERS))
@pytest.mark.parametrize("per_group", [1, 2, 4])
def test_sog_runs_decrease_the_objective_and_stay_inside_the_ball(name, per_group):
    loss, tau = random_least_squares(3, n_samples=25), 1.5
    result = SOLVERS[name](loss, GROUPS, tau=tau, per_group=per_group, max_iter=150, tol=0.0)
    history = result.history
    assert np.all(np.diff(history) <= 1e-12 * history[0])
    assert history[-1] < 0.9 * history[0]
    assert_sog_decomposition(result, tau, per_group)
    # several atoms of one group on different supports: kept apart, not merged
    groups_used = [g for g, _ in result.details["atoms"]]
    assert len(groups_used) > len(set(groups_used)) or per_group >= 6


@pytest.mark.parametrize("name", list(SOLVERS))
def test_the_gap_of_a_sog_run_certifies_it_against_a_longer_run(name):
    loss, tau = random_least_squares(2, n_samples=25), 1.0
    short = SOLVERS[name](loss, GROUPS, tau=tau, per_group=2, max_iter=30, tol=0.0)
    long = cogent(loss, GROUPS, tau=tau, per_group=2, max_iter=3000, tol=1e-10)
    assert long.converged
    assert np.all(short.history - long.objective >= -1e-9)
    assert np.all(short.history - long.objective <= short.details["gaps"] + 1e-12)


def planted_sog(seed: int, n_samples: int):
    """A noiseless instance whose SoG norm is known: two non-adjacent active groups, each with
    ``per_group = 2`` non-zeros away from the overlaps. Every group then sees at most one
    block, so ``z = sum_b w_b / ||w_b||`` has dual SoG norm 1 and ``<z, w*> = sum_b ||w_b||``:
    the SoG norm of ``w*`` is the sum of its blocks' l2 norms."""
    rng = np.random.default_rng(seed)
    w_true = np.zeros(GROUPS.n_features)
    for g in (1, 5):  # coordinates 4..9 and 20..25; 6..7 and 22..23 are in no other group
        w_true[GROUPS.members[g][2:4]] = rng.choice([-1, 1], 2) * rng.uniform(0.5, 1.5, 2)
    A = rng.standard_normal((n_samples, GROUPS.n_features))
    tau = np.linalg.norm(w_true[6:8]) + np.linalg.norm(w_true[22:24])
    return LeastSquares(A, A @ w_true), w_true, tau


@pytest.mark.parametrize(
    ("name", "max_iter", "error"),
    # Frank-Wolfe's O(1/t) leaves about 1e-2 after thousands of steps; CoGEnT's enhancement
    # gets well below
    [("cogent", 1000, 1e-2), ("frank_wolfe", 3000, 3e-2)],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_with_tau_the_true_sog_norm_a_noiseless_planted_model_is_recovered(
    name, max_iter, error, seed
):
    loss, w_true, tau = planted_sog(seed, n_samples=24)
    result = SOLVERS[name](loss, GROUPS, tau=tau, per_group=2, max_iter=max_iter, tol=1e-12)
    assert np.linalg.norm(result.solution - w_true) <= error * np.linalg.norm(w_true)
    assert_sog_decomposition(result, tau, per_group=2)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "3", np.float64(2.0)])
@pytest.mark.parametrize("name", list(SOLVERS))
def test_a_per_group_that_is_not_a_positive_integer_is_refused_by_name(name, bad):
    with pytest.raises(ValueError, match=r"per_group must be an integer >= 1, got"):
        SOLVERS[name](random_least_squares(0), GROUPS, tau=1.0, per_group=bad)


@pytest.mark.parametrize("per_group", [None, 2])
@pytest.mark.parametrize("name", list(SOLVERS))
def test_a_zero_response_gives_the_zero_solution_without_an_error(name, per_group):
    A = np.random.default_rng(0).standard_normal((20, GROUPS.n_features))
    result = SOLVERS[name](
        LeastSquares(A, np.zeros(20)), GROUPS, tau=1.0, per_group=per_group, max_iter=5
    )
    assert not np.any(result.solution)
    assert result.objective == 0.0
