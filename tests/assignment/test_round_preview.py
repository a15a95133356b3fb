"""The next round's preview: greedy's expected gain, computed as a real round is, cached."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from project_data import answer_every_pair, executed, project_nearly_settled, queued_round

from assignment import services
from assignment.models import Answer, Task
from assignment.services import previews as preview_module

pytestmark = pytest.mark.django_db


def test_the_preview_gain_is_what_a_greedy_next_round_achieves(after_a_round):
    preview = services.round_preview(project=after_a_round)
    assert preview.status == "ok", preview.message
    run = executed(queued_round(after_a_round))
    achieved = run.expected_accuracy - run.round_start["accuracy_now"]
    assert preview.accuracy_now == pytest.approx(run.round_start["accuracy_now"], abs=1e-12)
    assert preview.expected_accuracy == pytest.approx(run.expected_accuracy, abs=1e-12)
    assert preview.gain == pytest.approx(achieved, abs=1e-12)
    assert preview.gain > 0
    assert preview.gain_points == pytest.approx(100 * achieved)
    assert preview.budget == run.budget == 40 - Answer.objects.count()
    assert preview.n_assigned == run.n_assigned
    assert preview.answers == run.round_start["answers"]


def test_a_preview_with_rounds_to_go_is_the_layers_a_round_with_them_takes(after_a_round):
    last = services.round_preview(project=after_a_round)
    preview = services.round_preview(project=after_a_round, rounds_left=3)
    assert preview.status == "ok", preview.message
    assert preview.rounds_left == 3
    run = executed(queued_round(after_a_round, rounds_left=3, seed=0))
    assert preview.expected_accuracy == pytest.approx(run.expected_accuracy, abs=1e-12)
    assert preview.n_assigned == run.n_assigned < last.n_assigned
    assert preview.gain < last.gain  # one layer of three rounds' plan gains less than all


def test_a_round_budget_and_a_target_posterior_are_the_rounds(after_a_round):
    preview = services.round_preview(project=after_a_round, budget=5, target_posterior=0.9)
    run = executed(queued_round(after_a_round, budget=5, target_posterior=0.9))
    assert preview.n_assigned == run.n_assigned <= 5
    assert preview.open_tasks == run.round_start["open_tasks"]
    assert preview.gain == pytest.approx(
        run.expected_accuracy - run.round_start["accuracy_now"], abs=1e-12
    )


def test_a_second_preview_comes_from_the_cache_until_an_answer_comes_in(after_a_round, monkeypatch):
    calls = []
    real = preview_module.solve

    def counted(problem, **options):
        calls.append(problem.shape)
        return real(problem, **options)

    monkeypatch.setattr(preview_module, "solve", counted)
    first = services.round_preview(project=after_a_round)
    again = services.round_preview(project=after_a_round)
    assert len(calls) == 1
    assert again == first
    worker = Answer.objects.values_list("worker_id", flat=True).first()
    free = Task.objects.filter(project=after_a_round).exclude(answers__worker_id=worker).first()
    Answer.objects.create(worker_id=worker, task=free, label=after_a_round.labels[1])
    services.round_preview(project=after_a_round)
    assert len(calls) == 2


def key_of(project, **options):
    matrix = project.quality_matrices.latest("pk")
    options = {"target_posterior": None, "budget": None, **options}
    return preview_module._preview_cache_key(project=project, matrix_id=matrix.pk, **options)


def test_the_preview_is_cached_under_what_it_depends_on(after_a_round):
    before = key_of(after_a_round)
    assert cache.get(before) is None
    services.round_preview(project=after_a_round)
    assert cache.get(before)["status"] == "ok"
    assert key_of(after_a_round, target_posterior=0.9) != before
    assert key_of(after_a_round, budget=3) != before
    assert key_of(after_a_round, rounds_left=2) != before
    services.project_update(project=after_a_round, default_budget=30)
    after_a_round.refresh_from_db()
    after = key_of(after_a_round)
    assert after != before
    assert services.round_preview(project=after_a_round).budget == 30 - Answer.objects.count()
    assert cache.get(after)["budget"] == 30 - Answer.objects.count()
    Task.objects.filter(project=after_a_round).update(max_workers=1)  # a caps upload
    assert key_of(after_a_round) != after


def test_nothing_left_to_spend_is_said(after_a_round):
    services.project_update(project=after_a_round, default_budget=Answer.objects.count())
    preview = services.round_preview(project=after_a_round)
    assert preview.status == "done"
    assert preview.gain is None
    assert "nothing left to spend" in preview.message


def test_every_task_at_the_target_is_said(after_a_round):
    preview = services.round_preview(project=after_a_round, target_posterior=0.5000001)
    assert preview.status == "done"
    assert "every task is at its target_posterior" in preview.message


def test_a_round_that_would_assign_nobody_is_said_with_why():
    preview = services.round_preview(project=project_nearly_settled(), target_posterior=1.0)
    assert preview.status == "done"
    assert preview.gain is None
    assert preview.open_tasks == 10
    assert "greedy's plan assigns nobody (no positive gain)" in preview.message
    assert "one more answer would change no open task's vote" in preview.message


def test_no_matrix_and_a_stale_matrix_say_what_to_do(after_a_round):
    Task.objects.create(project=after_a_round, external_id="late", category="c0")
    stale = services.round_preview(project=after_a_round)
    assert stale.status == "stale"
    assert "late" in stale.message
    bare = services.project_create(owner=after_a_round.owner, name="bare")
    none = services.round_preview(project=bare)
    assert none.status == "no-matrix"
    assert "no quality matrix" in none.message


def test_a_round_too_large_is_skipped_with_its_size(after_a_round, monkeypatch):
    monkeypatch.setattr(preview_module, "PREVIEW_MAX_PAIRS", 10)
    preview = services.round_preview(project=after_a_round)
    assert preview.status == "skipped"
    assert "(worker, open task) pairs, more than the 10" in preview.message


def test_an_unexpected_failure_is_a_message_and_is_not_cached(after_a_round, monkeypatch):
    def broken(problem, **options):
        raise RuntimeError("out of <memory>")

    monkeypatch.setattr(preview_module, "solve", broken)
    preview = services.round_preview(project=after_a_round)
    assert preview.status == "error"
    assert "out of <memory>" in preview.message
    monkeypatch.undo()
    assert services.round_preview(project=after_a_round).status == "ok"


def test_on_dawid_skene_quality_the_preview_is_the_dawid_skene_greedy_round(after_a_round):
    # A second round answered, so that tasks have two answers for EM to learn from.
    answer_every_pair(executed(queued_round(after_a_round, budget=12)), seed=4)
    services.quality_estimate(project=after_a_round, source="answers", model="dawid-skene")
    preview = services.round_preview(project=after_a_round)
    assert preview.status == "ok", preview.message
    assert preview.dawid_skene
    run = executed(queued_round(after_a_round))
    assert run.round_start["dawid_skene"]
    assert preview.gain == pytest.approx(
        run.expected_accuracy - run.round_start["accuracy_now"], abs=1e-12
    )


def test_a_quality_matrix_too_large_is_not_even_read(after_a_round, monkeypatch):
    monkeypatch.setattr(preview_module, "PREVIEW_MAX_MATRIX", 100)
    monkeypatch.setattr(preview_module, "_next_round_plan", None)  # never reached
    preview = services.round_preview(project=after_a_round)
    assert preview.status == "skipped"
    assert "the quality matrix has 8 x 20 pairs, more than the 100" in preview.message


def test_a_cache_that_is_down_costs_the_cache_not_the_preview(after_a_round, monkeypatch):
    class Down:
        def get(self, key):
            raise ConnectionError("redis is down")

        def set(self, key, value, timeout):
            raise ConnectionError("redis is down")

    monkeypatch.setattr(preview_module, "cache", Down())
    assert services.round_preview(project=after_a_round).status == "ok"


def test_the_preview_counts_pending_pairs_as_the_real_next_round_does(after_a_round):
    before = services.round_preview(project=after_a_round)
    assert before.pending == 0
    pending = executed(queued_round(after_a_round, budget=6))
    preview = services.round_preview(project=after_a_round)  # not cached: a round ended
    assert preview.status == "ok", preview.message
    assert preview.pending == pending.n_assigned == 6
    run = executed(queued_round(after_a_round))
    assert preview.budget == run.budget == 40 - Answer.objects.count() - 6
    assert preview.n_assigned == run.n_assigned
    assert preview.gain == pytest.approx(
        run.expected_accuracy - run.round_start["accuracy_now"], abs=1e-12
    )
    mine = {tuple(pair) for pair in run.pairs.tolist()}
    assert mine.isdisjoint(tuple(pair) for pair in pending.pairs.tolist())


def test_withdrawing_a_round_recomputes_the_preview_without_its_pending_pairs(after_a_round):
    before = services.round_preview(project=after_a_round)
    pending = executed(queued_round(after_a_round, budget=6))
    assert services.round_preview(project=after_a_round).pending == 6
    services.run_withdraw(run=pending)
    after = services.round_preview(project=after_a_round)  # not cached: the rounds changed
    assert after.pending == 0
    assert after.budget == before.budget
    assert after.gain == pytest.approx(before.gain, abs=1e-12)


def test_handing_out_a_comparisons_run_recomputes_the_preview_with_its_pending_pairs(
    after_a_round,
):
    before = services.round_preview(project=after_a_round)
    assert before.pending == 0
    comparison = services.comparison_create(
        project=after_a_round, methods=["greedy"], budgets=[6], next_round=True, enqueue=False
    )
    run = executed(comparison.runs.get())
    assert services.round_preview(project=after_a_round).pending == 0  # an alternative
    services.run_hand_out(run=run)
    after = services.round_preview(project=after_a_round)  # not cached: the rounds changed
    assert after.pending == 6
    assert after.budget == before.budget - 6


def test_while_a_round_is_queued_the_preview_says_why_there_is_none(after_a_round):
    queued = queued_round(after_a_round, budget=3)
    preview = services.round_preview(project=after_a_round)
    assert preview.gain is None
    assert f"run #{queued.pk}, a round of this project, is queued" in preview.message


def own_priors(project, priors, field="prior"):
    """Give the project's tasks, by primary key, the priors ``priors`` (cycled): an upload."""
    tasks = list(Task.objects.filter(project=project).order_by("pk"))
    for k, task in enumerate(tasks):
        setattr(task, field, priors[k % len(priors)])
    Task.objects.bulk_update(tasks, [field])


