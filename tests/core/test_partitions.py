from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.core.partitions import Month, months_between, partition_name

TIMES = st.datetimes(
    min_value=datetime(1995, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.just(UTC)
)


@given(TIMES)
def test_a_time_falls_inside_its_months_bounds(at: datetime) -> None:
    month = Month.of(at)
    assert month.start <= at < month.end
    assert month.end == month.next().start


def test_the_month_is_the_utc_month() -> None:
    hanoi = timezone(timedelta(hours=7))
    assert Month.of(datetime(2026, 12, 1, 3, 0, tzinfo=hanoi)) == Month(2026, 11)
    assert Month.of(datetime(2026, 12, 31, 23, 0)) == Month(2026, 12)


@given(TIMES, st.integers(0, 400))
def test_a_window_touches_exactly_the_months_between_its_ends(low: datetime, days: int) -> None:
    high = low + timedelta(days=days)
    months = list(months_between(low, high))
    assert months[0] == Month.of(low) and months[-1] == Month.of(high)
    assert all(b == a.next() for a, b in zip(months, months[1:], strict=False))


def test_names_and_parsing() -> None:
    assert partition_name("ingest_indexentry", Month(2026, 3)) == "ingest_indexentry_p202603"
    assert Month.parse("2026-03") == Month.parse("202603") == Month(2026, 3)
    assert Month(2026, 12).next() == Month(2027, 1)
    for bad in ("2026-13", "26-03", "２０２６-03", "2026-3", ""):
        with pytest.raises(ValueError):
            Month.parse(bad)


@given(TIMES, st.sampled_from([1, 3, 6, 12]))
def test_a_period_starts_on_a_boundary_and_holds_its_month(at: datetime, months: int) -> None:
    month = Month.of(at)
    start = month.period_start(months)
    assert (start.month - 1) % months == 0 and start.year == month.year
    assert start <= month < start.plus(months)


def test_a_period_is_one_of_the_allowed_lengths() -> None:
    with pytest.raises(ValueError):
        Month(2026, 5).period_start(5)
