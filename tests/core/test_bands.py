import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core.bands import (
    B8X8_PAIRS,
    B16X4,
    B24_20_20,
    B32X2,
    SCHEMES,
    BandScheme,
    brute_force_pairs,
    differing_bits,
    nominating_band,
    scheme_for,
    spreads,
)
from ingest.core.simhash import MASK64, hamming, to_signed64

u64 = st.integers(0, MASK64)
INT4 = range(-(2**31), 2**31)


def flip(value: int, positions: set[int] | list[int]) -> int:
    for p in positions:
        value ^= 1 << p
    return value


def found(scheme: BandScheme, a: int, b: int, k: int) -> bool:
    """What the index does: a query for a probes these keys per combo; b is stored."""
    return any(
        key in probes for key, probes in zip(scheme.keys(b), scheme.probes(a, k), strict=True)
    )


@given(u64, st.sets(st.integers(0, 63), max_size=6), st.integers(0, 6))
def test_pigeonhole_every_flip_within_k_is_found_by_scheme_for_k(
    a: int, positions: set[int], k: int
) -> None:
    b = flip(a, sorted(positions)[:k])
    scheme = scheme_for(k)
    assert found(scheme, a, b, k)
    assert nominating_band(scheme, a, b, k) is not None


@given(u64, st.sets(st.integers(0, 63), max_size=6))
def test_exact_pigeonhole_some_key_of_a_equals_the_same_key_of_b(
    a: int, positions: set[int]
) -> None:
    """Radius 0 everywhere (8 blocks, pairs, k <= 6): equal keys, no probing."""
    b = flip(a, positions)
    assert set(B8X8_PAIRS.radii(len(positions))) == {0}
    assert any(x == y for x, y in zip(B8X8_PAIRS.keys(a), B8X8_PAIRS.keys(b), strict=True))
    assert nominating_band(B8X8_PAIRS, a, b) is not None


@pytest.mark.parametrize("scheme", SCHEMES.values(), ids=lambda s: s.name)
def test_every_spread_of_k_bits_over_the_blocks_is_found(scheme: BandScheme) -> None:
    """The worst cases: random flips rarely spread evenly over the blocks, so try
    every spread of k differing bits over the blocks, bits at random inside each."""
    rng = random.Random(7)
    caps = tuple(w for _, w in scheme.blocks)
    for k in range(scheme.k_max + 1):
        for spread in spreads(k, caps):
            a = rng.getrandbits(64)
            positions: list[int] = []
            for (shift, width), count in zip(scheme.blocks, spread, strict=True):
                positions += rng.sample(range(shift, shift + width), count)
            b = flip(a, positions)
            assert hamming(a, b) == k
            assert found(scheme, a, b, k), (scheme.name, k, spread)


@pytest.mark.parametrize("scheme", SCHEMES.values(), ids=lambda s: s.name)
@given(a=u64, data=st.data())
@settings(max_examples=50)
def test_every_scheme_finds_flips_up_to_its_k_max(
    scheme: BandScheme, a: int, data: st.DataObject
) -> None:
    k = data.draw(st.integers(0, scheme.k_max))
    positions = data.draw(st.sets(st.integers(0, 63), min_size=k, max_size=k))
    b = flip(a, positions)
    assert found(scheme, a, b, k)


@pytest.mark.parametrize("scheme", [B32X2, B16X4, B24_20_20], ids=lambda s: s.name)
def test_radii_are_tight(scheme: BandScheme) -> None:
    """Lowering any radius loses a pair: some spread escapes every combo."""
    caps = tuple(w for _, w in scheme.blocks) + (64 - sum(w for _, w in scheme.blocks),)
    for k in range(1, min(scheme.k_max, 5) + 1):
        radii = scheme.radii(k)
        for i, r in enumerate(radii):
            if r < 0:
                continue
            lower = radii[:i] + (r - 1,) + radii[i + 1 :]
            escapes = any(
                all(
                    sum(spread[b] for b in combo) > rr
                    for combo, rr in zip(scheme.combos, lower, strict=True)
                )
                for spread in spreads(k, caps)
            )
            assert escapes, (scheme.name, k, lower)


