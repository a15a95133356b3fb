"""Handing out a comparison's run from its page: the button shows only where it applies, the
POST says what happened, and the comparison and project pages show which run is out."""

from __future__ import annotations

import pytest
from django.urls import reverse
from page_helpers import execute, fill_from_samples

from assignment import services
from assignment.importers import KINDS
from assignment.models import AssignmentRun

pytestmark = pytest.mark.django_db


def computed_comparison(project):
    """A comparison in rounds of greedy and random at a budget of 3, both computed; its runs."""
    comparison = services.comparison_create(
        project=project,
        methods=["greedy", "random"],
        budgets=[3],
        seed=0,
        next_round=True,
        enqueue=False,
    )
    runs = list(comparison.runs.order_by("pk"))
    for run in runs:
        execute(run.pk)
    return comparison, runs


def page(client, name, pk) -> str:
    return client.get(reverse(f"frontend:{name}", args=[pk])).content.decode()


def test_a_comparisons_run_is_handed_out_from_its_page_and_the_pages_say_so(client, sample_project):
    comparison, (greedy, random) = computed_comparison(sample_project)
    assert 'id="comparison-hand-out-hint"' in page(client, "comparison", comparison.pk)
    before = page(client, "run", greedy.pk)
    assert 'id="hand-out-run"' in before
    assert f'action="{reverse("frontend:run_hand_out", args=[greedy.pk])}"' in before
    assert 'id="withdraw-round"' not in before  # an alternative: nothing to withdraw
    response = client.post(reverse("frontend:run_hand_out", args=[greedy.pk]), follow=True)
    after = response.content.decode()
    assert f"Run #{greedy.pk} handed out: the project counts it as a round from now on" in after
    assert 'id="run-handed-out"' in after
    assert 'id="hand-out-run"' not in after
    assert 'id="withdraw-round"' in after  # it counts now, so it can be withdrawn
    assert AssignmentRun.objects.get(pk=greedy.pk).handed_out_at is not None
    sibling = page(client, "run", random.pk)
    assert 'id="hand-out-run"' not in sibling
    assert 'id="hand-out-other"' in sibling
    assert f'href="{reverse("frontend:run", args=[greedy.pk])}"' in sibling
    listing = page(client, "comparison", comparison.pk)
    assert f'id="handed-out-{greedy.pk}"' in listing
    assert 'id="comparison-handed-out"' in listing
    assert 'id="comparison-hand-out-hint"' not in listing
    overview = page(client, "project", sample_project.pk)
    assert f"run #{greedy.pk}</a>, a comparison's run handed out)" in overview
    assert 'id="round-awaiting-answers"' in overview  # its 3 pairs are pending
    again = client.post(reverse("frontend:run_hand_out", args=[greedy.pk]), follow=True)
    assert "was handed out already" in again.content.decode()
    opened = client.get(reverse("frontend:run_hand_out", args=[greedy.pk]))  # a GET acts not
    assert opened["Location"] == reverse("frontend:run", args=[greedy.pk])


def test_a_refused_hand_out_says_why_on_the_run_page(client, sample_project):
    _, (greedy, _) = computed_comparison(sample_project)
    since = services.run_create(
        project=sample_project, method="random", next_round=True, budget=2, seed=0, enqueue=False
    )
    execute(since.pk)
    response = client.post(reverse("frontend:run_hand_out", args=[greedy.pk]), follow=True)
    text = response.content.decode()
    assert f"run #{greedy.pk} cannot be handed out now" in text
    assert f"the project now counts those of round #{since.pk}" in text
    assert 'id="hand-out-run"' not in text  # not offered while it would be refused ...
    assert 'id="hand-out-refused"' in text  # ... which the page says, with the reason
    assert AssignmentRun.objects.get(pk=greedy.pk).handed_out_at is None


def test_a_run_that_cannot_be_handed_out_offers_no_button_but_says_why(client, alice):
    project = services.project_create(owner=alice, name="no answers yet")
    fill_from_samples(project, [kind for kind in KINDS if kind != "answers"])
    comparison = services.comparison_create(
        project=project, methods=["greedy"], budgets=[3], seed=0, enqueue=False
    )
    (whole,) = comparison.runs.all()
    execute(whole.pk)
    assert 'id="hand-out-run"' in page(client, "run", whole.pk)  # nothing since: it fits
    since = services.run_create(
        project=project, method="random", next_round=True, budget=2, seed=0, enqueue=False
    )
    execute(since.pk)
    text = page(client, "run", whole.pk)
    assert 'id="hand-out-run"' not in text
    refused = text.split('id="hand-out-refused">')[1].split("</p>")[0]
    assert f"run #{whole.pk} cannot be handed out now: its comparison was on the whole" in refused


def test_a_handed_out_run_is_withdrawn_from_its_page_and_another_may_go_out(client, sample_project):
    _, (greedy, random) = computed_comparison(sample_project)
    services.run_hand_out(run=greedy)
    response = client.post(reverse("frontend:run_withdraw", args=[greedy.pk]), follow=True)
    text = response.content.decode()
    assert f"Run #{greedy.pk} withdrawn: later rounds no longer count" in text
    # Past for what happened, present for what it means now.
    assert "</time>: the project counted it as a round until it was withdrawn.</p>" in text
    assert "This run was withdrawn on" in text
    assert (
        "</time>, its pairs not handed out after all: later rounds do not count them as "
        "pending and may assign them; answers already in for them still count.</p>"
    ) in text
    assert 'id="withdraw-round"' not in text
    assert 'id="hand-out-run"' not in text  # withdrawing is final
    assert 'id="hand-out-run"' in page(client, "run", random.pk)


def test_runs_that_are_not_a_comparisons_offer_no_hand_out(client, sample_project):
    whole = services.run_create(project=sample_project, method="random", seed=0, enqueue=False)
    own = services.run_create(
        project=sample_project, method="random", next_round=True, budget=2, seed=0, enqueue=False
    )
    assert 'id="hand-out-run"' not in page(client, "run", own.pk)  # queued
    for run in (whole, own):
        execute(run.pk)
        assert 'id="hand-out-run"' not in page(client, "run", run.pk)


def test_a_queued_comparison_run_offers_no_hand_out(client, sample_project):
    comparison = services.comparison_create(
        project=sample_project, methods=["greedy"], budgets=[3], enqueue=False
    )
    run = comparison.runs.get()
    assert 'id="hand-out-run"' not in page(client, "run", run.pk)
    assert 'id="comparison-hand-out-hint"' not in page(client, "comparison", comparison.pk)


def test_another_users_run_cannot_be_handed_out(other_client, sample_project):
    _, (greedy, _) = computed_comparison(sample_project)
    response = other_client.post(reverse("frontend:run_hand_out", args=[greedy.pk]))
    assert response.status_code == 404
    assert AssignmentRun.objects.get(pk=greedy.pk).handed_out_at is None
