"""The passage channel's short-copy rule (ingest/core/shortcopy.py)."""

import math
import random

from hypothesis import given
from hypothesis import strategies as st

from ingest.core import passages as P
from ingest.core.guards import similarity
from ingest.core.normalize import has_cjk
from ingest.core.shortcopy import (
    ShortRule,
    char_containment,
    char_shingles,
    reads_as_words,
    shared_needed,
    short_copy,
    shorter_passages,
)
from tests.zh_text import chinese_article_text

RULE = ShortRule()
VOCAB = [f"w{i}" for i in range(2000)]


def _text(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(VOCAB) for _ in range(words))


def _edited(text: str, every: int) -> str:
    """One word in ``every`` changed (a wire desk's light edits)."""
    return " ".join("edited" if i % every == every - 1 else w for i, w in enumerate(text.split()))


def _scores(a: str, b: str) -> tuple[P.Overlap, float]:
    return P.overlap(P.passages(a), P.passages(b)), similarity(a, b).containment


def test_an_edited_excerpt_beside_context_is_a_short_copy_the_old_rule_misses() -> None:
    old = new = 0
    for seed in range(3, 23):  # several articles: no single page decides
        article = _text(seed, 500)
        copy = _text(seed + 100, 100) + " " + _edited(" ".join(article.split()[200:340]), 20)
        ov, shingles = _scores(article, copy)
        was = P.nominates(ov, containment_min=0.5, shared_min=3)
        old += was
        new += was or short_copy(ov, shingle_containment=shingles, rule=RULE)
    assert old <= 12  # most are under the channel's containment threshold
    assert new >= 18


def test_different_short_texts_sharing_a_footer_are_not_a_short_copy() -> None:
    footer = _text(99, 40)
    for seed in range(20, 30):
        a, b = _text(seed, 150) + " " + footer, _text(seed + 50, 150) + " " + footer
        ov, shingles = _scores(a, b)
        assert ov.shared >= 1  # the footer's passages are shared
        assert not short_copy(ov, shingle_containment=shingles, rule=RULE)


def test_long_texts_are_left_to_the_channel_s_own_rule() -> None:
    a = _text(5, 900)
    b = _text(6, 900) + " " + " ".join(a.split()[:400])
    ov, shingles = _scores(a, b)
    assert shorter_passages(ov) > RULE.passages_max
    assert not short_copy(ov, shingle_containment=1.0, rule=RULE)


def test_each_condition_is_needed() -> None:
    ov = P.Overlap(shared=4, size_a=12, size_b=20)
    assert short_copy(ov, shingle_containment=0.5, rule=RULE)
    assert not short_copy(ov, shingle_containment=0.39, rule=RULE)
    assert not short_copy(P.Overlap(2, 12, 20), shingle_containment=0.9, rule=RULE)
    assert short_copy(P.Overlap(3, 12, 20), shingle_containment=0.9, rule=RULE)  # 0.25
    assert not short_copy(P.Overlap(3, 13, 20), shingle_containment=0.9, rule=RULE)  # 0.23
    assert not short_copy(P.Overlap(7, 25, 30), shingle_containment=0.9, rule=RULE)  # long
    assert not short_copy(P.Overlap(0, 0, 20), shingle_containment=1.0, rule=RULE)


rules = st.builds(
    ShortRule,
    passages_max=st.integers(0, 64),
    shingle_min=st.floats(0, 1),
    shared_min=st.integers(0, 10),
    containment_min=st.floats(0, 1),
)
overlaps = st.tuples(st.integers(0, 80), st.integers(0, 80), st.integers(0, 80)).map(
    lambda t: P.Overlap(shared=min(t), size_a=t[1], size_b=t[2])
)


@given(overlaps, st.floats(0, 1), st.floats(0, 1), rules)
def test_more_shared_text_never_unmakes_a_short_copy(
    ov: P.Overlap, shingles: float, more: float, rule: ShortRule
) -> None:
    """Monotone: more shingles, or one more shared passage, never turns a short copy
    into no copy; nor does a stricter rule make one."""
    if not short_copy(ov, shingle_containment=shingles, rule=rule):
        stricter = ShortRule(
            rule.passages_max, rule.shingle_min + 0.1, rule.shared_min + 1, rule.containment_min
        )
        assert not short_copy(ov, shingle_containment=shingles, rule=stricter)
        return
    assert short_copy(ov, shingle_containment=max(shingles, more), rule=rule)
    if ov.shared < min(ov.size_a, ov.size_b):
        grown = P.Overlap(ov.shared + 1, ov.size_a, ov.size_b)
        assert short_copy(grown, shingle_containment=shingles, rule=rule)


