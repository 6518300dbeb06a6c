"""Threshold calibration from labels: split, sweep, recommendation, stratified sample.

Pure: no Django. Thresholds come from labels, per doc type and method, and
are checked on data not used to choose them. The rules:

- **Split.** A pair is in "calibration" or "holdout" by a stable hash of its key alone
  (SHA-256 of ``salt + key``, first 8 bytes big-endian as a fraction of 2**64, "holdout"
  when below the holdout share). It never depends on labels, so relabelling never moves a
  pair between splits. Changing the salt is a new split.
- **Classes.** A label is *positive* when its verdict is in ``positive`` (default
  duplicate + near_duplicate), *negative* when in ``negative`` (default distinct). Every
  other verdict counts as neither and is ignored by the sweep: "unsure" always, and by
  default "revision" too (a setting in the app decides where revision belongs).
- **Sweep.** At threshold t a pair is predicted "same" when ``distance <= t``. TP, FP,
  FN and TN are sums of the pairs' sampling weights (inverse inclusion probability, 1.0
  when a pair was not sampled). Precision is None with no predicted positive, recall is
  None with no positive, F1 is None when either is None or both are zero. Cost is
  ``cost_false_merge * FP + cost_missed * FN``.
- **Policies.** "send_to_review" (recall first): the smallest threshold whose recall
  reaches ``min_recall`` — editors sort what it sends; on equal thresholds the lower cost
  wins. "merge_automatically" (precision first): the largest threshold whose precision
  reaches ``min_precision`` with at least one predicted positive. Either may be None.
- **Warnings.** Fewer than ``min_per_class`` labelled pairs of a class on a split gives a
  plain warning: the figures show the mechanism, not a rate for the corpus.
- **Stratified sample.** Up to ``per_band`` pairs from each distance band, chosen by a
  seeded hash rank (reproducible across Python versions and input order), each weighted
  band size / number taken.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reviews.core.scores import HIGHER, PASSAGE_CONTAINMENT, SIMHASH_DISTANCE, Score
from reviews.core.words import Said, gettext_noop

VERDICTS = ("duplicate", "near_duplicate", "revision", "distinct", "unsure")

CALIBRATION = "calibration"
HOLDOUT = "holdout"
SPLITS = (CALIBRATION, HOLDOUT)
# A report's warning when a class has too few labels on a split: one whole sentence each.
_FEWER = {
    ("positive", CALIBRATION): gettext_noop(
        "fewer than %(min_per_class)s positive labels on the calibration split: "
        "these figures show the mechanism, not a rate for this corpus"
    ),
    ("negative", CALIBRATION): gettext_noop(
        "fewer than %(min_per_class)s negative labels on the calibration split: "
        "these figures show the mechanism, not a rate for this corpus"
    ),
    ("positive", HOLDOUT): gettext_noop(
        "fewer than %(min_per_class)s positive labels on the holdout split: "
        "these figures show the mechanism, not a rate for this corpus"
    ),
    ("negative", HOLDOUT): gettext_noop(
        "fewer than %(min_per_class)s negative labels on the holdout split: "
        "these figures show the mechanism, not a rate for this corpus"
    ),
}

SEND_TO_REVIEW = "send_to_review"
MERGE_AUTOMATICALLY = "merge_automatically"
POLICIES = (SEND_TO_REVIEW, MERGE_AUTOMATICALLY)

DEFAULT_POSITIVE = frozenset({"duplicate", "near_duplicate"})
DEFAULT_NEGATIVE = frozenset({"distinct"})
DEFAULT_SALT = "dedup-desk-split-v1"


def _unit_hash(text: str) -> float:
    """A uniform value in [0, 1) from the first 8 bytes of the text's SHA-256."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def split_of(pair_key: str, holdout_share: float = 0.2, salt: str = DEFAULT_SALT) -> str:
    """The split of a pair key, "calibration" or "holdout"; depends on key and salt only."""
    if not 0.0 <= holdout_share <= 1.0:
        raise ValueError(f"holdout_share must be in [0, 1], got {holdout_share!r}")
    return HOLDOUT if _unit_hash(salt + pair_key) < holdout_share else CALIBRATION


@dataclass(frozen=True)
class LabeledPair:
    distance: int  # Hamming distance of the pair (main branch)
    verdict: str  # current (non-superseded) verdict; "unsure" is ignored by the sweep
    weight: float = 1.0  # sampling weight (inverse inclusion probability)
    doc_type: str = "other"
    method: str = ""
    split: str = CALIBRATION
    # The pair and its documents, when known (the action metrics regroup documents).
    pair_id: int | None = None
    a: int | None = None
    b: int | None = None


