"""The management commands: create_project, import_data, estimate_quality, export_data.

A failure is a ``CommandError`` carrying the domain message, so ``manage.py`` prints it and
exits with status 1.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command, execute_from_command_line
from django.core.management.base import CommandError
from project_data import ALL_CSV, make_project, row_counts

from assignment.models import Project, QualityMatrix, Worker

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> str:
    """Run a command in-process; its stdout."""
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def owner():
    return get_user_model().objects.create_user("al", password="x")


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    paths = {}
    for kind, text in ALL_CSV.items():
        path = tmp_path / f"{kind}.csv"
        path.write_text(text, encoding="utf-8")
        paths[kind] = path
    return paths


# --------------------------------------------------------------------------------------------
# create_project


def test_create_project_creates_a_project_of_an_existing_user(owner):
    out = run("create_project", "demo", "--owner", "al", "--description", "birds")
    project = Project.objects.get()
    assert (project.name, project.owner, project.description) == ("demo", owner, "birds")
    assert project.labels == ["0", "1"]
    assert out == f"Created project 'demo' (id {project.pk}) of al, labels 0, 1.\n"


def test_create_project_takes_a_label_set(owner):
    run("create_project", "pets", "--owner", "al", "--labels", "cat, dog")
    assert Project.objects.get().labels == ["cat", "dog"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["demo", "--owner", "nobody"],
            "there is no user 'nobody'; create it first (python manage.py createsuperuser, "
            "or in the admin)",
        ),
        (["taken", "--owner", "al"], "user 'al' already has a project 'taken'"),
        (["pets", "--owner", "al", "--labels", "cat"], "a project needs at least two labels"),
        (["pets", "--owner", "al", "--labels", "cat,cat"], "the label 'cat' is given twice"),
        (["  ", "--owner", "al"], "name: This field cannot be blank."),
    ],
)
def test_create_project_fails_with_a_clear_message(owner, args, message):
    make_project("taken", username="al")
    before = row_counts()
    with pytest.raises(CommandError) as caught:
        run("create_project", *args)
    assert message in str(caught.value)
    assert row_counts() == before


def test_a_failing_command_prints_the_message_and_exits_with_status_1(owner, monkeypatch, capsys):
    # run_from_argv closes the database connections when it ends; keep the test's open.
    monkeypatch.setattr("django.db.connections.close_all", lambda: None)
    with pytest.raises(SystemExit) as caught:
        execute_from_command_line(["manage.py", "create_project", "demo", "--owner", "nobody"])
    assert caught.value.code == 1
    assert "CommandError: there is no user 'nobody'" in capsys.readouterr().err


def child_demo_project(tmp_path: Path, then: str = "") -> dict:
    """A migrated SQLite database of its own in ``tmp_path`` with user 'al' and project 'demo',
    made by a child process that then runs ``then``: the environment of the commands run in
    children against it."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "TVCS_DATA_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TVCS_LOG_LEVEL": "WARNING",
    }
    script = (
        "import django; django.setup()\n"
        "from django.core.management import call_command\n"
        "from django.contrib.auth import get_user_model\n"
        "call_command('migrate', verbosity=0)\n"
        "get_user_model().objects.create_user('al')\n"
        "call_command('create_project', 'demo', owner='al')\n" + then
    )
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, check=True)
    return env


