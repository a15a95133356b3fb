"""Sharded runs: shards solved and coordinated through their tasks' messages, in this process."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone
from project_data import make_project, project_with_random_quality
from rest_framework.test import APIClient

from assignment import services, tasks
from assignment.engine import expected_accuracy
from assignment.engine.confusion import confusion_accuracy
from assignment.engine.distributions import accuracy_under_confusion
from assignment.engine.multiclass import expected_accuracy_multiclass
from assignment.engine.shards import solve_sharded
from assignment.engine.solve import evaluate
from assignment.errors import RunValidationError
from assignment.models import (
    Answer,
    AssignmentRun,
    Comparison,
    RunShard,
    RunStatus,
    Task,
    Worker,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def project_in_three_categories():
    """15 workers, 80 tasks in three categories (the shards), up to 12 tasks per worker, random
    quality."""
    return project_with_random_quality(
        n_workers=15, n_tasks=80, max_tasks_per_worker=12, categories=3
    )


@pytest.fixture
def broker(monkeypatch):
    """The shard and coordination messages sent, in order, instead of a broker."""
    sent: list[tuple] = []
    monkeypatch.setattr(tasks.shard_solve_task, "delay", lambda s: sent.append(("shard", s)))
    monkeypatch.setattr(
        tasks.shards_coordinate_task, "delay", lambda r, k: sent.append(("coordinate", r, k))
    )
    return sent


def deliver(message) -> None:
    if message[0] == "shard":
        if services.shard_claim(shard_id=message[1], worker="w@test"):
            services.shard_execute(shard_id=message[1])
    else:
        services.shards_coordinate(run_id=message[1], round_=message[2])


def drain(broker, capture, *, twice=False, drop=None) -> list[tuple]:
    """Deliver every message (each twice with ``twice``; those ``drop`` says yes to, never)
    until none is left; returns the dropped ones."""
    dropped = []
    while broker:
        message = broker.pop(0)
        if drop is not None and drop(message):
            dropped.append(message)
            continue
        with capture(execute=True):
            for _ in range(2 if twice else 1):
                deliver(message)
    return dropped


def start(project, capture, **kwargs) -> AssignmentRun:
    run = services.run_create(project=project, method="greedy", enqueue=False, **kwargs)
    assert services.run_claim(run_id=run.pk)
    with capture(execute=True):
        services.run_execute(run_id=run.pk)
    return run


def assert_stored_like_a_run(run: AssignmentRun) -> None:
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.progress == 100
    q = run.quality_matrix.values
    x = np.zeros(q.shape, dtype=bool)
    x[run.pairs[:, 0], run.pairs[:, 1]] = True
    assert x.sum() == run.n_assigned <= run.budget
    assert x.sum(axis=0).max() <= run.max_workers_per_task
    assert x.sum(axis=1).max() <= run.max_tasks_per_worker
    assert run.expected_accuracy == pytest.approx(expected_accuracy(q, x), abs=1e-12)
    assert run.summary  # the distributions a run's page draws


def test_a_sharded_run_is_stored_like_a_run_and_close_to_one_worker(
    project_in_three_categories, broker, django_capture_on_commit_callbacks
):
    run = start(
        project_in_three_categories, django_capture_on_commit_callbacks, shards=3, budget=150
    )
    assert [m[0] for m in broker] == ["shard"] * 3
    drain(broker, django_capture_on_commit_callbacks, twice=True)  # duplicates do nothing
    assert_stored_like_a_run(run)
    single = start(project_in_three_categories, django_capture_on_commit_callbacks, budget=150)
    single.refresh_from_db()
    assert abs(run.expected_accuracy - single.expected_accuracy) < 0.01
    assert run.shard_rows.filter(round=0).count() == 3
    assert all(row.attempts == 1 for row in run.shard_rows.all())
    history = run.shard_state["history"]
    assert history[0]["round"] == 0
    accepted = [h["accuracy"] for h in history if h["accepted"]]
    assert accepted == sorted(accepted)
    rounds = len(history)
    assert f"in 3 shards, {rounds} price round{'s' * (rounds != 1)}" in run.progress_message
    assert run.shard_round == rounds - 1  # the page shows it counted from 1, as the message


def test_the_tasks_take_the_engines_rounds_and_answer(
    project_in_three_categories, broker, django_capture_on_commit_callbacks
):
    run = start(
        project_in_three_categories,
        django_capture_on_commit_callbacks,
        shards=3,
        budget=120,
        seed=5,
    )
    drain(broker, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    problem = services.runs._whole_problem(run)
    engine = solve_sharded(problem, method="greedy", n_shards=3, seed=5)
    x = np.zeros(problem.shape, dtype=bool)
    x[run.pairs[:, 0], run.pairs[:, 1]] = True
    np.testing.assert_array_equal(x, engine.assignment)
    assert [(h["round"], h["accepted"]) for h in run.shard_state["history"]] == [
        (r.round, r.accepted) for r in engine.rounds if r.shards_solved
    ]


def test_lost_shard_and_coordination_messages_are_recovered(
    project_in_three_categories, broker, settings, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    run = start(project_in_three_categories, capture, shards=2)
    first = broker[0]
    dropped = drain(broker, capture, drop=lambda m: m == first)
    assert dropped == [first]
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    lost = timezone.now() + timedelta(seconds=settings.TVCS_RUN_LOST_AFTER + 1)
    with capture(execute=True):
        recovered = services.runs_recover_stale(now=lost)["shards"]
    assert recovered["reenqueued"] == [dropped[0][1]]
    # This time the coordination of the round is lost: the round is complete but not moved on.
    dropped = drain(broker, capture, drop=lambda m: m[0] == "coordinate")
    assert dropped
    AssignmentRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.TVCS_RUN_LOST_AFTER + 1)
    )
    with capture(execute=True):
        assert services.runs_recover_stale()["shards"]["coordinated"] == [run.pk]
    drain(broker, capture)
    assert_stored_like_a_run(run)


def test_a_shard_whose_worker_went_silent_is_queued_again(
    project_in_three_categories, broker, settings, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    run = start(project_in_three_categories, capture, shards=2)
    _, shard_id = broker.pop(0)
    assert services.shard_claim(shard_id=shard_id, worker="dead@test")  # and never finishes
    stale = timezone.now() + timedelta(seconds=settings.TVCS_RUN_STALE_AFTER + 1)
    with capture(execute=True):
        recovered = services.runs_recover_stale(now=stale)
    assert recovered["shards"]["requeued"] == [shard_id]
    assert recovered["requeued"] == []  # the run itself is not re-queued: its shards are
    assert RunShard.objects.get(pk=shard_id).status == RunStatus.QUEUED
    drain(broker, capture)
    assert_stored_like_a_run(run)
    assert RunShard.objects.get(pk=shard_id).attempts == 2


def test_a_cancelled_sharded_run_leaves_its_shards_unsolved(
    project_in_three_categories, broker, django_capture_on_commit_callbacks
):
    run = start(project_in_three_categories, django_capture_on_commit_callbacks, shards=4)
    services.run_cancel(run=run)
    drain(broker, django_capture_on_commit_callbacks)
    assert not RunShard.objects.filter(run=run).exclude(status=RunStatus.QUEUED).exists()
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"shards": 0}, "shards"),
        ({"shards": 65}, "shards"),
    ],
)
def test_shards_are_validated_when_the_run_is_requested(project_in_three_categories, kwargs, match):
    with pytest.raises(RunValidationError, match=match):
        services.run_create(
            project=project_in_three_categories, method="greedy", enqueue=False, **kwargs
        )


def test_a_worker_shutting_down_hands_its_shards_back_for_the_others(
    project_in_three_categories, broker, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    run = start(project_in_three_categories, capture, shards=3)
    (_, mine), (_, theirs) = broker.pop(0), broker.pop(0)
    assert services.shard_claim(shard_id=mine, worker="w1@host")
    assert services.shard_claim(shard_id=theirs, worker="w2@host")
    assert services.shards_hand_back(worker="w1@host") == [mine]
    row = RunShard.objects.get(pk=mine)
    assert (row.status, row.attempts) == (RunStatus.QUEUED, 0)  # the attempt is not counted
    assert RunShard.objects.get(pk=theirs).status == RunStatus.RUNNING
    # The solve that was under way on w1 finds the shard no longer its own and stores nothing.
    assert services.shard_execute(shard_id=mine) is False
    assert RunShard.objects.get(pk=mine).status == RunStatus.QUEUED
    with capture(execute=True):
        assert services.shards_enqueue(shard_ids=[mine, theirs]) == [mine]
    assert broker[-1] == ("shard", mine)
    with capture(execute=True):  # w2 finishes the one it holds
        assert services.shard_execute(shard_id=theirs)
    drain(broker, capture)
    assert_stored_like_a_run(run)


def test_a_shard_stops_at_its_next_progress_report_once_its_worker_is_shutting_down(
    project_in_three_categories, broker, django_capture_on_commit_callbacks
):
    run = start(project_in_three_categories, django_capture_on_commit_callbacks, shards=2)
    _, shard_id = broker.pop(0)
    assert services.shard_claim(shard_id=shard_id, worker="w1@host")
    asked = []

    def should_stop():
        asked.append(True)
        return True

    assert services.shard_execute(shard_id=shard_id, should_stop=should_stop) is False
    assert asked
    row = RunShard.objects.get(pk=shard_id)
    # Nothing stored, the row left for the worker to hand back as it stops.
    assert (row.status, row.worker, row.pairs_blob) == (RunStatus.RUNNING, "w1@host", None)
    assert services.shards_hand_back(worker="w1@host") == [shard_id]
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING


def test_a_worker_starting_again_under_its_name_takes_back_the_shards_it_left(
    project_in_three_categories, broker, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    start(project_in_three_categories, capture, shards=3)
    (_, killed), (_, cold), (_, theirs) = broker.pop(0), broker.pop(0), broker.pop(0)
    assert services.shard_claim(shard_id=theirs, worker="w2@host")
    assert services.shard_claim(shard_id=cold, worker="w1@host")
    assert services.shards_hand_back(worker="w1@host") == [cold]  # never given to the broker
    assert services.shard_claim(shard_id=killed, worker="w1@host")  # then w1 was killed
    with capture(execute=True):
        assert services.shards_reclaim(worker="w1@host") == sorted([killed, cold])
    assert sorted(message[1] for message in broker) == sorted([killed, cold])
    assert RunShard.objects.get(pk=theirs).status == RunStatus.RUNNING
    with capture(execute=True):
        assert services.shards_reclaim(worker="w3@host") == []


def test_a_sharded_run_of_a_three_label_project_is_scored_by_the_k_class_vote(
    project_in_three_categories, broker, django_capture_on_commit_callbacks
):
    project_in_three_categories.labels = ["cat", "dog", "bird"]
    project_in_three_categories.save(update_fields=["labels"])
    run = start(
        project_in_three_categories, django_capture_on_commit_callbacks, shards=3, budget=150
    )
    drain(broker, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    q = run.quality_matrix.values
    x = np.zeros(q.shape, dtype=bool)
    x[run.pairs[:, 0], run.pairs[:, 1]] = True
    assert x.sum() == run.n_assigned <= 150
    assert x.sum(axis=0).max() <= run.max_workers_per_task
    assert x.sum(axis=1).max() <= run.max_tasks_per_worker
    uniform = np.full((q.shape[1], 3), 1 / 3)
    exact = expected_accuracy_multiclass(q, x, prior=uniform, n_labels=3)
    assert run.expected_accuracy == pytest.approx(exact, abs=1e-12)
    assert run.expected_accuracy != pytest.approx(expected_accuracy(q, x), abs=1e-3)
    single = start(project_in_three_categories, django_capture_on_commit_callbacks, budget=150)
    single.refresh_from_db()
    assert abs(run.expected_accuracy - single.expected_accuracy) < 0.01


# --------------------------------------------------------------------------------------------
# Dawid-Skene quality


@pytest.fixture
def ds_project():
    """A three-label project whose quality Dawid-Skene EM learnt from 3 answers a task (18
    workers of one-coin accuracy U(0.5, 0.95), 90 tasks)."""
    labels = ("cat", "dog", "bird")
    project = make_project(labels=list(labels), default_max_tasks_per_worker=15)
    rng = np.random.default_rng(8)
    accuracy = rng.uniform(0.5, 0.95, 18)
    workers = Worker.objects.bulk_create(
        [Worker(project=project, external_id=f"w{i}") for i in range(18)]
    )
    tasks_ = Task.objects.bulk_create(
        [Task(project=project, external_id=f"t{j}", category="c") for j in range(90)]
    )
    answers = []
    for task in tasks_:
        truth = rng.integers(3)
        for i in rng.choice(18, size=3, replace=False):
            given = truth if rng.random() < accuracy[i] else (truth + rng.integers(1, 3)) % 3
            answers.append(Answer(worker=workers[i], task=task, label=labels[given]))
    Answer.objects.bulk_create(answers)
    services.quality_estimate(project=project, source="answers", model="dawid-skene")
    return project


def test_a_sharded_run_on_dawid_skene_quality_is_chosen_and_scored_under_the_matrices(
    ds_project, broker, django_capture_on_commit_callbacks
):
    run = start(ds_project, django_capture_on_commit_callbacks, shards=3, budget=200, seed=0)
    drain(broker, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.shard_state["dawid_skene"] is True
    problem = services.runs._whole_problem(run, under_confusion=True)
    confusion = run.quality_matrix.confusion
    np.testing.assert_array_equal(problem.confusion, confusion)
    workers, tasks_ = run.pairs[:, 0].astype(np.int64), run.pairs[:, 1].astype(np.int64)
    assert problem.is_feasible_pairs(workers, tasks_)
    ds = confusion_accuracy(confusion, workers, tasks_, prior=problem.prior_distribution)
    assert run.expected_accuracy == pytest.approx(ds.expected_accuracy, abs=1e-12)
    assert run.dawid_skene_accuracy["dawid_skene_vote"]["expected_accuracy"] == pytest.approx(
        ds.expected_accuracy, abs=1e-12
    )
    assert "Dawid\u2013Skene" in run.progress_message
    # Each shard of the answer was solved and scored under the matrices: its stored accuracy
    # is the Dawid-Skene vote's over its tasks.
    for row in RunShard.objects.filter(pk__in=run.shard_state["best_rows"]):
        assert row.accuracy == pytest.approx(ds.task_accuracy[row.tasks].mean(), abs=1e-12)
    # Rounds were kept by the Dawid-Skene accuracy: the best kept is the stored one.
    kept = [h["accuracy"] for h in run.shard_state["history"] if h["accepted"]]
    assert max(kept) == pytest.approx(run.expected_accuracy, abs=1e-12)
    single = start(ds_project, django_capture_on_commit_callbacks, budget=200, seed=0)
    single.refresh_from_db()
    assert abs(run.expected_accuracy - single.expected_accuracy) < 0.005


@pytest.mark.parametrize(("method", "word"), [("greedy", "chosen"), ("random", "scored")])
def test_a_sharded_runs_message_says_what_its_chosen_under_says(
    ds_project, broker, django_capture_on_commit_callbacks, method, word
):
    run = services.run_create(
        project=ds_project, method=method, enqueue=False, shards=2, budget=100, seed=0
    )
    assert services.run_claim(run_id=run.pk)
    with django_capture_on_commit_callbacks(execute=True):
        services.run_execute(run_id=run.pk)
    drain(broker, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    expected = {"chosen": "dawid_skene", "scored": "symmetric"}[word]
    assert run.chosen_under == expected
    assert f"{word} under the Dawid\u2013Skene matrices" in run.progress_message


def test_a_sharded_run_on_dawid_skene_quality_that_could_pass_the_exact_limit_is_refused(
    ds_project,
):
    with pytest.raises(RunValidationError, match="at most 7 workers a task with 3 labels"):
        services.run_create(
            project=ds_project, method="q-lp", shards=2, max_workers_per_task=8, enqueue=False
        )
    api = APIClient()
    api.force_authenticate(user=ds_project.owner)
    refused = api.post(
        f"/api/projects/{ds_project.pk}/runs/",
        {"method": "random", "shards": 2, "max_workers_per_task": 9},
        format="json",
    )
    assert refused.status_code == 400
    assert "run without shards" in refused.json()["detail"]
    assert not AssignmentRun.objects.exists()
    # Greedy stops at the limit itself; within it, every method may be sharded.
    for method, cap in (("greedy", 9), ("q-lp", 7)):
        services.run_create(
            project=ds_project, method=method, shards=2, max_workers_per_task=cap, enqueue=False
        )


def test_a_sharded_run_planned_under_the_symmetric_model_ends_under_it(
    ds_project, broker, django_capture_on_commit_callbacks
):
    # A run planned before shards were chosen under the matrices has no "dawid_skene" in its
    # state: its shards and its result stay under the model it started with.
    run = start(ds_project, django_capture_on_commit_callbacks, shards=2, budget=200, seed=0)
    state = {k: v for k, v in run_state(run).items() if k != "dawid_skene"}
    AssignmentRun.objects.filter(pk=run.pk).update(shard_state=state)
    drain(broker, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    problem = services.runs._whole_problem(run)
    assert problem.confusion is None
    x = np.zeros(problem.shape, dtype=bool)
    x[run.pairs[:, 0], run.pairs[:, 1]] = True
    exact = expected_accuracy_multiclass(
        problem.quality, x, prior=problem.prior_distribution, n_labels=3
    )
    assert run.expected_accuracy == pytest.approx(exact, abs=1e-12)
    assert "Dawid\u2013Skene" not in run.progress_message


def run_state(run: AssignmentRun) -> dict:
    return AssignmentRun.objects.get(pk=run.pk).shard_state


def test_a_sharded_comparison_on_dawid_skene_quality_past_the_exact_limit_queues_nothing(
    ds_project,
):
    with pytest.raises(RunValidationError, match="q-lp may give a task up to 8"):
        services.comparison_create(
            project=ds_project,
            methods=["greedy", "q-lp"],
            shards=2,
            max_workers_per_task=8,
            enqueue=False,
        )
    assert not AssignmentRun.objects.exists()
    assert not Comparison.objects.exists()


def _dense(run: AssignmentRun) -> np.ndarray:
    x = np.zeros(run.quality_matrix.values.shape, dtype=bool)
    x[run.pairs[:, 0], run.pairs[:, 1]] = True
    return x


def _answered(run: AssignmentRun) -> np.ndarray:
    """The pairs of ``run``'s quality matrix that have an answer, bool (n_workers, n_tasks)."""
    matrix = run.quality_matrix
    rows = {pk: i for i, pk in enumerate(matrix.worker_ids.tolist())}
    cols = {pk: j for j, pk in enumerate(matrix.task_ids.tolist())}
    done = np.zeros((len(rows), len(cols)), dtype=bool)
    for worker_id, task_id in Answer.objects.filter(task__project=run.project).values_list(
        "worker_id", "task_id"
    ):
        done[rows[worker_id], cols[task_id]] = True
    return done


