"""AssignmentProblem (assignment/engine/problem.py): validation that names the field, the
priors of two and of K labels, feasibility and the eligibility mask."""

from __future__ import annotations

import numpy as np
import pytest

from assignment.engine import AssignmentProblem, QualityByCategory

CAPS = {"max_workers_per_task": 2, "max_tasks_per_worker": 2, "budget": 4}


def problem_with(**changes):
    """A valid 3 workers x 4 tasks problem with ``changes`` applied to its arguments."""
    kwargs = {"quality": np.full((3, 4), 0.7), **CAPS, **changes}
    return AssignmentProblem(kwargs.pop("quality"), **kwargs)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"quality": np.full(4, 0.7)}, r"quality must be a 2-D workers x tasks matrix"),
        ({"quality": [["a"] * 4] * 3}, r"quality must hold numbers"),
        (
            {"quality": [[0.7] * 4, [0.7, np.nan, 0.7, 0.7], [0.7] * 4]},
            r"quality must be finite.*worker 1, task 1",
        ),
        (
            {"quality": [[0.7] * 4, [0.7] * 4, [0.7, 0.7, 0.7, 1.2]]},
            r"quality must be in \[0, 1\], got 1.2 at worker 2, task 3",
        ),
        ({"max_workers_per_task": -1}, r"max_workers_per_task must be non-negative, got -1"),
        (
            {"max_workers_per_task": [1, 2]},
            r"max_workers_per_task must be a non-negative integer or one per task \(length 4\)",
        ),
        (
            {"max_workers_per_task": [1, 2, 2.5, 1]},
            r"max_workers_per_task must be whole numbers, got 2.5 at task 2",
        ),
        (
            {"max_tasks_per_worker": [1, np.inf, 1]},
            r"max_tasks_per_worker must be finite.*worker 1",
        ),
        (
            {"max_tasks_per_worker": "two"},
            r"max_tasks_per_worker must be a non-negative integer or one per worker",
        ),
        ({"budget": -3}, r"budget must be non-negative, got -3"),
        ({"budget": 2.5}, r"budget must be a whole number, got 2.5"),
        ({"budget": True}, r"budget must be a non-negative integer, got True"),
        ({"budget": "4"}, r"budget must be a non-negative integer"),
        ({"budget": None}, r"budget must be a non-negative integer, got None"),
        ({"eligible": np.ones((4, 3), bool)}, r"eligible must have the shape of quality \(3, 4\)"),
        ({"eligible": np.full((3, 4), 2)}, r"eligible must be a bool \(or 0/1\) matrix"),
    ],
)
def test_a_bad_argument_is_refused_naming_the_field(changes, message):
    with pytest.raises(ValueError, match=message):
        problem_with(**changes)


@pytest.mark.parametrize(
    "quality",
    [np.full((3, 0), 0.7), QualityByCategory(np.full((3, 2), 0.7), np.zeros(0, dtype=int))],
    ids=["dense", "by category"],
)
@pytest.mark.parametrize("n_labels", [2, 3])
@pytest.mark.parametrize("with_confusion", [False, True])
def test_a_problem_without_tasks_is_refused_because_a_mean_over_no_tasks_does_not_exist(
    quality, n_labels, with_confusion
):
    confusion = np.tile(np.eye(n_labels), (3, 1, 1)) if with_confusion else None
    with pytest.raises(ValueError, match=r"at least one task \(column\).*mean over its tasks"):
        AssignmentProblem(quality, **CAPS, n_labels=n_labels, confusion=confusion)


def test_whole_floats_and_numpy_integers_are_accepted_as_caps_and_budget():
    problem = problem_with(
        max_workers_per_task=2.0, max_tasks_per_worker=[1, 2, 3], budget=np.int64(5)
    )
    np.testing.assert_array_equal(problem.max_workers_per_task, [2, 2, 2, 2])
    np.testing.assert_array_equal(problem.max_tasks_per_worker, [1, 2, 3])
    assert problem.budget == 5
    assert isinstance(problem.budget, int)
    assert not problem.max_tasks_per_worker.flags.writeable


# --------------------------------------------------------------------------- feasibility