def test_radii_and_probe_counts_of_the_chosen_scheme() -> None:
    assert B32X2.radii(3) == (1, 1)
    assert B32X2.radii(6) == (2, 3)  # sum(r + 1) = 7 = k + 1, cheapest split
    assert [B32X2.probe_count(k) for k in range(8)] == [1, 2, 34, 66, 562, 1058, 6018, 10978]
    assert B32X2.radii(0) == (-1, 0)  # k = 0: one exact lookup is enough
    assert B32X2.probes(123, 0)[0] == []


def test_radii_of_the_alternatives() -> None:
    assert B16X4.radii(3) == (0, 0, 0, 0)
    assert B16X4.probe_count(6) == 1 + 3 * 17
    assert [B8X8_PAIRS.radii(k) for k in range(7)] == [(0,) * 28] * 7
    pairs7 = BandScheme(k_max=7, blocks=B8X8_PAIRS.blocks, combos=B8X8_PAIRS.combos, name="pairs7")
    assert set(pairs7.radii(7)) == {1}  # no two untouched blocks are left


def test_one_index_serves_every_threshold() -> None:
    """Stored keys do not depend on k: thresholds move without re-indexing."""
    assert len({scheme_for(k) for k in range(8)}) == 1


@given(u64)
def test_keys_are_deterministic_int4_one_per_combo(value: int) -> None:
    for scheme in SCHEMES.values():
        keys = scheme.keys(value)
        assert keys == scheme.keys(value)
        assert len(keys) == len(scheme.combos)
        assert all(key in INT4 for key in keys)


@given(u64, st.integers(0, 7))
def test_probes_are_sorted_int4_and_counted(value: int, k: int) -> None:
    probes = B32X2.probes(value, k)
    assert sum(len(p) for p in probes) == B32X2.probe_count(k)
    for p in probes:
        assert p == sorted(set(p))
        assert all(key in INT4 for key in p)


@given(u64)
def test_signed_storage_gives_the_same_keys(value: int) -> None:
    for scheme in SCHEMES.values():
        assert scheme.keys(to_signed64(value)) == scheme.keys(value)


def test_key_layout_of_the_chosen_scheme() -> None:
    value = 0x0123_4567_89AB_CDEF
    assert B32X2.keys(value) == [0x0123_4567, 0x89AB_CDEF - 2**32]  # two's complement
    assert B16X4.keys(value) == [0x0123, 0x4567, 0x89AB, 0xCDEF]
    assert B8X8_PAIRS.combos[1] == (0, 2)
    assert B8X8_PAIRS.keys(value)[1] == 0x0145  # a pair key concatenates its blocks


def test_probe_keys_refuse_k_beyond_k_max() -> None:
    with pytest.raises(ValueError, match="answers k"):
        B8X8_PAIRS.probes(1, 7)
    with pytest.raises(ValueError):
        scheme_for(8)


def test_invalid_schemes_are_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        BandScheme(k_max=1, blocks=((0, 40), (32, 32)), combos=((0,), (1,)))
    with pytest.raises(ValueError, match="inside 64 bits"):
        BandScheme(k_max=1, blocks=((40, 32),), combos=((0,),))
    with pytest.raises(ValueError, match="int4"):
        BandScheme(k_max=0, blocks=((0, 33),), combos=((0,),))
    with pytest.raises(ValueError, match="does not exist"):
        BandScheme(k_max=0, blocks=((0, 32),), combos=((1,),))


def test_sql_text() -> None:
    sql = B32X2.sql_function("band_keys")
    assert sql.startswith("CREATE OR REPLACE FUNCTION band_keys(simhash bigint) RETURNS int4[]")
    assert "IMMUTABLE" in sql and "PARALLEL SAFE" in sql
    assert "STRICT" not in sql  # would stop the planner from inlining the body
    functions = B32X2.sql_key_functions("band_key")
    assert "band_key_0(simhash bigint) RETURNS int4" in functions
    assert "band_key_1(simhash bigint) RETURNS int4" in functions
    assert B32X2.sql_indexes("fp", "band_key")[1] == (
        "CREATE INDEX IF NOT EXISTS fp_band_key_1 ON fp (method, band_key_1(simhash))"
    )
    assert B32X2.sql_probe_condition("band_key") == (
        "(band_key_0(simhash) = ANY(%s::int4[]) OR band_key_1(simhash) = ANY(%s::int4[]))"
    )


def naive_pairs(values: list[int], k: int) -> set[tuple[int, int]]:
    return {
        (i, j)
        for i in range(len(values))
        for j in range(i + 1, len(values))
        if hamming(values[i], values[j]) <= k
    }


