"""Exports: every kind round-trips through its import, formula cells are neutralised, and the
aggregated labels are the Bayes vote of the collected answers."""

from __future__ import annotations

import csv
import io
import json
import os
import stat

import numpy as np
import pytest
from project_data import ALL_CSV, import_all, import_text, make_project, project_snapshot

from assignment import models
from assignment.engine import aggregate
from assignment.errors import ExportError
from assignment.exporters import (
    EXPORT_KINDS,
    export_data,
    quote_formula,
    write_when_complete,
)
from assignment.models import Answer, QualityMatrix, QualitySource, Task, Worker

pytestmark = pytest.mark.django_db

IMPORT_ORDER = ("workers", "tasks", "gold_items", "gold_answers", "answers", "quality")

#: Ids and names a spreadsheet would take for formulas, and other CSV troublemakers.
TRICKY_FILES = {
    "workers": json.dumps(
        [
            {"worker_id": "=1+2", "name": "@home", "max_tasks": 3},
            {"worker_id": "-5", "name": "+7", "max_tasks": None},
            {"worker_id": "a,b", "name": 'say "hi"\non two lines', "max_tasks": 0},
            {"worker_id": "Zoë 日本", "name": "", "max_tasks": 12},
        ]
    ),
    "tasks": json.dumps(
        [
            {"task_id": "t,1", "category": "=cat", "prior": 0.25, "payload": {"u": "=x", "n": 1}},
            {"task_id": "-t2", "category": "dogs", "prior": None, "payload": None},
        ]
    ),
    "gold_items": json.dumps(
        [
            {"item_id": "@g1", "category": "=cat", "true_label": "+1"},
            {"item_id": "g2", "category": "dogs", "true_label": "-1"},
        ]
    ),
    "gold_answers": json.dumps(
        [
            {"worker_id": "=1+2", "item_id": "@g1", "answer": "+1"},
            {"worker_id": "-5", "item_id": "@g1", "answer": "-1"},
            {"worker_id": "a,b", "item_id": "g2", "answer": "-1"},
        ]
    ),
    "answers": json.dumps(
        [
            {"worker_id": "=1+2", "task_id": "t,1", "answer": "+1"},
            {"worker_id": "Zoë 日本", "task_id": "-t2", "answer": "-1"},
        ]
    ),
    "quality": json.dumps(
        [
            {"worker_id": w, "task_id": t, "quality": q}
            for (w, t), q in zip(
                [(w, t) for w in ("=1+2", "-5", "a,b", "Zoë 日本") for t in ("t,1", "-t2")],
                [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1 / 3],
                strict=True,
            )
        ]
    ),
}


def exported(project, kind: str, format: str) -> str:
    out = io.StringIO()
    export_data(project=project, kind=kind, format=format, out=out)
    return out.getvalue()


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@pytest.fixture
def tricky():
    project = make_project("tricky", labels=["-1", "+1"])
    for kind in IMPORT_ORDER:
        import_text(project, kind, TRICKY_FILES[kind], name=f"{kind}.json")
    return project


@pytest.mark.parametrize("format", ["csv", "json"])
def test_exporting_every_kind_and_importing_it_into_a_fresh_project_gives_the_same_data(
    tricky, format
):
    fresh = make_project("fresh", labels=["-1", "+1"])
    for kind in IMPORT_ORDER:
        import_text(fresh, kind, exported(tricky, kind, format), name=f"{kind}.{format}")
    assert project_snapshot(fresh) == project_snapshot(tricky)


@pytest.mark.parametrize("format", ["csv", "json"])
def test_an_estimated_quality_matrix_round_trips_through_a_quality_file(format):
    from assignment.services import quality_estimate

    project = make_project()
    import_all(project, {kind: text for kind, text in ALL_CSV.items() if kind != "quality"})
    estimated = quality_estimate(project=project)
    fresh = make_project("fresh")
    for kind in IMPORT_ORDER:
        import_text(fresh, kind, exported(project, kind, format), name=f"{kind}.{format}")
    uploaded = QualityMatrix.objects.get(project=fresh)
    assert uploaded.source == QualitySource.UPLOADED
    np.testing.assert_array_equal(uploaded.values, estimated.values)  # floats written exactly


