"""quality_estimate(source="answers" | "both"): worker quality learnt from the collected answers
by EM, with or without the gold answers as known truths, stored like a gold estimate.

The EM itself is tested with the engine (tests/assignment/engine/test_answer_quality.py); here,
that the service feeds it the project's answers, labels, categories and gold items, stores what
it learnt and refuses what it cannot use.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from project_data import make_project
from rest_framework.test import APIClient

from assignment import selectors, services
from assignment.engine.confusion import confusion_accuracy
from assignment.engine.distributions import accuracy_under_confusion
from assignment.engine.greedy_confusion import greedy_confusion
from assignment.engine.rounds import next_round
from assignment.errors import QualityEstimationError
from assignment.models import (
    Answer,
    AssignmentRun,
    GoldAnswer,
    GoldItem,
    QualityChunk,
    QualityMatrix,
    QualitySource,
    Task,
    Worker,
)
from assignment.services import quality_estimate
from assignment.services.runs import _whole_problem

pytestmark = pytest.mark.django_db


def crowd(
    project,
    accuracy: np.ndarray,
    *,
    n_tasks: int,
    answers_per_task: int,
    labels=("0", "1"),
    categories=("c0",),
    seed: int = 0,
):
    """Workers with one-coin ``accuracy[i]`` answer ``answers_per_task`` random tasks each of
    ``n_tasks`` tasks (spread over ``categories``); wrong answers pick another label uniformly.

    Returns the workers (primary-key order) and each task's true label index.
    """
    rng = np.random.default_rng(seed)
    n, k = accuracy.shape[0], len(labels)
    workers = Worker.objects.bulk_create(
        [Worker(project=project, external_id=f"w{i}") for i in range(n)]
    )
    tasks = Task.objects.bulk_create(
        [
            Task(project=project, external_id=f"t{j}", category=categories[j % len(categories)])
            for j in range(n_tasks)
        ]
    )
    truth = rng.integers(0, k, n_tasks)
    answers = []
    for j, task in enumerate(tasks):
        for i in rng.choice(n, size=answers_per_task, replace=False):
            right = rng.random() < accuracy[i]
            given = truth[j] if right else (truth[j] + rng.integers(1, k)) % k
            answers.append(Answer(worker=workers[i], task=task, label=labels[given]))
    Answer.objects.bulk_create(answers)
    return workers, truth


def gold(project, workers, accuracy, *, n_items: int, per_worker: int, seed: int = 1):
    """Binary gold items; worker ``i`` answers ``per_worker``, each right w.p. ``accuracy[i]``."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n_items)
    items = GoldItem.objects.bulk_create(
        [
            GoldItem(project=project, external_id=f"g{k}", category="c0", true_label=str(t))
            for k, t in enumerate(truth)
        ]
    )
    answers = []
    for i, worker in enumerate(workers):
        for k in rng.choice(n_items, size=per_worker, replace=False):
            right = rng.random() < accuracy[i]
            label = truth[k] if right else 1 - truth[k]
            answers.append(GoldAnswer(worker=worker, item=items[k], answer=str(label)))
    GoldAnswer.objects.bulk_create(answers)


def worker_accuracy(matrix: QualityMatrix) -> np.ndarray:
    """Each worker's mean quality over the project's tasks."""
    return matrix.values.mean(axis=1)


# --------------------------------------------------------------------------------------------
# Learning from the answers alone


def test_a_project_without_gold_gets_accuracies_that_follow_the_true_ones_from_its_answers():
    project = make_project()
    true_accuracy = np.random.default_rng(3).uniform(0.55, 0.95, 30)
    crowd(project, true_accuracy, n_tasks=1200, answers_per_task=5)  # 200 answers a worker
    assert not GoldAnswer.objects.exists()
    matrix = quality_estimate(project=project, source="answers")
    estimated = worker_accuracy(matrix)
    assert np.corrcoef(estimated, true_accuracy)[0, 1] > 0.9
    assert np.abs(estimated - true_accuracy).mean() < 0.05
    assert matrix.source == QualitySource.FROM_ANSWERS
    assert matrix.get_source_display() == "estimated from collected answers by EM"


