"""Review desk services: labels (append-only: a relabel supersedes), claims, splits and
representatives (each one a recorded decision). Every write here appends; nothing is edited
in place or deleted except group memberships, which are relations recorded before and after
in a Decision."""

from __future__ import annotations

from datetime import timedelta
from itertools import combinations
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from dedup_site.transactions import conflict_retry
from ingest.candidates import (
    group_facts_set,
    policy_candidates,
    representative_by_rule,
)
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    DoNotMatch,
    GroupMember,
)
from reviews import selectors
from reviews.core.words import Said, gettext_noop
from reviews.models import (
    Adjudication,
    Claim,
    Decision,
    Label,
    ReviewerPreference,
    label_subject,
    label_subject_lock,
)
from reviews.queue.pair_states import pair_states_refresh


class ReviewError(ValueError):
    """A request the rules refuse (shown to the editor as a form error)."""


class GroupConflict(ReviewError):
    """Optimistic versioning: the group changed since the editor loaded it (another
    decision won). Nothing is applied; the attempt is recorded by reviews.decisions."""

    def __init__(self, group: CandidateGroup, expected_version: int) -> None:
        self.group = group
        self.expected_version = expected_version
        super().__init__(
            f"Conflict: group {group.pk} changed while you were looking at it (version "
            f"{expected_version} → {group.version}). Nothing was applied; here is its "
            "current state."
        )


def check_version(group: CandidateGroup, expected_version: int | None) -> None:
    # Called under select_for_update: the row read is the latest committed one.
    if expected_version is not None and group.version != expected_version:
        raise GroupConflict(group, expected_version)


def pair_guards(method_id: int, left: set[int], right: set[int]) -> dict[str, Any]:
    """The guards of the pairs between two sets of documents, as they are now (a
    decision stores them: "guards at the time")."""
    rows = CandidatePair.objects.filter(
        Q(a_id__in=left, b_id__in=right) | Q(a_id__in=right, b_id__in=left), method=method_id
    ).order_by("distance", "id")[:50]
    pairs: list[dict[str, Any]] = [
        {"pair": p.pk, "a": p.a_id, "b": p.b_id, "distance": p.distance, "fired": p.guard_flags()}
        for p in rows
    ]
    return {"fired": sorted({f for p in pairs for f in p["fired"]}), "pairs": pairs}


def actor_for(user: User) -> str:
    return f"person:{user.get_username()}"


# --- labels ------------------------------------------------------------------------