def test_csv_cells_that_start_like_formulas_are_prefixed_with_a_quote(tricky):
    workers = csv_rows(exported(tricky, "workers", "csv"))
    assert workers == [
        ["worker_id", "name", "max_tasks"],
        ["'=1+2", "'@home", "3"],
        ["'-5", "'+7", ""],
        ["a,b", 'say "hi"\non two lines', "0"],
        ["Zoë 日本", "", "12"],
    ]
    tasks = csv_rows(exported(tricky, "tasks", "csv"))
    assert tasks[1][:4] == ["t,1", "'=cat", "", "0.25"]
    assert json.loads(tasks[1][4]) == {"u": "=x", "n": 1}  # jsonb may reorder the keys
    assert tasks[2] == ["'-t2", "dogs", "", "", ""]
    gold = csv_rows(exported(tricky, "gold_answers", "csv"))
    assert gold[1:] == [["'=1+2", "'@g1", "'+1"], ["'-5", "'@g1", "'-1"], ["a,b", "g2", "'-1"]]


def test_numbers_the_exporter_writes_itself_are_never_prefixed(tricky):
    quality = csv_rows(exported(tricky, "quality", "csv"))
    values = [row[2] for row in quality[1:]]
    assert values == ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", repr(1 / 3)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("=SUM(A1:A9)", "'=SUM(A1:A9)"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@cmd", "'@cmd"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("\x00x", "'\x00x"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
        ("'=x", "''=x"),  # quoted already: quoted again, so that the import gives it back
        ("''-5", "'''-5"),
        ("'plain", "'plain"),
        ("'", "'"),
    ],
)
def test_quote_formula_prefixes_exactly_the_dangerous_first_characters(text, expected):
    assert quote_formula(text) == expected


@pytest.mark.parametrize(
    "text", ["=x", "'=x", "''=x", "-5", "'-5", "'", "''", "'a", "a'", "", "@", "'@", "x=1"]
)
def test_a_quoted_text_unquotes_to_itself_whatever_its_quotes(text):
    from assignment.data_files import unquote_formula

    assert unquote_formula(quote_formula(text)) == text


def test_json_exports_keep_user_text_as_it_is_and_numbers_as_numbers(tricky):
    tasks = json.loads(exported(tricky, "tasks", "json"))
    assert tasks == [
        {
            "task_id": "t,1",
            "category": "=cat",
            "max_workers": None,
            "prior": 0.25,
            "payload": {"u": "=x", "n": 1},
        },
        {"task_id": "-t2", "category": "dogs", "max_workers": None, "prior": None, "payload": None},
    ]


def test_an_empty_project_exports_a_header_or_an_empty_list():
    project = make_project()
    assert exported(project, "workers", "csv") == "worker_id,name,max_tasks\r\n"
    assert exported(project, "answers", "json") == "[]\n"


def test_quality_and_labels_exports_need_a_quality_matrix():
    project = make_project()
    for kind in ("quality", "labels"):
        with pytest.raises(ExportError, match="has no quality matrix yet"):
            exported(project, kind, "csv")


def test_every_export_kind_has_columns_and_a_description():
    assert set(EXPORT_KINDS) == {
        "workers",
        "tasks",
        "gold_items",
        "gold_answers",
        "quality",
        "answers",
        "labels",
        "labels_dawid_skene",
    }
    for spec in EXPORT_KINDS.values():
        assert spec.columns
        assert spec.description


def test_an_unknown_kind_or_format_is_an_export_error():
    project = make_project()
    with pytest.raises(ExportError, match="unknown export kind 'runs'"):
        exported(project, "runs", "csv")
    with pytest.raises(ExportError, match="unknown format 'xlsx'"):
        exported(project, "workers", "xlsx")


# --------------------------------------------------------------------------------------------
# Aggregated labels