def test_an_estimate_from_answers_says_how_it_was_made_in_its_details():
    project = make_project()
    crowd(project, np.full(10, 0.8), n_tasks=100, answers_per_task=3)
    idle = Worker.objects.create(project=project, external_id="idle")
    matrix = QualityMatrix.objects.get(pk=quality_estimate(project=project, source="answers").pk)
    details = matrix.details
    assert details["model"] == "one-coin"
    assert details["converged"] is True
    assert 1 <= details["iterations"] < 100
    assert details["log_likelihood"] < 0
    assert (details["n_answers"], details["n_gold_answers"]) == (300, 0)
    assert (details["labels"], details["categories"], details["workers_without_answers"]) == (
        2,
        1,
        1,
    )
    assert (details["worker_strength"], details["category_strength"]) == (10.0, 5.0)
    assert 0.7 < details["population_accuracy"] < 0.9
    assert matrix.gold_counts is None  # no gold answers were used
    assert matrix.by_category
    assert not QualityChunk.objects.filter(matrix=matrix).exists()
    assert matrix.worker_ids[-1] == idle.pk
    # A worker without answers gets the population's accuracy.
    np.testing.assert_allclose(matrix.values[-1], details["population_accuracy"])


def test_the_dawid_skene_model_also_learns_who_is_reliable():
    project = make_project()
    true_accuracy = np.random.default_rng(4).uniform(0.55, 0.95, 30)
    crowd(project, true_accuracy, n_tasks=1000, answers_per_task=5, seed=4)  # 167 a worker
    matrix = quality_estimate(project=project, source="answers", model="dawid-skene")
    assert matrix.details["model"] == "dawid-skene"
    assert np.corrcoef(worker_accuracy(matrix), true_accuracy)[0, 1] > 0.9


def test_three_labels_are_estimated_over_the_projects_label_set():
    project = make_project(labels=["cat", "dog", "bird"])
    true_accuracy = np.random.default_rng(5).uniform(0.45, 0.95, 30)
    crowd(
        project, true_accuracy, n_tasks=1200, answers_per_task=4, labels=("cat", "dog", "bird")
    )  # 160 answers a worker
    matrix = quality_estimate(project=project, source="answers")
    assert matrix.details["labels"] == 3
    estimated = worker_accuracy(matrix)
    assert np.corrcoef(estimated, true_accuracy)[0, 1] > 0.9
    assert np.abs(estimated - true_accuracy).mean() < 0.05


def test_each_task_gets_its_categorys_column_of_the_learnt_table():
    project = make_project()
    crowd(project, np.full(12, 0.8), n_tasks=90, answers_per_task=3, categories=("b", "a", "c"))
    matrix = quality_estimate(project=project, source="answers")
    tasks = list(Task.objects.filter(project=project).order_by("pk"))
    assert matrix.categories == ["a", "b", "c"]
    assert matrix.task_ids.tolist() == [t.pk for t in tasks]
    assert matrix.task_category.tolist() == [matrix.categories.index(t.category) for t in tasks]
    assert matrix.category_table.shape == (12, 3)


def test_answers_of_other_projects_are_not_counted():
    project = make_project()
    crowd(project, np.full(5, 0.9), n_tasks=20, answers_per_task=2)
    other = make_project("other")
    crowd(other, np.full(5, 0.6), n_tasks=50, answers_per_task=3, seed=1)
    matrix = quality_estimate(project=project, source="answers")
    assert matrix.details["n_answers"] == 40
    assert matrix.n_workers == 5


# --------------------------------------------------------------------------------------------
# Answers and gold together


