"""reviews.core.diff: bounded word and line diffs; segments are plain text."""

from hypothesis import given
from hypothesis import strategies as st

from reviews.core.diff import line_diff, word_diff, words

WORD = st.sampled_from(["alpha", "beta", "gamma", "12.99", "<script>", "x&y", "delta"])
TEXT = st.lists(WORD, max_size=60).map(" ".join)


def test_identical_texts_have_no_changes() -> None:
    d = word_diff("the same words here", "the same words here")
    assert d.changes == 0 and d.identical
    assert [s.op for s in d.left] == ["equal"]


def test_a_changed_word_is_marked_on_both_sides() -> None:
    d = word_diff("the red lamp", "the blue lamp")
    assert [(s.text.strip(), s.op) for s in d.left] == [
        ("the", "equal"),
        ("red", "delete"),
        ("lamp", "equal"),
    ]
    assert ("blue", "insert") in [(s.text.strip(), s.op) for s in d.right]


def test_guard_terms_are_emphasised_only_where_they_changed() -> None:
    d = word_diff(
        "Price 12.99 now, was 10", "Price 14.99 now, was 10", emphasise=["12.99", "14.99"]
    )
    emphasised = [s.text.strip() for s in d.left + d.right if s.emphasis]
    assert emphasised == ["12.99", "14.99"]


def test_reflowed_whitespace_is_not_a_change() -> None:
    assert word_diff("one two\nthree", "one  two three").changes == 0


def test_long_texts_are_cut_and_say_so() -> None:
    a = " ".join(["w"] * 50)
    d = word_diff(a, a + " extra", max_words=10)
    assert d.truncated and d.cap == 10 and d.words_a == 50
    assert "".join(s.text for s in d.left).split() == ["w"] * 10


def test_markup_stays_plain_text_for_the_template_to_escape() -> None:
    d = word_diff("<script>alert(1)</script>", "<img src=x onerror=alert(1)>")
    assert "<script>alert(1)</script>" in "".join(s.text for s in d.left)


@given(TEXT, TEXT)
def test_segments_rebuild_both_texts(a: str, b: str) -> None:
    d = word_diff(a, b)
    assert "".join(s.text for s in d.left) == "".join(words(a))
    assert "".join(s.text for s in d.right) == "".join(words(b))


@given(TEXT, TEXT)
def test_equal_segments_match_across_sides(a: str, b: str) -> None:
    d = word_diff(a, b)
    left = [s.text.split() for s in d.left if s.op == "equal"]
    right = [s.text.split() for s in d.right if s.op == "equal"]
    assert sum(left, []) == sum(right, [])


def test_line_diff_pairs_changed_lines_side_by_side() -> None:
    d = line_diff("a\nb\nc", "a\nx\nc\nd")
    assert [(r.op, r.left, r.right) for r in d.rows] == [
        ("equal", "a", "a"),
        ("replace", "b", "x"),
        ("equal", "c", "c"),
        ("insert", None, "d"),
    ]
    assert d.changes == 2


def test_line_diff_is_bounded() -> None:
    big = "\n".join(f"line {i}" for i in range(100))
    d = line_diff(big, big + "\nmore", max_lines=10, max_line_chars=400)
    assert d.truncated and len(d.rows) == 10
    d = line_diff("x" * 1000, "y", max_line_chars=20)
    assert d.truncated and len(d.rows[0].left or "") < 30


@given(st.lists(WORD, max_size=30).map("\n".join), st.lists(WORD, max_size=30).map("\n".join))
def test_line_diff_keeps_every_line_in_order(a: str, b: str) -> None:
    d = line_diff(a, b)
    assert [r.left for r in d.rows if r.left is not None] == a.splitlines()
    assert [r.right for r in d.rows if r.right is not None] == b.splitlines()


