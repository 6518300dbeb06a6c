import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.core.guards import (
    MAX_SHOWN,
    Guards,
    _guards,
    _similarity,
    excerpt,
    guards_check,
    id_tokens,
    numeric_tokens,
    similarity,
)
from ingest.core.normalize import fold_spaces

ARTICLE = " ".join(
    f"Paragraph {i} of the report says the council met on Tuesday and agreed the plan"
    f" for district {i % 7} after a long debate about costs and schedules."
    for i in range(60)
)


def test_a_price_change_fires_numbers_differ() -> None:
    g = guards_check("Giá: 1.250.000₫ — còn hàng", "Giá: 1.350.000₫ — còn hàng")
    assert g.numbers_differ
    assert g.numbers_a == ("1.250.000",)
    assert g.numbers_b == ("1.350.000",)
    assert g.flags() == ["numbers_differ"]
    assert g.any()


def test_the_same_numbers_reordered_are_not_a_difference() -> None:
    a = "Small: 19.99 USD. Large: 24.99 USD. Sale ends 2026-05-01."
    b = "Sale ends 2026-05-01. Large: 24.99 USD. Small: 19.99 USD."
    assert not guards_check(a, b).any()


def test_numbers_are_a_multiset() -> None:
    g = guards_check("3 apples and 3 pears", "3 apples and 4 pears")
    assert g.numbers_differ
    assert (g.numbers_a, g.numbers_b) == (("3",), ("4",))
    assert guards_check("3 and 3", "3").numbers_differ


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Giá 1.250.000₫", ["1.250.000"]),
        ("价格 199 元", ["199"]),
        ("价格199元，运费12元", ["199", "12"]),
        ("price 19.99, released 2026-05-01 at 10:30", ["19.99", "2026-05-01", "10:30"]),
        ("firmware v2.3 and v1.2.10", ["2.3", "1.2.10"]),
        ("１２８GB ５０％", ["128", "50"]),  # full-width digits, NFKC
        ("1,250,000 people; 3rd place", ["1,250,000", "3"]),
        ("no numbers here.", []),
        ("ends with a number 42.", ["42"]),
    ],
)
def test_numeric_tokens(text: str, numbers: list[str]) -> None:
    assert numeric_tokens(text) == numbers


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("SKU-4411 in stock", ["SKU-4411"]),
        ("Model AB12-X9, also iPhone15 and x86_64", ["AB12-X9", "iPhone15", "x86_64"]),
        ("ＳＫＵ－４４１１", ["SKU-4411"]),  # NFKC
        ("10kg 128GB 1080p 3rd v2 H2O A4", []),  # numbers with units, too short
        ("2026-05-01 19.99 1.250.000", []),  # no letter
        ("SKU ABCD", []),  # no digit
    ],
)
def test_id_tokens(text: str, ids: list[str]) -> None:
    assert id_tokens(text) == ids


def test_an_sku_change_fires_ids_differ_not_numbers_differ() -> None:
    g = guards_check("Blue kettle, SKU-4411, 1.7 l", "Blue kettle, SKU-4412, 1.7 l")
    assert g.ids_differ and not g.numbers_differ
    assert (g.ids_a, g.ids_b) == (("SKU-4411",), ("SKU-4412",))


def test_ids_are_a_casefolded_set() -> None:
    assert not guards_check("sku-4411 … SKU-4411", "SKU-4411").ids_differ


def test_title_differs_needs_two_titles() -> None:
    assert guards_check("x", "x", "Kettle 1.7 l", "Toaster").title_differs
    assert not guards_check("x", "x", "Kettle  1.7 L", "kettle 1.7 l").title_differs
    assert not guards_check("x", "x", "Kettle", "").title_differs
    assert not guards_check("x", "x", "  ", "Kettle").title_differs


def test_display_lists_are_capped() -> None:
    a = " ".join(str(i) for i in range(100))
    b = " ".join(str(i) for i in range(100, 200))
    g = guards_check(a, b)
    assert len(g.numbers_a) == len(g.numbers_b) == MAX_SHOWN


def test_flags() -> None:
    g = Guards(numbers_differ=True, ids_differ=False, title_differs=True)
    assert g.flags() == ["numbers_differ", "title_differs"]
    assert not Guards(False, False, False).any()


@given(st.text(max_size=300), st.text(max_size=40))
def test_a_text_never_differs_from_itself(text: str, title: str) -> None:
    g = guards_check(text, text, title, title)
    assert g.flags() == []
    assert g.numbers_a == g.numbers_b == g.ids_a == g.ids_b == ()


@given(st.text(max_size=300).filter(lambda t: fold_spaces(t) != ""))
def test_similarity_of_a_text_with_itself(text: str) -> None:
    s = similarity(text, text)
    assert s.ratio == 100
    assert s.length_ratio == 1


@given(
    st.text(max_size=300).filter(lambda t: fold_spaces(t) != ""),
    st.integers(min_value=2, max_value=400),
)
def test_a_text_with_itself_scores_as_the_full_computation_says(text: str, max_chars: int) -> None:
    # Equal texts skip the computation: the result must be the one it would give.
    e = excerpt(text, max_chars)
    assert similarity(text, text, max_chars=max_chars) == _similarity(text, text, e, e)


@given(st.text(max_size=300), st.text(max_size=40), st.text(max_size=40))
def test_guards_of_a_text_with_itself_are_those_the_full_check_gives(
    text: str, title_a: str, title_b: str
) -> None:
    # Equal texts skip the scan: the result must be the one the scan would give.
    g = guards_check(text, text, title_a, title_b)
    assert g == _guards(text, text, g.title_differs)


def test_empty_text_is_similar_to_nothing() -> None:
    assert similarity("", "") == similarity("  ", "  ") == similarity("", "text")
    assert similarity("", "").ratio == 0


def test_a_teaser_is_contained_in_its_article() -> None:
    teaser = " ".join(ARTICLE.split()[:40])
    s = similarity(teaser, ARTICLE)
    assert s.containment == pytest.approx(1.0)
    assert s.ratio < 30
    assert s.length_ratio < 0.1
    assert similarity(ARTICLE, teaser) == s  # symmetric


def test_unrelated_texts_are_not_contained() -> None:
    other = "Weather: sunny with light winds, highs of 24 degrees, rain expected on Friday."
    assert similarity(other, ARTICLE).containment == 0


def test_short_texts_use_shorter_shingles() -> None:
    assert similarity("council met", ARTICLE).containment == 1
    assert similarity("council", ARTICLE).containment == 1


def test_excerpt_is_bounded() -> None:
    text = "a" * 100 + "b" * 100
    assert excerpt(text, 1000) == text
    short = excerpt(text, 20)
    assert len(short) == 21 and short.startswith("a" * 10) and short.endswith("b" * 10)


def test_five_megabytes_are_compared_through_bounded_excerpts() -> None:
    # The work does not grow with the input: only the excerpts are compared (speed itself is
    # measured by the benchmark, not here).
    big = ("Lorem ipsum dolor sit amet 19.99 SKU-4411 " * 120_000)[:5_000_000]
    other = big[:-1000] + " price 20.99"
    s = similarity(big, other)
    cut = similarity(excerpt(big, 20_000), excerpt(other, 20_000))
    assert (s.ratio, s.token_set_ratio) == (cut.ratio, cut.token_set_ratio)
    assert s.ratio > 90
    assert guards_check(big, other).numbers_differ
