"""Geometry of the server-side SVG charts: every coordinate, label and colour, in plain Python.

The templates in ``charts/templates/charts/`` only loop over the frozen dataclasses built here and
print their fields, so all the arithmetic lives in this module and is tested without Django (which
this module never imports). Coordinates are SVG user units (origin top left, y pointing down),
rounded to two decimals, whole numbers as ``int``, so the markup stays short; the templates print
them with localisation off, so no locale turns ``1.5`` into ``1,5``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "CATEGORICAL",
    "MARKERS",
    "NARROW_WIDTH",
    "NO_DATA",
    "REFERENCE",
    "SEQUENTIAL",
    "Axis",
    "Bar",
    "BarChart",
    "Box",
    "Cell",
    "ColourLegend",
    "GradientStop",
    "HeatMap",
    "Label",
    "LegendEntry",
    "LineChart",
    "LineSeries",
    "Point",
    "Rect",
    "Responsive",
    "Segment",
    "Tick",
    "bar_chart",
    "count_chart",
    "format_number",
    "heat_map",
    "histogram",
    "line_chart",
    "nice_ticks",
    "responsive",
    "sequential_colour",
]

#: Okabe & Ito's colour-blind-safe categorical palette, the most legible on white first.
CATEGORICAL = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
)
#: Viridis at nine even steps, reversed: low values light yellow, high values dark purple.
SEQUENTIAL = (
    "#fde725",
    "#addc30",
    "#5ec962",
    "#28ae80",
    "#21918c",
    "#2c728e",
    "#3b528b",
    "#472d7b",
    "#440154",
)
#: The fill of a heat-map cell without a value.
NO_DATA = "#d9d9d9"
#: The colour of a line chart's reference series (4.5:1 on white).
REFERENCE = "#767676"
#: The shapes of a line chart's point markers, one per series in turn (the reference's are
#: small circles): with the colours, series stay apart in grey and where they cross.
MARKERS = ("circle", "square", "triangle", "diamond", "triangle-down")
#: The dash patterns of a series drawn over an earlier one it coincides with, in turn: the
#: earlier line shows through the gaps (the reference keeps its own, in charts.css).
_COINCIDING_DASHES = ("5 4", "1.5 3.5", "9 3 2 3")

_FONT_SIZE = 12  # px, as in charts.css
_CHAR_WIDTH = 0.6 * _FONT_SIZE  # rough average advance of a sans-serif character
_LEGEND_WIDTH = 200  # of a heat map's colour scale
_LABEL_CHARS = 24  # longer labels are shortened on the chart (tooltips keep them whole)
_LEGEND_CHARS = 48  # the same for legend entries, which have a row to themselves if need be
_NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_ids = itertools.count(1)
_EN_DASH = "\u2013"  # between a bin's edges: "0.50–0.55"
_TIMES = "\u00d7"  # between a cell's row and column: "alice × task 3"


# --- Shapes the templates print ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Box:
    """The plot area of a chart with axes: its edges in SVG units."""

    left: float
    top: float
    right: float
    bottom: float


@dataclass(frozen=True, kw_only=True)
class Rect:
    """A rectangle by its top-left corner and size."""

    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True, kw_only=True)
class Segment:
    """A straight line from ``(x1, y1)`` to ``(x2, y2)``."""

    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True, kw_only=True)
class Label:
    """A text at ``(x, y)`` (its baseline), aligned by ``anchor``, turned by ``angle`` degrees.

    ``anchor`` is an SVG ``text-anchor``: ``"start"``, ``"middle"`` or ``"end"``.
    """

    text: str
    x: float
    y: float
    anchor: str = "middle"
    angle: float = 0


@dataclass(frozen=True, kw_only=True)
class Tick:
    """An axis tick: a short ``mark`` outside the plot, its ``label``, maybe a ``grid`` line."""

    label: Label
    mark: Segment
    grid: Segment | None = None


@dataclass(frozen=True, kw_only=True)
class Axis:
    """An axis: its ``line``, its ``ticks`` and its ``title``."""

    line: Segment
    ticks: tuple[Tick, ...]
    title: Label


@dataclass(frozen=True, kw_only=True)
class _Chart:
    """What every chart has: an element id, texts for assistive technology, and its size."""

    id: str
    title: str
    description: str
    width: float
    height: float


@dataclass(frozen=True, kw_only=True)
class Bar(Rect):
    """One bar: its rectangle, its category ``label``, its ``value`` and its ``tooltip``."""

    label: str
    value: float
    tooltip: str


@dataclass(frozen=True, kw_only=True)
class BarChart(_Chart):
    """Vertical bars from zero, one per category, all in ``colour``."""

    plot: Box
    x_axis: Axis
    y_axis: Axis
    bars: tuple[Bar, ...]
    colour: str


@dataclass(frozen=True, kw_only=True)
class Point:
    """One data point: ``(px, py)`` on the chart, ``(x, y)`` in data units, its tooltip, and
    its ``marker``: the SVG path of its series' shape around ``(px, py)``."""

    px: float
    py: float
    x: float
    y: float
    tooltip: str
    marker: str


