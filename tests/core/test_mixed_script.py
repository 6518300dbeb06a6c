"""The mixed-script default method (simhash64-mixedscript-sha256-v1): CJK runs read as
characters, every other script as the locked reference's words."""

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core.methods import (
    CURRENT_REFERENCE_KEY,
    DEFAULT_KEY,
    MIXED_KEY,
    REFERENCE_KEY,
    fingerprint_text,
    method_get,
)
from ingest.core.normalize import (
    _FOLD_RUN_RE,
    han_t2s,
    has_cjk,
    mixed_tokens,
    normalize_mixed_v1,
    normalize_nfc_v1,
    tokens_mixed_unibigrams,
)
from ingest.core.simhash import hamming

# Arbitrary text with every CJK character, full-width form and U+3000 taken out.
_NON_CJK_TEXT = st.text().map(lambda t: _FOLD_RUN_RE.sub("", t))
_WORDS = st.sampled_from(
    [
        "Tiếng",
        "Việt",
        "người",
        "Hà Nội",
        "đồng",
        "Nguyễn",
        "Theo",
        "Nguồn:",
        "café",
        "cafe\u0301",
        "ﬁne",
        "x²",
        "Москва",
        "Ελλάδα",
        "12.500.000 đ",
        "—",
        "…",
        "alpha",
        "BETA",
        "straße",
        "'s",
        "1,234.5",
    ]
    + [" ", "\u00a0", "\n", "\t", "\u200b", ", ", ". "]
)
_LATIN_VIETNAMESE = st.lists(_WORDS, max_size=60).map("".join)


@settings(max_examples=300)
@given(st.one_of(_NON_CJK_TEXT, _LATIN_VIETNAMESE))
def test_text_without_cjk_gets_the_reference_fingerprint_bit_for_bit(text: str) -> None:
    assert not has_cjk(unicodedata.normalize("NFC", text))
    for reference in (False, True):
        new = fingerprint_text(MIXED_KEY, text, reference=reference)
        assert new == fingerprint_text(REFERENCE_KEY, text, reference=reference)
        assert fingerprint_text(DEFAULT_KEY, text) == fingerprint_text(CURRENT_REFERENCE_KEY, text)


def test_the_reference_vectors_hold_under_the_default_method() -> None:
    assert f"{fingerprint_text(DEFAULT_KEY, 'alpha beta gamma delta').simhash:016x}" == (
        "8e4a54256f09d080"
    )


def test_vietnamese_keeps_its_diacritics() -> None:
    norm = normalize_mixed_v1("Người Việt ở Hà Nội")
    assert norm == "Người Việt ở Hà Nội"
    assert tokens_mixed_unibigrams(norm) == ["người", "việt", "ở", "hà", "nội"]


def test_full_width_forms_fold_to_their_ascii_forms() -> None:
    assert normalize_mixed_v1("ＡＢＣ１２３ｘ") == "ABC123x"
    assert normalize_mixed_v1("价格：￥１２８元") == "价格:¥128元"
    assert normalize_mixed_v1("ｶﾀｶﾅ") == "カタカナ"  # half-width katakana


def test_nfkc_applies_only_inside_cjk_runs_and_the_full_width_block() -> None:
    # A ligature and a superscript outside CJK stay as the reference sees them ...
    assert normalize_mixed_v1("ﬁne x² 中文") == "ﬁne x² 中文"
    # ... and a compatibility ideograph inside a CJK run becomes the unified one.
    assert normalize_mixed_v1("\uf900") == normalize_mixed_v1("\u8c48") == "岂"


def test_ideographic_space_and_nbsp_are_spaces() -> None:
    assert normalize_mixed_v1("中国\u3000经济\u00a0新闻") == "中国 经济 新闻"
    assert tokens_mixed_unibigrams("中国\u3000经济") == tokens_mixed_unibigrams("中国 经济")