@pytest.fixture
def answered():
    """8 workers x 12 tasks, known qualities, about half of the pairs answered."""
    rng = np.random.default_rng(3)
    project = make_project("labels")
    n, m = 8, 12
    workers = "worker_id\n" + "".join(f"w{i}\n" for i in range(n))
    tasks = "task_id,category,prior\n" + "".join(
        f"t{j},c,{'' if j % 3 else 0.2}\n" for j in range(m)
    )
    import_text(project, "workers", workers)
    import_text(project, "tasks", tasks)
    quality = rng.uniform(0.45, 0.95, (n, m))
    import_text(
        project,
        "quality",
        "worker_id,task_id,quality\n"
        + "".join(f"w{i},t{j},{float(quality[i, j])!r}\n" for i in range(n) for j in range(m)),
    )
    answers = np.where(rng.random((n, m)) < 0.5, rng.integers(0, 2, (n, m)), -1)
    answers[:, m - 1] = -1  # the last task has no answer
    import_text(
        project,
        "answers",
        "worker_id,task_id,answer\n"
        + "".join(
            f"w{i},t{j},{answers[i, j]}\n" for i in range(n) for j in range(m) if answers[i, j] >= 0
        ),
    )
    return project, quality, answers


def test_labels_are_the_bayes_vote_of_the_answers_with_the_posterior_of_that_label(answered):
    project, quality, answers = answered
    answered_tasks = [j for j in range(answers.shape[1]) if (answers[:, j] >= 0).any()]
    prior = np.array([0.5 if j % 3 else 0.2 for j in answered_tasks])
    expected = aggregate(answers[:, answered_tasks], quality[:, answered_tasks], prior=prior)
    rows = csv_rows(exported(project, "labels", "csv"))
    assert rows[0] == ["task_id", "label", "posterior", "n_answers"]
    assert [row[0] for row in rows[1:]] == [f"t{j}" for j in answered_tasks]
    for row, j, label, posterior in zip(
        rows[1:], answered_tasks, expected.labels, expected.posterior, strict=True
    ):
        assert row[1] == str(label)
        assert float(row[2]) == pytest.approx(posterior if label == 1 else 1 - posterior)
        assert float(row[2]) >= 0.5 - 1e-9
        assert int(row[3]) == int((answers[:, j] >= 0).sum())
    as_json = json.loads(exported(project, "labels", "json"))
    assert [obj["task_id"] for obj in as_json] == [row[0] for row in rows[1:]]
    assert all(isinstance(obj["posterior"], float) for obj in as_json)


def test_labels_use_the_projects_own_label_names():
    project = make_project("animals", labels=["cat", "dog"])
    import_text(project, "workers", "worker_id\nw1\nw2\n")
    import_text(project, "tasks", "task_id,category\nt1,a\n")
    import_text(project, "quality", "worker_id,task_id,quality\nw1,t1,0.9\nw2,t1,0.6\n")
    import_text(project, "answers", "worker_id,task_id,answer\nw1,t1,dog\nw2,t1,cat\n")
    rows = csv_rows(exported(project, "labels", "csv"))
    assert rows[1][:2] == ["t1", "dog"]
    assert float(rows[1][2]) == pytest.approx(0.9 * 0.4 / (0.9 * 0.4 + 0.1 * 0.6))


def test_labels_of_three_classes_are_the_k_class_bayes_vote_under_a_uniform_prior():
    project = make_project("three", labels=["a", "b", "c"])
    import_text(project, "workers", "worker_id\nw1\nw2\n")
    import_text(project, "tasks", "task_id,category\nt1,x\nt2,x\n")
    import_text(project, "quality", "worker_id,category,quality\nw1,x,0.8\nw2,x,0.6\n")
    import_text(project, "answers", "worker_id,task_id,answer\nw1,t1,b\nw2,t1,c\n")
    rows = list(csv.reader(io.StringIO(exported(project, "labels", "csv"))))
    # P(b) : P(c) : P(a) = 0.8 * 0.2 : 0.1 * 0.6 : 0.1 * 0.2 (a wrong answer: (1 - Q) / 2)
    assert rows[0] == ["task_id", "label", "posterior", "n_answers"]
    assert rows[1][:2] == ["t1", "b"]
    assert float(rows[1][2]) == pytest.approx(0.16 / 0.24)
    assert rows[1][3] == "2"
    assert len(rows) == 2


