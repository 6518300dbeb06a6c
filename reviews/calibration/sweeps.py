"""Calibration from the desk's labels (thresholds come from labels, per doc type): the
stable split, the labelled pairs, the reports and the stratified calibration sample. The
maths is in reviews/core/calibration_math.py; this module only reads the database and calls it.

Rules chosen here:

- **Split.** ``split_of(f"{method_key}:{key_a}:{key_b}")`` with LABEL_HOLDOUT_SHARE,
  where a document's key is its snapshot identity (raw SHA-256, fetch time, URL; the
  two keys sorted): the pair alone decides, never its labels, and the same crawl gets
  the same split in any install (database ids would not: a second install, or parallel
  workers, number documents differently).
- **Which labels count.** Current labels only (not superseded, not a retraction), of any
  purpose. With several editors on a pair the majority *class* wins (positive /
  negative, from CALIBRATION_POSITIVE / CALIBRATION_NEGATIVE; other verdicts abstain);
  a tie between the classes leaves the pair out as disputed. The verdict passed on is
  the commonest one of the winning class (ties by name).
- **Weights.** A pair's latest CalibrationSample weight, 1.0 for a pair never sampled.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, Max, OuterRef, QuerySet, Subquery

from ingest.channels import thresholds
from ingest.models import CandidatePair
from reviews.core import charts
from reviews.core.calibration_math import (
    LabeledPair,
    Report,
    ScoredPair,
    ScoreRow,
    SplitRow,
    calibrate,
    score_sweeps_by_doc_type,
    score_sweeps_by_split,
    split_of,
    stratified_sample,
)
from reviews.core.scores import COSINE
from reviews.models import Adjudication, CalibrationSample, Label
from reviews.queue.pair_states import subject_labelled

# Distance bands of the calibration sample (inclusive): the easy extremes (0, far) get
# no more pairs than the uncertain middle.
BANDS: tuple[tuple[int, int], ...] = ((0, 0), (1, 2), (3, 4), (5, 6), (7, 64))


def band_name(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    return f"{lo}+" if hi >= 64 else f"{lo}-{hi}"


def band_of(distance: int) -> str:
    """The name of the sample band a distance falls in."""
    return next((band_name(lo, hi) for lo, hi in BANDS if lo <= distance <= hi), "other")


def document_key(*, url: str, fetched_at: datetime, raw_sha256: str) -> str:
    """A document's identity in any install: its snapshot (URL, fetch time, raw bytes).
    Database ids are not used: another install numbers the same crawl differently."""
    return f"{raw_sha256}@{fetched_at.astimezone(UTC).isoformat()}@{url}"


def split_for(*, method_key: str, a_key: str, b_key: str) -> str:
    """The split of a pair, "calibration" or "holdout": a stable hash of its key
    (method and both documents' keys, in sorted order), never of its labels."""
    low, high = sorted((a_key, b_key))
    return split_of(f"{method_key}:{low}:{high}", settings.LABEL_HOLDOUT_SHARE)


def pair_split(pair: CandidatePair) -> str:
    """The split of a stored pair (loads both documents if not loaded)."""
    return split_for(
        method_key=pair.method.key,
        a_key=document_key(
            url=pair.a.url, fetched_at=pair.a.fetched_at, raw_sha256=pair.a.raw_sha256
        ),
        b_key=document_key(
            url=pair.b.url, fetched_at=pair.b.fetched_at, raw_sha256=pair.b.raw_sha256
        ),
    )


def positive() -> frozenset[str]:
    return frozenset(settings.CALIBRATION_POSITIVE)


def negative() -> frozenset[str]:
    return frozenset(settings.CALIBRATION_NEGATIVE)


def latest_weight_subquery() -> Subquery:
    return Subquery(
        CalibrationSample.objects.filter(pair=OuterRef("pair")).order_by("-id").values("weight")[:1]
    )


def sample_weights(*, pair_ids: set[int] | None = None) -> dict[int, float]:
    """Each sampled pair's latest weight."""
    qs = CalibrationSample.objects.order_by("pair_id", "id")
    if pair_ids is not None:
        qs = qs.filter(pair_id__in=pair_ids)
    return dict(qs.values_list("pair_id", "weight"))  # later rows overwrite earlier


def pair_verdict(verdicts: list[str]) -> str | None:
    """The verdict a pair counts with, from its current labels (see the module rules);
    None when the classes tie (disputed) or no label is in a class."""
    pos, neg = positive(), negative()
    n_pos = sum(1 for v in verdicts if v in pos)
    n_neg = sum(1 for v in verdicts if v in neg)
    if n_pos == n_neg:
        return None
    winners = pos if n_pos > n_neg else neg
    counts = Counter(v for v in verdicts if v in winners)
    return min(counts, key=lambda v: (-counts[v], v))


def adjudicated_verdicts(*, pairs: dict[int, tuple[int, int]]) -> dict[int, str]:
    """The latest adjudication's verdict of each of these pairs (id: its two documents)
    whose documents were adjudicated, on it or on another method's pair of them."""
    if not pairs:
        return {}
    lows = {a for a, _ in pairs.values()}
    highs = {b for _, b in pairs.values()}
    settled: dict[tuple[int, int], str] = {}
    for a, b, verdict in (
        Adjudication.objects.filter(pair__a_id__in=lows, pair__b_id__in=highs)
        .order_by("created_at", "id")
        .values_list("pair__a_id", "pair__b_id", "verdict")
    ):
        settled[(a, b)] = verdict
    return {pk: settled[ends] for pk, ends in pairs.items() if ends in settled}


def counted_labels(*, doc_type: str = "", method: str = "") -> QuerySet[Label]:
    """The labels that count: current (not superseded), not retractions; optionally of
    one doc type and one method."""
    labels = Label.objects.filter(superseded_by__isnull=True, retraction=False)
    if doc_type:
        labels = labels.filter(pair__doc_type=doc_type)
    if method:
        labels = labels.filter(pair__method__key=method)
    return labels


@dataclass(frozen=True)
class LabelRow:
    """One counted label with the facts of one pair of its two documents; `split` is
    the pair's stable split. A label counts for every method's pair of its documents:
    `pair_id` is that pair, `label_id` the label (given on whichever pair it was)."""

    pair_id: int
    verdict: str
    a: int
    b: int
    distance: int
    doc_type: str
    method: str
    split: str
    label_id: int = 0


def subject_verdicts() -> dict[tuple[int, int], list[tuple[int, str]]]:
    """The counted labels (id, verdict, oldest first) of every labelled subject (its
    two documents, low then high), whichever method's pair each was given on."""
    out: dict[tuple[int, int], list[tuple[int, str]]] = defaultdict(list)
    for label_id, low, high, verdict in (
        counted_labels().values_list("id", "doc_low", "doc_high", "verdict").order_by("id")
    ):
        out[(low, high)].append((label_id, verdict))
    return out


def label_rows(*, doc_type: str = "", method: str = "") -> Iterator[LabelRow]:
    """Every counted label, once for each pair of its two documents under every method
    (a label is a judgment about two documents, not about one method's pair row), by
    pair then age, with that pair's facts (the split is computed once per pair, from the
    documents' stable keys)."""
    labels = subject_verdicts()
    pairs = CandidatePair.objects.filter(subject_labelled())
    if doc_type:
        pairs = pairs.filter(doc_type=doc_type)
    if method:
        pairs = pairs.filter(method__key=method)
    rows = pairs.values_list(
        "id",
        "a_id",
        "b_id",
        "distance",
        "doc_type",
        "method__key",
        "a__url",
        "a__fetched_at",
        "a__raw_sha256",
        "b__url",
        "b__fetched_at",
        "b__raw_sha256",
    )
    for row in rows.order_by("id").iterator(chunk_size=2000):
        pair_id, a, b, distance, dtype, key, a_url, a_at, a_sha, b_url, b_at, b_sha = row
        a_key = document_key(url=a_url, fetched_at=a_at, raw_sha256=a_sha)
        b_key = document_key(url=b_url, fetched_at=b_at, raw_sha256=b_sha)
        split = split_for(method_key=key, a_key=a_key, b_key=b_key)
        for label_id, verdict in labels.get((a, b), ()):
            yield LabelRow(pair_id, verdict, a, b, distance, dtype, key, split, label_id)


def labeled_pairs(*, doc_type: str = "", method: str = "") -> list[LabeledPair]:
    """Every pair with a counted verdict, as the core's LabeledPair."""
    verdicts: dict[int, list[str]] = defaultdict(list)
    facts: dict[int, tuple[int, str, str, str]] = {}
    ends: dict[int, tuple[int, int]] = {}
    for r in label_rows(doc_type=doc_type, method=method):
        verdicts[r.pair_id].append(r.verdict)
        if r.pair_id not in facts:
            ends[r.pair_id] = (r.a, r.b)
            facts[r.pair_id] = (r.distance, r.doc_type, r.method, r.split)
    weights = sample_weights(pair_ids=set(verdicts))
    final = adjudicated_verdicts(pairs=ends)
    out = []
    for pair_id in sorted(verdicts):
        # An adjudicated pair counts with the adjudicator's verdict.
        verdict = final.get(pair_id) or pair_verdict(verdicts[pair_id])
        if verdict is None:
            continue
        distance, dtype, key, split = facts[pair_id]
        out.append(
            LabeledPair(
                distance=distance,
                verdict=verdict,
                weight=weights.get(pair_id, 1.0),
                doc_type=dtype,
                method=key,
                split=split,
                pair_id=pair_id,
                a=ends[pair_id][0],
                b=ends[pair_id][1],
            )
        )
    return out


def _calibrate(pairs: list[LabeledPair]) -> list[Report]:
    return calibrate(
        pairs,
        positive=positive(),
        negative=negative(),
        max_threshold=settings.CALIBRATION_MAX_THRESHOLD,
        cost_false_merge=settings.CALIBRATION_COST_FALSE_MERGE,
        cost_missed=settings.CALIBRATION_COST_MISSED,
        min_per_class=settings.CALIBRATION_MIN_PER_CLASS,
        min_recall=settings.CALIBRATION_MIN_RECALL,
        min_precision=settings.CALIBRATION_MIN_PRECISION,
    )


def calibration_reports(*, doc_type: str = "", method: str = "") -> list[Report]:
    """One report per (doc type, method) with counted labels, settings applied."""
    return _calibrate(labeled_pairs(doc_type=doc_type, method=method))


def reports_of(labelled: list[LabeledPair]) -> list[Report]:
    """The reports of pairs already read (``labeled_pairs``), settings applied."""
    return _calibrate(labelled)


@dataclass
class ReportView:
    """A report with its charts, for the page."""

    report: Report
    histogram: charts.Chart
    pr_curve: charts.Chart
    # Errors per action (reviews/calibration/action_errors.py), one per pair score; filled
    # by the view.
    actions: list[Any] = field(default_factory=list)
    # Whether stored errors per action exist for it (the summary lists their section).
    has_actions: bool = False


def histogram_input(pairs: list[LabeledPair], report: Report) -> dict[str, list[int]]:
    """The distances per verdict of the report's calibration split, unweighted: what
    the editors saw."""
    by_verdict: dict[str, list[int]] = {}
    for p in pairs:
        if (p.doc_type, p.method, p.split) == (report.doc_type, report.method, "calibration"):
            by_verdict.setdefault(p.verdict, []).append(p.distance)
    return {v: by_verdict[v] for v in sorted(by_verdict)}


def report_view(report: Report, distances: dict[str, list[int]]) -> ReportView:
    """A report with its histogram (from ``histogram_input``) and PR curve."""
    return ReportView(
        report=report,
        histogram=charts.histogram(distances, max_distance=settings.CALIBRATION_MAX_THRESHOLD),
        pr_curve=charts.pr_curve(report.rows),
    )


def report_views(
    *, doc_type: str = "", method: str = "", labelled: list[LabeledPair] | None = None
) -> list[ReportView]:
    pairs = labeled_pairs(doc_type=doc_type, method=method) if labelled is None else labelled
    return [report_view(r, histogram_input(pairs, r)) for r in _calibrate(pairs)]


# --- the calibration sample ---------------------------------------------------------


def sample_candidates(*, doc_type: str = "", method: str = "") -> QuerySet[CandidatePair]:
    qs = CandidatePair.objects.all()
    if doc_type:
        qs = qs.filter(doc_type=doc_type)
    if method:
        qs = qs.filter(method__key=method)
    return qs


@transaction.atomic
def calibration_sample_make(
    *, per_band: int, seed: int, doc_type: str = "", method: str = ""
) -> list[CalibrationSample]:
    """Draw up to ``per_band`` pairs from every distance band of every (doc type,
    method), each stored with its weight (band size / pairs taken in that stratum)."""
    strata: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    rows = sample_candidates(doc_type=doc_type, method=method).values_list(
        "id", "doc_type", "method_id", "distance"
    )
    for pk, dtype, method_id, distance in rows.iterator(chunk_size=5000):
        strata[(dtype, method_id)].append((pk, distance))
    distance_of: dict[int, int] = {}
    drawn: list[tuple[int, float]] = []
    for key in sorted(strata):
        members = strata[key]
        distance_of.update(members)
        drawn.extend(stratified_sample(members, per_band=per_band, bands=BANDS, seed=seed))

    return CalibrationSample.objects.bulk_create(
        [
            CalibrationSample(pair_id=pk, weight=w, seed=seed, band=band_of(distance_of[pk]))
            for pk, w in drawn
        ]
    )


def calibration_sample_pairs() -> QuerySet[CalibrationSample]:
    """The latest sample entry of every sampled pair, with whether it has a current
    label, unlabelled first."""
    latest = CalibrationSample.objects.values("pair").annotate(last=Max("id")).values("last")
    current = Label.objects.filter(
        doc_low=OuterRef("pair__a_id"),
        doc_high=OuterRef("pair__b_id"),
        superseded_by__isnull=True,
        retraction=False,
    )
    return (
        CalibrationSample.objects.filter(id__in=latest)
        .select_related("pair__a", "pair__b", "pair__method")
        .annotate(is_labeled=Exists(current))
        .order_by("is_labeled", "band", "pair_id")
    )


def containment_pairs(*, doc_type: str = "", method: str = "") -> list[ScoredPair]:
    """Every pair with a counted verdict, scored by the passage channel's containment
    (the larger direction), whichever channel nominated it."""
    verdicts: dict[int, list[str]] = defaultdict(list)
    for r in label_rows(doc_type=doc_type, method=method):
        verdicts[r.pair_id].append(r.verdict)
    weights = sample_weights(pair_ids=set(verdicts))
    out = []
    for pair in CandidatePair.objects.filter(id__in=list(verdicts)).select_related(
        "a", "b", "method"
    ):
        counted = pair_verdict(verdicts[pair.id])
        if counted is None:
            continue
        out.append(
            ScoredPair(
                score=max(pair.a_in_b, pair.b_in_a),
                verdict=counted,
                weight=weights.get(pair.id, 1.0),
                doc_type=pair.doc_type,
                split=pair_split(pair),
            )
        )
    return out


def containment_sweeps(*, doc_type: str = "", method: str = "") -> dict[str, list[ScoreRow]]:
    """The containment sweep per doc type (calibration split; higher is closer)."""
    return score_sweeps_by_doc_type(
        containment_pairs(doc_type=doc_type, method=method),
        positive=positive(),
        negative=negative(),
        cost_false_merge=settings.CALIBRATION_COST_FALSE_MERGE,
        cost_missed=settings.CALIBRATION_COST_MISSED,
    )


# --- the semantic channel's cosine ---------------------------------------------------


@dataclass
class CosineSweep:
    """The cosine sweep of one doc type: thresholds over the cosine, precision and
    recall on the calibration split (which chooses) and the holdout split (which
    checks), beside the threshold the semantic channel nominates at today."""

    doc_type: str
    configured: float  # SEMANTIC_THRESHOLDS of the doc type
    rows: list[SplitRow]
    counted: int  # labelled pairs with a cosine
    without_cosine: int  # labelled pairs where a side has no embedding (left out)


def cosine_thresholds(doc_type: str) -> list[float]:
    """The bins of the cosine score, and the doc type's configured threshold."""
    ts = {round(COSINE.bin_start(i), 4) for i in range(COSINE.bins)}
    ts.add(round(thresholds.cosine_threshold(doc_type), 4))
    return sorted(ts)


def cosine_sweeps(
    *, doc_type: str = "", method: str = "", labelled: list[LabeledPair] | None = None
) -> list[CosineSweep]:
    """The cosine sweep per doc type, over the pairs with a counted verdict (as the
    distance sweep counts them: majority class, adjudications, sample weights) whose
    both sides have an embedding; ``labelled`` when the pairs are already read."""
    if labelled is None:
        labelled = labeled_pairs(doc_type=doc_type, method=method)
    cosines = dict(
        CandidatePair.objects.filter(
            id__in=[p.pair_id for p in labelled], cosine__isnull=False
        ).values_list("id", "cosine")
    )
    scored: dict[str, list[ScoredPair]] = defaultdict(list)
    missing: Counter[str] = Counter()
    for p in labelled:
        cosine = cosines.get(p.pair_id) if p.pair_id is not None else None
        if cosine is None:
            missing[p.doc_type] += 1
            continue
        scored[p.doc_type].append(ScoredPair(cosine, p.verdict, p.weight, p.doc_type, p.split))
    out = []
    for dtype in sorted(scored):
        sweeps = score_sweeps_by_split(
            scored[dtype],
            thresholds=cosine_thresholds(dtype),
            score=COSINE,
            positive=positive(),
            negative=negative(),
            cost_false_merge=settings.CALIBRATION_COST_FALSE_MERGE,
            cost_missed=settings.CALIBRATION_COST_MISSED,
        )
        out.append(
            CosineSweep(
                doc_type=dtype,
                configured=thresholds.cosine_threshold(dtype),
                rows=sweeps.get(dtype, []),
                counted=len(scored[dtype]),
                without_cosine=missing[dtype],
            )
        )
    return out
