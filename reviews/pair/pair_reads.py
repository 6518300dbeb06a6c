"""The pair page's reads: the pair, the extractions of its two sides, the labels of its
two documents and the terms that tripped a guard."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404

from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidateGroup, CandidatePair, Document, Extraction, GroupMember
from reviews.labels.label_reads import subject_adjudications
from reviews.labels.preferences import blind_mode_for
from reviews.models import Adjudication, Claim, Label, label_subject
from reviews.queue.claiming import active_claims


@dataclass
class Side:
    document: Document
    extraction: Extraction | None

    @property
    def main_text(self) -> str:
        return self.extraction.main_text if self.extraction else ""

    @property
    def full_text(self) -> str:
        return self.extraction.full_text if self.extraction else ""


@dataclass
class PairView:
    pair: CandidatePair
    a: Side
    b: Side
    labels: list[Label]
    current: list[Label]
    mine: Label | None
    disputed: bool
    disagreeing: list[Label]
    group: CandidateGroup | None
    blind: bool
    claim: Claim | None
    guard_terms: list[str] = field(default_factory=list)
    adjudications: list[Adjudication] = field(default_factory=list)

    @property
    def adjudicated(self) -> Adjudication | None:
        return self.adjudications[0] if self.adjudications else None


def pair_get(*, pair_id: int) -> CandidatePair:
    return get_object_or_404(
        CandidatePair.objects.select_related("method", "a__site", "b__site"), id=pair_id
    )


_DIGITS_HEAD = re.compile(r"\d+(?:[.,]\d+)*")


def guard_terms(pair: CandidatePair) -> list[str]:
    """Numbers and ids found on one side only: the ones that tripped a guard."""
    g = pair.guard_details or {}
    terms: set[str] = set()
    for x, y in (("numbers_a", "numbers_b"), ("ids_a", "ids_b")):
        terms |= set(map(str, g.get(x, []))) ^ set(map(str, g.get(y, [])))
    # A number with a multiplier ("1.2万", "1,5 triệu") is more than one token of the
    # diff: its digits are the token to emphasise.
    terms |= {m.group() for t in terms if (m := _DIGITS_HEAD.match(t)) and m.group() != t}
    return sorted(terms)


def pair_view(*, pair: CandidatePair, user: User) -> PairView:
    # The full-page texts are read only by the views that show them (a deferred field).
    extractions = {
        e.document_id: e
        for e in Extraction.objects.filter(
            document_id__in=[pair.a_id, pair.b_id], extractor_version=EXTRACTOR_VERSION
        ).defer("full_text")
    }
    # The labels of the two documents, whichever method's pair they were given on (each
    # shows the method it was given under).
    labels = list(
        Label.objects.of_subject(label_subject(pair.a_id, pair.b_id))
        .select_related("editor")
        .order_by("-created_at", "-id")
    )
    current = [x for x in labels if x.superseded_by_id is None and not x.retraction]
    mine = next((x for x in current if x.editor_id == user.pk), None)
    verdicts = {x.verdict for x in current}
    disagreeing = [
        x for x in current if x.editor_id != user.pk and mine and x.verdict != mine.verdict
    ]
    members = GroupMember.objects.filter(
        method=pair.method_id, document_id__in=[pair.a_id, pair.b_id]
    ).select_related("group")
    groups = {m.group_id: m.group for m in members}
    group = None
    if len(members) == 2 and len(groups) == 1:
        group = next(iter(groups.values()))
    claim = active_claims().filter(pair=pair).select_related("editor").first()
    return PairView(
        pair=pair,
        a=Side(pair.a, extractions.get(pair.a_id)),
        b=Side(pair.b, extractions.get(pair.b_id)),
        labels=labels,
        current=current,
        mine=mine,
        disputed=len(verdicts) > 1,
        disagreeing=disagreeing,
        group=group,
        blind=blind_mode_for(user=user),
        claim=claim,
        guard_terms=guard_terms(pair),
        adjudications=list(subject_adjudications(pair).select_related("adjudicator")),
    )
