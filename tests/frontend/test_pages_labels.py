"""The labels page: the Bayes vote of the collected answers, sorted by confidence."""

from __future__ import annotations

import io

import pytest
from django.db.models import Count
from django.urls import reverse
from page_helpers import fill_from_samples

from assignment import selectors, services
from assignment.models import Answer

pytestmark = pytest.mark.django_db


def rows(page: str) -> list[tuple[str, float]]:
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    out = []
    for row in body.split("<tr>")[1:]:
        cells = [c.split("</td>")[0].split(">")[-1] for c in row.split("<td")[1:]]
        out.append((cells[0], float(cells[2])))
    return out


def test_labels_come_least_confident_first_and_can_be_turned_around(client, sample_project):
    url = reverse("frontend:labels", args=[sample_project.pk])
    page = client.get(url).content.decode()
    least = rows(page)
    assert sorted(task for task, _ in least) == ["t1", "t2", "t4", "t5", "t6"]
    assert [p for _, p in least] == sorted(p for _, p in least)
    assert all(0.5 <= p <= 1 for _, p in least)
    most = rows(client.get(url, {"order": "-confidence"}).content.decode())
    assert [p for _, p in most] == sorted((p for _, p in least), reverse=True)
    assert rows(client.get(url, {"order": "nonsense"}).content.decode()) == least


def test_tasks_as_confident_as_each_other_but_for_rounding_come_in_task_id_order(client, alice):
    project = services.project_create(owner=alice, name="ties")
    files = {
        "workers": "worker_id\nw1\nw2\n",
        "tasks": "task_id,category,prior\nt1,c,0.25\nt2,c,\n",
        "quality": "worker_id,category,quality\nw1,c,0.9\nw2,c,0.75\n",
        "answers": "worker_id,task_id,answer\nw1,t1,1\nw2,t2,1\n",
    }
    for kind, text in files.items():
        services.project_data_import(
            project=project, kind=kind, file=io.BytesIO(text.encode()), file_name=f"{kind}.csv"
        )
    # P(1) is 3/4 on both: t1's prior odds 1:3 times w1's 9:1, t2's 1:1 times w2's 3:1. In
    # floating point the two differ in the last bit, t2's the lower.
    posterior = {row.task_id: row.posterior for row in selectors.project_labels(project=project)}
    assert posterior["t2"] < posterior["t1"] == pytest.approx(0.75, abs=1e-15)
    url = reverse("frontend:labels", args=[project.pk])
    for order in ("confidence", "-confidence"):
        page = client.get(url, {"order": order}).content.decode()
        assert [task for task, _ in rows(page)] == ["t1", "t2"], order


def test_labels_are_paginated(client, sample_project, monkeypatch):
    from frontend.views import labels

    monkeypatch.setattr(labels, "LABELS_PER_PAGE", 2)
    url = reverse("frontend:labels", args=[sample_project.pk])
    first = rows(client.get(url).content.decode())
    third = client.get(url, {"page": 3}).content.decode()
    assert len(first) == 2
    assert len(rows(third)) == 1
    assert "Page 3 of 3" in third


@pytest.mark.parametrize(("asked", "shown"), [("0", 1), ("-1", 1), ("x", 1), ("2", 2), ("99", 3)])
def test_a_page_below_the_first_is_the_first_and_one_past_the_last_the_last(
    client, sample_project, monkeypatch, asked, shown
):
    from frontend.views import labels

    monkeypatch.setattr(labels, "LABELS_PER_PAGE", 2)
    url = reverse("frontend:labels", args=[sample_project.pk])
    assert f"Page {shown} of 3" in client.get(url, {"page": asked}).content.decode()


def test_a_project_that_cannot_have_labels_says_why(client, alice):
    fresh = services.project_create(owner=alice, name="fresh")
    fill_from_samples(fresh, kinds=("workers", "tasks"))
    page = client.get(reverse("frontend:labels", args=[fresh.pk])).content.decode()
    assert "has no quality matrix yet" in page


def test_the_labels_page_switches_to_dawid_skene_and_its_downloads_follow(client, sample_project):
    url = reverse("frontend:labels", args=[sample_project.pk])
    page = client.get(url + "?aggregation=dawid-skene&order=-confidence").content.decode()
    assert "Dawid and Skene" in page
    assert 'href="?aggregation=dawid-skene&amp;order=-confidence" aria-current="true"' in page
    assert '<a href="?aggregation=dawid-skene&amp;order=confidence"' in page
    download = reverse(
        "frontend:data_download", args=[sample_project.pk, "labels_dawid_skene", "csv"]
    )
    assert f'href="{download}"' in page
    assert "Bayes vote of its collected answers" in client.get(url).content.decode()


def test_on_dawid_skene_quality_the_page_says_the_labels_follow_its_matrices(
    client, sample_project
):
    url = reverse("frontend:labels", args=[sample_project.pk]) + "?aggregation=dawid-skene"
    assert "over the collected answers alone" in client.get(url).content.decode()
    services.quality_estimate(project=sample_project, source="both", model="dawid-skene")
    page = client.get(url).content.decode()
    assert "under the latest quality matrix's confusion matrices" in page
    assert "over the collected answers alone" not in page
    shown = dict(rows(page))
    labels = selectors.project_labels(project=sample_project, aggregation="dawid-skene")
    assert {row.task_id: round(row.posterior, 4) for row in labels if row.task_id in shown} == {
        task: pytest.approx(value, abs=6e-5) for task, value in shown.items()
    }


def test_dawid_skene_labels_of_tasks_with_few_answers_come_with_a_warning(client, sample_project):
    url = reverse("frontend:labels", args=[sample_project.pk])
    page = client.get(url + "?aggregation=dawid-skene").content.decode()
    counts = sorted(
        Answer.objects.filter(task__project=sample_project)
        .values("task")
        .annotate(n=Count("pk"))
        .values_list("n", flat=True)
    )
    few = sum(n < 3 for n in counts)
    assert 0 < few < len(counts)  # the samples have both
    assert f"{few} of these {len(counts)} tasks have fewer than 3 answers" in page
    assert 'id="sparse-answers"' not in client.get(url).content.decode()  # the Bayes vote