@dataclass(frozen=True, kw_only=True)
class LineSeries:
    """A named line: its SVG ``path`` (``""`` when it has no point) through ``points``, by x,
    their ``marker`` shape (one of :data:`MARKERS`), and the name of an earlier series it
    coincides with (``same_as``, ``""`` if none), over which it is drawn with the dash
    pattern ``dash`` (``""``: solid) and hollow markers, so that both show."""

    name: str
    colour: str
    path: str
    points: tuple[Point, ...]
    marker: str = "circle"
    same_as: str = ""
    dash: str = ""


@dataclass(frozen=True, kw_only=True)
class LegendEntry:
    """A legend item: a line ``swatch`` in ``colour`` (``dashed`` for the reference, else the
    series' ``dash`` pattern), its series' ``marker`` path on it (``""`` for the reference),
    ``hollow`` as the series' markers are, and a label."""

    name: str
    colour: str
    dashed: bool
    swatch: Segment
    label: Label
    dash: str = ""
    marker: str = ""
    hollow: bool = False


@dataclass(frozen=True, kw_only=True)
class LineChart(_Chart):
    """Lines over a numeric x axis; ``reference`` (or None) is drawn dashed grey below them."""

    plot: Box
    x_axis: Axis
    y_axis: Axis
    series: tuple[LineSeries, ...]
    reference: LineSeries | None
    legend: tuple[LegendEntry, ...]

    @property
    def coinciding(self) -> tuple[LineSeries, ...]:
        """The series drawn over an earlier one with the same points (``same_as``)."""
        return tuple(line for line in self.series if line.same_as)


@dataclass(frozen=True, kw_only=True)
class Cell(Rect):
    """A heat-map cell: its rectangle, ``row`` and ``column`` names, ``value`` (NaN = none)."""

    row: str
    column: str
    value: float
    fill: str
    tooltip: str


@dataclass(frozen=True, kw_only=True)
class GradientStop:
    """A stop of the legend's gradient: ``offset`` in percent along it, and its colour."""

    offset: float
    colour: str


@dataclass(frozen=True, kw_only=True)
class ColourLegend:
    """The heat map's colour scale: a gradient ``bar``, value ``labels``, a no-data key or None."""

    bar: Rect
    stops: tuple[GradientStop, ...]
    labels: tuple[Label, ...]
    no_data: Rect | None
    no_data_label: Label | None
    no_data_colour: str = NO_DATA


@dataclass(frozen=True, kw_only=True)
class HeatMap(_Chart):
    """A grid of coloured ``cells`` (row-major), row labels left, column labels on top."""

    cells: tuple[Cell, ...]
    row_labels: tuple[Label, ...]
    column_labels: tuple[Label, ...]
    legend: ColourLegend
    vmin: float
    vmax: float


# --- Numbers ----------------------------------------------------------------------------------


def _svg(value: float) -> float:
    """``value`` rounded to two decimals, whole numbers as ``int``, so it prints short."""
    rounded = round(float(value), 2)
    return int(rounded) if rounded.is_integer() else rounded


def _decimals(value: float, *, limit: int | None = None) -> int:
    """The fewest decimals (at most ``limit``) that write ``value`` to float precision.

    The default limit keeps 15 significant digits, all a float has.
    """
    if limit is None:
        limit = max(0, 15 - math.floor(math.log10(abs(value)))) if value else 0
    for digits in range(limit + 1):
        if math.isclose(round(value, digits), value, rel_tol=1e-9):
            return digits
    return limit


def format_number(value: float, *, step: float | None = None) -> str:
    """Compact text for a number: ``"0.85"``, ``"12"``, ``"1,000"``, not ``"0.30000000000000004"``.

    Parameters
    ----------
    value : float
    step : float, optional
        The spacing of the numbers shown together (axis ticks, bin edges): each then gets the
        decimals ``step`` needs, so ``0.50`` and ``0.75`` line up. Without it, at most three
        significant digits (never fewer than the integer part) and no trailing zeros.

    Returns
    -------
    str
        Thousands separated by commas, ``"."`` as the decimal point, never ``"-0"``.
    """
    if step is not None:
        digits = _decimals(abs(step))
    elif value == 0:
        digits = 0
    else:
        digits = _decimals(value, limit=max(0, 2 - math.floor(math.log10(abs(value)))))
    text = f"{value:,.{digits}f}"
    return text.removeprefix("-") if float(text.replace(",", "")) == 0 else text


def _widen(low: float, high: float) -> tuple[float, float]:
    """``(low, high)``, or a range around the value when they are equal."""
    if low < high:
        return low, high
    pad = abs(low) * 0.1 or 1.0
    return low - pad, high + pad


def _nice_step(span: float, count: int, *, integer: bool) -> float:
    raw = span / count
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in _NICE_STEPS if m * magnitude >= raw * (1 - 1e-9))
    return max(step, 1.0) if integer else step