def test_both_counts_the_gold_answers_of_a_worker_with_no_other_answers():
    project = make_project()
    workers, _truth = crowd(project, np.full(10, 0.8), n_tasks=200, answers_per_task=3)
    careful = Worker.objects.create(project=project, external_id="careful")
    sloppy = Worker.objects.create(project=project, external_id="sloppy")
    gold(project, [*workers, careful, sloppy], [0.8] * 10 + [1.0, 0.1], n_items=60, per_worker=40)
    answers_only = quality_estimate(project=project, source="answers")
    both = quality_estimate(project=project, source="both")
    # From the answers alone the two gold-only workers are unknown: the population's accuracy.
    np.testing.assert_allclose(worker_accuracy(answers_only)[-2:], [0.8, 0.8], atol=0.05)
    # With gold, their gold answers are evidence: one nearly always right, one nearly never.
    careful_q, sloppy_q = worker_accuracy(both)[-2:]
    assert careful_q > 0.9
    assert sloppy_q < 0.3
    assert both.source == QualitySource.GOLD_AND_ANSWERS
    assert both.details["n_gold_answers"] == 12 * 40
    assert both.details["n_answers"] == 600
    assert both.gold_counts.tolist() == [40] * 12


def test_gold_outweighing_a_lying_crowd_turns_its_majority_around():
    """Workers who are wrong 75% of the time look reliable to EM without gold (the label swap
    fits their answers as well); gold items, clamped to their truths, tell them apart."""
    project = make_project()
    liars = np.full(8, 0.25)
    workers, _truth = crowd(project, liars, n_tasks=40, answers_per_task=5)
    gold(project, workers, liars, n_items=120, per_worker=100)
    assert worker_accuracy(quality_estimate(project=project, source="answers")).mean() > 0.6
    assert worker_accuracy(quality_estimate(project=project, source="both")).mean() < 0.4


def test_both_leaves_out_gold_items_nobody_answered_and_takes_gold_only_categories():
    project = make_project()
    workers, _truth = crowd(project, np.full(6, 0.8), n_tasks=30, answers_per_task=3)
    item = GoldItem.objects.create(
        project=project, external_id="rare", category="rare", true_label="1"
    )
    GoldItem.objects.create(project=project, external_id="unseen", category="c0", true_label="0")
    GoldAnswer.objects.create(worker=workers[0], item=item, answer="1")
    matrix = quality_estimate(project=project, source="both")
    assert matrix.details["n_gold_answers"] == 1
    assert matrix.details["categories"] == 2  # c0 and the gold-only "rare"
    assert matrix.categories == ["c0"]  # only the tasks' categories are stored


# --------------------------------------------------------------------------------------------
# Refusals and warnings


def test_an_estimate_from_answers_needs_collected_answers():
    project = make_project()
    Worker.objects.create(project=project, external_id="w1")
    Task.objects.create(project=project, external_id="t1", category="c")
    for source in ("answers", "both"):
        with pytest.raises(
            QualityEstimationError,
            match=r"project 'demo' has no collected answers; upload them \(the project's Data "
            r"page, .*\) or estimate from gold",
        ):
            quality_estimate(project=project, source=source)
    assert not QualityMatrix.objects.exists()


def test_one_answer_a_task_and_no_gold_is_refused_for_em_would_call_every_worker_right():
    project = make_project()
    workers, _ = crowd(project, np.full(10, 0.7), n_tasks=60, answers_per_task=1)
    with pytest.raises(QualityEstimationError, match="no task has two answers and no gold item"):
        quality_estimate(project=project, source="answers")
    assert not QualityMatrix.objects.exists()
    # One gold item answered, or one task answered twice, is something to check answers by.
    item = GoldItem.objects.create(project=project, external_id="g", category="c0", true_label="1")
    GoldAnswer.objects.create(worker=workers[0], item=item, answer="1")
    assert quality_estimate(project=project, source="both")
    task = Task.objects.filter(project=project).order_by("pk").first()
    answered = set(Answer.objects.filter(task=task).values_list("worker_id", flat=True))
    other = next(worker for worker in workers if worker.pk not in answered)
    Answer.objects.create(worker=other, task=task, label="0")
    assert quality_estimate(project=project, source="answers")


