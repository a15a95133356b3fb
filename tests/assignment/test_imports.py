"""Imports of data files: every kind from CSV and JSON, idempotence, and a corpus of bad files.

Every bad file must be rejected with a message naming the file, the line and the column where
there is one, and leave the database exactly as it was.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from project_data import (
    ALL_CSV,
    GOLD_ANSWERS_CSV,
    QUALITY_BY_CATEGORY_CSV,
    QUALITY_BY_TASK_CSV,
    import_all,
    import_text,
    make_project,
    project_snapshot,
    row_counts,
)

from assignment import importers
from assignment.errors import ImportValidationError
from assignment.models import (
    GoldAnswer,
    QualityChunk,
    QualityMatrix,
    QualitySource,
    Task,
    Worker,
)
from assignment.services import project_data_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def filled(empty_project):
    """A project with workers w1-w3, tasks t1-t3 and gold items g1-g3."""
    for kind in ("workers", "tasks", "gold_items"):
        import_text(empty_project, kind, ALL_CSV[kind])
    return empty_project


def csv_to_json(text: str) -> str:
    """The JSON form of a CSV file: a list of objects, numbers as JSON numbers."""
    import csv

    rows = list(csv.DictReader(io.StringIO(text)))
    objects = []
    for row in rows:
        obj = {}
        for key, value in row.items():
            if value == "":
                obj[key] = None
            elif key == "payload":
                obj[key] = json.loads(value)
            elif key in {"max_tasks", "max_workers"}:
                obj[key] = int(value)
            elif key in {"prior", "quality"}:
                obj[key] = float(value)
            else:
                obj[key] = value
        objects.append(obj)
    return json.dumps(objects, indent=2)


# --------------------------------------------------------------------------------------------
# Every kind, from CSV and from JSON


@pytest.mark.parametrize("format", ["csv", "json"])
def test_every_kind_imports_from_csv_and_from_json_into_the_same_data(format):
    project = make_project(f"from-{format}")
    for kind, text in ALL_CSV.items():
        content = text if format == "csv" else csv_to_json(text)
        result = import_text(project, kind, content, name=f"{kind}.{format}")
        assert result.rows == text.count("\n") - 1
    snapshot = project_snapshot(project)
    assert snapshot["workers"] == [
        ("w1", "Ann", 10, True),
        ("w2", "Bob", None, True),
        ("w3", "", 5, True),
    ]
    assert snapshot["tasks"] == [
        ("t1", "birds", 3, 0.3, [("url", "https://example.org/1.jpg")]),
        ("t2", "birds", None, None, []),
        ("t3", "cars", 2, 0.5, []),
    ]
    assert snapshot["gold_items"] == [
        ("g1", "birds", "1"),
        ("g2", "birds", "0"),
        ("g3", "cars", "1"),
    ]
    assert len(snapshot["gold_answers"]) == 6
    assert ("w3", "g2", "1") in snapshot["gold_answers"]
    assert snapshot["answers"] == [
        ("w1", "t1", "1"),
        ("w2", "t1", "0"),
        ("w2", "t2", "1"),
        ("w3", "t3", "0"),
    ]
    [(source, pairs)] = snapshot["quality"]
    assert source == QualitySource.UPLOADED
    assert ("w2", "t3", 0.73) in pairs
    assert len(pairs) == 9


def test_the_same_project_results_from_csv_and_from_json():
    from_csv = make_project("csv")
    from_json = make_project("json")
    for kind, text in ALL_CSV.items():
        import_text(from_csv, kind, text)
        import_text(from_json, kind, csv_to_json(text), name=f"{kind}.json")
    assert project_snapshot(from_csv) == project_snapshot(from_json)


def test_a_quality_matrix_is_stored_over_all_workers_and_tasks_in_primary_key_order(filled):
    import_text(filled, "quality", QUALITY_BY_TASK_CSV)
    matrix = QualityMatrix.objects.get(project=filled)
    workers = list(Worker.objects.filter(project=filled).order_by("pk"))
    tasks = list(Task.objects.filter(project=filled).order_by("pk"))
    assert matrix.worker_ids.tolist() == [w.pk for w in workers]
    assert matrix.task_ids.tolist() == [t.pk for t in tasks]
    expected = [
        [0.5 + 0.1 * int(w.external_id[1:]) + 0.01 * int(t.external_id[1:]) for t in tasks]
        for w in workers
    ]
    np.testing.assert_allclose(matrix.values, np.round(expected, 2))
    assert matrix.gold_counts is None


def test_a_quality_file_per_category_gives_every_task_its_categorys_value(filled):
    import_text(filled, "quality", QUALITY_BY_CATEGORY_CSV)
    matrix = QualityMatrix.objects.get(project=filled)
    categories = dict(Task.objects.filter(project=filled).values_list("pk", "category"))
    for i, worker in enumerate(Worker.objects.filter(project=filled).order_by("pk")):
        number = int(worker.external_id[1:])
        for j, task_pk in enumerate(matrix.task_ids):
            c = ("birds", "cars").index(categories[int(task_pk)])
            assert matrix.values[i, j] == pytest.approx(round(0.6 + 0.1 * number - 0.05 * c, 2))
    assert matrix.details["given_per"] == "category"


def test_a_quality_file_per_category_is_stored_as_a_table_and_one_per_task_in_chunks(filled):
    import_text(filled, "quality", QUALITY_BY_CATEGORY_CSV)
    per_category = QualityMatrix.objects.latest_of(filled)
    assert per_category.by_category
    assert not QualityChunk.objects.filter(matrix=per_category).exists()
    assert per_category.categories == ["birds", "cars"]
    np.testing.assert_allclose(per_category.category_table, [[0.7, 0.65], [0.8, 0.75], [0.9, 0.85]])
    import_text(filled, "quality", QUALITY_BY_TASK_CSV)
    per_task = QualityMatrix.objects.latest_of(filled)
    assert not per_task.by_category
    assert per_task.category_table is None
    assert QualityChunk.objects.filter(matrix=per_task).exists()


def test_json_tasks_take_their_payload_from_the_payload_key(empty_project):
    content = json.dumps(
        [
            {"task_id": "t1", "category": "a", "payload": {"url": "u", "size": [1, 2]}},
            {"task_id": "t2", "category": "a", "payload": None},
        ]
    )
    import_text(empty_project, "tasks", content, name="tasks.json")
    payloads = dict(Task.objects.values_list("external_id", "payload"))
    assert payloads == {"t1": {"url": "u", "size": [1, 2]}, "t2": {}}


def test_labels_are_trimmed_and_taken_from_the_projects_own_label_set():
    project = make_project("animals", labels=["cat", "dog"])
    import_text(project, "gold_items", "item_id,category,true_label\ng1,a, dog \ng2,a,cat\n")
    labels = dict(project.gold_items.values_list("external_id", "true_label"))
    assert labels == {"g1": "dog", "g2": "cat"}
    with pytest.raises(ImportValidationError) as caught:
        import_text(project, "gold_items", "item_id,category,true_label\ng3,a,1\n")
    assert str(caught.value) == (
        "gold_items.csv, line 2, column true_label: must be one of the project's labels "
        "('cat', 'dog'), got '1'"
    )


def test_ids_integers_in_json_are_taken_as_text(empty_project):
    import_text(empty_project, "workers", '[{"worker_id": 17, "max_tasks": 3}]', name="w.json")
    assert list(Worker.objects.values_list("external_id", "max_tasks")) == [("17", 3)]


def test_a_bom_crlf_line_ends_quoted_commas_and_newlines_and_blank_lines_are_read(empty_project):
    content = (
        "\ufeffworker_id,name,max_tasks\r\n"
        '"w,1","Ann ""the best""\r\nSmith",3\r\n'
        "\r\n"
        "  w2  ,  Bob  ,  4  \r\n"
    )
    import_text(empty_project, "workers", content)
    assert sorted(Worker.objects.values_list("external_id", "name", "max_tasks")) == [
        ("w,1", 'Ann "the best"\r\nSmith', 3),
        ("w2", "Bob", 4),
    ]


def test_the_format_is_guessed_from_the_content_when_the_name_has_no_suffix(empty_project):
    import_text(empty_project, "workers", '[{"worker_id": "w1"}]', name="upload")
    import_text(empty_project, "workers", "worker_id\nw2\n", name="upload")
    assert sorted(Worker.objects.values_list("external_id", flat=True)) == ["w1", "w2"]


def test_csv_cells_neutralised_by_an_export_are_imported_without_the_quote(empty_project):
    import_text(empty_project, "workers", "worker_id,name\n'-5,'=SUM(A1)\n'plain,x\n")
    assert sorted(Worker.objects.values_list("external_id", "name")) == [
        ("'plain", "x"),
        ("-5", "=SUM(A1)"),
    ]


# --------------------------------------------------------------------------------------------
# Re-imports


def test_importing_the_same_files_twice_changes_nothing():
    project = make_project()
    import_all(project)
    before, counts = project_snapshot(project), row_counts()
    for kind, text in ALL_CSV.items():
        if kind != "quality":  # a quality file makes a new matrix each time, by design
            import_text(project, kind, text)
    assert project_snapshot(project) == before
    assert row_counts() == counts


def test_a_reimport_updates_the_rows_it_names_and_keeps_the_others(filled):
    import_text(filled, "workers", "worker_id,name,max_tasks\nw2,Robert,7\nw4,Dee,\n")
    assert sorted(Worker.objects.values_list("external_id", "name", "max_tasks")) == [
        ("w1", "Ann", 10),
        ("w2", "Robert", 7),
        ("w3", "", 5),
        ("w4", "Dee", None),
    ]
    import_text(filled, "gold_answers", GOLD_ANSWERS_CSV)
    import_text(filled, "gold_answers", "worker_id,item_id,answer\nw1,g1,0\n")
    assert GoldAnswer.objects.get(worker__external_id="w1", item__external_id="g1").answer == "0"
    assert GoldAnswer.objects.count() == 6


def test_columns_missing_from_a_file_are_left_as_they_are(filled):
    import_text(filled, "workers", "worker_id\nw1\nw9\n")
    assert sorted(Worker.objects.values_list("external_id", "name", "max_tasks")) == [
        ("w1", "Ann", 10),
        ("w2", "Bob", None),
        ("w3", "", 5),
        ("w9", "", None),
    ]
    import_text(filled, "tasks", "task_id,category\nt1,planes\n")
    task = Task.objects.get(external_id="t1")
    assert (task.category, task.prior, task.payload) == (
        "planes",
        0.3,
        {"url": "https://example.org/1.jpg"},
    )


def test_imports_into_one_project_leave_other_projects_alone(filled):
    other = make_project("other")
    import_text(other, "workers", "worker_id,name\nw1,Other Ann\n")
    assert Worker.objects.get(project=filled, external_id="w1").name == "Ann"
    assert Worker.objects.get(project=other, external_id="w1").name == "Other Ann"
    with pytest.raises(ImportValidationError, match="'g1' is not a gold item of project 'other'"):
        import_text(other, "gold_answers", "worker_id,item_id,answer\nw1,g1,1\n")


def test_many_rows_stream_through_several_batches(filled, monkeypatch):
    monkeypatch.setattr(importers, "BATCH_SIZE", 1_000)
    items = "".join(f"x{i},birds,{i % 2}\n" for i in range(2_000))
    import_text(filled, "gold_items", "item_id,category,true_label\n" + items)
    answers = "".join(f"w{w},x{i},{(i + w) % 2}\n" for w in (1, 2, 3) for i in range(2_000))
    result = import_text(filled, "gold_answers", "worker_id,item_id,answer\n" + answers)
    assert result.rows == 6_000
    assert GoldAnswer.objects.count() == 6_000
    assert GoldAnswer.objects.get(worker__external_id="w2", item__external_id="x7").answer == "1"


# --------------------------------------------------------------------------------------------
# Bad files: the message, and nothing written

#: (kind, file name, content, the whole message). The project has workers w1-w3, tasks t1-t3
#: (t1, t2 "birds"; t3 "cars") and gold items g1-g3 before each import.
BAD_FILES = [
    # headers
    (
        "workers",
        "workers.csv",
        "name,max_tasks\nAnn,3\n",
        "workers.csv, line 1, column worker_id: is missing from the header "
        "(a workers file has worker_id[, name][, max_tasks])",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,nmae\nw1,Ann\n",
        "workers.csv, line 1, column nmae: is not a column of workers files "
        "(they have worker_id[, name][, max_tasks])",
    ),
    (
        "tasks",
        "tasks.csv",
        "task_id,max_workers\nt1,3\n",
        "tasks.csv, line 1, column category: is missing from the header "
        "(a tasks file has task_id, category[, max_workers][, prior][, payload])",
    ),
    (
        "gold_answers",
        "gold.csv",
        "worker_id,item_id,answer,answer\nw1,g1,1,1\n",
        "gold.csv, line 1, column answer: appears twice in the header",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,,max_tasks\nw1,,3\n",
        "workers.csv, line 1: the header's column 2 has no name",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,task_id,category,quality\nw1,t1,birds,0.5\n",
        "quality.csv, line 1, column category: a quality file gives quality per task_id or per "
        "category, not both",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,quality\nw1,0.5\n",
        "quality.csv, line 1, column task_id: is missing from the header "
        "(a quality file has worker_id, task_id, quality)",
    ),
    # types and ranges
    (
        "workers",
        "workers.csv",
        "worker_id,name,max_tasks\nw1,Ann,3\nw2,Bob,4\nw3,Cy,-3\n",
        "workers.csv, line 4, column max_tasks: must be a non-negative integer, got '-3'",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,max_tasks\nw1,2.5\n",
        "workers.csv, line 2, column max_tasks: must be a non-negative integer, got '2.5'",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,max_tasks\nw1,ten\n",
        "workers.csv, line 2, column max_tasks: must be a non-negative integer, got 'ten'",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,max_tasks\nw1,99999999999\n",
        "workers.csv, line 2, column max_tasks: must be at most 2147483647, got '99999999999'",
    ),
    (
        "tasks",
        "tasks.csv",
        "task_id,category,max_workers\nt1,a,-1\n",
        "tasks.csv, line 2, column max_workers: must be a non-negative integer, got '-1'",
    ),
    (
        "tasks",
        "tasks.csv",
        "task_id,category,prior\nt1,a,0\n",
        "tasks.csv, line 2, column prior: must be strictly between 0 and 1, got '0'",
    ),
    (
        "tasks",
        "tasks.csv",
        "task_id,category,prior\nt1,a,1\n",
        "tasks.csv, line 2, column prior: must be strictly between 0 and 1, got '1'",
    ),
    (
        "tasks",
        "tasks.csv",
        "task_id,category,prior\nt1,a,nan\n",
        "tasks.csv, line 2, column prior: must be a finite number, got 'nan'",
    ),
    (
        "tasks",
        "tasks.csv",
        "task_id,category,prior\nt1,a,1e999\n",
        "tasks.csv, line 2, column prior: must be a finite number, got '1e999'",
    ),
    (
        "tasks",
        "tasks.csv",
        "task_id,category,payload\nt1,a,[1]\n",
        "tasks.csv, line 2, column payload: must be a JSON object, got '[1]'",
    ),
    (
        "tasks",
        "tasks.csv",
        "task_id,category\nt1,\n",
        "tasks.csv, line 2, column category: must not be empty",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,name\n ,Ann\n",
        "workers.csv, line 2, column worker_id: must not be empty",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id\n" + "w" * 201 + "\n",
        "workers.csv, line 2, column worker_id: must be at most 200 characters long, got 201",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,task_id,quality\nw1,t1,1.5\n",
        "quality.csv, line 2, column quality: must be between 0 and 1, got '1.5'",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,task_id,quality\nw1,t1,-0.1\n",
        "quality.csv, line 2, column quality: must be between 0 and 1, got '-0.1'",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,task_id,quality\nw1,t1,inf\n",
        "quality.csv, line 2, column quality: must be a finite number, got 'inf'",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,task_id,quality\nw1,t1,\n",
        "quality.csv, line 2, column quality: must not be empty",
    ),
    # labels
    (
        "gold_items",
        "gold_items.csv",
        "item_id,category,true_label\ng9,birds,true\n",
        "gold_items.csv, line 2, column true_label: must be one of the project's labels "
        "('0', '1'), got 'true'",
    ),
    (
        "gold_answers",
        "gold_answers.csv",
        "worker_id,item_id,answer\nw1,g1,1\nw1,g2,yes\n",
        "gold_answers.csv, line 3, column answer: must be one of the project's labels "
        "('0', '1'), got 'yes'",
    ),
    (
        "answers",
        "answers.csv",
        "worker_id,task_id,answer\nw1,t1,\n",
        "answers.csv, line 2, column answer: must be one of the project's labels ('0', '1'), "
        "got ''",
    ),
    # duplicates
    (
        "workers",
        "workers.csv",
        "worker_id\nw7\nw8\nw7\n",
        "workers.csv, line 4, column worker_id: 'w7' appears twice (first on line 2)",
    ),
    (
        "gold_answers",
        "gold_answers.csv",
        "worker_id,item_id,answer\nw1,g1,1\nw2,g1,1\nw1,g1,0\n",
        "gold_answers.csv, line 4, column item_id: the pair (worker_id 'w1', item_id 'g1') "
        "appears twice (first on line 2)",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,category,quality\nw1,birds,0.5\nw1,birds,0.6\n",
        "quality.csv, line 3, column category: the pair (worker_id 'w1', category 'birds') "
        "appears twice (first on line 2)",
    ),
    # references
    (
        "gold_answers",
        "gold_answers.csv",
        "worker_id,item_id,answer\nw1,g1,1\nw9,g1,1\n",
        "gold_answers.csv, line 3, column worker_id: 'w9' is not a worker of project 'demo' "
        "(import the workers first)",
    ),
    (
        "gold_answers",
        "gold_answers.csv",
        "worker_id,item_id,answer\nw1,g9,1\n",
        "gold_answers.csv, line 2, column item_id: 'g9' is not a gold item of project 'demo' "
        "(import the gold_items first)",
    ),
    (
        "answers",
        "answers.csv",
        "worker_id,task_id,answer\nw1,t9,1\n",
        "answers.csv, line 2, column task_id: 't9' is not a task of project 'demo' "
        "(import the tasks first)",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,category,quality\nw1,boats,0.5\n",
        "quality.csv, line 2, column category: 'boats' is not the category of any task of "
        "project 'demo'",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,task_id,quality\nw1,t1,0.5\nw1,t2,0.5\n",
        "quality.csv: gives no quality for 7 of the 9 (worker, task) pairs, e.g. worker 'w1' "
        "and task 't3'; every worker of the project needs a value for every task",
    ),
    (
        "quality",
        "quality.csv",
        "worker_id,category,quality\nw1,birds,0.5\nw1,cars,0.5\nw2,birds,0.5\n",
        "quality.csv: gives no quality for 3 of the 6 (worker, category) pairs, e.g. worker "
        "'w2' and category 'cars'; every worker of the project needs a value for every category",
    ),
    # shape of the file
    ("workers", "workers.csv", "", "workers.csv: is empty: expected a header line"),
    ("workers", "workers.csv", "\n\n  \n", "workers.csv: is empty: expected a header line"),
    ("workers", "workers.csv", "worker_id\n ,\n", "workers.csv: has a header but no rows"),
    ("workers", "workers.csv", "worker_id,name\n", "workers.csv: has a header but no rows"),
    (
        "workers",
        "workers.csv",
        '[{"worker_id": "x9", "name": "Z"}]\n',
        "workers.csv, line 1: looks like JSON, not CSV (it starts with '['): give the file a "
        ".json name or choose JSON as its format",
    ),
    (
        "workers",
        "workers.csv",
        '\n[\n  {\n    "worker_id": "x9"\n  }\n]\n',
        "workers.csv, line 2: looks like JSON, not CSV (it starts with '['): give the file a "
        ".json name or choose JSON as its format",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id;name;max_tasks\nw1;Ann;3\n",
        "workers.csv, line 1: the header 'worker_id;name;max_tasks' is one column: columns must "
        "be separated by commas, not semicolons",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id\tname\nw1\tAnn\n",
        "workers.csv, line 1: the header 'worker_id\\tname' is one column: columns must be "
        "separated by commas, not tabs",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,name\nw1,Ann,3\n",
        "workers.csv, line 2: has 3 values but the header has 2 columns",
    ),
    (
        "workers",
        "workers.csv",
        'worker_id,name\nw1,"Ann\n',
        "workers.csv, line 2: is not valid CSV: unexpected end of data",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,name\rw1,Ann\rw2,Bob\r",
        "workers.csv, line 1: is not valid CSV: it has carriage returns without line feeds "
        "(old Mac line ends?); save it with LF or CRLF line ends",
    ),
    # encodings and binary junk
    (
        "workers",
        "workers.csv",
        "worker_id,name\nw1,Zoë\n".encode("latin-1"),
        "workers.csv, line 2: is not valid UTF-8 (byte 0xeb at byte 6 of the line); save the "
        "file as UTF-8",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,name\nw1,Zoë\n".encode("utf-16"),
        "workers.csv, line 1: is UTF-16 encoded (it starts with a UTF-16 byte-order mark); "
        "save it as UTF-8",
    ),
    (
        "workers",
        "workers.csv",
        "worker_id,name\nw1,Zoë\n".encode("utf-16-le"),
        "workers.csv, line 1: contains a NUL byte: a binary file, or text in UTF-16; save it "
        "as UTF-8 CSV",
    ),
    (
        "workers",
        "workers.csv",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
        "workers.csv, line 1: is not valid UTF-8 (byte 0x89 at byte 1 of the line); save the "
        "file as UTF-8",
    ),
    (
        "workers",
        "workers.json",
        b'[{"worker_id": "w1"},\n {"worker_id": "\xff"}]',
        "workers.json, line 2: is not valid UTF-8 (byte 0xff); save the file as UTF-8",
    ),
    # JSON
    (
        "workers",
        "workers.json",
        '{"worker_id": "w1"}',
        "workers.json, line 1: is not a JSON list of objects: it must start with '[', found '{'",
    ),
    (
        "workers",
        "workers.json",
        "worker_id,name\nw1,Ann\n",
        "workers.json, line 1: looks like CSV, not JSON (it starts with 'w'): give the file a "
        ".csv name or choose CSV as its format",
    ),
    (
        "workers",
        "workers.json",
        "worker_id\nw1\n",
        "workers.json, line 1: is not a JSON list of objects: it must start with '[', found 'w'",
    ),
    ("workers", "workers.json", "[]", "workers.json: is an empty JSON list: it has no rows"),
    ("workers", "workers.json", " \n", "workers.json: is empty: expected a JSON list of objects"),
    (
        "workers",
        "workers.json",
        '[\n  {"worker_id": "w1"},\n  ["w2"]\n]',
        "workers.json, line 3: each element of the list must be a JSON object, got a list",
    ),
    (
        "workers",
        "workers.json",
        '[\n  {"worker_id": "w1", "name": "Ann"},\n  {"worker_id": "w2"}\n]',
        "workers.json, line 3, object 2, column name: is missing; every object must have the "
        "same keys as the first",
    ),
    (
        "workers",
        "workers.json",
        '[\n  {"worker_id": "w1"},\n  {"worker_id": "w2", "nmae": "Bob"}\n]',
        "workers.json, line 3, object 2, column nmae: is not a key of the first object; every "
        "object must have the same keys",
    ),
    (
        "workers",
        "workers.json",
        '[{"worker_id": "w1", "nmae": "Bob"}]',
        "workers.json, line 1, column nmae: is not a column of workers files "
        "(they have worker_id[, name][, max_tasks])",
    ),
    (
        "workers",
        "workers.json",
        '[{"worker_id": "w1", "worker_id": "w2"}]',
        "workers.json, line 1: the key 'worker_id' appears twice in one object",
    ),
    (
        "workers",
        "workers.json",
        '[{"worker_id": "w1", "max_tasks": true}]',
        "workers.json, line 1, object 1, column max_tasks: must be a non-negative integer, "
        "got true",
    ),
    (
        "workers",
        "workers.json",
        '[{"worker_id": "w1", "max_tasks": 3.5}]',
        "workers.json, line 1, object 1, column max_tasks: must be a non-negative integer, got 3.5",
    ),
    (
        "workers",
        "workers.json",
        '[{"worker_id": 1.5}]',
        "workers.json, line 1, object 1, column worker_id: must be a string, got 1.5",
    ),
    (
        "tasks",
        "tasks.json",
        '[{"task_id": "t1", "category": "a", "prior": NaN}]',
        "tasks.json, line 1: NaN is not a JSON number; write a finite number",
    ),
    (
        "tasks",
        "tasks.json",
        '[{"task_id": "t1", "category": "a", "prior": "0.5x"}]',
        'tasks.json, line 1, object 1, column prior: must be a finite number, got "0.5x"'.replace(
            '"0.5x"', "'0.5x'"
        ),
    ),
    (
        "tasks",
        "tasks.json",
        '[{"task_id": "t1", "category": "a", "payload": "{}"}]',
        "tasks.json, line 1, object 1, column payload: must be a JSON object, got '{}'",
    ),
    (
        "workers",
        "workers.json",
        '[\n  {"worker_id": "w1"},\n  {"worker_id": "w2"\n',
        "workers.json, line 3: is not valid JSON: the file ends inside this object",
    ),
    (
        "workers",
        "workers.json",
        '[\n  {"worker_id": "w1"},\n  {"worker_id" "w2"}\n]\n',
        "workers.json, line 3: is not valid JSON: Expecting ':' delimiter",
    ),
    (
        "workers",
        "workers.json",
        '[\n  {"worker_id": "w1"}\n  {"worker_id": "w2"}\n]',
        "workers.json, line 3: is not valid JSON: expected ',' or ']' after an object, found '{'",
    ),
    (
        "workers",
        "workers.json",
        '[{"worker_id": "w1"}] trailing',
        "workers.json, line 1: is not valid JSON: 't' after the closing ']'",
    ),
    (
        "workers",
        "workers.json",
        '[{"worker_id": "w\\u0000"}]',
        "workers.json, line 1, object 1, column worker_id: must not contain the NUL character",
    ),
    # hostile files from a fuzzing pass: each was a 500 or silently accepted
    (
        "workers",
        "workers.json",
        '[{"worker_id": "w1", "max_tasks": 1}, {"worker_id": "w1", "max_tasks": 2}]',
        "workers.json, line 1, object 2, column worker_id: 'w1' appears twice (first on line "
        "1, object 1)",
    ),
    (
        "gold_answers",
        "gold.json",
        '[{"worker_id": "w1", "item_id": "g1", "answer": "1"}, '
        '{"worker_id": "w1", "item_id": "g1", "answer": "0"}]',
        "gold.json, line 1, object 2, column item_id: the pair (worker_id 'w1', item_id 'g1') "
        "appears twice (first on line 1, object 1)",
    ),
    (
        "tasks",
        "tasks.json",
        '[{"task_id": "t9", "category": "x", "prior": 1' + "0" * 400 + "}]",
        "tasks.json, line 1, object 1, column prior: must be a finite number, got "
        "1" + "0" * 79 + "… (401 characters)",
    ),
    (
        "workers",
        "workers.json",
        '[{"worker_id": "w9", "max_tasks": ' + "1" * 4301 + "}]",
        "workers.json, line 1: is not valid JSON here: a number has more than 4,300 digits",
    ),
    (
        "tasks",
        "tasks.csv",
        'task_id,category,payload\nt9,x,"{""a"": ' + "[" * 50000 + "]" * 50000 + '}"\n',
        'tasks.csv, line 2, column payload: must be a JSON object, got \'{"a": '
        + "[" * 73
        + "… (100,009 characters) (is nested too deeply)",
    ),
    (
        "tasks",
        "tasks.csv",
        'task_id,category,payload\nt9,x,"{""a"": 1, ""a"": 2}"\n',
        'tasks.csv, line 2, column payload: must be a JSON object, got \'{"a": 1, "a": 2}\' '
        "(the key 'a' appears twice in one object)",
    ),
]


@pytest.mark.parametrize(
    ("kind", "name", "content", "message"),
    BAD_FILES,
    ids=[f"{i:02d}-{case[0]}-{case[1]}" for i, case in enumerate(BAD_FILES)],
)
def test_a_bad_file_is_rejected_with_its_file_line_and_column_and_nothing_is_written(
    filled, kind, name, content, message
):
    before, counts = project_snapshot(filled), row_counts()
    with pytest.raises(ImportValidationError) as caught:
        import_text(filled, kind, content, name=name)
    assert str(caught.value) == message
    assert project_snapshot(filled) == before
    assert row_counts() == counts


def test_an_error_after_batches_were_written_rolls_the_whole_file_back(filled, monkeypatch):
    monkeypatch.setattr(importers, "BATCH_SIZE", 2)
    import_text(filled, "gold_answers", GOLD_ANSWERS_CSV)
    before, counts = project_snapshot(filled), row_counts()
    changed = "worker_id,item_id,answer\nw1,g1,0\nw1,g2,1\nw2,g1,1\nw2,g2,1\nw3,g3,maybe\n"
    with pytest.raises(ImportValidationError, match=r"line 6, column answer"):
        import_text(filled, "gold_answers", changed)
    assert project_snapshot(filled) == before
    assert row_counts() == counts


def test_a_duplicate_pair_in_another_batch_is_found_after_the_last_batch(filled, monkeypatch):
    monkeypatch.setattr(importers, "BATCH_SIZE", 2)
    counts = row_counts()
    content = "worker_id,item_id,answer\nw1,g1,1\nw1,g2,1\nw2,g1,1\nw2,g2,1\nw1,g2,0\nw3,g3,1\n"
    with pytest.raises(ImportValidationError) as caught:
        import_text(filled, "gold_answers", content)
    assert str(caught.value) == (
        "gold_answers.csv, line 6, column item_id: the pair (worker_id 'w1', item_id 'g2') "
        "appears twice (first on line 3)"
    )
    assert row_counts() == counts


def test_ten_megabytes_on_one_line_are_rejected_without_reading_them_whole(filled, tmp_path):
    path = tmp_path / "workers.csv"
    with path.open("wb") as out:
        out.write(b"worker_id,name\nw1,")
        block = b"x" * (1 << 20)
        for _ in range(10):
            out.write(block)
        out.write(b"\n")
    counts = row_counts()
    with path.open("rb") as stream, pytest.raises(ImportValidationError) as caught:
        project_data_import(project=filled, kind="workers", file=stream, file_name=path.name)
    assert str(caught.value) == (
        "workers.csv, line 2: is longer than 1,048,576 bytes: not a data file, or a file "
        "without line breaks"
    )
    assert row_counts() == counts


def test_a_json_object_longer_than_the_line_limit_is_rejected(filled):
    content = '[{"worker_id": "w1", "name": "' + "x" * (1 << 20) + '"}]'
    with pytest.raises(ImportValidationError) as caught:
        import_text(filled, "workers", content, name="workers.json")
    assert str(caught.value).startswith("workers.json, line 1: is not valid JSON: ")
    assert "or an object longer than 1,048,576 bytes" in str(caught.value)


def test_a_file_over_the_size_limit_is_rejected_before_it_is_read(filled, settings, tmp_path):
    settings.TVCS_MAX_IMPORT_BYTES = 1_000
    path = tmp_path / "workers.csv"
    path.write_text("worker_id\n" + "".join(f"w{i}\n" for i in range(500)), encoding="utf-8")
    counts = row_counts()
    with path.open("rb") as stream, pytest.raises(ImportValidationError) as caught:
        project_data_import(project=filled, kind="workers", file=stream, file_name=path.name)
    assert str(caught.value) == (
        "workers.csv: is larger than the import limit of 1,000 bytes (TVCS_MAX_IMPORT_BYTES); "
        "split it into several files"
    )
    assert row_counts() == counts


class _Unsized(io.RawIOBase):
    """A stream whose size is unknown until it has been read (a pipe, a network upload)."""

    def __init__(self, data: bytes) -> None:
        self._inner = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        return self._inner.readinto(buffer)


def test_the_size_limit_also_holds_for_streams_of_unknown_size(filled, settings):
    settings.TVCS_MAX_IMPORT_BYTES = 1_000
    content = ("worker_id\n" + "".join(f"w{i}\n" for i in range(500))).encode()
    counts = row_counts()
    with pytest.raises(ImportValidationError, match="larger than the import limit of 1,000"):
        project_data_import(
            project=filled,
            kind="workers",
            file=io.BufferedReader(_Unsized(content)),
            file_name="workers.csv",
        )
    assert row_counts() == counts


def test_random_binary_junk_is_rejected_with_a_located_message(filled):
    junk = np.random.default_rng(7).integers(0, 256, 50_000, dtype=np.uint8).tobytes()
    counts = row_counts()
    with pytest.raises(ImportValidationError) as caught:
        import_text(filled, "gold_answers", junk, name="gold_answers.csv")
    assert str(caught.value).startswith("gold_answers.csv, line ")
    assert row_counts() == counts


def test_a_task_of_three_labels_takes_a_distribution_as_its_prior_in_csv_and_json():
    project = make_project(labels=["cat", "dog", "bird"])
    text = (
        'task_id,category,prior\nt1,pets,\nt2,pets,"{""cat"": 0.5, ""dog"": 0.3, ""bird"": 0.2}"\n'
    )
    import_text(project, "tasks", text)
    tasks = {t.external_id: t for t in Task.objects.filter(project=project)}
    assert tasks["t1"].label_prior is None
    assert tasks["t2"].label_prior == pytest.approx([0.5, 0.3, 0.2])
    assert tasks["t2"].prior is None  # P(second label) is a binary project's
    payload = json.dumps(
        [{"task_id": "t3", "category": "pets", "prior": {"bird": 0.6, "dog": 0.2, "cat": 0.2}}]
    )
    import_text(project, "tasks", payload, name="tasks.json")
    assert Task.objects.get(project=project, external_id="t3").label_prior == pytest.approx(
        [0.2, 0.2, 0.6]
    )


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("0.4", "must be an object giving each of the 3 labels its probability"),
        ('"{""cat"": 0.5, ""dog"": 0.5}"', "gives no probability for the label 'bird'"),
        ('"{""cat"": 0.5, ""dog"": 0.3, ""bird"": 0.3}"', "must sum to 1, got 1.1"),
        ('"{""cat"": 0.5, ""dog"": 0.5, ""bird"": 0}"', "'bird' must be strictly between 0 and 1"),
        ('"{""cat"": 0.5, ""dog"": 0.3, ""fish"": 0.2}"', "'fish' is not one of the project's"),
        ('"{""cat"": 0.5, ""dog"": ""a lot"", ""bird"": 0.2}"', "of 'dog' must be a number"),
        ("{cat: 0.5}", "must be a JSON object giving each label its probability"),
        (
            '"{""cat"": 1' + "0" * 400 + ', ""dog"": 0.3, ""bird"": 0.2}"',
            "an integer of about 401 digits",
        ),
        ('"{""cat"": 0.5, ""cat"": 0.3, ""bird"": 0.2}"', "the key 'cat' appears twice"),
    ],
)
def test_a_wrong_distribution_of_three_labels_is_a_line_error_and_writes_nothing(cell, message):
    project = make_project(labels=["cat", "dog", "bird"])
    text = f"task_id,category,prior\nt1,pets,\nt2,pets,{cell}\n"
    with pytest.raises(ImportValidationError) as caught:
        import_text(project, "tasks", text)
    error = caught.value
    assert (error.line, error.column) == (3, "prior")
    assert message in str(error)
    assert not Task.objects.filter(project=project).exists()


def test_a_quality_of_minus_zero_is_stored_as_zero(filled):
    text = "worker_id,category,quality\n" + "".join(
        f"w{i},{c},{'-0' if (i, c) == (1, 'birds') else '0.5'}\n"
        for i in (1, 2, 3)
        for c in ("birds", "cars")
    )
    import_text(filled, "quality", text)
    values = QualityMatrix.objects.get(project=filled).values
    assert values.min() == 0.0
    assert not np.signbit(values).any()


@pytest.mark.parametrize(
    ("content", "line", "code"),
    [
        ("worker_id\nw1\n\ufeffw5\n", 3, "U+FEFF"),  # a byte order mark inside the file
        ("worker_id\nw\u200b6\n", 2, "U+200B"),  # a zero-width space
    ],
)
def test_an_id_with_an_invisible_character_is_a_line_error(filled, content, line, code):
    before = project_snapshot(filled)
    with pytest.raises(ImportValidationError) as caught:
        import_text(filled, "workers", content)
    assert (caught.value.line, caught.value.column) == (line, "worker_id")
    assert f"contains an invisible character, {code}" in caught.value.message
    assert project_snapshot(filled) == before