def nice_ticks(low: float, high: float, *, count: int = 5, integer: bool = False) -> list[float]:
    """Round tick values covering ``[low, high]``, in steps of 1, 2, 2.5 or 5 × 10^k.

    Parameters
    ----------
    low, high : float
        Finite, ``low <= high``. Equal ends are first widened by 10 % (by 1 around zero).
    count : int
        The number of steps aimed at (at least 1); the result has about ``count + 1`` ticks.
    integer : bool
        Steps of at least 1, for counts.

    Returns
    -------
    list of float
        At least two evenly spaced increasing values, ``ticks[0] <= low`` and
        ``ticks[-1] >= high``, each rounded to the decimals of the step.
    """
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise ValueError(f"nice_ticks needs finite low <= high, got {low!r} and {high!r}")
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count!r}")
    low, high = _widen(low, high)
    step = _nice_step(high - low, count, integer=integer)
    digits = _decimals(step)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    return [round(i * step, digits) + 0.0 for i in range(first, last + 1)]


def _tick_labels(ticks: Sequence[float]) -> list[str]:
    step = ticks[1] - ticks[0]
    return [format_number(tick, step=step) for tick in ticks]


def _all_integers(values: Sequence[float]) -> bool:
    return all(float(value).is_integer() for value in values)


@dataclass(frozen=True)
class _Scale:
    """The linear map from a data interval onto a pixel interval."""

    domain: tuple[float, float]
    pixels: tuple[float, float]

    def __call__(self, value: float) -> float:
        (d0, d1), (p0, p1) = self.domain, self.pixels
        return p0 + (value - d0) * (p1 - p0) / (d1 - d0)


# --- Layout helpers ---------------------------------------------------------------------------


def _text_width(text: str) -> float:
    return len(text) * _CHAR_WIDTH


def _shorten(text: str, *, limit: int = _LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _chart_id(title: str, chart_id: str | None) -> str:
    """``chart_id`` checked, or ``chart-<slug of title>-<counter>``: unique in the process."""
    if chart_id is not None:
        if not _ID.fullmatch(chart_id):
            raise ValueError(
                f"chart_id must be a letter then letters, digits, - or _: {chart_id!r}"
            )
        return chart_id
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower())[:40].strip("-")
    return f"chart-{slug}-{next(_ids)}" if slug else f"chart-{next(_ids)}"


def _plot_box(*, left: float, top: float, right: float, bottom: float) -> Box:
    if right - left < 20 or bottom - top < 20:
        raise ValueError("the chart is too small for its labels; make it wider or taller")
    return Box(left=_svg(left), top=_svg(top), right=_svg(right), bottom=_svg(bottom))


def _left_margin(tick_labels: Sequence[str]) -> float:
    """Room for the rotated y-axis title, the widest tick label and the tick marks."""
    return 24 + max(map(_text_width, tick_labels)) + 10


def _y_axis(*, title: str, ticks: Sequence[tuple[float, str]], scale: _Scale, plot: Box) -> Axis:
    """A vertical axis on the plot's left edge for ``(value, label)`` ticks, with grid lines."""
    marks = []
    for value, text in ticks:
        y = _svg(scale(value))
        marks.append(
            Tick(
                label=Label(text=text, x=_svg(plot.left - 8), y=_svg(y + 4), anchor="end"),
                mark=Segment(x1=_svg(plot.left - 5), y1=y, x2=plot.left, y2=y),
                grid=Segment(x1=plot.left, y1=y, x2=plot.right, y2=y),
            )
        )
    middle = _svg((plot.top + plot.bottom) / 2)
    return Axis(
        line=Segment(x1=plot.left, y1=plot.top, x2=plot.left, y2=plot.bottom),
        ticks=tuple(marks),
        title=Label(text=title, x=16, y=middle, angle=-90),
    )


def _x_tick(*, text: str, x: float, plot: Box, grid: bool) -> Tick:
    x = _svg(x)
    return Tick(
        label=Label(text=text, x=x, y=_svg(plot.bottom + 18)),
        mark=Segment(x1=x, y1=plot.bottom, x2=x, y2=_svg(plot.bottom + 5)),
        grid=Segment(x1=x, y1=plot.top, x2=x, y2=plot.bottom) if grid else None,
    )


def _x_axis(*, title: str, ticks: Sequence[Tick], plot: Box, height: float) -> Axis:
    """A horizontal axis on the plot's bottom edge, its title centred at the chart's foot."""
    return Axis(
        line=Segment(x1=plot.left, y1=plot.bottom, x2=plot.right, y2=plot.bottom),
        ticks=tuple(ticks),
        title=Label(text=title, x=_svg((plot.left + plot.right) / 2), y=_svg(height - 8)),
    )


# --- Bar charts -------------------------------------------------------------------------------


def _finite(name: str, values: Sequence[float]) -> list[float]:
    numbers = [float(value) for value in values]
    if not all(map(math.isfinite, numbers)):
        raise ValueError(f"{name} must be finite numbers")
    return numbers


def _bar_x_ticks(labels: Sequence[str], *, plot: Box, band: float) -> list[Tick]:
    """A tick under every k-th bar, k just large enough for the labels not to overlap."""
    shown = [_shorten(label) for label in labels]
    widest = max(map(_text_width, shown), default=0)
    every = max(1, math.ceil((widest + 6) / band))
    return [
        _x_tick(text=text, x=plot.left + (i + 0.5) * band, plot=plot, grid=False)
        for i, text in enumerate(shown)
        if i % every == 0
    ]


