"""Merge, restore, automatic merging and conflicts: a merge deletes nothing and
every merge is on the record.

Every function here appends a Decision; no decision is ever edited. What the words mean:

- merge (a person): documents, or a whole other group, join a group. Their memberships
  move (relations, nothing deleted); do-not-match rows between the joined documents are
  revoked, not deleted. A member a person put in a group is held there by the workers.
- auto_merge (a rule, or a person approving a rule's proposal) and accept (a person
  accepting the group as it stands, "Accept the group"): the group is *accepted* as one
  canonical record; no membership changes. A group is accepted
  while its latest decision was taken at its current version (the same test the queue
  uses for "decided"), so any later change of the group asks for a new decision.
- restore: a new decision that puts the group back to the reverted decision's
  membership_before (and revokes the do-not-match rows a split wrote, or re-creates the
  ones a merge revoked). A restore itself is not restored: decide again instead.
- conflict: an attempt that lost a race on CandidateGroup.version. It is recorded
  (actor, what was attempted, the version it saw, the state it lost to) and not applied.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from ingest.channels import thresholds
from ingest.core import channels
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    Document,
    DoNotMatch,
    Extraction,
    GroupMember,
)
from reviews import selectors
from reviews.core.words import Said, gettext_noop
from reviews.models import Decision, Label, MergeProposal
from reviews.services import (
    GroupConflict,
    ReviewError,
    actor_for,
    check_version,
    decision_record,
    group_facts,
    group_membership,
    max_distance,
    pair_guards,
    representative_suggest,
)

A = Decision.Action
AUTO_RULE = "automerge-v1"
# The decisions that accept a group as it stands (nothing moves).
ACCEPTING = (A.AUTO_MERGE, A.ACCEPT)

# Extraction statuses that never merge automatically: empty text is not a
# duplicate of empty text.
NEVER_AUTO_STATUSES = ("blocked", "empty", "too_short", "error")


# --- state ---------------------------------------------------------------------------


def deciding(group: CandidateGroup) -> Decision | None:
    """The decision the group's current state rests on, if any: the latest one taken
    at its current version (a lost conflict decides nothing)."""
    return (
        Decision.objects.filter(group=group, group_version=group.version)
        .exclude(action=A.CONFLICT)
        .order_by("-id")
        .first()
    )


def is_accepted(group: CandidateGroup) -> bool:
    d = deciding(group)
    return d is not None and bool(d.membership_after.get("accepted", True))


def group_state(group: CandidateGroup) -> dict[str, object]:
    return {**group_membership(group), "accepted": is_accepted(group)}


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
    """Move documents into `target` (or out of any group); returns the groups they left."""
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


# --- merge ---------------------------------------------------------------------------


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
        A.MERGE,
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


# --- restore -------------------------------------------------------------------------


def restorable(decision: Decision) -> bool:
    return decision.action not in (A.RESTORE, A.CONFLICT)


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

    if decision.action in (A.SPLIT, A.DETACH):
        target = set(prior["members"])
        moved = set(decision.document_ids)
        touched |= _move(target, group, method_id, actor)
        rows = [
            r
            for r in _active_dnm_between(target, moved)
            if r.source == "split"
            and not ({r.a_id, r.b_id} <= moved and decision.action == A.SPLIT)
        ]
        # A revocation is set once (the row is sealed after): skip one revoked meanwhile.
        DoNotMatch.objects.filter(pk__in=[r.pk for r in rows], revoked_at=None).update(
            revoked_at=timezone.now(), revoked_by=note
        )
    elif decision.action == A.MERGE:
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
        decision.action == A.SET_REPRESENTATIVE
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
        A.RESTORE,
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


# --- conflicts -----------------------------------------------------------------------


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
        A.CONFLICT,
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


# --- automatic merging ---------------------------------------------------------------


def auto_mode(doc_type: str) -> str:
    if doc_type == "short":  # short texts are never merged automatically
        return "off"
    mode = settings.AUTO_MERGE.get(doc_type, "off")
    return mode if mode in ("semi", "auto") else "off"


def auto_threshold(doc_type: str) -> int:
    return int(settings.AUTO_MERGE_THRESHOLDS.get(doc_type, 0))


def auto_eligibility(group: CandidateGroup) -> dict[str, Any] | None:
    """Why the rule may accept this group, or None. Only exact groups, or groups whose
    every pair is within the auto threshold (the diameter) with no guard firing and no
    human decision against them; never short texts or blocked/empty/short extractions;
    never a group with a member linked only by the semantic channel unless
    SEMANTIC_AUTO_MERGE names its doc type."""
    return auto_eligibility_explained(group)[0]


def auto_eligibility_explained(
    group: CandidateGroup, *, check_mode: bool = True
) -> tuple[dict[str, Any] | None, str]:
    """auto_eligibility with the reason when the group is not eligible. With
    `check_mode=False` the doc type's AUTO_MERGE mode is not looked at: a person
    approving a proposal decides, whatever the mode is now."""
    if group.dissolved:
        return None, "the group was dissolved"
    if group.oversized or group.needs_review:
        return None, "the group is chained, oversized or flagged for review"
    ids = selectors.group_member_ids(group=group)
    if len(ids) < 2:
        return None, "fewer than two members"
    types = set(Document.objects.filter(pk__in=ids).values_list("doc_type", flat=True))
    if len(types) != 1:
        return None, "members of several doc types"
    doc_type = types.pop()
    if doc_type == "short" or (check_mode and auto_mode(doc_type) == "off"):
        return None, f"automatic merging is off for {doc_type}"
    statuses = dict(
        Extraction.objects.filter(
            document_id__in=ids, extractor_version=EXTRACTOR_VERSION
        ).values_list("document_id", "status")
    )
    if any(statuses.get(d) != "ok" for d in ids):
        return None, "a member's extraction is not ok"
    pairs = CandidatePair.objects.filter(method=group.method_id, a_id__in=ids, b_id__in=ids)
    cosine: float | None = None
    if _semantic_only_link(pairs, ids):
        # Same meaning, different words: no text evidence joins that member, so only a
        # doc type whose policy names it merges so, and then on the cosine of those
        # links (the SimHash diameter of rewritten copies is large by nature).
        if check_mode and doc_type not in settings.SEMANTIC_AUTO_MERGE:
            return None, (
                "a member is linked only by the semantic channel (same meaning, different "
                f"words); SEMANTIC_AUTO_MERGE does not name {doc_type}"
            )
        basis = "semantic"
        other = pairs.filter(below_floor=False).exclude(channels=channels.SEMANTIC)
        if other.filter(exact=False, distance__gt=auto_threshold(doc_type)).exists():
            return None, "a pair of the group is over the auto threshold"
        cosines = list(
            pairs.filter(below_floor=False, channels=channels.SEMANTIC).values_list(
                "cosine", flat=True
            )
        )
        floor = thresholds.cosine_threshold(doc_type)
        if any(c is None or c < floor for c in cosines):
            return None, f"a semantic link's cosine is under {floor}"
        cosine = min(c for c in cosines if c is not None)
    elif group.chained:
        return None, "the group is chained, oversized or flagged for review"
    elif group.kind == CandidateGroup.Kind.EXACT:
        basis = "exact"
    elif group.diameter is not None and group.diameter <= auto_threshold(doc_type):
        basis = "near"
    else:
        return None, f"diameter {group.diameter} is over the auto threshold"
    if pairs.filter(Q(numbers_differ=True) | Q(ids_differ=True) | Q(title_differs=True)).exists():
        return None, "a guard fired on a pair of the group"
    if DoNotMatch.objects.filter(a_id__in=ids, b_id__in=ids, revoked_at__isnull=True).exists():
        return None, "a do-not-match holds inside the group"
    if (
        selectors.current_labels()
        .filter(verdict=Label.Verdict.DISTINCT, pair__a_id__in=ids, pair__b_id__in=ids)
        .exists()
    ):
        return None, "a distinct label holds inside the group"
    # A person said no before: a rejected proposal, or a restored acceptance.
    if MergeProposal.objects.filter(group=group, status=MergeProposal.Status.REJECTED).exists():
        return None, "a proposal for the group was rejected"
    if Decision.objects.filter(
        group=group, action=A.RESTORE, reverts__action__in=ACCEPTING
    ).exists():
        return None, "an earlier merge of the group was restored"
    if deciding(group) is not None:  # already decided at this version
        return None, "the group is already decided at this version"
    why: dict[str, object] = {
        "doc_type": doc_type,
        "basis": basis,
        "ids": ids,
        "distance": group.diameter,
        "threshold": auto_threshold(doc_type),
    }
    if cosine is not None:
        why["cosine"] = cosine
    return why, ""


def _semantic_only_link(pairs: QuerySet[CandidatePair], ids: list[int]) -> bool:
    """Whether pairs that the semantic channel alone nominated join members that no
    other pair joins (pairs over the similarity floor, as the groups are built). Members
    a person put together without any pair do not count: the person decided that."""
    rows = list(pairs.filter(below_floor=False).values_list("a_id", "b_id", "channels"))
    others = [(a, b) for a, b, mask in rows if not channels.semantic_only(mask)]
    return _components(ids, others) > _components(ids, [(a, b) for a, b, _ in rows])


def _components(ids: list[int], links: list[tuple[int, int]]) -> int:
    parent = {d: d for d in ids}

    def root(d: int) -> int:
        while parent[d] != d:
            parent[d] = parent[parent[d]]
            d = parent[d]
        return d

    for a, b in links:
        parent[root(a)] = root(b)
    return len({root(d) for d in ids})


@transaction.atomic
def group_accept(
    *, group: CandidateGroup, editor: User, reason: str, expected_version: int | None = None
) -> Decision:
    """A person accepts the whole group as it is (e.g. 300 exact copies of one page),
    once, instead of labelling its pairs one by one: an accepting decision on the
    record, restorable like any other."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    group = CandidateGroup.objects.select_for_update().select_related("method").get(pk=group.pk)
    check_version(group, expected_version)
    if group.dissolved:
        raise ReviewError(Said(gettext_noop("the group is dissolved")))
    if deciding(group) is not None:
        raise ReviewError(Said(gettext_noop("the group is already decided at this version")))
    ids = selectors.group_member_ids(group=group)
    why: dict[str, object] = {"ids": ids}
    return _auto_decision(
        group,
        why,
        action=A.ACCEPT,
        actor=actor_for(editor),
        reason_code=f"accepted_{group.kind}",
        reason=reason.strip(),
    )


