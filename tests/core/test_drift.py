"""Drift rules (ingest/core/drift.py): quantiles, baselines and the three alerts."""

from datetime import date, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.core import drift
from ingest.core.drift import DayStats, Thresholds

DAY = date(2026, 5, 10)
T = Thresholds(min_documents=10)


def history(site: str = "a.example", days: int = 7, **kw: float) -> list[DayStats]:
    base: dict[str, Any] = {
        "documents": 40,
        "empty": 2,
        "blocked": 0,
        "with_text": 38,
        "p10": 150.0,
    }
    base |= {"p50": 200.0, "p90": 260.0} | kw
    return [DayStats(day=DAY - timedelta(days=i), site=site, **base) for i in range(1, days + 1)]


def test_quantile_interpolates_between_order_statistics() -> None:
    assert drift.quantile([1, 2, 3, 4], 0.5) == 2.5
    assert drift.quantile([10], 0.9) == 10
    assert drift.quantile([], 0.5) is None
    assert drift.quantiles([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]) == (10, 50, 90)


@given(st.lists(st.integers(0, 10_000), min_size=1), st.floats(0, 1))
def test_quantile_lies_within_the_values(values: list[int], q: float) -> None:
    result = drift.quantile(values, q)
    assert result is not None
    assert min(values) <= result <= max(values)


def test_quantile_rejects_q_outside_unit_interval() -> None:
    with pytest.raises(ValueError):
        drift.quantile([1], 1.5)


def test_normal_day_gives_no_alert() -> None:
    today = DayStats(DAY, "a.example", 40, 2, 0, 38, 150.0, 205.0, 260.0)
    assert drift.alerts_for(today, history(), T) == []


def test_empty_share_jump_against_own_baseline() -> None:
    today = DayStats(DAY, "a.example", 40, 30, 0, 10, 150.0, 200.0, 260.0, samples={"empty": [7]})
    (alert,) = drift.alerts_for(today, history(), T)
    assert alert.kind == drift.EMPTY_SHARE
    assert alert.value == 0.75
    assert alert.baseline == pytest.approx(2 / 40)
    assert alert.sample_ids == (7,)


def test_share_jump_needs_both_the_margin_and_the_ratio() -> None:
    # Baseline 30 % empty: 45 % today is +15 points (< 20) — no alert.
    base = history(empty=12)
    today = DayStats(DAY, "a.example", 40, 18, 0, 22, 150.0, 200.0, 260.0)
    assert drift.alerts_for(today, base, T) == []
    # Baseline 30 %, today 55 %: +25 points but under 2× — still no alert.
    today = DayStats(DAY, "a.example", 40, 22, 0, 18, 150.0, 200.0, 260.0)
    assert drift.alerts_for(today, base, T) == []


def test_blocked_jump_is_its_own_alert() -> None:
    today = DayStats(DAY, "a.example", 40, 2, 25, 38, 150.0, 200.0, 260.0)
    assert [a.kind for a in drift.alerts_for(today, history(), T)] == [drift.BLOCKED_SHARE]


def test_few_documents_today_give_no_share_alert() -> None:
    today = DayStats(DAY, "a.example", 5, 5, 0, 0)
    assert drift.alerts_for(today, history(), T) == []


def test_token_shift_up_and_down() -> None:
    up = DayStats(DAY, "a.example", 40, 2, 0, 38, 700.0, 900.0, 1100.0, samples={"text": [3]})
    (alert,) = drift.alerts_for(up, history(), T)
    assert alert.kind == drift.TOKEN_SHIFT and "up" in alert.message
    assert alert.baseline == 200.0 and alert.sample_ids == (3,)
    down = DayStats(DAY, "a.example", 40, 2, 0, 38, 20.0, 60.0, 90.0)
    assert "down" in drift.alerts_for(down, history(), T)[0].message


def test_no_baseline_no_site_alert() -> None:
    today = DayStats(DAY, "a.example", 40, 40, 0, 0)
    assert drift.alerts_for(today, history(days=2), T) == []
    # Only days within the baseline window count.
    old = [DayStats(DAY - timedelta(days=20 + i), "a.example", 40) for i in range(5)]
    assert drift.alerts_for(today, old, T) == []


def test_large_group_is_judged_on_the_all_sites_row_only() -> None:
    t = Thresholds(large_group=50)
    overall = DayStats(DAY, "", 10, largest_group=300, largest_group_id=9, samples={"group": [1]})
    (alert,) = drift.alerts_for(overall, [], t)
    assert (alert.kind, alert.group_id, alert.sample_ids) == (drift.LARGE_GROUP, 9, (1,))
    site_row = DayStats(DAY, "a.example", 10, largest_group=300, largest_group_id=9)
    assert drift.alerts_for(site_row, [], t) == []
    assert drift.alerts_for(DayStats(DAY, "", 10, largest_group=49), [], t) == []


def test_alerts_over_judges_each_site_against_its_own_days() -> None:
    rows = history("a.example") + history("b.example")
    rows.append(DayStats(DAY, "a.example", 40, 2, 0, 38, 700.0, 900.0, 1100.0))
    rows.append(DayStats(DAY, "b.example", 40, 2, 0, 38, 150.0, 200.0, 260.0))
    alerts = drift.alerts_over(rows, since=DAY, t=T)
    assert [(a.site, a.kind) for a in alerts] == [("a.example", drift.TOKEN_SHIFT)]
