"""Worker quality learnt from answers without gold, by EM (assignment.engine.answer_quality).

The comparisons with crowd-kit's DawidSkene and OneCoinDawidSkene (the reference EM) run only
where crowd-kit is importable; it is not in the dev extra because it pulls transformers and
pyarrow. ``pip install --no-deps crowd-kit==1.4.2`` plus tqdm, nltk, regex, scikit-learn,
joblib, threadpoolctl, narwhals and cloudpickle is enough for them.
"""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest

from assignment.engine import AnswerQuality, estimate_from_answers
from assignment.engine.problem import AssignmentProblem, QualityByCategory
from assignment.engine.quality import estimate_quality
from assignment.engine.solve import solve

# Maximum-likelihood EM: no shrinkage, no smoothing (what crowd-kit computes).
NO_SHRINKAGE = {
    "worker_strength": 0.0,
    "category_strength": 0.0,
    "confusion_strength": 0.0,
    "prior_smoothing": 0.0,
}


def simulate_crowd(rng, accuracy, n_tasks, answers_per_task, n_labels):
    """One-coin answers: each task answered by ``answers_per_task`` distinct random workers;
    worker ``i`` is right with probability ``accuracy[i]``, else picks a wrong label uniformly."""
    n_workers = accuracy.shape[0]
    truth = rng.integers(0, n_labels, n_tasks)
    order = np.argsort(rng.random((n_tasks, n_workers)), axis=1)
    worker = order[:, :answers_per_task].ravel()
    task = np.repeat(np.arange(n_tasks), answers_per_task)
    right = rng.random(worker.size) < accuracy[worker]
    wrong = (truth[task] + rng.integers(1, n_labels, worker.size)) % n_labels
    return worker, task, np.where(right, truth[task], wrong), truth


def simulate_confusions(rng, n_workers, n_tasks, answers_per_task, n_labels):
    """Dawid–Skene answers: each worker has its own confusion matrix (rows: true label),
    diagonal ~ Beta(6, 2) plus a random share of the rest; the class prior is not uniform."""
    prior = rng.dirichlet(np.full(n_labels, 5.0))
    truth = rng.choice(n_labels, size=n_tasks, p=prior)
    accuracy = rng.beta(6, 2, n_workers)
    confusion = rng.dirichlet(np.ones(n_labels), size=(n_workers, n_labels))
    confusion *= (1 - accuracy)[:, None, None]
    confusion[:, np.arange(n_labels), np.arange(n_labels)] += accuracy[:, None]
    order = np.argsort(rng.random((n_tasks, n_workers)), axis=1)
    worker = order[:, :answers_per_task].ravel()
    task = np.repeat(np.arange(n_tasks), answers_per_task)
    cumulative = confusion[worker, truth[task]].cumsum(axis=1)
    label = np.minimum((rng.random(worker.size)[:, None] > cumulative).sum(axis=1), n_labels - 1)
    return worker, task, label, truth


def fit(worker, task, label, n_workers, n_tasks, n_labels, **kwargs):
    return estimate_from_answers(
        worker_index=worker,
        task_index=task,
        label=label,
        n_workers=n_workers,
        n_tasks=n_tasks,
        n_labels=n_labels,
        **kwargs,
    )


def correlation(x, y):
    return float(np.corrcoef(x, y)[0, 1])


# --------------------------------------------------------------------------------------------
# Recovering worker accuracy without gold


@pytest.mark.parametrize(("n_labels", "floor"), [(2, 0.6), (5, 0.7)])
@pytest.mark.parametrize("model", ["one-coin", "dawid-skene"])
def test_at_ten_answers_per_worker_em_without_gold_comes_near_what_knowing_every_truth_gives(
    model, n_labels, floor
):
    # Setting: 50 workers with accuracies ~ Beta(6, 2), 100 tasks x 5 answers = 10 answers per
    # worker, no gold; Pearson correlation of estimated with true accuracies, mean of 10 crowds.
    # A correlation of 0.9 is out of reach here for any estimator: even with every task's truth
    # known (the "oracle" below: the gold estimate from 10 answers), binomial noise of sd ~0.14
    # against a spread of true accuracies of sd ~0.15 caps it near 0.75 (measured: 0.752).
    # Measured without gold: 0.659 (K=2) and 0.736 (K=5) for one-coin, 0.635 and 0.719 for
    # Dawid–Skene (single crowds down to 0.48); with two labels a wrong majority misleads more
    # often.
    em, oracle = [], []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        accuracy = rng.beta(6, 2, 50)
        worker, task, label, truth = simulate_crowd(rng, accuracy, 100, 5, n_labels)
        args = (worker, task, label, 50, 100, n_labels)
        est = fit(*args, model=model, max_iterations=1000)
        known = fit(*args, model=model, gold_task_truth=truth)
        em.append(correlation(est.worker_accuracy, accuracy))
        oracle.append(correlation(known.worker_accuracy, accuracy))
    assert np.mean(oracle) < 0.8  # the ceiling, far below 0.9
    assert np.mean(em) >= floor
    assert np.mean(em) >= np.mean(oracle) - 0.12


