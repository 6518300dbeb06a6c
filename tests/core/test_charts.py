"""reviews.core.charts: SVG geometry as data; inside the viewport; numbers-only polyline."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviews.core import charts
from reviews.core.calibration_math import Row
from reviews.core.charts import Chart, histogram, pr_curve, timeline

NUMBERS_ONLY = re.compile(r"^(-?\d+\.\d{2},-?\d+\.\d{2})( -?\d+\.\d{2},-?\d+\.\d{2})*$")
LABELS = st.sampled_from(["duplicate", "near_duplicate", "distinct", "<b>x</b>"])
DISTANCES = st.dictionaries(LABELS, st.lists(st.integers(-2, 20), max_size=40), max_size=4)
SIZES = st.tuples(st.integers(60, 900), st.integers(50, 600))


def row(t: int, precision: float | None, recall: float | None) -> Row:
    return Row(t, 0, 0, 0, 0, precision, recall, None, 0)


def assert_inside(chart: Chart) -> None:
    eps = 0.011  # rounding to 2 decimals
    for b in chart.bars:
        assert b.width > 0 and b.height > 0
        assert b.x >= 0 and b.x + b.width <= chart.width + eps
        assert b.y >= 0 and b.y + b.height <= chart.height + eps
    for x, _ in chart.x_ticks:
        assert 0 <= x <= chart.width
    for y, _ in chart.y_ticks:
        assert 0 <= y <= chart.height
    for m in chart.markers:
        assert 0 <= m.x <= chart.width and 0 <= m.y <= chart.height
    for point in chart.polyline.split():
        x, y = map(float, point.split(","))
        assert 0 <= x <= chart.width and 0 <= y <= chart.height


# --- histogram -------------------------------------------------------------------------


def test_one_bar_per_distance_and_label_present() -> None:
    chart = histogram({"duplicate": [0, 0, 1], "distinct": [1, 5]}, max_distance=6)
    assert sorted((b.series, b.value, b.label) for b in chart.bars) == [
        ("distinct", 1.0, "distance 1 · distinct: 1"),
        ("distinct", 1.0, "distance 5 · distinct: 1"),
        ("duplicate", 1.0, "distance 1 · duplicate: 1"),
        ("duplicate", 2.0, "distance 0 · duplicate: 2"),
    ]
    assert chart.series == ["duplicate", "distinct"]
    assert [text for _, text in chart.x_ticks] == ["0", "1", "2", "3", "4", "5", "6"]
    assert_inside(chart)


def test_hand_computed_histogram_geometry() -> None:
    # plot area x 40..90, y 10..110; one distance slot of 50px, 15% gap, one series
    chart = histogram({"duplicate": [0, 0]}, max_distance=0, width=100, height=140)
    (bar,) = chart.bars
    assert (bar.x, bar.y, bar.width, bar.height) == (43.75, 10.0, 42.5, 100.0)
    assert chart.y_ticks == [(110.0, "0"), (60.0, "1"), (10.0, "2")]
    assert chart.x_ticks == [(65.0, "0")]


def test_taller_bar_for_the_larger_count() -> None:
    chart = histogram({"duplicate": [2, 2, 2, 3]}, max_distance=4)
    by_distance = {b.label: b for b in chart.bars}
    high, low = by_distance["distance 2 · duplicate: 3"], by_distance["distance 3 · duplicate: 1"]
    assert high.height == pytest.approx(3 * low.height, abs=0.02)
    assert high.y + high.height == pytest.approx(low.y + low.height)  # same baseline


def test_distances_out_of_range_are_noted_not_drawn() -> None:
    chart = histogram({"duplicate": [1, 30, -1]}, max_distance=4)
    assert len(chart.bars) == 1
    assert chart.note == "2 outside distance 0–4, not shown"


@pytest.mark.parametrize("data", [{}, {"duplicate": []}, {"duplicate": [50]}])
def test_empty_histogram(data: dict[str, list[int]]) -> None:
    chart = histogram(data, max_distance=8)
    assert chart.empty and chart.bars == [] and chart.polyline == ""
    assert chart.x_ticks == [] and chart.y_ticks == []


def test_labels_stay_plain_text_for_the_template_to_escape() -> None:
    chart = histogram({"<b>x</b>": [1]}, max_distance=2)
    assert chart.series == ["<b>x</b>"] and chart.bars[0].series == "<b>x</b>"


def test_too_small_a_viewport_is_refused() -> None:
    with pytest.raises(ValueError):
        histogram({"duplicate": [1]}, max_distance=2, width=40, height=40)


@given(DISTANCES, st.integers(0, 64), SIZES)
def test_histogram_stays_inside_the_viewport(
    data: dict[str, list[int]], max_distance: int, size: tuple[int, int]
) -> None:
    chart = histogram(data, max_distance=max_distance, width=size[0], height=size[1])
    assert_inside(chart)
    present = {(d, label) for label, ds in data.items() for d in ds if 0 <= d <= max_distance}
    assert len(chart.bars) == len(present)


# --- precision / recall curve ----------------------------------------------------------


def test_hand_computed_pr_curve() -> None:
    # plot area x 40..90 (50px), y 10..110 (100px)
    rows = [row(0, None, 0.0), row(1, 1.0, 0.5), row(2, 0.5, 1.0), row(3, None, None)]
    chart = pr_curve(rows, width=100, height=140)
    assert chart.polyline == "65.00,10.00 90.00,60.00"
    assert [m.label for m in chart.markers] == [
        "threshold 1: precision 1.000, recall 0.500",
        "threshold 2: precision 0.500, recall 1.000",
    ]
    assert chart.x_ticks[0] == (40.0, "0") and chart.x_ticks[-1] == (90.0, "1")
    assert chart.y_ticks[0] == (110.0, "0") and chart.y_ticks[-1] == (10.0, "1")


def test_pr_curve_follows_threshold_order() -> None:
    chart = pr_curve([row(2, 0.5, 1.0), row(1, 1.0, 0.5)], width=100, height=140)
    assert chart.polyline == "65.00,10.00 90.00,60.00"


@pytest.mark.parametrize("rows", [[], [row(0, None, None), row(1, None, 0.0)]])
def test_empty_pr_curve(rows: list[Row]) -> None:
    chart = pr_curve(rows)
    assert chart.empty and chart.polyline == "" and chart.markers == []


UNIT = st.one_of(st.none(), st.floats(0, 1))


@given(st.lists(st.tuples(UNIT, UNIT), max_size=20), SIZES)
def test_pr_curve_is_numbers_only_and_inside(
    values: list[tuple[float | None, float | None]], size: tuple[int, int]
) -> None:
    rows = [row(t, p, r) for t, (p, r) in enumerate(values)]
    chart = pr_curve(rows, width=size[0], height=size[1])
    drawn = sum(p is not None and r is not None for p, r in values)
    assert len(chart.markers) == drawn
    if drawn:
        assert NUMBERS_ONLY.match(chart.polyline)
    else:
        assert chart.polyline == ""
    assert_inside(chart)


def test_timeline_bars_skip_gaps_and_stay_inside() -> None:
    chart = timeline([("05-01", 3), ("05-02", None), ("05-03", 10)], title="docs")
    assert [b.value for b in chart.bars] == [3.0, 10.0]
    for b in chart.bars:
        assert b.x >= 0 and b.x + b.width <= chart.width
        assert b.y >= 0 and b.y + b.height <= chart.height


def test_timeline_line_of_shares_has_a_percent_axis() -> None:
    chart = timeline([("a", 0.1), ("b", 0.5)], title="share", bars=False, percent=True)
    assert not chart.bars and len(chart.markers) == 2
    assert chart.y_ticks[-1][1] == "100%"
    assert chart.markers[1].y < chart.markers[0].y  # higher share is higher up


def test_timeline_of_nothing_is_empty() -> None:
    assert timeline([("a", None)], title="x").empty


def test_shares_put_a_small_series_beside_a_large_one_with_the_guide_inside() -> None:
    big = [0, 0, 10, 500, 490]
    small = [3, 1, 0, 0, 0]
    chart = charts.shares(
        {"random": big, "candidates": small},
        bin_labels=["0", "1", "2", "3", "4"],
        title="t",
        guide=(2, "valley"),
    )
    by_series: dict[str, list[charts.Bar]] = {b.series: [] for b in chart.bars}
    for b in chart.bars:
        by_series[b.series].append(b)
    # Shares, not counts: the 3-of-4 candidate bar is taller than the 500-of-1000 one.
    tallest_small = max(by_series["candidates"], key=lambda b: b.height)
    tallest_big = max(by_series["random"], key=lambda b: b.height)
    assert tallest_small.height > tallest_big.height
    left, top, right, bottom = chart.plot
    for b in chart.bars:
        assert left <= b.x and b.x + b.width <= right + 0.01
        assert top - 0.01 <= b.y and b.y + b.height <= bottom + 0.01
    ((x, label),) = chart.guides
    assert left < x < right and label == "valley"
    assert chart.y_ticks[-1][1] == "80%"


def test_shares_of_nothing_draw_nothing_and_bad_bins_raise() -> None:
    empty = charts.shares({"random": [0, 0]}, bin_labels=["a", "b"], title="t")
    assert empty.empty and empty.series == ["random"]
    with pytest.raises(ValueError):
        charts.shares({"random": [1]}, bin_labels=["a", "b"], title="t")
