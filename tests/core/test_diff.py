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