clustered = st.lists(
    st.tuples(st.integers(0, 7), st.sets(st.integers(0, 63), max_size=8)), max_size=40
)


@given(clustered, st.lists(u64, min_size=8, max_size=8), st.integers(0, 8))
@settings(max_examples=60)
def test_brute_force_pairs_matches_a_naive_double_loop(
    items: list[tuple[int, set[int]]], bases: list[int], k: int
) -> None:
    values = [flip(bases[base], positions) for base, positions in items]
    assert brute_force_pairs(values, k) == naive_pairs(values, k)


def test_brute_force_pairs_accepts_signed_values_and_numpy_arrays() -> None:
    values = [to_signed64(MASK64), MASK64 ^ 1, 0]
    assert brute_force_pairs(values, 1) == {(0, 1)}
    assert brute_force_pairs(np.array([MASK64, MASK64 ^ 3], dtype=np.uint64), 2) == {(0, 1)}
    assert brute_force_pairs([], 3) == set()


def test_brute_force_pairs_handles_twenty_thousand_values() -> None:
    rng = random.Random(3)
    values = [rng.getrandbits(64) for _ in range(20_000)]
    values += [flip(v, rng.sample(range(64), 2)) for v in values[:50]]
    pairs = brute_force_pairs(values, 3)
    assert {(i, 20_000 + i) for i in range(50)} <= pairs


@given(u64, u64)
def test_differing_bits(a: int, b: int) -> None:
    bits = differing_bits(a, b)
    assert len(bits) == hamming(a, b)
    assert sum(1 << i for i in bits) == a ^ b
    assert bits == sorted(bits) and all(0 <= i <= 63 for i in bits)


def test_differing_bits_counts_from_the_least_significant_bit() -> None:
    assert differing_bits(0, 1) == [0]
    assert differing_bits(0, 1 << 63) == [63]
    assert differing_bits(to_signed64(1 << 63), 0) == [63]


def test_nominating_band() -> None:
    a = 0x0123_4567_89AB_CDEF
    assert nominating_band(B32X2, a, a) == 0
    assert nominating_band(B32X2, a, a ^ (1 << 63)) == 1  # combo 0 is the top half
    both = a ^ (1 << 63 | 1 << 5)
    assert nominating_band(B32X2, a, both) is None
    assert B32X2.radii(2) == (0, 1)
    assert nominating_band(B32X2, a, both, k=2) == 1  # the low half, within radius 1
    assert nominating_band(B8X8_PAIRS, a, a ^ (1 << 63 | 1 << 55)) == 13  # blocks (2, 3)


def test_fixed_radii_are_checked_against_every_spread() -> None:
    """A scheme's own radii table must still satisfy the pigeonhole at every k."""
    blocks, combos = B24_20_20.blocks, B24_20_20.combos
    good = B24_20_20.fixed_radii
    assert B24_20_20.radii(6) == (2, 1, 1)  # the widest combo takes the largest radius
    assert B24_20_20.probe_count(6) == 1 + 24 + 276 + 2 * 21
    short = good[:6] + ((2, 1, 0),) + good[7:]  # the spread (3, 2, 1) escapes
    with pytest.raises(ValueError, match="miss some pair at k = 6"):
        BandScheme(k_max=7, blocks=blocks, combos=combos, fixed_radii=short)
    with pytest.raises(ValueError, match="one tuple per k"):
        BandScheme(k_max=7, blocks=blocks, combos=combos, fixed_radii=good[:7])


@given(u64, st.sets(st.integers(0, 63), max_size=7))
def test_fixed_radii_find_every_flip_within_k(a: int, positions: set[int]) -> None:
    k = len(positions)
    b = flip(a, positions)
    assert found(B24_20_20, a, b, k)
    assert nominating_band(B24_20_20, a, b, k) is not None


def test_covering_indexes_and_one_branch_per_combo() -> None:
    assert B32X2.sql_indexes("fp", "bk", include=("simhash", "document_id"))[0] == (
        "CREATE INDEX IF NOT EXISTS fp_bk_0 ON fp (method, bk_0(simhash))"
        " INCLUDE (simhash, document_id)"
    )
    assert B32X2.sql_key_condition("bk", 1) == "bk_1(simhash) = ANY(%s::int4[])"