@dataclass(frozen=True)
class Row:
    """One threshold of the sweep: predicted "same" when distance <= threshold."""

    threshold: int
    tp: float
    fp: float
    fn: float
    tn: float
    precision: float | None
    recall: float | None
    f1: float | None
    cost: float


@dataclass(frozen=True)
class Recommendation:
    policy: str  # "send_to_review" (recall first) or "merge_automatically" (precision first)
    threshold: int | None  # None when no threshold satisfies the policy
    reason: str  # plain words, e.g. "largest threshold with precision ≥ 0.99 (0.995)"


@dataclass(frozen=True)
class Report:
    doc_type: str
    method: str
    rows: list[Row]  # thresholds 0..max_threshold on the calibration split
    recommendations: list[Recommendation]
    holdout: dict[str, Row | None]  # policy → holdout figures at that policy's threshold
    counts: dict[str, dict[str, int]]  # split → "positive"/"negative" → pairs (unweighted)
    warnings: list[str]


def _check_classes(positive: frozenset[str], negative: frozenset[str]) -> None:
    for name, verdicts in (("positive", positive), ("negative", negative)):
        unknown = sorted(set(verdicts) - set(VERDICTS))
        if unknown:
            raise ValueError(f"unknown verdicts in {name}: {', '.join(unknown)}")
        if "unsure" in verdicts:
            raise ValueError(f'"unsure" cannot be a {name} class')
    if not positive:
        raise ValueError("positive must name at least one verdict")
    both = sorted(positive & negative)
    if both:
        raise ValueError(f"verdicts both positive and negative: {', '.join(both)}")


def _check_pair(pair: LabeledPair) -> None:
    if pair.distance < 0:
        raise ValueError(f"negative distance {pair.distance}")
    if not (math.isfinite(pair.weight) and pair.weight > 0):
        raise ValueError(f"weight must be a positive finite number, got {pair.weight!r}")


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def sweep(
    pairs: Sequence[LabeledPair],
    *,
    positive: frozenset[str] = DEFAULT_POSITIVE,
    negative: frozenset[str] = DEFAULT_NEGATIVE,
    max_threshold: int,
    cost_false_merge: float,
    cost_missed: float,
) -> list[Row]:
    """Weighted confusion counts for every threshold 0..max_threshold (split not looked at:
    pass the pairs of one split). Verdicts in neither class are ignored."""
    _check_classes(positive, negative)
    if max_threshold < 0:
        raise ValueError(f"max_threshold must be >= 0, got {max_threshold}")
    if cost_false_merge < 0 or cost_missed < 0:
        raise ValueError("costs must be >= 0")
    for p in pairs:
        _check_pair(p)
    counts = _confusion(
        SIMHASH_DISTANCE,
        [(p.distance, p.weight, p.verdict) for p in pairs],
        range(max_threshold + 1),
        positive=positive,
        negative=negative,
        cost_false_merge=cost_false_merge,
        cost_missed=cost_missed,
    )
    return [
        Row(int(t), tp, fp, fn, tn, pr, rc, f1, cost)
        for t, tp, fp, fn, tn, pr, rc, f1, cost in counts
    ]


Counts = tuple[float, float, float, float, float, float | None, float | None, float | None, float]


def _confusion(
    score: Score,
    scored: Sequence[tuple[float, float, str]],
    thresholds: Iterable[float],
    *,
    positive: frozenset[str],
    negative: frozenset[str],
    cost_false_merge: float,
    cost_missed: float,
) -> list[Counts]:
    """The one sweep: for each threshold t, the weighted confusion counts of the
    (score value, weight, verdict) triples, a pair predicted "same" when
    `score.within(value, t)`; then precision, recall, F1 and the cost."""
    pos = [(v, w) for v, w, verdict in scored if verdict in positive]
    neg = [(v, w) for v, w, verdict in scored if verdict in negative]
    rows: list[Counts] = []
    for t in thresholds:
        # fsum is correctly rounded, so the counts are monotone in t despite floats.
        tp = math.fsum(w for v, w in pos if score.within(v, t))
        fn = math.fsum(w for v, w in pos if not score.within(v, t))
        fp = math.fsum(w for v, w in neg if score.within(v, t))
        tn = math.fsum(w for v, w in neg if not score.within(v, t))
        precision = _ratio(tp, tp + fp)
        recall = _ratio(tp, tp + fn)
        f1 = (
            2 * precision * recall / (precision + recall)
            if precision is not None and recall is not None and precision + recall > 0
            else None
        )
        cost = cost_false_merge * fp + cost_missed * fn
        rows.append((t, tp, fp, fn, tn, precision, recall, f1, cost))
    return rows


