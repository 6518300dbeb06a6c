"""Single precision for the shares a pair keeps (4 bytes each, PostgreSQL `real`)."""

import math
import struct


def to_single(value: float) -> float:
    """`value` rounded to single precision, as the shortest decimal that rounds back to
    that single-precision number (0.1 stays 0.1; 1/3 becomes 0.33333334). A value
    beyond single precision's range is returned as it is (no share is)."""
    try:
        (single,) = struct.unpack("<f", struct.pack("<f", value))
    except OverflowError:
        return value
    if not math.isfinite(single):
        return single
    for digits in range(1, 10):
        shortest = float(f"{single:.{digits}g}")
        if struct.unpack("<f", struct.pack("<f", shortest))[0] == single:
            return shortest
    return single
