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


# --- Chinese and Vietnamese prices and numbers ---------------------------------------

from ingest.core.guards import numeric_values, zh_numeral_value  # noqa: E402

ZH_PAGE = "华为手机 Mate 60 Pro 现价{price}，包邮，库存充足。本店承诺七天无理由退货。"
VI_PAGE = "Điện thoại Samsung Galaxy A55, giá {price}, bảo hành 12 tháng, còn hàng."


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("售价1.2万元", ["12000"]),
        ("投资3亿元，1.5万亿", ["300000000", "1500000000000"]),
        ("¥12,000 或 ￥12000.00 或 RMB12000 或 人民币 12000 元", ["12000"] * 4),
        ("一万二千元，三百元，两千块，十元", ["12000", "300", "2000", "10"]),
        ("1.234.567 đ · 1234567 VNĐ · 1.234.567₫ · 1.234.567 đồng", ["1234567"] * 4),
        ("Giá 250,000đ hoặc 250.000 VND", ["250000", "250000"]),
        ("1,5 triệu đồng = 1.500.000đ", ["1500000", "1500000"]),
        ("3 tỷ, 200 nghìn", ["3000000000", "200000"]),
        ("1.234,56 € = 1,234.56 $", ["1234.56", "1234.56"]),
        ("price 19.99, 1,250 people, 1.250 kg", ["19.99", "1250", "1.25"]),
        ("firmware v1.2.10 on 2026-05-01 at 10:30", ["1.2.10", "2026-05-01", "10:30"]),
    ],
)
def test_numeric_values(text: str, values: list[str]) -> None:
    assert numeric_values(text) == values


def test_numbers_are_shown_as_written() -> None:
    assert numeric_tokens("售价1.2万元，原价一万五千元") == ["1.2万", "一万五千"]
    assert numeric_tokens("Giá 1,5 triệu đồng") == ["1,5 triệu"]


@pytest.mark.parametrize(
    ("numeral", "value"),
    [("十", 10), ("十五", 15), ("二十", 20), ("三百零五", 305), ("一万二千", 12000),
     ("两亿", 200_000_000), ("一亿二千万", 120_000_000), ("壹仟贰佰", 1200), ("万", 10_000),
     ("亿", 10**8), ("三万亿", 3 * 10**12)],
)  # fmt: skip
def test_chinese_numerals(numeral: str, value: int) -> None:
    assert zh_numeral_value(numeral) == value


def test_a_chinese_price_change_fires_numbers_differ() -> None:
    g = guards_check(ZH_PAGE.format(price="5999元"), ZH_PAGE.format(price="6499元"))
    assert g.flags() == ["numbers_differ"]
    assert (g.numbers_a, g.numbers_b) == (("5999",), ("6499",))
    g = guards_check(ZH_PAGE.format(price="1.2万元"), ZH_PAGE.format(price="1.3万元"))
    assert (g.numbers_a, g.numbers_b) == (("1.2万",), ("1.3万",))


def test_a_vietnamese_price_change_fires_numbers_differ() -> None:
    g = guards_check(VI_PAGE.format(price="8.990.000đ"), VI_PAGE.format(price="9.490.000đ"))
    assert g.flags() == ["numbers_differ"]
    assert (g.numbers_a, g.numbers_b) == (("8.990.000",), ("9.490.000",))


@pytest.mark.parametrize(
    ("page", "one", "other"),
    [
        (ZH_PAGE, "1.2万元", "12000元"),
        (ZH_PAGE, "¥12,000", "一万二千元"),
        (ZH_PAGE, "3亿元", "300000000元"),
        (VI_PAGE, "1.234.567đ", "1234567 VNĐ"),
        (VI_PAGE, "1.234.567 ₫", "1,234,567 đồng"),
        (VI_PAGE, "1,5 triệu đồng", "1.500.000 đ"),
    ],
)
def test_one_price_written_two_ways_is_not_a_difference(page: str, one: str, other: str) -> None:
    assert not guards_check(page.format(price=one), page.format(price=other)).any()


def test_a_currency_code_glued_to_a_price_is_not_an_id() -> None:
    assert id_tokens("RMB199 VND500000 SKU-4411") == ["SKU-4411"]
    assert numeric_values("RMB199") == ["199"]


def test_dot_thousands_need_a_vietnamese_sign_for_one_group() -> None:
    # One dot before three digits: thousands beside đ, a decimal mark in English text.
    assert numeric_values("1.250đ") == ["1250"]
    assert numeric_values("1.250 kg") == ["1.25"]
    assert guards_check("Giá 1.250đ", "Giá 1250đ").flags() == []
    assert guards_check("weight 1.250 kg", "weight 1250 kg").numbers_differ


PRICES = st.integers(min_value=1, max_value=10**9)


def _dots(n: int) -> str:
    return f"{n:,}".replace(",", ".")


@given(PRICES, st.sampled_from(["{}đ", "{} đ", "{} VNĐ", "{}₫", "{} đồng", "{} VND"]))
def test_vietnamese_prices_in_any_writing_are_one_value(n: int, form: str) -> None:
    written = {_dots(n), f"{n:,}", str(n)}
    values = {numeric_values(form.format(w))[0] for w in written}
    assert values == {str(n)}


@given(st.integers(min_value=1, max_value=99_999), st.integers(min_value=0, max_value=9))
def test_wan_amounts_equal_their_digits(whole: int, tenth: int) -> None:
    amount = f"{whole}.{tenth}万元" if tenth else f"{whole}万元"
    assert numeric_values(amount) == [str(whole * 10_000 + tenth * 1_000)]


@given(PRICES, PRICES)
def test_two_different_prices_always_differ(p: int, q: int) -> None:
    g = guards_check(VI_PAGE.format(price=f"{_dots(p)}đ"), VI_PAGE.format(price=f"{_dots(q)}đ"))
    assert g.numbers_differ == (p != q)
    g = guards_check(ZH_PAGE.format(price=f"¥{p:,}"), ZH_PAGE.format(price=f"{q}元"))
    assert g.numbers_differ == (p != q)


@given(
    st.text(
        alphabet=st.sampled_from(list("0123456789.,:-/ 万亿đ₫元块十百千一二两triệuVNĐ¥")),
        max_size=60,
    )
)
def test_any_digits_and_separators_give_one_value_each_and_never_fail(text: str) -> None:
    written, values = numeric_tokens(text), numeric_values(text)
    assert len(written) == len(values)
    assert guards_check(text, text).flags() == []