@conflict_retry
def label_record(
    *,
    pair: CandidatePair,
    editor: User,
    verdict: str,
    reason_code: str,
    reason: str,
    region: str,
    purpose: str = Label.Purpose.REVIEW,
) -> Label:
    """Append a label stamped with the pair's method and the extractor version; the
    editor's previous label on the same documents (on this pair or another method's) is
    superseded, never edited. A "distinct" label also records a do-not-match
    constraint, so workers never group the two again."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    label_subject_lock(label_subject(pair.a_id, pair.b_id))
    label = Label.objects.create(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code=reason_code,
        reason=reason.strip(),
        region=region,
        purpose=purpose,
        method_key=pair.method.key,
        extractor_version=EXTRACTOR_VERSION,
    )
    superseded = supersede_previous(label)
    if verdict == Label.Verdict.DISTINCT:
        DoNotMatch.objects.get_or_create(
            a_id=min(pair.a_id, pair.b_id),
            b_id=max(pair.a_id, pair.b_id),
            revoked_at=None,
            defaults={
                "source": "label",
                "reason": f"{reason_code}: {reason.strip()}"[:2000],
                "actor": actor_for(editor),
            },
        )
    claims_release(editor=editor, pair=pair)
    pair_states_refresh(pair_ids=sorted({pair.pk, *superseded}))
    return label


def supersede_previous(label: Label) -> list[int]:
    """Point the editor's older current labels on the label's subject at `label` (the
    caller holds the subject's lock, taken before `label` was inserted, so every one of
    them is older). Returns the pairs they were on."""
    stale = Label.objects.of_subject(label.subject).filter(
        editor_id=label.editor_id, superseded_by=None, pk__lt=label.pk
    )
    pairs = sorted(set(stale.values_list("pair_id", flat=True)))
    stale.update(superseded_by=label)
    return pairs


@conflict_retry
def label_undo(*, editor: User, pair: CandidatePair | None = None) -> Label | None:
    """Withdraw the editor's last current label (on `pair`, or anywhere): a retraction is
    appended and supersedes it. When it was the pair's last current "distinct" label,
    the do-not-match that label wrote is revoked (the row stays, marked with the
    retraction), so an accidental "distinct" does not keep the documents apart for
    ever. Returns the label withdrawn."""
    qs = selectors.current_labels().filter(editor=editor).select_related("pair")
    if pair is not None:
        subject = label_subject(pair.a_id, pair.b_id)
        label_subject_lock(subject)
        last = qs.filter(subject.q()).first()
    else:
        last = qs.order_by("-created_at", "-id").first()
        if last is None:
            return None
        label_subject_lock(last.subject)
        # Read again under the lock: another tab may have superseded it meanwhile.
        last = qs.filter(last.subject.q()).first()
    if last is None:
        return None
    undo = Label.objects.create(
        pair=last.pair,
        editor=editor,
        verdict=last.verdict,
        reason_code=last.reason_code,
        reason=f"undo of label {last.pk}",
        region=last.region,
        purpose=last.purpose,
        method_key=last.method_key,
        extractor_version=last.extractor_version,
        retraction=True,
    )
    superseded = supersede_previous(undo)
    if last.verdict == Label.Verdict.DISTINCT:
        still_distinct = (
            selectors.current_labels()
            .filter(last.subject.q(), verdict=Label.Verdict.DISTINCT, retraction=False)
            .exists()
        )
        if not still_distinct:
            DoNotMatch.objects.filter(
                a_id=min(last.pair.a_id, last.pair.b_id),
                b_id=max(last.pair.a_id, last.pair.b_id),
                source="label",
                revoked_at__isnull=True,
            ).update(revoked_at=timezone.now(), revoked_by=f"label:{undo.pk}")
    pair_states_refresh(pair_ids=sorted({last.pair_id, *superseded}))
    return last


@conflict_retry
def pair_adjudicate(
    *, pair: CandidatePair, adjudicator: User, verdict: str, reason_code: str, reason: str
) -> Adjudication:
    """Give a disputed pair its final label. The editors' labels stay (the history keeps
    every one); the pair leaves the disputed queue and calibration counts this verdict."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    # The labels of the two documents, whichever method's pair they were given on.
    subject = label_subject(pair.a_id, pair.b_id)
    current = list(selectors.current_labels().filter(subject.q()).values_list("id", "verdict"))
    if len({v for _, v in current}) < 2 and not selectors.subject_adjudications(pair).exists():
        raise ReviewError(Said(gettext_noop("only a disputed pair is adjudicated")))
    adjudication = Adjudication.objects.create(
        pair=pair,
        adjudicator=adjudicator,
        verdict=verdict,
        reason_code=reason_code,
        reason=reason.strip(),
        labels_seen=sorted(i for i, _ in current),
    )
    claims_release(editor=adjudicator, pair=pair)
    pair_states_refresh(pair_ids=[pair.pk])
    return adjudication


# --- claims ------------------------------------------------------------------------


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
    return Exists(
        selectors.active_claims().filter(**{field: OuterRef("pk")}).exclude(editor=editor)
    )


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
        item = qs.exclude(pk__in=seen).select_for_update(skip_locked=True, of=("self",)).first()
        if item is None:
            return None
        # A fresh statement sees claims committed after the first query's snapshot.
        if selectors.active_claims().filter(**{field: item}).exclude(editor=editor).exists():
            seen.add(item.pk)
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
    filters: selectors.QueueFilters | None = None,
    skip_pairs: set[int] | None = None,
    skip_groups: set[int] | None = None,
) -> Claim | None:
    """Hand the editor the next item of the queue and lease it for
    REVIEW_LEASE_MINUTES. Chained, oversized or flagged groups come first, then pairs
    (uncertain first), then the other groups. The editor's earlier claims end; an
    expired claim of anyone returns its item to the queue."""
    filters = filters or selectors.QueueFilters()
    claims_release(editor=editor)
    kind = filters.kind
    if kind in ("", "group"):
        urgent = selectors.queue_groups(filters=filters).filter(
            Q(chained=True) | Q(oversized=True) | Q(needs_review=True)
        )
        if claim := _claim_first(editor, Claim.Kind.GROUP, urgent, skip_groups or set()):
            return claim
    if kind in ("", "pair"):
        pairs = selectors.queue_pairs(filters=filters)
        if filters.status not in ASKED_FOR_LABELLED:
            # An editor's own up-to-date label settles the pair for them: a disputed
            # pair waits for someone else (or an adjudicator), never loops back.
            pairs = pairs.exclude(Exists(selectors.labels_settled_by(editor=editor)))
        if claim := _claim_first(editor, Claim.Kind.PAIR, pairs, skip_pairs or set()):
            return claim
    if kind in ("", "group"):
        groups = selectors.queue_groups(filters=filters)
        return _claim_first(editor, Claim.Kind.GROUP, groups, skip_groups or set())
    return None