def test_an_estimate_from_both_needs_gold_answers_and_says_to_use_the_answers_alone():
    project = make_project()
    crowd(project, np.full(3, 0.8), n_tasks=5, answers_per_task=2)
    with pytest.raises(QualityEstimationError, match=r"no gold answers.*\(source 'answers'\)"):
        quality_estimate(project=project, source="both")


def test_an_estimate_from_gold_without_gold_points_to_the_collected_answers():
    project = make_project()
    crowd(project, np.full(3, 0.8), n_tasks=5, answers_per_task=2)
    with pytest.raises(QualityEstimationError, match=r"collected answers \(source 'answers'\)"):
        quality_estimate(project=project)


def test_an_answer_with_a_label_outside_the_set_is_named():
    project = make_project()
    crowd(project, np.full(3, 0.8), n_tasks=5, answers_per_task=2)
    Answer.objects.filter(worker__external_id="w1").update(label="maybe")
    task = Answer.objects.filter(worker__external_id="w1").order_by("pk").first().task
    with pytest.raises(
        QualityEstimationError,
        match=rf"an answer of worker 'w1' on task '{task.external_id}' has the label 'maybe', "
        r"which is not in project 'demo''s label set \['0', '1'\]",
    ):
        quality_estimate(project=project, source="answers")


def test_a_gold_answer_or_a_gold_truth_outside_the_label_set_is_named():
    project = make_project()
    workers, _truth = crowd(project, np.full(3, 0.8), n_tasks=5, answers_per_task=2)
    gold(project, workers, [0.8] * 3, n_items=4, per_worker=2)
    GoldAnswer.objects.filter(worker=workers[2]).update(answer="2")
    with pytest.raises(QualityEstimationError, match=r"worker 'w2' on gold item .* label '2'"):
        quality_estimate(project=project, source="both")
    GoldAnswer.objects.filter(worker=workers[2]).update(answer="0")
    answered = GoldItem.objects.filter(answers__isnull=False).order_by("pk").first()
    GoldItem.objects.filter(pk=answered.pk).update(true_label="yes")
    with pytest.raises(
        QualityEstimationError,
        match=f"gold item '{answered.external_id}' has the true label 'yes', which is not in",
    ):
        quality_estimate(project=project, source="both")


@pytest.mark.parametrize("strength", ["worker_strength", "category_strength"])
def test_fitted_strengths_are_for_gold_only(strength):
    project = make_project()
    crowd(project, np.full(3, 0.8), n_tasks=5, answers_per_task=2)
    with pytest.raises(QualityEstimationError, match=f"{strength} 'auto' is fitted only for"):
        quality_estimate(project=project, source="answers", **{strength: "auto"})


def test_a_model_is_refused_for_an_estimate_from_gold():
    project = make_project()
    crowd(project, np.full(3, 0.8), n_tasks=5, answers_per_task=2)
    with pytest.raises(QualityEstimationError, match="model 'dawid-skene' is the worker model"):
        quality_estimate(project=project, source="gold", model="dawid-skene")


def test_an_estimate_that_did_not_converge_is_stored_saying_so_with_a_warning(caplog):
    project = make_project()
    crowd(project, np.random.default_rng(0).uniform(0.6, 0.9, 10), n_tasks=60, answers_per_task=3)
    with caplog.at_level(logging.WARNING, logger="assignment.services.quality"):
        matrix = quality_estimate(project=project, source="answers", max_iterations=1)
    assert matrix.details["converged"] is False
    assert matrix.details["iterations"] == 1
    assert any(
        "did not converge in 1 iterations" in record.getMessage()
        for record in caplog.records
        if record.name == "assignment.services.quality"
    )


