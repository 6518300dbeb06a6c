import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core.normalize import tokens_words
from ingest.core.simhash import (
    MASK64,
    from_hex,
    hamming,
    simhash64_fast,
    simhash64_reference,
    to_hex,
    to_signed64,
    to_unsigned64,
)

u64 = st.integers(0, MASK64)


def test_reference_vectors_from_the_design() -> None:
    a = simhash64_reference(tokens_words("alpha beta gamma delta"))
    b = simhash64_reference(tokens_words("alpha beta gamma delta epsilon"))
    assert to_hex(a) == "8e4a54256f09d080"
    assert to_hex(b) == "eedf74ad6fe9f881"
    assert hamming(a, b) == 15


def _token_value(token: str) -> int:
    """A token's 64 bits by the locked rule, computed here independently."""
    return int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest()[:8], "big")


def test_one_token_gives_its_own_bits() -> None:
    # Every bit sums to +1 (set) or -1 (clear): the fingerprint is the token's value.
    assert simhash64_reference(["alpha"]) == _token_value("alpha")
    assert simhash64_fast(["alpha"]) == _token_value("alpha")


def test_ties_are_zero() -> None:
    # Two tokens: a bit set in both sums to +2 (1), in neither to -2 (0), and in exactly
    # one of them to 0, a tie, which must give 0. So the result is the bitwise AND.
    alpha, beta = _token_value("alpha"), _token_value("beta")
    assert alpha ^ beta  # the two differ, so there are tied bits to check
    two = simhash64_reference(["alpha", "beta"])
    assert two & (alpha ^ beta) == 0
    assert two == alpha & beta
    assert simhash64_fast(["alpha", "beta"]) == alpha & beta


def test_no_tokens_gives_zero() -> None:
    assert simhash64_reference([]) == 0
    assert simhash64_fast([]) == 0


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_fast_is_bit_identical_to_reference_on_any_text(text: str) -> None:
    tokens = tokens_words(text)
    assert simhash64_fast(tokens) == simhash64_reference(tokens)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d", "é", "中文", "x1"]), max_size=200))
def test_fast_is_bit_identical_with_many_repeats(tokens: list[str]) -> None:
    assert simhash64_fast(tokens) == simhash64_reference(tokens)


@given(u64)
def test_distance_to_itself_is_zero(x: int) -> None:
    assert hamming(x, x) == 0


@given(u64, u64)
def test_distance_is_symmetric_and_bounded(a: int, b: int) -> None:
    assert hamming(a, b) == hamming(b, a)
    assert 0 <= hamming(a, b) <= 64


@given(u64)
def test_signed_round_trip_keeps_the_bits(x: int) -> None:
    signed = to_signed64(x)
    assert -(2**63) <= signed < 2**63
    assert to_unsigned64(signed) == x


@given(u64)
def test_hex_is_sixteen_digits_and_round_trips(x: int) -> None:
    text = to_hex(x)
    assert len(text) == 16
    assert from_hex(text) == x


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.sampled_from([f"t{i}" for i in range(40)]), max_size=30), max_size=12))
def test_fast_stays_identical_when_the_token_cache_overflows(docs: list[list[str]]) -> None:
    import ingest.core.simhash as module

    saved = module._CACHE_MAX
    module._CACHE_MAX = 16
    module.cache_clear()
    try:
        for tokens in docs:
            assert simhash64_fast(tokens) == simhash64_reference(tokens)
    finally:
        module._CACHE_MAX = saved
        module.cache_clear()
