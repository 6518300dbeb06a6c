"""reviews.core.prelabel_math and reviews.core.scores: the pre-label suggestion."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.core.prelabel_math import (
    LABELLED,
    NONE,
    UNLABELLED,
    Suggestion,
    histogram,
    smooth,
    starting_threshold,
    stratified_document_pairs,
    suggest,
)
from reviews.core.scores import HIGHER, SIMHASH_DISTANCE, TOKEN_SET_RATIO, Score


def test_a_large_site_does_not_dominate_the_random_pairs() -> None:
    docs = [(i, "big.example.com") for i in range(1000)]
    docs += [(10_000 + i, f"small{i // 2}.example.com") for i in range(18)]  # 9 small sites
    pairs = stratified_document_pairs(docs, draws=4000, seed=1)
    assert len(pairs) == 4000
    sides = [d for p in pairs for d in p]
    big_share = sum(1 for d in sides if d < 1000) / len(sides)
    # One site in ten: about 10 % of the sides, not the 98 % of a uniform draw.
    assert 0.07 < big_share < 0.13


def test_the_draw_is_seeded_and_ignores_input_order() -> None:
    docs = [(i, f"s{i % 3}") for i in range(50)]
    once = stratified_document_pairs(docs, draws=100, seed=4)
    assert once == stratified_document_pairs(list(reversed(docs)), draws=100, seed=4)
    assert once != stratified_document_pairs(docs, draws=100, seed=5)
    assert all(a < b for a, b in once)
    assert stratified_document_pairs([(1, "s")], draws=10, seed=1) == []


def bimodal(score: Score = SIMHASH_DISTANCE) -> tuple[list[int], list[int]]:
    rng = random.Random(3)
    sample = histogram(score, [round(rng.gauss(30, 4)) for _ in range(3000)])
    cands = histogram(score, [rng.choice([0, 0, 0, 1, 1, 2, 3]) for _ in range(40)])
    return sample, cands


def test_the_suggestion_is_the_valley_between_copies_and_unrelated_pages() -> None:
    sample, cands = bimodal()
    s = suggest(SIMHASH_DISTANCE, sample, cands)
    assert s.threshold is not None and 4 <= s.threshold <= 18
    assert s.peaks[0] <= 1 and 28 <= s.peaks[1] <= 32  # closer mode first
    assert s.source == UNLABELLED and "valley" in s.reason
    smoothed = smooth(
        [a / sum(sample) + b / sum(cands) for a, b in zip(sample, cands, strict=True)]
    )
    assert s.valley_bin is not None
    assert smoothed[s.valley_bin] == min(smoothed[s.peaks[0] + 1 : s.peaks[1]])


def test_a_large_source_does_not_drown_a_small_one() -> None:
    # 3,000 random pairs around 30 bits with a small bump at 8; 10 candidate pairs at 0–1.
    # By raw counts the bump (50) outweighs the candidates and would be a "mode"; scaled
    # to the same mass the candidates are the copies mode.
    sample = [0] * SIMHASH_DISTANCE.bins
    sample[8] = 50
    for d, n in {28: 700, 29: 800, 30: 1000, 31: 800, 32: 700}.items():
        sample[d] = n
    cands = [0] * SIMHASH_DISTANCE.bins
    cands[0], cands[1] = 6, 4
    s = suggest(SIMHASH_DISTANCE, sample, cands)
    assert s.peaks[0] <= 1 and s.peaks[1] == 30
    assert s.threshold is not None and 2 <= s.threshold <= 27


def test_one_mode_gives_no_suggestion_with_the_reason() -> None:
    sample, _ = bimodal()
    s = suggest(SIMHASH_DISTANCE, sample, [0] * SIMHASH_DISTANCE.bins)
    assert s.threshold is None
    assert "mode" in s.reason or "valley" in s.reason
    empty = [0] * SIMHASH_DISTANCE.bins
    assert suggest(SIMHASH_DISTANCE, empty, empty).reason == "no scores yet"


def test_a_shallow_dip_is_not_a_valley() -> None:
    counts = [0] * SIMHASH_DISTANCE.bins
    for i, c in {5: 100, 6: 100, 7: 90, 8: 80, 9: 90, 10: 100, 11: 100}.items():
        counts[i] = c
    s = suggest(SIMHASH_DISTANCE, counts, [0] * SIMHASH_DISTANCE.bins, min_separation=2)
    assert s.threshold is None


def test_too_few_documents_gives_no_suggestion() -> None:
    sample, cands = bimodal()
    s = suggest(SIMHASH_DISTANCE, sample, cands, documents=7, min_documents=10)
    assert s.threshold is None and "7 documents" in s.reason


def test_a_higher_is_closer_score_gets_its_valley_too() -> None:
    rng = random.Random(2)
    sample = histogram(TOKEN_SET_RATIO, [min(100, max(0, rng.gauss(35, 10))) for _ in range(2000)])
    cands = histogram(TOKEN_SET_RATIO, [min(100, rng.gauss(96, 2)) for _ in range(50)])
    s = suggest(TOKEN_SET_RATIO, sample, cands)
    assert s.threshold is not None and 55 <= s.threshold <= 90
    assert s.peaks[0] == TOKEN_SET_RATIO.bins - 1  # the closer mode (copies) first
    assert TOKEN_SET_RATIO.within(97, s.threshold) and not TOKEN_SET_RATIO.within(30, s.threshold)


def test_labels_replace_the_suggestion_once_both_classes_have_enough() -> None:
    s = Suggestion(5.0, 5, (0, 30), "valley at 5")
    few = starting_threshold(s, label_threshold=3, positives=29, negatives=40, min_per_class=30)
    assert (few.source, few.threshold) == (UNLABELLED, 5.0)
    assert "29 positive and 40 negative" in few.reason
    enough = starting_threshold(
        s, label_threshold=3, label_reason="recall", positives=30, negatives=30, min_per_class=30
    )
    assert (enough.source, enough.threshold) == (LABELLED, 3)
    other_score = starting_threshold(
        s, label_threshold=3, positives=99, negatives=99, label_sweep=False
    )
    assert other_score.source == UNLABELLED and "no label-based sweep" in other_score.reason
    no_rec = starting_threshold(s, label_threshold=None, positives=99, negatives=99)
    assert no_rec.source == UNLABELLED
    none = starting_threshold(Suggestion(None, None, (), "one mode only"), label_threshold=None)
    assert (none.source, none.threshold) == (NONE, None)


def test_score_bins_cover_the_range() -> None:
    assert SIMHASH_DISTANCE.bins == 65 and SIMHASH_DISTANCE.bin_of(64) == 64
    assert SIMHASH_DISTANCE.bin_centre(7) == 7 and SIMHASH_DISTANCE.bin_label(7) == "7"
    assert TOKEN_SET_RATIO.bins == 20 and TOKEN_SET_RATIO.bin_of(100) == 19
    assert TOKEN_SET_RATIO.bin_label(19) == "95–100" and TOKEN_SET_RATIO.bin_centre(0) == 2.5
    assert TOKEN_SET_RATIO.closer == HIGHER and TOKEN_SET_RATIO.rule_text() == "score ≥ t"
    with pytest.raises(ValueError):
        Score("x", "x", "sideways", 0, 1, 1)


@settings(max_examples=80, deadline=None)
@given(
    sample=st.lists(st.integers(0, 50), min_size=65, max_size=65),
    cands=st.lists(st.integers(0, 50), min_size=65, max_size=65),
)
def test_a_suggestion_always_lies_strictly_between_its_two_modes(sample, cands) -> None:
    s = suggest(SIMHASH_DISTANCE, sample, cands)
    if s.threshold is None or s.valley_bin is None:
        assert s.threshold is None and s.valley_bin is None
        return
    lo, hi = sorted(s.peaks)
    assert lo < s.valley_bin < hi
    assert hi - lo >= 2


def test_a_mode_split_into_two_bumps_stays_one_mode() -> None:
    # Copies at 0 and 2–3 bits (two bumps, one mode), unrelated pages at 32–34.
    sample = [0] * SIMHASH_DISTANCE.bins
    for d, n in {0: 130, 2: 129, 3: 117, 32: 130, 33: 120, 34: 125}.items():
        sample[d] = n
    cands = [0] * SIMHASH_DISTANCE.bins
    cands[0] = cands[2] = cands[3] = 1
    s = suggest(SIMHASH_DISTANCE, sample, cands)
    assert s.threshold is not None and 4 <= s.threshold <= 31
    assert s.peaks[1] >= 32