def test_a_dawid_skene_estimate_keeps_each_workers_confusion_matrix_and_one_coin_none():
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(6).uniform(0.5, 0.95, 12)
    crowd(project, accuracy, n_tasks=300, answers_per_task=3, labels=("cat", "dog", "bird"))
    matrix = quality_estimate(project=project, source="answers", model="dawid-skene")
    stored = QualityMatrix.objects.get(pk=matrix.pk).confusion
    assert stored.shape == (12, 3, 3)
    np.testing.assert_allclose(stored.sum(axis=2), 1.0)
    # The diagonal is each worker's accuracy on each true label: it follows the true accuracy.
    assert np.corrcoef(stored.diagonal(axis1=1, axis2=2).mean(axis=1), accuracy)[0, 1] > 0.8
    one_coin = quality_estimate(project=project, source="answers", model="one-coin")
    assert QualityMatrix.objects.get(pk=one_coin.pk).confusion is None


@pytest.mark.parametrize("model", ["dawid-skene", "one-coin"])
def test_a_run_on_dawid_skene_quality_says_its_accuracy_under_the_confusion_matrices(model):
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(8).uniform(0.5, 0.95, 12)
    crowd(project, accuracy, n_tasks=200, answers_per_task=3, labels=("cat", "dog", "bird"))
    matrix = quality_estimate(project=project, source="answers", model=model)
    run = services.run_create(project=project, method="greedy", seed=0, enqueue=False)
    assert services.run_claim(run_id=run.pk)
    services.run_execute(run_id=run.pk)
    run = AssignmentRun.objects.get(pk=run.pk)
    assert run.status == "succeeded", run.error
    api = APIClient()
    api.force_authenticate(user=project.owner)
    answer = api.get(f"/api/runs/{run.pk}/").json()
    assert answer["dawid_skene_accuracy"] == run.dawid_skene_accuracy
    assert answer["chosen_under"] == ("symmetric" if model == "one-coin" else "dawid_skene")
    if model == "one-coin":
        assert run.dawid_skene_accuracy is None
        return
    figures = run.dawid_skene_accuracy
    problem = _whole_problem(run)
    pairs = (run.pairs[:, 0].astype(np.int64), run.pairs[:, 1].astype(np.int64))
    assert figures == accuracy_under_confusion(problem, pairs, matrix.confusion)
    best, bayes = figures["dawid_skene_vote"], figures["bayes_vote"]
    assert 1 / 3 < bayes["expected_accuracy"] <= best["expected_accuracy"] + 1e-12 <= 1 + 1e-12


def _executed(run) -> AssignmentRun:
    assert services.run_claim(run_id=run.pk)
    services.run_execute(run_id=run.pk)
    run = AssignmentRun.objects.get(pk=run.pk)
    assert run.status == "succeeded", run.error
    return run


def test_a_run_on_dawid_skene_quality_is_chosen_and_scored_under_the_confusion_matrices():
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(8).uniform(0.5, 0.95, 12)
    crowd(project, accuracy, n_tasks=60, answers_per_task=3, labels=("cat", "dog", "bird"))
    matrix = quality_estimate(project=project, source="answers", model="dawid-skene")
    run = _executed(services.run_create(project=project, method="greedy", seed=0, enqueue=False))
    problem = _whole_problem(run, under_confusion=True)
    np.testing.assert_array_equal(problem.confusion, matrix.confusion)
    chosen = greedy_confusion(problem)
    np.testing.assert_array_equal(run.pairs[:, 0], chosen.rows)
    np.testing.assert_array_equal(run.pairs[:, 1], chosen.cols)
    ds = confusion_accuracy(
        matrix.confusion, chosen.rows, chosen.cols, prior=problem.prior_distribution
    )
    assert run.expected_accuracy == ds.expected_accuracy
    assert run.dawid_skene_accuracy["dawid_skene_vote"]["expected_accuracy"] == pytest.approx(
        ds.expected_accuracy, abs=1e-12
    )
    assert "Dawid\u2013Skene" in run.progress_message
    # The page's histogram is of the Dawid-Skene vote's per-task accuracies too.
    bins = np.linspace(1 / 3, 1, 21)
    counts = np.histogram(np.clip(ds.task_accuracy, bins[0], 1.0), bins=bins)[0]
    assert run.summary["task_accuracy"]["counts"] == counts.tolist()