def test_labels_refuse_answers_of_a_worker_the_quality_matrix_does_not_cover(answered):
    project, _, _ = answered
    worker = Worker.objects.create(project=project, external_id="late")
    Answer.objects.create(worker=worker, task=Task.objects.get(external_id="t0"), label="1")
    with pytest.raises(ExportError, match="has no quality for worker 'late'"):
        exported(project, "labels", "csv")


def test_labels_refuse_answers_on_a_task_the_quality_matrix_does_not_cover(answered):
    project, _, _ = answered
    task = Task.objects.create(project=project, external_id="new", category="a")
    Answer.objects.create(
        worker=Worker.objects.filter(project=project).first(), task=task, label="1"
    )
    with pytest.raises(ExportError, match="has no quality for task 'new'"):
        exported(project, "labels", "csv")


def test_labels_refuse_an_answer_outside_the_label_set(answered):
    project, _, _ = answered
    Answer.objects.filter(worker__project=project).update(label="maybe")
    with pytest.raises(ExportError, match="label 'maybe', which is not in the project's label"):
        exported(project, "labels", "csv")


# --------------------------------------------------------------------------------------------
# Quality stored by category


@pytest.fixture
def categorised():
    """6 workers x 10 tasks in 3 categories, quality per category, about half the pairs
    answered; returns the project, the table (workers x sorted categories) and the tasks'
    category indices."""
    rng = np.random.default_rng(8)
    project = make_project("categorised")
    n, m = 6, 10
    task_category = rng.integers(0, 3, m)
    import_text(project, "workers", "worker_id\n" + "".join(f"w{i}\n" for i in range(n)))
    import_text(
        project,
        "tasks",
        "task_id,category\n" + "".join(f"t{j},c{task_category[j]}\n" for j in range(m)),
    )
    table = rng.uniform(0.45, 0.95, (n, 3))
    import_text(
        project,
        "quality",
        "worker_id,category,quality\n"
        + "".join(f"w{i},c{c},{float(table[i, c])!r}\n" for i in range(n) for c in range(3)),
    )
    answered = rng.random((n, m)) < 0.5
    import_text(
        project,
        "answers",
        "worker_id,task_id,answer\n"
        + "".join(
            f"w{i},t{j},{rng.integers(0, 2)}\n"
            for i in range(n)
            for j in range(m)
            if answered[i, j]
        ),
    )
    return project, table, task_category


@pytest.fixture
def no_dense_values(monkeypatch):
    """Reading a matrix's dense values fails: what uses this fixture never needs them."""

    def refuse(matrix):
        raise AssertionError(f"the dense values of quality matrix {matrix.pk} were read")

    monkeypatch.setattr(QualityMatrix, "values", property(refuse))


@pytest.mark.parametrize("given_per", ["category", "task"])
def test_quality_is_exported_a_block_of_worker_rows_at_a_time(
    categorised, monkeypatch, no_dense_values, given_per
):
    project, table, task_category = categorised
    if given_per == "task":
        dense = table[:, task_category]
        import_text(
            project,
            "quality",
            "worker_id,task_id,quality\n"
            + "".join(f"w{i},t{j},{float(dense[i, j])!r}\n" for i in range(6) for j in range(10)),
        )
    assert QualityMatrix.objects.latest_of(project).by_category == (given_per == "category")
    monkeypatch.setattr(models, "QUALITY_CHUNK_BYTES", 2 * 8 * 10)  # blocks of 2 workers
    Worker.objects.filter(project=project, external_id="w3").delete()
    Task.objects.filter(project=project, external_id="t5").delete()
    rows = csv_rows(exported(project, "quality", "csv"))
    assert rows[0] == ["worker_id", "task_id", "quality"]
    assert rows[1:] == [
        [f"w{i}", f"t{j}", repr(float(table[i, task_category[j]]))]
        for i in range(6)
        for j in range(10)
        if i != 3 and j != 5
    ]


