"""The chart templates: well-formed, accessible SVG with every user text escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.template import Context, Engine
from django.template.loader import render_to_string
from django.test import override_settings
from django.utils import translation

import charts
from charts.geometry import bar_chart, heat_map, histogram, line_chart, responsive

SVG = "{http://www.w3.org/2000/svg}"
EVIL = "<script>alert(1)</script>"
DASH = "\u2013"  # between a bin's edges
TIMES = "\u00d7"  # between a cell's row and column
#: Attributes that hold one number each.
NUMERIC = {"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height"}


@pytest.fixture(scope="module")
def engine():
    """A template engine of its own, so the tests do not need "charts" in INSTALLED_APPS."""
    return Engine(
        dirs=[Path(charts.__file__).parent / "templates"],
        libraries={"l10n": "django.templatetags.l10n"},
    )


def render(engine, name: str, chart) -> str:
    return engine.get_template(f"charts/{name}.html").render(Context({"chart": chart}))


def a_line_chart(name: str = "exact"):
    return line_chart(
        series={name: [(100, 0.7), (200, 0.8), (300, 0.85)], "single": [(150, 0.75)], "none": []},
        reference=("upper bound", [(100, 0.9), (300, 0.95)]),
        title="Accuracy by budget",
        x_label="budget",
        y_label="accuracy",
    )


def a_bar_chart(label: str = f"0.80{DASH}0.85"):
    return bar_chart(
        labels=[label, "b"], values=[12, 3.5], title="Workers", x_label="x", y_label="y"
    )


def a_heat_map(row: str = "alice"):
    return heat_map(
        rows=[row, "bob"],
        columns=["task 1", "task 2", "task 3"],
        values=[[0.1, float("nan"), 0.5], [1.0, 0.7, 0.2]],
        title="Accuracy by worker",
    )


CHARTS = {"line_chart": a_line_chart, "bar_chart": a_bar_chart, "heat_map": a_heat_map}


@pytest.mark.parametrize("name", CHARTS)
def test_each_chart_is_well_formed_svg_named_by_its_title_and_description(engine, name):
    chart = CHARTS[name]()
    svg = ET.fromstring(render(engine, name, chart))
    assert svg.tag == f"{SVG}svg"
    assert svg.get("role") == "img"
    assert svg.get("viewBox") == f"0 0 {chart.width} {chart.height}"
    assert "chart" in svg.get("class").split()
    title_id, desc_id = svg.get("aria-labelledby").split()
    assert svg.find(f"{SVG}title").get("id") == title_id
    assert svg.find(f"{SVG}title").text == chart.title
    assert svg.find(f"{SVG}desc").get("id") == desc_id
    assert svg.find(f"{SVG}desc").text == chart.description


@pytest.mark.parametrize("name", CHARTS)
def test_numbers_are_short_and_never_localised(engine, name):
    with translation.override("de"):
        assert Engine().from_string("{{ v }}").render(Context({"v": 1.5})) == "1,5"
        svg = ET.fromstring(render(engine, name, CHARTS[name]()))
    for element in svg.iter():
        for attribute in NUMERIC & set(element.keys()):
            assert re.fullmatch(r"-?\d+(\.\d{1,2})?", element.get(attribute)), element.attrib
    for path in svg.iter(f"{SVG}path"):
        if path.get("class") == "chart-line":
            assert re.fullmatch(r"M-?\d+(\.\d\d?)? -?\d+(\.\d\d?)?( L[-\d. ]+)*", path.get("d"))
        for number in re.findall(r"[-\d.]+", path.get("d")):
            assert re.fullmatch(r"-?\d+(\.\d{1,2})?", number), path.get("d")


def points_of(group) -> list:
    """The point markers of a series' group."""
    return [e for e in group if "chart-point" in e.get("class", "").split()]


def test_a_line_chart_has_a_group_per_series_with_a_marker_per_point(engine):
    chart = a_line_chart()
    svg = ET.fromstring(render(engine, "line_chart", chart))
    groups = svg.findall(f".//{SVG}g[@class='chart-series']")
    assert [group.get("data-series") for group in groups] == ["exact", "single", "none"]
    assert [len(points_of(group)) for group in groups] == [3, 1, 0]
    assert [len(group.findall(f"{SVG}path[@class='chart-line']")) for group in groups] == [1, 1, 0]
    marker = points_of(groups[0])[0]
    assert marker.get("d") == chart.series[0].points[0].marker
    assert marker.find(f"{SVG}title").text == "exact — 100: 0.7"
    assert groups[0].find(f"{SVG}path").get("d") == chart.series[0].path
    assert points_of(groups[1])[0].get("d") == chart.series[1].points[0].marker  # another shape


