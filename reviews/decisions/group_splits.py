"""Split a group (or detach members) and choose its representative: each one a recorded
decision, a split with do-not-match constraints so that workers never regroup what a
person separated."""

from __future__ import annotations

from itertools import combinations

from django.contrib.auth.models import User
from django.db import transaction

from ingest.models import CandidateGroup, DoNotMatch, GroupMember, memberships_lock
from reviews.core.words import Said, gettext_noop
from reviews.decisions.decision_records import (
    check_version,
    decision_record,
    group_facts,
    group_membership,
    max_distance,
    pair_guards,
    representative_suggest,
)
from reviews.models import Decision
from reviews.rules import ReviewError, actor_for


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
    # The grouping lock before the group's row (one group per method and document).
    memberships_lock(group.method_id)
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
