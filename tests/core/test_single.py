"""A pair's shares in single precision (ingest.core.single): what PostgreSQL's `real`
keeps, read back as the shortest decimal, the same on every backend."""

import struct

from hypothesis import given
from hypothesis import strategies as st

from ingest.core.single import to_single


def _as_stored(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


@given(st.floats(min_value=0.0, max_value=1.0))
def test_a_share_reads_back_as_the_single_precision_number_it_is_stored_as(x: float) -> None:
    y = to_single(x)
    assert _as_stored(y) == _as_stored(x)  # what `real` holds: unchanged
    assert to_single(y) == y  # read again (SQLite, PostgreSQL): the same value
    assert abs(y - x) <= 2**-23 * max(abs(x), 2**-126)  # within a single-precision step


@given(st.floats(min_value=0.0, max_value=1.0))
def test_it_is_the_shortest_decimal_of_that_number(x: float) -> None:
    y = to_single(x)
    digits = len(f"{y:.9g}".rstrip("0").split("e")[0].replace(".", "").lstrip("0"))
    if digits > 1:
        shorter = float(f"{y:.{digits - 1}g}")
        assert _as_stored(shorter) != _as_stored(y)


def test_two_place_shares_stay_as_written() -> None:
    for value in (0.0, 0.1, 0.25, 0.8, 0.93, 0.97, 1.0):
        assert to_single(value) == value
    assert to_single(1 / 3) == 0.33333334
