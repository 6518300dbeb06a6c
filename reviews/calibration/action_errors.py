"""Action-level calibration errors from the desk's data: reads the labels, the groupable
candidate pairs and the representative-policy facts, and hands them to
reviews/core/actions_math.py (which re-runs the shipped grouping rule at every threshold).

The labels counted are exactly those of the threshold sweep (``sweeps.labeled_pairs``:
current labels, majority class, both splits). The rule and the representative policy
are the configured ones (GROUP_RULE, REPRESENTATIVE_POLICY); the groupable pairs are
those the workers group (not under the similarity floor).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.urls import reverse

from ingest.candidates import policy_candidates
from ingest.channels import registry
from ingest.channels.thresholds import threshold_for
from ingest.models import CandidatePair, Document
from reviews.calibration import sweeps
from reviews.core.actions_math import (
    ActionRow,
    DocFacts,
    LabelledLink,
    ScoredPair,
    WrongGroup,
    action_sweep,
    labelled_components,
)
from reviews.core.calibration_math import LabeledPair
from reviews.core.scores import SIMHASH_DISTANCE, TOKEN_SET_RATIO, Score


@dataclass(frozen=True)
class DocLink:
    id: int
    url: str
    site: str
    site_priority: int
    href: str


@dataclass
class ActionReport:
    doc_type: str
    method: str
    score: Score
    rule: str
    rows: list[ActionRow]
    documents: dict[int, DocLink]  # the members of the worst groups, for links

    def row_at(self, threshold: float) -> ActionRow | None:
        return next((r for r in self.rows if r.threshold == threshold), None)


# The scores a candidate pair carries that the action sweep can regroup by: the SimHash
# distance, the token-set ratio, then every other channel that keeps its score on the
# pair (ingest.channels: ``score`` and ``pair_field``). A score that is empty (None) on a
# pair (the cosine while a side has no embedding) leaves it out, and there is no report
# while no labelled pair has one (the channel off).
PAIR_SCORES: tuple[tuple[Score, str], ...] = (
    (SIMHASH_DISTANCE, "distance"),
    (TOKEN_SET_RATIO, "token_set_ratio"),
    *(
        (c.score, c.pair_field)
        for c in registry.channels()
        if c.score is not None and c.pair_field is not None and c.score != SIMHASH_DISTANCE
    ),
)


def thresholds_for(score: Score) -> list[float]:
    if score.name == SIMHASH_DISTANCE.name:
        return [float(t) for t in range(settings.CALIBRATION_MAX_THRESHOLD + 1)]
    return [score.bin_start(i) for i in range(score.bins)]


def configured_threshold(score: Score, doc_type: str) -> float:
    """The threshold the desk uses today for this score: the candidate threshold for the
    SimHash distance, the similarity floor (rounded down to a bin) for the token-set ratio,
    a channel's own threshold (rounded down to a bin) for its score (the cosine, …)."""
    channel = next((c for c in registry.channels() if c.score == score), None)
    if channel is not None and score != SIMHASH_DISTANCE:
        cut = channel.configured_threshold(doc_type)
        if cut is not None:
            return score.bin_start(score.bin_of(cut))
    if score.name == TOKEN_SET_RATIO.name:
        floor = float(settings.SIMILARITY_FLOORS.get(doc_type, 60.0))
        return score.bin_start(score.bin_of(floor))
    return float(threshold_for(doc_type))


def _doc_links(ids: set[int]) -> dict[int, DocLink]:
    rows = Document.objects.filter(pk__in=ids).values_list(
        "pk", "url", "site__host", "site__priority"
    )
    return {
        pk: DocLink(pk, url, host, priority, reverse("ingest:document-detail", args=[pk]))
        for pk, url, host, priority in rows
    }