# --- preferences --------------------------------------------------------------------


def preference_set(*, user: User, blind_mode: bool) -> ReviewerPreference:
    pref, _ = ReviewerPreference.objects.update_or_create(
        user=user, defaults={"blind_mode": blind_mode}
    )
    return pref


def preference_locale_set(*, user: User, language: str, time_zone: str) -> ReviewerPreference:
    """The editor's language and time zone for the desk; blank keeps the default (the
    browser's language, UTC). Values outside LANGUAGES / DESK_TIME_ZONES are refused."""
    if language and language not in {code for code, _ in settings.LANGUAGES}:
        raise ValueError(f"unknown language {language!r}")
    if time_zone and time_zone not in settings.DESK_TIME_ZONES:
        raise ValueError(f"unknown time zone {time_zone!r}")
    pref, _ = ReviewerPreference.objects.update_or_create(
        user=user, defaults={"language": language, "time_zone": time_zone}
    )
    return pref


# --- groups -------------------------------------------------------------------------


def decision_record(
    action: str,
    group: CandidateGroup,
    *,
    document_ids: list[int],
    actor: str,
    reason_code: str,
    reason: str,
    before: dict[str, Any],
    after: dict[str, Any],
    distance: int | None = None,
    guards: dict[str, Any] | None = None,
    new_group: CandidateGroup | None = None,
    reverts: Decision | None = None,
    method_key: str | None = None,
) -> Decision:
    """The one way a decision goes on the record: what was done to which documents of
    which group, by whom and why, the group's state before and after, and the version it
    left the group at. `method_key` defaults to the group's method."""
    return Decision.objects.create(
        action=action,
        group=group,
        new_group=new_group,
        reverts=reverts,
        document_ids=document_ids,
        method_key=method_key or group.method.key,
        distance=distance,
        guards=guards if guards is not None else {},
        reason_code=reason_code,
        reason=reason,
        actor=actor,
        membership_before=before,
        membership_after=after,
        group_version=group.version,
    )


def group_membership(group: CandidateGroup) -> dict[str, Any]:
    return {
        "group": group.pk,
        "members": sorted(
            GroupMember.objects.filter(group=group).values_list("document_id", flat=True)
        ),
        "representative": group.representative_id,
        "representative_locked": group.representative_locked,
        "representative_by": group.representative_by,
        "representative_reason": group.representative_reason,
        "version": group.version,
    }


def group_facts(group: CandidateGroup, ids: list[int]) -> None:
    """The group's facts after a person's change (ingest.candidates.group_facts_set)."""
    group_facts_set(group, ids)


def representative_suggest(group: CandidateGroup, ids: list[int]) -> None:
    """The rule's representative, unless a person's choice is still a member."""
    if group.representative_locked and group.representative_id in ids:
        return
    representative_by_rule(group, policy_candidates(ids))
    group.representative_locked = False


def max_distance(method_id: int, left: set[int], right: set[int]) -> int | None:
    distances = CandidatePair.objects.filter(
        Q(a_id__in=left, b_id__in=right) | Q(a_id__in=right, b_id__in=left), method=method_id
    ).values_list("distance", flat=True)
    return max(distances, default=None)