def test_manage_py_exits_non_zero_with_the_import_error_on_stderr(tmp_path):
    """End to end, in a child process with its own SQLite database."""
    env = child_demo_project(tmp_path)
    bad = tmp_path / "workers.csv"
    bad.write_text("worker_id,max_tasks\nw1,3\nw2,-3\n", encoding="utf-8")
    manage = [sys.executable, str(ROOT / "manage.py")]
    result = subprocess.run(
        [*manage, "import_data", "--project", "demo", "--kind", "workers", str(bad)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "CommandError: workers.csv, line 3, column max_tasks: must be a non-negative integer, "
        "got '-3'"
    )


# --------------------------------------------------------------------------------------------
# import_data


def test_import_data_imports_each_kind_and_says_how_many_rows(files):
    make_project()
    for kind in ("workers", "tasks", "gold_items", "gold_answers", "answers", "quality"):
        out = run("import_data", "--project", "demo", "--kind", kind, str(files[kind]))
        rows = ALL_CSV[kind].count("\n") - 1
        how = "" if kind == "quality" else f" (all {rows:,} new)"
        assert out == f"Imported {rows:,} {kind} rows from {kind}.csv into project 'demo'{how}.\n"
    again = run("import_data", "--project", "demo", "--kind", "workers", str(files["workers"]))
    assert again.endswith("(0 new, 3 already there, set to the values in the file).\n")
    assert Worker.objects.count() == 3
    assert QualityMatrix.objects.count() == 1


def test_import_data_reports_the_file_line_and_column_and_writes_nothing(tmp_path):
    make_project()
    path = tmp_path / "workers.csv"
    path.write_text("worker_id,name,max_tasks\nw1,Ann,3\nw2,Bob,4\nw3,Cy,-3\n", encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        run("import_data", "--project", "demo", "--kind", "workers", str(path))
    assert str(caught.value) == (
        "workers.csv, line 4, column max_tasks: must be a non-negative integer, got '-3'"
    )
    assert not Worker.objects.exists()


def test_import_data_reads_a_json_file_and_takes_a_format_for_other_suffixes(tmp_path):
    make_project()
    path = tmp_path / "workers.txt"
    path.write_text(json.dumps([{"worker_id": "w1", "name": "Ann"}]), encoding="utf-8")
    run("import_data", "--project", "demo", "--kind", "workers", "--format", "json", str(path))
    assert list(Worker.objects.values_list("external_id", "name")) == [("w1", "Ann")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--project", "nope", "--kind", "workers"], "there is no project 'nope'"),
        (["--project", "demo", "--owner", "zed", "--kind", "workers"], "there is no user 'zed'"),
        (["--project", "demo", "--kind", "workers", "--missing"], "cannot read"),
    ],
)
def test_import_data_fails_clearly_for_a_missing_project_owner_or_file(files, args, message):
    make_project()
    path = str(files["workers"])
    if "--missing" in args:
        args = [a for a in args if a != "--missing"]
        path = str(files["workers"].with_name("absent.csv"))
    with pytest.raises(CommandError, match=message):
        run("import_data", *args, path)


def test_a_project_name_several_owners_use_needs_the_owner(files):
    make_project("shared", username="al")
    theirs = make_project("shared", username="bo")
    path = str(files["workers"])
    with pytest.raises(CommandError) as caught:
        run("import_data", "--project", "shared", "--kind", "workers", path)
    assert str(caught.value) == (
        "several users have a project 'shared' (owners: al, bo); say whose with --owner USERNAME"
    )
    run("import_data", "--project", "shared", "--owner", "bo", "--kind", "workers", path)
    assert set(Worker.objects.values_list("project", flat=True)) == {theirs.pk}


# --------------------------------------------------------------------------------------------
# estimate_quality and export_data


@pytest.fixture
def imported(files):
    project = make_project()
    for kind in ("workers", "tasks", "gold_items", "gold_answers", "answers"):
        run("import_data", "--project", "demo", "--kind", kind, str(files[kind]))
    return project


def test_estimate_quality_stores_a_matrix_and_summarises_it(imported):
    out = run("estimate_quality", "--project", "demo")
    matrix = QualityMatrix.objects.get()
    assert out.startswith(
        f"Estimated quality matrix {matrix.pk} of project 'demo': 3 workers x 3 tasks from 6 "
        "gold answers; population accuracy "
    )
    assert f"mean quality {matrix.values.mean():.3f}; " in out
    assert "0 workers without gold answers get the population estimate." in out


def test_estimate_quality_accepts_fitted_strengths_and_rejects_bad_ones(imported):
    run("estimate_quality", "--project", "demo", "--worker-strength", "auto")
    assert QualityMatrix.objects.get().details["category_strength"] == 5.0
    # a strength "auto" could not fit well is a warning on stderr, with what to do
    err = io.StringIO()
    call_command(
        "estimate_quality", "--project", "demo", "--category-strength", "auto",
        stdout=io.StringIO(), stderr=err,
    )  # fmt: skip
    how = QualityMatrix.objects.latest("pk").details["strength_fits"]["category"]
    assert how != "fitted"  # 6 gold answers
    assert err.getvalue().startswith(
        'Warning: The category strength was to be fitted to the gold answers ("auto")'
    )
    with pytest.raises(CommandError, match="must be a positive number or 'auto'"):
        run("estimate_quality", "--project", "demo", "--category-strength", "-1")


def test_estimate_quality_without_gold_answers_fails_clearly():
    make_project()
    with pytest.raises(CommandError, match="project 'demo' has no workers"):
        run("estimate_quality", "--project", "demo")


def test_export_data_writes_csv_or_json_to_stdout(imported):
    out = run("export_data", "--project", "demo", "--kind", "workers", "--format", "csv")
    assert out == "worker_id,name,max_tasks\r\nw1,Ann,10\r\nw2,Bob,\r\nw3,,5\r\n"
    out = run("export_data", "--project", "demo", "--kind", "answers", "--format", "json")
    assert json.loads(out)[0] == {"worker_id": "w1", "task_id": "t1", "answer": "1"}


def test_export_data_writes_labels_to_a_file(imported, tmp_path):
    run("estimate_quality", "--project", "demo")
    path = tmp_path / "labels.json"
    out = run(
        "export_data", "--project", "demo", "--kind", "labels", "--format", "json",
        "--output", str(path),
    )  # fmt: skip
    assert out == f"Wrote 3 labels rows to {path}.\n"
    labels = json.loads(path.read_text(encoding="utf-8"))
    assert [row["task_id"] for row in labels] == ["t1", "t2", "t3"]
    assert all(row["label"] in {"0", "1"} and 0.5 <= row["posterior"] <= 1 for row in labels)


def test_export_data_takes_the_format_from_the_files_suffix_and_dash_for_stdout(imported, tmp_path):
    path = tmp_path / "workers.json"
    run("export_data", "--project", "demo", "--kind", "workers", "--output", str(path))
    assert [row["worker_id"] for row in json.loads(path.read_text(encoding="utf-8"))][:1] == ["w1"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()
    out = run("export_data", "--project", "demo", "--kind", "workers", "--output", "-")
    assert out.startswith("worker_id,name,max_tasks\r\n")
    assert not (Path.cwd() / "-").exists()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_export_data_fails_clearly_when_there_is_nothing_to_aggregate_with(imported, tmp_path):
    path = tmp_path / "labels.csv"
    with pytest.raises(CommandError, match="project 'demo' has no quality matrix yet"):
        run("export_data", "--project", "demo", "--kind", "labels", "--output", str(path))
    assert not path.exists()


def test_an_export_piped_into_a_reader_that_stops_early_ends_without_a_traceback(tmp_path):
    """``manage.py export_data ... | head -1``, in a child process with its own database."""
    workers = tmp_path / "workers.csv"
    workers.write_text(
        "worker_id\n" + "".join(f"w{i}\n" for i in range(30_000)), encoding="utf-8"
    )  # far more than a pipe holds
    env = child_demo_project(
        tmp_path,
        f"call_command('import_data', str({str(workers)!r}), project='demo', kind='workers')\n",
    )
    command = [sys.executable, str(ROOT / "manage.py"), "export_data", "--project", "demo"]
    child = subprocess.Popen(
        [*command, "--kind", "workers"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout.readline() == b"worker_id,name,max_tasks\r\n"
    child.stdout.close()  # what head does after its line
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 1
    assert stderr == ""


def test_a_project_is_found_by_its_name_as_create_project_stored_it(files):
    get_user_model().objects.create_user("al")
    run("create_project", "  spaced  ", "--owner", "al")
    assert Project.objects.get().name == "spaced"
    out = run("import_data", "--project", "  spaced  ", "--kind", "workers", str(files["workers"]))
    assert "into project 'spaced'" in out


def test_import_data_says_a_read_error_or_an_interrupt_in_one_line_and_imports_nothing(
    files, monkeypatch
):
    from assignment.management.commands import import_data

    make_project()
    for raised, message in (
        (OSError(5, "Input/output error"), "cannot read .*: Input/output error"),
        (KeyboardInterrupt(), "interrupted: nothing of the file was imported"),
    ):

        def failing(raised=raised, **kwargs):
            raise raised

        monkeypatch.setattr(import_data, "project_data_import", failing)
        with pytest.raises(CommandError, match=message):
            run("import_data", "--project", "demo", "--kind", "workers", str(files["workers"]))
    assert not Worker.objects.exists()


def test_export_data_interrupted_says_so_and_leaves_no_file(imported, tmp_path, monkeypatch):
    from assignment.management.commands import export_data

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(export_data, "export_data", interrupted)
    target = tmp_path / "exported-workers.csv"
    with pytest.raises(CommandError, match=f"interrupted: {target} not written"):
        run("export_data", "--project", "demo", "--kind", "workers", "--output", str(target))
    assert not target.exists()
