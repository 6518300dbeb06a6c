"""Chart geometry for server-rendered SVG (no chart CDN). Pure: no Django.

Crawled text is hostile: these functions return *data* for templates, never markup. Labels, titles
and notes are plain strings the template escapes; every coordinate is a float rounded to
``DECIMALS`` places and the polyline is built only from numbers formatted with a fixed
number of decimals ("12.50,30.00 14.00,28.25"), so both are safe in an SVG attribute.
All geometry lies inside the viewport (0..width, 0..height). Empty input gives a chart
with no bars, no polyline and no ticks, never an error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from reviews.core.calibration_math import Row
from reviews.core.words import Said, gettext_noop

DECIMALS = 2

# Plot margins in px: room for y tick labels on the left, x tick labels below.
LEFT, RIGHT, TOP, BOTTOM = 40, 10, 10, 30


@dataclass(frozen=True)
class Bar:
    x: float
    y: float  # top edge (SVG y grows downward)
    width: float
    height: float
    label: str  # e.g. "distance 3 · duplicate: 12", for a <title> tooltip
    value: float
    series: str


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    label: str  # e.g. "threshold 3: precision 0.990, recall 0.870"


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    polyline: str  # "x1,y1 x2,y2 …": numbers only
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    series: list[str]
    title: str
    markers: list[Marker] = field(default_factory=list)
    note: str = ""  # e.g. what was left out of the chart
    # Vertical guide lines (x, label), e.g. a suggested threshold.
    guides: list[tuple[float, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.bars and not self.polyline

    @property
    def plot(self) -> tuple[float, float, float, float]:
        """The plot area as (left, top, right, bottom), for axes and gridlines."""
        return (float(LEFT), float(TOP), float(self.width - RIGHT), float(self.height - BOTTOM))


def _r(value: float) -> float:
    return round(value, DECIMALS)


def _plot_area(width: int, height: int) -> tuple[float, float, float, float]:
    if width - LEFT - RIGHT <= 0 or height - TOP - BOTTOM <= 0:
        raise ValueError(f"chart {width}x{height} leaves no room for the plot")
    return float(LEFT), float(TOP), float(width - RIGHT), float(height - BOTTOM)


def _nice_step(top: float, ticks: int = 4) -> int:
    """An integer step of 1, 2 or 5 × 10^k giving about `ticks` gridlines up to `top`."""
    raw = max(top / ticks, 1.0)
    magnitude = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * magnitude >= raw:
            return int(m * magnitude)
    return int(10 * magnitude)  # pragma: no cover - the loop always returns


def histogram(
    distances_by_label: dict[str, list[int]],
    *,
    max_distance: int,
    width: int = 480,
    height: int = 200,
) -> Chart:
    """Grouped bars: for each distance 0..max_distance one bar per label with a count > 0.
    Series keep the dict's order; distances outside 0..max_distance are counted in `note`."""
    if max_distance < 0:
        raise ValueError(f"max_distance must be >= 0, got {max_distance}")
    left, top, right, bottom = _plot_area(width, height)
    title = gettext_noop("Distance by label")
    counts: dict[str, dict[int, int]] = {}
    dropped = 0
    for label, distances in distances_by_label.items():
        per: dict[int, int] = {}
        for d in distances:
            if 0 <= d <= max_distance:
                per[d] = per.get(d, 0) + 1
            else:
                dropped += 1
        counts[label] = per
    note = (
        Said(
            gettext_noop("%(dropped)s outside distance 0–%(max)s, not shown"),
            dropped=dropped,
            max=max_distance,
        )
        if dropped
        else ""
    )
    peak = max((c for per in counts.values() for c in per.values()), default=0)
    if peak == 0:
        return Chart(width, height, [], "", [], [], list(counts), title, note=note)

    step = _nice_step(peak)
    y_max = step * math.ceil(peak / step)
    series = list(counts)
    slot = (right - left) / (max_distance + 1)
    gap = slot * 0.15  # space between distance groups
    bar_w = (slot - gap) / len(series)
    bars: list[Bar] = []
    for d in range(max_distance + 1):
        for i, label in enumerate(series):
            value = counts[label].get(d, 0)
            if value == 0:
                continue
            h = (bottom - top) * value / y_max
            bars.append(
                Bar(
                    x=_r(left + d * slot + gap / 2 + i * bar_w),
                    y=_r(bottom - h),
                    width=_r(bar_w),
                    height=_r(h),
                    label=f"distance {d} · {label}: {value}",
                    value=float(value),
                    series=label,
                )
            )
    every = max(1, math.ceil((max_distance + 1) / 17))  # at most ~17 labels on the x axis
    x_ticks = [(_r(left + (d + 0.5) * slot), str(d)) for d in range(0, max_distance + 1, every)]
    y_ticks = [(_r(bottom - (bottom - top) * v / y_max), str(v)) for v in range(0, y_max + 1, step)]
    return Chart(width, height, bars, "", x_ticks, y_ticks, series, title, note=note)