def test_labels_from_quality_by_category_equal_those_from_the_same_quality_per_task(
    categorised, request
):
    project, table, task_category = categorised
    dense = table[:, task_category]
    import_text(
        project,
        "quality",
        "worker_id,task_id,quality\n"
        + "".join(f"w{i},t{j},{float(dense[i, j])!r}\n" for i in range(6) for j in range(10)),
    )
    per_task = exported(project, "labels", "csv")
    request.getfixturevalue("no_dense_values")
    import_text(
        project,
        "quality",
        "worker_id,category,quality\n"
        + "".join(f"w{i},c{c},{float(table[i, c])!r}\n" for i in range(6) for c in range(3)),
    )
    assert QualityMatrix.objects.latest_of(project).by_category
    assert exported(project, "labels", "csv") == per_task
    assert len(csv_rows(per_task)) > 5


# --------------------------------------------------------------------------------------------
# Files


def test_an_export_to_a_file_replaces_it_only_when_complete(tricky, tmp_path):
    path = tmp_path / "workers.csv"

    def export(project, kind):
        return write_when_complete(
            path, lambda out: export_data(project=project, kind=kind, format="csv", out=out)
        )

    assert export(tricky, "workers") == 4
    assert path.read_bytes().decode("utf-8") == exported(tricky, "workers", "csv")
    empty = make_project("empty")
    with pytest.raises(ExportError):
        export(empty, "labels")
    assert path.read_bytes().decode("utf-8") == exported(tricky, "workers", "csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workers.csv"]


def test_a_file_written_when_complete_gets_the_umasks_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        write_when_complete(tmp_path / "a.csv", lambda out: out.write("x\n"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.csv").stat().st_mode) == 0o644


def test_labels_of_three_classes_weigh_each_tasks_prior_and_the_tasks_file_gives_it_back():
    project = make_project("weighed", labels=["a", "b", "c"])
    import_text(project, "workers", "worker_id\nw1\n")
    import_text(
        project,
        "tasks",
        'task_id,category,prior\nt1,x,"{""a"": 0.8, ""b"": 0.1, ""c"": 0.1}"\nt2,x,\n',
    )
    import_text(project, "quality", "worker_id,category,quality\nw1,x,0.6\n")
    import_text(project, "answers", "worker_id,task_id,answer\nw1,t1,b\nw1,t2,b\n")
    rows = {row[0]: row for row in csv_rows(exported(project, "labels", "csv"))[1:]}
    # t1: P(a) : P(b) : P(c) = 0.8 * 0.2 : 0.1 * 0.6 : 0.1 * 0.2; t2 is uniform: b, 0.6.
    assert rows["t1"][1] == "a"
    assert float(rows["t1"][2]) == pytest.approx(0.16 / 0.24)
    assert rows["t2"][1] == "b"
    assert float(rows["t2"][2]) == pytest.approx(0.6)
    tasks = json.loads(exported(project, "tasks", "json"))
    assert tasks[0]["prior"] == pytest.approx({"a": 0.8, "b": 0.1, "c": 0.1})
    assert tasks[1]["prior"] is None
    again = make_project("again", labels=["a", "b", "c"])
    import_text(again, "tasks", exported(project, "tasks", "csv"))  # the export imports back
    assert models.Task.objects.get(project=again, external_id="t1").label_prior == pytest.approx(
        [0.8, 0.1, 0.1]
    )


def test_ids_that_look_quoted_already_come_back_from_a_csv_export_unchanged():
    project = make_project("quotes")
    ids = ["-5", "'-5", "''=w", "'plain"]
    import_text(project, "workers", json.dumps([{"worker_id": i} for i in ids]), "workers.json")
    again = make_project("again")
    import_text(again, "workers", exported(project, "workers", "csv"))
    assert sorted(Worker.objects.filter(project=again).values_list("external_id", flat=True)) == (
        sorted(ids)
    )
