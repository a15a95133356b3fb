"""Selectors: project counts, quality matrix statistics and list annotations, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth import get_user_model

from assignment.models import (
    Answer,
    AssignmentRun,
    GoldAnswer,
    GoldItem,
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
def project(owner):
    """4 workers (3 active), 5 tasks in 2 categories, 2 gold items, 3 gold answers, 2 answers."""
    project = Project.objects.create(owner=owner, name="demo")
    workers = [
        Worker.objects.create(project=project, external_id=f"w{i}", active=i != 3) for i in range(4)
    ]
    tasks = [
        Task.objects.create(project=project, external_id=f"t{j}", category="ab"[j % 2])
        for j in range(5)
    ]
    items = [
        GoldItem.objects.create(project=project, external_id=f"g{k}", category="a", true_label="1")
        for k in range(2)
    ]
    GoldAnswer.objects.create(worker=workers[0], item=items[0], answer="1")
    GoldAnswer.objects.create(worker=workers[0], item=items[1], answer="0")
    GoldAnswer.objects.create(worker=workers[1], item=items[0], answer="1")
    Answer.objects.create(worker=workers[0], task=tasks[0], label="1")
    Answer.objects.create(worker=workers[1], task=tasks[0], label="0")
    return project


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


def test_project_statistics_count_everything_in_the_project_and_nothing_outside_it(project):
    other = Project.objects.create(owner=project.owner, name="other")
    Worker.objects.create(project=other, external_id="w0")
    Task.objects.create(project=other, external_id="t0", category="z")

    stats = project_statistics(project=project)

    assert (stats.workers, stats.active_workers, stats.workers_without_gold_answers) == (4, 3, 2)
    assert (stats.tasks, stats.categories) == (5, 2)
    assert (stats.gold_items, stats.gold_answers, stats.answers) == (2, 3, 2)
    assert (stats.quality_matrices, stats.latest_quality_matrix) == (0, None)
    assert (stats.runs, stats.recent_runs) == (0, ())


def test_quality_matrix_statistics_match_numpy_on_the_stored_matrix(project):
    rng = np.random.default_rng(1)
    stored = stored_matrix(project, rng.uniform(0.5, 0.9, (4, 5)), gold_counts=[2, 1, 0, 0])
    values = stored.values

    stats = quality_matrix_statistics(matrix=stored)

    assert stats.mean == pytest.approx(np.mean(values))
    assert stats.std == pytest.approx(np.std(values))
    assert stats.min == pytest.approx(np.min(values))
    assert stats.max == pytest.approx(np.max(values))
    assert stats.workers_without_gold == 2
    assert (stats.n_workers, stats.n_tasks, stats.matrix_id) == (4, 5, stored.pk)
    assert stats.source == QualitySource.ESTIMATED.label


def test_an_uploaded_matrix_without_gold_counts_reports_workers_without_gold_as_unknown(project):
    stats = quality_matrix_statistics(
        matrix=stored_matrix(project, np.full((2, 3), 0.7), source=QualitySource.UPLOADED)
    )
    assert stats.workers_without_gold is None
    assert (stats.mean, stats.std) == (pytest.approx(0.7), pytest.approx(0.0))


def test_an_empty_matrix_has_no_value_statistics(project):
    stats = quality_matrix_statistics(matrix=stored_matrix(project, np.zeros((0, 3))))
    assert (stats.mean, stats.std, stats.min, stats.max) == (None, None, None, None)


def test_project_statistics_summarise_the_latest_quality_matrix(project):
    stored_matrix(project, np.full((4, 5), 0.6), gold_counts=[1, 1, 1, 1])
    latest = stored_matrix(project, np.arange(20.0).reshape(4, 5) / 20, gold_counts=[3, 0, 0, 0])

    stats = project_statistics(project=project)

    assert stats.quality_matrices == 2
    assert stats.latest_quality_matrix == quality_matrix_statistics(matrix=latest)
    assert stats.latest_quality_matrix.workers_without_gold == 3
    assert stats.latest_quality_matrix.mean == pytest.approx(np.mean(latest.values))


def test_project_statistics_list_the_latest_runs_newest_first(project):
    matrix = stored_matrix(project, np.full((4, 5), 0.7))
    runs = [
        AssignmentRun.objects.create(
            project=project,
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

    stats = project_statistics(project=project)

    assert stats.runs == RECENT_RUNS + 2
    assert [run.run_id for run in stats.recent_runs] == [r.pk for r in runs[::-1][:RECENT_RUNS]]
    assert stats.recent_runs[0].expected_accuracy == 0.8
    assert stats.recent_runs[0].status == RunStatus.SUCCEEDED.label


def test_project_list_counts_each_table_separately_without_multiplying_rows(project):
    empty = Project.objects.create(owner=project.owner, name="empty")
    counts = {
        p.pk: (p.worker_count, p.task_count, p.gold_item_count) for p in project_list_with_counts()
    }
    assert counts == {project.pk: (4, 5, 2), empty.pk: (0, 0, 0)}


def test_gold_answers_are_marked_correct_when_they_match_the_true_label(project):
    marks = {(g.worker.external_id, g.item.external_id): g.is_correct for g in gold_answer_list()}
    assert marks == {("w0", "g0"): True, ("w0", "g1"): False, ("w1", "g0"): True}


def test_workers_split_by_whether_they_have_gold_answers(project):
    def ids(with_gold):
        return sorted(w.external_id for w in workers_by_gold_answers(with_gold=with_gold))

    assert (ids(True), ids(False)) == (["w0", "w1"], ["w2", "w3"])


def test_the_quality_matrix_list_does_not_load_the_arrays(project):
    stored_matrix(project, np.full((4, 5), 0.7))
    matrix = quality_matrix_list().get()
    assert {"task_ids_blob", "gold_counts_blob"} <= matrix.get_deferred_fields()


def test_the_round_overview_uses_each_tasks_own_prior_and_the_answers_posteriors(project):
    from assignment.engine.aggregate import aggregate_pairs
    from assignment.selectors import round_overview, run_readiness

    workers = list(Worker.objects.filter(project=project).order_by("pk"))
    tasks = list(Task.objects.filter(project=project).order_by("pk"))
    Task.objects.filter(pk=tasks[3].pk).update(prior=0.9)
    matrix = QualityMatrix(project=project, source=QualitySource.UPLOADED)
    values = np.linspace(0.6, 0.9, 20).reshape(4, 5)
    matrix.set_arrays(  # tasks stored in reverse order: positions, not primary keys, count
        values=values,
        worker_ids=[w.pk for w in workers],
        task_ids=[t.pk for t in reversed(tasks)],
        task_categories=["c"] * 5,
    )
    matrix.save()
    overview = round_overview(project=project, readiness=run_readiness(project=project))
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
    assert overview.uncertain == 5  # nothing is at 0.95 yet
