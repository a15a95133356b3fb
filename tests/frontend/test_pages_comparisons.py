"""Comparisons from the pages: budgets as a list or a range, the live table and the plot."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.urls import reverse
from page_helpers import execute

from assignment import services
from assignment.models import AssignmentRun, Comparison

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


def post(client, project, **data):
    base = {"methods": ["greedy", "random"], "budget_mode": "range"}
    return client.post(reverse("frontend:comparison_create", args=[project.pk]), {**base, **data})


def test_a_range_of_budgets_queues_one_run_per_method_and_budget(client, sample_project):
    response = post(
        client, sample_project, budget_from="2", budget_to="10", budget_steps="3", seed="4"
    )
    comparison = Comparison.objects.get()
    assert response["Location"] == reverse("frontend:comparison", args=[comparison.pk])
    assert comparison.budgets == [2, 6, 10]
    runs = AssignmentRun.objects.filter(comparison=comparison)
    assert sorted(runs.values_list("method", "budget", "seed")) == [
        (m, b, 4) for m in ("greedy", "random") for b in (2, 6, 10)
    ]


def test_a_comparison_in_shards_solves_every_run_in_that_many(client, sample_project):
    post(client, sample_project, budget_mode="list", budgets="4, 8", shards="2")
    runs = AssignmentRun.objects.filter(comparison=Comparison.objects.get())
    assert sorted(runs.values_list("shards", flat=True)) == [2, 2, 2, 2]


def test_a_list_of_budgets_is_taken_as_given(client, sample_project):
    post(client, sample_project, budget_mode="list", budgets="3, 9,5")
    assert Comparison.objects.get().budgets == [3, 9, 5]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"budget_mode": "list", "budgets": "3, x"}, "&#x27;x&#x27; is not an integer from 1"),
        ({"budget_mode": "list", "budgets": ""}, "Give at least one budget"),
        ({"budget_from": "9", "budget_to": "3", "budget_steps": "2"}, "B must be at least A"),
        (
            {"budget_from": "4", "budget_to": "16", "budget_steps": "1"},
            "One budget cannot run from 4 to 16: give 2 or more.",
        ),
        ({"budget_from": "1", "budget_to": "3"}, "Give Steps (N) too, or leave A, B and N"),
        ({"budget_mode": "list", "budgets": "0"}, "&#x27;0&#x27; is not an integer from 1"),
        (  # the API's bound, which SQLite alone would not enforce
            {"budget_mode": "list", "budgets": "5, 99999999999"},
            "&#x27;99999999999&#x27; is not an integer from 1 to 2,147,483,647",
        ),
        ({"budget_mode": "list", "budgets": "3", "methods": []}, "This field is required"),
        (
            {
                "budget_from": "1",
                "budget_to": "60",
                "budget_steps": "60",
                "methods": ["greedy", "random"],
            },
            "at most 60 runs",
        ),
    ],
)
def test_a_comparison_that_cannot_be_made_is_explained_and_queues_nothing(
    client, sample_project, data, message
):
    response = post(client, sample_project, **data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Comparison.objects.exists()
    assert not AssignmentRun.objects.exists()


def chart(page: str) -> ET.Element:
    start = page.index("<svg")
    return ET.fromstring(page[start : page.index("</svg>", start) + len("</svg>")])


def points_of(group: ET.Element) -> list[ET.Element]:
    """The point markers of a line's group."""
    return [e for e in group if "chart-point" in e.get("class", "").split()]


def test_two_methods_of_the_same_accuracy_at_every_budget_stay_apart_on_the_plot(
    client, sample_project, queued
):
    comparison = services.comparison_create(
        project=sample_project, methods=["greedy", "tvcs-iht"], budgets=[2, 4, 6], seed=1
    )
    for run in AssignmentRun.objects.filter(comparison=comparison):
        execute(run.pk)
    accuracy = {
        (run.method, run.budget): run.expected_accuracy
        for run in AssignmentRun.objects.filter(comparison=comparison)
    }
    for budget in (2, 4, 6):  # tvcs-iht starts from greedy and finds nothing better here
        assert accuracy["greedy", budget] == pytest.approx(accuracy["tvcs-iht", budget])
    page = client.get(reverse("frontend:comparison", args=[comparison.pk])).content.decode()
    svg = chart(page)
    first, second = svg.findall(f".//{SVG}g[@class='chart-series']")
    assert (first.get("data-series"), second.get("data-series")) == ("tvcs-iht", "greedy")
    assert first.find(f"{SVG}path").get("stroke-dasharray") is None
    assert second.find(f"{SVG}path").get("stroke-dasharray")  # dashed over tvcs-iht's line
    assert points_of(first)[0].get("d") != points_of(second)[0].get("d")  # other shapes
    legend = [text.text for text in svg.iter(f"{SVG}text")]
    assert "greedy (same as tvcs-iht)" in legend
    assert "greedy is the same as tvcs-iht" in svg.find(f"{SVG}desc").text
    assert (
        "greedy has the same accuracy as tvcs-iht at every budget: its line is drawn dashed "
        "over tvcs-iht's, with hollow markers." in page
    )
    assert page.count("<td>greedy</td>") == page.count("<td>tvcs-iht</td>") == 3  # the table


