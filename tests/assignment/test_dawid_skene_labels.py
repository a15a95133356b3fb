"""Labels by Dawid-Skene: under the quality's confusion matrices when it has them, else EM over
the collected answers alone; any number of labels."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from project_data import import_text, make_project

from assignment import selectors, services
from assignment.engine.confusion import confusion_posterior
from assignment.errors import ExportError
from assignment.exporters import export_data
from assignment.models import Answer, Task, Worker

pytestmark = pytest.mark.django_db

LABELS = ["cat", "dog", "bird"]


@pytest.fixture
def crowd():
    """A cat / dog / bird project: 4 good workers (0.9) among 8 poor ones (0.4, errors uniform
    over the other two labels), 5 answers on each of 120 tasks; returns (project, truth by
    task id). The poor workers outvote the good ones often: here a majority vote gets 92 of
    120 right, Dawid-Skene 101."""
    rng = np.random.default_rng(3)
    project = make_project(labels=LABELS)
    accuracy = np.r_[np.full(4, 0.9), np.full(8, 0.4)]
    truth = {f"t{j}": int(rng.integers(0, 3)) for j in range(120)}
    rows = []
    for task, y in truth.items():
        for i in rng.choice(12, 5, replace=False):
            said = y if rng.random() < accuracy[i] else int((y + rng.integers(1, 3)) % 3)
            rows.append(f"w{i},{task},{LABELS[said]}\n")
    import_text(project, "workers", "worker_id\n" + "".join(f"w{i}\n" for i in range(12)))
    import_text(project, "tasks", "task_id,category\n" + "".join(f"{t},c\n" for t in truth))
    import_text(project, "answers", "worker_id,task_id,answer\n" + "".join(rows))
    return project, truth


def test_dawid_skene_finds_the_good_workers_and_beats_the_majority_vote(crowd):
    project, truth = crowd
    labels = selectors.project_labels(project=project, aggregation="dawid-skene")
    assert len(labels) == len(truth)
    assert all(row.n_answers == 5 for row in labels)
    assert all(row.label in LABELS for row in labels)
    assert all(1 / 3 <= row.posterior <= 1 for row in labels)
    right = sum(LABELS.index(row.label) == truth[row.task_id] for row in labels)
    votes = {}
    for task, label in Answer.objects.values_list("task__external_id", "label"):
        votes.setdefault(task, []).append(label)
    majority = sum(
        max(LABELS, key=lambda label, v=v: (v.count(label), -LABELS.index(label)))
        == LABELS[truth[task]]
        for task, v in votes.items()
    )
    assert right >= majority + 0.05 * len(truth)
    assert right >= 0.8 * len(truth)


def test_the_bayes_vote_still_refuses_three_labels_while_dawid_skene_exports_them(crowd):
    project, _ = crowd
    with pytest.raises(ExportError):
        selectors.project_labels(project=project)
    out = io.StringIO()
    count = export_data(project=project, kind="labels_dawid_skene", format="csv", out=out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["task_id", "label", "posterior", "n_answers"]
    assert count == len(rows) - 1 == 120


def test_without_answers_dawid_skene_has_no_labels():
    project = make_project(labels=LABELS)
    assert selectors.project_labels(project=project, aggregation="dawid-skene") == []


def test_an_answer_outside_the_label_set_is_an_export_error_naming_it(crowd):
    project, _ = crowd
    Answer.objects.filter(pk=Answer.objects.first().pk).update(label="fish")
    with pytest.raises(ExportError, match="'fish'"):
        selectors.project_labels(project=project, aggregation="dawid-skene")
    assert Worker.objects.exists()
    assert Task.objects.exists()


def test_on_dawid_skene_quality_the_labels_are_those_the_project_page_describes(crowd):
    project, _ = crowd
    alone = selectors.project_labels(project=project, aggregation="dawid-skene")
    matrix = services.quality_estimate(project=project, source="answers", model="dawid-skene")
    labels = selectors.project_labels(project=project, aggregation="dawid-skene")
    # The posterior under the stored matrices and the tasks' priors, row by row.
    task_pk = dict(Task.objects.values_list("external_id", "pk"))
    column = {int(pk): j for j, pk in enumerate(matrix.task_ids)}
    row = {int(pk): i for i, pk in enumerate(matrix.worker_ids)}
    answers = list(Answer.objects.values_list("worker_id", "task_id", "label"))
    posterior = confusion_posterior(
        matrix.confusion,
        worker_index=np.array([row[w] for w, _, _ in answers]),
        task_index=np.array([column[t] for _, t, _ in answers]),
        label=np.array([LABELS.index(a) for _, _, a in answers]),
        prior=np.full((len(column), 3), 1 / 3),
    )
    for label in labels:
        j = column[task_pk[label.task_id]]
        assert label.posterior == pytest.approx(posterior[j].max(), abs=1e-12)
        assert posterior[j, LABELS.index(label.label)] == pytest.approx(posterior[j].max())
    # Every task is answered, so their mean is the project page's expected accuracy now.
    overview = selectors.round_overview(
        project=project, readiness=selectors.run_readiness(project=project)
    )
    mean = np.mean([label.posterior for label in labels])
    assert overview.accuracy_now == pytest.approx(mean, abs=1e-12)
    # Not EM over the answers alone again (no gold here, but the matrices are shrunk).
    assert [label.posterior for label in labels] != [label.posterior for label in alone]


def test_single_answers_without_confusion_matrices_are_refused_as_the_estimate_is():
    project = make_project(labels=LABELS)
    import_text(project, "workers", "worker_id\nw0\nw1\n")
    import_text(project, "tasks", "task_id,category\nt0,c\nt1,c\n")
    import_text(project, "answers", "worker_id,task_id,answer\nw0,t0,cat\nw1,t1,dog\n")
    with pytest.raises(ExportError, match="no task has two answers"):
        selectors.project_labels(project=project, aggregation="dawid-skene")
