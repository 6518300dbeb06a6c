"""The queue's counts per filter value and an editor's progress, from the tallies the
queue keeps (reviews.queue.queue_tally) rather than from every pair."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Exists
from django.utils import timezone

from ingest.core import channels
from reviews.labels.label_reads import labels_settled_by
from reviews.models import Label
from reviews.queue.group_queue import GroupFacts, group_holds, group_rows_folded, queue_group_facts
from reviews.queue.pair_queue import (
    pair_guard_holds,
    pair_rows_in_scope,
    pair_status_holds,
    queue_pairs,
)
from reviews.queue.queue_filters import GUARDS, STATUSES, QueueFilters
from reviews.queue.queue_tally import pair_count_rows, queue_sync


def queue_counts(
    *,
    filters: QueueFilters,
    disputed: Collection[int] | None = None,
    sync: bool = True,
    groups_in_scope: list[GroupFacts] | None = None,
) -> dict[str, dict[str, int]]:
    """Counts per filter value, each with the other filters applied: a few queries
    whatever the filters and the number of pairs and labels, after the review states are
    brought up to date (`sync=False`: the caller just did). The pairs are counted from
    the tallies the queue keeps (reviews.queue.queue_tally), but under a site filter, which
    they do not count by; the groups in one statement (`groups_in_scope`: its rows, when
    the caller read them for its list of groups too)."""
    if sync:
        queue_sync()
    if filters.site:
        pair_rows = pair_rows_in_scope(filters)
    else:
        pair_rows = pair_count_rows(
            method=filters.method,
            distance_min=filters.distance_min,
            distance_max=filters.distance_max,
        )
    if groups_in_scope is None:
        groups_in_scope = queue_group_facts(filters=filters, disputed=disputed)
    group_rows = group_rows_folded(groups_in_scope)

    # Each row's facts read once (the facets below go over the rows about twenty times).
    prows = [
        (
            r["n"],
            r["doc_type"],
            tuple(bool(r[g]) for g in GUARDS),
            r["channels"],
            bool(r["is_labeled"]),
            bool(r["is_disputed"]),
            bool(r["is_stale"]),
        )
        for r in pair_rows
    ]

    def pairs(f: QueueFilters) -> int:
        bit = channels.BITS.get(f.channel, 0)
        return sum(
            n
            for n, doc_type, flags, bits, labeled, disputed, stale in prows
            if (not f.doc_type or doc_type == f.doc_type)
            and pair_guard_holds(f.guard, flags)
            and (not f.channel or bool(bits & bit))
            and pair_status_holds(f.status, labeled, disputed, stale)
        )

    def groups(f: QueueFilters) -> int:
        return sum(r["n"] for r in group_rows if group_holds(f, r))

    def both(f: QueueFilters) -> int:
        return (pairs(f) if f.kind in ("", "pair") else 0) + (
            groups(f) if f.kind in ("", "group") else 0
        )

    return {
        "status": {s: both(filters.replace(status=s)) for s in ("", *STATUSES)},
        "kind": {
            "": both(filters.replace(kind="")),
            "pair": pairs(filters),
            "group": groups(filters),
        },
        "doc_type": {t: both(filters.replace(doc_type=t)) for t in ("", *settings.DOC_TYPES)},
        "guard": {g: both(filters.replace(guard=g)) for g in ("", "any", *GUARDS)},
        "channel": {c: both(filters.replace(channel=c)) for c in ("", *channels.ACTIVE)},
    }


@dataclass(frozen=True)
class Progress:
    done_today: int
    left: int


def progress_for(*, user: User, filters: QueueFilters) -> Progress:
    """Labels the editor gave today (UTC) and the pairs left for them under `filters`
    (what Next can still serve them: not settled by their own label). The pairs in the
    queue are counted from its tallies (reviews.queue.queue_tally, as the queue's counts are),
    less the few of them the editor's own current labels settle, found from those
    labels; not by counting every pair (under a site filter, which the tallies do not
    count by, the pairs are counted)."""
    start = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    done = Label.objects.filter(editor=user, retraction=False, created_at__gte=start).count()
    if filters.site:
        left = (
            queue_pairs(filters=filters)
            .exclude(Exists(labels_settled_by(editor=user)))
            .order_by()
            .count()
        )
        return Progress(done_today=done, left=left)
    queue_sync()
    rows = pair_count_rows(
        method=filters.method,
        distance_min=filters.distance_min,
        distance_max=filters.distance_max,
    )
    bit = channels.BITS.get(filters.channel, 0)
    queued = sum(
        r["n"]
        for r in rows
        if (not filters.doc_type or r["doc_type"] == filters.doc_type)
        and pair_guard_holds(filters.guard, tuple(bool(r[g]) for g in GUARDS))
        and (not filters.channel or bool(r["channels"] & bit))
        and pair_status_holds(filters.status, r["is_labeled"], r["is_disputed"], r["is_stale"])
    )
    # Read from the editor's labels (a semi-join the labels drive), not from the pairs.
    settled = (
        queue_pairs(filters=filters, sync=False, with_status=False)
        .filter(Exists(labels_settled_by(editor=user)))
        .order_by()
        .count()
    )
    return Progress(done_today=done, left=queued - settled)
