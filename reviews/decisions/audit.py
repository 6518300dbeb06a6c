"""Audit selectors: the decision log read for auditors. Reads only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.shortcuts import get_object_or_404
from django.utils import timezone

from ingest.models import CandidateGroup, Document, GroupMember
from reviews.core import csvstream
from reviews.models import Decision, MergeProposal

A = Decision.Action


@dataclass
class AuditSummary:
    since: date
    actions: list[str]
    per_day: list[tuple[date, dict[str, int], int]]
    per_actor: list[tuple[str, dict[str, int], int]]
    restores: list[Decision] = field(default_factory=list)
    conflicts: int = 0
    total: int = 0


def audit_summary(*, days: int = 30, restores_max: int = 100) -> AuditSummary:
    since = timezone.localdate() - timedelta(days=days - 1)
    qs = Decision.objects.filter(created_at__date__gte=since)
    actions = [a.value for a in A]
    by_day: dict[date, dict[str, int]] = defaultdict(dict)
    for row in (
        qs.annotate(day=TruncDate("created_at"))
        .values("day", "action")
        .annotate(n=Count("id"))
        .order_by()
    ):
        by_day[row["day"]][row["action"]] = row["n"]
    by_actor: dict[str, dict[str, int]] = defaultdict(dict)
    for actor, action, n in qs.values_list("actor", "action").annotate(n=Count("id")).order_by():
        by_actor[actor][action] = n
    restores = list(
        Decision.objects.filter(action=A.RESTORE)
        .select_related("reverts")
        .order_by("-created_at", "-id")[:restores_max]
    )
    return AuditSummary(
        since=since,
        actions=actions,
        per_day=sorted(
            ((d, c, sum(c.values())) for d, c in by_day.items()), key=lambda r: r[0], reverse=True
        ),
        per_actor=sorted(
            ((a, c, sum(c.values())) for a, c in by_actor.items()), key=lambda r: (-r[2], r[0])
        ),
        restores=restores,
        conflicts=qs.filter(action=A.CONFLICT).count(),
        total=qs.count(),
    )


def restored_ids(decisions: Iterable[Decision]) -> set[int]:
    ids = [d.pk for d in decisions]
    return set(Decision.objects.filter(reverts_id__in=ids).values_list("reverts_id", flat=True))


def _mentions(d: Decision, ids: set[int]) -> bool:
    seen = set(d.document_ids or [])
    for state in (d.membership_before, d.membership_after):
        if isinstance(state, dict):
            seen |= set(state.get("members") or [])
    return bool(seen & ids)


def decisions_touching(qs: QuerySet[Decision], document_ids: set[int]) -> QuerySet[Decision]:
    """Decisions that concern these documents: moved or chose them, or held them in the
    group before or after. Narrowed in SQL (their groups, now or in the record's text),
    then checked exactly."""
    if not document_ids:
        return qs.none()
    groups = set(
        GroupMember.objects.filter(document_id__in=document_ids).values_list("group_id", flat=True)
    )
    text = Q()
    for d in list(document_ids)[:50]:
        text |= Q(document_ids__icontains=str(d)) | Q(membership_before__icontains=str(d))
    rough = qs.filter(Q(group_id__in=groups) | Q(new_group_id__in=groups) | text)
    keep = [d.pk for d in rough[:5000] if _mentions(d, document_ids)]
    return qs.filter(pk__in=keep)


def documents_matching(term: str) -> set[int]:
    """A document id, or a URL fragment (at most 500 documents)."""
    term = term.strip()
    if term.isdigit():
        return {int(term)}
    return set(
        Document.objects.filter(Q(url__icontains=term) | Q(final_url__icontains=term))
        .order_by("pk")
        .values_list("pk", flat=True)[:500]
    )


CSV_FIELDS = [
    "id",
    "created_at",
    "action",
    "actor",
    "group_id",
    "new_group_id",
    "reverts_id",
    "document_ids",
    "method_key",
    "distance",
    "guards_fired",
    "reason_code",
    "reason",
    "members_before",
    "members_after",
    "group_version",
]


def decisions_csv(qs: QuerySet[Decision], *, bom: bool = False) -> Iterator[str]:
    """The rows as CSV lines (streamed). Cells that a spreadsheet would run as a
    formula are prefixed with an apostrophe. With `bom`, the UTF-8 byte order mark a
    spreadsheet needs first (csvstream.BOM)."""
    rows = (_csv_row(d) for d in qs.order_by("id").iterator(chunk_size=1000))
    lines = csvstream.csv_lines(CSV_FIELDS, rows)
    return csvstream.with_bom(lines) if bom else lines


def _csv_row(d: Decision) -> list[object]:
    before = d.membership_before if isinstance(d.membership_before, dict) else {}
    after = d.membership_after if isinstance(d.membership_after, dict) else {}
    row = [
        d.pk,
        d.created_at.isoformat(),
        d.action,
        d.actor,
        d.group_id,
        d.new_group_id or "",
        d.reverts_id or "",
        " ".join(map(str, d.document_ids or [])),
        d.method_key,
        "" if d.distance is None else d.distance,
        " ".join((d.guards or {}).get("fired", [])),
        d.reason_code,
        d.reason,
        " ".join(map(str, before.get("members") or [])),
        " ".join(map(str, after.get("members") or [])),
        d.group_version,
    ]
    return row


# --- reads for the decision pages ------------------------------------------------------


def decision_get(*, decision_id: int) -> Decision:
    return get_object_or_404(Decision, pk=decision_id)


def group_find(*, group_id: int) -> CandidateGroup | None:
    return CandidateGroup.objects.filter(pk=group_id).first()


def decisions_recent(*, limit: int = 50) -> QuerySet[Decision]:
    return Decision.objects.select_related("reverts").order_by("-created_at", "-id")[:limit]


def proposals_pending() -> QuerySet[MergeProposal]:
    return MergeProposal.objects.filter(status=MergeProposal.Status.PENDING).select_related(
        "group", "group__representative"
    )


def proposals_decided(*, limit: int = 50) -> QuerySet[MergeProposal]:
    return MergeProposal.objects.exclude(status=MergeProposal.Status.PENDING).order_by(
        "-decided_at", "-id"
    )[:limit]