@transaction.atomic
def group_split(
    *,
    group: CandidateGroup,
    document_ids: list[int],
    editor: User,
    reason_code: str,
    reason: str,
    detach: bool = False,
    expected_version: int | None = None,
) -> Decision:
    """Move the selected members to a new group (or, with `detach` or a single
    document, out of any group). Writes the decision and a do-not-match constraint
    between every moved and every remaining member (and between detached singletons),
    so workers never regroup them."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    group = CandidateGroup.objects.select_for_update().get(pk=group.pk)
    check_version(group, expected_version)
    if group.dissolved:
        raise ReviewError(Said(gettext_noop("the group is dissolved")))
    before = group_membership(group)
    members: set[int] = set(before["members"])
    moved = set(document_ids) & members
    if set(document_ids) - members:
        raise ReviewError(Said(gettext_noop("only members of the group can be split off")))
    remaining = members - moved
    if not moved or not remaining:
        raise ReviewError(Said(gettext_noop("select some members, but not all of them")))
    actor = actor_for(editor)
    detach = detach or len(moved) == 1

    new_group = None
    if detach:
        GroupMember.objects.filter(group=group, document_id__in=moved).delete()
    else:
        new_group = CandidateGroup.objects.create(
            method=group.method,
            kind=group.kind,
            rule=group.rule,
            rule_params={**group.rule_params, "split_from": group.pk},
        )
        GroupMember.objects.filter(group=group, document_id__in=moved).update(
            group=new_group, added_by=actor
        )
        ids = sorted(moved)
        group_facts(new_group, ids)
        representative_suggest(new_group, ids)
        new_group.save()

    constraints = {(min(x, y), max(x, y)) for x in moved for y in remaining}
    if detach:
        constraints |= {(min(x, y), max(x, y)) for x, y in combinations(moved, 2)}
    DoNotMatch.objects.bulk_create(
        [
            DoNotMatch(a_id=a, b_id=b, source="split", reason=reason.strip(), actor=actor)
            for a, b in sorted(constraints)
        ],
        ignore_conflicts=True,
    )

    left = sorted(remaining)
    if len(left) < 2:
        GroupMember.objects.filter(group=group).delete()
        group.dissolved = True
        group.size = 0
    else:
        group_facts(group, left)
        representative_suggest(group, left)
    group.needs_review = False
    group.review_note = f"split by {actor}"
    group.version += 1
    group.save()

    after = group_membership(group)
    if new_group is not None:
        after["new_group"] = group_membership(new_group)
    else:
        after["detached"] = sorted(moved)
    return decision_record(
        Decision.Action.DETACH if detach else Decision.Action.SPLIT,
        group,
        new_group=new_group,
        document_ids=sorted(moved),
        distance=max_distance(group.method_id, moved, remaining),
        guards=pair_guards(group.method_id, moved, remaining),
        reason_code=reason_code,
        reason=reason.strip(),
        actor=actor,
        before=before,
        after=after,
    )


@transaction.atomic
def group_representative_set(
    *,
    group: CandidateGroup,
    document_id: int,
    editor: User,
    reason_code: str,
    reason: str,
    expected_version: int | None = None,
) -> Decision:
    """A person chooses the representative: locked (workers never change it), on the
    record with the policy preset and the free-text reason."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    group = CandidateGroup.objects.select_for_update().get(pk=group.pk)
    check_version(group, expected_version)
    if not GroupMember.objects.filter(group=group, document_id=document_id).exists():
        raise ReviewError(Said(gettext_noop("the representative must be a member of the group")))
    before = group_membership(group)
    old = group.representative_id
    group.representative_id = document_id
    group.representative_locked = True
    group.representative_by = actor_for(editor)
    group.representative_reason = f"{reason_code}: {reason.strip()}"
    group.needs_review = False
    group.review_note = ""
    group.version += 1
    group.save()
    distance = None
    if old and old != document_id:
        distance = max_distance(group.method_id, {old}, {document_id})
    return decision_record(
        Decision.Action.SET_REPRESENTATIVE,
        group,
        document_ids=[document_id],
        distance=distance,
        reason_code=reason_code,
        reason=reason.strip(),
        actor=actor_for(editor),
        before=before,
        after=group_membership(group),
    )
