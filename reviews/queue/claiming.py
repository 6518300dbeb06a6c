"""Claims: an editor's lease on the queue item they review (REVIEW_LEASE_MINUTES). Next
hands out the first free item under a lock, so two editors never get the same one; an
expired claim returns its item to the queue."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from dedup_site.transactions import conflict_retry
from ingest.models import CandidateGroup, CandidatePair
from reviews.labels import label_reads
from reviews.models import Claim
from reviews.queue import group_queue, pair_queue, queue_filters


def active_claims() -> QuerySet[Claim]:
    return Claim.objects.filter(released_at__isnull=True, expires_at__gt=timezone.now())


def _lease() -> timedelta:
    return timedelta(minutes=settings.REVIEW_LEASE_MINUTES)


def claims_release(
    *, editor: User, pair: CandidatePair | None = None, group: CandidateGroup | None = None
) -> int:
    qs = Claim.objects.filter(editor=editor, released_at__isnull=True)
    if pair is not None:
        qs = qs.filter(pair=pair)
    if group is not None:
        qs = qs.filter(group=group)
    return qs.update(released_at=timezone.now())


def _claimed_by_others(editor: User, kind: str) -> Exists:
    field = "pair" if kind == Claim.Kind.PAIR else "group"
    return Exists(active_claims().filter(**{field: OuterRef("id")}).exclude(editor=editor))


def _claim_first(
    editor: User,
    kind: str,
    qs: QuerySet[Any],
    skip: set[int],
) -> Claim | None:
    """Lock the first free item (SKIP LOCKED: another editor's transaction holds its
    candidate), re-check its claims under the lock, then write the claim. Two editors
    pressing Next at once never get the same item."""
    field = "pair" if kind == Claim.Kind.PAIR else "group"
    qs = qs.filter(~_claimed_by_others(editor, kind))
    seen = set(skip)
    for _ in range(50):
        item = qs.exclude(id__in=seen).select_for_update(skip_locked=True, of=("self",)).first()
        if item is None:
            return None
        # A fresh statement sees claims committed after the first query's snapshot.
        if active_claims().filter(**{field: item}).exclude(editor=editor).exists():
            seen.add(item.id)
            continue
        return Claim.objects.create(
            kind=kind, editor=editor, expires_at=timezone.now() + _lease(), **{field: item}
        )
    return None


# Queue filters under which an editor asks for pairs they labelled themselves.
ASKED_FOR_LABELLED = ("labeled", "all")


@conflict_retry
def claim_next(
    *,
    editor: User,
    filters: queue_filters.QueueFilters | None = None,
    skip_pairs: set[int] | None = None,
    skip_groups: set[int] | None = None,
) -> Claim | None:
    """Hand the editor the next item of the queue and lease it for
    REVIEW_LEASE_MINUTES. Chained, oversized or flagged groups come first, then pairs
    (uncertain first), then the other groups. The editor's earlier claims end; an
    expired claim of anyone returns its item to the queue."""
    filters = filters or queue_filters.QueueFilters()
    claims_release(editor=editor)
    kind = filters.kind
    if kind in ("", "group"):
        urgent = group_queue.queue_groups(filters=filters).filter(
            Q(chained=True) | Q(oversized=True) | Q(needs_review=True)
        )
        if claim := _claim_first(editor, Claim.Kind.GROUP, urgent, skip_groups or set()):
            return claim
    if kind in ("", "pair"):
        pairs = pair_queue.queue_pairs(filters=filters)
        if filters.status not in ASKED_FOR_LABELLED:
            # An editor's own up-to-date label settles the pair for them: a disputed
            # pair waits for someone else (or an adjudicator), never loops back.
            pairs = pairs.exclude(Exists(label_reads.labels_settled_by(editor=editor)))
        if claim := _claim_first(editor, Claim.Kind.PAIR, pairs, skip_pairs or set()):
            return claim
    if kind in ("", "group"):
        groups = group_queue.queue_groups(filters=filters)
        return _claim_first(editor, Claim.Kind.GROUP, groups, skip_groups or set())
    return None
