"""MultiTaskProblem: padding, λ_max in closed form, the duality gap, and refused inputs."""

import numpy as np
import pytest
from mtfl_instances import objective, problem_of, random_tasks

from projections.multitask import MultiTaskProblem, mtfl_path


def test_lambda_max_is_the_largest_row_norm_of_the_tasks_correlations():
    X, Y, _ = random_tasks(0, samples=(5, 8, 3, 7))
    rows = [
        np.linalg.norm([x[:, j] @ y for x, y in zip(X, Y, strict=True)])
        for j in range(X[0].shape[1])
    ]
    assert MultiTaskProblem(X, Y).lambda_max == pytest.approx(max(rows), rel=1e-12)


def test_tasks_of_different_sizes_give_the_objective_computed_task_by_task():
    problem, X, Y = problem_of(1, samples=(4, 11, 6))
    W = np.random.default_rng(1).standard_normal((problem.n_features, problem.n_tasks))
    cert = problem.certificate(W, 0.7)
    assert cert.primal == pytest.approx(objective(X, Y, W, 0.7), rel=1e-12)
    assert problem.n_samples == (4, 11, 6)


def test_the_certificate_point_is_dual_feasible_and_below_every_primal_value():
    problem, _, _ = problem_of(2)
    rng = np.random.default_rng(2)
    lam = 0.3 * problem.lambda_max
    duals = []
    for _ in range(20):
        W = rng.standard_normal((problem.n_features, problem.n_tasks))
        cert = problem.certificate(W, lam)
        feasibility = np.linalg.norm(problem.correlations(cert.theta), axis=1)
        assert feasibility.max() <= 1 + 1e-12
        assert cert.gap >= 0
        duals.append(cert.dual)
        primals = [problem.certificate(V, lam).primal for V in rng.standard_normal((5, *W.shape))]
        assert max(duals) <= min(primals)


def test_the_lipschitz_constant_is_the_largest_squared_spectral_norm():
    problem, X, _ = problem_of(3, samples=(3, 12))
    assert problem.lipschitz() == pytest.approx(max(np.linalg.norm(x, 2) ** 2 for x in X))


def test_a_path_without_screening_computes_the_lipschitz_constant_once(monkeypatch):
    problem, _, _ = problem_of(3, samples=(6, 9))
    calls = []
    eigvalsh = np.linalg.eigvalsh

    def counted(a):
        calls.append(a.shape)
        return eigvalsh(a)

    monkeypatch.setattr(np.linalg, "eigvalsh", counted)
    mtfl_path(problem, n_lambdas=8, min_ratio=0.1, screening=None)
    assert len(calls) == 1


def test_a_restricted_problem_has_the_lipschitz_constant_of_its_own_columns():
    problem, X, _ = problem_of(3, samples=(3, 12))
    assert problem.lipschitz() > 0  # computed and kept on the full problem first
    keep = np.zeros(problem.n_features, dtype=bool)
    keep[[0, 2]] = True
    expected = max(np.linalg.norm(x[:, keep], 2) ** 2 for x in X)
    assert problem.restrict(keep).lipschitz() == pytest.approx(expected, rel=1e-12)
    assert expected < problem.lipschitz()


def test_restricting_to_features_keeps_the_responses_and_those_columns():
    problem, X, _ = problem_of(4)
    keep = np.array([True, False, True, True, False, False, True, False])
    reduced = problem.restrict(keep)
    assert reduced.n_features == 4
    np.testing.assert_array_equal(reduced.y, problem.y)
    np.testing.assert_array_equal(reduced.X[1, : X[1].shape[0]], X[1][:, keep])


def test_a_three_dimensional_array_is_read_as_tasks_of_equal_size():
    X = np.random.default_rng(5).standard_normal((3, 4, 6))
    Y = X[:, :, 0]
    problem = MultiTaskProblem(X, Y)
    assert (problem.n_tasks, problem.n_features, problem.n_samples) == (3, 6, (4, 4, 4))


@pytest.mark.parametrize(
    ("X", "Y", "match"),
    [
        ("abc", [np.zeros(2)], "X must be a sequence"),
        ([], [], "X has no tasks"),
        ([np.zeros((2, 3))], [np.zeros(2), np.zeros(2)], "X has 1 tasks but Y has 2"),
        ([np.zeros((2, 3)), np.zeros((2, 4))], [np.zeros(2)] * 2, r"X\[1\] has 4 features"),
        ([np.zeros((2, 3))], [np.zeros(3)], r"X\[0\] has 2 samples but Y\[0\] has 3"),
        ([np.full((2, 3), np.nan)], [np.zeros(2)], r"X\[0\] must be finite"),
        ([np.zeros((2, 3))], [np.array([1.0, np.inf])], r"Y\[0\] must be finite"),
        ([np.zeros((2, 3), dtype=bool)], [np.zeros(2)], r"X\[0\] must be real-valued"),
        ([np.zeros(3)], [np.zeros(3)], r"X\[0\] must be a real 2-d array"),
        (np.zeros((2, 3)), np.zeros((2, 3)), "X must be a sequence of 2-d arrays or one 3-d"),
        ([np.zeros((0, 3))], [np.zeros(0)], r"X\[0\] has no samples"),
        ([np.zeros((2, 0))], [np.zeros(2)], "X has no features"),
    ],
)
def test_bad_tasks_are_refused_naming_the_argument(X, Y, match):
    with pytest.raises(ValueError, match=match):
        MultiTaskProblem(X, Y)


@pytest.mark.parametrize("method", ["certificate", "predict"])
def test_weights_of_the_wrong_shape_are_refused_naming_both_shapes(method):
    problem = MultiTaskProblem([np.ones((4, 5)), np.ones((3, 5))], [np.ones(4), np.ones(3)])
    args = (np.zeros((3, 3)), 0.5) if method == "certificate" else (np.zeros((3, 3)),)
    with pytest.raises(
        ValueError,
        match=r"W must have shape \(n_features, n_tasks\) = \(5, 2\), got shape \(3, 3\)",
    ):
        getattr(problem, method)(*args)
