"""Read-only queries of the review desk."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import (
    BooleanField,
    Case,
    Exists,
    Expression,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Abs
from django.shortcuts import get_object_or_404
from django.utils import timezone

from ingest.candidates import threshold_for
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.simhash import hamming, to_unsigned64
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    Document,
    DoNotMatch,
    Extraction,
    Fingerprint,
    FingerprintMethod,
    GroupMember,
    Site,
)
from reviews.core import diff as diffs
from reviews.core.mincut import min_cut
from reviews.models import Claim, Decision, Label, ReviewerPreference

STATUSES = ("unlabeled", "disputed", "stale")
GUARDS = ("numbers_differ", "ids_differ", "title_differs")
KINDS = ("pair", "group")
MATRIX_MAX = 40


@dataclass(frozen=True)
class QueueFilters:
    doc_type: str = ""
    site: str = ""
    distance_min: int | None = None
    distance_max: int | None = None
    guard: str = ""
    status: str = ""  # "" = needs review (unlabeled, disputed or stale)
    method: str = ""
    kind: str = ""  # "" = pairs and groups

    def replace(self, **kwargs: Any) -> QueueFilters:
        values = {**self.__dict__, **kwargs}
        return QueueFilters(**values)

    def as_query(self) -> dict[str, str]:
        out = {}
        for key, value in self.__dict__.items():
            if value not in ("", None):
                out[key] = str(value)
        return out


# --- labels ------------------------------------------------------------------------


def current_labels() -> QuerySet[Label]:
    return Label.objects.filter(superseded_by__isnull=True, retraction=False)


def labels_settled_by(*, editor: User) -> QuerySet[Label]:
    """The editor's current labels under the current extractor, for an outer pair
    (`pair=OuterRef("pk")`)."""
    return current_labels().filter(
        pair=OuterRef("pk"), editor=editor, extractor_version=EXTRACTOR_VERSION
    )


def _recrawl_changed(side: str) -> Exists:
    """A newer snapshot of the pair's `side` document (same URL, fetched later) whose
    main text under the pair's method differs: its main-branch fingerprint has another
    text SHA-256 or another status."""
    own = Fingerprint.objects.filter(
        document=OuterRef(OuterRef(side)),
        method=OuterRef(OuterRef("method")),
        branch=Fingerprint.Branch.MAIN,
    )
    # The pair's own documents are not re-crawls of each other: two snapshots of one
    # URL are exactly what the pair compares.
    newer = (
        Fingerprint.objects.filter(
            method=OuterRef("method"),
            branch=Fingerprint.Branch.MAIN,
            document__url=OuterRef(f"{side}__url"),
            document__fetched_at__gt=OuterRef(f"{side}__fetched_at"),
        )
        .exclude(document=OuterRef("a"))
        .exclude(document=OuterRef("b"))
    ).filter(
        ~Q(text_sha256=Subquery(own.values("text_sha256")[:1]))
        | ~Q(status=Subquery(own.values("status")[:1]))
    )
    return Exists(newer)


def _pair_status_exprs() -> dict[str, Expression]:
    """A current label on pair (a, b) under method M is *stale* — the pair goes back to
    the queue — when (1) it was given under another extractor version than the current
    one, or (2) a re-crawl changed a side: a newer snapshot of a's or b's URL exists
    whose main text under M differs (see _recrawl_changed). Labels are never edited:
    staleness is computed, and a new label on the pair clears (1) but not (2) — the
    editor is meant to label the pair of the new snapshot, which the workers nominate."""
    current = current_labels().filter(pair=OuterRef("pk"))
    other_verdict = current_labels().filter(~Q(verdict=OuterRef("verdict")), pair=OuterRef("pair"))
    recrawled = _recrawl_changed("a") | _recrawl_changed("b")
    return {
        "is_labeled": Exists(current),
        "is_disputed": Exists(current.filter(Exists(other_verdict))),
        "is_stale": ExpressionWrapper(
            Q(Exists(current.exclude(extractor_version=EXTRACTOR_VERSION)))
            | (Q(Exists(current)) & recrawled),
            output_field=BooleanField(),
        ),
    }


def active_claims() -> QuerySet[Claim]:
    return Claim.objects.filter(released_at__isnull=True, expires_at__gt=timezone.now())


# --- queue: pairs -------------------------------------------------------------------


def _threshold_case() -> Case:
    return Case(
        *[When(doc_type=t, then=Value(threshold_for(t))) for t in settings.DOC_TYPES],
        default=Value(threshold_for("other")),
        output_field=IntegerField(),
    )


def queue_pairs(*, filters: QueueFilters, status_filter: bool = True) -> QuerySet[CandidatePair]:
    """Pairs that need review, uncertain first: distance nearest the doc type's
    threshold, then the guards that tripped, then the oldest."""
    exprs = _pair_status_exprs()
    qs = CandidatePair.objects.filter(below_floor=False, method__retired_at__isnull=True).annotate(
        **exprs,
        threshold=_threshold_case(),
        uncertainty=Abs(F("distance") - F("threshold")),
    )
    if filters.doc_type:
        qs = qs.filter(doc_type=filters.doc_type)
    if filters.site:
        qs = qs.filter(Q(a__site__host=filters.site) | Q(b__site__host=filters.site))
    if filters.distance_min is not None:
        qs = qs.filter(distance__gte=filters.distance_min)
    if filters.distance_max is not None:
        qs = qs.filter(distance__lte=filters.distance_max)
    if filters.guard == "any":
        qs = qs.filter(Q(numbers_differ=True) | Q(ids_differ=True) | Q(title_differs=True))
    elif filters.guard == "none":
        qs = qs.filter(numbers_differ=False, ids_differ=False, title_differs=False)
    elif filters.guard in GUARDS:
        qs = qs.filter(**{filters.guard: True})
    if filters.method:
        qs = qs.filter(method__key=filters.method)
    if status_filter:
        qs = _pair_status_filter(qs, filters.status)
    return qs.order_by("uncertainty", "-numbers_differ", "-ids_differ", "-distance", "id")


def _pair_status_filter(qs: QuerySet[CandidatePair], status: str) -> QuerySet[CandidatePair]:
    if status == "unlabeled":
        return qs.filter(is_labeled=False)
    if status == "disputed":
        return qs.filter(is_disputed=True)
    if status == "stale":
        return qs.filter(is_stale=True)
    if status == "labeled":
        return qs.filter(is_labeled=True)
    if status == "all":
        return qs
    return qs.filter(Q(is_labeled=False) | Q(is_disputed=True) | Q(is_stale=True))


# --- queue: groups ------------------------------------------------------------------


def queue_groups(*, filters: QueueFilters, status_filter: bool = True) -> QuerySet[CandidateGroup]:
    """Groups that need review: flagged, chained or oversized, and no decision at their
    current version. Large and chained groups first."""
    decided = Decision.objects.filter(group=OuterRef("pk"), group_version=OuterRef("version"))
    members = GroupMember.objects.filter(group=OuterRef("pk"))
    distinct_inside = current_labels().filter(
        verdict=Label.Verdict.DISTINCT,
        pair__a__memberships__group=OuterRef("pk"),
        pair__b__memberships__group=OuterRef("pk"),
    )
    qs = CandidateGroup.objects.filter(dissolved=False, method__retired_at__isnull=True).annotate(
        is_decided=Exists(decided),
        is_disputed=Exists(distinct_inside),
        ever_decided=Exists(Decision.objects.filter(group=OuterRef("pk"))),
    )
    if filters.doc_type:
        qs = qs.filter(Exists(members.filter(document__doc_type=filters.doc_type)))
    if filters.site:
        qs = qs.filter(Exists(members.filter(document__site__host=filters.site)))
    if filters.distance_min is not None:
        qs = qs.filter(diameter__gte=filters.distance_min)
    if filters.distance_max is not None:
        qs = qs.filter(diameter__lte=filters.distance_max)
    if filters.method:
        qs = qs.filter(method__key=filters.method)
    if filters.guard:
        # Guards are facts of pairs: a group matches when one of its pairs does.
        pairs = queue_pairs(filters=QueueFilters(guard=filters.guard), status_filter=False)
        qs = qs.filter(
            Exists(
                pairs.filter(
                    a__memberships__group=OuterRef("pk"), b__memberships__group=OuterRef("pk")
                )
            )
        )
    if status_filter:
        qs = _group_status_filter(qs, filters.status)
    return qs.order_by("-needs_review", "-chained", "-oversized", "-size", "-diameter", "id")


def _group_status_filter(qs: QuerySet[CandidateGroup], status: str) -> QuerySet[CandidateGroup]:
    flagged = Q(needs_review=True) | Q(chained=True) | Q(oversized=True) | Q(is_disputed=True)
    if status == "unlabeled":
        return qs.filter(flagged, ever_decided=False)
    if status == "disputed":
        return qs.filter(is_disputed=True, is_decided=False)
    if status == "stale":
        return qs.filter(flagged, ever_decided=True, is_decided=False)
    if status == "labeled":
        return qs.filter(is_decided=True)
    if status == "all":
        return qs
    return qs.filter(flagged, is_decided=False)


def queue_counts(*, filters: QueueFilters) -> dict[str, dict[str, int]]:
    """Counts per filter value, each with the other filters applied."""

    def both(f: QueueFilters) -> int:
        n = 0
        if f.kind in ("", "pair"):
            n += queue_pairs(filters=f).count()
        if f.kind in ("", "group"):
            n += queue_groups(filters=f).count()
        return n

    counts: dict[str, dict[str, int]] = {
        "status": {s: both(filters.replace(status=s)) for s in ("", *STATUSES)},
        "kind": {
            "": both(filters.replace(kind="")),
            "pair": queue_pairs(filters=filters).count(),
            "group": queue_groups(filters=filters).count(),
        },
        "doc_type": {t: both(filters.replace(doc_type=t)) for t in ("", *settings.DOC_TYPES)},
        "guard": {g: both(filters.replace(guard=g)) for g in ("", "any", *GUARDS)},
    }
    return counts


def filter_choices() -> dict[str, list[str]]:
    return {
        "sites": list(Site.objects.values_list("host", flat=True)),
        "methods": list(
            FingerprintMethod.objects.filter(candidatepair__isnull=False)
            .distinct()
            .values_list("key", flat=True)
        ),
        "doc_types": list(settings.DOC_TYPES),
        "statuses": list(STATUSES),
        "guards": list(GUARDS),
    }


# --- pair view ----------------------------------------------------------------------


@dataclass
class Side:
    document: Document
    extraction: Extraction | None

    @property
    def main_text(self) -> str:
        return self.extraction.main_text if self.extraction else ""

    @property
    def full_text(self) -> str:
        return self.extraction.full_text if self.extraction else ""


@dataclass
class PairView:
    pair: CandidatePair
    a: Side
    b: Side
    labels: list[Label]
    current: list[Label]
    mine: Label | None
    disputed: bool
    disagreeing: list[Label]
    group: CandidateGroup | None
    blind: bool
    claim: Claim | None
    guard_terms: list[str] = field(default_factory=list)


def pair_get(*, pair_id: int) -> CandidatePair:
    return get_object_or_404(
        CandidatePair.objects.select_related("method", "a__site", "b__site"), pk=pair_id
    )


def blind_mode_for(*, user: User) -> bool:
    pref = ReviewerPreference.objects.filter(user=user).first()
    return bool(pref and pref.blind_mode)


def guard_terms(pair: CandidatePair) -> list[str]:
    """Numbers and ids found on one side only: the ones that tripped a guard."""
    g = pair.guard_details or {}
    terms: set[str] = set()
    for x, y in (("numbers_a", "numbers_b"), ("ids_a", "ids_b")):
        terms |= set(map(str, g.get(x, []))) ^ set(map(str, g.get(y, [])))
    return sorted(terms)


def pair_view(*, pair: CandidatePair, user: User) -> PairView:
    extractions = {
        e.document_id: e
        for e in Extraction.objects.filter(
            document_id__in=[pair.a_id, pair.b_id], extractor_version=EXTRACTOR_VERSION
        )
    }
    labels = list(pair.labels.select_related("editor").order_by("-created_at", "-id"))
    current = [x for x in labels if x.superseded_by_id is None and not x.retraction]
    mine = next((x for x in current if x.editor_id == user.pk), None)
    verdicts = {x.verdict for x in current}
    disagreeing = [
        x for x in current if x.editor_id != user.pk and mine and x.verdict != mine.verdict
    ]
    members = GroupMember.objects.filter(
        method=pair.method_id, document_id__in=[pair.a_id, pair.b_id]
    ).select_related("group")
    groups = {m.group_id: m.group for m in members}
    group = None
    if len(members) == 2 and len(groups) == 1:
        group = next(iter(groups.values()))
    claim = active_claims().filter(pair=pair).select_related("editor").first()
    return PairView(
        pair=pair,
        a=Side(pair.a, extractions.get(pair.a_id)),
        b=Side(pair.b, extractions.get(pair.b_id)),
        labels=labels,
        current=current,
        mine=mine,
        disputed=len(verdicts) > 1,
        disagreeing=disagreeing,
        group=group,
        blind=blind_mode_for(user=user),
        claim=claim,
        guard_terms=guard_terms(pair),
    )


def pair_text_diff(*, view: PairView, branch: str = "main") -> diffs.WordDiff:
    if branch == "full":
        a, b = view.a.full_text, view.b.full_text
    else:
        a, b = view.a.main_text, view.b.main_text
    return diffs.word_diff(
        a, b, max_words=settings.REVIEW_DIFF_MAX_WORDS, emphasise=view.guard_terms
    )


def document_source(*, document: Document) -> str:
    """The raw body decoded for display (never for a browser to run: see the source
    view's policy). Undecodable bytes are replaced."""
    raw = document.body.raw()
    for encoding in (document.detected_encoding, document.declared_encoding, "utf-8"):
        if not encoding:
            continue
        try:
            return raw.decode(encoding, errors="replace")
        except LookupError:
            continue
    return raw.decode("utf-8", errors="replace")


def pair_source_diff(*, pair: CandidatePair) -> diffs.LineDiff:
    return diffs.line_diff(
        document_source(document=pair.a),
        document_source(document=pair.b),
        max_lines=settings.REVIEW_SOURCE_MAX_LINES,
        context=3,
    )


def document_get(*, document_id: int) -> Document:
    return get_object_or_404(Document.objects.select_related("body"), pk=document_id)


def previous_pair_id(*, user: User, pair: CandidatePair) -> int | None:
    """The pair the editor labelled last before coming here (the `k` key)."""
    if not user.is_authenticated:
        return None
    return (
        Label.objects.filter(editor=user)
        .exclude(pair=pair)
        .order_by("-created_at", "-id")
        .values_list("pair_id", flat=True)
        .first()
    )


def my_last_label(*, user: User) -> Label | None:
    return current_labels().filter(editor=user).order_by("-created_at", "-id").first()


# --- group view ---------------------------------------------------------------------


@dataclass
class MemberRow:
    document: Document
    extraction: Extraction | None
    value: int | None
    distance_to_rep: int | None
    is_representative: bool


@dataclass
class Conflict:
    a: int
    b: int
    source: str  # label | do-not-match
    cut: list[tuple[int, int]]
    move: list[int]


@dataclass
class GroupView:
    group: CandidateGroup
    members: list[MemberRow]
    matrix_ids: list[int]
    matrix: list[tuple[int, list[int | None]]]
    matrix_cut: bool
    decisions: list[Decision]
    conflicts: list[Conflict]
    threshold: int
    # A dissolved group: the decision that dissolved it, and where its former members
    # are now (document id, group id or None).
    dissolved_by: Decision | None = None
    whereabouts: list[tuple[int, int | None]] = field(default_factory=list)


def group_get(*, group_id: int) -> CandidateGroup:
    return get_object_or_404(
        CandidateGroup.objects.select_related("method", "representative"), pk=group_id
    )


def group_member_ids(*, group: CandidateGroup) -> list[int]:
    return sorted(GroupMember.objects.filter(group=group).values_list("document_id", flat=True))


def group_view(*, group: CandidateGroup) -> GroupView:
    ids = group_member_ids(group=group)
    documents = Document.objects.filter(pk__in=ids).select_related("site").order_by("id")
    extractions = {
        e.document_id: e
        for e in Extraction.objects.filter(
            document_id__in=ids, extractor_version=EXTRACTOR_VERSION
        ).defer("main_text", "full_text")
    }
    values = {
        d: to_unsigned64(v)
        for d, v in Fingerprint.objects.filter(
            method=group.method_id, branch=Fingerprint.Branch.MAIN, document_id__in=ids
        ).values_list("document_id", "simhash")
        if v is not None
    }
    rep = values.get(group.representative_id) if group.representative_id else None
    rows = [
        MemberRow(
            document=d,
            extraction=extractions.get(d.pk),
            value=values.get(d.pk),
            distance_to_rep=(
                hamming(rep, values[d.pk]) if rep is not None and d.pk in values else None
            ),
            is_representative=d.pk == group.representative_id,
        )
        for d in documents
    ]
    rows.sort(key=lambda r: (not r.is_representative, r.distance_to_rep or 0, r.document.pk))
    matrix_ids = [r.document.pk for r in rows][:MATRIX_MAX]
    matrix = [
        (
            x,
            [
                hamming(values[x], values[y]) if x in values and y in values else None
                for y in matrix_ids
            ],
        )
        for x in matrix_ids
    ]
    types = {r.document.doc_type for r in rows}
    decisions = list(group.decisions.all())
    dissolved_by, whereabouts = None, []
    if group.dissolved:
        dissolved_by, whereabouts = _dissolution(group, decisions)
    return GroupView(
        group=group,
        members=rows,
        matrix_ids=matrix_ids,
        matrix=matrix,
        matrix_cut=len(rows) > MATRIX_MAX,
        decisions=decisions,
        conflicts=group_conflicts(group=group, member_ids=ids),
        threshold=max((threshold_for(t) for t in types), default=threshold_for("other")),
        dissolved_by=dissolved_by,
        whereabouts=whereabouts,
    )


def _dissolution(
    group: CandidateGroup, decisions: list[Decision]
) -> tuple[Decision | None, list[tuple[int, int | None]]]:
    """Which decision dissolved the group (the latest one that left it empty) and the
    current group of each document it held before."""
    applied = [d for d in decisions if d.action != Decision.Action.CONFLICT]
    last = next((d for d in applied if not d.membership_after.get("members")), None)
    former: set[int] = set()
    for d in applied:
        former.update(d.membership_before.get("members", []))
    now = dict(
        GroupMember.objects.filter(method=group.method_id, document_id__in=former).values_list(
            "document_id", "group_id"
        )
    )
    return last, [(d, now.get(d)) for d in sorted(former)]


def group_pair_edges(*, group: CandidateGroup, member_ids: list[int]) -> list[tuple[int, int]]:
    return list(
        CandidatePair.objects.filter(
            method=group.method_id, below_floor=False, a_id__in=member_ids, b_id__in=member_ids
        ).values_list("a_id", "b_id")
    )


def group_conflicts(*, group: CandidateGroup, member_ids: list[int]) -> list[Conflict]:
    """Documents a person said are distinct (a current label or a do-not-match) that the
    group still holds together, each with the smallest set of pair links whose removal
    separates them and the members a split along that cut would move."""
    found: dict[tuple[int, int], str] = {}
    for a, b in (
        current_labels()
        .filter(
            verdict=Label.Verdict.DISTINCT,
            pair__method=group.method_id,
            pair__a_id__in=member_ids,
            pair__b_id__in=member_ids,
        )
        .values_list("pair__a_id", "pair__b_id")
    ):
        found[(a, b)] = "label"
    for a, b in DoNotMatch.objects.filter(
        a_id__in=member_ids, b_id__in=member_ids, revoked_at__isnull=True
    ).values_list("a_id", "b_id"):
        found.setdefault((a, b), "do-not-match")
    if not found:
        return []
    edges = group_pair_edges(group=group, member_ids=member_ids)
    members = set(member_ids)
    out = []
    for (a, b), source in sorted(found.items())[:10]:
        cut, side = min_cut(edges, a, b)
        source_side = side & members
        other_side = members - source_side
        # Move the side without the representative (else the smaller one).
        if group.representative_id in source_side:
            move = other_side
        elif group.representative_id in other_side:
            move = source_side
        else:
            move = min(source_side, other_side, key=len)
        out.append(Conflict(a, b, source, sorted(cut), sorted(move)))
    return out