def _answers_by_hand(project, matrix):
    """The project's answers as (rows, columns, label indices) of ``matrix``."""
    row = {int(pk): i for i, pk in enumerate(matrix.worker_ids)}
    column = {int(pk): j for j, pk in enumerate(matrix.task_ids)}
    found = Answer.objects.filter(task__project=project).values_list(
        "worker_id", "task_id", "label"
    )
    rows, columns, labels = zip(*found, strict=True)
    return (
        np.array([row[w] for w in rows]),
        np.array([column[t] for t in columns]),
        np.array([project.labels.index(label) for label in labels]),
    )


def test_a_next_round_on_dawid_skene_quality_is_chosen_and_scored_under_the_confusion_matrices():
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(9).uniform(0.5, 0.95, 12)
    crowd(project, accuracy, n_tasks=60, answers_per_task=2, labels=("cat", "dog", "bird"))
    matrix = quality_estimate(project=project, source="answers", model="dawid-skene")
    confusion = matrix.confusion
    run = services.run_create(
        project=project, method="greedy", seed=0, next_round=True, budget=20, enqueue=False
    )
    # What the round starts from is Dawid-Skene's posterior, by Bayes' rule worked by hand.
    rows, columns, labels = _answers_by_hand(project, matrix)
    posterior = np.full((60, 3), 1 / 3)
    for i, j, a in zip(rows, columns, labels, strict=True):
        posterior[j] *= confusion[i, :, a]
    posterior /= posterior.sum(axis=1, keepdims=True)
    assert run.round_start["dawid_skene"] is True
    assert run.round_start["accuracy_now"] == pytest.approx(posterior.max(axis=1).mean(), abs=1e-12)
    overview = selectors.round_overview(
        project=project, readiness=selectors.run_readiness(project=project)
    )
    assert overview.accuracy_now == pytest.approx(run.round_start["accuracy_now"], abs=1e-12)
    # Beside it, the Bayes labels' (the default download's) chance under the same matrices:
    # the symmetric vote by hand (uniform prior, no ties here), scored by those posteriors.
    q = np.clip(matrix.quality_at(rows=rows, columns=columns), 1e-6, 1 - 1e-6)
    scores = np.zeros((60, 3))
    np.add.at(scores, (columns, labels), np.log(q * 2 / (1 - q)))
    bayes = scores.argmax(axis=1)
    assert overview.bayes_accuracy_now == pytest.approx(
        posterior[np.arange(60), bayes].mean(), abs=1e-12
    )
    assert overview.bayes_accuracy_now < overview.accuracy_now
    run = _executed(run)
    # Chosen by the Dawid-Skene greedy on the round's problem (those posteriors as priors).
    nxt = next_round(
        _whole_problem(run),
        worker_index=rows,
        task_index=columns,
        label=labels,
        budget=20,
        confusion=confusion,
    )
    np.testing.assert_allclose(nxt.posterior_distribution, posterior, atol=1e-12)
    chosen = greedy_confusion(nxt.problem)
    np.testing.assert_array_equal(run.pairs[:, 0], chosen.rows)
    np.testing.assert_array_equal(run.pairs[:, 1], chosen.cols)
    assert not (np.c_[rows, columns][:, None] == run.pairs[None]).all(axis=2).any()
    assert "Dawid\u2013Skene" in run.progress_message
    # Its accuracy: the Dawid-Skene vote's of the final labels given the answers in hand.
    final = confusion_accuracy(confusion, chosen.rows, chosen.cols, prior=nxt.prior_distribution)
    assert run.expected_accuracy == final.expected_accuracy
    assert run.expected_accuracy > run.round_start["accuracy_now"]
    figures = run.dawid_skene_accuracy
    assert figures["dawid_skene_vote"]["expected_accuracy"] == pytest.approx(
        final.expected_accuracy, abs=1e-12
    )
    # The Bayes vote's: the symmetric vote over all the answers, its prior the symmetric
    # posterior after the answers in hand, the labels drawn from Dawid-Skene's.
    symmetric = next_round(
        _whole_problem(run), worker_index=rows, task_index=columns, label=labels, budget=20
    )
    bayes = confusion_accuracy(
        confusion,
        chosen.rows,
        chosen.cols,
        prior=nxt.prior_distribution,
        vote_quality=nxt.problem.quality_at(chosen.rows, chosen.cols),
        vote_prior=symmetric.prior_distribution,
    )
    assert figures["bayes_vote"]["expected_accuracy"] == pytest.approx(
        bayes.expected_accuracy, abs=1e-12
    )
    assert figures["bayes_vote"]["expected_accuracy"] <= final.expected_accuracy + 1e-12
    api = APIClient()
    api.force_authenticate(user=project.owner)
    answer = api.get(f"/api/runs/{run.pk}/").json()
    assert answer["dawid_skene_accuracy"] == figures
    assert answer["round_start"]["dawid_skene"] is True
    assert answer["chosen_under"] == "dawid_skene"


