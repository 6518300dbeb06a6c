"""Merge, restore and conflicts: a merge deletes nothing and every merge is on the record.

Every function here appends a Decision; no decision is ever edited. What the words mean:

- merge (a person): documents, or a whole other group, join a group. Their memberships
  move (relations, nothing deleted); do-not-match rows between the joined documents are
  revoked, not deleted. A member a person put in a group is held there by the workers.
- restore: a new decision that puts the group back to the reverted decision's
  membership_before (and revokes the do-not-match rows a split wrote, or re-creates the
  ones a merge revoked). A restore itself is not restored: decide again instead.
- conflict: an attempt that lost a race on CandidateGroup.version. It is recorded
  (actor, what was attempted, the version it saw, the state it lost to) and not applied.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from ingest.models import CandidateGroup, Document, DoNotMatch, GroupMember, memberships_lock
from reviews.core.words import Said, gettext_noop
from reviews.decisions.decision_records import (
    ACCEPTING,
    GroupConflict,
    check_version,
    decision_record,
    group_facts,
    group_membership,
    group_state,
    max_distance,
    pair_guards,
    representative_suggest,
)
from reviews.models import Decision
from reviews.rules import ReviewError, actor_for


def _refresh(group: CandidateGroup, *, representative: int | None = None) -> None:
    """Recompute a group's outputs from its members: size, kind, diameter, flags,
    representative (kept when locked, or `representative` when given); fewer than two
    members dissolves it (memberships removed, the group row kept)."""
    ids = sorted(GroupMember.objects.filter(group=group).values_list("document_id", flat=True))
    if len(ids) < 2:
        GroupMember.objects.filter(group=group).delete()
        group.dissolved = True
        group.size = 0
    else:
        group.dissolved = False
        group_facts(group, ids)
        if representative is not None and representative in ids:
            group.representative_id = representative
        else:
            representative_suggest(group, ids)
    group.version += 1
    group.save()


def _move(
    doc_ids: Iterable[int], target: CandidateGroup | None, method_id: int, actor: str
) -> set[int]:
    """Move documents into `target` (or out of any group); returns the groups they left.
    Under the method's grouping lock: one group per method and document."""
    memberships_lock(method_id)
    left: set[int] = set()
    for d in sorted(set(doc_ids)):
        m = GroupMember.objects.filter(method_id=method_id, document_id=d).first()
        if m is not None and target is not None and m.group_id == target.pk:
            continue
        if m is not None:
            left.add(m.group_id)
            if target is None:
                m.delete()
            else:
                GroupMember.objects.filter(pk=m.pk).update(group=target, added_by=actor)
        elif target is not None:
            GroupMember.objects.create(
                group=target, document_id=d, method_id=method_id, added_by=actor
            )
    return left


def _active_dnm_between(ids: set[int], touching: set[int]) -> list[DoNotMatch]:
    return [
        r
        for r in DoNotMatch.objects.filter(a_id__in=ids, b_id__in=ids, revoked_at__isnull=True)
        if r.a_id in touching or r.b_id in touching
    ]


