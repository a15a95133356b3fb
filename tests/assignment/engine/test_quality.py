"""Worker quality from gold questions (assignment.engine.quality)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assignment.engine.quality import (
    DEFAULT_CATEGORY_STRENGTH,
    DEFAULT_WORKER_STRENGTH,
    QualityEstimate,
    estimate_quality,
    estimate_quality_from_counts,
)


def simulate_gold(rng, true_accuracy, answers_per_cell):
    """Gold answers, shuffled: ``answers_per_cell[i, c]`` answers by worker i in category c."""
    n_workers, n_categories = true_accuracy.shape
    counts = np.broadcast_to(answers_per_cell, true_accuracy.shape).ravel()
    cell = np.repeat(np.arange(n_workers * n_categories), counts)
    rng.shuffle(cell)
    worker, category = np.divmod(cell, n_categories)
    correct = rng.random(cell.size) < true_accuracy[worker, category]
    return worker, category, correct


def hierarchical_accuracies(rng, n_workers, n_categories, worker_strength, category_strength):
    """Accuracies drawn from the model ``estimate_quality`` assumes (population mean 0.75)."""
    mu = 0.75
    p = rng.beta(mu * worker_strength, (1 - mu) * worker_strength, size=n_workers)
    return rng.beta(
        p[:, None] * category_strength,
        (1 - p[:, None]) * category_strength,
        size=(n_workers, n_categories),
    )


def estimate(worker, category, correct, n_workers, task_categories=(0,), **kwargs):
    return estimate_quality(
        worker_index=worker,
        item_category=category,
        correct=correct,
        n_workers=n_workers,
        task_categories=task_categories,
        **kwargs,
    )


def test_the_estimates_are_the_documented_posterior_means():
    # worker 0: category 0 2/2 right, category 1 0/1; worker 1: category 1 1/1; worker 2: none.
    est = estimate(
        [0, 1, 0, 0], [0, 1, 1, 0], [True, True, False, True], 3, [1, 0, 2],
        n_categories=3, worker_strength=4.0, category_strength=2.0,
    )  # fmt: skip
    mu0 = (3 + 1) / (4 + 2)
    a = np.array([(2 + 4 * mu0) / (3 + 4), (1 + 4 * mu0) / (1 + 4), mu0])
    q = np.array(
        [
            [(2 + 2 * a[0]) / (2 + 2), (0 + 2 * a[0]) / (1 + 2), a[0]],
            [a[1], (1 + 2 * a[1]) / (1 + 2), a[1]],
            [mu0, mu0, mu0],
        ]
    )
    assert isinstance(est, QualityEstimate)
    assert est.population_accuracy == pytest.approx(mu0)
    np.testing.assert_allclose(est.worker_accuracy, a, rtol=1e-15)
    np.testing.assert_allclose(est.by_category, q, rtol=1e-15)
    np.testing.assert_allclose(est.matrix, q[:, [1, 0, 2]], rtol=1e-15)
    assert est.strengths == (4.0, 2.0)
    assert est.matrix.dtype == np.float64
    assert est.by_category.dtype == np.float64


def test_estimation_recovers_known_worker_accuracies_within_the_binomial_noise():
    rng = np.random.default_rng(20130617)
    n_workers, n_categories, per_cell = 200, 3, 300
    base = rng.uniform(0.6, 0.9, size=(n_workers, 1))
    truth = base + rng.uniform(-0.1, 0.1, size=(n_workers, n_categories))
    worker, category, correct = simulate_gold(rng, truth, per_cell)

    est = estimate(worker, category, correct, n_workers, np.arange(n_categories))

    s, t = DEFAULT_WORKER_STRENGTH, DEFAULT_CATEGORY_STRENGTH
    n_worker = per_cell * n_categories
    # Binomial noise of each cell's fraction correct, and the bias shrinkage can add: the cell
    # is pulled by t / (n + t) towards the worker's estimate, itself at most s / (n_i + s) away
    # from the worker's mean accuracy.
    noise = np.sqrt(truth * (1 - truth) / per_cell)
    worker_mean = truth.mean(axis=1, keepdims=True)
    bias = t / (per_cell + t) * (np.abs(truth - worker_mean) + s / (n_worker + s))
    error = np.abs(est.by_category - truth)

    assert np.all(error <= 5 * noise + bias)  # 5 sigma in each of 600 cells
    expected_mean = np.sqrt(2 / np.pi) * noise.mean() + bias.mean()
    assert error.mean() < 1.25 * expected_mean
    assert error.mean() < 0.03
    assert error.max() < 0.1
    assert np.abs(est.worker_accuracy - worker_mean[:, 0]).max() < 5 * noise.max() / np.sqrt(3)


def test_a_worker_without_gold_gets_the_population_estimate_for_every_category():
    rng = np.random.default_rng(1)
    truth = rng.uniform(0.5, 0.95, size=(5, 4))
    worker, category, correct = simulate_gold(rng, truth, 20)
    est = estimate(worker, category, correct, 7, [3, 0, 1, 2, 2])  # workers 5 and 6 have none

    assert est.population_accuracy == pytest.approx((correct.sum() + 1) / (correct.size + 2))
    for i in (5, 6):
        assert est.gold_counts[i] == 0
        assert est.worker_accuracy[i] == est.population_accuracy
        assert np.all(est.by_category[i] == est.population_accuracy)
        assert np.all(est.matrix[i] == est.population_accuracy)


def test_shrinkage_pulls_a_worker_with_one_gold_answer_towards_the_population_but_barely_moves_one_with_a_thousand():  # noqa: E501
    rng = np.random.default_rng(2)
    # Workers 0..49: 40 answers each at accuracy 0.7 (they set the population); worker 50: one
    # correct answer; worker 51: 600 correct out of 1,000.
    crowd_worker = np.repeat(np.arange(50), 40)
    crowd_correct = rng.random(crowd_worker.size) < 0.7
    worker = np.concatenate([crowd_worker, [50], np.full(1000, 51)])
    correct = np.concatenate([crowd_correct, [True], np.arange(1000) < 600])
    category = np.zeros(worker.size, dtype=int)

    est = estimate(worker, category, correct, 52)
    mu0 = est.population_accuracy
    s = DEFAULT_WORKER_STRENGTH

    one, thousand = est.worker_accuracy[50], est.worker_accuracy[51]
    assert mu0 < one < 1.0
    assert one - mu0 == pytest.approx((1.0 - mu0) / (1 + s))  # moved 1/11 of the way from mu0
    assert one - mu0 < 0.1 * (1.0 - mu0)  # less than a tenth of the way to its raw 1.0
    assert abs(thousand - 0.6) < 0.002
    assert abs(thousand - 0.6) == pytest.approx(s * (mu0 - 0.6) / (1000 + s))


def test_a_category_without_gold_answers_gets_each_workers_overall_accuracy():
    rng = np.random.default_rng(3)
    truth = rng.uniform(0.5, 0.95, size=(6, 2))
    worker, category, correct = simulate_gold(rng, truth, 15)
    est = estimate(worker, category, correct, 6, [2, 0, 2, 1], n_categories=3)

    np.testing.assert_array_equal(est.by_category[:, 2], est.worker_accuracy)
    np.testing.assert_array_equal(est.matrix[:, 0], est.worker_accuracy)
    np.testing.assert_array_equal(est.matrix[:, 2], est.worker_accuracy)


def test_the_matrix_columns_follow_the_task_categories():
    rng = np.random.default_rng(4)
    truth = rng.uniform(0.5, 0.95, size=(8, 5))
    worker, category, correct = simulate_gold(rng, truth, rng.integers(0, 6, size=(8, 5)))
    tasks = rng.integers(0, 5, size=37)
    est = estimate(worker, category, correct, 8, tasks)

    assert est.matrix.shape == (8, 37)
    assert est.by_category.shape == (8, 5)
    for j, c in enumerate(tasks):
        np.testing.assert_array_equal(est.matrix[:, j], est.by_category[:, c])


def test_no_tasks_give_a_matrix_with_no_columns():
    est = estimate([0, 1], [0, 0], [True, False], 2, [])
    assert est.matrix.shape == (2, 0)


def test_gold_counts_count_each_workers_gold_answers():
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 9, size=(10, 3))
    counts[4] = 0
    worker, category, correct = simulate_gold(rng, np.full((10, 3), 0.8), counts)
    est = estimate(worker, category, correct, 10)

    np.testing.assert_array_equal(est.gold_counts, counts.sum(axis=1))
    assert est.gold_counts.dtype == np.int64


def test_n_categories_defaults_to_one_more_than_the_largest_category_seen():
    assert estimate([0], [1], [True], 1, [0]).by_category.shape == (1, 2)
    assert estimate([0], [1], [True], 1, [4]).by_category.shape == (1, 5)
    assert estimate([], [], [], 2, []).by_category.shape == (2, 0)


def test_with_no_gold_at_all_every_worker_is_a_coin_flip():
    est = estimate([], [], [], 3, [0, 1], n_categories=2)
    assert est.population_accuracy == 0.5
    assert np.all(est.matrix == 0.5)
    np.testing.assert_array_equal(est.gold_counts, [0, 0, 0])


def test_estimates_stay_strictly_between_zero_and_one_even_when_every_answer_agrees():
    for value in (True, False):
        est = estimate(np.repeat(np.arange(4), 50), np.tile([0, 1], 100), np.full(200, value), 5)
        assert np.all(est.by_category > 0)
        assert np.all(est.by_category < 1)


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 2), st.booleans()), min_size=0, max_size=40
    ),
    s=st.floats(0.1, 100),
    t=st.floats(0.1, 100),
)
def test_each_estimate_lies_between_its_own_fraction_correct_and_the_level_above(data, s, t):
    worker = [w for w, _, _ in data]
    category = [c for _, c, _ in data]
    correct = [r for _, _, r in data]
    est = estimate(
        worker, category, correct, 4, [0, 1, 2], n_categories=3,
        worker_strength=s, category_strength=t,
    )  # fmt: skip
    mu0 = est.population_accuracy
    tol = 1e-12
    w = np.asarray(worker, dtype=int)
    c = np.asarray(category, dtype=int)
    r = np.asarray(correct, dtype=bool)
    for i in range(4):
        mine = w == i
        raw = r[mine].mean() if mine.any() else mu0
        lo, hi = sorted((raw, mu0))
        assert lo - tol <= est.worker_accuracy[i] <= hi + tol
        for k in range(3):
            cell = mine & (c == k)
            raw = r[cell].mean() if cell.any() else est.worker_accuracy[i]
            lo, hi = sorted((raw, est.worker_accuracy[i]))
            assert lo - tol <= est.by_category[i, k] <= hi + tol


def test_inputs_are_not_mutated_and_outputs_are_read_only():
    worker = np.array([0, 1, 1, 2])
    category = np.array([1, 0, 1, 1])
    correct = np.array([1, 0, 1, 1])
    tasks = np.array([1, 1, 0])
    copies = [a.copy() for a in (worker, category, correct, tasks)]
    est = estimate(worker, category, correct, 3, tasks)

    for original, copy in zip((worker, category, correct, tasks), copies, strict=True):
        np.testing.assert_array_equal(original, copy)
    for arr in (est.matrix, est.by_category, est.worker_accuracy, est.gold_counts):
        assert not arr.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        est.matrix[0, 0] = 1.0


def test_correct_may_be_bools_or_zero_one_numbers():
    worker, category = [0, 0, 1, 1], [0, 1, 0, 1]
    as_bool = estimate(worker, category, [True, False, True, True], 2, [0, 1])
    for variant in ([1, 0, 1, 1], np.array([1.0, 0.0, 1.0, 1.0]), np.array([1, 0, 1, 1], "u1")):
        other = estimate(worker, category, variant, 2, [0, 1])
        np.testing.assert_array_equal(other.matrix, as_bool.matrix)


def test_integer_valued_float_indices_are_accepted():
    a = estimate([0, 1, 1], [0, 1, 0], [True, False, True], 2, [1, 0])
    b = estimate(np.array([0.0, 1.0, 1.0]), [0.0, 1.0, 0.0], [1, 0, 1], 2, np.array([1.0, 0.0]))
    np.testing.assert_array_equal(a.matrix, b.matrix)


def test_a_million_gold_answers_are_handled():
    rng = np.random.default_rng(6)
    k, n_workers, n_categories = 1_000_000, 5_000, 10
    worker = rng.integers(0, n_workers, size=k)
    category = rng.integers(0, n_categories, size=k)
    correct = rng.random(k) < 0.8
    tasks = rng.integers(0, n_categories, size=500)

    est = estimate(worker, category, correct, n_workers, tasks)

    assert est.matrix.shape == (n_workers, 500)
    assert est.gold_counts.sum() == k
    np.testing.assert_array_equal(est.gold_counts, np.bincount(worker, minlength=n_workers))
    assert est.population_accuracy == pytest.approx(correct.mean(), abs=1e-5)
    noise = np.sqrt(0.8 * 0.2 / est.gold_counts)
    assert np.all(np.abs(est.worker_accuracy - 0.8) < 6 * noise)


# --------------------------------------------------------------------------------------------
# Fitted strengths ("auto")


@pytest.mark.parametrize(
    ("worker_strength", "category_strength", "n_categories", "per_cell"),
    [(10.0, 5.0, 3, 20), (25.0, 2.0, 4, 12), (5.0, 20.0, 3, 30)],
)
def test_auto_strengths_recover_the_priors_the_gold_answers_were_drawn_from(
    worker_strength, category_strength, n_categories, per_cell
):
    # 1,000 workers; over 20 seeds the fit's relative standard deviation was below 8 % for the
    # category strength and below 12 % for the worker strength in these settings.
    rng = np.random.default_rng(7)
    truth = hierarchical_accuracies(rng, 1000, n_categories, worker_strength, category_strength)
    worker, category, correct = simulate_gold(rng, truth, per_cell)
    est = estimate(
        worker, category, correct, 1000, worker_strength="auto", category_strength="auto"
    )
    s, t = est.strengths
    assert s == pytest.approx(worker_strength, rel=0.35)
    assert t == pytest.approx(category_strength, rel=0.25)
    assert est.strength_fits == ("fitted", "fitted")


def test_auto_strengths_work_with_uneven_gold_counts_and_category_mixes():
    rng = np.random.default_rng(8)
    n_workers, n_categories = 1000, 3
    truth = hierarchical_accuracies(rng, n_workers, n_categories, 10.0, 5.0)
    mix = rng.dirichlet(np.ones(n_categories), size=n_workers)
    counts = rng.integers(1, 120, size=n_workers)
    per_cell = np.stack([rng.multinomial(n, p) for n, p in zip(counts, mix, strict=True)])
    worker, category, correct = simulate_gold(rng, truth, per_cell)
    est = estimate(
        worker, category, correct, n_workers, worker_strength="auto", category_strength="auto"
    )
    s, t = est.strengths
    assert s == pytest.approx(10.0, rel=0.35)
    assert t == pytest.approx(5.0, rel=0.25)


def test_auto_worker_strength_accounts_for_the_spread_between_categories():
    # Fitting s as if categories did not differ would attribute their spread to the workers and
    # find a much smaller s (about 6 here instead of 10).
    rng = np.random.default_rng(9)
    truth = hierarchical_accuracies(rng, 2000, 3, 10.0, 5.0)
    worker, category, correct = simulate_gold(rng, truth, 20)
    fitted = estimate(worker, category, correct, 2000, worker_strength="auto")
    naive = estimate(
        worker, category, correct, 2000, worker_strength="auto", category_strength=1e12
    )
    assert fitted.strengths[0] == pytest.approx(10.0, rel=0.2)
    assert naive.strengths[0] < 0.8 * fitted.strengths[0]


def test_auto_strengths_pool_completely_when_workers_and_categories_do_not_differ():
    rng = np.random.default_rng(10)
    worker, category, correct = simulate_gold(rng, np.full((1000, 3), 0.8), 20)
    est = estimate(
        worker, category, correct, 1000, worker_strength="auto", category_strength="auto"
    )
    s, t = est.strengths
    assert s > 100
    assert t > 100


def test_auto_strengths_fall_back_to_the_defaults_when_the_data_cannot_identify_them():
    defaults = (DEFAULT_WORKER_STRENGTH, DEFAULT_CATEGORY_STRENGTH)
    cases = [
        ([], [], []),  # no gold at all
        ([0, 0, 0], [0, 0, 0], [True, False, True]),  # one worker, one category
        ([0, 1, 1, 0], [0, 1, 0, 1], [True] * 4),  # every answer correct
    ]
    for worker, category, correct in cases:
        est = estimate(
            worker, category, correct, 2, n_categories=2,
            worker_strength="auto", category_strength="auto",
        )  # fmt: skip
        assert est.strengths == defaults
        assert est.strength_fits == ("default", "default")


def test_auto_says_when_a_strength_came_out_at_its_floor_or_ceiling_and_given_ones_are_given():
    # Each worker right on every gold answer of one category and wrong on every one of the
    # other: categories differ far beyond chance, so the category strength hits its floor.
    worker = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    category = [0, 0, 1, 1] * 3
    correct = [True, True, False, False, False, False, True, True, True, True, False, False]
    est = estimate(worker, category, correct, 3, worker_strength=10.0, category_strength="auto")
    assert est.strengths[1] == pytest.approx(0.1)
    assert est.strength_fits == ("given", "floor")
    # Workers exactly alike (each half right), so their spread is below chance: the ceiling.
    est = estimate(worker, category, correct, 3, worker_strength="auto", category_strength=5.0)
    assert est.strengths[0] == pytest.approx(1e4)
    assert est.strength_fits == ("ceiling", "given")


# --------------------------------------------------------------------------------------------
# Validation


def good_arguments():
    return {
        "worker_index": [0, 1, 2, 1],
        "item_category": [0, 1, 1, 0],
        "correct": [True, False, True, True],
        "n_workers": 3,
        "task_categories": [0, 1, 1],
    }


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("worker_index", [0, 1, 3, 1], r"^worker_index must be in \[0, n_workers=3\).*position 2"),
        ("worker_index", [0, -1, 2, 1], r"^worker_index .*-1 at position 1"),
        ("worker_index", [0, 1, 2.5, 1], r"^worker_index must hold integers.*position 2"),
        ("worker_index", [0, 1, np.nan, 1], r"^worker_index must hold integers.*position 2"),
        ("worker_index", [True, False, True, True], r"^worker_index must hold integers"),
        ("worker_index", ["a", "b", "c", "d"], r"^worker_index must hold integers"),
        ("worker_index", [[0, 1, 2, 1]], r"^worker_index must be a 1-D array"),
        ("item_category", [0, 1, 1], r"^item_category must have one entry per gold answer \(4"),
        ("item_category", [0, 1, -2, 0], r"^item_category .*position 2"),
        ("correct", [True, False, True], r"^correct must have one entry per gold answer \(4"),
        ("correct", [1, 0, 2, 1], r"^correct must hold booleans or 0/1, got 2 at position 2"),
        ("correct", [1.0, 0.5, 1.0, 0.0], r"^correct must hold booleans or 0/1.*position 1"),
        ("correct", ["yes", "no", "yes", "no"], r"^correct must hold booleans or 0/1"),
        ("task_categories", [0, 1, -1], r"^task_categories .*position 2"),
        ("task_categories", np.zeros((2, 2), int), r"^task_categories must be a 1-D array"),
        ("n_workers", -1, r"^n_workers must be a non-negative integer"),
        ("n_workers", 3.0, r"^n_workers must be a non-negative integer"),
        ("n_workers", True, r"^n_workers must be a non-negative integer"),
        ("n_categories", -2, r"^n_categories must be a non-negative integer"),
        ("worker_strength", 0.0, r"^worker_strength must be a positive finite number"),
        ("worker_strength", -1.0, r"^worker_strength must be a positive finite number"),
        ("worker_strength", np.inf, r"^worker_strength must be a positive finite number"),
        ("worker_strength", np.nan, r"^worker_strength must be a positive finite number"),
        ("worker_strength", "Auto", r"^worker_strength must be a positive finite number"),
        ("category_strength", 0, r"^category_strength must be a positive finite number"),
        ("category_strength", None, r"^category_strength must be a positive finite number"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_field(field, value, message):
    kwargs = good_arguments()
    kwargs[field] = value
    with pytest.raises(ValueError, match=message):
        estimate_quality(**kwargs)


def test_categories_beyond_an_explicit_n_categories_are_rejected():
    kwargs = good_arguments()
    with pytest.raises(ValueError, match=r"^item_category must be in \[0, n_categories=1\)"):
        estimate_quality(**kwargs, n_categories=1)
    kwargs["item_category"] = [0, 0, 0, 0]
    with pytest.raises(ValueError, match=r"^task_categories must be in \[0, n_categories=1\)"):
        estimate_quality(**kwargs, n_categories=1)


def test_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        estimate_quality([0], [0], [True], 1, [0])  # type: ignore[misc]


@pytest.mark.parametrize("strengths", [(10.0, 5.0), ("auto", "auto"), (0.5, "auto")])
@pytest.mark.parametrize("seed", range(3))
def test_counts_per_cell_give_the_estimate_of_the_answers_they_count_to_the_bit(seed, strengths):
    rng = np.random.default_rng(seed)
    n_workers, n_categories, k = 7, 4, 300
    worker = rng.integers(0, n_workers - 1, k)  # the last worker has no gold answer
    category = rng.integers(0, n_categories, k)
    correct = rng.random(k) < 0.75
    tasks = rng.integers(0, n_categories, 25)
    options = {"worker_strength": strengths[0], "category_strength": strengths[1]}
    answers = estimate_quality(
        worker_index=worker,
        item_category=category,
        correct=correct,
        n_workers=n_workers,
        task_categories=tasks,
        n_categories=n_categories,
        **options,
    )
    answered = np.zeros((n_workers, n_categories), np.int64)
    right = np.zeros_like(answered)
    np.add.at(answered, (worker, category), 1)
    np.add.at(right, (worker, category), correct)
    counts = estimate_quality_from_counts(
        answered=answered, correct=right, task_categories=tasks, **options
    )
    np.testing.assert_array_equal(counts.by_category, answers.by_category)
    np.testing.assert_array_equal(counts.worker_accuracy, answers.worker_accuracy)
    np.testing.assert_array_equal(counts.gold_counts, answers.gold_counts)
    np.testing.assert_array_equal(counts.task_categories, answers.task_categories)
    assert counts.population_accuracy == answers.population_accuracy
    assert counts.strengths == answers.strengths


@pytest.mark.parametrize(
    ("answered", "correct", "tasks", "message"),
    [
        (
            [[2, 1]],
            [[3, 0]],
            [0],
            r"correct must be in \[0, answered\], got 3 of 2 answers at "
            r"\(worker 0, category 0\)",
        ),
        ([[2, 1]], [[0, -1]], [0], r"got -1 of 1 answers at \(worker 0, category 1\)"),
        ([2, 1], [2, 1], [0], "answered must be a 2-D array"),
        ([[2, 1]], [[1]], [0], "answered and correct must have one shape"),
        ([[2.0, 1.0]], [[1, 1]], [0], "answered must hold integers"),
        ([[2, 1]], [[1, 1]], [2], r"task_categories must be in \[0, n_categories=2\)"),
    ],
)
def test_counts_per_cell_are_refused_naming_what_is_wrong(answered, correct, tasks, message):
    with pytest.raises(ValueError, match=message):
        estimate_quality_from_counts(answered=answered, correct=correct, task_categories=tasks)