def recommend(
    rows: Sequence[Row], *, min_recall: float = 0.95, min_precision: float = 0.99
) -> list[Recommendation]:
    """One recommendation per policy, send_to_review first."""
    review_ok = [r for r in rows if r.recall is not None and r.recall >= min_recall]
    if review_ok:
        best = min(review_ok, key=lambda r: (r.threshold, r.cost))
        review = Recommendation(
            SEND_TO_REVIEW,
            best.threshold,
            Said(
                gettext_noop("smallest threshold with recall ≥ %(recall)s (%(best)s)"),
                recall=f"{min_recall:g}",
                best=f"{best.recall:.3f}",
            ),
        )
    elif not any(r.recall is not None for r in rows):
        review = Recommendation(SEND_TO_REVIEW, None, Said(gettext_noop("no positive labels")))
    else:
        top = max(
            (r for r in rows if r.recall is not None),
            key=lambda r: (r.recall or 0.0, -r.threshold),
        )
        review = Recommendation(
            SEND_TO_REVIEW,
            None,
            Said(
                gettext_noop(
                    "no threshold reaches recall ≥ %(recall)s (best %(best)s at %(threshold)s)"
                ),
                recall=f"{min_recall:g}",
                best=f"{top.recall:.3f}",
                threshold=top.threshold,
            ),
        )

    merge_ok = [
        r
        for r in rows
        if r.precision is not None and r.tp + r.fp > 0 and r.precision >= min_precision
    ]
    if merge_ok:
        best = max(merge_ok, key=lambda r: (r.threshold, -r.cost))
        merge = Recommendation(
            MERGE_AUTOMATICALLY,
            best.threshold,
            Said(
                gettext_noop("largest threshold with precision ≥ %(precision)s (%(best)s)"),
                precision=f"{min_precision:g}",
                best=f"{best.precision:.3f}",
            ),
        )
    elif not any(r.precision is not None for r in rows):
        merge = Recommendation(
            MERGE_AUTOMATICALLY, None, Said(gettext_noop("no pair is predicted a duplicate"))
        )
    else:
        merge = Recommendation(
            MERGE_AUTOMATICALLY,
            None,
            Said(
                gettext_noop("no threshold reaches precision ≥ %(precision)s"),
                precision=f"{min_precision:g}",
            ),
        )
    return [review, merge]


def calibrate(
    pairs: Sequence[LabeledPair],
    *,
    positive: frozenset[str] = DEFAULT_POSITIVE,
    negative: frozenset[str] = DEFAULT_NEGATIVE,
    max_threshold: int = 16,
    cost_false_merge: float = 10.0,
    cost_missed: float = 1.0,
    min_per_class: int = 30,
    min_recall: float = 0.95,
    min_precision: float = 0.99,
) -> list[Report]:
    """One Report per (doc_type, method), sorted by that key. Rows and recommendations come
    from the calibration split; the holdout figures are read at the recommended thresholds.
    Revision and unsure count as neither class by default."""
    _check_classes(positive, negative)
    groups: dict[tuple[str, str], dict[str, list[LabeledPair]]] = defaultdict(
        lambda: {s: [] for s in SPLITS}
    )
    for p in pairs:
        if p.split not in SPLITS:
            raise ValueError(f"unknown split {p.split!r}")
        groups[(p.doc_type, p.method)][p.split].append(p)

    def run(split_pairs: Sequence[LabeledPair]) -> list[Row]:
        return sweep(
            split_pairs,
            positive=positive,
            negative=negative,
            max_threshold=max_threshold,
            cost_false_merge=cost_false_merge,
            cost_missed=cost_missed,
        )

    reports: list[Report] = []
    for (doc_type, method), by_split in sorted(groups.items()):
        rows = run(by_split[CALIBRATION])
        holdout_rows = run(by_split[HOLDOUT])
        recs = recommend(rows, min_recall=min_recall, min_precision=min_precision)
        holdout = {
            r.policy: holdout_rows[r.threshold] if r.threshold is not None else None for r in recs
        }
        counts = {
            split: {
                "positive": sum(1 for p in by_split[split] if p.verdict in positive),
                "negative": sum(1 for p in by_split[split] if p.verdict in negative),
            }
            for split in SPLITS
        }
        warnings: list[str] = [
            Said(
                _FEWER[cls, split],
                min_per_class=min_per_class,
            )
            for split in SPLITS
            for cls in ("positive", "negative")
            if counts[split][cls] < min_per_class
        ]
        reports.append(Report(doc_type, method, rows, recs, holdout, counts, warnings))
    return reports


