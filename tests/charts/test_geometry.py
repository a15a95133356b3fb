"""Chart geometry: ticks, bars, lines and heat-map cells, computed without Django."""

from __future__ import annotations

import itertools
import math
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from charts.geometry import (
    CATEGORICAL,
    MARKERS,
    NARROW_WIDTH,
    NO_DATA,
    REFERENCE,
    SEQUENTIAL,
    LineChart,
    bar_chart,
    count_chart,
    format_number,
    heat_map,
    histogram,
    line_chart,
    nice_ticks,
    responsive,
    sequential_colour,
)

DASH = "\u2013"  # between a bin's edges
TIMES = "\u00d7"  # between a cell's row and column


def luminance(colour: str) -> float:
    """WCAG relative luminance of ``#rrggbb``: 0 for black, 1 for white."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def inside(box, x: float, y: float) -> bool:
    return box.left <= x <= box.right and box.top <= y <= box.bottom


def path_points(path: str) -> list[tuple[float, float]]:
    """The ``(x, y)`` pairs of an ``"M x y L x y ..."`` path."""
    assert re.fullmatch(r"M[-\d. ]+( L[-\d. ]+)*", path)
    return [tuple(map(float, part.split())) for part in re.split(r"[ML]", path) if part.strip()]


def accuracy_chart(**series):
    return line_chart(
        series=series, title="Accuracy by budget", x_label="budget", y_label="accuracy"
    )


# --- Ticks and numbers ------------------------------------------------------------------------


@given(
    low=st.floats(min_value=-1e6, max_value=1e6),
    span=st.floats(min_value=0, max_value=1e6),
)
def test_nice_ticks_cover_the_range_in_round_even_steps(low, span):
    span = 0.0 if span < 1e-6 * max(1.0, abs(low)) else span
    high = low + span
    ticks = nice_ticks(low, high)
    step = ticks[1] - ticks[0]
    assert ticks[0] <= low + 1e-6 * step
    assert ticks[-1] >= high - 1e-6 * step
    assert 3 <= len(ticks) <= 8
    assert all(math.isclose(b - a, step, rel_tol=1e-6) for a, b in itertools.pairwise(ticks))
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
    assert any(math.isclose(mantissa, nice, rel_tol=1e-6) for nice in (1, 2, 2.5, 5))


def test_nice_ticks_are_the_round_numbers_themselves():
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0.1, 0.3) == [0.1, 0.15, 0.2, 0.25, 0.3]
    assert nice_ticks(3, 97) == [0, 20, 40, 60, 80, 100]


def test_nice_ticks_widen_a_range_of_one_value():
    assert nice_ticks(0.8, 0.8) == [0.7, 0.75, 0.8, 0.85, 0.9]
    assert nice_ticks(0, 0) == [-1, -0.5, 0, 0.5, 1]


def test_integer_ticks_step_by_at_least_one():
    assert nice_ticks(0, 2, integer=True) == [0, 1, 2]


@pytest.mark.parametrize(("low", "high"), [(1, 0), (0, math.inf), (math.nan, 1)])
def test_nice_ticks_refuse_a_reversed_or_infinite_range(low, high):
    with pytest.raises(ValueError, match="finite low <= high"):
        nice_ticks(low, high)


@pytest.mark.parametrize(
    ("value", "step", "text"),
    [
        (0.1 + 0.2, None, "0.3"),
        (1000, None, "1,000"),
        (1234567.8, None, "1,234,568"),
        (0.734123, None, "0.734"),
        (12.0, None, "12"),
        (0.000123456, None, "0.000123"),
        (0.5, 0.25, "0.50"),
        (0.85, 0.05, "0.85"),
        (20, 10, "20"),
        (-1e-12, 0.1, "0.0"),
    ],
)
def test_numbers_are_written_compactly(value, step, text):
    assert format_number(value, step=step) == text


# --- Bar charts -------------------------------------------------------------------------------


def test_bar_heights_are_proportional_to_values_and_inside_the_plot():
    chart = bar_chart(
        labels=["a", "b", "c", "d"], values=[1, 4, 0, 2.5], title="T", x_label="x", y_label="y"
    )
    heights = [bar.height for bar in chart.bars]
    assert heights[2] == 0
    assert heights[1] == pytest.approx(4 * heights[0], abs=0.02)
    assert heights[3] == pytest.approx(2.5 * heights[0], abs=0.02)
    for bar in chart.bars:
        assert inside(chart.plot, bar.x, bar.y)
        assert inside(chart.plot, bar.x + bar.width, bar.y + bar.height)
        assert bar.y + bar.height == pytest.approx(chart.plot.bottom, abs=0.01)
    lefts = [bar.x for bar in chart.bars]
    assert lefts == sorted(lefts)


def test_the_y_axis_of_a_bar_chart_runs_from_zero_to_a_nice_maximum():
    chart = bar_chart(labels=["a", "b"], values=[3, 47], title="T", x_label="x", y_label="y")
    labels = [tick.label.text for tick in chart.y_axis.ticks]
    assert labels == ["0", "10", "20", "30", "40", "50"]
    assert chart.y_axis.ticks[0].label.y > chart.y_axis.ticks[-1].label.y


def test_bars_of_nothing_stand_on_an_axis_from_zero_to_one():
    chart = count_chart(counts=[0, 0], title="T", x_label="x")
    assert [tick.label.text for tick in chart.y_axis.ticks] == ["0", "1"]
    assert [bar.height for bar in chart.bars] == [0, 0]
    assert bar_chart(labels=[], values=[], title="T", x_label="x", y_label="y").bars == ()


def test_many_bars_show_only_every_few_labels_so_they_do_not_overlap():
    chart = histogram(values=[0.5], bins=40, range=(0, 1), title="T", x_label="x")
    ticks = chart.x_axis.ticks
    assert 1 < len(ticks) < 40
    for left, right in itertools.pairwise(ticks):
        gap = right.label.x - left.label.x
        assert gap >= 0.6 * 12 * max(len(left.label.text), len(right.label.text))


def test_a_few_bars_show_every_label():
    chart = count_chart(counts=[1, 2, 3, 4, 5], title="T", x_label="x")
    assert [tick.label.text for tick in chart.x_axis.ticks] == ["0", "1", "2", "3", "4"]
    assert [tick.label.x for tick in chart.x_axis.ticks] == pytest.approx(
        [bar.x + bar.width / 2 for bar in chart.bars], abs=0.02
    )


def test_a_bar_tooltip_names_the_label_the_value_and_the_unit():
    chart = bar_chart(
        labels=[f"0.80{DASH}0.85"], values=[12], title="T", x_label="x", y_label="y", unit="workers"
    )
    assert chart.bars[0].tooltip == f"0.80{DASH}0.85: 12 workers"


def test_a_bar_chart_refuses_labels_and_values_of_different_lengths():
    with pytest.raises(ValueError, match="2 labels for 1 values"):
        bar_chart(labels=["a", "b"], values=[1], title="T", x_label="x", y_label="y")


def test_a_histogram_counts_every_value_once():
    values = np.random.default_rng(7).beta(8, 2, 500)
    chart = histogram(values=values, bins=20, range=(0, 1), title="T", x_label="accuracy")
    expected, _ = np.histogram(values, bins=20, range=(0, 1))
    assert [bar.value for bar in chart.bars] == expected.tolist()
    assert sum(bar.value for bar in chart.bars) == 500
    assert chart.bars[10].label == f"0.50{DASH}0.55"


def test_a_histogram_takes_explicit_bin_edges():
    chart = histogram(values=[0.1, 0.6, 0.95, 1.0], bins=[0, 0.5, 0.9, 1], title="T", x_label="x")
    assert [(bar.label, bar.value) for bar in chart.bars] == [
        (f"0.0{DASH}0.5", 1),
        (f"0.5{DASH}0.9", 1),
        (f"0.9{DASH}1.0", 2),
    ]


def test_a_count_chart_has_one_bar_per_integer_value_and_whole_ticks():
    chart = count_chart(counts=[0, 1, 1], title="Workers per task", x_label="workers", unit="tasks")
    assert [(bar.label, bar.value) for bar in chart.bars] == [("0", 0), ("1", 1), ("2", 1)]
    assert chart.bars[1].tooltip == "1: 1 tasks"
    assert [tick.label.text for tick in chart.y_axis.ticks] == ["0", "1"]


# --- Line charts ------------------------------------------------------------------------------


def test_line_points_are_inside_the_plot_and_sorted_by_x():
    chart = accuracy_chart(exact=[(300, 0.9), (100, 0.7), (200, 0.85)], greedy=[(100, 0.6)])
    for series in chart.series:
        assert all(inside(chart.plot, point.px, point.py) for point in series.points)
    assert [point.x for point in chart.series[0].points] == [100, 200, 300]
    assert [point.px for point in chart.series[0].points] == sorted(
        point.px for point in chart.series[0].points
    )


def test_higher_values_are_drawn_higher_up():
    chart = accuracy_chart(exact=[(1, 0.7), (2, 0.9)])
    low, high = chart.series[0].points
    assert high.py < low.py


def test_the_path_passes_through_every_point_in_order():
    chart = accuracy_chart(exact=[(3, 0.9), (1, 0.7), (2, 0.85)])
    series = chart.series[0]
    assert path_points(series.path) == [(point.px, point.py) for point in series.points]


def test_there_is_one_series_per_name_in_the_given_order():
    chart = accuracy_chart(zeta=[(1, 0.5)], alpha=[(1, 0.6)], mid=[(1, 0.7)])
    assert [series.name for series in chart.series] == ["zeta", "alpha", "mid"]
    assert [series.colour for series in chart.series] == list(CATEGORICAL[:3])
    assert [entry.name for entry in chart.legend] == ["zeta", "alpha", "mid"]
    assert chart.series[0].points[0].tooltip == "zeta — 1: 0.5"


def test_the_reference_is_drawn_apart_dashed_and_grey():
    chart = line_chart(
        series={"exact": [(1, 0.7), (2, 0.8)]},
        reference=("upper bound", [(2, 1.0), (1, 0.95)]),
        title="T",
        x_label="x",
        y_label="y",
    )
    assert [series.name for series in chart.series] == ["exact"]
    assert chart.reference.name == "upper bound"
    assert chart.reference.colour == REFERENCE
    assert [point.x for point in chart.reference.points] == [1, 2]
    assert [(entry.name, entry.dashed) for entry in chart.legend] == [
        ("exact", False),
        ("upper bound", True),
    ]
    assert "dashed: upper bound" in chart.description


def test_each_series_has_a_marker_shape_of_its_own():
    chart = accuracy_chart(a=[(1, 0.5)], b=[(1, 0.6)], c=[(1, 0.7)], d=[(1, 0.8)], e=[(1, 0.9)])
    assert [series.marker for series in chart.series] == list(MARKERS[:5])
    assert len({series.points[0].marker.split()[0][0] for series in chart.series}) == 1  # "M"
    assert len({entry.marker for entry in chart.legend}) == 5  # the legend shows each shape
    assert [series.dash for series in chart.series] == [""] * 5  # lines apart stay solid


def test_a_series_that_coincides_with_an_earlier_one_is_dashed_hollow_and_says_so():
    same = [(100, 0.8), (200, 0.9)]
    chart = accuracy_chart(
        greedy=same,
        tvcs=[(200, 0.9), (100, 0.1 + 0.7)],  # 0.7999999999999999: equal but for rounding
        random=[(100, 0.6), (200, 0.7)],
        lp=list(same),
    )
    greedy, tvcs, random, lp = chart.series
    assert [series.same_as for series in chart.series] == ["", "greedy", "", "greedy"]
    assert greedy.dash == random.dash == ""
    assert "" not in (tvcs.dash, lp.dash)  # the earlier line shows through the gaps
    assert tvcs.dash != lp.dash
    assert [entry.label.text for entry in chart.legend] == [
        "greedy",
        "tvcs (same as greedy)",
        "random",
        "lp (same as greedy)",
    ]
    assert [entry.dash for entry in chart.legend] == ["", tvcs.dash, "", lp.dash]
    assert "tvcs is the same as greedy; lp is the same as greedy" in chart.description
    assert [point.py for point in tvcs.points] == [point.py for point in greedy.points]


@pytest.mark.parametrize(
    "other",
    [
        [(100, 0.8), (200, 0.9001)],  # apart at one budget
        [(100, 0.8)],  # fewer budgets
        [(100, 0.8), (300, 0.9)],  # other budgets
        [],
    ],
)
def test_series_that_differ_anywhere_are_not_the_same(other):
    chart = accuracy_chart(greedy=[(100, 0.8), (200, 0.9)], other=other, none=[])
    assert [series.same_as for series in chart.series] == ["", "", ""]
    assert "same as" not in chart.description


def test_a_series_with_a_single_point_still_has_that_point():
    chart = accuracy_chart(single=[(5, 0.8)])
    (point,) = chart.series[0].points
    assert inside(chart.plot, point.px, point.py)
    assert path_points(chart.series[0].path) == [(point.px, point.py)]


def test_an_empty_series_is_in_the_legend_without_a_path():
    chart = accuracy_chart(exact=[(1, 0.7)], empty=[])
    assert chart.series[1].path == ""
    assert chart.series[1].points == ()
    assert [entry.name for entry in chart.legend] == ["exact", "empty"]


def test_a_series_of_equal_values_gets_a_sensible_range_around_them():
    chart = accuracy_chart(flat=[(1, 0.8), (2, 0.8), (3, 0.8)])
    labels = [tick.label.text for tick in chart.y_axis.ticks]
    assert "0.80" in labels
    assert len(labels) >= 3
    middle = (chart.plot.top + chart.plot.bottom) / 2
    assert all(point.py == pytest.approx(middle, abs=0.01) for point in chart.series[0].points)


def test_the_axes_have_nice_ticks_inside_the_plot():
    chart = accuracy_chart(exact=[(100, 0.63), (1000, 0.91)])
    assert [tick.label.text for tick in chart.x_axis.ticks] == ["200", "400", "600", "800", "1,000"]
    assert [tick.label.text for tick in chart.y_axis.ticks] == [
        "0.65",
        "0.70",
        "0.75",
        "0.80",
        "0.85",
        "0.90",
    ]
    for tick in chart.x_axis.ticks:
        assert chart.plot.left <= tick.mark.x1 <= chart.plot.right
    for tick in chart.y_axis.ticks:
        assert chart.plot.top <= tick.mark.y1 <= chart.plot.bottom


def x_labels_overlap(chart) -> bool:
    """Whether two neighbouring x tick labels (centred, 0.6 em a character) touch."""
    spans = sorted(
        (tick.label.x - 3.6 * len(tick.label.text), tick.label.x + 3.6 * len(tick.label.text))
        for tick in chart.x_axis.ticks
    )
    return any(right + 4 > left for (_, right), (left, _) in itertools.pairwise(spans))


@pytest.mark.parametrize(
    ("draw", "arguments"),
    [
        (
            line_chart,
            {
                "series": {"tvcs-iht": [(1200, 0.93), (1800, 0.94), (2400, 0.9465)]},
                "reference": ("upper bound", [(1200, 0.96), (2400, 0.98)]),
                "x_label": "budget",
                "y_label": "accuracy",
            },
        ),
        (
            histogram,
            {
                "values": np.linspace(0.5, 0.99, 40),
                "bins": np.linspace(0.5, 1.0, 21),
                "x_label": "q",
                "y_label": "n",
            },
        ),
        (count_chart, {"counts": list(range(31)), "x_label": "tasks", "y_label": "workers"}),
    ],
)
def test_a_chart_drawn_for_a_phone_has_the_same_data_at_its_width_with_labels_apart(
    draw, arguments
):
    pair = responsive(draw, chart_id="pair", title="A chart", **arguments)
    assert (pair.wide.id, pair.narrow.id) == ("pair", "pair-narrow")
    assert (pair.wide.width, pair.narrow.width) == (640, NARROW_WIDTH)
    assert pair.narrow.title == pair.wide.title == pair.title
    assert pair.template.endswith("line_chart.html" if draw is line_chart else "bar_chart.html")
    if isinstance(pair.wide, LineChart):
        points = [[(p.x, p.y) for p in line.points] for line in pair.wide.series]
        assert [[(p.x, p.y) for p in line.points] for line in pair.narrow.series] == points
        assert pair.narrow.plot.right <= NARROW_WIDTH
    else:
        assert [b.value for b in pair.narrow.bars] == [b.value for b in pair.wide.bars]
    for chart in (pair.wide, pair.narrow):
        assert not x_labels_overlap(chart)
        last = chart.x_axis.ticks[-1].label
        assert last.x + 3.6 * len(last.text) <= chart.width  # not cut off at the right edge


def test_a_narrow_line_chart_has_fewer_x_ticks_so_they_keep_apart():
    series = {"a": [(1200, 0.9), (2400, 0.95)]}
    wide = line_chart(series=series, title="t", x_label="x", y_label="y")
    narrow = line_chart(series=series, title="t", x_label="x", y_label="y", width=NARROW_WIDTH)
    assert len(wide.x_axis.ticks) == 7  # 1,200 to 2,400 by 200
    assert [tick.label.text for tick in narrow.x_axis.ticks] == [
        "1,250",
        "1,500",
        "1,750",
        "2,000",
        "2,250",
    ]


def test_a_chart_without_points_still_has_axes():
    chart = accuracy_chart()
    assert chart.series == ()
    assert chart.reference is None
    assert len(chart.x_axis.ticks) >= 2
    assert len(chart.y_axis.ticks) >= 2


def test_a_long_legend_wraps_onto_rows_above_the_plot():
    chart = accuracy_chart(**{f"a fairly long series name {i}": [(i, 0.5)] for i in range(8)})
    rows = sorted({entry.swatch.y1 for entry in chart.legend})
    assert len(rows) > 1
    assert rows[-1] < chart.plot.top
    assert all(entry.swatch.x1 >= chart.plot.left for entry in chart.legend)
    assert all(
        entry.label.x + 0.6 * 12 * len(entry.label.text) <= chart.width for entry in chart.legend
    )


def test_a_point_that_is_not_finite_is_refused():
    with pytest.raises(ValueError, match="'broken' has a point that is not finite"):
        accuracy_chart(broken=[(1, math.nan)])


# --- Heat maps --------------------------------------------------------------------------------


def worker_map(values, **options):
    rows = [f"worker {i}" for i in range(len(values))]
    columns = [f"t{j}" for j in range(len(values[0]))]
    return heat_map(rows=rows, columns=columns, values=values, title="Accuracy", **options)


def test_a_heat_map_has_a_cell_per_row_and_column_in_a_grid():
    chart = worker_map([[0.1, 0.2, 0.3], [0.4, 0.5, 0.734]])
    assert len(chart.cells) == 6
    assert [(cell.row, cell.column) for cell in chart.cells[:3]] == [
        ("worker 0", "t0"),
        ("worker 0", "t1"),
        ("worker 0", "t2"),
    ]
    assert len({(cell.x, cell.y) for cell in chart.cells}) == 6
    assert chart.cells[5].tooltip == f"worker 1 {TIMES} t2: 0.734"
    assert len(chart.row_labels) == 2
    assert len(chart.column_labels) == 3
    assert all(cell.x + cell.width <= chart.width for cell in chart.cells)
    assert all(cell.y + cell.height <= chart.legend.bar.y for cell in chart.cells)


def test_a_cell_without_data_is_grey_and_says_so():
    chart = worker_map([[0.5, math.nan]])
    assert chart.cells[1].fill == NO_DATA
    assert chart.cells[1].tooltip == f"worker 0 {TIMES} t1: no data"
    assert chart.legend.no_data is not None
    assert worker_map([[0.5, 0.6]]).legend.no_data is None


def test_higher_values_get_darker_colours():
    chart = worker_map([[0.9, 0.1, 0.5, 0.3, 0.7]], vmin=0, vmax=1)
    by_value = sorted(chart.cells, key=lambda cell: cell.value)
    shades = [luminance(cell.fill) for cell in by_value]
    assert shades == sorted(shades, reverse=True)
    assert len(set(shades)) == len(shades)


def test_the_palette_darkens_steadily_from_its_first_to_its_last_colour():
    anchors = [luminance(colour) for colour in SEQUENTIAL]
    assert anchors == sorted(anchors, reverse=True)
    shades = [luminance(sequential_colour(f)) for f in np.linspace(0, 1, 101)]
    assert all(a > b for a, b in itertools.pairwise(shades))
    assert sequential_colour(-1) == SEQUENTIAL[0]
    assert sequential_colour(2) == SEQUENTIAL[-1]


def test_the_colour_scale_ends_at_nice_values_unless_given():
    chart = worker_map([[0.03, 0.97]])
    assert (chart.vmin, chart.vmax) == (0, 1)
    texts = [label.text for label in chart.legend.labels]
    assert (texts[0], texts[-1]) == ("0.0", "1.0")
    chart = worker_map([[0.03, 0.97]], vmin=0.5, vmax=0.9)
    assert (chart.cells[0].fill, chart.cells[1].fill) == (SEQUENTIAL[0], SEQUENTIAL[-1])


def test_a_heat_map_of_one_value_uses_the_middle_colour():
    chart = worker_map([[0.7, 0.7]], vmin=0.7, vmax=0.7)
    assert chart.cells[0].fill == SEQUENTIAL[len(SEQUENTIAL) // 2]


def test_the_heat_map_grows_with_its_rows_and_columns():
    small = worker_map(np.zeros((2, 3)))
    large = worker_map(np.zeros((60, 30)))
    assert large.width > small.width
    assert large.height > small.height
    assert len(large.cells) == 1800


def test_long_column_names_are_turned_and_short_ones_are_not():
    short = heat_map(rows=["r"], columns=["1", "2"], values=[[1, 2]], title="T")
    long = heat_map(rows=["r"], columns=["topic one", "topic two"], values=[[1, 2]], title="T")
    assert {label.angle for label in short.column_labels} == {0}
    assert {label.angle for label in long.column_labels} == {-45}
    assert all(label.y > 0 for label in long.column_labels)


def test_long_names_are_shortened_on_the_chart_but_whole_in_tooltips():
    name = "a worker with a very long name indeed"
    chart = heat_map(rows=[name], columns=["c"], values=[[0.5]], title="T")
    assert chart.row_labels[0].text == name[:23] + "…"
    assert chart.cells[0].tooltip.startswith(name)


def test_a_heat_map_refuses_values_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"shape \(3,\), not \(1, 2\)"):
        heat_map(rows=["r"], columns=["a", "b"], values=[1, 2, 3], title="T")


# --- Every chart ------------------------------------------------------------------------------


def test_every_chart_gets_an_id_of_its_own_unless_given_one():
    first, second = accuracy_chart(), accuracy_chart()
    assert first.id != second.id
    assert re.fullmatch(r"chart-accuracy-by-budget-\d+", first.id)
    chart = line_chart(series={}, title="T", x_label="x", y_label="y", chart_id="my-chart")
    assert chart.id == "my-chart"


def test_an_id_that_is_no_html_id_is_refused():
    with pytest.raises(ValueError, match="chart_id"):
        line_chart(series={}, title="T", x_label="x", y_label="y", chart_id="two words")


def test_the_geometry_imports_no_django():
    code = "import sys, charts.geometry; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not any(m == "django" or m.startswith("django.") for m in out.stdout.split())
