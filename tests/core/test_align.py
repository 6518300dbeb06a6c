"""Sentence alignment: moved blocks are moves, not changes; nothing is lost."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.core.align import EQUAL, MOVED, SKIP, sentence_align, sentences

WORD = st.sampled_from(
    ["river", "harbour", "lantern", "meadow", "granite", "orchard", "falcon", "copper"]
)
SENTENCE = st.lists(WORD, min_size=2, max_size=6).map(lambda w: " ".join(w).capitalize() + ".")


def _side(rows, side: str) -> list[str]:  # type: ignore[no-untyped-def]
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