def test_the_plot_has_one_line_per_method_with_a_point_per_finished_budget_and_the_bound(
    client, sample_project, queued
):
    comparison = services.comparison_create(
        project=sample_project, methods=["greedy", "random"], budgets=[2, 6, 10], seed=1
    )
    status_url = reverse("frontend:comparison_status", args=[comparison.pk])
    page = client.get(status_url).content.decode()
    assert "data-live-final" not in page
    series = chart(page).findall(f".//{SVG}g[@class='chart-series']")
    assert [s.get("data-series") for s in series] == ["random", "greedy"]
    assert all(not points_of(s) for s in series)
    runs = AssignmentRun.objects.filter(comparison=comparison).order_by("pk")
    for run in runs:
        execute(run.pk)
    services.comparison_upper_bound_compute(comparison_id=comparison.pk)
    page = client.get(status_url).content.decode()
    assert "data-live-final" in page
    svg = chart(page)
    series = svg.findall(f".//{SVG}g[@class='chart-series']")
    assert {s.get("data-series"): len(points_of(s)) for s in series} == {
        "greedy": 3,
        "random": 3,
    }
    assert "same as" not in page  # greedy and random differ
    bound = svg.findall(f".//{SVG}g[@class='chart-reference']")
    assert len(bound) == 1
    assert len(points_of(bound[0])) == 3
    for run in runs.all():
        assert f'href="/runs/{run.pk}/">#{run.pk}</a>' in page
        assert f"{run.expected_accuracy:.4f}" in page


def test_the_comparison_list_shows_each_comparison_with_its_methods(client, sample_project, queued):
    services.comparison_create(project=sample_project, methods=["q-lp", "random"], budgets=[4])
    page = client.get(reverse("frontend:comparisons", args=[sample_project.pk])).content.decode()
    assert "q-lp, random" in page
    assert "computing" in page


def test_the_form_as_it_opens_compares_the_methods_at_the_default_budget(client, sample_project):
    url = reverse("frontend:comparison_create", args=[sample_project.pk])
    form = client.get(url).context["form"]
    data = {name: form[name].initial for name in form.fields if form[name].initial is not None}
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()
    comparison = Comparison.objects.get()
    assert comparison.budgets == []  # the project's default budget
    runs = AssignmentRun.objects.filter(comparison=comparison)
    assert sorted(runs.values_list("method", flat=True)) == sorted(form["methods"].initial)


def test_a_range_given_in_part_gets_one_error(client, sample_project):
    response = post(client, sample_project, budget_to="30")
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert list(errors) == ["budget_from"]
    assert errors["budget_from"] == [
        "Give From (A) and Steps (N) too, or leave A, B and N all empty for one run per method "
        "at the project's default budget."
    ]


def test_steps_out_of_bounds_get_that_error_alone(client, sample_project):
    response = post(client, sample_project, budget_from="1", budget_to="3", budget_steps="61")
    assert response.status_code == 400
    errors = response.context["form"].errors["budget_steps"]
    assert errors == ["Ensure this value is less than or equal to 60."]


def test_a_range_with_more_steps_than_whole_budgets_says_which_it_made(client, sample_project):
    response = post(
        client, sample_project, budget_from="10", budget_to="12", budget_steps="10", seed="2"
    )
    comparison = Comparison.objects.get()
    assert comparison.budgets == [10, 11, 12]
    page = client.get(response["Location"]).content.decode()
    assert "10 steps from 10 to 12 give 3 distinct whole budgets: 10, 11, 12." in page
    settings = page.split('id="comparison-settings">')[1].split("</p>")[0]
    assert settings == (
        "Every run is on the whole project; at most 3 workers per task and 3 tasks per "
        "worker; seed 2."
    )


def test_budgets_are_written_with_thousands_separators_and_a_random_seed_is_called_random(
    client, sample_project, queued
):
    post(client, sample_project, budget_mode="list", budgets="1200")
    comparison = Comparison.objects.get()
    run = AssignmentRun.objects.filter(comparison=comparison).first()
    page = client.get(reverse("frontend:comparison", args=[comparison.pk])).content.decode()
    assert '<td class="num">1,200</td>' in page
    assert "seed random" in page
    listed = client.get(reverse("frontend:comparisons", args=[sample_project.pk])).content.decode()
    assert "<td>1,200</td>" in listed
    run_page = client.get(reverse("frontend:run", args=[run.pk])).content.decode()
    assert "<dt>Budget</dt><dd>1,200 pairs</dd>" in run_page
    runs = client.get(reverse("frontend:runs", args=[sample_project.pk])).content.decode()
    assert '<td class="num">1,200</td>' in runs