def test_a_next_round_on_one_coin_quality_is_not_flagged_dawid_skene():
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(9).uniform(0.5, 0.95, 12)
    crowd(project, accuracy, n_tasks=30, answers_per_task=2, labels=("cat", "dog", "bird"))
    quality_estimate(project=project, source="answers", model="one-coin")
    run = services.run_create(
        project=project, method="greedy", seed=0, next_round=True, budget=10, enqueue=False
    )
    assert run.round_start["dawid_skene"] is False
    run = _executed(run)
    assert run.dawid_skene_accuracy is None
    assert "Dawid\u2013Skene" not in run.progress_message


def test_a_comparison_on_dawid_skene_quality_shows_no_symmetric_upper_bound():
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(10).uniform(0.5, 0.95, 8)
    crowd(project, accuracy, n_tasks=30, answers_per_task=2, labels=("cat", "dog", "bird"))
    quality_estimate(project=project, source="answers", model="dawid-skene")
    comparison = services.comparison_create(
        project=project, methods=["greedy"], budgets=[10], seed=1, enqueue=False
    )
    bound = services.comparison_upper_bound_compute(comparison_id=comparison.pk)
    assert bound["status"] == "not applicable"
    assert "confusion matrices" in bound["message"]


def test_confusion_matrices_that_no_longer_fit_the_labels_leave_a_next_round_symmetric(caplog):
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(9).uniform(0.5, 0.95, 12)
    crowd(project, accuracy, n_tasks=30, answers_per_task=2, labels=("cat", "dog", "bird"))
    matrix = quality_estimate(project=project, source="answers", model="dawid-skene")
    project.labels = ["cat", "dog", "bird", "fish"]  # a label added since the estimate
    project.save(update_fields=["labels"])
    assert selectors.fitting_confusion(project=project, matrix=matrix) is None
    run = services.run_create(
        project=project, method="greedy", seed=0, next_round=True, budget=10, enqueue=False
    )
    assert run.round_start["dawid_skene"] is False
    with caplog.at_level(logging.WARNING, logger="assignment.services.runs"):
        run = _executed(run)
    assert run.dawid_skene_accuracy is None
    assert "do not fit 4 labels; chosen without them" in caplog.text