def pr_curve(rows: Sequence[Row], *, width: int = 320, height: int = 240) -> Chart:
    """Polyline of (recall, precision) in threshold order; x = recall, y = precision, both
    0..1. Rows whose precision or recall is None are skipped."""
    left, top, right, bottom = _plot_area(width, height)
    title = gettext_noop("Precision against recall, by threshold")
    points = [
        r
        for r in sorted(rows, key=lambda r: r.threshold)
        if r.precision is not None and r.recall is not None
    ]
    if not points:
        return Chart(width, height, [], "", [], [], [], title)

    def xy(r: Row) -> tuple[float, float]:
        # Clamp: a ratio is in [0, 1] by construction, but never draw outside the plot.
        recall = min(max(r.recall or 0.0, 0.0), 1.0)
        precision = min(max(r.precision or 0.0, 0.0), 1.0)
        return left + (right - left) * recall, bottom - (bottom - top) * precision

    coords = [xy(r) for r in points]
    polyline = " ".join(f"{x:.{DECIMALS}f},{y:.{DECIMALS}f}" for x, y in coords)
    markers = [
        Marker(
            _r(x),
            _r(y),
            f"threshold {r.threshold}: precision {r.precision:.3f}, recall {r.recall:.3f}",
        )
        for r, (x, y) in zip(points, coords, strict=True)
    ]
    fractions = [(0.0, "0"), (0.25, "0.25"), (0.5, "0.5"), (0.75, "0.75"), (1.0, "1")]
    x_ticks = [(_r(left + (right - left) * f), text) for f, text in fractions]
    y_ticks = [(_r(bottom - (bottom - top) * f), text) for f, text in fractions]
    return Chart(width, height, [], polyline, x_ticks, y_ticks, [], title, markers=markers)


