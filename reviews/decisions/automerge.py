"""Automatic merging and acceptance: auto_merge (a rule, or a person approving a rule's
proposal) and accept (a person accepting the group as it stands, "Accept the group"):
the group is *accepted* as one canonical record; no membership changes. A group is
accepted while its latest decision was taken at its current version (the same test the
queue uses for "decided"), so any later change of the group asks for a new decision.
"""

from __future__ import annotations

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
from ingest.models import CandidateGroup, CandidatePair, Document, DoNotMatch, Extraction
from reviews.core.words import Said, gettext_noop
from reviews.decisions import group_reads
from reviews.decisions.decision_records import (
    ACCEPTING,
    check_version,
    deciding,
    decision_record,
    group_state,
    pair_guards,
)
from reviews.labels import label_reads
from reviews.models import Decision, Label, MergeProposal
from reviews.rules import ReviewError, actor_for

AUTO_RULE = "automerge-v1"


# Extraction statuses that never merge automatically: empty text is not a
# duplicate of empty text.
NEVER_AUTO_STATUSES = ("blocked", "empty", "too_short", "error")


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
    ids = group_reads.group_member_ids(group=group)
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
        label_reads.current_labels()
        .filter(verdict=Label.Verdict.DISTINCT, pair__a_id__in=ids, pair__b_id__in=ids)
        .exists()
    ):
        return None, "a distinct label holds inside the group"
    # A person said no before: a rejected proposal, or a restored acceptance.
    if MergeProposal.objects.filter(group=group, status=MergeProposal.Status.REJECTED).exists():
        return None, "a proposal for the group was rejected"
    if Decision.objects.filter(
        group=group, action=Decision.Action.RESTORE, reverts__action__in=ACCEPTING
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
    ids = group_reads.group_member_ids(group=group)
    why: dict[str, object] = {"ids": ids}
    return _auto_decision(
        group,
        why,
        action=Decision.Action.ACCEPT,
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
    action: str = Decision.Action.AUTO_MERGE,
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