@pytest.mark.parametrize("model", ["one-coin", "dawid-skene"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_at_25_answers_per_task_estimated_accuracies_correlate_above_0_9_with_the_true_ones(
    model, seed
):
    # Setting: 50 workers with accuracies ~ Beta(6, 2), 200 tasks x 25 answers (100 answers per
    # worker), two labels, no gold. Measured over 20 crowds (both models): correlation 0.923 to
    # 0.980, mean 0.958, every label right (with 100 tasks, i.e. 50 answers per worker: 0.870
    # to 0.98, mean 0.925 -- not above 0.9 every time).
    rng = np.random.default_rng(seed)
    accuracy = rng.beta(6, 2, 50)
    worker, task, label, truth = simulate_crowd(rng, accuracy, 200, 25, 2)
    est = fit(worker, task, label, 50, 200, 2, model=model)
    assert est.converged
    assert correlation(est.worker_accuracy, accuracy) >= 0.9
    assert np.mean(est.labels == truth) >= 0.99


def test_on_many_tasks_em_recovers_each_workers_confusion_matrix():
    # 20 workers x 2,000 tasks x 10 answers (1,000 answers per worker), three labels with
    # worker-specific confusions: the fitted matrices are within 0.01 of the confusions
    # observed with the true labels known, which every row has at least ~270 answers of
    # (largest difference measured: 0.0017).
    rng = np.random.default_rng(7)
    worker, task, label, truth = simulate_confusions(rng, 20, 2000, 10, 3)
    est = fit(worker, task, label, 20, 2000, 3, model="dawid-skene")
    counts = np.zeros((20, 3, 3))
    np.add.at(counts, (worker, truth[task], label), 1)
    empirical = counts / counts.sum(axis=2, keepdims=True)
    assert np.abs(est.confusion - empirical).max() < 0.01
    assert np.mean(est.labels == truth) >= 0.99


# --------------------------------------------------------------------------------------------
# Gold answers as observed truths


def test_gold_truths_for_some_tasks_improve_the_estimates_of_a_weak_crowd():
    # Setting: 50 workers with accuracies ~ Beta(3, 2) (mean 0.6), 166 tasks x 3 answers, two
    # labels; the truth of 30% of the tasks given. Means over 10 crowds. Measured: correlation
    # 0.30 without gold -> 0.60 with, mean absolute error 0.165 -> 0.134, labels of the other
    # tasks right 0.655 -> 0.727. (In an easy crowd, Beta(6, 2) with 5 answers per task, gold
    # improves the accuracies a little -- correlation 0.67 -> 0.69 -- but not the labels.)
    without, with_gold = [], []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        accuracy = rng.beta(3, 2, 50)
        worker, task, label, truth = simulate_crowd(rng, accuracy, 166, 3, 2)
        gold = np.where(np.arange(166) < 50, truth, -1)
        rest = gold < 0
        for out, kwargs in ((without, {}), (with_gold, {"gold_task_truth": gold})):
            est = fit(worker, task, label, 50, 166, 2, max_iterations=1000, **kwargs)
            out.append(
                (
                    correlation(est.worker_accuracy, accuracy),
                    np.abs(est.worker_accuracy - accuracy).mean(),
                    np.mean(est.labels[rest] == truth[rest]),
                )
            )
    r0, mae0, right0 = np.mean(without, axis=0)
    r1, mae1, right1 = np.mean(with_gold, axis=0)
    assert r1 >= r0 + 0.15
    assert mae1 <= mae0 - 0.02
    assert right1 >= right0 + 0.04


@pytest.mark.parametrize("model", ["one-coin", "dawid-skene"])
def test_a_gold_task_keeps_its_true_label_against_a_unanimous_crowd(model):
    # Five good workers agree on four tasks (so they are trusted) and on task 4 all say 1,
    # but its known truth is 0.
    worker = np.tile(np.arange(5), 5)
    task = np.repeat(np.arange(5), 5)
    label = np.repeat([0, 1, 0, 1, 1], 5)
    est = fit(worker, task, label, 5, 5, 2, model=model, gold_task_truth=[-1, -1, -1, -1, 0])
    assert est.labels.tolist() == [0, 1, 0, 1, 0]
    np.testing.assert_array_equal(est.posterior[4], [1.0, 0.0])
    assert est.posterior[3, 1] > 0.99  # the same answers on an unknown task: label 1


def test_with_every_task_gold_the_estimate_is_the_gold_estimators():
    # Clamped posteriors make the expected counts exact: the M-step is estimate_quality.
    rng = np.random.default_rng(3)
    accuracy = rng.beta(6, 2, 30)
    worker, task, label, truth = simulate_crowd(rng, accuracy, 120, 4, 3)
    categories = rng.integers(0, 4, 120)
    est = fit(
        worker, task, label, 30, 120, 3, gold_task_truth=truth, task_categories=categories,
        worker_strength=7.0, category_strength=3.0,
    )  # fmt: skip
    gold = estimate_quality(
        worker_index=worker, item_category=categories[task], correct=label == truth[task],
        n_workers=30, task_categories=categories, n_categories=4,
        worker_strength=7.0, category_strength=3.0,
    )  # fmt: skip
    np.testing.assert_allclose(est.by_category, gold.by_category, rtol=1e-13)
    np.testing.assert_allclose(est.worker_accuracy, gold.worker_accuracy, rtol=1e-13)
    assert est.population_accuracy == pytest.approx(gold.population_accuracy, rel=1e-13)
    np.testing.assert_array_equal(est.labels, truth)


def test_two_labels_one_coin_without_shrinkage_and_all_gold_gives_the_fraction_correct():
    worker = [0, 0, 0, 0, 1, 1, 2]
    task = [0, 1, 2, 3, 0, 1, 3]
    label = [1, 0, 0, 0, 1, 1, 0]
    truth = [1, 0, 1, 0]
    # worker 0: 3 of 4 right; worker 1: 1 of 2; worker 2: 1 of 1; worker 3: no answers.
    est = fit(worker, task, label, 4, 4, 2, gold_task_truth=truth, **NO_SHRINKAGE)
    np.testing.assert_array_equal(est.worker_accuracy[:3], [3 / 4, 1 / 2, 1.0])
    assert est.worker_accuracy[3] == est.population_accuracy == (5 + 1) / (7 + 2)
    np.testing.assert_array_equal(est.class_prior, [0.5, 0.5])
    np.testing.assert_array_equal(est.confusion[0], [[0.75, 0.25], [0.25, 0.75]])


# --------------------------------------------------------------------------------------------
# Invariants


@pytest.fixture(scope="module")
def crowd():
    rng = np.random.default_rng(11)
    accuracy = rng.beta(6, 2, 40)
    worker, task, label, truth = simulate_crowd(rng, accuracy, 150, 4, 3)
    categories = rng.integers(0, 3, 150)
    return worker, task, label, truth, categories


@pytest.mark.parametrize("model", ["one-coin", "dawid-skene"])
def test_posteriors_are_distributions_and_accuracies_lie_strictly_between_0_and_1(crowd, model):
    worker, task, label, truth, categories = crowd
    gold = np.where(np.arange(150) % 10 == 0, truth, -1)
    n_workers = 45  # five workers without answers
    est = fit(
        worker, task, label, n_workers, 160, 3, model=model, gold_task_truth=np.r_[gold, [-1] * 10],
        task_categories=np.r_[categories, [0] * 10],
    )  # fmt: skip
    assert isinstance(est, AnswerQuality)
    assert est.posterior.shape == (160, 3)
    np.testing.assert_allclose(est.posterior.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(est.posterior >= 0)
    np.testing.assert_allclose(est.confusion.sum(axis=2), 1.0, rtol=1e-12)
    assert est.class_prior.sum() == pytest.approx(1.0)
    for table in (est.worker_accuracy, est.by_category):
        assert np.all((table > 0) & (table < 1))
    assert est.by_category.shape == (n_workers, 3)
    np.testing.assert_array_equal(est.labels, np.argmax(est.posterior, axis=1))
    np.testing.assert_array_equal(est.answer_counts, np.bincount(worker, minlength=n_workers))
    np.testing.assert_array_equal(est.worker_accuracy[40:], est.population_accuracy)
    np.testing.assert_allclose(est.posterior[150:], np.tile(est.class_prior, (10, 1)))
    for value in (est.posterior, est.worker_accuracy, est.by_category, est.confusion):
        assert not value.flags.writeable
    assert est.converged
    assert 0 < est.iterations < 100
    assert np.isfinite(est.log_likelihood)
    assert est.log_likelihood < 0


@pytest.mark.parametrize("model", ["one-coin", "dawid-skene"])
def test_renumbering_workers_or_shuffling_answers_renumbers_the_results_and_nothing_else(
    crowd, model
):
    worker, task, label, _truth, categories = crowd
    rng = np.random.default_rng(0)
    perm = rng.permutation(40)  # worker i becomes perm[i]
    shuffle = rng.permutation(worker.size)
    base = fit(worker, task, label, 40, 150, 3, model=model, task_categories=categories)
    moved = fit(
        perm[worker][shuffle], task[shuffle], label[shuffle], 40, 150, 3, model=model,
        task_categories=categories,
    )  # fmt: skip
    np.testing.assert_allclose(moved.worker_accuracy[perm], base.worker_accuracy, rtol=1e-10)
    np.testing.assert_allclose(moved.by_category[perm], base.by_category, rtol=1e-10)
    np.testing.assert_allclose(moved.confusion[perm], base.confusion, rtol=1e-10)
    np.testing.assert_allclose(moved.posterior, base.posterior, atol=1e-10)
    np.testing.assert_array_equal(moved.labels, base.labels)
    assert moved.iterations == base.iterations


def test_renaming_the_labels_permutes_the_posterior_columns(crowd):
    worker, task, label, _, _ = crowd
    rename = np.array([2, 0, 1])
    base = fit(worker, task, label, 40, 150, 3)
    renamed = fit(worker, task, rename[label], 40, 150, 3)
    np.testing.assert_allclose(renamed.posterior[:, rename], base.posterior, atol=1e-10)
    np.testing.assert_allclose(renamed.worker_accuracy, base.worker_accuracy, rtol=1e-10)
    np.testing.assert_array_equal(renamed.labels, rename[base.labels])


@pytest.mark.parametrize("model", ["one-coin", "dawid-skene"])
def test_without_shrinkage_each_em_iteration_does_not_lower_the_likelihood(model):
    # Maximum-likelihood EM (Dempster, Laird & Rubin 1977): the likelihood never decreases.
    rng = np.random.default_rng(5)
    worker, task, label, _ = simulate_confusions(rng, 30, 200, 3, 3)
    likelihoods = [
        fit(worker, task, label, 30, 200, 3, model=model, max_iterations=k, **NO_SHRINKAGE)
        .log_likelihood
        for k in range(12)
    ]  # fmt: skip
    assert np.all(np.diff(likelihoods) >= -1e-9 * abs(likelihoods[0]))
    assert likelihoods[-1] > likelihoods[0]


def test_a_tie_goes_to_the_highest_label_as_in_the_bayes_vote():
    # Two identical workers who disagree on each of two tasks: every posterior is 1/2.
    est = fit([0, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], 2, 2, 2)
    np.testing.assert_allclose(est.posterior, 0.5, rtol=1e-12)
    assert est.labels.tolist() == [1, 1]
    # three labels, a tie between labels 0 and 1 only: the highest tied label, not label 2
    est = fit([0, 1], [0, 0], [0, 1], 2, 1, 3, prior=[0.4, 0.4, 0.2])
    assert est.posterior[0, 0] == pytest.approx(est.posterior[0, 1], rel=1e-12)
    assert est.labels.tolist() == [1]


def test_a_given_prior_is_kept_and_tips_an_even_vote():
    est = fit([0, 1], [0, 0], [0, 1], 2, 1, 2, prior=[0.2, 0.8])
    np.testing.assert_array_equal(est.class_prior, [0.2, 0.8])
    assert est.labels.tolist() == [1]


def test_without_answers_every_task_gets_the_prior_and_every_worker_the_population_accuracy():
    est = fit([], [], [], 3, 4, 2)
    np.testing.assert_array_equal(est.posterior, 0.5)
    np.testing.assert_array_equal(est.worker_accuracy, 0.5)
    assert est.log_likelihood == 0.0


def test_zero_iterations_is_the_majority_vote_start_and_logs_that_it_did_not_converge(
    crowd, caplog
):
    worker, task, label, _, _ = crowd
    with caplog.at_level(logging.WARNING, logger="assignment.engine.answer_quality"):
        est = fit(worker, task, label, 40, 150, 3, max_iterations=0)
    assert est.iterations == 0
    assert not est.converged
    assert "did not converge" in caplog.text


def test_the_quality_plugs_into_an_assignment_problem(crowd):
    worker, task, label, _, categories = crowd
    est = fit(worker, task, label, 40, 150, 3, task_categories=categories)
    quality = est.quality
    assert isinstance(quality, QualityByCategory)
    np.testing.assert_array_equal(quality.table, est.by_category)
    np.testing.assert_array_equal(quality.task_category, categories)
    problem = AssignmentProblem(
        quality, max_workers_per_task=3, max_tasks_per_worker=10, budget=200
    )
    result = solve(problem, method="greedy", seed=0)
    assert result.assignment.sum() <= 200


# --------------------------------------------------------------------------------------------
# Agreement with crowd-kit's Dawid–Skene and one-coin Dawid–Skene (the reference implementation)


# crowd-kit 1.4.2 calls pandas APIs that pandas 3 deprecates: thousands of warnings not ours.
crowd_kit_warnings = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::FutureWarning"
)


def crowd_kit_frame(worker, task, label):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"task": task, "worker": worker, "label": label})


