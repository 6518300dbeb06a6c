"""Sentence alignment: moved blocks are moves, not changes; nothing is lost."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.core.align import EQUAL, MOVED, SKIP, sentence_align, sentences

WORD = st.sampled_from(
    ["river", "harbour", "lantern", "meadow", "granite", "orchard", "falcon", "copper"]
)
SENTENCE = st.lists(WORD, min_size=2, max_size=6).map(lambda w: " ".join(w).capitalize() + ".")


def _side(rows, side: str) -> list[str]:
    """A side's sentences back from the rows (skip rows count equal sentences)."""
    out: list[str | int] = []
    for r in rows:
        if r.op == SKIP:
            out.append(int(r.left))
        elif getattr(r, side) is not None:
            out.append(getattr(r, side))
    return out  # type: ignore[return-value]


def test_a_reordered_text_is_moves_not_changes() -> None:
    para = [f"Sentence number {i} says something about item {i}." for i in range(26)]
    a = " ".join(para)
    b = " ".join(para[13:] + para[:13])
    result = sentence_align(a, b)
    assert result.changes == 0 and result.moves == 1
    assert sum(1 for r in result.rows if r.op == MOVED) == 26


def test_unchanged_runs_collapse_around_a_change() -> None:
    para = [f"Line {i} of the story." for i in range(20)]
    changed = para[:10] + ["A new sentence here."] + para[11:]
    result = sentence_align(" ".join(para), " ".join(changed), context=1)
    ops = [r.op for r in result.rows]
    assert ops.count(SKIP) == 2 and result.changes == 1
    assert [r.left for r in result.rows if r.op == SKIP] == ["9", "8"]


@settings(deadline=None)
@given(st.lists(SENTENCE, min_size=1, max_size=30), st.randoms(use_true_random=False))
def test_a_permutation_has_no_changes(items: list[str], rnd: random.Random) -> None:
    shuffled = items[:]
    rnd.shuffle(shuffled)
    result = sentence_align(" ".join(items), " ".join(shuffled))
    assert result.changes == 0
    assert all(r.op in (EQUAL, MOVED, SKIP) for r in result.rows)


@settings(deadline=None)
@given(st.lists(SENTENCE, max_size=25), st.lists(SENTENCE, max_size=25), st.integers(0, 3))
def test_every_sentence_of_each_side_is_shown_in_order(
    a: list[str], b: list[str], context: int
) -> None:
    result = sentence_align(" ".join(a), " ".join(b), context=context)
    for side, text in (("left", " ".join(a)), ("right", " ".join(b))):
        shown = _side(result.rows, side)
        expected = sentences(text)
        # Skip rows stand for that many equal sentences, shown on both sides.
        flat: list[str] = []
        pos = 0
        for item in shown:
            if isinstance(item, int):
                flat.extend(expected[pos : pos + item])
                pos += item
            else:
                flat.append(item)
                pos += 1
        assert flat == expected


def test_chinese_sentences_end_at_chinese_end_punctuation() -> None:
    text = "记者表示。专家认为，这一计划需要资金！真的吗？是的；明天开会。"
    assert sentences(text) == [
        "记者表示。",
        "专家认为，这一计划需要资金！",
        "真的吗？",
        "是的；",
        "明天开会。",
    ]


def test_closing_quotes_stay_with_their_sentence() -> None:
    text = "他说：“我们明天去北京。”她问：「真的吗？」（好！）English here. 「引用。」』下一句。"
    assert sentences(text) == [
        "他说：“我们明天去北京。”",
        "她问：「真的吗？」",
        "（好！）",
        "English here.",
        "「引用。」』",
        "下一句。",
    ]


def test_english_sentences_split_as_before() -> None:
    text = 'It costs $74.90 today. "Really?" she asked. Yes! (It is.) Next line\nand more'
    assert sentences(text) == [
        "It costs $74.90 today.",
        '"Really?"',
        "she asked.",
        "Yes!",
        "(It is.)",
        "Next line",
        "and more",
    ]


def test_a_changed_chinese_sentence_is_one_changed_row_not_the_paragraph() -> None:
    a = "第一句话说明情况。第二句话介绍背景。第三句话给出结论。"
    b = a.replace("介绍背景", "介绍历史")
    result = sentence_align(a, b, context=5)
    assert [(r.op, r.left, r.right) for r in result.rows] == [
        (EQUAL, "第一句话说明情况。", "第一句话说明情况。"),
        ("replace", "第二句话介绍背景。", "第二句话介绍历史。"),
        (EQUAL, "第三句话给出结论。", "第三句话给出结论。"),
    ]


def test_reordered_chinese_sentences_are_moves() -> None:
    a = "甲说今天下雨。乙说明天晴天。丙说后天刮风。丁说周末降温。"
    b = "丙说后天刮风。丁说周末降温。甲说今天下雨。乙说明天晴天。"
    result = sentence_align(a, b)
    assert result.changes == 0 and result.moves >= 1


def test_a_replaced_sentence_carries_its_character_diff() -> None:
    a = "第一句话说明情况。第二句话介绍背景。"
    b = "第一句话说明情况。第二句话介绍北景。"
    (row,) = [r for r in sentence_align(a, b).rows if r.op == "replace"]
    assert "".join(s.text for s in row.left_parts) == row.left
    assert [s.text for s in row.left_parts if s.changed] == ["背"]
    assert [s.text for s in row.right_parts if s.changed] == ["北"]
    assert all(not r.left_parts for r in sentence_align(a, b).rows if r.op != "replace")