def test_unchanged_runs_collapse_around_changes() -> None:
    a = "\n".join(f"line {i}" for i in range(50))
    b = a.replace("line 25", "line twenty-five")
    d = line_diff(a, b, context=2)
    ops = [r.op for r in d.rows]
    assert ops == ["skip", "equal", "equal", "replace", "equal", "equal", "skip"]
    assert d.rows[0].left == "23 unchanged lines" and d.rows[-1].left == "22 unchanged lines"


def test_full_page_words_outside_the_main_text_are_boilerplate() -> None:
    from reviews.core.diff import boilerplate_flags, word_diff, words

    full = "Home News Sport The lamp costs 12 euros. Contact us"
    main = "The lamp costs 12 euros."
    assert boilerplate_flags(words(full), main) == [True] * 3 + [False] * 5 + [True] * 2
    d = word_diff(full, full.replace("12", "14"), main_a=main, main_b=main.replace("12", "14"))
    marked = [(s.text.strip(), s.boilerplate) for s in d.left]
    assert marked[0] == ("Home News Sport", True) and marked[-1] == ("Contact us", True)
    assert all(not b for t, b in marked[1:-1])


def test_without_main_texts_nothing_is_boilerplate() -> None:
    from reviews.core.diff import word_diff

    d = word_diff("a b c", "a b d")
    assert not any(s.boilerplate for s in d.left + d.right)


# --- Scripts: character granularity inside CJK runs, words elsewhere -----------------

from reviews.core.diff import MOVED, token_count  # noqa: E402

MIXED = st.text(
    alphabet=st.sampled_from(
        list("ab xyz.,\n\t")
        + list("đêờơ ")  # Latin, Vietnamese
        + list("我们的中国价格元。，！？；「」")
        + list("ひらカナ한국어")  # Han, kana, hangul
        + list("ＡＢ１２，\u3000\u00a0")  # full-width forms, ideographic and no-break space
    ),
    max_size=120,
)
HAN = st.text(
    alphabet=st.sampled_from(list("北京上海记者表示城市政府会议决定项目计划")), min_size=1
)
ZH = "记者今天表示，城市政府已经决定继续推动这个项目。专家认为，这一计划需要更多资金。"


def _marked(segments) -> str:
    return "".join(s.text for s in segments if s.changed)


def test_one_changed_character_in_a_chinese_paragraph_marks_that_character() -> None:
    changed = ZH.replace("推动", "推进")
    d = word_diff(ZH, changed)
    assert _marked(d.left) == "动" and _marked(d.right) == "进"
    assert d.changes == 1
    assert "".join(s.text for s in d.left if not s.changed) == ZH.replace("动", "", 1)


def test_chinese_is_one_token_per_character_latin_and_numbers_are_words() -> None:
    assert words("价格199元，iPhone15 手机") == [
        "价", "格", "199", "元", "，", "iPhone15 ", "手", "机",
    ]  # fmt: skip
    assert words("ＡＢ１ カナ 한국") == ["Ａ", "Ｂ", "１ ", "カ", "ナ ", "한", "국"]
    # The ideographic space is white space, not a character to compare.
    assert words("北京\u3000上海") == ["北", "京\u3000", "上", "海"]


def test_vietnamese_keeps_word_granularity() -> None:
    d = word_diff("Giá bán hôm nay là 1.250.000₫", "Giá bán hôm qua là 1.250.000₫")
    assert _marked(d.left).strip() == "nay" and _marked(d.right).strip() == "qua"


def test_a_changed_price_in_chinese_text_is_emphasised() -> None:
    d = word_diff(
        "本店价格199元，运费12元。", "本店价格299元，运费12元。", emphasise=["199", "299"]
    )
    assert [s.text for s in d.left + d.right if s.emphasis] == ["199", "299"]


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_text_without_cjk_is_tokenized_by_white_space_as_before(text: str) -> None:
    import re

    from reviews.core.diff import _CJK_RUN

    if _CJK_RUN.search(text) is None:
        assert words(text) == re.findall(r"\S+\s*|\s+", text)
    assert "".join(words(text)) == text
    assert token_count(text) == len(words(text))


