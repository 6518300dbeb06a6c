"""SimHash, method simhash64-words-sha256-v1. Locked: change = new method key.

Reference (DESIGN.md invariant 3): each token's value is the first 8 bytes of its
UTF-8 SHA-256, big-endian; every occurrence adds +1 to each bit that is set and -1 to
each bit that is clear; a bit is 1 only when its sum is > 0 (ties are 0).

`simhash64_fast` must stay bit-identical to `simhash64_reference` (property-tested).
Fingerprints are unsigned 64-bit values (invariant 9): shown as 16 hex digits, stored
as a signed bigint via `to_signed64` / `to_unsigned64`.
"""

import hashlib
from collections import Counter
from collections.abc import Iterable

import numpy as np

MASK64 = (1 << 64) - 1


def token_value(token: str) -> int:
    return int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest()[:8], "big")


def simhash64_reference(tokens: Iterable[str]) -> int:
    """The locked reference, written for clarity, not speed."""
    sums = [0] * 64
    for token in tokens:
        value = token_value(token)
        for bit in range(64):
            sums[bit] += 1 if (value >> bit) & 1 else -1
    return sum(1 << bit for bit in range(64) if sums[bit] > 0)


# Token values are pure functions of the token, so a bounded cache is safe: real text
# repeats its vocabulary, and hashing is most of the reference's cost.
_VALUE_CACHE: dict[str, int] = {}
_VALUE_CACHE_MAX = 300_000


def _values(tokens: Iterable[str]) -> list[int]:
    cache = _VALUE_CACHE
    if len(cache) > _VALUE_CACHE_MAX:
        cache.clear()
    out = []
    for token in tokens:
        value = cache.get(token)
        if value is None:
            value = cache[token] = token_value(token)
        out.append(value)
    return out


def simhash64_fast(tokens: Iterable[str]) -> int:
    """Bit-identical to the reference: count tokens once, then one weighted bit sum.

    For a token seen c times, the reference adds ±c per bit; summing c·bit over the
    distinct tokens and comparing 2·sum with the total count gives the same signs.
    """
    counts = Counter(tokens)
    if not counts:
        return 0
    values = np.array(_values(counts.keys()), dtype=">u8")
    weights = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    # Row i holds the 64 bits of value i, most significant first.
    bits = np.unpackbits(values.view(np.uint8).reshape(-1, 8), axis=1)
    ones = weights @ bits  # per bit: occurrences whose token has the bit set
    set_bits = (2 * ones) > int(weights.sum())
    return int.from_bytes(np.packbits(set_bits).tobytes(), "big")


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def to_hex(value: int) -> str:
    return f"{value & MASK64:016x}"


def from_hex(text: str) -> int:
    value = int(text, 16)
    if not 0 <= value <= MASK64:
        raise ValueError(f"not a 64-bit value: {text!r}")
    return value


def to_signed64(value: int) -> int:
    """Unsigned 64-bit → the signed bigint PostgreSQL stores (same bits)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def to_unsigned64(value: int) -> int:
    return value & MASK64