def sharded_round(project, capture, broker, **kwargs) -> AssignmentRun:
    run = services.run_create(
        project=project, method="greedy", next_round=True, enqueue=False, shards=2, **kwargs
    )
    assert services.run_claim(run_id=run.pk)
    with capture(execute=True):
        services.run_execute(run_id=run.pk)
    drain(broker, capture)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    return run


def test_a_sharded_next_round_is_the_engines_sharded_solve_of_the_rounds_problem(
    after_a_round, broker, django_capture_on_commit_callbacks
):
    run = sharded_round(after_a_round, django_capture_on_commit_callbacks, broker, seed=5)
    nxt = services.runs._run_round(run)
    engine = solve_sharded(nxt.problem, method="greedy", n_shards=2, seed=5)
    x = _dense(run)
    np.testing.assert_array_equal(x, engine.assignment)
    # The round's problem: answered pairs not again, caps and budget net of the answers.
    done = _answered(run)
    assert done.any()
    assert not (x & done).any()
    assert nxt.problem.is_feasible(x)
    assert ((x | done).sum(axis=0) <= run.max_workers_per_task).all()
    assert (x | done).sum() <= after_a_round.default_budget
    # Its accuracy is the round's objective: the final vote's, given the answers in hand.
    assert run.expected_accuracy == pytest.approx(evaluate(nxt.problem, x)[0], abs=1e-12)
    assert run.progress_message.startswith("greedy in 2 shards")