@given(MIXED, st.integers(min_value=0, max_value=12))
def test_token_count_is_the_number_of_tokens(text: str, limit: int) -> None:
    assert token_count(text) == len(words(text))
    # (Texts longer than 2 × limit take the prefix path.)
    assert words(text, limit) == words(text)[:limit]


def _edges() -> list[str]:
    from reviews.core.diff import _CJK_BOUNDS

    blocks = [chr(c) for b in _CJK_BOUNDS.tolist() for c in (b - 1, b)]
    return blocks + [chr(c) for c in range(0x3001) if chr(c).isspace()] + list("a,")


@given(st.text(alphabet=st.sampled_from(_edges()), max_size=60))
def test_token_count_at_the_edges_of_the_cjk_blocks_and_of_white_space(text: str) -> None:
    assert token_count(text) == len(words(text))


@given(MIXED, MIXED)
def test_segments_rebuild_both_texts_in_any_script(a: str, b: str) -> None:
    d = word_diff(a, b)
    assert "".join(s.text for s in d.left) == a
    assert "".join(s.text for s in d.right) == b


@given(MIXED, MIXED)
def test_unchanged_tokens_are_the_same_on_both_sides(a: str, b: str) -> None:
    d = word_diff(a, b)
    # (White space is not compared: a leading space is no change.)
    left = [w.strip() for s in d.left if s.op == "equal" for w in words(s.text) if w.strip()]
    right = [w.strip() for s in d.right if s.op == "equal" for w in words(s.text) if w.strip()]
    assert left == right


@given(MIXED)
def test_a_text_against_itself_marks_nothing(text: str) -> None:
    d = word_diff(text, text)
    assert not any(s.changed or s.op == MOVED for s in d.left + d.right)
    assert d.changes == d.moves == 0


@given(HAN, HAN, st.data())
def test_one_substituted_character_marks_only_that_character(
    head: str, tail: str, data: st.DataObject
) -> None:
    old, new = data.draw(st.sampled_from(list("北京上海记者"))), "乙"
    a, b = f"{head}{old}{tail}。\n{tail}", f"{head}{new}{tail}。\n{tail}"
    d = word_diff(a, b)
    assert _marked(d.left) == old and _marked(d.right) == new
    assert d.changes == 1


def test_a_moved_paragraph_is_moved_not_deleted_and_inserted() -> None:
    paragraphs = [f"Paragraph {i} tells about item {i} in detail." for i in range(5)]
    moved = paragraphs[1:4] + paragraphs[:1] + paragraphs[4:]
    d = word_diff("\n".join(paragraphs), "\n".join(moved))
    assert d.changes == 0 and d.moves == 1 and not d.identical
    (left,) = [s for s in d.left if s.op == MOVED]
    (right,) = [s for s in d.right if s.op == MOVED]
    assert left.text.strip() == right.text.strip() == paragraphs[0]
    assert left.move == right.move == 1


def test_a_moved_chinese_paragraph_beside_a_changed_one() -> None:
    p = ["第一段记者表示。", "第二段专家认为。", "第三段政府决定。", "第四段居民说。"]
    b = [p[2], p[0], p[1].replace("认为", "表示"), p[3]]
    d = word_diff("\n".join(p), "\n".join(b))
    assert d.moves == 1 and d.changes == 1
    assert _marked(d.left) == "认为" and _marked(d.right) == "表示"
    assert [s.text.strip() for s in d.left if s.op == MOVED] == [p[2]]


PARAGRAPH = MIXED.map(lambda t: t.replace("\n", " ").strip()).filter(bool)


@given(st.lists(PARAGRAPH, unique=True, max_size=8), st.randoms())
def test_reordered_paragraphs_have_no_changes(paragraphs: list[str], rnd) -> None:
    shuffled = paragraphs[:]
    rnd.shuffle(shuffled)
    d = word_diff("\n".join(paragraphs), "\n".join(shuffled))
    # Paragraphs that differ only in spacing have one key: moved or equal, never changed.
    assert d.changes == 0