def test_feasibility_checks_every_cap_and_the_eligibility_mask():
    eligible = np.ones((3, 4), bool)
    eligible[0, 0] = False
    problem = problem_with(eligible=eligible, max_tasks_per_worker=[2, 1, 2], budget=3)
    ok = np.zeros((3, 4), bool)
    ok[[0, 1, 2], [1, 2, 3]] = True
    assert problem.is_feasible(ok)
    ineligible = ok.copy()
    ineligible[0, 0] = True
    ineligible[0, 1] = False  # worker 0 stays within its cap: only the mask is broken
    assert not problem.is_feasible(ineligible)
    over_worker = ok.copy()
    over_worker[1, 3] = True  # worker 1 may take one task
    over_worker[0, 1] = False
    assert not problem.is_feasible(over_worker)
    over_task = np.zeros((3, 4), bool)
    over_task[:, 2] = True  # three workers on a task capped at 2
    assert not problem.is_feasible(over_task)
    over_budget = ok.copy()
    over_budget[2, 1] = True  # four pairs, budget 3
    assert not problem.is_feasible(over_budget)
    assert not problem.is_feasible(np.zeros((4, 3), bool))


def test_the_mask_zeroes_exactly_the_ineligible_pairs():
    eligible = np.array([[1, 0, 1, 1], [1, 1, 0, 1], [0, 1, 1, 1]], bool)
    weights = np.arange(1.0, 13.0).reshape(3, 4)
    np.testing.assert_array_equal(
        problem_with(eligible=eligible).mask(weights), np.where(eligible, weights, 0)
    )
    np.testing.assert_array_equal(problem_with().mask(weights), weights)


def test_quality_by_category_reads_the_table_through_each_task_s_category():
    table = np.array([[0.6, 0.9], [0.8, 0.55], [0.7, 0.7]])
    problem = problem_with(quality=QualityByCategory(table, [1, 0, 0, 1]))
    assert problem.by_category
    np.testing.assert_array_equal(problem.quality, table[:, [1, 0, 0, 1]])
    np.testing.assert_array_equal(problem.quality_at([0, 1, 2], [0, 1, 3]), [0.9, 0.8, 0.7])


# --------------------------------------------------------------------------- priors


def test_the_default_prior_is_one_half_for_two_labels_and_uniform_for_k():
    q = np.full((3, 4), 0.7)
    caps = {"max_workers_per_task": 2, "max_tasks_per_worker": 2, "budget": 4}
    binary = AssignmentProblem(q, **caps)
    assert binary.n_labels == 2
    np.testing.assert_array_equal(binary.prior, 0.5)
    np.testing.assert_array_equal(binary.prior_distribution, 0.5)
    four = AssignmentProblem(q, n_labels=4, **caps)
    np.testing.assert_array_equal(four.prior_distribution, np.full((4, 4), 0.25))


def test_a_distribution_for_every_task_is_broadcast_and_rows_are_normalised():
    q = np.full((3, 5), 0.7)
    caps = {"max_workers_per_task": 2, "max_tasks_per_worker": 2, "budget": 4}
    problem = AssignmentProblem(q, prior=[0.2, 0.3, 0.5], n_labels=3, **caps)
    np.testing.assert_array_equal(problem.prior_distribution, np.tile([0.2, 0.3, 0.5], (5, 1)))
    rows = np.tile([0.2, 0.3, 0.5 + 5e-10], (5, 1))  # off by less than 1e-9: accepted
    problem = AssignmentProblem(q, prior=rows, n_labels=3, **caps)
    np.testing.assert_allclose(problem.prior_distribution.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert not problem.prior_distribution.flags.writeable


def test_two_labels_given_as_distributions_read_p_of_label_one_exactly():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 7)
    caps = {"max_workers_per_task": 2, "max_tasks_per_worker": 2, "budget": 4}
    rows = AssignmentProblem(np.full((3, 7), 0.7), prior=np.column_stack([1 - p, p]), **caps)
    np.testing.assert_array_equal(rows.prior, p)
    np.testing.assert_array_equal(rows.prior_distribution[:, 1], p)
    np.testing.assert_array_equal(rows.prior_distribution[:, 0], 1 - p)


