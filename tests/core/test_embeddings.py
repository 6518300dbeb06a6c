import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core.embeddings import (
    COVERED,
    NOT_COVERED,
    cosine,
    coverage,
    embedding_text,
    normalize,
    pack,
    pool,
    primary_language,
    spread,
    text_windows,
    unpack,
)

# float16 keeps 11 significant bits: a normal value is within 2^-11 of itself (relative);
# values below 2^-14 are subnormal, with an absolute step of 2^-24.
F16_REL = 2.0**-11
F16_SUBNORMAL_STEP = 2.0**-24

components = st.floats(-100, 100, allow_nan=False, width=32)


def _nonzero(xs: list[float]) -> bool:
    return math.sqrt(sum(x * x for x in xs)) > 1e-3


vectors = st.lists(components, min_size=1, max_size=400).filter(_nonzero)
# Two vectors of one size.
pairs = st.integers(1, 400).flatmap(
    lambda n: st.tuples(
        st.lists(components, min_size=n, max_size=n).filter(_nonzero),
        st.lists(components, min_size=n, max_size=n).filter(_nonzero),
    )
)


def test_packing_is_little_endian_float16() -> None:
    data = pack([3.0, 4.0])
    assert data == np.array([0.6, 0.8], dtype="<f2").tobytes()
    assert data[:2] == bytes.fromhex("cd38")  # 0.6 as float16 0x38cd, low byte first