def dense(frame, rows, columns):
    return frame.reindex(index=range(rows), columns=range(columns)).to_numpy()


@pytest.mark.slow
@crowd_kit_warnings
@pytest.mark.parametrize("seed", [0, 1])
def test_dawid_skene_takes_crowd_kits_em_steps_with_gold_truths(seed):
    aggregation = pytest.importorskip("crowdkit.aggregation")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    worker, task, label, truth = simulate_confusions(rng, 30, 200, 5, 3)
    reference = aggregation.DawidSkene(n_iter=20, tol=-np.inf)  # exactly 20 iterations
    reference.fit(crowd_kit_frame(worker, task, label), true_labels=pd.Series(truth[:40]))
    # crowd-kit's 20 (E, M) steps after its start are our start's E-step and 19 (M, E) steps.
    # It floors every confusion entry and prior at 1e-10 before normalising, we only inside
    # the logarithms: the posteriors differ by ~1e-10.
    ours = fit(
        worker, task, label, 30, 200, 3, model="dawid-skene", max_iterations=19, tolerance=0,
        gold_task_truth=np.where(np.arange(200) < 40, truth, -1), **NO_SHRINKAGE,
    )  # fmt: skip
    np.testing.assert_allclose(ours.posterior, dense(reference.probas_, 200, 3), atol=1e-8)