def _auto_decision(
    group: CandidateGroup,
    why: dict[str, object],
    *,
    actor: str,
    reason_code: str,
    reason: str,
    action: str = A.AUTO_MERGE,
) -> Decision:
    ids: list[int] = why["ids"]  # type: ignore[assignment]
    state = group_state(group)
    return decision_record(
        action,
        group,
        document_ids=ids,
        distance=group.diameter,
        guards=pair_guards(group.method_id, set(ids), set(ids)),
        reason_code=reason_code,
        reason=reason,
        actor=actor,
        before=state,
        after={**state, "accepted": True},
    )


def automerge_run(*, group_ids: Iterable[int] | None = None) -> dict[str, int]:
    """Run the rule over live, undecided groups (or the ones given): `auto` doc types
    are accepted and logged as rule:automerge-v1, `semi` ones wait as proposals."""
    counts = {"auto_merged": 0, "proposed": 0, "skipped": 0}
    if all(auto_mode(t) == "off" for t in settings.DOC_TYPES):
        return counts
    qs = CandidateGroup.objects.filter(dissolved=False)
    if group_ids is not None:
        qs = qs.filter(pk__in=list(group_ids))
    for gid in qs.order_by("pk").values_list("pk", flat=True).iterator():
        with transaction.atomic():
            group = CandidateGroup.objects.select_for_update().select_related("method").get(pk=gid)
            why = auto_eligibility(group)
            if why is None:
                counts["skipped"] += 1
                continue
            doc_type = str(why["doc_type"])
            reason = (
                f"{why['basis']} group of {len(why['ids'])} {doc_type} pages "
                f"(diameter {why['distance']}, auto threshold {why['threshold']}"
                + (f", lowest semantic cosine {why['cosine']:.2f}" if "cosine" in why else "")
                + "); no guard fired, no human decision against"
            )
            if auto_mode(doc_type) == "auto":
                _auto_decision(
                    group,
                    why,
                    actor=f"rule:{AUTO_RULE}",
                    reason_code=str(why["basis"]),
                    reason=reason,
                )
                counts["auto_merged"] += 1
            elif not MergeProposal.objects.filter(
                group=group, group_version=group.version, status=MergeProposal.Status.PENDING
            ).exists():
                MergeProposal.objects.create(
                    group=group,
                    group_version=group.version,
                    document_ids=why["ids"],
                    doc_type=doc_type,
                    rule=AUTO_RULE,
                    basis=str(why["basis"]),
                    method_key=group.method.key,
                    distance=group.diameter,
                    guards=pair_guards(group.method_id, set(why["ids"]), set(why["ids"])),
                    decision_reason=reason,
                )
                counts["proposed"] += 1
            else:
                counts["skipped"] += 1
    return counts