def test_a_sharded_round_with_rounds_to_go_keeps_its_layers_of_the_sharded_plan(
    after_a_round, broker, django_capture_on_commit_callbacks
):
    run = sharded_round(
        after_a_round, django_capture_on_commit_callbacks, broker, seed=5, rounds_left=3
    )
    nxt = services.runs._run_round(run)
    plan = solve_sharded(nxt.problem, method="greedy", n_shards=2, seed=5).assignment
    take = nxt.take_layers(plan, rounds_left=3)
    assert 0 < take.sum() < plan.sum()
    np.testing.assert_array_equal(_dense(run), take)
    assert run.expected_accuracy == pytest.approx(evaluate(nxt.problem, take)[0], abs=1e-12)
    assert f"planned {int(plan.sum()):,} pairs for 3 rounds" in run.progress_message


def test_the_pairs_of_a_sharded_round_are_pending_for_the_next_one(
    after_a_round, broker, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    first = sharded_round(after_a_round, capture, broker, seed=5, budget=8)
    second = sharded_round(after_a_round, capture, broker, seed=6)
    assert first.n_assigned == 8
    assert not (_dense(first) & _dense(second)).any()
    assert second.round_start["pending"] == 8


def test_a_sharded_round_on_dawid_skene_quality_is_chosen_and_stored_like_a_round(
    ds_project, broker, django_capture_on_commit_callbacks
):
    run = sharded_round(
        ds_project,
        django_capture_on_commit_callbacks,
        broker,
        seed=0,
        budget=60,
        max_workers_per_task=5,
    )
    assert run.shard_state["dawid_skene"] is True
    nxt = services.runs._run_round(run, under_confusion=True)
    assert nxt.problem.confusion is not None
    x = _dense(run)
    engine = solve_sharded(nxt.problem, method="greedy", n_shards=2, seed=0)
    np.testing.assert_array_equal(x, engine.assignment)
    assert not (x & _answered(run)).any()
    assert run.expected_accuracy == pytest.approx(evaluate(nxt.problem, x)[0], abs=1e-12)
    # The symmetric Bayes vote's scores start from the symmetric posterior after the answers
    # in hand, as a one-worker round's do, not from Dawid-Skene's posterior.
    pairs = (run.pairs[:, 0].astype(np.int64), run.pairs[:, 1].astype(np.int64))
    symmetric = services.runs._run_round(run, under_confusion=False).prior_distribution
    stored = accuracy_under_confusion(
        nxt.problem, pairs, run.quality_matrix.confusion, vote_prior=symmetric
    )
    for vote in ("bayes_vote", "dawid_skene_vote"):
        assert run.dawid_skene_accuracy[vote]["expected_accuracy"] == pytest.approx(
            stored[vote]["expected_accuracy"], abs=1e-12
        )
    unconditioned = accuracy_under_confusion(nxt.problem, pairs, run.quality_matrix.confusion)
    assert unconditioned["bayes_vote"]["expected_accuracy"] != pytest.approx(
        stored["bayes_vote"]["expected_accuracy"], abs=1e-6
    )
