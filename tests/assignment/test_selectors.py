"""Selectors: project counts, quality matrix statistics and list annotations, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from project_data import project_with_gold_and_answers

from assignment.models import (
    AssignmentRun,
    Method,
    Project,
    QualityMatrix,
    QualitySource,
    RunStatus,
    Task,
    Worker,
)
from assignment.selectors import (
    RECENT_RUNS,
    gold_answer_list,
    project_list_with_counts,
    project_statistics,
    quality_matrix_list,
    quality_matrix_statistics,
    workers_by_gold_answers,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("owner", password="x")


@pytest.fixture
def project_with_gold(owner):
    """4 workers (3 active), 5 tasks in 2 categories, 2 gold items, 3 gold answers, 2 answers."""
    return project_with_gold_and_answers(
        owner, "demo", n_workers=4, n_tasks=5, categories=("a", "b")
    )


def stored_matrix(project, values, *, gold_counts=None, source=QualitySource.ESTIMATED):
    matrix = QualityMatrix(project=project, source=source)
    matrix.set_arrays(
        values=values,
        worker_ids=np.arange(values.shape[0]),
        task_ids=np.arange(values.shape[1]),
        task_categories=["c"] * values.shape[1],
        gold_counts=gold_counts,
    )
    matrix.save()
    return QualityMatrix.objects.get(pk=matrix.pk)


def test_project_statistics_count_everything_in_the_project_and_nothing_outside_it(
    project_with_gold,
):
    other = Project.objects.create(owner=project_with_gold.owner, name="other")
    Worker.objects.create(project=other, external_id="w0")
    Task.objects.create(project=other, external_id="t0", category="z")

    stats = project_statistics(project=project_with_gold)

    assert (stats.workers, stats.active_workers, stats.workers_without_gold_answers) == (4, 3, 2)
    assert (stats.tasks, stats.categories) == (5, 2)
    assert (stats.gold_items, stats.gold_answers, stats.answers) == (2, 3, 2)
    assert (stats.quality_matrices, stats.latest_quality_matrix) == (0, None)
    assert (stats.runs, stats.recent_runs) == (0, ())


def test_quality_matrix_statistics_match_numpy_on_the_stored_matrix(project_with_gold):
    rng = np.random.default_rng(1)
    stored = stored_matrix(
        project_with_gold, rng.uniform(0.5, 0.9, (4, 5)), gold_counts=[2, 1, 0, 0]
    )
    values = stored.values

    stats = quality_matrix_statistics(matrix=stored)

    assert stats.mean == pytest.approx(np.mean(values))
    assert stats.std == pytest.approx(np.std(values))
    assert stats.min == pytest.approx(np.min(values))
    assert stats.max == pytest.approx(np.max(values))
    assert stats.workers_without_gold == 2
    assert (stats.n_workers, stats.n_tasks, stats.matrix_id) == (4, 5, stored.pk)
    assert stats.source == QualitySource.ESTIMATED.label


def test_an_uploaded_matrix_without_gold_counts_reports_workers_without_gold_as_unknown(
    project_with_gold,
):
    stats = quality_matrix_statistics(
        matrix=stored_matrix(project_with_gold, np.full((2, 3), 0.7), source=QualitySource.UPLOADED)
    )
    assert stats.workers_without_gold is None
    assert (stats.mean, stats.std) == (pytest.approx(0.7), pytest.approx(0.0))


def test_an_empty_matrix_has_no_value_statistics(project_with_gold):
    stats = quality_matrix_statistics(matrix=stored_matrix(project_with_gold, np.zeros((0, 3))))
    assert (stats.mean, stats.std, stats.min, stats.max) == (None, None, None, None)


def test_project_statistics_summarise_the_latest_quality_matrix(project_with_gold):
    stored_matrix(project_with_gold, np.full((4, 5), 0.6), gold_counts=[1, 1, 1, 1])
    latest = stored_matrix(
        project_with_gold, np.arange(20.0).reshape(4, 5) / 20, gold_counts=[3, 0, 0, 0]
    )

    stats = project_statistics(project=project_with_gold)

    assert stats.quality_matrices == 2
    assert stats.latest_quality_matrix == quality_matrix_statistics(matrix=latest)
    assert stats.latest_quality_matrix.workers_without_gold == 3
    assert stats.latest_quality_matrix.mean == pytest.approx(np.mean(latest.values))


def test_project_statistics_list_the_latest_runs_newest_first(project_with_gold):
    matrix = stored_matrix(project_with_gold, np.full((4, 5), 0.7))
    runs = [
        AssignmentRun.objects.create(
            project=project_with_gold,
            quality_matrix=matrix,
            method=Method.TVCS_IHT,
            budget=budget,
            max_workers_per_task=3,
            max_tasks_per_worker=5,
            status=RunStatus.SUCCEEDED,
            expected_accuracy=0.8,
        )
        for budget in range(1, RECENT_RUNS + 3)
    ]

    stats = project_statistics(project=project_with_gold)

    assert stats.runs == RECENT_RUNS + 2
    assert [run.run_id for run in stats.recent_runs] == [r.pk for r in runs[::-1][:RECENT_RUNS]]
    assert stats.recent_runs[0].expected_accuracy == 0.8
    assert stats.recent_runs[0].status == RunStatus.SUCCEEDED.label


def test_project_list_counts_each_table_separately_without_multiplying_rows(project_with_gold):
    empty = Project.objects.create(owner=project_with_gold.owner, name="empty")
    counts = {
        p.pk: (p.worker_count, p.task_count, p.gold_item_count) for p in project_list_with_counts()
    }
    assert counts == {project_with_gold.pk: (4, 5, 2), empty.pk: (0, 0, 0)}


def test_gold_answers_are_marked_correct_when_they_match_the_true_label(project_with_gold):
    marks = {(g.worker.external_id, g.item.external_id): g.is_correct for g in gold_answer_list()}
    assert marks == {("w0", "g0"): True, ("w0", "g1"): False, ("w1", "g0"): True}


def test_workers_split_by_whether_they_have_gold_answers(project_with_gold):
    def ids(with_gold):
        return sorted(w.external_id for w in workers_by_gold_answers(with_gold=with_gold))

    assert (ids(True), ids(False)) == (["w0", "w1"], ["w2", "w3"])


def test_the_quality_matrix_list_does_not_load_the_arrays(project_with_gold):
    stored_matrix(project_with_gold, np.full((4, 5), 0.7))
    matrix = quality_matrix_list().get()
    assert {"task_ids_blob", "gold_counts_blob"} <= matrix.get_deferred_fields()


def test_the_round_overview_uses_each_tasks_own_prior_and_the_answers_posteriors(project_with_gold):
    from assignment.engine.aggregate import aggregate_pairs
    from assignment.selectors import round_overview, run_readiness

    workers = list(Worker.objects.filter(project=project_with_gold).order_by("pk"))
    tasks = list(Task.objects.filter(project=project_with_gold).order_by("pk"))
    Task.objects.filter(pk=tasks[3].pk).update(prior=0.9)
    matrix = QualityMatrix(project=project_with_gold, source=QualitySource.UPLOADED)
    values = np.linspace(0.6, 0.9, 20).reshape(4, 5)
    matrix.set_arrays(  # tasks stored in reverse order: positions, not primary keys, count
        values=values,
        worker_ids=[w.pk for w in workers],
        task_ids=[t.pk for t in reversed(tasks)],
        task_categories=["c"] * 5,
    )
    matrix.save()
    overview = round_overview(
        project=project_with_gold, readiness=run_readiness(project=project_with_gold)
    )
    prior = np.array([0.5, 0.9, 0.5, 0.5, 0.5])  # task 3 is the matrix's column 1
    posterior = aggregate_pairs(
        task_index=np.array([4, 4]),
        quality=np.array([values[0, 4], values[1, 4]]),
        said_one=np.array([True, False]),
        prior=prior,
    ).posterior
    assert overview.answers == 2
    assert overview.tasks == 5
    assert overview.accuracy_now == pytest.approx(np.maximum(posterior, 1 - posterior).mean())
    assert overview.bayes_accuracy_now is None  # no confusion matrices: one set of labels
    assert overview.uncertain == 5  # nothing is at 0.95 yet


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("floor", "came out at its floor, 0.1: "),
        ("ceiling", "came out at its ceiling, 10,000: "),
        ("default", "cannot identify it ("),
    ],
)
@pytest.mark.parametrize("name", ["worker", "category"])
def test_a_strength_auto_did_not_fit_well_gets_a_warning_and_a_good_fit_none(name, how, says):
    from assignment.selectors import quality_strength_warnings

    matrix = QualityMatrix(details={"strength_fits": {name: how}})
    [(strength, text)] = quality_strength_warnings(matrix=matrix)
    assert strength == name
    assert text.startswith(f'The {name} strength was to be fitted to the gold answers ("auto")')
    assert says in text
    fitted = QualityMatrix(details={"strength_fits": {name: "fitted"}})
    assert quality_strength_warnings(matrix=fitted) == []
    assert quality_strength_warnings(matrix=QualityMatrix(details={})) == []