@crowd_kit_warnings
def test_one_coin_takes_crowd_kits_em_steps():
    aggregation = pytest.importorskip("crowdkit.aggregation")
    rng = np.random.default_rng(2)
    worker, task, label, _ = simulate_confusions(rng, 30, 200, 5, 3)
    reference = aggregation.OneCoinDawidSkene(n_iter=15, tol=-np.inf)
    reference.fit(crowd_kit_frame(worker, task, label))
    # crowd-kit's skills come from the M-step after its last E-step: our 15th M-step.
    common = {"model": "one-coin", "tolerance": 0, **NO_SHRINKAGE}
    before = fit(worker, task, label, 30, 200, 3, max_iterations=14, **common)
    after = fit(worker, task, label, 30, 200, 3, max_iterations=15, **common)
    np.testing.assert_allclose(before.posterior, dense(reference.probas_, 200, 3), atol=1e-8)
    skills = reference.skills_.reindex(range(30)).to_numpy()
    np.testing.assert_allclose(after.worker_accuracy, skills, atol=1e-12)


@pytest.mark.slow
@crowd_kit_warnings
@pytest.mark.parametrize("model", ["one-coin", "dawid-skene"])
def test_at_convergence_labels_and_posteriors_agree_with_crowd_kit(model):
    aggregation = pytest.importorskip("crowdkit.aggregation")
    cls = {"one-coin": aggregation.OneCoinDawidSkene, "dawid-skene": aggregation.DawidSkene}
    rng = np.random.default_rng(0)
    worker, task, label, _truth = simulate_confusions(rng, 30, 200, 5, 3)
    # crowd-kit stops when its evidence lower bound stops rising by 1e-5 per answer, which can
    # be after a handful of iterations; it runs a fixed 150 here instead (tol=-inf).
    reference = cls[model](n_iter=150, tol=-np.inf).fit(crowd_kit_frame(worker, task, label))
    want_labels = reference.labels_.reindex(range(200)).to_numpy()
    want_posterior = dense(reference.probas_, 200, 3)
    ml = fit(worker, task, label, 30, 200, 3, model=model, tolerance=1e-12, max_iterations=1000,
             **NO_SHRINKAGE)  # fmt: skip
    assert ml.converged
    np.testing.assert_array_equal(ml.labels, want_labels)
    np.testing.assert_allclose(ml.posterior, want_posterior, atol=1e-6)
    # With the default shrinkage and smoothing (which crowd-kit does not have) the labels still
    # agree on at least 99% of the tasks (measured: 99.5-100%).
    shrunk = fit(worker, task, label, 30, 200, 3, model=model)
    assert np.mean(shrunk.labels == want_labels) >= 0.99