@transaction.atomic
def proposals_decide(
    *, proposal_ids: Iterable[int], editor: User, approve: bool, reason: str
) -> dict[str, int]:
    """An editor approves or rejects proposals in bulk. An approval is an auto_merge
    decision by the person; a rejection is kept on the proposal and stops the rule from
    proposing the group again. A proposal whose group changed since (or no longer
    qualifies) is marked stale, with the reason on the proposal. The AUTO_MERGE mode of
    now does not matter: the person decides."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    actor = actor_for(editor)
    counts = {"approved": 0, "rejected": 0, "stale": 0}
    proposals = MergeProposal.objects.select_for_update().filter(
        pk__in=list(proposal_ids), status=MergeProposal.Status.PENDING
    )
    now = timezone.now()
    for p in proposals.order_by("pk"):
        group = (
            CandidateGroup.objects.select_for_update().select_related("method").get(pk=p.group_id)
        )
        p.decided_by, p.decided_at = actor, now
        stale_because = ""
        if group.dissolved:
            stale_because = "the group was dissolved since the proposal"
        elif group.version != p.group_version:
            stale_because = (
                f"the group changed since the proposal (version {p.group_version} → "
                f"{group.version})"
            )
        if stale_because:
            p.status = MergeProposal.Status.STALE
            counts["stale"] += 1
        elif approve:
            why, why_not = auto_eligibility_explained(group, check_mode=False)
            if why is None:
                stale_because = f"no longer qualifies: {why_not}"
                p.status = MergeProposal.Status.STALE
                counts["stale"] += 1
            else:
                p.decision = _auto_decision(
                    group,
                    why,
                    actor=actor,
                    reason_code="approved_proposal",
                    reason=f"approved proposal {p.pk} of rule:{p.rule}: {reason.strip()}",
                )
                p.status = MergeProposal.Status.APPROVED
                counts["approved"] += 1
        else:
            p.status = MergeProposal.Status.REJECTED
            counts["rejected"] += 1
        p.decision_reason = f"{p.decision_reason}\n{actor}: {reason.strip()}".strip()
        if stale_because:
            p.decision_reason += f"\nstale: {stale_because}"
        p.save()
    return counts