def test_the_two_label_prior_does_not_exist_for_k_labels():
    rng = np.random.default_rng(0)
    problem = AssignmentProblem(
        rng.uniform(1 / 3, 0.95, (10, 24)),
        prior=rng.dirichlet(np.full(3, 4.0), 24),
        n_labels=3,
        max_workers_per_task=3,
        max_tasks_per_worker=6,
        budget=50,
    )
    with pytest.raises(ValueError, match="two-label problem; this one has 3 labels"):
        _ = problem.prior


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_labels": 1}, "n_labels must be an integer >= 2, got 1"),
        ({"n_labels": 3.0}, "n_labels must be an integer >= 2"),
        ({"n_labels": True}, "n_labels must be an integer >= 2"),
        ({"n_labels": 3, "prior": 0.3}, r"P\(y = 1\) \(a number or one per task\) is for two"),
        ({"n_labels": 3, "prior": np.full(4, 0.3)}, r"is for two labels; with n_labels=3 give"),
        ({"n_labels": 3, "prior": np.full((4, 2), 0.5)}, r"shape \(4, 3\).*got shape \(4, 2\)"),
        ({"n_labels": 3, "prior": [0.5, 0.5]}, r"got shape \(2,\)"),
        (
            {"n_labels": 3, "prior": [[0.5, 0.5, 0.0]] * 4},
            r"finite and positive .* got 0.0 at task 0, label 2",
        ),
        ({"n_labels": 3, "prior": [0.5, np.nan, 0.5]}, "got nan at label 1"),
        (
            {"n_labels": 3, "prior": [[0.2, 0.3, 0.5]] * 3 + [[0.2, 0.3, 0.6]]},
            r"sum to 1 over the 3 labels \(within 1e-09\), got 1.1 at task 3",
        ),
        ({"n_labels": 3, "prior": [[0.2, 0.3, 0.5 + 2e-9]] * 4}, "sum to 1 over the 3 labels"),
        ({"prior": [[0.5, 0.6]] * 4}, r"sum to 1 over the 2 labels"),
        ({"prior": [[1e-12, 1.0]] * 4}, r"open interval \(0, 1\), got 1.0 at task 0"),
        ({"prior": [0.5, 0.5]}, r"one per task \(length 4\).*\(4, 2\); got shape \(2,\)"),
        ({"n_labels": 3, "prior": "uniform"}, "prior must be numbers"),
    ],
)
def test_bad_labels_or_priors_are_refused_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AssignmentProblem(
            np.full((3, 4), 0.7),
            max_workers_per_task=2,
            max_tasks_per_worker=2,
            budget=4,
            **kwargs,
        )


# --------------------------------------------------------------------------- confusion matrices


def confusion_of(q=0.7, n=3, k=2) -> np.ndarray:
    """One-coin matrices of accuracy ``q``, shape (n, k, k)."""
    c = np.full((n, k, k), (1 - q) / (k - 1))
    c[:, np.arange(k), np.arange(k)] = q
    return c


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confusion": confusion_of(n=2)}, r"confusion must have shape .* \(3, 2, 2\); got \(2"),
        (
            {"confusion": confusion_of(k=3), "n_labels": 2},
            r"confusion must have shape \(n_workers, n_labels, n_labels\) = \(3, 2, 2\)",
        ),
        ({"confusion": [["x"]]}, r"confusion must be numbers"),
        (
            {"confusion": np.where(np.arange(2) == 0, np.nan, confusion_of())},
            r"confusion must hold probabilities in \[0, 1\], got nan at worker 0",
        ),
        (
            {"confusion": confusion_of() + np.multiply.outer([0, 1, 0], [[0, 0], [0.2, 0]])},
            r"confusion's rows must be distributions .* got 1\.2.* at worker 1, true label 1",
        ),
    ],
)
def test_bad_confusion_matrices_are_refused_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        problem_with(**kwargs)


def test_confusion_is_kept_read_only_and_symmetric_drops_it():
    problem = problem_with(confusion=confusion_of(0.8, n=3, k=3), n_labels=3)
    assert problem.confusion.shape == (3, 3, 3)
    assert not problem.confusion.flags.writeable
    plain = problem.symmetric()
    assert plain.confusion is None
    assert plain.quality is problem.quality
    assert plain.symmetric() is plain
    assert problem_with().confusion is None


def test_the_structure_is_built_once_by_the_constructor_and_holds_its_caps():
    problem = problem_with(max_workers_per_task=[1, 2, 0, 3], budget=1_000)
    structure = problem.structure
    assert vars(problem)["structure"] is structure  # an attribute, not rebuilt on each read
    assert problem.max_workers_per_task is structure.caps2
    assert problem.max_tasks_per_worker is structure.caps1
    assert structure.shape == problem.shape
    assert problem.budget == 1_000  # as given; the structure clips its total to n * m
    assert structure.total == 12
    assert not problem.max_workers_per_task.flags.writeable
