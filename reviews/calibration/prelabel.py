"""The pre-label threshold from the desk's data: draws the site-stratified random
document pairs, scores them and the candidate pairs per doc type, method and channel,
and stores the histograms with the suggested starting threshold (the maths is in
reviews/core/prelabel_math.py). The beat task ``prelabel_compute`` recomputes them every
PRELABEL_EVERY_SECONDS; a recompute replaces the stored rows.

Which documents: those whose main-text fingerprint of the method is ``ok`` (the ones the
candidate index holds), both of the same doc type. Which candidate pairs: every stored
pair of the method and doc type, under the similarity floor or not (they are the
index's nominations).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ingest.channels.thresholds import candidate_method_keys
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.guards import similarity
from ingest.core.methods import normalize_for
from ingest.core.simhash import hamming, to_unsigned64
from ingest.models import CandidatePair, Extraction, Fingerprint
from reviews.core import charts
from reviews.core.calibration_math import CALIBRATION, SEND_TO_REVIEW, Report
from reviews.core.prelabel_math import (
    Starting,
    Suggestion,
    histogram,
    starting_threshold,
    stratified_document_pairs,
    suggest,
)
from reviews.core.scores import SIMHASH_DISTANCE, TOKEN_SET_RATIO, Score
from reviews.core.words import Said, gettext_noop
from reviews.models import PrelabelDistribution

Pair = tuple[int, int]
# Scores of random document pairs, for one method: pairs → score per pair.
PairScorer = Callable[[str, Sequence[Pair]], dict[Pair, float]]


def _simhash_scores(method_key: str, pairs: Sequence[Pair]) -> dict[Pair, float]:
    ids = {d for p in pairs for d in p}
    values = {
        d: to_unsigned64(v)
        for d, v in Fingerprint.objects.filter(
            method__key=method_key,
            simhash__isnull=False,
            document_id__in=ids,
        ).values_list("document_id", "simhash")
        if v is not None
    }
    return {
        (a, b): float(hamming(values[a], values[b]))
        for a, b in pairs
        if a in values and b in values
    }


def _token_set_scores(method_key: str, pairs: Sequence[Pair]) -> dict[Pair, float]:
    ids = {d for p in pairs for d in p}
    texts = {
        d: normalize_for(method_key, text)
        for d, text in Extraction.objects.filter(
            document_id__in=ids, extractor_version=EXTRACTOR_VERSION
        ).values_list("document_id", "main_text")
    }
    out: dict[Pair, float] = {}
    for a, b in set(pairs):
        if a in texts and b in texts:
            sim = similarity(texts[a], texts[b], max_chars=settings.SIMILARITY_MAX_CHARS)
            out[(a, b)] = sim.token_set_ratio
    return out


@dataclass(frozen=True)
class Channel:
    """A score the pre-label histograms cover: its descriptor, the CandidatePair field
    that holds it, and how to score a random document pair. A new channel is one more
    entry in CHANNELS."""

    score: Score
    pair_field: str
    random_scores: PairScorer


CHANNELS: tuple[Channel, ...] = (
    Channel(SIMHASH_DISTANCE, "distance", _simhash_scores),
    Channel(TOKEN_SET_RATIO, "token_set_ratio", _token_set_scores),
)
SCORES = {c.score.name: c.score for c in CHANNELS}


@dataclass(frozen=True)
class Distribution:
    method_key: str
    doc_type: str
    score: Score
    documents: int
    sites: int
    sample_pairs: int
    candidate_pairs: int
    sample_counts: list[int]
    candidate_counts: list[int]
    suggestion: Suggestion
    computed_at: datetime | None  # None: computed for this request, not stored


def _suggest(score: Score, sample: list[int], cand: list[int], documents: int) -> Suggestion:
    return suggest(
        score,
        sample,
        cand,
        documents=documents,
        min_documents=settings.PRELABEL_MIN_DOCUMENTS,
    )


def _documents(method_key: str, doc_type: str) -> list[tuple[int, str]]:
    """(document id, site host) of the indexable documents of the doc type."""
    rows = Fingerprint.objects.filter(
        method__key=method_key,
        simhash__isnull=False,
        document__doc_type=doc_type,
    ).values_list("document_id", "document__site__host")
    return list(rows.iterator(chunk_size=5000))


def distributions_compute(*, doc_type: str = "", method: str = "") -> list[Distribution]:
    """The histograms and suggestions of every (method, doc type, channel), not stored."""
    out: list[Distribution] = []
    keys = [method] if method else candidate_method_keys()
    types = [doc_type] if doc_type else list(settings.DOC_TYPES)
    now = timezone.now()
    for key in keys:
        for dtype in types:
            docs = _documents(key, dtype)
            candidates = CandidatePair.objects.filter(method__key=key, doc_type=dtype)
            if len(docs) < 2 and not candidates.exists():
                continue
            drawn = stratified_document_pairs(
                docs,
                draws=settings.PRELABEL_SAMPLE_PAIRS,
                seed=f"{settings.PRELABEL_SEED}:{key}:{dtype}",
            )
            sites = len({site for _, site in docs})
            for channel in CHANNELS:
                score = channel.score
                scored = channel.random_scores(key, drawn)
                sample = histogram(score, [scored[p] for p in drawn if p in scored])
                values = [
                    float(v)
                    for v in candidates.values_list(channel.pair_field, flat=True)
                    if v is not None
                ]
                cand = histogram(score, values)
                out.append(
                    Distribution(
                        method_key=key,
                        doc_type=dtype,
                        score=score,
                        documents=len(docs),
                        sites=sites,
                        sample_pairs=sum(sample),
                        candidate_pairs=len(values),
                        sample_counts=sample,
                        candidate_counts=cand,
                        suggestion=_suggest(score, sample, cand, len(docs)),
                        computed_at=now,
                    )
                )
    return out


@transaction.atomic
def prelabel_compute() -> int:
    """Recompute and store every distribution (idempotent: the rows are replaced)."""
    computed = distributions_compute()
    kept: set[int] = set()
    for d in computed:
        row, _ = PrelabelDistribution.objects.update_or_create(
            method_key=d.method_key,
            doc_type=d.doc_type,
            score=d.score.name,
            defaults={
                "documents": d.documents,
                "sites": d.sites,
                "sample_pairs": d.sample_pairs,
                "candidate_pairs": d.candidate_pairs,
                "sample_counts": d.sample_counts,
                "candidate_counts": d.candidate_counts,
                "threshold": d.suggestion.threshold,
                "reason": d.suggestion.reason,
                "suggestion_method": d.suggestion.method,
                "seed": settings.PRELABEL_SEED,
                "computed_at": d.computed_at or timezone.now(),
            },
        )
        kept.add(row.pk)
    PrelabelDistribution.objects.exclude(pk__in=kept).delete()
    return len(computed)


def _from_row(row: PrelabelDistribution) -> Distribution | None:
    score = SCORES.get(row.score)
    if score is None or len(row.sample_counts) != score.bins:
        return None  # a score no longer known, or binned differently: the next run redoes it
    return Distribution(
        method_key=row.method_key,
        doc_type=row.doc_type,
        score=score,
        documents=row.documents,
        sites=row.sites,
        sample_pairs=row.sample_pairs,
        candidate_pairs=row.candidate_pairs,
        sample_counts=list(row.sample_counts),
        candidate_counts=list(row.candidate_counts),
        # Recomputed from the stored counts: cheap, and always the current rule.
        suggestion=_suggest(score, row.sample_counts, row.candidate_counts, row.documents),
        computed_at=row.computed_at,
    )


def distributions(*, doc_type: str = "", method: str = "") -> list[Distribution]:
    """The stored distributions; when nothing is stored yet (a fresh install before the
    first beat run), computed for this call."""
    if not PrelabelDistribution.objects.exists():
        return distributions_compute(doc_type=doc_type, method=method)
    rows = PrelabelDistribution.objects.all()
    if doc_type:
        rows = rows.filter(doc_type=doc_type)
    if method:
        rows = rows.filter(method_key=method)
    return [d for d in (_from_row(r) for r in rows) if d is not None]


@dataclass(frozen=True)
class PrelabelView:
    """One distribution with its chart and the threshold to start from, for the page and
    the JSON output."""

    distribution: Distribution
    starting: Starting
    chart: charts.Chart


def _label_basis(report: Report | None, score: Score) -> tuple[float | None, str, int, int]:
    """The label-based threshold for this score (the "send to review" policy of the
    distance sweep) and the calibration split's class counts."""
    if report is None or score.name != SIMHASH_DISTANCE.name:
        return None, "", 0, 0
    rec = next(r for r in report.recommendations if r.policy == SEND_TO_REVIEW)
    counts = report.counts[CALIBRATION]
    threshold = float(rec.threshold) if rec.threshold is not None else None
    return threshold, f"send to review: {rec.reason}", counts["positive"], counts["negative"]


def prelabel_views(dists: Sequence[Distribution], reports: Sequence[Report]) -> list[PrelabelView]:
    by_key = {(r.doc_type, r.method): r for r in reports}
    out = []
    for d in dists:
        threshold, reason, pos, neg = _label_basis(by_key.get((d.doc_type, d.method_key)), d.score)
        starting = starting_threshold(
            d.suggestion,
            label_threshold=threshold,
            label_reason=reason,
            positives=pos,
            negatives=neg,
            min_per_class=settings.CALIBRATION_MIN_PER_CLASS,
            label_sweep=d.score.name == SIMHASH_DISTANCE.name,
        )
        guide = None
        if d.suggestion.valley_bin is not None:
            guide = (
                d.suggestion.valley_bin,
                Said(gettext_noop("unlabelled suggestion: %(reason)s"), reason=d.suggestion.reason),
            )
        chart = charts.shares(
            {"random": d.sample_counts, "candidates": d.candidate_counts},
            bin_labels=[d.score.bin_label(i) for i in range(d.score.bins)],
            title=Said(
                gettext_noop("%(score)s: random pairs and candidate pairs"), score=d.score.label
            ),
            guide=guide,
        )
        out.append(PrelabelView(d, starting, chart))
    return out