# --------------------------------------------------------------------------------------------
# Validation


GOOD = {
    "worker_index": [0, 1, 1],
    "task_index": [0, 0, 1],
    "label": [1, 0, 1],
    "n_workers": 2,
    "n_tasks": 2,
    "n_labels": 2,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"label": [1, 0, 2]}, "label must be in [0, n_labels=2), got 2 at position 2"),
        ({"label": [1, 0.5, 1]}, "label must hold integers, got 0.5 at position 1"),
        ({"worker_index": [0, -1, 1]}, "worker_index must be in [0, n_workers=2), got -1 at "
         "position 1"),
        ({"task_index": [0, 0]}, "task_index must have one entry per answer (3, the length of "
         "worker_index), got 2"),
        ({"label": [[1, 0, 1]]}, "label must be a 1-D array"),
        ({"worker_index": [1, 0, 1], "task_index": [1, 0, 1]},
         "must not repeat a (worker, task) pair: answer 2 (worker 1, task 1) repeats answer 0"),
        ({"n_labels": 1}, "n_labels must be at least 2, got 1"),
        ({"n_tasks": -1}, "n_tasks must be a non-negative integer"),
        ({"model": "two-coin"}, "model must be one of ('one-coin', 'dawid-skene')"),
        ({"gold_task_truth": [0, 1, 0]}, "gold_task_truth must have one entry per task "
         "(n_tasks=2)"),
        ({"gold_task_truth": [-1, 2]}, "gold_task_truth must be -1 (unknown) or a label in "
         "[0, n_labels=2), got 2 at task 1"),
        ({"gold_task_truth": [-2, 0]}, "got -2 at task 0"),
        ({"task_categories": [0, 3], "n_categories": 2},
         "task_categories must be in [0, n_categories=2), got 3 at position 1"),
        ({"task_categories": [0]}, "task_categories must have one entry per task (n_tasks=2)"),
        ({"worker_strength": -1.0}, "worker_strength must be a non-negative finite number"),
        ({"category_strength": "auto"}, "category_strength must be a non-negative finite "
         "number (not 'auto')"),
        ({"confusion_strength": float("nan")}, "confusion_strength must be a non-negative"),
        ({"prior": [0.5, 0.3, 0.2]}, "prior must have one entry per label (n_labels=2)"),
        ({"prior": [1.0, 0.0]}, "prior must be positive and finite, got 0.0 at label 1"),
        ({"prior": [0.6, 0.6]}, "prior must sum to 1"),
        ({"max_iterations": 2.5}, "max_iterations must be a non-negative integer"),
        ({"tolerance": -1e-3}, "tolerance must be a non-negative finite number"),
    ],
)  # fmt: skip
def test_malformed_arguments_are_rejected_naming_the_field_and_first_bad_position(change, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        estimate_from_answers(**{**GOOD, **change})
