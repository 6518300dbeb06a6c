"""The deduplicated corpus is a view, never a deletion: nothing crawled is destroyed.

One record per live group (its representative stands for it) and one per document in
no group, each with its members' ids and URLs (provenance) and what made it: the
decision the group's state rests on, the latest decision on it, or the grouping rule.
`accepted_only`: a group no decision accepted at its current version (a person's merge,
split, representative choice or acceptance, or an auto_merge) is not collapsed: its members come
out as singletons, each naming the pending group.

Streamed: groups and memberships are read with .iterator() and joined in order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import groupby
from typing import Any

from django.db.models import OuterRef, Q, Subquery

from dedup_site.http import bounded_int
from ingest.channels.thresholds import active_method_key
from ingest.models import CandidateGroup, Document, FingerprintMethod, GroupMember
from reviews.core import csvstream
from reviews.models import Decision

CHUNK = 2000


def _latest(field: str) -> Subquery:
    return Subquery(
        Decision.objects.filter(Q(group=OuterRef("pk")) | Q(new_group=OuterRef("pk")))
        .exclude(action=Decision.Action.CONFLICT)
        .order_by("-id")
        .values(field)[:1]
    )


def _deciding(field: str) -> Subquery:
    return Subquery(
        Decision.objects.filter(group=OuterRef("pk"), group_version=OuterRef("version"))
        .exclude(action=Decision.Action.CONFLICT)
        .order_by("-id")
        .values(field)[:1]
    )


def _member(document_id: int, url: str, final_url: str) -> dict[str, object]:
    return {"document_id": document_id, "url": url, "final_url": final_url or None}


def canonical_records(
    *, method_key: str | None = None, accepted_only: bool = False, after: str | None = None
) -> Iterator[dict[str, object]]:
    """Yield canonical records, groups first (by id), then singletons (by id).
    `after` (a record id such as "group:12" or "document:40") resumes a stream."""
    method = FingerprintMethod.objects.filter(key=method_key or active_method_key()).first()
    after_kind, _, after_id = (after or "").partition(":")
    start = bounded_int(after_id, default=0)
    if method is not None and after_kind in ("", "group"):
        yield from _group_records(method, accepted_only, start if after_kind == "group" else 0)
        start = 0
    if after_kind in ("", "group", "document"):
        yield from _singletons(method, start)


def _group_records(
    method: FingerprintMethod, accepted_only: bool, start: int
) -> Iterator[dict[str, object]]:
    groups = (
        CandidateGroup.objects.filter(method=method, dissolved=False, pk__gt=start)
        .order_by("pk")
        .annotate(
            latest_id=_latest("id"),
            latest_action=_latest("action"),
            latest_actor=_latest("actor"),
            latest_at=_latest("created_at"),
            deciding_id=_deciding("id"),
            deciding_action=_deciding("action"),
            deciding_actor=_deciding("actor"),
            deciding_after=_deciding("membership_after"),
        )
        .values(
            "pk",
            "rule",
            "kind",
            "size",
            "diameter",
            "version",
            "representative_id",
            "representative_reason",
            "representative_by",
            "latest_id",
            "latest_action",
            "latest_actor",
            "latest_at",
            "deciding_id",
            "deciding_action",
            "deciding_actor",
            "deciding_after",
        )
        .iterator(chunk_size=CHUNK)
    )
    members = groupby(
        GroupMember.objects.filter(method=method, group__dissolved=False, group_id__gt=start)
        .order_by("group_id", "document_id")
        .values_list("group_id", "document_id", "document__url", "document__final_url")
        .iterator(chunk_size=CHUNK),
        key=lambda r: r[0],
    )
    pending = next(members, None)
    for g in groups:
        while pending is not None and pending[0] < g["pk"]:
            pending = next(members, None)
        rows = list(pending[1]) if pending is not None and pending[0] == g["pk"] else []
        by_doc = {r[1]: r for r in rows}
        after = g["deciding_after"]
        if isinstance(after, str):  # a backend that returns JSON text from a subquery
            after = json.loads(after)
        accepted = g["deciding_id"] is not None and bool((after or {}).get("accepted", True))
        if g["deciding_id"] is not None:
            made_by = {
                "decision_id": g["deciding_id"],
                "action": g["deciding_action"],
                "actor": g["deciding_actor"],
            }
        else:
            made_by = {"rule": f"rule:{g['rule']}", "decision_id": None}
        latest = (
            {
                "decision_id": g["latest_id"],
                "action": g["latest_action"],
                "actor": g["latest_actor"],
                "at": g["latest_at"].isoformat() if g["latest_at"] else None,
            }
            if g["latest_id"]
            else None
        )
        if accepted_only and not accepted:
            for _, d, url, final in rows:
                yield {
                    "id": f"document:{d}",
                    "kind": "singleton",
                    "representative": _member(d, url, final),
                    "members": [_member(d, url, final)],
                    "size": 1,
                    "pending_group": g["pk"],
                    "accepted": False,
                    "made_by": None,
                    "latest_decision": None,
                }
            continue
        rep = by_doc.get(g["representative_id"])
        yield {
            "id": f"group:{g['pk']}",
            "kind": "group",
            "group_kind": g["kind"],
            "representative": _member(rep[1], rep[2], rep[3]) if rep else None,
            "representative_reason": g["representative_reason"],
            "representative_by": g["representative_by"],
            "members": [_member(r[1], r[2], r[3]) for r in rows],
            "size": len(rows),
            "diameter": g["diameter"],
            "group_version": g["version"],
            "accepted": accepted,
            "made_by": made_by,
            "latest_decision": latest,
        }
        pending = next(members, None) if rows else pending


def _singletons(method: FingerprintMethod | None, start: int) -> Iterator[dict[str, object]]:
    docs = Document.objects.filter(pk__gt=start).order_by("pk")
    if method is not None:
        docs = docs.exclude(
            pk__in=GroupMember.objects.filter(method=method, group__dissolved=False).values(
                "document_id"
            )
        )
    for d, url, final in docs.values_list("pk", "url", "final_url").iterator(chunk_size=CHUNK):
        yield {
            "id": f"document:{d}",
            "kind": "singleton",
            "representative": _member(d, url, final),
            "members": [_member(d, url, final)],
            "size": 1,
            "accepted": True,
            "made_by": None,
            "latest_decision": None,
        }


# --- serializers -----------------------------------------------------------------------

CSV_FIELDS = [
    "id",
    "kind",
    "representative_id",
    "representative_url",
    "size",
    "member_ids",
    "member_urls",
    "accepted",
    "made_by",
    "decision_id",
]


def as_jsonl(records: Iterator[dict[str, object]]) -> Iterator[str]:
    for r in records:
        yield json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"


def as_csv(records: Iterator[dict[str, Any]], *, bom: bool = False) -> Iterator[str]:
    """The records as CSV lines; a crawled URL is data, never a spreadsheet formula. With
    `bom`, the UTF-8 byte order mark a spreadsheet needs first (csvstream.BOM)."""
    lines = csvstream.csv_lines(CSV_FIELDS, (_csv_row(r) for r in records))
    return csvstream.with_bom(lines) if bom else lines


def _csv_row(r: dict[str, Any]) -> list[object]:
    rep = r["representative"] or {}
    made_by = r["made_by"] or {}
    members: list[dict[str, object]] = r["members"]
    row = [
        r["id"],
        r["kind"],
        rep.get("document_id", ""),
        rep.get("url", ""),
        r["size"],
        " ".join(str(m["document_id"]) for m in members),
        " ".join(str(m["url"]) for m in members),
        r["accepted"],
        made_by.get("actor") or made_by.get("rule") or "",
        made_by.get("decision_id") or "",
    ]
    return row