def test_a_series_that_coincides_with_another_is_drawn_dashed_with_hollow_markers(engine):
    chart = line_chart(
        series={"greedy": [(1, 0.7), (2, 0.8)], "tvcs-iht": [(1, 0.7), (2, 0.8)]},
        title="T",
        x_label="x",
        y_label="y",
    )
    svg = ET.fromstring(render(engine, "line_chart", chart))
    greedy, tvcs = svg.findall(f".//{SVG}g[@class='chart-series']")
    assert greedy.find(f"{SVG}path").get("stroke-dasharray") is None
    assert tvcs.find(f"{SVG}path").get("stroke-dasharray") == chart.series[1].dash
    assert {e.get("class") for e in points_of(greedy)} == {"chart-point"}
    assert {e.get("class") for e in points_of(tvcs)} == {"chart-point chart-point-hollow"}
    legend = svg.find(f".//{SVG}g[@class='chart-legend']")
    assert [text.text for text in legend.iter(f"{SVG}text")] == [
        "greedy",
        "tvcs-iht (same as greedy)",
    ]
    swatches = legend.findall(f"{SVG}line")
    assert [line.get("stroke-dasharray") for line in swatches] == [None, chart.series[1].dash]
    assert len(legend.findall(f"{SVG}path")) == 2  # each entry shows its marker


def test_the_reference_is_drawn_in_a_group_of_its_own(engine):
    svg = ET.fromstring(render(engine, "line_chart", a_line_chart()))
    (group,) = svg.findall(f".//{SVG}g[@class='chart-reference']")
    assert group.get("data-series") == "upper bound"
    assert len(group.findall(f"{SVG}path[@class='chart-line']")) == 1
    assert len(points_of(group)) == 2
    assert len(svg.findall(f".//{SVG}g[@class='chart-legend']/{SVG}text")) == 4


def test_a_bar_chart_has_a_bar_with_a_tooltip_per_value(engine):
    svg = ET.fromstring(render(engine, "bar_chart", a_bar_chart()))
    bars = svg.findall(f".//{SVG}rect[@class='chart-bar']")
    assert [bar.find(f"{SVG}title").text for bar in bars] == [f"0.80{DASH}0.85: 12", "b: 3.5"]
    texts = [text.text for text in svg.iter(f"{SVG}text")]
    assert {f"0.80{DASH}0.85", "b", "x", "y"} <= set(texts)


def test_a_heat_map_has_a_cell_per_value_and_a_gradient_legend(engine):
    chart = a_heat_map()
    svg = ET.fromstring(render(engine, "heat_map", chart))
    cells = svg.findall(f".//{SVG}rect[@class='chart-cell']")
    assert [cell.get("fill") for cell in cells] == [cell.fill for cell in chart.cells]
    assert cells[1].find(f"{SVG}title").text == f"alice {TIMES} task 2: no data"
    gradient = svg.find(f".//{SVG}linearGradient")
    assert len(gradient.findall(f"{SVG}stop")) == len(chart.legend.stops)
    scale = svg.find(f".//{SVG}rect[@class='chart-colour-scale']")
    assert scale.get("fill") == f"url(#{gradient.get('id')})"
    assert svg.find(f".//{SVG}rect[@class='chart-no-data']") is not None


@pytest.mark.parametrize("draw", [line_chart, bar_chart])
def test_a_responsive_pair_prints_both_drawings_each_in_a_box_of_its_own(engine, draw):
    if draw is line_chart:
        arguments = {"series": {"a": [(1, 0.5), (2, 0.7)]}, "x_label": "x", "y_label": "y"}
    else:
        arguments = {"labels": ["a", "b"], "values": [1, 2], "x_label": "x", "y_label": "y"}
    pair = responsive(draw, chart_id="pair", title="Pair", **arguments)
    html = engine.get_template("charts/responsive.html").render(Context({"pair": pair}))
    page = ET.fromstring(f"<div>{html}</div>")
    boxes = {box.get("class"): box.find(f"{SVG}svg") for box in page.findall("div")}
    assert boxes["chart-wide"].get("id") == "pair"
    assert boxes["chart-narrow"].get("id") == "pair-narrow"
    assert boxes["chart-narrow"].get("viewBox") == "0 0 360 " + boxes["chart-narrow"].get("height")
    # Which one shows at which width: the browser test (tests/e2e) measures it.


def test_ids_differ_between_charts_on_one_page(engine):
    page = render(engine, "heat_map", a_heat_map()) + render(engine, "heat_map", a_heat_map())
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)) == 8


@pytest.mark.parametrize(
    ("name", "chart"),
    [
        ("line_chart", lambda: a_line_chart(EVIL)),
        ("bar_chart", lambda: a_bar_chart(EVIL)),
        ("heat_map", lambda: a_heat_map(EVIL)),
        ("bar_chart", lambda: histogram(values=[1], bins=2, title=EVIL, x_label=EVIL)),
    ],
)
def test_user_text_is_escaped(engine, name, chart):
    html = render(engine, name, chart())
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    svg = ET.fromstring(html)
    assert any(EVIL in (element.text or "") for element in svg.iter())


def test_quotes_in_a_series_name_stay_inside_its_attribute(engine):
    svg = ET.fromstring(render(engine, "line_chart", a_line_chart('say "hi" & <bye>')))
    assert svg.find(f".//{SVG}g[@class='chart-series']").get("data-series") == 'say "hi" & <bye>'


def test_the_app_serves_its_templates_and_styles_once_installed():
    apps = [app for app in settings.INSTALLED_APPS if app != "charts"]
    with override_settings(INSTALLED_APPS=[*apps, "charts"]):
        html = render_to_string("charts/bar_chart.html", {"chart": a_bar_chart()})
        assert ET.fromstring(html).get("role") == "img"
        assert finders.find("charts/charts.css")
