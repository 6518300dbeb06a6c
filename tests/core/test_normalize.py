import hashlib
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from ingest.core.methods import (
    METHODS,
    REFERENCE_KEY,
    FingerprintResult,
    fingerprint_text,
    fingerprint_texts,
    normalize_for,
    tokens_for,
)
from ingest.core.normalize import (
    fold_spaces,
    is_blank,
    nfc_words,
    normalize_nfc_v1,
    normalize_nfkc_v1,
    tokens_cjk_bigrams,
    tokens_shingle3,
    tokens_words,
)
from ingest.core.simhash import simhash64_reference


def test_every_kind_of_space_folds() -> None:
    text = "a\u3000b\u00a0c\u200bd\te\n\nf\u2009g\u202fh"
    assert normalize_nfc_v1(text) == "a b cd e f g h"


def test_digits_punctuation_and_diacritics_are_kept() -> None:
    text = "Giá: 1.250.000₫ — Tiếng Việt!"
    assert normalize_nfc_v1(text) == text


def test_nfd_and_nfc_normalize_to_the_same_text() -> None:
    nfc = "Thủ tướng phát biểu tại Hà Nội"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc
    assert normalize_nfc_v1(nfd) == normalize_nfc_v1(nfc)


def test_full_width_folds_only_under_nfkc() -> None:
    assert normalize_nfkc_v1("ＡＢＣ１２３") == "ABC123"
    assert normalize_nfc_v1("ＡＢＣ１２３") == "ＡＢＣ１２３"


def test_reference_tokenizer_is_the_locked_regex() -> None:
    assert tokens_words("Hello, WORLD! Straße 42") == ["hello", "world", "strasse", "42"]


def test_shingles_keep_word_order() -> None:
    assert tokens_shingle3("a b c d") == ["a b c", "b c d"]
    assert tokens_shingle3("a b") == []


def test_han_runs_become_bigrams() -> None:
    assert tokens_cjk_bigrams("中华人民 ok 国") == ["中华", "华人", "人民", "ok", "国"]


def test_empty_text_is_insufficient_not_a_fingerprint() -> None:
    result = fingerprint_text(REFERENCE_KEY, " \u200b\u3000 ")
    assert result.status == "insufficient_features"
    assert result.simhash is None


@given(st.text())
def test_normalization_is_idempotent(text: str) -> None:
    once = normalize_nfc_v1(text)
    assert normalize_nfc_v1(once) == once


@given(st.text())
def test_fast_and_reference_fingerprints_agree_for_every_method(text: str) -> None:
    for key in (
        "simhash64-words-sha256-v1",
        "simhash64-shingle3-sha256-v1",
        "simhash64-cjkbigram-sha256-v1",
    ):
        assert fingerprint_text(key, text) == fingerprint_text(key, text, reference=True)


def _one_method_alone(key: str, text: str) -> FingerprintResult:
    """The method's definition step by step, nothing shared with another method."""
    norm = normalize_for(key, text)
    tokens = tokens_for(key, norm)
    digest = hashlib.sha256(norm.encode("utf-8")).hexdigest()
    if len(tokens) < 3:
        return FingerprintResult("insufficient_features", None, digest, len(tokens))
    return FingerprintResult("ok", simhash64_reference(tokens), digest, len(tokens))


_MIXED_TEXT = st.lists(
    st.sampled_from(
        [
            "alpha",
            "Beta",
            "gamma",
            "ＡＢＣ",
            "ﬁne",
            "café",
            "cafe\u0301",
            "中文",
            "漢字詞",
            "…",
            "x1",
        ]
        + [" ", "\u00a0", "\u3000", "\n", "\u200b"]
    ),
    max_size=40,
).map("".join)


@given(st.one_of(st.text(), _MIXED_TEXT))
def test_methods_computed_together_match_each_method_alone(text: str) -> None:
    together = fingerprint_texts(list(METHODS), text, min_tokens=3)
    assert together == {key: _one_method_alone(key, text) for key in METHODS}


@given(st.lists(st.one_of(st.text(), _MIXED_TEXT), max_size=5))
def test_remembered_nfc_words_are_the_definition(texts: list[str]) -> None:
    for text in [*texts, *texts]:  # the second time from memory
        norm, words = nfc_words(text)
        assert norm == normalize_nfc_v1(text)
        assert words == tokens_words(normalize_nfc_v1(text))


_BLANKISH = st.text(
    alphabet=st.sampled_from(
        [
            " ",
            "\t",
            "\n",
            "\u00a0",
            "\u3000",
            "\u2007",
            "\u200b",
            "\u00ad",
            "\ufeff",
            "a",
            "\u0301",
            "字",
        ]
    ),
    max_size=30,
)


@given(st.one_of(_BLANKISH, st.text(max_size=30)))
def test_is_blank_is_exactly_what_folding_empties(text: str) -> None:
    assert is_blank(text) == (fold_spaces(text) == "")


@given(st.text(), st.sampled_from(sorted(METHODS)))
def test_a_text_fingerprinted_first_normalizes_as_its_method_says(text: str, key: str) -> None:
    from ingest.core.normalize import NORMALIZERS

    fingerprint_texts(sorted(METHODS), text)  # remembers what it normalized
    assert normalize_for(key, text) == NORMALIZERS[METHODS[key].normalization](text)


def test_the_recent_normalized_texts_stay_within_their_character_budget(monkeypatch) -> None:
    from ingest.core import methods

    monkeypatch.setattr(methods, "RECENT_MAX_CHARS", 10_000)
    monkeypatch.setattr(methods, "_recent", {})
    monkeypatch.setattr(methods, "_recent_chars", 0)
    texts = [f"text number {i} " * 20 for i in range(100)]
    for text in texts:
        normalize_for(REFERENCE_KEY, text)
    kept = sum(len(t) + len(n) for (_, t), n in methods._recent.items())
    assert kept == methods._recent_chars <= 10_000
    # The newest are kept, the oldest went first.
    assert (METHODS[REFERENCE_KEY].normalization, texts[-1]) in methods._recent
    assert (METHODS[REFERENCE_KEY].normalization, texts[0]) not in methods._recent
