"""Frank–Wolfe and CoGEnT under the latent overlapping group norm ``||w||_G <= tau``."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sum_of_squares import SumOfSquares

from projections.groups import OverlappingGroups
from projections.solvers import LeastSquares, Logistic, cogent, frank_wolfe
from projections.solvers.conditional_gradient import project_group_norms

GROUPS = OverlappingGroups.contiguous(8, 6, 2)  # p = 34, neighbours share 2 coordinates
MINIMAL_LOSS = SumOfSquares(GROUPS.n_features)  # no lipschitz(), no refit
SOLVERS = {"frank_wolfe": frank_wolfe, "cogent": cogent}


@functools.cache
def random_least_squares(seed: int, n_samples: int = 60) -> LeastSquares:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_samples, GROUPS.n_features))
    return LeastSquares(A, rng.standard_normal(n_samples))


def simplex_ball(norms: np.ndarray, tau: float) -> np.ndarray:
    """The l1-ball projection of non-negative ``norms`` by bisection on the threshold: slow,
    and independent of the sort-based one under test."""
    if norms.sum() <= tau:
        return norms
    lo, hi = 0.0, float(norms.max())
    for _ in range(60):  # the bracket shrinks to 1e-18 of max(norms)
        theta = (lo + hi) / 2
        lo, hi = (theta, hi) if np.maximum(norms - theta, 0).sum() > tau else (lo, theta)
    return np.maximum(norms - hi, 0.0)


@functools.cache
def reference_minimum(loss: LeastSquares, tau: float, iterations: int = 20000) -> float:
    """``min f(sum_g v_g) s.t. sum_g ||v_g|| <= tau`` by projected gradient on the duplicated
    variables ``v = (v_g)``, one copy of each coordinate per group holding it: ``w = B v``
    sums the copies, the gradient in ``v`` is ``B^T grad f(w)``, and the projection rescales
    each ``v_g`` to the l1-ball projection of the group norms. Step ``1 / (2 L)``: every
    coordinate lies in at most 2 groups, so ``||B||^2 = 2``."""
    copies = np.concatenate(GROUPS.members)  # B as an index: copy j is coordinate copies[j]
    group_of = np.repeat(np.arange(GROUPS.n_groups), [m.size for m in GROUPS.members])
    v = np.zeros(copies.size)
    step = 1.0 / (2.0 * loss.lipschitz())
    for _ in range(iterations):
        v = v - step * loss.gradient(np.bincount(copies, v, GROUPS.n_features))[copies]
        norms = np.sqrt(np.bincount(group_of, v**2, GROUPS.n_groups))
        shrunk = simplex_ball(norms, tau)
        v = v * np.where(norms > 0, shrunk / np.where(norms > 0, norms, 1.0), 0.0)[group_of]
    return loss.value(np.bincount(copies, v, GROUPS.n_features))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cogent_reaches_the_reference_minimum_on_an_active_constraint(seed):
    loss, tau = random_least_squares(seed), 0.5
    result = cogent(loss, GROUPS, tau=tau, max_iter=2000, tol=1e-9)
    assert result.converged
    assert result.details["gap"] <= 1e-9
    assert result.objective == pytest.approx(reference_minimum(loss, tau), rel=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_frank_wolfe_is_certified_by_its_gap_against_the_reference(seed):
    # FW converges as O(1/t) when the optimum sits on the ball's boundary: a loose tolerance
    loss, tau = random_least_squares(seed), 0.5
    result = frank_wolfe(loss, GROUPS, tau=tau, max_iter=5000, tol=1e-4)
    best = reference_minimum(loss, tau)
    assert result.converged
    assert result.details["gap"] <= 1e-4
    assert best - 1e-9 <= result.objective <= best + result.details["gap"]


@pytest.mark.parametrize("name", list(SOLVERS))
def test_both_reach_the_reference_when_the_optimum_is_inside_the_ball(name):
    loss, tau = random_least_squares(1), 10.0
    result = SOLVERS[name](loss, GROUPS, tau=tau, max_iter=20000, tol=1e-9)
    assert result.converged
    assert result.objective == pytest.approx(reference_minimum(loss, tau), rel=1e-6)


@pytest.mark.parametrize("name", list(SOLVERS))
def test_every_iterate_is_feasible_by_its_atom_decomposition(name):
    loss, tau = random_least_squares(3, n_samples=25), 1.5
    result = SOLVERS[name](loss, GROUPS, tau=tau, max_iter=300, tol=0.0)
    bounds = result.details["atom_bounds"]
    assert bounds.shape == result.history.shape
    assert np.all(bounds <= tau * (1 + 1e-9))
    atoms = result.details["atoms"]
    w = np.zeros(GROUPS.n_features)
    for g, v in atoms.items():
        w[GROUPS.members[g]] += v
    np.testing.assert_allclose(w, result.solution, atol=1e-12)
    assert sum(np.linalg.norm(v) for v in atoms.values()) <= tau * (1 + 1e-9)


def test_the_gap_bounds_the_suboptimality_at_every_iterate():
    loss, tau = random_least_squares(0), 0.5
    result = frank_wolfe(loss, GROUPS, tau=tau, max_iter=200, tol=0.0)
    best = reference_minimum(loss, tau)
    assert np.all(result.history - best <= result.details["gaps"] + 1e-12)
    assert np.all(result.details["gaps"] >= -1e-12)


def test_line_searched_frank_wolfe_never_increases_the_objective():
    loss = random_least_squares(4, n_samples=20)
    result = frank_wolfe(loss, GROUPS, tau=3.0, max_iter=400, tol=0.0)
    assert np.all(np.diff(result.history) <= 1e-12 * result.history[0])
    assert result.history[-1] < result.history[0]


def test_the_first_step_lands_on_the_minimum_along_the_segment_to_the_best_atom():
    loss, tau = random_least_squares(5), 3.0
    grad = loss.gradient(np.zeros(GROUPS.n_features))
    best = max(range(GROUPS.n_groups), key=lambda g: np.linalg.norm(grad[GROUPS.members[g]]))
    atom = np.zeros(GROUPS.n_features)
    members = GROUPS.members[best]
    atom[members] = -tau * grad[members] / np.linalg.norm(grad[members])
    along = minimize_scalar(
        lambda gamma: loss.value(gamma * atom), bounds=(0, 1), method="bounded",
        options={"xatol": 1e-12},
    )  # fmt: skip
    result = frank_wolfe(loss, GROUPS, tau=tau, max_iter=1, tol=0.0)
    assert list(result.details["atoms"]) == [best]
    assert result.step == pytest.approx(along.x, rel=1e-6)
    assert result.objective == pytest.approx(along.fun, rel=1e-12)


def test_cogent_backward_steps_stay_within_eta_of_the_forward_decrease():
    loss, tau, eta = random_least_squares(1), 2.0, 0.5
    result = cogent(loss, GROUPS, tau=tau, eta=eta, max_iter=200, tol=1e-10)
    tests = result.details["backward"]
    assert result.details["removed"] >= 1  # this instance does drop atoms
    removed = [(it, rise, allowed) for it, rise, allowed in tests if rise <= allowed]
    assert len(removed) == result.details["removed"]
    history = dict(zip(result.history_iterations, result.history, strict=True))
    for it, rise, allowed in removed:
        # the iteration still decreased f by at least (1 - eta) of its forward decrease
        assert rise <= allowed
        assert history[it] <= history[it - 1] - allowed / eta + rise + 1e-12


def test_cogent_with_eta_zero_never_keeps_an_iteration_that_raised_the_objective():
    loss = random_least_squares(2, n_samples=30)
    result = cogent(loss, GROUPS, tau=2.0, eta=0.0, max_iter=200, tol=0.0)
    assert np.all(np.diff(result.history) <= 1e-12 * result.history[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("per_group", "tau"), [(None, 2.0), (2, 1.0), (2, 2.0)])
def test_the_backtracked_enhancement_reaches_the_same_optimum_in_fewer_iterations(
    seed, per_group, tau
):
    loss = random_least_squares(seed)
    runs = {
        rule: cogent(
            loss, GROUPS, tau=tau, per_group=per_group, enhance_rule=rule, max_iter=5000, tol=1e-8
        )
        for rule in ("safe", "backtracking")
    }
    assert all(run.converged for run in runs.values())
    # both gaps are <= 1e-8, so the two objectives are within 1e-8 of the same minimum
    assert runs["backtracking"].objective == pytest.approx(runs["safe"].objective, abs=2e-8)
    assert runs["backtracking"].iterations < runs["safe"].iterations
    assert np.all(np.diff(runs["backtracking"].history) <= 1e-12 * runs["safe"].history[0])
    assert "(backtracking)" in runs["backtracking"].message


def test_the_open_loop_rule_runs_on_a_loss_without_a_closed_form_line_search():
    rng = np.random.default_rng(5)
    A = rng.standard_normal((80, GROUPS.n_features))
    loss = Logistic(A, np.where(A[:, :6].sum(axis=1) > 0, 1.0, -1.0))
    result = frank_wolfe(loss, GROUPS, tau=2.0, max_iter=300, tol=0.0)
    assert "step rule open_loop" in result.message
    assert result.step == pytest.approx(2.0 / 301.0)  # 2 / (t + 2), t = 299 counted from 0
    assert result.history[-1] < 0.8 * result.history[0]
    assert np.all(result.details["atom_bounds"] <= 2.0 * (1 + 1e-9))


def test_the_group_norm_projection_matches_bisection():
    rng = np.random.default_rng(6)
    for _ in range(20):
        norms, tau = np.abs(rng.standard_normal(7)), float(rng.uniform(0.1, 4.0))
        np.testing.assert_allclose(
            project_group_norms(norms, tau), simplex_ball(norms, tau), atol=1e-12
        )


def test_a_time_limit_and_a_callback_stop_the_run_like_the_other_solvers():
    loss = random_least_squares(0)
    seen = []
    result = cogent(
        loss, GROUPS, tau=0.5, tol=0.0,
        callback=lambda it, w, value: seen.append(value) or it == 3,
    )  # fmt: skip
    assert result.status == "callback"
    assert result.iterations == 3
    assert seen == list(result.history[1:])
    assert frank_wolfe(loss, GROUPS, tau=0.5, tol=0.0, time_limit=1e-9).status == "time_limit"


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda loss: frank_wolfe(loss, GROUPS, tau=0.0), ValueError, "tau"),
        (lambda loss: cogent(loss, GROUPS, tau=-1.0), ValueError, "tau"),
        (lambda loss: frank_wolfe(loss, GROUPS, tau=float("inf")), ValueError, "tau"),
        (
            lambda loss: frank_wolfe(loss, OverlappingGroups.contiguous(3, 6, 2), tau=1.0),
            ValueError,
            "groups act on 14 features, the loss has 34",
        ),
        (lambda loss: cogent(loss, [[0, 1]], tau=1.0), ValueError, "groups must"),
        (
            lambda loss: frank_wolfe(loss, GROUPS, tau=1, step_rule="armijo"),
            ValueError,
            "step_rule",
        ),
        (
            lambda loss: frank_wolfe(MINIMAL_LOSS, GROUPS, tau=1, step_rule="exact"),
            ValueError,
            "step_rule='exact' needs a quadratic loss",
        ),
        (lambda loss: cogent(loss, GROUPS, tau=1.0, eta=1.0), ValueError, "eta"),
        (lambda loss: cogent(loss, GROUPS, tau=1.0, eta=-0.1), ValueError, "eta"),
        (lambda loss: cogent(loss, GROUPS, tau=1.0, enhance_steps=-1), ValueError, "enhance_steps"),
        (
            lambda loss: cogent(loss, GROUPS, tau=1.0, enhance_rule="exact"),
            ValueError,
            "enhance_rule",
        ),
        (lambda loss: cogent(loss, GROUPS, tau=1.0, step=0), ValueError, "step"),
        (lambda loss: cogent(MINIMAL_LOSS, GROUPS, tau=1.0), ValueError, "step is req"),
        (lambda loss: frank_wolfe(loss, GROUPS, tau=1.0, max_iter=-1), ValueError, "max_iter"),
        (lambda loss: frank_wolfe(loss, GROUPS, tau=1.0, tol=-1), ValueError, "tol"),
        (lambda loss: frank_wolfe(object(), GROUPS, tau=1.0), TypeError, "value, gradient"),
        (lambda loss: cogent(loss, GROUPS, tau=1.0, callback=3), TypeError, "callback"),
    ],
)
def test_bad_input_is_refused_with_an_error_naming_the_argument(call, error, name):
    loss = random_least_squares(0)
    with pytest.raises(error, match=name):
        call(loss)


class _PlainLoss:
    """``loss`` without ``values_after_removing``: CoGEnT's backward step evaluates
    ``value(w - v_g)`` for each group instead."""

    def __init__(self, loss) -> None:
        self.feature_shape, self.loss = loss.feature_shape, loss

    def value(self, w):
        return self.loss.value(w)

    def gradient(self, w):
        return self.loss.gradient(w)


def test_least_squares_values_after_removing_match_whole_evaluations():
    loss = random_least_squares(7)
    rng = np.random.default_rng(7)
    w = rng.standard_normal(GROUPS.n_features)
    parts = [(GROUPS.members[g], rng.standard_normal(6)) for g in (0, 3, 7)]
    expected = []
    for index, u in parts:
        trial = w.copy()
        trial[index] -= u
        expected.append(loss.value(trial))
    np.testing.assert_allclose(loss.values_after_removing(w, parts), expected, rtol=1e-12)


def test_cogent_takes_the_same_steps_with_or_without_the_fast_removal():
    loss = random_least_squares(1)
    fast = cogent(loss, GROUPS, tau=2.0, max_iter=60, tol=0.0)
    plain = cogent(
        _PlainLoss(loss), GROUPS, tau=2.0, max_iter=60, tol=0.0, step_rule="open_loop",
        step=1.0 / loss.lipschitz(),
    )  # fmt: skip
    exact_fast = cogent(loss, GROUPS, tau=2.0, max_iter=60, tol=0.0, step_rule="open_loop")
    assert fast.details["removed"] >= 1
    assert [b[0] for b in plain.details["backward"]] == [
        b[0] for b in exact_fast.details["backward"]
    ]
    np.testing.assert_allclose(plain.history, exact_fast.history, rtol=1e-10)


@pytest.mark.parametrize("enhance_steps", [1, 3])
def test_cogent_evaluates_no_restricted_gradient_it_does_not_use(monkeypatch, enhance_steps):
    """The enhancement's restricted gradient feeds the next restricted step only: the whole
    gradient after the enhancement is computed anew, so one enhancement step needs none."""
    calls = []
    restricted = LeastSquares.restricted

    def counting(self, index):
        sub = restricted(self, index)
        gradient = sub.gradient
        sub.gradient = lambda w: calls.append(1) or gradient(w)
        return sub

    monkeypatch.setattr(LeastSquares, "restricted", counting)
    result = cogent(
        random_least_squares(2), GROUPS, tau=2.0, max_iter=20, tol=0.0,
        enhance_steps=enhance_steps,
    )  # fmt: skip
    assert len(calls) <= (enhance_steps - 1) * result.iterations
    if enhance_steps > 1:
        assert calls  # the steps after the first do use it
