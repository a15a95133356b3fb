"""manage.py assign computes runs in-process and prints them."""

from __future__ import annotations

import io
import os
import re
import signal
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from assignment import services
from assignment.models import AssignmentRun, Comparison, RunStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_project():
    """The demo project (services.demo_project_create) of 10 workers and 30 tasks, seed 4."""
    owner = get_user_model().objects.create_user("assigner", password="x")
    return services.demo_project_create(owner=owner, n_workers=10, n_tasks=30, seed=4)


def test_one_method_is_computed_stored_and_printed(demo_project):
    out = io.StringIO()
    call_command(
        "assign",
        project=demo_project.name,
        method="greedy",
        budget=20,
        stdout=out,
        stderr=io.StringIO(),
    )
    run = AssignmentRun.objects.get(project=demo_project)
    assert run.status == RunStatus.SUCCEEDED
    assert run.n_assigned <= 20
    assert f"Run {run.pk} (greedy): expected accuracy {run.expected_accuracy:.4f}" in out.getvalue()


def test_a_run_that_assigns_fewer_pairs_than_its_budget_says_why(demo_project):
    out = io.StringIO()
    call_command(
        "assign", project=demo_project.name, method="greedy", budget=10**7, stdout=out,
        stderr=io.StringIO(),
    )  # fmt: skip
    run = AssignmentRun.objects.get(project=demo_project)
    assert run.n_assigned < run.budget
    assert f"Fewer pairs than the budget: {run.progress_message}\n" in out.getvalue()


def test_compare_runs_every_method_as_one_comparison_and_prints_a_table(demo_project):
    out, err = io.StringIO(), io.StringIO()
    call_command("assign", project=demo_project.name, compare=True, stdout=out, stderr=err)
    # Each step of the work is announced, the upper bound last.
    assert err.getvalue().splitlines()[-1] == "computing the upper bound ..."
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["method", "accuracy", "assigned", "budget", "seconds", "run"]
    assert sorted(line.split()[0] for line in lines[1:5]) == [
        "greedy",
        "q-lp",
        "random",
        "tvcs-iht",
    ]
    comparison = Comparison.objects.get(project=demo_project)
    runs = AssignmentRun.objects.filter(project=demo_project)
    assert [run.status for run in runs] == [RunStatus.SUCCEEDED] * 4
    assert {run.comparison_id for run in runs} == {comparison.pk}
    # The upper bound at the comparison's budget, as the comparison page shows it.
    assert comparison.upper_bound["status"] == "done"
    ((budget, bound),) = comparison.upper_bound["points"]
    assert budget == runs[0].budget
    assert lines[5].split() == ["bound", f"{bound:.4f}"]
    assert max(run.expected_accuracy for run in runs) <= bound + 1e-9
    assert f"Comparison {comparison.pk}: none of its runs is handed out" in lines[-1]
    for line in lines[1:5]:
        run = runs.get(pk=int(line.split()[-1]))
        assert line.split()[1:4] == [
            f"{run.expected_accuracy:.4f}",
            f"{run.n_assigned:,}",
            f"{run.budget:,}",
        ]


def test_compare_as_a_round_counts_none_of_its_runs_until_one_is_handed_out(demo_project):
    from assignment import selectors

    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    out = io.StringIO()
    call_command(
        "assign", project=demo_project.name, compare=True, round=True, budget=6, stdout=out,
        stderr=io.StringIO(),
    )  # fmt: skip
    assert out.getvalue().startswith("Next round from 0 answers: expected accuracy ")
    runs = list(AssignmentRun.objects.filter(project=demo_project))
    assert len(runs) == 4
    assert all(run.next_round and run.n_assigned == 6 for run in runs)
    # Alternatives from the same answers in hand: no run counts another's pairs as pending.
    assert all(run.round_start["pending"] == 0 for run in runs)
    assert not selectors.rounds_counted(project=demo_project).exists()
    greedy = next(run for run in runs if run.method == "greedy")
    call_command("assign", project=demo_project.name, hand_out=greedy.pk, **quiet)
    assert list(selectors.rounds_counted(project=demo_project)) == [greedy]


def test_an_unknown_project_is_a_command_error():
    with pytest.raises(CommandError, match="project"):
        call_command("assign", project="nope", method="random")