def _bar_right_margin(labels: Sequence[str], span: float) -> float:
    """The margin right of the plot: 12 units, more when the last bar's label, centred under
    a bar of ``span / len(labels)``, would run off the chart (on a narrow chart)."""
    if not labels:
        return 12
    overflow = _text_width(_shorten(labels[-1])) / 2 - span / len(labels) / 2 - 10
    return 12 + max(0.0, overflow)


def _bars(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    scale: _Scale,
    plot: Box,
    band: float,
    unit: str,
) -> list[Bar]:
    zero = scale(0.0)
    bars = []
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        top = scale(value)
        text = format_number(value)
        bars.append(
            Bar(
                x=_svg(plot.left + (i + 0.05) * band),
                y=_svg(min(top, zero)),
                width=_svg(0.9 * band),
                height=_svg(abs(zero - top)),
                label=label,
                value=value,
                tooltip=f"{label}: {text} {unit}" if unit else f"{label}: {text}",
            )
        )
    return bars


def bar_chart(
    *,
    labels: Sequence[str],
    values: Sequence[float],
    title: str,
    x_label: str,
    y_label: str,
    unit: str = "",
    description: str = "",
    width: float = 640,
    height: float = 260,
    chart_id: str | None = None,
) -> BarChart:
    """Vertical bars from zero, one per label, on a y axis up to a nice maximum.

    Parameters
    ----------
    labels : sequence of str
        The categories, left to right. Under many bars only every k-th label is shown, so that
        they do not overlap; each bar's tooltip names its own.
    values : sequence of float
        Finite, one per label; negative values hang below zero.
    title, x_label, y_label : str
        The chart's accessible name and the axis titles.
    unit : str
        Follows the value in tooltips: ``"0.80–0.85: 12 workers"`` for ``unit="workers"``.
    description : str
        The accessible description; by default one naming the axes and the number of bars.
    width, height : float
        The SVG's size in user units (it scales with the page).
    chart_id : str, optional
        The element id; by default ``chart-<slug of title>-<counter>``.

    Returns
    -------
    BarChart
    """
    labels = [str(label) for label in labels]
    values = _finite("values", values)
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} values")
    low, high = min([0.0, *values]), max([0.0, *values])
    high = high if high > low else 1.0  # all zero (or no bars): an axis from 0 to 1
    ticks = nice_ticks(low, high, integer=_all_integers(values))
    labelled = list(zip(ticks, _tick_labels(ticks), strict=True))
    left = _left_margin([text for _, text in labelled])
    plot = _plot_box(
        left=left,
        top=12,
        right=width - _bar_right_margin(labels, width - 12 - left),
        bottom=height - 44,
    )
    scale = _Scale((ticks[0], ticks[-1]), (plot.bottom, plot.top))
    band = (plot.right - plot.left) / max(len(values), 1)
    return BarChart(
        id=_chart_id(title, chart_id),
        title=title,
        description=description or f"Bar chart of {y_label} by {x_label}, {len(values)} bars.",
        width=_svg(width),
        height=_svg(height),
        plot=plot,
        x_axis=_x_axis(
            title=x_label,
            ticks=_bar_x_ticks(labels, plot=plot, band=band),
            plot=plot,
            height=height,
        ),
        y_axis=_y_axis(title=y_label, ticks=labelled, scale=scale, plot=plot),
        bars=tuple(_bars(labels, values, scale=scale, plot=plot, band=band, unit=unit)),
        colour=CATEGORICAL[0],
    )


def histogram(
    *,
    values: Sequence[float],
    bins: int | Sequence[float],
    range: tuple[float, float] | None = None,  # the name numpy.histogram gives it
    title: str,
    x_label: str,
    y_label: str = "count",
    unit: str = "",
    description: str = "",
    width: float = 640,
    height: float = 260,
    chart_id: str | None = None,
) -> BarChart:
    """A bar per bin of :func:`numpy.histogram`, labelled by its edges (``"0.50–0.55"``).

    Parameters
    ----------
    values : sequence of float
        Finite values to count.
    bins : int or sequence of float
        The number of equal bins, or their increasing edges.
    range : (float, float), optional
        The outer edges for an ``int`` ``bins``; by default the values' minimum and maximum.
    title, x_label, y_label, unit, description, width, height, chart_id
        As for :func:`bar_chart`.

    Returns
    -------
    BarChart
        ``bars[i].value`` is the count of bin ``i``; as in numpy, the last bin holds its right
        edge.
    """
    counts, edges = np.histogram(_finite("values", values), bins=bins, range=range)
    step = float(np.min(np.diff(edges)))
    texts = [format_number(float(edge), step=step) for edge in edges]
    return bar_chart(
        labels=[f"{low}{_EN_DASH}{high}" for low, high in itertools.pairwise(texts)],
        values=counts.tolist(),
        title=title,
        x_label=x_label,
        y_label=y_label,
        unit=unit,
        description=description,
        width=width,
        height=height,
        chart_id=chart_id,
    )