@given(overlaps, st.floats(0, 1), rules)
def test_a_short_copy_is_short_and_shares_passages(
    ov: P.Overlap, shingles: float, rule: ShortRule
) -> None:
    if short_copy(ov, shingle_containment=shingles, rule=rule):
        shorter = min(ov.size_a, ov.size_b)
        assert 0 < shorter <= rule.passages_max
        assert ov.shared >= shared_needed(shorter, rule.shared_min, rule.containment_min)
        # Fewer than shared_min only where the containment floor implies fewer, and
        # never a single passage unless the rule itself asks for one or none.
        assert ov.shared >= min(rule.shared_min, 2)
        assert ov.shared >= rule.shared_min or (
            math.ceil(rule.containment_min * shorter) < rule.shared_min
        )
        assert shingles >= rule.shingle_min


@given(st.integers(0, 100), st.integers(0, 10), st.floats(0, 1))
def test_a_short_side_is_asked_for_what_its_containment_floor_implies(
    passages: int, shared_min: int, floor: float
) -> None:
    needed = shared_needed(passages, shared_min, floor)
    assert needed <= shared_min  # never stricter than the channel's minimum
    assert needed >= min(shared_min, 2)  # one shared passage is never enough
    if math.ceil(floor * passages) >= shared_min:
        assert needed == shared_min  # the floor implies the minimum anyway


def test_a_text_of_up_to_eight_passages_needs_two_shared() -> None:
    assert [shared_needed(n, 3, 0.25) for n in (1, 2, 3, 8, 9, 12, 24, 40)] == [
        2, 2, 2, 2, 3, 3, 3, 3,
    ]  # fmt: skip
    assert short_copy(P.Overlap(2, 2, 40), shingle_containment=0.9, rule=RULE)
    assert short_copy(P.Overlap(2, 8, 40), shingle_containment=0.9, rule=RULE)
    assert not short_copy(P.Overlap(2, 9, 40), shingle_containment=0.9, rule=RULE)  # 0.22
    assert not short_copy(P.Overlap(1, 3, 40), shingle_containment=1.0, rule=RULE)
    assert not short_copy(P.Overlap(1, 1, 40), shingle_containment=1.0, rule=RULE)
    assert not short_copy(P.Overlap(2, 3, 40), shingle_containment=0.39, rule=RULE)


@given(overlaps, st.floats(0, 1), rules)
def test_the_word_reading_differs_from_before_only_on_two_shared_passages(
    ov: P.Overlap, shingles: float, rule: ShortRule
) -> None:
    """The rule before short sides were asked for fewer: ``shared_min`` passages. Only a
    pair sharing fewer than that can be judged otherwise, and only ever nominated."""
    before = (
        0 < shorter_passages(ov) <= rule.passages_max
        and ov.shared >= rule.shared_min
        and ov.containment >= rule.containment_min
        and shingles >= rule.shingle_min
    )
    now = short_copy(ov, shingle_containment=shingles, rule=rule)
    if ov.shared >= rule.shared_min:
        assert now == before
    else:
        assert now or not before  # never stricter
        if now:
            assert ov.shared >= min(rule.shared_min, 2)