def test_a_next_round_counts_the_answers_and_prints_what_it_started_from(demo_project):
    from assignment.models import Answer

    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    demo_project.default_max_tasks_per_worker = 9
    demo_project.default_max_workers_per_task = 3
    demo_project.save()
    call_command("assign", project=demo_project.name, method="greedy", budget=30, **quiet)
    first = AssignmentRun.objects.get(project=demo_project)
    matrix = first.quality_matrix
    for k, (row, column) in enumerate(first.pairs.tolist()):
        Answer.objects.create(
            worker_id=int(matrix.worker_ids[row]),
            task_id=int(matrix.task_ids[column]),
            label=demo_project.labels[k % 2],
        )
    out = io.StringIO()
    call_command(
        "assign",
        project=demo_project.name,
        method="tvcs-iht",
        round=True,
        budget=15,
        target_posterior=0.97,
        stdout=out,
        stderr=io.StringIO(),
    )
    second = AssignmentRun.objects.exclude(pk=first.pk).get()
    assert second.next_round
    assert second.target_posterior == 0.97
    assert second.status == RunStatus.SUCCEEDED
    assert 0 < second.n_assigned <= 15
    assert "Next round from 30 answers: expected accuracy" in out.getvalue()
    assert not {tuple(p) for p in first.pairs.tolist()} & {tuple(p) for p in second.pairs.tolist()}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--round", "--target-posterior", "1.5"], r"target_posterior must be a number above 0\.5"),
        (
            ["--round", "--target-posterior", "0.5"],
            r"above 0\.5, at most 1 \(the likeliest of 2 labels.*got 0\.5",
        ),
        (["--round", "--target-accuracy", "0"], "target_accuracy must be a number above 0"),
        (["--round", "--rounds-left", "101"], "rounds_left must be an integer from 1 to 100"),
        (["--seed", "-1"], "argument --seed: must be at least 0, got -1"),
        (["--budget", "1e300"], "argument --budget: must be a whole number, got '1e300'"),
        (["--budget", str(2**31)], "budget.*less than or equal to 2147483647"),
    ],
)
def test_values_out_of_range_are_one_line_refusals_and_nothing_is_stored(
    demo_project, flags, message
):
    with pytest.raises(CommandError, match=message):
        call_command(
            "assign", "--project", demo_project.name, "--method", "greedy", *flags,
            stdout=io.StringIO(), stderr=io.StringIO(),
        )  # fmt: skip
    assert not AssignmentRun.objects.exists()


def _ctrl_c(*, run_id, **kwargs):
    raise KeyboardInterrupt  # what Ctrl-C raises in the computation


def _terminated(*, run_id, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)  # what `kill PID` sends the command
    time.sleep(5)  # the command's handler interrupts this
    raise AssertionError("SIGTERM did not interrupt the computation")


def _inside_numba(*, run_id, **kwargs):
    # Ctrl-C inside a numba kernel comes out as a SystemError whose context is the interrupt
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        raise SystemError("CPUDispatcher(<function k>) returned a result with an exception set")  # noqa: B904 (numba chains implicitly)


@pytest.mark.parametrize(
    "interrupt", [_ctrl_c, _terminated, _inside_numba], ids=["ctrl-c", "sigterm", "in-numba"]
)
def test_ctrl_c_or_sigterm_while_computing_cancels_the_run_instead_of_leaving_it_running(
    demo_project, monkeypatch, interrupt
):
    monkeypatch.setattr(services, "run_execute", interrupt)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(CommandError, match=r"interrupted: run \d+ is cancelled"):
        call_command(
            "assign", project=demo_project.name, method="greedy", stdout=io.StringIO(),
            stderr=io.StringIO(),
        )  # fmt: skip
    assert list(AssignmentRun.objects.values_list("status", flat=True)) == [RunStatus.CANCELLED]
    assert signal.getsignal(signal.SIGTERM) is before  # the command's handler is gone


def test_a_comparison_that_stops_midway_cancels_the_runs_it_did_not_compute(
    demo_project, monkeypatch
):
    real, calls = services.run_execute, []

    def second_interrupted(*, run_id, **kwargs):
        calls.append(run_id)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(run_id=run_id, **kwargs)

    monkeypatch.setattr(services, "run_execute", second_interrupted)
    err = io.StringIO()
    with pytest.raises(CommandError, match="interrupted"):
        call_command("assign", project=demo_project.name, compare=True, stdout=io.StringIO(),
                     stderr=err)  # fmt: skip
    statuses = list(AssignmentRun.objects.order_by("pk").values_list("status", flat=True))
    assert statuses == [RunStatus.SUCCEEDED] + [RunStatus.CANCELLED] * 3


