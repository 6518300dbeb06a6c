"""reviews.core.calibration_math: split, weighted sweep, policies, report, stratified sample."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviews.core.calibration_math import (
    HOLDOUT,
    VERDICTS,
    LabeledPair,
    Row,
    ScoredPair,
    calibrate,
    recommend,
    score_sweeps_by_split,
    split_of,
    stratified_sample,
    sweep,
)
from reviews.core.scores import COSINE

POSITIVE = frozenset({"duplicate", "near_duplicate"})
MAX_T = 12

PAIR = st.builds(
    LabeledPair,
    distance=st.integers(0, 20),
    verdict=st.sampled_from(VERDICTS),
    weight=st.floats(0.1, 50, allow_nan=False, allow_infinity=False),
)
PAIRS = st.lists(PAIR, max_size=60)


def run(
    pairs: list[LabeledPair], *, cost_false_merge: float = 10.0, cost_missed: float = 1.0
) -> list[Row]:
    return sweep(
        pairs,
        positive=POSITIVE,
        max_threshold=MAX_T,
        cost_false_merge=cost_false_merge,
        cost_missed=cost_missed,
    )


def lp(
    d: int,
    verdict: str,
    *,
    weight: float = 1.0,
    doc_type: str = "other",
    method: str = "",
    split: str = "calibration",
) -> LabeledPair:
    return LabeledPair(d, verdict, weight, doc_type, method, split)


# --- split -----------------------------------------------------------------------------


def test_split_is_a_pure_function_of_key_and_salt() -> None:
    assert split_of("12:34") == split_of("12:34")
    keys = [f"k{i}" for i in range(200)]
    other = [split_of(k, salt="another-salt") for k in keys]
    assert [split_of(k) for k in keys] != other


def test_split_extremes() -> None:
    assert split_of("any", holdout_share=0.0) == "calibration"
    assert split_of("any", holdout_share=1.0) == "holdout"
    with pytest.raises(ValueError):
        split_of("any", holdout_share=1.5)


@given(st.text(max_size=40), st.floats(0, 1))
def test_split_is_deterministic(key: str, share: float) -> None:
    assert split_of(key, share) == split_of(key, share) in {"calibration", "holdout"}


@pytest.mark.parametrize("share", [0.2, 0.5, 0.05])
def test_holdout_share_over_many_keys_is_close_to_the_setting(share: float) -> None:
    rng = random.Random(7)
    keys = [f"{rng.getrandbits(64):x}:{rng.getrandbits(64):x}" for _ in range(20_000)]
    held = sum(split_of(k, share) == "holdout" for k in keys) / len(keys)
    assert abs(held - share) <= 0.02


# --- sweep: hand-computed --------------------------------------------------------------


def test_hand_computed_sweep() -> None:
    pairs = [
        lp(0, "duplicate"),
        lp(1, "near_duplicate", weight=2.0),
        lp(3, "duplicate"),
        lp(2, "distinct"),
        lp(5, "distinct", weight=3.0),
        lp(1, "revision"),  # neither class by default
        lp(0, "unsure"),  # never counted
    ]
    rows = sweep(pairs, positive=POSITIVE, max_threshold=5, cost_false_merge=10, cost_missed=1)
    # positives: d0 w1, d1 w2, d3 w1 (total 4); negatives: d2 w1, d5 w3 (total 4)
    got = [(r.threshold, r.tp, r.fp, r.fn, r.tn, r.cost) for r in rows]
    assert got == [
        (0, 1.0, 0.0, 3.0, 4.0, 3.0),
        (1, 3.0, 0.0, 1.0, 4.0, 1.0),
        (2, 3.0, 1.0, 1.0, 3.0, 11.0),
        (3, 4.0, 1.0, 0.0, 3.0, 10.0),
        (4, 4.0, 1.0, 0.0, 3.0, 10.0),
        (5, 4.0, 4.0, 0.0, 0.0, 40.0),
    ]
    assert rows[1].precision == 1.0 and rows[1].recall == 0.75
    assert rows[1].f1 == pytest.approx(2 * 1.0 * 0.75 / 1.75)  # 0.857…
    assert rows[3].precision == 0.8 and rows[3].recall == 1.0
    assert rows[3].f1 == pytest.approx(2 * 0.8 / 1.8)  # 0.888…
    assert rows[5].precision == 0.5


def test_revision_counts_when_the_setting_says_so() -> None:
    pairs = [lp(1, "revision"), lp(4, "distinct")]
    rows = sweep(
        pairs,
        positive=frozenset({"duplicate", "revision"}),
        max_threshold=4,
        cost_false_merge=1,
        cost_missed=1,
    )
    assert (rows[1].tp, rows[4].fp) == (1.0, 1.0)
    neg = sweep(
        pairs,
        positive=POSITIVE,
        negative=frozenset({"distinct", "revision"}),
        max_threshold=4,
        cost_false_merge=1,
        cost_missed=1,
    )
    assert (neg[1].fp, neg[1].tn) == (1.0, 1.0)


def test_undefined_ratios_are_none() -> None:
    only_negatives = run([lp(5, "distinct")])
    assert only_negatives[0].precision is None  # nothing predicted "same" at 0
    assert all(r.recall is None and r.f1 is None for r in only_negatives)
    only_positive_far = run([lp(9, "duplicate")])
    assert only_positive_far[0].recall == 0.0 and only_positive_far[0].f1 is None


def test_empty_input_gives_zero_rows() -> None:
    rows = run([])
    assert len(rows) == MAX_T + 1
    assert all(r.tp == r.fp == r.fn == r.tn == r.cost == 0 for r in rows)


@pytest.mark.parametrize(
    "bad",
    [
        {"positive": frozenset({"unsure"})},
        {"positive": frozenset({"duplicate"}), "negative": frozenset({"duplicate"})},
        {"positive": frozenset({"dupe"})},
    ],
)
def test_bad_class_settings_are_refused(bad: dict[str, frozenset[str]]) -> None:
    positive = bad["positive"]
    negative = bad.get("negative", frozenset({"distinct"}))
    with pytest.raises(ValueError):
        sweep(
            [],
            positive=positive,
            negative=negative,
            max_threshold=3,
            cost_false_merge=1,
            cost_missed=1,
        )


def test_bad_pairs_are_refused() -> None:
    with pytest.raises(ValueError):
        run([lp(-1, "duplicate")])
    with pytest.raises(ValueError):
        run([lp(1, "duplicate", weight=0.0)])


# --- sweep: properties -----------------------------------------------------------------


@given(PAIRS)
def test_class_totals_are_the_same_at_every_threshold(pairs: list[LabeledPair]) -> None:
    rows = run(pairs)
    positives = sum(p.weight for p in pairs if p.verdict in POSITIVE)
    negatives = sum(p.weight for p in pairs if p.verdict == "distinct")
    for r in rows:
        assert r.tp + r.fn == pytest.approx(positives)
        assert r.fp + r.tn == pytest.approx(negatives)


@given(PAIRS)
def test_predictions_only_grow_with_the_threshold(pairs: list[LabeledPair]) -> None:
    rows = run(pairs)
    for a, b in zip(rows, rows[1:], strict=False):
        assert a.tp <= b.tp and a.fp <= b.fp
        assert a.fn >= b.fn and a.tn >= b.tn
        if a.recall is not None:
            assert b.recall is not None and a.recall <= b.recall


@given(PAIRS)
def test_cost_is_the_weighted_sum(pairs: list[LabeledPair]) -> None:
    for r in run(pairs, cost_false_merge=7.0, cost_missed=2.0):
        assert r.cost == pytest.approx(7.0 * r.fp + 2.0 * r.fn)


@given(PAIRS, st.floats(0.5, 1.0), st.floats(0.5, 1.0))
def test_recommended_thresholds_meet_their_policy(
    pairs: list[LabeledPair], min_recall: float, min_precision: float
) -> None:
    rows = run(pairs)
    review, merge = recommend(rows, min_recall=min_recall, min_precision=min_precision)
    if merge.threshold is not None:
        row = rows[merge.threshold]
        assert row.precision is not None and row.precision >= min_precision
        assert row.tp + row.fp > 0
        later = rows[merge.threshold + 1 :]
        assert all(r.precision is None or r.precision < min_precision for r in later)
    if review.threshold is not None:
        row = rows[review.threshold]
        assert row.recall is not None and row.recall >= min_recall
        earlier = rows[: review.threshold]
        assert all(r.recall is None or r.recall < min_recall for r in earlier)


# --- recommend: hand-computed ----------------------------------------------------------


def test_hand_computed_recommendations() -> None:
    pairs = [lp(d, "duplicate") for d in (0, 0, 1, 2, 6)] + [lp(3, "distinct"), lp(8, "distinct")]
    rows = run(pairs)
    review, merge = recommend(rows, min_recall=0.8, min_precision=0.99)
    # recall: t0 2/5, t1 3/5, t2 4/5 → send_to_review at 2
    assert (review.policy, review.threshold) == ("send_to_review", 2)
    assert review.reason == "smallest threshold with recall ≥ 0.8 (0.800)"
    # precision 1.0 up to t2, 4/5 at t3..t5 → merge_automatically at 2
    assert (merge.policy, merge.threshold) == ("merge_automatically", 2)
    assert merge.reason == "largest threshold with precision ≥ 0.99 (1.000)"


def test_no_threshold_qualifies() -> None:
    rows = run([lp(20, "duplicate"), lp(0, "distinct")])
    review, merge = recommend(rows)
    assert review.threshold is None and "best 0.000" in review.reason
    assert merge.threshold is None and "precision ≥ 0.99" in merge.reason
    none_review, none_merge = recommend(run([]))
    assert none_review.reason == "no positive labels"
    assert none_merge.threshold is None


# --- calibrate -------------------------------------------------------------------------


def test_calibrate_groups_sorts_and_uses_holdout_at_the_chosen_thresholds() -> None:
    cal = [lp(d, "duplicate", doc_type="news", method="m1") for d in (0, 1, 1, 2)]
    cal += [lp(6, "distinct", doc_type="news", method="m1")]
    hold = [
        lp(1, "duplicate", doc_type="news", method="m1", split="holdout"),
        lp(2, "distinct", doc_type="news", method="m1", split="holdout"),
        lp(9, "duplicate", doc_type="news", method="m1", split="holdout"),
    ]
    other = [lp(0, "duplicate", doc_type="article", method="m1")]
    reports = calibrate(cal + hold + other, max_threshold=8, min_per_class=2)
    assert [(r.doc_type, r.method) for r in reports] == [("article", "m1"), ("news", "m1")]
    news = reports[1]
    assert len(news.rows) == 9
    thresholds = {r.policy: r.threshold for r in news.recommendations}
    # calibration recall reaches 1.0 at 2 (≥ 0.95); precision is 1.0 up to 5
    assert thresholds == {"send_to_review": 2, "merge_automatically": 5}
    review_hold = news.holdout["send_to_review"]
    assert review_hold is not None
    assert (review_hold.tp, review_hold.fp, review_hold.fn, review_hold.tn) == (1, 1, 1, 0)
    assert news.counts == {
        "calibration": {"positive": 4, "negative": 1},
        "holdout": {"positive": 2, "negative": 1},
    }
    assert news.warnings == [
        "fewer than 2 negative labels on the calibration split: "
        "these figures show the mechanism, not a rate for this corpus",
        "fewer than 2 negative labels on the holdout split: "
        "these figures show the mechanism, not a rate for this corpus",
    ]


def test_calibrate_default_warns_about_few_labels_and_no_threshold_gives_none() -> None:
    (report,) = calibrate([lp(20, "duplicate")])
    assert report.holdout == {"send_to_review": None, "merge_automatically": None}
    assert (
        "fewer than 30 positive labels on the calibration split: these figures show the "
        "mechanism, not a rate for this corpus"
    ) in report.warnings


def test_calibrate_refuses_unknown_split() -> None:
    with pytest.raises(ValueError):
        calibrate([lp(1, "duplicate", split="train")])


def test_calibrate_with_no_pairs_is_empty() -> None:
    assert calibrate([]) == []


# --- stratified sample -----------------------------------------------------------------

BANDS = [(0, 0), (1, 2), (3, 4), (5, 6), (7, 10)]


def test_hand_computed_sample_weights() -> None:
    pairs = [(i, 0) for i in range(10)] + [(100, 1), (101, 2)] + [(200, 8)] + [(300, 40)]
    sample = stratified_sample(pairs, per_band=4, bands=BANDS, seed=1)
    weights: dict[float, list[int]] = {}
    for pid, w in sample:
        weights.setdefault(w, []).append(pid)
    assert len(weights[2.5]) == 4 and all(pid < 10 for pid in weights[2.5])  # 10 / 4
    assert weights[1.0] == [100, 101, 200]  # whole band taken; 300 is in no band


@given(
    st.lists(st.integers(0, 14), max_size=80),
    st.integers(0, 6),
    st.integers(0, 2**32),
)
def test_sample_weights_add_up_to_band_size(distances: list[int], per_band: int, seed: int) -> None:
    pairs = list(enumerate(distances))
    sample = stratified_sample(pairs, per_band=per_band, bands=BANDS, seed=seed)
    distance_of = dict(pairs)
    assert len({pid for pid, _ in sample}) == len(sample)
    for lo, hi in BANDS:
        size = sum(lo <= d <= hi for d in distances)
        chosen = [(pid, w) for pid, w in sample if lo <= distance_of[pid] <= hi]
        assert len(chosen) == min(size, per_band)
        if chosen:
            assert sum(w for _, w in chosen) == pytest.approx(size)
    for pid, _ in sample:
        assert any(lo <= distance_of[pid] <= hi for lo, hi in BANDS)


@given(st.lists(st.integers(0, 14), max_size=60), st.integers(0, 1000))
def test_sample_is_deterministic_for_a_seed_whatever_the_order(
    distances: list[int], seed: int
) -> None:
    pairs = list(enumerate(distances))
    a = stratified_sample(pairs, per_band=3, bands=BANDS, seed=seed)
    b = stratified_sample(pairs[::-1], per_band=3, bands=BANDS, seed=seed)
    assert a == b


def test_sample_depends_on_the_seed() -> None:
    pairs = [(i, 0) for i in range(100)]
    a = stratified_sample(pairs, per_band=5, bands=[(0, 0)], seed=1)
    b = stratified_sample(pairs, per_band=5, bands=[(0, 0)], seed=2)
    assert a != b


@pytest.mark.parametrize("bands", [[(0, 2), (2, 4)], [(3, 1)]])
def test_sample_refuses_bad_bands(bands: list[tuple[int, int]]) -> None:
    with pytest.raises(ValueError):
        stratified_sample([(1, 1)], per_band=1, bands=bands, seed=0)


def test_sample_refuses_duplicate_ids() -> None:
    with pytest.raises(ValueError):
        stratified_sample([(1, 1), (1, 2)], per_band=1, bands=BANDS, seed=0)


def test_a_score_sweep_by_split_checks_the_holdout_at_the_same_thresholds() -> None:
    pairs = [
        ScoredPair(0.95, "duplicate", doc_type="article"),
        ScoredPair(0.70, "distinct", doc_type="article"),
        ScoredPair(0.92, "distinct", doc_type="article", split=HOLDOUT),
        ScoredPair(0.88, "duplicate", doc_type="article", split=HOLDOUT),
    ]
    (rows,) = score_sweeps_by_split(
        pairs, thresholds=[0.9, 0.5], score=COSINE, cost_false_merge=10, cost_missed=1
    ).values()
    assert [r.threshold for r in rows] == [0.5, 0.9]
    at = rows[1]
    assert (at.calibration.precision, at.calibration.recall) == (1.0, 1.0)
    assert (at.holdout.tp, at.holdout.fp, at.holdout.fn) == (0, 1, 1)
