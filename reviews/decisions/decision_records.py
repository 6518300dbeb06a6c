"""The record of group decisions: the one way a decision is written, the group's state it
stores before and after, the guards and distances it keeps, and whether a group is
decided (accepted) at its current version."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from ingest.candidates import group_facts_set, policy_candidates, representative_by_rule
from ingest.models import CandidateGroup, CandidatePair, GroupMember
from reviews.models import Decision
from reviews.rules import ReviewError


class GroupConflict(ReviewError):
    """Optimistic versioning: the group changed since the editor loaded it (another
    decision won). Nothing is applied; the attempt is recorded by
    reviews.decisions.group_merges.conflict_record."""

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
        {"pair": p.id, "a": p.a_id, "b": p.b_id, "distance": p.distance, "fired": p.guard_flags()}
        for p in rows
    ]
    return {"fired": sorted({f for p in pairs for f in p["fired"]}), "pairs": pairs}


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


# The decisions that accept a group as it stands (nothing moves).
ACCEPTING = (Decision.Action.AUTO_MERGE, Decision.Action.ACCEPT)


def deciding(group: CandidateGroup) -> Decision | None:
    """The decision the group's current state rests on, if any: the latest one taken
    at its current version (a lost conflict decides nothing)."""
    return (
        Decision.objects.filter(group=group, group_version=group.version)
        .exclude(action=Decision.Action.CONFLICT)
        .order_by("-id")
        .first()
    )


def is_accepted(group: CandidateGroup) -> bool:
    d = deciding(group)
    return d is not None and bool(d.membership_after.get("accepted", True))


def group_state(group: CandidateGroup) -> dict[str, object]:
    return {**group_membership(group), "accepted": is_accepted(group)}