def test_chinese_punctuation_is_kept_and_separates_runs() -> None:
    norm = normalize_mixed_v1("北京，上海。广州！「深圳」、天津？")
    assert norm == "北京,上海。广州!「深圳」、天津?"
    tokens = tokens_mixed_unibigrams(norm)
    # No bigram joins two characters across a punctuation mark.
    assert "京上" not in tokens and "海广" not in tokens and "州深" not in tokens
    assert "北京" in tokens and "深圳" in tokens


def test_traditional_characters_fold_to_simplified() -> None:
    assert normalize_mixed_v1("後來，髮型設計師說：乾燥的頭髮") == "后来,发型设计师说:干燥的头发"
    simplified = "国务院新闻办公室今天举行发布会，介绍经济运行情况。"
    traditional = "國務院新聞辦公室今天舉行發佈會，介紹經濟運行情況。"
    a = fingerprint_text(DEFAULT_KEY, simplified)
    b = fingerprint_text(DEFAULT_KEY, traditional)
    assert a.text_sha256 == b.text_sha256  # an exact copy once folded
    assert a.simhash == b.simhash


def test_t2s_leaves_every_character_outside_han_as_it_is() -> None:
    # The folding step may run over a whole text: its dictionaries map Han to Han only.
    han = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
    others = "".join(
        chr(c) for c in range(0x20, 0xFFFE) if not han.match(chr(c)) and not 0xD800 <= c < 0xE000
    )
    lines = "\n".join(others[i : i + 64] for i in range(0, len(others), 64))
    assert han_t2s(lines) == lines


def test_cjk_runs_become_characters_and_bigrams() -> None:
    assert tokens_mixed_unibigrams("中华人民 ok 国") == [
        "中", "华", "人", "民", "中华", "华人", "人民", "ok", "国",
    ]  # fmt: skip
    assert tokens_mixed_unibigrams("中国") == ["中", "国", "中国"]
    assert mixed_tokens("中华人民", 3) == ["中华人", "华人民"]
    assert tokens_mixed_unibigrams("東京タワー")[-4:] == ["東京", "京タ", "タワ", "ワー"]
    assert tokens_mixed_unibigrams("서울 시청") == ["서", "울", "서울", "시", "청", "시청"]


def test_one_changed_character_moves_a_chinese_text_a_few_bits() -> None:
    text = (
        "在美国旧金山举行的中美元首会晤吸引了全世界的目光。多名外国专家表示，"
        "中美合作共赢符合国际社会的共同利益，双方应当加强沟通，管控分歧。"
    )
    changed = text.replace("加强", "增进")
    new = hamming(
        fingerprint_text(DEFAULT_KEY, text).simhash or 0,
        fingerprint_text(DEFAULT_KEY, changed).simhash or 0,
    )
    old = hamming(
        fingerprint_text(CURRENT_REFERENCE_KEY, text).simhash or 0,
        fingerprint_text(CURRENT_REFERENCE_KEY, changed).simhash or 0,
    )
    assert new <= 6 < old


def test_the_method_names_its_normalization_and_tokenizer() -> None:
    spec = method_get(DEFAULT_KEY)
    assert spec.normalization == "nfc-cjknfkc-t2s-spacefold-v1"
    assert spec.tokenizer == "mixed-cjk-unibigram-words-v1"
    assert normalize_nfc_v1("x\u00a0y") == normalize_mixed_v1("x\u00a0y")


@given(st.text())
def test_has_cjk_is_whether_a_cjk_run_is_there(text: str) -> None:
    assert has_cjk(text) == (_FOLD_RUN_RE.search(text) is not None)
    assert has_cjk(text + "\U00020001") and has_cjk("\uff01" + text)


def test_nfc_makes_no_cjk_character_of_other_characters() -> None:
    # What lets a text without CJK skip the mixed steps: its NFC form has none either.
    for c in [*range(0x1100, 0xD800), *range(0xF900, 0x10000), *range(0x20000, 0x323B0)]:
        ch = chr(c)
        if has_cjk(ch):
            assert all(has_cjk(part) for part in unicodedata.normalize("NFD", ch)), hex(c)
