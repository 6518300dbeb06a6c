"""Time partitions of the channel indexes (docs/scaling.md, "Time partitions"): which
period a fetch time falls in, the partition that holds it, and the months a lookback
window touches.

The band index, the passage sets and the MinHash sets are partitioned by fetch time, one
partition per period of `months` calendar months (UTC), aligned on January: 1 (a month),
3, 6 or 12 (a year). A partition is named after its first month. A lookback window of days
touches one or two partitions; a query without a window reads every partition, so fewer,
longer periods suit a desk that searches without one. An old period can be detached to
cheaper storage, never dropped.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime

PERIODS = (1, 3, 6, 12)


@dataclass(frozen=True, order=True)
class Month:
    year: int
    month: int

    @classmethod
    def of(cls, at: datetime) -> "Month":
        """The month (UTC) a fetch time falls in; a naive time is taken as UTC."""
        if at.tzinfo is not None:
            at = at.astimezone(UTC)
        return cls(at.year, at.month)

    @classmethod
    def parse(cls, text: str) -> "Month":
        """'2026-12' or '202612'."""
        digits = text.replace("-", "")
        if len(digits) != 6 or not digits.isascii() or not digits.isdigit():
            raise ValueError(f"a month is YYYY-MM, not {text!r}")
        month = cls(int(digits[:4]), int(digits[4:]))
        if not 1 <= month.month <= 12:
            raise ValueError(f"a month is YYYY-MM, not {text!r}")
        return month

    def next(self) -> "Month":
        return self.plus(1)

    def plus(self, months: int) -> "Month":
        index = self.year * 12 + self.month - 1 + months
        return Month(index // 12, index % 12 + 1)

    def period_start(self, months: int) -> "Month":
        """The first month of the period of `months` months (aligned on January) that
        holds this one."""
        if months not in PERIODS:
            raise ValueError(f"a partition period is one of {PERIODS} months, not {months}")
        return Month(self.year, (self.month - 1) // months * months + 1)

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """The first instant of the next month (partition bounds are half-open)."""
        return self.next().start

    @property
    def first_day(self) -> date:
        return date(self.year, self.month, 1)

    @property
    def suffix(self) -> str:
        return f"p{self.year:04d}{self.month:02d}"

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"


def partition_name(table: str, month: Month) -> str:
    """The partition of `table` holding `month`: `<table>_pYYYYMM`."""
    return f"{table}_{month.suffix}"


def default_partition_name(table: str) -> str:
    """The partition that catches a row whose month has no partition yet."""
    return f"{table}_default"


def months_of(times: Iterable[datetime]) -> set[Month]:
    return {Month.of(t) for t in times}


def months_between(low: datetime, high: datetime) -> Iterator[Month]:
    """Every month that [low, high] touches, in order."""
    month, last = Month.of(low), Month.of(high)
    while month <= last:
        yield month
        month = month.next()