def test_an_interrupt_before_the_computation_leaves_no_run_queued(demo_project, monkeypatch):
    real = services.run_claim

    def interrupted_claim(*, run_id):
        raise KeyboardInterrupt

    monkeypatch.setattr(services, "run_claim", interrupted_claim)
    with pytest.raises(CommandError, match=r"interrupted: run \d+ is cancelled"):
        call_command(
            "assign", project=demo_project.name, method="greedy", stdout=io.StringIO(),
            stderr=io.StringIO(),
        )  # fmt: skip
    monkeypatch.setattr(services, "run_claim", real)
    assert list(AssignmentRun.objects.values_list("status", flat=True)) == [RunStatus.CANCELLED]


def test_an_error_that_is_not_an_interrupt_is_not_taken_for_one(demo_project, monkeypatch):
    def broken(*, run_id, **kwargs):
        raise SystemError("a real bug")

    monkeypatch.setattr(services, "run_execute", broken)
    with pytest.raises(SystemError, match="a real bug"):
        call_command(
            "assign", project=demo_project.name, method="greedy", stdout=io.StringIO(),
            stderr=io.StringIO(),
        )  # fmt: skip


def test_a_round_when_every_worker_is_at_its_cap_is_refused_saying_so(demo_project):
    from assignment.models import Answer

    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    demo_project.default_max_tasks_per_worker = 2
    demo_project.default_max_workers_per_task = 3
    demo_project.default_budget = None
    demo_project.save()
    call_command("assign", project=demo_project.name, method="greedy", **quiet)
    first = AssignmentRun.objects.get(project=demo_project)
    matrix = first.quality_matrix
    assert first.n_assigned == matrix.n_workers * 2
    for row, column in first.pairs.tolist():
        Answer.objects.create(
            worker_id=int(matrix.worker_ids[row]), task_id=int(matrix.task_ids[column]), label="1"
        )
    with pytest.raises(CommandError, match="every active worker has answered as many tasks"):
        call_command(
            "assign", project=demo_project.name, method="greedy", round=True, budget=5, **quiet
        )


def test_a_run_on_a_quality_matrix_that_misses_new_tasks_is_refused_saying_what_to_do(demo_project):
    from assignment.models import Task

    Task.objects.create(project=demo_project, external_id="late", category="c")
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    for extra in ({}, {"round": True}):
        with pytest.raises(CommandError) as refused:
            call_command("assign", project=demo_project.name, method="greedy", **extra, **quiet)
        assert "no quality for 1 task (e.g. 'late')" in str(refused.value)
        assert "manage.py estimate_quality" in str(refused.value)
    assert not AssignmentRun.objects.exists()


def test_a_second_round_before_the_answers_prints_and_keeps_out_the_pending_pairs(demo_project):
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    demo_project.default_max_tasks_per_worker = 9
    demo_project.default_max_workers_per_task = 3
    demo_project.save()
    call_command(
        "assign", project=demo_project.name, method="greedy", round=True, budget=12, **quiet
    )
    first = AssignmentRun.objects.get(project=demo_project)
    out = io.StringIO()
    call_command(
        "assign",
        project=demo_project.name,
        method="greedy",
        round=True,
        budget=12,
        stdout=out,
        stderr=io.StringIO(),
    )
    second = AssignmentRun.objects.exclude(pk=first.pk).get()
    assert second.round_start["pending"] == first.n_assigned == 12
    assert "12 pairs of earlier rounds await their answers: counted as spent" in out.getvalue()
    assert not {tuple(p) for p in first.pairs.tolist()} & {tuple(p) for p in second.pairs.tolist()}


def _computed_comparison(project):
    """A comparison in rounds of greedy and random at a budget of 5, both computed here."""
    comparison = services.comparison_create(
        project=project,
        methods=["greedy", "random"],
        budgets=[5],
        seed=0,
        next_round=True,
        enqueue=False,
    )
    runs = list(comparison.runs.order_by("pk"))
    for run in runs:
        assert services.run_claim(run_id=run.pk)
        services.run_execute(run_id=run.pk)
    return runs


def test_a_comparisons_run_is_handed_out_and_withdrawn_by_the_command(demo_project):
    from assignment import selectors

    greedy, _ = _computed_comparison(demo_project)
    out = io.StringIO()
    call_command("assign", project=demo_project.name, hand_out=greedy.pk, stdout=out)
    assert (
        f"Run {greedy.pk} (greedy, comparison #{greedy.comparison_id}) handed out: the project "
        "counts it as a round from now on, its 5 pairs pending" in out.getvalue()
    )
    assert list(selectors.rounds_counted(project=demo_project)) == [greedy]
    out = io.StringIO()
    call_command("assign", project=demo_project.name, withdraw=greedy.pk, stdout=out)
    assert f"Run {greedy.pk} (greedy) withdrawn: later rounds no longer count" in out.getvalue()
    assert not selectors.rounds_counted(project=demo_project).exists()