@given(st.lists(st.sampled_from(VOCAB[:300]), min_size=0, max_size=400), st.integers(0, 200))
def test_symmetric_in_the_pair(words: list[str], cut: int) -> None:
    a, b = " ".join(words[:cut]), " ".join(words[cut // 2 :])
    ab, ba = P.overlap(P.passages(a), P.passages(b)), P.overlap(P.passages(b), P.passages(a))
    shingles = similarity(a, b).containment
    assert short_copy(ab, shingle_containment=shingles, rule=RULE) == short_copy(
        ba, shingle_containment=similarity(b, a).containment, rule=RULE
    )


def test_the_word_shingle_reading_is_for_texts_written_with_spaces() -> None:
    """A Chinese clause is one `\\w+` word, so two pages of one template share their
    template's "words" whatever their articles: the short-copy rule does not read them."""
    assert reads_as_words("A press statement reprinted with a word changed.")
    assert reads_as_words("Bộ Y tế công bố thêm ca nhiễm mới tại Hà Nội.")
    assert reads_as_words("")
    assert not reads_as_words("城南医院老年人免费体检，记者徐静报道。")
    assert not reads_as_words("東京都は新しい計画を発表しました。")
    # Mostly English with a Chinese name in it still reads as words.
    assert reads_as_words("The report by 徐静 was reprinted by three sites today.")


# --- the character reading (shorter text mostly Chinese) ---------------------------------

WRAP = ("【本地新闻网讯】", "责任编辑：小编 | 转载请注明出处")


def _zh_scores(a: str, b: str) -> tuple[P.Overlap, float]:
    m = P.MIXED_METHOD
    ov = P.overlap(P.passages(a, method=m), P.passages(b, method=m))
    return ov, char_containment(char_shingles(a), char_shingles(b))


def _zh_excerpt(article: str, seed: int, chars: int) -> str:
    """A run of about ``chars`` characters of the article, cut at its sentence ends."""
    sentences = [x + "。" for x in article.replace("\n", "").split("。") if x]
    start = random.Random(seed).randrange(max(1, len(sentences) - 4))
    out = ""
    for x in sentences[start:]:
        if len(out) >= chars:
            break
        out += x
    return out


def test_a_short_chinese_excerpt_wrapped_by_another_site_is_read_by_characters() -> None:
    """An excerpt of 40-90 characters has a few passages and shares one or two with its
    source: under the channel's three shared passages; the character reading finds it."""
    words = chars = 0
    for seed in range(20):
        article = chinese_article_text(seed, 400)
        excerpt = _zh_excerpt(article, seed, 40 + 2 * seed)
        copy = "\n".join([WRAP[0], excerpt, WRAP[1]])
        ov, shingles = _zh_scores(article, copy)
        # Before: the channel's own rule (the word reading is not applied to Chinese).
        old = P.nominates(ov, containment_min=0.5, shared_min=3)
        words += old
        chars += old or short_copy(ov, shingle_containment=shingles, rule=RULE, chars=True)
    assert words <= 10
    assert chars >= 18


def test_a_traditional_character_excerpt_is_read_as_its_simplified_source() -> None:
    import opencc

    to_traditional = opencc.OpenCC("s2t")
    article = chinese_article_text(7, 300)
    excerpt = to_traditional.convert(_zh_excerpt(article, 7, 90))
    assert excerpt != _zh_excerpt(article, 7, 90)
    ov, shingles = _zh_scores(article, "\n".join([WRAP[0], excerpt, WRAP[1]]))
    assert shingles >= RULE.chars_min
    assert short_copy(ov, shingle_containment=shingles, rule=RULE, chars=True)


def test_different_short_chinese_texts_sharing_a_footer_are_not_read_as_copies() -> None:
    footer = (
        "本站郑重声明：所载文章、数据仅供参考，投资有风险，选择需谨慎。版权所有，未经许可不得转载。"
    )
    for seed in range(30, 45):
        a = chinese_article_text(seed, 120) + "\n" + footer
        b = chinese_article_text(seed + 100, 120) + "\n" + footer
        ov, shingles = _zh_scores(a, b)
        assert not short_copy(ov, shingle_containment=shingles, rule=RULE, chars=True)


def test_the_character_reading_needs_a_shared_passage_and_its_share() -> None:
    ov = P.Overlap(shared=1, size_a=4, size_b=9)
    assert short_copy(ov, shingle_containment=0.5, rule=RULE, chars=True)
    assert not short_copy(ov, shingle_containment=0.49, rule=RULE, chars=True)
    assert not short_copy(P.Overlap(0, 4, 9), shingle_containment=1.0, rule=RULE, chars=True)
    assert not short_copy(P.Overlap(1, 5, 9), shingle_containment=1.0, rule=RULE, chars=True)
    assert not short_copy(P.Overlap(7, 25, 30), shingle_containment=1.0, rule=RULE, chars=True)
    # The word reading of the same figures asks for three shared passages.
    assert not short_copy(ov, shingle_containment=1.0, rule=RULE)


latin = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80)


@given(latin, latin)
def test_text_without_cjk_keeps_the_word_reading_and_its_tokens(a: str, b: str) -> None:
    """Text with no CJK character is always read by words (the old rule, to the bit), and
    the character reading's tokens of it are the word method's."""
    if has_cjk(a):
        return
    assert reads_as_words(a) or any("\u3040" <= c <= "\u30ff" for c in a)
    assert P.tokens(a, method=P.MIXED_METHOD) == P.tokens(a)
