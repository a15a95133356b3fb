"""The quality page: estimating from gold answers, the summary and its pictures."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from page_helpers import fill_from_samples

from assignment import services
from assignment.models import QualityMatrix
from assignment.selectors import quality_by_worker_and_category

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


def svgs(page: str) -> dict[str, ET.Element]:
    """The page's charts by id, parsed as XML (so they are well-formed)."""
    charts = {}
    start = page.find("<svg")
    while start != -1:
        end = page.index("</svg>", start) + len("</svg>")
        element = ET.fromstring(page[start:end])
        charts[element.get("id") or element.get("aria-labelledby")] = element
        start = page.find("<svg", end)
    return charts


def test_estimating_from_gold_answers_stores_a_matrix_and_draws_it(client, alice):
    project = services.project_create(owner=alice, name="gold")
    fill_from_samples(project, kinds=("workers", "tasks", "gold_items", "gold_answers"))
    url = reverse("frontend:quality", args=[project.pk])
    assert "has no quality matrix yet" in client.get(url).content.decode()
    response = client.post(url, {"worker_strength": "auto", "category_strength": "5"})
    assert response.status_code == 302
    matrix = QualityMatrix.objects.get(project=project)
    assert matrix.details["category_strength"] == 5.0
    page = client.get(url).content.decode()
    assert "Quality estimated from 16 gold answers: 4 workers \u00d7 6 tasks." in page
    assert "4 \u00d7 6" in page
    charts = svgs(page)
    histogram = next(c for key, c in charts.items() if "worker-quality" in key)
    heat = next(c for key, c in charts.items() if "worker-category" in key)
    bars = histogram.findall(f".//{SVG}rect[@class='chart-bar']")
    counts = [int(b.find(f"{SVG}title").text.rsplit(": ", 1)[1].split()[0]) for b in bars]
    assert sum(counts) == 4  # every worker once
    cells = heat.findall(f".//{SVG}rect[@class='chart-cell']")
    assert len(cells) == 4 * 2  # workers x categories
    assert {c.find(f"{SVG}title").text.split(" \u00d7 ")[1].split(":")[0] for c in cells} == {
        "birds",
        "cars",
    }


def test_the_page_of_an_estimated_matrix_reads_neither_its_table_nor_its_categories(client, alice):
    project = services.project_create(owner=alice, name="gold")
    fill_from_samples(project, kinds=("workers", "tasks", "gold_items", "gold_answers"))
    assert services.quality_estimate(project=project).by_category
    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("frontend:quality", args=[project.pk])).content.decode()
    assert "4 \u00d7 6" in page
    assert set(svgs(page)) == {"worker-quality", "worker-quality-narrow", "worker-category"}
    sql = " ".join(query["sql"] for query in queries.captured_queries)
    # Task ids are read (8 bytes a task) to tell whether the matrix covers every task.
    for read in ("qualitychunk", "category_table_blob", "task_category_blob"):
        assert read not in sql


def test_the_heat_map_groups_workers_of_a_large_crowd_into_ranks(client, sample_project):
    matrix = QualityMatrix.objects.filter(project=sample_project).latest("created_at")
    data = quality_by_worker_and_category(matrix=matrix, max_rows=2)
    assert data.rows == ["ranks 1\u20132", "ranks 3\u20134"]
    assert data.workers_per_row == 2
    means = sorted(data.worker_means, reverse=True)
    assert data.values.mean(axis=1) == pytest.approx(
        [(means[0] + means[1]) / 2, (means[2] + means[3]) / 2]
    )


@pytest.mark.parametrize("strength", ["0", "-1", "nan", "many", ""])
def test_a_bad_strength_is_a_form_error(client, sample_project, strength):
    before = QualityMatrix.objects.count()
    url = reverse("frontend:quality", args=[sample_project.pk])
    response = client.post(url, {"worker_strength": strength, "category_strength": "5"})
    assert response.status_code == 400
    assert QualityMatrix.objects.count() == before


def test_estimating_without_gold_answers_says_what_to_upload(client, alice):
    project = services.project_create(owner=alice, name="no gold")
    fill_from_samples(project, kinds=("workers", "tasks"))
    url = reverse("frontend:quality", args=[project.pk])
    response = client.post(url, {"worker_strength": "10", "category_strength": "5"})
    assert response.status_code == 400
    assert "has no gold answers" in response.content.decode()


def test_a_strength_auto_could_not_fit_well_is_a_warning_that_says_what_to_do(client, alice):
    project = services.project_create(owner=alice, name="gold")
    fill_from_samples(project, kinds=("workers", "tasks", "gold_items", "gold_answers"))
    url = reverse("frontend:quality", args=[project.pk])
    client.post(url, {"worker_strength": "auto", "category_strength": "auto"})
    matrix = QualityMatrix.objects.get(project=project)
    fits = matrix.details["strength_fits"]
    assert set(fits) == {"worker", "category"}
    page = client.get(url).content.decode()
    for name, how in fits.items():
        shown = f'id="strength-fit-{name}"' in page
        assert shown == (how != "fitted"), (name, how)
    assert any(how != "fitted" for how in fits.values())  # 16 gold answers: too few to fit
    # given strengths are not fitted: no warning
    client.post(url, {"worker_strength": "10", "category_strength": "5"})
    assert QualityMatrix.objects.latest("pk").details["strength_fits"] == {}
    assert "strength-fit-" not in client.get(url).content.decode()