@transaction.atomic
def group_merge(
    *,
    group: CandidateGroup,
    editor: User,
    reason_code: str,
    reason: str,
    other_group: CandidateGroup | None = None,
    document_ids: Iterable[int] = (),
    expected_version: int | None = None,
) -> Decision:
    """A person merges another group, or single documents, into `group`."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    # The grouping lock before the group's row, in the grouping's own order.
    memberships_lock(group.method_id)
    group = CandidateGroup.objects.select_for_update().get(pk=group.pk)
    check_version(group, expected_version)
    if group.dissolved:
        raise ReviewError(Said(gettext_noop("the group is dissolved: merge into a live group")))
    method_id = group.method_id
    docs = set(document_ids)
    if other_group is not None:
        other_group = CandidateGroup.objects.select_for_update().get(pk=other_group.pk)
        if other_group.pk == group.pk:
            raise ReviewError(Said(gettext_noop("a group cannot be merged into itself")))
        if other_group.method_id != method_id:
            raise ReviewError(Said(gettext_noop("groups of different methods cannot be merged")))
        docs |= set(
            GroupMember.objects.filter(group=other_group).values_list("document_id", flat=True)
        )
    if len(Document.objects.filter(pk__in=docs)) != len(docs):
        raise ReviewError(Said(gettext_noop("unknown document id")))
    members = set(GroupMember.objects.filter(group=group).values_list("document_id", flat=True))
    docs -= members
    if not docs:
        raise ReviewError(
            Said(gettext_noop("nothing to merge: give another group or documents outside this one"))
        )
    actor = actor_for(editor)
    origin = dict(
        GroupMember.objects.filter(method_id=method_id, document_id__in=docs).values_list(
            "document_id", "group_id"
        )
    )
    sources = CandidateGroup.objects.filter(pk__in=set(origin.values())).order_by("pk")
    before = {
        **group_state(group),
        "origin": {str(d): origin.get(d) for d in sorted(docs)},
        "sources": {str(g.pk): group_state(g) for g in sources},
    }
    # A person's merge overrides the do-not-match rows between what it joins.
    revoked = _active_dnm_between(members | docs, docs)
    now = timezone.now()
    DoNotMatch.objects.filter(pk__in=[r.pk for r in revoked], revoked_at=None).update(
        revoked_at=now, revoked_by=f"merge by {actor}"
    )
    left = _move(docs, group, method_id, actor)
    for g in CandidateGroup.objects.filter(pk__in=left - {group.pk}).order_by("pk"):
        _refresh(g)
    _refresh(group)
    group.needs_review = False
    group.review_note = f"merged by {actor}"
    group.save()
    after = {
        **group_state(group),
        "accepted": True,
        "sources": {
            str(g.pk): group_membership(g) for g in CandidateGroup.objects.filter(pk__in=left)
        },
        "revoked_do_not_match": [r.pk for r in revoked],
    }
    return decision_record(
        Decision.Action.MERGE,
        group,
        new_group=other_group,
        document_ids=sorted(docs),
        distance=max_distance(method_id, members, docs),
        guards=pair_guards(method_id, members, docs),
        reason_code=reason_code,
        reason=reason.strip(),
        actor=actor,
        before=before,
        after=after,
    )


def restorable(decision: Decision) -> bool:
    return decision.action not in (Decision.Action.RESTORE, Decision.Action.CONFLICT)


@transaction.atomic
def decision_restore(
    *,
    decision: Decision,
    editor: User,
    reason: str,
    expected_version: int | None = None,
) -> Decision:
    """Revert a decision with a new one: membership and representative go back to the
    reverted decision's membership_before; outputs are recomputed."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    if not restorable(decision):
        raise ReviewError(
            Said(gettext_noop("a %(action)s decision cannot be restored"), action=decision.action)
        )
    memberships_lock(
        CandidateGroup.objects.values_list("method_id", flat=True).get(pk=decision.group_id)
    )
    group = CandidateGroup.objects.select_for_update().get(pk=decision.group_id)
    check_version(group, expected_version)
    if Decision.objects.filter(reverts=decision).exists():
        raise ReviewError(
            Said(gettext_noop("decision %(decision)s is already restored"), decision=decision.pk)
        )
    actor = actor_for(editor)
    method_id = group.method_id
    before = group_state(group)
    prior = decision.membership_before
    prior_rep = prior.get("representative")
    touched: set[int] = set()
    note = f"restore of decision {decision.pk} by {actor}"

    if decision.action in (Decision.Action.SPLIT, Decision.Action.DETACH):
        target = set(prior["members"])
        moved = set(decision.document_ids)
        touched |= _move(target, group, method_id, actor)
        rows = [
            r
            for r in _active_dnm_between(target, moved)
            if r.source == "split"
            and not ({r.a_id, r.b_id} <= moved and decision.action == Decision.Action.SPLIT)
        ]
        # A revocation is set once (the row is sealed after): skip one revoked meanwhile.
        DoNotMatch.objects.filter(pk__in=[r.pk for r in rows], revoked_at=None).update(
            revoked_at=timezone.now(), revoked_by=note
        )
    elif decision.action == Decision.Action.MERGE:
        origin: dict[str, int | None] = prior.get("origin", {})
        by_dest: dict[int | None, list[int]] = defaultdict(list)
        here = set(GroupMember.objects.filter(group=group).values_list("document_id", flat=True))
        for d in decision.document_ids:
            if d in here:
                by_dest[origin.get(str(d))].append(d)
        for dest_id, ids in by_dest.items():
            dest = (
                CandidateGroup.objects.select_for_update().get(pk=dest_id)
                if dest_id is not None
                else None
            )
            _move(ids, dest, method_id, actor)
            if dest is not None:
                touched.add(dest.pk)
        old = DoNotMatch.objects.filter(
            pk__in=decision.membership_after.get("revoked_do_not_match", [])
        )
        DoNotMatch.objects.bulk_create(
            [
                DoNotMatch(a_id=r.a_id, b_id=r.b_id, source=r.source, reason=r.reason, actor=actor)
                for r in old
            ],
            ignore_conflicts=True,
        )
    elif (
        decision.action == Decision.Action.SET_REPRESENTATIVE
        and not GroupMember.objects.filter(group=group, document_id=prior_rep).exists()
    ):
        raise ReviewError(
            Said(
                gettext_noop("document %(document)s is no longer a member of the group"),
                document=prior_rep,
            )
        )
    # auto_merge / accept: nothing moved; the restore withdraws the acceptance.

    for g in CandidateGroup.objects.filter(pk__in=touched - {group.pk}).order_by("pk"):
        sources = prior.get("sources", {})
        rep = (
            sources.get(str(g.pk), {}).get("representative") if isinstance(sources, dict) else None
        )
        _refresh(g, representative=rep)
    if decision.action not in ACCEPTING:
        _refresh(group, representative=prior_rep if isinstance(prior_rep, int) else None)
        if isinstance(prior_rep, int) and group.representative_id == prior_rep:
            _representative_restore(group, prior, decision)
    else:
        group.version += 1
    group.needs_review = False
    group.review_note = note
    group.save()
    after = {
        **group_membership(group),
        "accepted": decision.action not in ACCEPTING,
        "touched": sorted(touched - {group.pk}),
    }
    return decision_record(
        Decision.Action.RESTORE,
        group,
        reverts=decision,
        new_group=decision.new_group,
        document_ids=decision.document_ids,
        method_key=decision.method_key,
        distance=decision.distance,
        guards=decision.guards,
        reason_code=f"restore_{decision.action}",
        reason=reason.strip(),
        actor=actor,
        before=before,
        after=after,
    )