def _report(
    doc_type: str, method: str, labelled: Sequence[LabeledPair], score: Score, field: str
) -> ActionReport | None:
    links = [
        LabelledLink(
            a=p.a,
            b=p.b,
            positive=p.verdict in sweeps.positive(),
            score=float(p.distance),
            pair_id=p.pair_id,
        )
        for p in labelled
        if p.a is not None and p.b is not None
    ]
    if field != "distance":
        values = dict(
            CandidatePair.objects.filter(id__in=[x.pair_id for x in links]).values_list("id", field)
        )
        links = [
            LabelledLink(x.a, x.b, x.positive, float(values[x.pair_id]), x.pair_id)
            for x in links
            if values.get(x.pair_id) is not None
        ]
        if not links:
            return None  # no labelled pair has this score (a channel that is off)
    pairs = [
        ScoredPair(a, b, float(value))
        for a, b, value in CandidatePair.objects.filter(
            method__key=method, doc_type=doc_type, below_floor=False
        ).values_list("a_id", "b_id", field)
        if value is not None
    ]
    area = labelled_components(pairs, {d for x in links for d in (x.a, x.b)})
    types = dict(Document.objects.filter(pk__in=area).values_list("pk", "doc_type"))
    facts = {
        c.document_id: DocFacts(candidate=c, doc_type=types.get(c.document_id, ""))
        for c in policy_candidates(area)
    }
    rows = action_sweep(
        score,
        thresholds_for(score),
        [p for p in pairs if p.a in area],
        links,
        facts,
        rule=settings.GROUP_RULE,
        policy=settings.REPRESENTATIVE_POLICY,
        cost_false_merge=settings.CALIBRATION_COST_FALSE_MERGE,
        cost_missed=settings.CALIBRATION_COST_MISSED,
    )
    shown = {d for r in rows for g in r.worst for d in g.members}
    return ActionReport(doc_type, method, score, settings.GROUP_RULE, rows, _doc_links(shown))


def action_reports(
    *, doc_type: str = "", method: str = "", labelled: Sequence[LabeledPair] | None = None
) -> list[ActionReport]:
    """One report per (doc type, method) with counted labels, and per pair score;
    ``labelled`` when the labelled pairs are already read."""
    if labelled is None:
        labelled = sweeps.labeled_pairs(doc_type=doc_type, method=method)
    by_key: dict[tuple[str, str], list[LabeledPair]] = defaultdict(list)
    for p in labelled:
        by_key[(p.doc_type, p.method)].append(p)
    reports = (
        _report(dtype, key, labelled, score, field)
        for (dtype, key), labelled in sorted(by_key.items())
        for score, field in PAIR_SCORES
    )
    return [r for r in reports if r is not None]


@dataclass(frozen=True)
class MemberView:
    id: int
    link: DocLink | None
    representative: bool
    hidden_wrongly: bool


@dataclass
class ActionView:
    """An action report with the threshold whose worst groups the page lists."""

    report: ActionReport
    shown: ActionRow | None

    @property
    def worst(self) -> list[tuple[WrongGroup, list[MemberView]]]:
        if self.shown is None:
            return []
        return [
            (
                g,
                [
                    MemberView(
                        m,
                        self.report.documents.get(m),
                        m == g.representative,
                        m in g.hidden_wrongly,
                    )
                    for m in g.members
                ],
            )
            for g in self.shown.worst
        ]


def action_views(
    *,
    doc_type: str = "",
    method: str = "",
    at: str = "",
    reports: Sequence[ActionReport] | None = None,
) -> dict[tuple[str, str], list[ActionView]]:
    """Action reports keyed by (doc type, method) (``reports`` when already computed or
    read from the stored figures). The worst groups are listed at ``at`` when it is one
    of the thresholds, else at the threshold the desk uses today
    (``configured_threshold``)."""
    out: dict[tuple[str, str], list[ActionView]] = defaultdict(list)
    if reports is None:
        reports = action_reports(doc_type=doc_type, method=method)
    for report in reports:
        default = configured_threshold(report.score, report.doc_type)
        try:
            wanted = float(at)
        except ValueError:
            wanted = default
        shown = report.row_at(wanted) or report.row_at(default)
        out[(report.doc_type, report.method)].append(ActionView(report, shown))
    return dict(out)
