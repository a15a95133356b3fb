"""The next round's preview on the project page: a fragment fetched after load, its states."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from assignment import services
from assignment.models import Answer, Task
from assignment.services import previews

pytestmark = pytest.mark.django_db


def fragment(client, project):
    response = client.get(reverse("frontend:round_preview", args=[project.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_links_to_the_preview_and_fetches_it_after_load(client, sample_project):
    url = reverse("frontend:round_preview", args=[sample_project.pk])
    page = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    assert f'data-live-url="{url}"' in page
    assert 'href="?preview=1#round-preview"' in page
    assert "Estimate the next round's gain" in page
    assert "expected to gain about" not in page  # not computed on the page's own render


def test_the_preview_says_greedys_gain_of_the_next_round(client, sample_project):
    expected = services.round_preview(project=sample_project)
    cache.clear()
    html = fragment(client, sample_project)
    assert expected.status == "ok", expected.message
    assert 'id="round-preview"' in html
    assert "data-live-final" in html
    assert f"about +{expected.gain_points:.1f} points</strong> of accuracy with greedy" in html
    assert "tvcs-iht starts from greedy's plan and is at least as good" in html


def test_without_javascript_the_page_computes_the_preview_when_asked(client, sample_project):
    page = client.get(reverse("frontend:project", args=[sample_project.pk]) + "?preview=1")
    html = page.content.decode()
    assert 'id="round-preview-gain"' in html
    assert "data-live-url" not in html.split('id="round-preview"')[1].split(">")[0]


def test_a_second_request_is_served_from_the_cache(client, sample_project, monkeypatch):
    calls = []
    real = previews.solve

    def counted(problem, **options):
        calls.append(1)
        return real(problem, **options)

    monkeypatch.setattr(previews, "solve", counted)
    first = fragment(client, sample_project)
    second = fragment(client, sample_project)
    assert calls == [1]
    assert first == second


def test_a_stale_matrix_says_to_estimate_it_again_escaped(client, sample_project):
    Task.objects.create(project=sample_project, external_id="new <task>", category="birds")
    html = fragment(client, sample_project)
    assert 'id="round-preview-problem"' in html
    assert "new &lt;task&gt;" in html
    assert "new <task>" not in html
    assert reverse("frontend:quality", args=[sample_project.pk]) + "#estimate" in html
    assert "Estimate the quality matrix</a> again" in html


def test_no_matrix_says_to_estimate_one(client, alice):
    bare = services.project_create(owner=alice, name="bare <b>")
    html = fragment(client, bare)
    assert 'data-live-status="no-matrix"' in html
    assert "no quality matrix" in html
    assert "bare &lt;b&gt;" in html


def test_nothing_left_to_spend_is_said(client, sample_project):
    services.project_update(
        project=sample_project,
        default_budget=Answer.objects.filter(task__project=sample_project).count(),
    )
    html = fragment(client, sample_project)
    assert 'id="round-preview-done"' in html
    assert "nothing left to spend" in html
    assert "Start the next round" not in html  # not offered as if it would help
    assert "A round started now with the defaults would assign nobody" in html
    url = reverse("frontend:project", args=[sample_project.pk])
    page = client.get(url, {"preview": "1"}).content.decode()
    assert "Start the next round" not in page  # nor beside it, without JavaScript


def test_a_preview_with_a_gain_offers_the_next_round(client, sample_project):
    assert "Start the next round</a>" in fragment(client, sample_project)


def test_a_stale_matrix_keeps_the_answers_in_the_rounds_section_and_says_what_it_needs(
    client, sample_project
):
    Task.objects.create(project=sample_project, external_id="new", category="birds")
    page = client.get(reverse("frontend:project", args=[sample_project.pk])).content.decode()
    rounds = page.split('<section id="rounds">')[1].split("</section>")[0]
    answers = Answer.objects.filter(task__project=sample_project).count()
    assert f"{answers} answers collected." in rounds
    assert 'id="rounds-need-quality"' in rounds
    assert "a fresh estimate of the quality matrix" in rounds
    assert reverse("frontend:quality", args=[sample_project.pk]) + "#estimate" in rounds
    assert "Start the next round" not in rounds


def test_an_error_is_a_readable_escaped_message_not_a_500(client, sample_project, monkeypatch):
    def broken(problem, **options):
        raise RuntimeError("out of <memory>")

    monkeypatch.setattr(previews, "solve", broken)
    html = fragment(client, sample_project)
    assert 'role="alert"' in html
    assert "out of &lt;memory&gt;" in html


def test_another_users_project_is_not_found(other_client, sample_project):
    url = reverse("frontend:round_preview", args=[sample_project.pk])
    assert other_client.get(url).status_code == 404


def test_a_budget_of_one_pair_is_one_pair(client, sample_project):
    answers = Answer.objects.filter(task__project=sample_project).count()
    services.project_update(project=sample_project, default_budget=answers + 1)
    html = fragment(client, sample_project)
    assert "(a budget of 1 pair," in html