def test_a_reupload_that_changes_only_the_priors_recomputes_the_preview(after_a_round):
    own_priors(after_a_round, [0.2, 0.6])
    first = services.round_preview(project=after_a_round)
    own_priors(after_a_round, [0.6, 0.2])  # the same priors on other tasks: the same sum
    again = services.round_preview(project=after_a_round)
    assert again.accuracy_now != pytest.approx(first.accuracy_now, abs=1e-9)
    run = executed(queued_round(after_a_round))
    assert again.gain == pytest.approx(
        run.expected_accuracy - run.round_start["accuracy_now"], abs=1e-12
    )


def test_per_label_priors_that_keep_their_count_change_the_key(after_a_round):
    from assignment.models import Project

    Answer.objects.all().delete()
    Project.objects.filter(pk=after_a_round.pk).update(labels=["a", "b", "c"])
    after_a_round.refresh_from_db()
    own_priors(after_a_round, [[0.2, 0.3, 0.5]], field="label_prior")
    before = key_of(after_a_round)
    own_priors(after_a_round, [[0.5, 0.3, 0.2]], field="label_prior")
    assert key_of(after_a_round) != before


def test_caps_that_keep_their_sums_change_the_key(after_a_round):
    from assignment.models import Worker

    Task.objects.filter(project=after_a_round).update(max_workers=2)
    Worker.objects.filter(project=after_a_round).update(max_tasks=5)
    before = key_of(after_a_round)
    first_task, first_worker = (
        Task.objects.filter(project=after_a_round).order_by("pk").first(),
        Worker.objects.filter(project=after_a_round).order_by("pk").first(),
    )
    last_task = Task.objects.filter(project=after_a_round).order_by("pk").last()
    Task.objects.filter(pk=first_task.pk).update(max_workers=3)
    Task.objects.filter(pk=last_task.pk).update(max_workers=1)  # the same sum
    after_tasks = key_of(after_a_round)
    assert after_tasks != before
    last_worker = Worker.objects.filter(project=after_a_round).order_by("pk").last()
    Worker.objects.filter(pk=first_worker.pk).update(max_tasks=6)
    Worker.objects.filter(pk=last_worker.pk).update(max_tasks=4)  # the same sum
    assert key_of(after_a_round) != after_tasks


def test_a_label_changed_in_place_by_a_reupload_changes_the_key(after_a_round):
    before = key_of(after_a_round)
    answer = Answer.objects.order_by("pk").first()
    flipped = next(label for label in after_a_round.labels if label != answer.label)
    Answer.objects.filter(pk=answer.pk).update(label=flipped)  # the importer's upsert
    assert key_of(after_a_round) != before