def test_a_dawid_skene_round_with_rounds_to_go_scores_the_layers_it_takes_under_the_matrices():
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(12).uniform(0.5, 0.95, 12)
    crowd(project, accuracy, n_tasks=40, answers_per_task=2, labels=("cat", "dog", "bird"))
    matrix = quality_estimate(project=project, source="answers", model="dawid-skene")
    run = services.run_create(
        project=project, method="greedy", seed=0, next_round=True, rounds_left=3, enqueue=False
    )
    run = _executed(run)
    rows, columns, labels = _answers_by_hand(project, matrix)
    nxt = next_round(
        _whole_problem(run),
        worker_index=rows,
        task_index=columns,
        label=labels,
        budget=run.budget,
        confusion=matrix.confusion,
    )
    assert run.n_assigned == nxt.layer_budget(3) < run.budget
    taken = confusion_accuracy(
        matrix.confusion, run.pairs[:, 0], run.pairs[:, 1], prior=nxt.prior_distribution
    )
    assert run.expected_accuracy == pytest.approx(taken.expected_accuracy, abs=1e-12)
    assert run.dawid_skene_accuracy["dawid_skene_vote"]["expected_accuracy"] == pytest.approx(
        taken.expected_accuracy, abs=1e-12
    )


_FIGURES = {
    "dawid_skene_vote": {"expected_accuracy": 0.9, "standard_error": 0.0},
    "bayes_vote": {"expected_accuracy": 0.85, "standard_error": 0.0},
}


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        ({}, "symmetric"),  # quality without confusion matrices: no dawid_skene_accuracy
        ({"dawid_skene_accuracy": _FIGURES}, "dawid_skene"),  # a run on DS quality
        # a sharded run planned before shards were chosen under the matrices, and one after
        (
            {"dawid_skene_accuracy": _FIGURES, "shards": 2, "shard_state": {"history": []}},
            "symmetric",
        ),
        (
            {"dawid_skene_accuracy": _FIGURES, "shards": 2, "shard_state": {"dawid_skene": True}},
            "dawid_skene",
        ),
        # a next round from the Dawid-Skene posteriors, and one from before rounds were
        (
            {
                "dawid_skene_accuracy": _FIGURES,
                "next_round": True,
                "round_start": {"answers": 4, "dawid_skene": True},
            },
            "dawid_skene",
        ),
        (
            {"dawid_skene_accuracy": _FIGURES, "next_round": True, "round_start": {"answers": 4}},
            "symmetric",
        ),
        # a next round on one-coin quality
        ({"next_round": True, "round_start": {"answers": 4, "dawid_skene": False}}, "symmetric"),
        # q-lp and random choose under the symmetric model and are only scored under matrices
        ({"dawid_skene_accuracy": _FIGURES, "method": "q-lp"}, "symmetric"),
        ({"dawid_skene_accuracy": _FIGURES, "method": "random"}, "symmetric"),
    ],
)
def test_the_api_says_under_which_worker_model_the_assignment_was_chosen(columns, expected):
    project = make_project(labels=["cat", "dog", "bird"])
    accuracy = np.random.default_rng(10).uniform(0.5, 0.95, 6)
    crowd(project, accuracy, n_tasks=20, answers_per_task=2, labels=("cat", "dog", "bird"))
    quality_estimate(project=project, source="answers", model="one-coin")
    run = services.run_create(project=project, method="greedy", seed=0, enqueue=False)
    api = APIClient()
    api.force_authenticate(user=project.owner)
    assert api.get(f"/api/runs/{run.pk}/").json()["chosen_under"] is None  # queued
    run = _executed(run)
    AssignmentRun.objects.filter(pk=run.pk).update(**columns)
    answer = api.get(f"/api/runs/{run.pk}/").json()
    assert answer["chosen_under"] == expected
    listed = api.get("/api/runs/", {"project": project.pk}).json()["results"]
    assert [row["chosen_under"] for row in listed] == [expected]
    assert AssignmentRun.objects.get(pk=run.pk).chosen_under == expected  # the page's rule