def _representative_restore(
    group: CandidateGroup, prior: dict[str, object], decision: Decision
) -> None:
    """The representative goes back with who chose it and why, as recorded before the
    reverted decision: a rule's choice stays the rule's, a person's stays theirs."""
    locked = bool(prior.get("representative_locked"))
    group.representative_locked = locked
    if "representative_by" in prior:
        group.representative_by = str(prior["representative_by"])
        group.representative_reason = str(prior.get("representative_reason", ""))
    elif not locked:
        # Recorded before who-and-why were kept: the policy chose it.
        group.representative_by = f"rule:{'>'.join(settings.REPRESENTATIVE_POLICY)}"
        group.representative_reason = f"the policy's choice before decision {decision.pk}"
    else:
        group.representative_reason = f"as chosen before decision {decision.pk}"


@transaction.atomic
def conflict_record(
    *,
    conflict: GroupConflict,
    editor: User,
    action: str,
    document_ids: list[int],
    reason_code: str,
    reason: str,
) -> Decision:
    """Record the losing attempt of a race truthfully: who, what, the version it saw,
    and the state it lost to. Nothing is applied."""
    group = CandidateGroup.objects.select_related("method").get(pk=conflict.group.pk)
    state = group_state(group)
    return decision_record(
        Decision.Action.CONFLICT,
        group,
        document_ids=sorted(document_ids),
        reason_code=reason_code,
        reason=reason.strip() or "(no reason given)",
        actor=actor_for(editor),
        before={
            "attempted": action,
            "expected_version": conflict.expected_version,
        },
        after=state,
    )