@pytest.mark.parametrize(
    ("action", "target", "extra", "message"),
    [
        ("hand_out", "round", {}, "is not a comparison's run"),
        ("hand_out", "handed out", {}, "was handed out already"),
        ("hand_out", "sibling", {}, "of comparison #\\d+ was handed out already"),
        ("withdraw", "greedy", {}, "is a comparison's run that was not handed out"),
        ("withdraw", "missing", {}, "has no run"),
        ("hand_out", "greedy", {"budget": 3}, "--hand-out and --withdraw take no run options: "),
    ],
    ids=["round", "twice", "sibling", "not out", "missing", "with a budget"],
)
def test_refusals_of_the_command_are_command_errors_saying_why(
    demo_project, action, target, extra, message
):
    greedy, random = _computed_comparison(demo_project)
    run = greedy
    if target == "round":
        run = services.run_create(
            project=demo_project, method="random", next_round=True, budget=2, enqueue=False
        )
    elif target == "handed out":
        services.run_hand_out(run=greedy)
    elif target == "sibling":
        services.run_hand_out(run=random)
    elif target == "missing":
        run = AssignmentRun(pk=10_000)
    with pytest.raises(CommandError, match=message):
        call_command("assign", project=demo_project.name, **{action: run.pk}, **extra)
    assert AssignmentRun.objects.filter(pk=greedy.pk, withdrawn_at__isnull=False).count() == 0


def test_method_options_are_parsed_by_the_registry_and_reach_the_run(demo_project):
    call_command(
        "assign",
        "--project",
        demo_project.name,
        "--method",
        "tvcs-iht",
        "--option",
        "max_iter=3",
        "--option",
        "refine=false",
        "--option",
        "time_limit=null",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    run = AssignmentRun.objects.get(project=demo_project)
    assert run.status == RunStatus.SUCCEEDED
    assert run.options == {"max_iter": 3, "refine": False, "time_limit": None}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--method", "greedy", "--option", "max_iter=3"], "greedy has no such option"),
        (["--method", "tvcs-iht", "--option", "max_iter"], "write NAME=VALUE"),
        (["--method", "tvcs-iht", "--option", "max_iter=2.5"], "max_iter must be an integer"),
        (["--method", "q-lp", "--option", "target_error=1"], "target_error must be a number"),
        (["--compare", "--option", "max_iter=3"], "--option is for one --method"),
        (["--withdraw", "1", "--option", "max_iter=3"], "take no run options: --option"),
        (["--withdraw", "1", "--seed", "5"], "take no run options: --seed"),
        (["--method", "tvcs-iht", "--option", "refine=yes"], "refine must be true or false"),
    ],
    ids=[
        "not the method's",
        "no value",
        "not an integer",
        "out of bounds",
        "compare",
        "withdraw",
        "withdraw with a seed",
        "a switch not true or false",
    ],
)
def test_a_bad_method_option_is_a_command_error_and_nothing_runs(demo_project, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("assign", "--project", demo_project.name, *arguments)
    assert not AssignmentRun.objects.filter(project=demo_project).exists()


def test_the_help_lists_every_methods_options_with_defaults_and_bounds_from_the_registry():
    from assignment.engine import METHODS, method_spec
    from assignment.management.commands.assign import Command

    text = Command().create_parser("manage.py", "assign").format_help()
    flat = " ".join(text.split())
    for method in METHODS:
        assert f"{method}:" in flat
        for option in method_spec(method).options:
            assert f"{option.name} (" in flat
            assert option.describe() in flat


def test_a_long_computation_prints_its_progress_to_stderr(demo_project, monkeypatch):
    from assignment.management.commands import assign

    monkeypatch.setattr(assign, "PROGRESS_EVERY", 0.0)  # every report the run stores
    err = io.StringIO()
    call_command(
        "assign", "--project", demo_project.name, "--method", "tvcs-iht",
        "--option", "search_when_spent=true", "--option", "max_iter=5",
        stdout=io.StringIO(), stderr=err,
    )  # fmt: skip
    lines = err.getvalue().splitlines()
    assert lines[0] == "computing tvcs-iht ..."
    progress = [line for line in lines[1:] if re.fullmatch(r"  +\d+% .+", line)]
    assert progress, lines
    run = AssignmentRun.objects.get(project=demo_project)
    assert run.status == RunStatus.SUCCEEDED
