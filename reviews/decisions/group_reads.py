"""The group page's reads: its members with their distances to the representative, the
distance matrix, its decisions, and the conflicts (documents a person said are distinct
that the group still holds) with the cut that would separate them."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.shortcuts import get_object_or_404

from ingest.channels.thresholds import threshold_for
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.simhash import hamming, to_unsigned64
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    Document,
    DoNotMatch,
    Extraction,
    Fingerprint,
    GroupMember,
)
from reviews.core.mincut import min_cut
from reviews.labels.label_reads import current_labels
from reviews.models import Decision, Label

MATRIX_MAX = 40


@dataclass
class MemberRow:
    document: Document
    extraction: Extraction | None
    value: int | None
    distance_to_rep: int | None
    is_representative: bool


@dataclass
class Conflict:
    a: int
    b: int
    source: str  # label | do-not-match
    cut: list[tuple[int, int]]
    move: list[int]


@dataclass
class GroupView:
    group: CandidateGroup
    members: list[MemberRow]
    matrix_ids: list[int]
    matrix: list[tuple[int, list[int | None]]]
    matrix_cut: bool
    decisions: list[Decision]
    conflicts: list[Conflict]
    threshold: int
    # A dissolved group: the decision that dissolved it, and where its former members
    # are now (document id, group id or None).
    dissolved_by: Decision | None = None
    whereabouts: list[tuple[int, int | None]] = field(default_factory=list)


def group_get(*, group_id: int) -> CandidateGroup:
    return get_object_or_404(
        CandidateGroup.objects.select_related("method", "representative"), pk=group_id
    )


def group_member_ids(*, group: CandidateGroup) -> list[int]:
    return sorted(GroupMember.objects.filter(group=group).values_list("document_id", flat=True))


def group_view(*, group: CandidateGroup) -> GroupView:
    ids = group_member_ids(group=group)
    documents = Document.objects.filter(pk__in=ids).select_related("site").order_by("id")
    extractions = {
        e.document_id: e
        for e in Extraction.objects.filter(
            document_id__in=ids, extractor_version=EXTRACTOR_VERSION
        ).defer("main_text", "full_text")
    }
    values = {
        d: to_unsigned64(v)
        for d, v in Fingerprint.objects.filter(
            method=group.method_id, document_id__in=ids
        ).values_list("document_id", "simhash")
        if v is not None
    }
    rep = values.get(group.representative_id) if group.representative_id else None
    rows = [
        MemberRow(
            document=d,
            extraction=extractions.get(d.pk),
            value=values.get(d.pk),
            distance_to_rep=(
                hamming(rep, values[d.pk]) if rep is not None and d.pk in values else None
            ),
            is_representative=d.pk == group.representative_id,
        )
        for d in documents
    ]
    rows.sort(key=lambda r: (not r.is_representative, r.distance_to_rep or 0, r.document.pk))
    matrix_ids = [r.document.pk for r in rows][:MATRIX_MAX]
    matrix = [
        (
            x,
            [
                hamming(values[x], values[y]) if x in values and y in values else None
                for y in matrix_ids
            ],
        )
        for x in matrix_ids
    ]
    types = {r.document.doc_type for r in rows}
    decisions = list(group.decisions.all())
    dissolved_by: Decision | None = None
    whereabouts: list[tuple[int, int | None]] = []
    if group.dissolved:
        dissolved_by, whereabouts = _dissolution(group, decisions)
    return GroupView(
        group=group,
        members=rows,
        matrix_ids=matrix_ids,
        matrix=matrix,
        matrix_cut=len(rows) > MATRIX_MAX,
        decisions=decisions,
        conflicts=group_conflicts(group=group, member_ids=ids),
        threshold=max((threshold_for(t) for t in types), default=threshold_for("other")),
        dissolved_by=dissolved_by,
        whereabouts=whereabouts,
    )


def _dissolution(
    group: CandidateGroup, decisions: list[Decision]
) -> tuple[Decision | None, list[tuple[int, int | None]]]:
    """Which decision dissolved the group (the latest one that left it empty) and the
    current group of each document it held before."""
    applied = [d for d in decisions if d.action != Decision.Action.CONFLICT]
    last = next((d for d in applied if not d.membership_after.get("members")), None)
    former: set[int] = set()
    for d in applied:
        former.update(d.membership_before.get("members", []))
    now = dict(
        GroupMember.objects.filter(method=group.method_id, document_id__in=former).values_list(
            "document_id", "group_id"
        )
    )
    return last, [(d, now.get(d)) for d in sorted(former)]


def group_pair_edges(*, group: CandidateGroup, member_ids: list[int]) -> list[tuple[int, int]]:
    return list(
        CandidatePair.objects.filter(
            method=group.method_id, below_floor=False, a_id__in=member_ids, b_id__in=member_ids
        ).values_list("a_id", "b_id")
    )


def group_conflicts(*, group: CandidateGroup, member_ids: list[int]) -> list[Conflict]:
    """Documents a person said are distinct (a current label or a do-not-match) that the
    group still holds together, each with the smallest set of pair links whose removal
    separates them and the members a split along that cut would move."""
    found: dict[tuple[int, int], str] = {}
    for a, b in (
        current_labels()
        .filter(
            verdict=Label.Verdict.DISTINCT,
            pair__method=group.method_id,
            pair__a_id__in=member_ids,
            pair__b_id__in=member_ids,
        )
        .values_list("pair__a_id", "pair__b_id")
    ):
        found[(a, b)] = "label"
    for a, b in DoNotMatch.objects.filter(
        a_id__in=member_ids, b_id__in=member_ids, revoked_at__isnull=True
    ).values_list("a_id", "b_id"):
        found.setdefault((a, b), "do-not-match")
    if not found:
        return []
    edges = group_pair_edges(group=group, member_ids=member_ids)
    members = set(member_ids)
    out = []
    for (a, b), source in sorted(found.items())[:10]:
        cut, side = min_cut(edges, a, b)
        source_side = side & members
        other_side = members - source_side
        # Move the side without the representative (else the smaller one).
        if group.representative_id in source_side:
            move = other_side
        elif group.representative_id in other_side:
            move = source_side
        else:
            move = min(source_side, other_side, key=len)
        out.append(Conflict(a, b, source, sorted(cut), sorted(move)))
    return out