def count_chart(
    *,
    counts: Sequence[int],
    title: str,
    x_label: str,
    y_label: str = "count",
    unit: str = "",
    description: str = "",
    width: float = 640,
    height: float = 260,
    chart_id: str | None = None,
) -> BarChart:
    """A bar per integer value ``k = 0, 1, …`` of how many items have that value.

    Parameters
    ----------
    counts : sequence of int
        ``counts[k]`` items have the value ``k`` (for example, ``counts[k]`` tasks got ``k``
        workers); the bars are labelled ``"0"``, ``"1"``, …
    title, x_label, y_label, unit, description, width, height, chart_id
        As for :func:`bar_chart`.

    Returns
    -------
    BarChart
    """
    return bar_chart(
        labels=[str(k) for k in range(len(counts))],
        values=counts,
        title=title,
        x_label=x_label,
        y_label=y_label,
        unit=unit,
        description=description,
        width=width,
        height=height,
        chart_id=chart_id,
    )


# --- Line charts ------------------------------------------------------------------------------


def _sorted_points(name: str, points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    pairs = [(float(x), float(y)) for x, y in points]
    if not all(math.isfinite(x) and math.isfinite(y) for x, y in pairs):
        raise ValueError(f"series {name!r} has a point that is not finite")
    return sorted(pairs, key=lambda pair: pair[0])


def _padded_ticks(
    values: Sequence[float], *, count: int = 6
) -> tuple[tuple[float, float], list[tuple[float, str]]]:
    """A data interval 4 % wider than ``values`` at each end, and about ``count`` nice ticks
    inside it."""
    low, high = _widen(min(values, default=0.0), max(values, default=1.0))
    pad = 0.04 * (high - low)
    ticks = nice_ticks(low, high, count=count, integer=_all_integers(values))
    inside = [
        (tick, text)
        for tick, text in zip(ticks, _tick_labels(ticks), strict=True)
        if low - pad <= tick <= high + pad
    ]
    return (low - pad, high + pad), inside


@dataclass(frozen=True, kw_only=True)
class _Style:
    """How a line is drawn apart from its colour: its markers' ``shape`` and ``size`` (a
    circle's radius; the other shapes have about its area), the earlier series it coincides
    with (``same_as``) and its ``dash`` pattern; ``dashed`` for the reference."""

    shape: str
    size: float = 3.5
    same_as: str = ""
    dash: str = ""
    dashed: bool = False


#: The reference's style: small circles on a grey line dashed by charts.css.
_REFERENCE_STYLE = _Style(shape="circle", size=2.5, dashed=True)

#: Corners of each polygon marker around its centre, in units of the marker's size.
_CORNERS = {
    "square": ((-0.89, -0.89), (0.89, -0.89), (0.89, 0.89), (-0.89, 0.89)),
    "triangle": ((0, -1.5), (1.3, 0.75), (-1.3, 0.75)),
    "diamond": ((0, -1.25), (1.25, 0), (0, 1.25), (-1.25, 0)),
    "triangle-down": ((0, 1.5), (1.3, -0.75), (-1.3, -0.75)),
}


def _marker(style: _Style, x: float, y: float) -> str:
    """The SVG path of a marker of ``style`` centred on ``(x, y)``."""
    if style.shape == "circle":
        r, left, right, y = _svg(style.size), _svg(x - style.size), _svg(x + style.size), _svg(y)
        return f"M{left} {y} A{r} {r} 0 1 0 {right} {y} A{r} {r} 0 1 0 {left} {y}Z"
    corners = _CORNERS[style.shape]
    size = style.size
    return (
        "M" + " L".join(f"{_svg(x + dx * size)} {_svg(y + dy * size)}" for dx, dy in corners) + "Z"
    )


def _same_points(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> bool:
    """Whether two sorted series have the same points to within floating-point rounding."""
    return len(a) == len(b) and all(
        math.isclose(xa, xb, rel_tol=1e-9) and math.isclose(ya, yb, rel_tol=1e-9, abs_tol=1e-12)
        for (xa, ya), (xb, yb) in zip(a, b, strict=True)
    )


def _series_styles(lines: Sequence[tuple[str, str, list[tuple[float, float]]]]) -> list[_Style]:
    """Each series' :class:`_Style`: the next of :data:`MARKERS`, and for one with the points
    of an earlier series the first such one's name and the next of the coinciding dashes."""
    styles, coinciding = [], 0
    for i, (_, _, points) in enumerate(lines):
        same = (name for name, _, other in lines[:i] if points and _same_points(points, other))
        same_as = next(same, "")
        dash = _COINCIDING_DASHES[coinciding % len(_COINCIDING_DASHES)] if same_as else ""
        coinciding += bool(same_as)
        styles.append(_Style(shape=MARKERS[i % len(MARKERS)], same_as=same_as, dash=dash))
    return styles


def _legend(
    keys: Sequence[tuple[str, str, _Style]], *, left: float, right: float, top: float
) -> tuple[tuple[LegendEntry, ...], float]:
    """Legend entries for ``(name, colour, style)`` in rows from ``top``; and the rows'
    bottom. A series that coincides with an earlier one says so: "b (same as a)"."""
    x, y, entries = left, top + 8, []
    for name, colour, style in keys:
        text = f"{name} (same as {style.same_as})" if style.same_as else name
        text = _shorten(text, limit=_LEGEND_CHARS)
        size = 26 + _text_width(text) + 18
        if x > left and x + size > right:
            x, y = left, y + 18
        entries.append(
            LegendEntry(
                name=name,
                colour=colour,
                dashed=style.dashed,
                swatch=Segment(x1=_svg(x), y1=_svg(y), x2=_svg(x + 20), y2=_svg(y)),
                label=Label(text=text, x=_svg(x + 26), y=_svg(y + 4), anchor="start"),
                dash=style.dash,
                marker="" if style.dashed else _marker(style, x + 10, y),
                hollow=bool(style.same_as),
            )
        )
        x += size
    return tuple(entries), (y + 8 if entries else top)


def _line_series(
    name: str,
    colour: str,
    points: Sequence[tuple[float, float]],
    style: _Style,
    *,
    x: _Scale,
    y: _Scale,
) -> LineSeries:
    drawn = tuple(
        Point(
            px=_svg(x(px)),
            py=_svg(y(py)),
            x=px,
            y=py,
            tooltip=f"{name} — {format_number(px)}: {format_number(py)}",
            marker=_marker(style, x(px), y(py)),
        )
        for px, py in points
    )
    path = "M" + " L".join(f"{point.px} {point.py}" for point in drawn) if drawn else ""
    return LineSeries(
        name=name,
        colour=colour,
        path=path,
        points=drawn,
        marker=style.shape,
        same_as=style.same_as,
        dash=style.dash,
    )


def _line_description(x_label: str, y_label: str, drawn: Sequence[LineSeries], count: int) -> str:
    names = ", ".join(line.name for line in drawn[:count]) or "no series"
    same = "".join(
        f"; {line.name} is the same as {line.same_as}" for line in drawn[:count] if line.same_as
    )
    text = f"Line chart of {y_label} against {x_label}: {names}{same}"
    return f"{text}; dashed: {drawn[count].name}." if len(drawn) > count else f"{text}."


def _x_tick_count(width: float) -> int:
    """The x steps aimed at, about one per 56 units of chart from 3 to 6: six on the default
    640 units, five on a phone's :data:`NARROW_WIDTH` (labels of five characters keep apart)."""
    return max(3, min(6, int((width - 80) / 56)))


def line_chart(
    *,
    series: Mapping[str, Sequence[tuple[float, float]]],
    title: str,
    x_label: str,
    y_label: str,
    reference: tuple[str, Sequence[tuple[float, float]]] | None = None,
    description: str = "",
    width: float = 640,
    height: float = 320,
    chart_id: str | None = None,
) -> LineChart:
    """Lines through ``(x, y)`` points, one per series, with a legend above the plot.

    Parameters
    ----------
    series : mapping of str to sequence of (float, float)
        Each name's finite points, in any order (they are joined by increasing x). A series
        with one point shows just that point; an empty one only its legend entry. Colours
        follow :data:`CATEGORICAL` in the mapping's order (and repeat after eight series),
        marker shapes :data:`MARKERS`. A series with the points of an earlier one (to within
        floating-point rounding: two methods of the same accuracy at every x) is drawn over it
        dashed, with hollow markers, and its legend entry and the description say "same as"
        the earlier one, so that neither hides the other.
    title, x_label, y_label : str
        The chart's accessible name and the axis titles.
    reference : (str, sequence of (float, float)), optional
        A named series drawn dashed grey under the others, for example an upper bound.
    description : str
        The accessible description; by default one naming the axes and the series.
    width, height : float
        The SVG's size in user units (it scales with the page).
    chart_id : str, optional
        The element id; by default ``chart-<slug of title>-<counter>``.

    Returns
    -------
    LineChart
        Both axes span the data plus 4 % at each end (a range around a single value when all
        are equal), with nice ticks inside.
    """
    lines = [
        (str(name), CATEGORICAL[i % len(CATEGORICAL)], _sorted_points(str(name), points))
        for i, (name, points) in enumerate(series.items())
    ]
    styles = _series_styles(lines)
    if reference is not None:
        name = str(reference[0])
        lines.append((name, REFERENCE, _sorted_points(name, reference[1])))
        styles.append(_REFERENCE_STYLE)
    count = len(series)  # lines[count], if any, is the reference
    x_domain, x_ticks = _padded_ticks(
        [x for *_, points in lines for x, _ in points], count=_x_tick_count(width)
    )
    y_domain, y_ticks = _padded_ticks([y for *_, points in lines for _, y in points])
    left = _left_margin([text for _, text in y_ticks])
    legend, legend_bottom = _legend(
        [(name, colour, style) for (name, colour, _), style in zip(lines, styles, strict=True)],
        left=left,
        right=width - 12,
        top=4,
    )
    widest = max((_text_width(text) for _, text in x_ticks), default=0)
    plot = _plot_box(
        left=left, top=legend_bottom + 12, right=width - max(12, widest / 2 + 4), bottom=height - 44
    )
    x = _Scale(x_domain, (plot.left, plot.right))
    y = _Scale(y_domain, (plot.bottom, plot.top))
    drawn = [
        _line_series(*line, style, x=x, y=y) for line, style in zip(lines, styles, strict=True)
    ]
    return LineChart(
        id=_chart_id(title, chart_id),
        title=title,
        description=description or _line_description(x_label, y_label, drawn, count),
        width=_svg(width),
        height=_svg(height),
        plot=plot,
        x_axis=_x_axis(
            title=x_label,
            ticks=[_x_tick(text=text, x=x(tick), plot=plot, grid=True) for tick, text in x_ticks],
            plot=plot,
            height=height,
        ),
        y_axis=_y_axis(title=y_label, ticks=y_ticks, scale=y, plot=plot),
        series=tuple(drawn[:count]),
        reference=drawn[count] if len(drawn) > count else None,
        legend=legend,
    )


# --- Two widths -------------------------------------------------------------------------------

#: The width in SVG units of a chart drawn for a phone: about its screen's width in CSS pixels,
#: so that the text keeps its 12 px there (a 640-unit chart shrunk to a phone has 6 px text).
NARROW_WIDTH = 360


@dataclass(frozen=True, kw_only=True)
class Responsive:
    """One chart drawn twice: ``wide`` for a screen wider than a phone's, ``narrow`` (drawn at
    :data:`NARROW_WIDTH`, its id ending in ``-narrow``) for a phone's.
    ``charts/responsive.html`` prints both and ``charts.css`` shows one by the screen's width.
    """

    wide: BarChart | LineChart
    narrow: BarChart | LineChart

    @property
    def template(self) -> str:
        """The template of one chart of the pair."""
        return (
            "charts/line_chart.html"
            if isinstance(self.wide, LineChart)
            else "charts/bar_chart.html"
        )

    @property
    def title(self) -> str:
        return self.wide.title


def responsive(draw, /, *, chart_id: str, **arguments) -> Responsive:
    """``draw(**arguments)`` (:func:`bar_chart`, :func:`count_chart`, :func:`histogram` or
    :func:`line_chart`) at its default width as ``chart_id`` and at :data:`NARROW_WIDTH` as
    ``chart_id + "-narrow"``."""
    return Responsive(
        wide=draw(chart_id=chart_id, **arguments),
        narrow=draw(chart_id=f"{chart_id}-narrow", width=NARROW_WIDTH, **arguments),
    )


# --- Heat maps --------------------------------------------------------------------------------


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def sequential_colour(fraction: float) -> str:
    """The colour ``fraction`` of the way along :data:`SEQUENTIAL` (light = low, dark = high).

    Parameters
    ----------
    fraction : float
        Clipped to [0, 1]; NaN gives :data:`NO_DATA`.

    Returns
    -------
    str
        ``"#rrggbb"``, linearly interpolated between the two nearest anchors.
    """
    if math.isnan(fraction):
        return NO_DATA
    position = min(max(fraction, 0.0), 1.0) * (len(SEQUENTIAL) - 1)
    index = min(int(position), len(SEQUENTIAL) - 2)
    share = position - index
    pairs = zip(_rgb(SEQUENTIAL[index]), _rgb(SEQUENTIAL[index + 1]), strict=True)
    return "#" + "".join(f"{round(a + (b - a) * share):02x}" for a, b in pairs)


def _colour_scale(
    grid: np.ndarray, vmin: float | None, vmax: float | None
) -> tuple[float, float, list[tuple[float, str]]]:
    """The scale's ends and its labelled ticks; a missing end is the data's, rounded to a tick."""
    known = grid[~np.isnan(grid)]
    low = (float(known.min()) if known.size else 0.0) if vmin is None else float(vmin)
    high = (float(known.max()) if known.size else 1.0) if vmax is None else float(vmax)
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise ValueError(f"the colour scale needs finite vmin <= vmax, got {low!r} and {high!r}")
    ticks = nice_ticks(low, high)
    low = ticks[0] if vmin is None else low
    high = ticks[-1] if vmax is None else high
    slack = 1e-9 * max(high - low, 1.0)
    labelled = zip(ticks, _tick_labels(ticks), strict=True)
    return low, high, [(t, text) for t, text in labelled if low - slack <= t <= high + slack]


def _cells(
    rows: Sequence[str],
    columns: Sequence[str],
    grid: np.ndarray,
    *,
    left: float,
    top: float,
    size: float,
    vmin: float,
    vmax: float,
) -> tuple[Cell, ...]:
    cells = []
    for (i, j), item in np.ndenumerate(grid):
        value = float(item)
        if math.isnan(value):
            fraction, text = math.nan, "no data"
        else:
            fraction, text = (value - vmin) / (vmax - vmin) if vmax > vmin else 0.5, None
        cells.append(
            Cell(
                x=_svg(left + j * size),
                y=_svg(top + i * size),
                width=_svg(size),
                height=_svg(size),
                row=rows[i],
                column=columns[j],
                value=value,
                fill=sequential_colour(fraction),
                tooltip=f"{rows[i]} {_TIMES} {columns[j]}: {text or format_number(value)}",
            )
        )
    return tuple(cells)


def _column_labels(
    texts: Sequence[str], *, left: float, top: float, size: float, turned: bool
) -> tuple[tuple[Label, ...], float]:
    """Column names above the grid, turned 45° if any is wider than a cell; and their right end."""
    labels, right = [], left
    for j, text in enumerate(texts):
        centre = left + (j + 0.5) * size
        if turned:
            label = Label(text=text, x=_svg(centre + 3), y=_svg(top - 6), anchor="start", angle=-45)
            right = max(right, centre + 3 + 0.71 * _text_width(text))
        else:
            label = Label(text=text, x=_svg(centre), y=_svg(top - 6))
            right = max(right, centre + _text_width(text) / 2)
        labels.append(label)
    return tuple(labels), right


def _colour_legend(
    *,
    left: float,
    top: float,
    vmin: float,
    vmax: float,
    ticks: Sequence[tuple[float, str]],
    no_data: bool,
) -> tuple[ColourLegend, float, float]:
    """The gradient bar from ``vmin`` to ``vmax`` with tick labels, and a no-data key if asked.

    Returns the legend, its right end and its bottom.
    """
    bar = Rect(x=_svg(left), y=_svg(top), width=_LEGEND_WIDTH, height=10)
    if vmax > vmin:
        scale = _Scale((vmin, vmax), (left, left + bar.width))
    else:  # a single value: it is in the middle of the scale, as in the cells
        scale = _Scale((vmin - 1, vmin + 1), (left, left + bar.width))
    last = len(SEQUENTIAL) - 1
    stops = tuple(
        GradientStop(offset=_svg(100 * i / last), colour=colour)
        for i, colour in enumerate(SEQUENTIAL)
    )
    labels = tuple(
        Label(text=text, x=_svg(scale(tick)), y=_svg(top + bar.height + 14)) for tick, text in ticks
    )
    right = max([left + bar.width, *(label.x + _text_width(label.text) / 2 for label in labels)])
    key = key_label = None
    if no_data:
        key = Rect(x=_svg(right + 20), y=bar.y, width=10, height=10)
        key_label = Label(text="no data", x=_svg(key.x + 16), y=_svg(top + 9), anchor="start")
        right = key_label.x + _text_width(key_label.text)
    legend = ColourLegend(bar=bar, stops=stops, labels=labels, no_data=key, no_data_label=key_label)
    return legend, right, top + bar.height + 18


def heat_map(
    *,
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float]] | np.ndarray,
    title: str,
    description: str = "",
    vmin: float | None = None,
    vmax: float | None = None,
    cell_size: float = 20,
    chart_id: str | None = None,
) -> HeatMap:
    """A grid of cells coloured by value, light (low) to dark (high), with a colour legend below.

    Parameters
    ----------
    rows, columns : sequence of str
        The row names (left of the grid) and column names (above it, turned 45° when wider
        than a cell). Names longer than 24 characters are shortened on the chart; tooltips
        keep them whole.
    values : array-like of float, shape (len(rows), len(columns))
        NaN marks a cell without data (grey, tooltip "no data"); infinities are refused.
    title : str
        The chart's accessible name.
    description : str
        The accessible description; by default one giving the size and the colour scale.
    vmin, vmax : float, optional
        The values at the light and the dark end of the scale (others are clipped); by default
        the smallest and largest value, rounded out to nice ticks (0.03 and 0.97 give 0 and 1).
    cell_size : float
        A cell's side in SVG units; the SVG grows with the number of rows and columns.
    chart_id : str, optional
        The element id; by default ``chart-<slug of title>-<counter>``.

    Returns
    -------
    HeatMap
    """
    rows, columns = [str(row) for row in rows], [str(column) for column in columns]
    grid = np.asarray(values, dtype=float)
    if grid.shape != (len(rows), len(columns)):
        raise ValueError(f"values has shape {grid.shape}, not ({len(rows)}, {len(columns)})")
    if np.isinf(grid).any():
        raise ValueError("values must be finite or NaN")
    vmin, vmax, ticks = _colour_scale(grid, vmin, vmax)
    row_texts, column_texts = [_shorten(row) for row in rows], [_shorten(col) for col in columns]
    left = 16 + max(map(_text_width, row_texts), default=0)
    widest = max(map(_text_width, column_texts), default=0)
    turned = widest > cell_size - 4
    top = 0.71 * widest + 20 if turned else _FONT_SIZE + 12
    column_labels, labels_right = _column_labels(
        column_texts, left=left, top=top, size=cell_size, turned=turned
    )
    legend, legend_right, bottom = _colour_legend(
        left=left,
        top=top + len(rows) * cell_size + 16,
        vmin=vmin,
        vmax=vmax,
        ticks=ticks,
        no_data=bool(np.isnan(grid).any()),
    )
    return HeatMap(
        id=_chart_id(title, chart_id),
        title=title,
        description=description
        or f"Heat map of {len(rows)} rows by {len(columns)} columns; darker cells are higher, "
        f"from {format_number(vmin)} to {format_number(vmax)}.",
        width=_svg(max(left + len(columns) * cell_size, labels_right, legend_right) + 8),
        height=_svg(bottom + 8),
        cells=_cells(rows, columns, grid, left=left, top=top, size=cell_size, vmin=vmin, vmax=vmax),
        row_labels=tuple(
            Label(
                text=text, x=_svg(left - 8), y=_svg(top + (i + 0.5) * cell_size + 4), anchor="end"
            )
            for i, text in enumerate(row_texts)
        ),
        column_labels=column_labels,
        legend=legend,
        vmin=vmin,
        vmax=vmax,
    )