def test_normalize_refuses_the_zero_vector() -> None:
    with pytest.raises(ValueError):
        normalize([0.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        pack([float("nan"), 1.0])


def test_cosine_of_known_vectors() -> None:
    assert cosine(pack([1, 0]), pack([1, 0])) == pytest.approx(1.0, abs=1e-3)
    assert cosine(pack([1, 0]), pack([0, 1])) == 0.0
    assert cosine(pack([1, 0]), pack([-1, 0])) == pytest.approx(-1.0, abs=1e-3)
    assert cosine(pack([1, 1]), pack([1, 0])) == pytest.approx(math.sqrt(0.5), abs=1e-3)


def test_cosine_refuses_vectors_of_different_sizes() -> None:
    with pytest.raises(ValueError):
        cosine(pack([1, 0]), pack([1, 0, 0]))
    with pytest.raises(ValueError):
        unpack(b"\x00\x00\x00")


@given(vectors)
def test_packing_takes_two_bytes_per_dimension(xs: list[float]) -> None:
    assert len(pack(xs)) == 2 * len(xs)
    assert unpack(pack(xs)).shape == (len(xs),)


@given(vectors)
def test_float16_round_trip_stays_within_its_rounding_bound(xs: list[float]) -> None:
    exact = normalize(xs).astype(np.float64)
    stored = unpack(pack(xs)).astype(np.float64)
    # Per component: relative rounding of a normal float16, or one subnormal step.
    bound = np.maximum(np.abs(exact) * F16_REL, F16_SUBNORMAL_STEP) + 1e-7
    assert np.all(np.abs(stored - exact) <= bound)
    # Whole vector: the stored vector is still a unit vector to within the same share.
    assert abs(float(np.linalg.norm(stored)) - 1.0) <= F16_REL + len(xs) ** 0.5 * 2**-24


# Drawing two vectors of up to 400 floats is the cost (~1 s per example on a loaded
# core), not the check: fewer examples still cover every length band.
@settings(max_examples=25)
@given(pairs)
def test_cosine_is_bounded_and_symmetric(pair: tuple[list[float], list[float]]) -> None:
    a, b = pack(pair[0]), pack(pair[1])
    c = cosine(a, b)
    assert -1.0 <= c <= 1.0
    assert c == cosine(b, a)


@settings(max_examples=25)
@given(pairs)
def test_packed_cosine_is_close_to_the_exact_one(pair: tuple[list[float], list[float]]) -> None:
    x, y = (np.asarray(xs, dtype=np.float64) for xs in pair)
    exact = float(np.dot(x / np.linalg.norm(x), y / np.linalg.norm(y)))
    # Each side moves by at most ~2^-11 in norm, so the dot product by about twice that.
    assert abs(cosine(pack(x), pack(y)) - exact) <= 3 * F16_REL


def test_coverage_by_primary_language() -> None:
    assert coverage("en", ["en"]) == COVERED
    assert coverage("en-GB", ["en"]) == COVERED
    assert coverage("EN", [" en ", "fr"]) == COVERED
    assert coverage("vi", ["en"]) == NOT_COVERED
    assert coverage("zh", []) == NOT_COVERED


def test_unknown_language_is_not_covered_unless_listed() -> None:
    assert primary_language("") == "und"
    assert coverage("und", ["en"]) == NOT_COVERED
    assert coverage("", ["en"]) == NOT_COVERED
    assert coverage("", ["en", "und"]) == COVERED


def test_embedding_text_keeps_the_first_words() -> None:
    text = "One  two\nthree\tfour five"
    assert embedding_text(text, 3) == "One two three"
    assert embedding_text(text, 100) == "One two three four five"
    assert embedding_text("", 10) == ""
    with pytest.raises(ValueError):
        embedding_text(text, 0)


@given(st.text(), st.integers(1, 50))
def test_embedding_text_never_exceeds_the_word_cap(text: str, cap: int) -> None:
    out = embedding_text(text, cap)
    assert len(out.split()) <= cap
    assert out.split() == text.split()[:cap]


# --- the windowed text rule (main-windows128x4-mean-v1) ---------------------------------


def _words(text: str) -> int:
    """A stand-in for a model's token count: one token per word or Han character."""
    return sum(len(w) if "\u4e00" <= w[0] <= "\u9fff" else 1 for w in text.split())


def test_paragraphs_pack_into_windows_in_order() -> None:
    text = "one two three\n\nfour five\nsix seven eight nine\n   \nten"
    assert text_windows(text, _words, window_tokens=5, max_windows=10) == [
        "one two three four five",
        "six seven eight nine ten",
    ]


def test_a_long_paragraph_is_cut_by_words_or_by_characters() -> None:
    words = " ".join(f"w{i}" for i in range(10))
    assert text_windows(words, _words, window_tokens=4, max_windows=10) == [
        "w0 w1 w2 w3",
        "w4 w5 w6 w7",
        "w8 w9",
    ]
    han = "中美合作共赢符合国际社会利益"  # 14 characters, no space
    windows = text_windows(han, _words, window_tokens=5, max_windows=10)
    assert "".join(windows) == han and all(_words(w) <= 5 for w in windows)


def test_more_windows_than_kept_are_spread_from_first_to_last() -> None:
    text = "\n".join(f"p{i}" for i in range(10))
    kept = text_windows(text, _words, window_tokens=1, max_windows=4)
    assert kept == ["p0", "p3", "p6", "p9"]
    assert spread(10, 1) == [0] and spread(3, 4) == [0, 1, 2]


def test_a_text_without_words_has_no_windows() -> None:
    assert text_windows(" \n\t\n", _words) == []
    with pytest.raises(ValueError):
        pool([])


@given(
    st.lists(st.text(alphabet="ab 中\n", max_size=40), max_size=30),
    st.integers(1, 20),
    st.integers(1, 6),
)
def test_windows_keep_the_budget_and_the_count(parts: list[str], budget: int, keep: int) -> None:
    text = "\n".join(parts)
    windows = text_windows(text, _words, window_tokens=budget, max_windows=keep)
    assert len(windows) <= keep
    assert all(w.strip() and _words(w) <= budget for w in windows)
    if text.split():
        assert windows


@given(st.lists(vectors.filter(lambda v: len(v) == 3) | st.just([1.0, 2.0, 3.0]), min_size=1))
def test_the_pooled_vector_is_the_normalized_mean_of_unit_windows(rows: list[list[float]]) -> None:
    rows = [r for r in rows if len(r) == 3] or [[1.0, 2.0, 3.0]]
    units = np.stack([normalize(r) for r in rows])
    mean = units.mean(axis=0)
    if np.linalg.norm(mean) < 1e-3:
        return
    pooled = pool(rows)
    assert np.isclose(np.linalg.norm(pooled), 1.0, atol=1e-5)
    assert np.allclose(pooled, mean / np.linalg.norm(mean), atol=1e-5)
