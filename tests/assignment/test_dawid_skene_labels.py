"""Labels by Dawid-Skene: EM over the collected answers alone, any number of labels."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from project_data import import_text, make_project

from assignment import selectors
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