def timeline(
    points: Sequence[tuple[str, float | None]],
    *,
    title: str,
    bars: bool = True,
    percent: bool = False,
    width: int = 480,
    height: int = 160,
) -> Chart:
    """One value per day (or any ordered label): bars, or a polyline with a marker per
    point. None values are gaps (no bar, no marker; the line joins its neighbours).
    ``percent`` reads values as shares (0..1) and labels the y axis 0–100 %."""
    left, top, right, bottom = _plot_area(width, height)
    known = [(i, v) for i, (_, v) in enumerate(points) if v is not None]
    if not known:
        return Chart(width, height, [], "", [], [], [], title)
    peak = max(v for _, v in known)
    if percent:
        y_max: float = 1.0
        y_ticks = [
            (_r(bottom - (bottom - top) * f), f"{f:.0%}") for f in (0.0, 0.25, 0.5, 0.75, 1.0)
        ]
    else:
        step = _nice_step(max(peak, 1.0))
        y_max = float(step * max(math.ceil(peak / step), 1))
        y_ticks = [
            (_r(bottom - (bottom - top) * v / y_max), str(v))
            for v in range(0, int(y_max) + 1, step)
        ]
    slot = (right - left) / len(points)

    def y_of(value: float) -> float:
        return bottom - (bottom - top) * min(max(value / y_max, 0.0), 1.0)

    out_bars: list[Bar] = []
    markers: list[Marker] = []
    coords: list[tuple[float, float]] = []
    for i, value in known:
        label = f"{points[i][0]}: " + (f"{value:.1%}" if percent else f"{value:g}")
        if bars:
            y = y_of(value)
            out_bars.append(
                Bar(
                    x=_r(left + i * slot + slot * 0.1),
                    y=_r(y),
                    width=_r(slot * 0.8),
                    height=_r(bottom - y),
                    label=label,
                    value=float(value),
                    series="value",
                )
            )
        else:
            x, y = left + (i + 0.5) * slot, y_of(value)
            coords.append((x, y))
            markers.append(Marker(_r(x), _r(y), label))
    polyline = " ".join(f"{x:.{DECIMALS}f},{y:.{DECIMALS}f}" for x, y in coords)
    every = max(1, math.ceil(len(points) / 7))
    x_ticks = [(_r(left + (i + 0.5) * slot), points[i][0]) for i in range(0, len(points), every)]
    return Chart(width, height, out_bars, polyline, x_ticks, y_ticks, [], title, markers=markers)


def shares(
    counts_by_series: dict[str, Sequence[int]],
    *,
    bin_labels: Sequence[str],
    title: str,
    guide: tuple[int, str] | None = None,
    width: int = 480,
    height: int = 200,
) -> Chart:
    """Grouped bars, one bin per ``bin_labels`` entry: each series as its share of its own
    total (0–100 %), so a small series (candidate pairs) reads beside a large one (random
    pairs). ``guide`` = (bin, label) draws a vertical line through that bin's middle.
    Empty series are left out of the bars but kept in the legend."""
    n = len(bin_labels)
    if n == 0:
        raise ValueError("no bins")
    for name, counts in counts_by_series.items():
        if len(counts) != n:
            raise ValueError(f"series {name!r} has {len(counts)} bins, expected {n}")
        if any(c < 0 for c in counts):
            raise ValueError(f"series {name!r} has a negative count")
    left, top, right, bottom = _plot_area(width, height)
    series = list(counts_by_series)
    totals = {s: sum(c) for s, c in counts_by_series.items()}
    drawn = [s for s in series if totals[s] > 0]
    if not drawn:
        return Chart(width, height, [], "", [], [], series, title)
    peak = max(c / totals[s] for s in drawn for c in counts_by_series[s])
    y_max = min(1.0, math.ceil(peak * 10) / 10) or 0.1
    slot = (right - left) / n
    gap = slot * 0.15
    bar_w = (slot - gap) / len(drawn)
    bars: list[Bar] = []
    for i in range(n):
        for j, name in enumerate(drawn):
            count = counts_by_series[name][i]
            if count == 0:
                continue
            share = count / totals[name]
            h = (bottom - top) * min(share / y_max, 1.0)
            bars.append(
                Bar(
                    x=_r(left + i * slot + gap / 2 + j * bar_w),
                    y=_r(bottom - h),
                    width=_r(bar_w),
                    height=_r(h),
                    label=f"{bin_labels[i]} · {name}: {count} ({share:.1%})",
                    value=float(count),
                    series=name,
                )
            )
    every = max(1, math.ceil(n / 13))
    x_ticks = [(_r(left + (i + 0.5) * slot), bin_labels[i]) for i in range(0, n, every)]
    steps = 4
    y_ticks = [
        (_r(bottom - (bottom - top) * k / steps), f"{y_max * k / steps:.0%}")
        for k in range(steps + 1)
    ]
    guides = []
    if guide is not None and 0 <= guide[0] < n:
        guides.append((_r(left + (guide[0] + 0.5) * slot), guide[1]))
    return Chart(width, height, bars, "", x_ticks, y_ticks, series, title, guides=guides)