def stratified_sample(
    pairs: Sequence[tuple[int, int]],
    *,
    per_band: int,
    bands: Sequence[tuple[int, int]],
    seed: int,
) -> list[tuple[int, float]]:
    """Up to ``per_band`` (pair_id, weight) from each inclusive distance band, in band
    order then pair id. Weight = band size / number taken. Pairs outside every band are
    not sampled. The choice depends on the seed and the set of pairs, not their order."""
    if per_band < 0:
        raise ValueError(f"per_band must be >= 0, got {per_band}")
    ordered = sorted(bands)
    for lo, hi in ordered:
        if lo > hi:
            raise ValueError(f"empty band ({lo}, {hi})")
    for (_, hi), (lo, _) in zip(ordered, ordered[1:], strict=False):
        if lo <= hi:
            raise ValueError("bands overlap")
    ids = [pair_id for pair_id, _ in pairs]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate pair ids")

    out: list[tuple[int, float]] = []
    for lo, hi in bands:
        members = [pair_id for pair_id, d in pairs if lo <= d <= hi]
        if not members or per_band == 0:
            continue
        ranked = sorted(members, key=lambda pid: (_unit_hash(f"{seed}:{pid}"), pid))
        taken = sorted(ranked[:per_band])
        weight = len(members) / len(taken)
        out.extend((pid, weight) for pid in taken)
    return out


# --- score sweeps (higher is closer): the passage channel's containment ---------------

CONTAINMENT_THRESHOLDS = tuple(round(i * 0.05, 2) for i in range(21))


@dataclass(frozen=True)
class ScoredPair:
    """A labelled pair seen through one channel's score, where higher is closer (the
    share of one text's passages found in the other, 0..1)."""

    score: float
    verdict: str
    weight: float = 1.0
    doc_type: str = "other"
    split: str = CALIBRATION


@dataclass(frozen=True)
class ScoreRow:
    """One threshold of a score sweep: predicted "same" when score >= threshold."""

    threshold: float
    tp: float
    fp: float
    fn: float
    tn: float
    precision: float | None
    recall: float | None
    f1: float | None
    cost: float


def score_sweep(
    pairs: Sequence[ScoredPair],
    *,
    thresholds: Sequence[float] = CONTAINMENT_THRESHOLDS,
    positive: frozenset[str] = DEFAULT_POSITIVE,
    negative: frozenset[str] = DEFAULT_NEGATIVE,
    cost_false_merge: float,
    cost_missed: float,
    score: Score = PASSAGE_CONTAINMENT,
) -> list[ScoreRow]:
    """Weighted confusion counts at every threshold, ascending (the same rules as
    `sweep`, with "same" when score >= threshold: higher is closer)."""
    if score.closer != HIGHER:
        raise ValueError(f"{score.name}: score_sweep reads higher scores as closer")
    _check_classes(positive, negative)
    if cost_false_merge < 0 or cost_missed < 0:
        raise ValueError("costs must be >= 0")
    for p in pairs:
        if not (math.isfinite(p.weight) and p.weight > 0):
            raise ValueError(f"weight must be a positive finite number, got {p.weight!r}")
        if not math.isfinite(p.score):
            raise ValueError(f"score must be finite, got {p.score!r}")
    counts = _confusion(
        score,
        [(p.score, p.weight, p.verdict) for p in pairs],
        sorted(thresholds),
        positive=positive,
        negative=negative,
        cost_false_merge=cost_false_merge,
        cost_missed=cost_missed,
    )
    return [ScoreRow(*row) for row in counts]


def score_sweeps_by_doc_type(
    pairs: Sequence[ScoredPair], **kwargs: object
) -> dict[str, list[ScoreRow]]:
    """`score_sweep` of the calibration split, per doc type (sorted)."""
    by_type: dict[str, list[ScoredPair]] = defaultdict(list)
    for p in pairs:
        if p.split == CALIBRATION:
            by_type[p.doc_type].append(p)
    return {t: score_sweep(by_type[t], **kwargs) for t in sorted(by_type)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class SplitRow:
    """One threshold of a score sweep on both splits: the calibration split chooses,
    the holdout split checks."""

    threshold: float
    calibration: ScoreRow
    holdout: ScoreRow


def score_sweeps_by_split(
    pairs: Sequence[ScoredPair], *, thresholds: Sequence[float], **kwargs: Any
) -> dict[str, list[SplitRow]]:
    """`score_sweep` per doc type (sorted) on the calibration and the holdout split,
    threshold by threshold (ascending)."""
    by_key: dict[tuple[str, str], list[ScoredPair]] = defaultdict(list)
    for p in pairs:
        by_key[(p.doc_type, p.split)].append(p)
    out: dict[str, list[SplitRow]] = {}
    for doc_type in sorted({p.doc_type for p in pairs}):
        cal = score_sweep(by_key[(doc_type, CALIBRATION)], thresholds=thresholds, **kwargs)
        held = score_sweep(by_key[(doc_type, HOLDOUT)], thresholds=thresholds, **kwargs)
        out[doc_type] = [SplitRow(c.threshold, c, h) for c, h in zip(cal, held, strict=True)]
    return out
