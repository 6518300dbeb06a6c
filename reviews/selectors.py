"""Read-only queries of the review desk."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import (
    Case,
    Count,
    Exists,
    Expression,
    F,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    When,
)
from django.shortcuts import get_object_or_404
from django.utils import timezone

from ingest import index
from ingest.channels.thresholds import query_k, threshold_for
from ingest.core import channels
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.simhash import hamming, to_unsigned64
from ingest.models import (
    WALL_STATUSES,
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
from reviews.core.align import Alignment, sentence_align
from reviews.core.mincut import min_cut
from reviews.models import (
    Adjudication,
    Claim,
    Decision,
    Label,
    PairState,
    ReviewerPreference,
    label_subject,
)
from reviews.pair import passage_panel
from reviews.queue.compiled_sql import compiled, compiled_rows
from reviews.queue.queue_tally import pair_count_rows, threshold_case
from reviews.queue.queue_tally import queue_sync as queue_sync

STATUSES = ("unlabeled", "disputed", "stale")
CACHE_WORD_DIFFS = 16
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
    channel: str = ""  # a candidate channel that nominated the pair (ingest/core/channels)
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


def active_claims() -> QuerySet[Claim]:
    return Claim.objects.filter(released_at__isnull=True, expires_at__gt=timezone.now())


# --- queue: pairs -------------------------------------------------------------------


def _threshold_case() -> Case:
    return threshold_case()


def _pair_status_exprs() -> dict[str, Expression]:
    """Status of a pair from its review state (reviews.queue.pair_states keeps it): labeled
    (a current label), disputed (current labels disagree and no adjudicator settled
    it), stale (a current label was
    given under another extractor version, or a re-crawl changed a side since: a newer
    snapshot of a's or b's URL has another main text). Labels are never edited: a new
    label clears an extractor-version staleness but not a re-crawl — the editor is meant
    to label the pair of the new snapshot, which the workers nominate."""
    labeled = Q(review_state__labels__gt=0)
    return {
        "is_labeled": Case(When(labeled, then=True), default=False),
        # An adjudicated pair is settled: it leaves the disputed queue.
        "is_disputed": Case(
            When(review_state__verdicts__gt=1, review_state__adjudicated_verdict="", then=True),
            default=False,
        ),
        "is_stale": Case(
            When(
                labeled
                & (
                    ~Q(review_state__extractor_version=EXTRACTOR_VERSION)
                    | Q(review_state__recrawled=True)
                ),
                then=True,
            ),
            default=False,
        ),
    }


# WALL_STATUSES (ingest.models): extraction statuses of pages that are not content
# (login walls, captchas, bot challenges, error pages): their pairs and groups go to
# the crawl quality view.


def wall_documents() -> QuerySet[Extraction]:
    """Ids of documents whose current extraction says they are not content."""
    return Extraction.objects.filter(
        extractor_version=EXTRACTOR_VERSION, status__in=WALL_STATUSES
    ).values("document_id")


def _pair_scope(filters: QueueFilters) -> Q:
    """The pair filters that are not counted value by value (a new filter goes here).
    Walls are not content: they go to the crawl quality view. Exact pairs are decided
    with their group, once, not pair by pair."""
    walls = wall_documents()
    q = Q(below_floor=False, method__retired_at__isnull=True, exact=False)
    q &= ~Q(a_id__in=walls) & ~Q(b_id__in=walls)
    if filters.site:
        # The site's documents as one set (hashed once), not two joins per pair.
        docs = Document.objects.filter(site__host=filters.site).values("pk")
        q &= Q(a_id__in=docs) | Q(b_id__in=docs)
    if filters.distance_min is not None:
        q &= Q(distance__gte=filters.distance_min)
    if filters.distance_max is not None:
        q &= Q(distance__lte=filters.distance_max)
    if filters.method:
        q &= Q(method__key=filters.method)
    return q


def _pair_guard(guard: str) -> Q:
    if guard == "any":
        return Q(numbers_differ=True) | Q(ids_differ=True) | Q(title_differs=True)
    if guard == "none":
        return Q(numbers_differ=False, ids_differ=False, title_differs=False)
    if guard in GUARDS:
        return Q(**{guard: True})
    return Q()


def queue_pairs(
    *,
    filters: QueueFilters,
    status_filter: bool = True,
    sync: bool = True,
    with_status: bool = True,
) -> QuerySet[CandidatePair]:
    """Pairs that need review, uncertain first: distance nearest the doc type's
    threshold (the stored `uncertainty`, under an index), then the guards that tripped,
    then the oldest. The review states and the stored order are brought up to date
    first (`sync=False`: the caller just did); `with_status=False` leaves out the
    is_labeled / is_disputed / is_stale annotations (and their join)."""
    if sync:
        queue_sync()
    qs = CandidatePair.objects.filter(_pair_scope(filters))
    if with_status:
        qs = qs.annotate(**_pair_status_exprs())
    qs = qs.annotate(threshold=_threshold_case())
    if filters.doc_type:
        qs = qs.filter(doc_type=filters.doc_type)
    qs = qs.filter(_pair_guard(filters.guard))
    if filters.channel:
        qs = qs.filter(_pair_channel(filters.channel))
    if status_filter:
        qs = _pair_status_filter(qs, filters.status)
    return qs.order_by(*QUEUE_ORDER)


def _pair_channel(channel: str) -> Q:
    """Pairs that this channel nominated (one bit of `channels`, as a set of masks so
    that every database filters it on an index-friendly IN)."""
    bit = channels.BITS.get(channel, 0)
    return Q(channels__in=channels.masks_with(bit)) if bit else Q(pk__in=[])


QUEUE_ORDER = ("uncertainty", "-numbers_differ", "-ids_differ", "-distance", "id")
# What a row of the queue page shows (templates/reviews/queue.html), and no more: the
# documents' headers and the guards' details are not decoded for 50 rows a page.
QUEUE_ROW_FIELDS = (
    "pk",
    "doc_type",
    "distance",
    "full_distance",
    "token_set_ratio",
    "channels",
    *GUARDS,
    "a__url",
    "b__url",
    "is_labeled",
    "is_disputed",
    "is_stale",
    "threshold",
)


@dataclass
class QueueRow:
    """One pair as a row of the queue page shows it."""

    pk: int
    doc_type: str
    distance: int
    full_distance: int | None
    token_set_ratio: float
    channels: int
    numbers_differ: bool
    ids_differ: bool
    title_differs: bool
    a_url: str
    b_url: str
    is_labeled: bool
    is_disputed: bool
    is_stale: bool
    threshold: int
    claim: Claim | None = None

    @property
    def guard_flags(self) -> list[str]:
        return [g for g in GUARDS if getattr(self, g)]

    @property
    def channel_names(self) -> list[str]:
        return channels.names(self.channels)

    @property
    def semantic_only(self) -> bool:
        return channels.semantic_only(self.channels)


class QueuePairPage:
    """The queue's pairs for a Paginator whose count is already known (queue_counts):
    a slice reads the ids in queue order (a narrow sort), then those rows only."""

    def __init__(self, *, filters: QueueFilters, count: int) -> None:
        self.filters = filters
        self.n = count

    def count(self) -> int:
        return self.n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, key: slice) -> list[QueueRow]:
        if not isinstance(key, slice):
            raise TypeError("queue pages are read by slices")
        if not self.n:
            return []

        def build() -> QuerySet[CandidatePair, Any]:
            # One statement: the page's ids in queue order (a narrow read along the
            # order index), then the columns the page shows of those rows only.
            ids = queue_pairs(filters=self.filters, sync=False, with_status=False).values("pk")
            return (
                CandidatePair.objects.filter(pk__in=ids[key])
                .annotate(**_pair_status_exprs(), threshold=_threshold_case())
                .order_by(*QUEUE_ORDER)
                .values_list(*QUEUE_ROW_FIELDS)
            )

        shape = ("queue page", self.filters, key.start, key.stop, EXTRACTOR_VERSION)
        return [
            QueueRow(
                pk=pk,
                doc_type=doc_type,
                distance=distance,
                full_distance=full_distance,
                token_set_ratio=token_set_ratio,
                channels=bits,
                numbers_differ=bool(numbers),
                ids_differ=bool(ids_),
                title_differs=bool(title),
                a_url=a_url,
                b_url=b_url,
                is_labeled=bool(labeled),
                is_disputed=bool(disputed),
                is_stale=bool(stale),
                threshold=threshold,
            )
            for (
                pk,
                doc_type,
                distance,
                full_distance,
                token_set_ratio,
                bits,
                numbers,
                ids_,
                title,
                a_url,
                b_url,
                labeled,
                disputed,
                stale,
                threshold,
            ) in compiled_rows(shape, build)
        ]


def _pair_status_filter(qs: QuerySet[CandidatePair], status: str) -> QuerySet[CandidatePair]:
    """The status filter, read along the queue's order index: the few pairs of a status
    as one set of ids (hashed once); the many settled or labelled pairs to leave out
    as a look-up of each pair read (a page reads a few dozen)."""
    labeled = Q(labels__gt=0)
    disputed = Q(verdicts__gt=1, adjudicated_verdict="")
    stale = labeled & (~Q(extractor_version=EXTRACTOR_VERSION) | Q(recrawled=True))
    if status == "unlabeled":
        return qs.exclude(Exists(PairState.objects.filter(labeled, pair=OuterRef("pk"))))
    if status == "disputed":
        return qs.filter(pk__in=PairState.objects.filter(disputed).values("pair_id"))
    if status == "stale":
        return qs.filter(pk__in=PairState.objects.filter(stale).values("pair_id"))
    if status == "labeled":
        return qs.filter(pk__in=PairState.objects.filter(labeled).values("pair_id"))
    if status == "all":
        return qs
    settled = (
        PairState.objects.filter(labeled, pair=OuterRef("pk")).exclude(disputed).exclude(stale)
    )
    return qs.exclude(Exists(settled))


def _pair_status_holds(status: str, labeled: bool, disputed: bool, stale: bool) -> bool:
    """_pair_status_filter, for one row of the counts."""
    if status == "unlabeled":
        return not labeled
    if status == "disputed":
        return disputed
    if status == "stale":
        return stale
    if status == "labeled":
        return labeled
    if status == "all":
        return True
    return not labeled or disputed or stale


def _pair_guard_holds(guard: str, flags: tuple[bool, bool, bool]) -> bool:
    """_pair_guard, for one row of the counts (flags in GUARDS order)."""
    if guard == "any":
        return any(flags)
    if guard == "none":
        return not any(flags)
    if guard in GUARDS:
        return flags[GUARDS.index(guard)]
    return True


# --- queue: groups ------------------------------------------------------------------


def _groups_with_distinct_label() -> QuerySet[GroupMember]:
    """Ids of groups holding both sides of a current "distinct" label (one set, not a
    query per group), from the review states (which count the pair's distinct labels).
    An adjudication settles the pair: one that overrules the "distinct" label ends the
    dispute; one that confirms it keeps the group disputed until it is split."""
    both = PairState.objects.filter(
        Q(adjudicated_verdict="") | Q(adjudicated_verdict=Label.Verdict.DISTINCT),
        distinct_labels__gt=0,
        side_a=OuterRef("document_id"),
        side_b__in=GroupMember.objects.filter(group_id=OuterRef(OuterRef("group_id"))).values(
            "document_id"
        ),
    )
    return GroupMember.objects.filter(Exists(both)).values("group_id")


def _groups_with_type(doc_type: str) -> QuerySet[GroupMember]:
    return GroupMember.objects.filter(document__doc_type=doc_type).values("group_id")


def _groups_with_guard(guard: str) -> QuerySet[CandidatePair]:
    """Guards are facts of pairs: a group matches when one of its pairs does."""
    return (
        CandidatePair.objects.filter(below_floor=False, method__retired_at__isnull=True)
        .filter(_pair_guard(guard))
        .filter(a__memberships__group=F("b__memberships__group"))
        .values("a__memberships__group")
    )


def _groups_with_channel(channel: str) -> QuerySet[CandidatePair]:
    """Channels are facts of pairs too: a group matches when one of its pairs does."""
    return (
        CandidatePair.objects.filter(below_floor=False, method__retired_at__isnull=True)
        .filter(_pair_channel(channel))
        .filter(a__memberships__group=F("b__memberships__group"))
        .values("a__memberships__group")
    )


def groups_disputed() -> list[int]:
    """The groups holding both sides of a current "distinct" label, read once for a page
    (its counts and its list of groups) rather than once by each of their queries."""
    rows = compiled_rows(
        ("groups disputed",), lambda: _groups_with_distinct_label().values_list("group_id")
    )
    return sorted({group_id for (group_id,) in rows})


def _disputed(disputed: Collection[int] | None) -> Q:
    return Q(pk__in=_groups_with_distinct_label() if disputed is None else list(disputed))


def _group_status_exprs(disputed: Collection[int] | None = None) -> dict[str, Expression]:
    """`disputed`: the groups_disputed() of this page if the caller read it, else its
    query goes along."""
    decided = Decision.objects.filter(group=OuterRef("pk"), group_version=OuterRef("version"))
    return {
        "is_decided": Exists(decided),
        "is_disputed": Case(When(_disputed(disputed), then=True), default=False),
        "ever_decided": Exists(Decision.objects.filter(group=OuterRef("pk"))),
    }


def _group_scope(filters: QueueFilters) -> Q:
    """The group filters that are not counted value by value (a new filter goes here).
    A group of walls goes to the crawl quality view."""
    q = Q(dissolved=False, method__retired_at__isnull=True)
    q &= ~Q(representative_id__in=wall_documents())
    if filters.site:
        q &= Q(
            pk__in=GroupMember.objects.filter(document__site__host=filters.site).values("group_id")
        )
    if filters.distance_min is not None:
        q &= Q(diameter__gte=filters.distance_min)
    if filters.distance_max is not None:
        q &= Q(diameter__lte=filters.distance_max)
    if filters.method:
        q &= Q(method__key=filters.method)
    return q


def queue_groups(
    *,
    filters: QueueFilters,
    status_filter: bool = True,
    with_urls: bool = False,
    disputed: Collection[int] | None = None,
) -> QuerySet[CandidateGroup]:
    """Groups that need review: flagged, chained or oversized, and no decision at their
    current version. Large and chained groups first. `with_urls`: each with its
    representative's URL (`representative_url`, read for the rows served only)."""
    qs = CandidateGroup.objects.filter(_group_scope(filters)).annotate(
        **_group_status_exprs(disputed)
    )
    if with_urls:
        qs = qs.annotate(
            representative_url=Subquery(
                Document.objects.filter(pk=OuterRef("representative_id")).values("url")[:1]
            )
        )
    if filters.doc_type:
        qs = qs.filter(pk__in=_groups_with_type(filters.doc_type))
    if filters.guard:
        qs = qs.filter(pk__in=_groups_with_guard(filters.guard))
    if filters.channel:
        qs = qs.filter(pk__in=_groups_with_channel(filters.channel))
    if status_filter:
        qs = _group_status_filter(qs, filters.status)
    return qs.order_by("-needs_review", "-chained", "-oversized", "-size", "-diameter", "id")


@dataclass
class QueueGroupRow:
    """One group as a row of the queue page shows it."""

    pk: int
    size: int
    diameter: int | None
    kind: str
    chained: bool
    oversized: bool
    needs_review: bool
    is_decided: bool
    is_disputed: bool
    ever_decided: bool
    rule: str
    review_note: str
    representative_url: str | None
    claim: Claim | None = None


def queue_group_page(
    *, filters: QueueFilters, groups_in_scope: list[GroupFacts], limit: int = 25
) -> list[QueueGroupRow]:
    """The first groups of queue_groups(with_urls=True), chosen from the facts the
    counts read (queue_group_facts: the same filters on the same facts, with the columns the
    page shows): no second pass over the groups, their members and pairs, no query."""
    chosen = sorted(
        (g for g in groups_in_scope if _group_holds(filters, g.row)), key=GroupFacts.order_key
    )[:limit]
    return [
        QueueGroupRow(
            pk=g.pk,
            size=g.size,
            diameter=g.diameter,
            kind=g.row["kind"],
            **{f: g.row[f] for f in ("chained", "oversized", "needs_review")},
            **{f: g.row[f] for f in ("is_decided", "is_disputed", "ever_decided")},
            rule=g.rule,
            review_note=g.review_note,
            representative_url=g.representative_url,
        )
        for g in chosen
    ]


def _group_status_filter(qs: QuerySet[CandidateGroup], status: str) -> QuerySet[CandidateGroup]:
    # An exact group is reviewed as one item (its pairs are not queued one by one).
    flagged = (
        Q(needs_review=True)
        | Q(chained=True)
        | Q(oversized=True)
        | Q(is_disputed=True)
        | Q(kind=CandidateGroup.Kind.EXACT)
    )
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


def _group_status_holds(status: str, row: dict[str, Any]) -> bool:
    """_group_status_filter, for one row of the counts."""
    disputed, decided, ever = row["is_disputed"], row["is_decided"], row["ever_decided"]
    flagged = (
        row["needs_review"]
        or row["chained"]
        or row["oversized"]
        or disputed
        or row["kind"] == CandidateGroup.Kind.EXACT
    )
    return {
        "unlabeled": flagged and not ever,
        "disputed": disputed and not decided,
        "stale": flagged and ever and not decided,
        "labeled": decided,
        "all": True,
    }.get(status, flagged and not decided)


def _pair_count_rows(filters: QueueFilters) -> list[dict[str, Any]]:
    """Pairs in scope counted by doc type, guards and status: one GROUP BY."""
    return list(
        CandidatePair.objects.filter(_pair_scope(filters))
        .annotate(**_pair_status_exprs())
        .values("doc_type", "channels", *GUARDS, "is_labeled", "is_disputed", "is_stale")
        .annotate(n=Count("pk"))
        .order_by()
    )


def _group_flagged(disputed: Collection[int] | None = None) -> Q:
    """Groups the review statuses short of "labeled" and "all" can hold: flagged,
    chained, oversized, exact, or holding both sides of a "distinct" label."""
    return (
        Q(needs_review=True)
        | Q(chained=True)
        | Q(oversized=True)
        | Q(kind=CandidateGroup.Kind.EXACT)
        | _disputed(disputed)
    )


# A group's columns the queue page shows, read with its facts.
SHOWN = ("pk", "size", "diameter", "rule", "review_note", "representative_id")


@dataclass(frozen=True)
class GroupFacts:
    """A group in scope as the queue counts and lists it: the facts of `row` (the keys
    of a group count row, less `n`) and its place in the queue's order."""

    pk: int
    size: int
    diameter: int | None
    rule: str
    review_note: str
    representative_url: str | None
    row: dict[str, Any]

    def order_key(self) -> tuple[Any, ...]:
        """queue_groups' order ("-needs_review", "-chained", "-oversized", "-size",
        "-diameter", "id"), with the database's place for no diameter: PostgreSQL sorts
        NULL first in a descending order, SQLite last."""
        r = self.row
        if self.diameter is None:
            diameter = (0, 0) if connection.vendor == "postgresql" else (2, 0)
        else:
            diameter = (1, -self.diameter)
        flags = (not r["needs_review"], not r["chained"], not r["oversized"])
        return (*flags, -self.size, diameter, self.pk)


def _group_count_rows(
    filters: QueueFilters, disputed: Collection[int] | None = None
) -> list[dict[str, Any]]:
    """Groups in scope with their status facts, the doc types they hold and the guards
    and channels their pairs hold, as rows of distinct facts with a count `n`."""
    return _group_rows_folded(queue_group_facts(filters=filters, disputed=disputed))


def _group_rows_folded(groups: list[GroupFacts]) -> list[dict[str, Any]]:
    facts: Counter[tuple[tuple[str, Any], ...]] = Counter(tuple(g.row.items()) for g in groups)
    return [{**dict(fact), "n": n} for fact, n in facts.items()]


def queue_group_facts(
    *, filters: QueueFilters, disputed: Collection[int] | None = None
) -> list[GroupFacts]:
    """Each group in scope with its status facts, the doc types it holds and the guards
    and channels its pairs hold. One statement: the groups, their members with their
    doc types and the pairs between two members of one group, folded per group in the
    database (not a subquery per group). Unless the status filter asks for decided or
    all groups, only the groups a review status can hold are read (the flagged ones, a
    few in a hundred). The queue's counts and its list of groups both read these."""
    status = ("kind", "needs_review", "chained", "oversized", "is_decided", "is_disputed")

    def groups() -> QuerySet[CandidateGroup, Any]:
        qs = CandidateGroup.objects.filter(_group_scope(filters))
        if filters.status not in ("labeled", "all"):
            qs = qs.filter(_group_flagged(disputed))
        return (
            qs.annotate(**_group_status_exprs(disputed))
            .values_list(*SHOWN, *status, "ever_decided")
            .order_by()
        )

    shape = (
        "group counts",
        filters,
        None if disputed is None else tuple(disputed),
        EXTRACTOR_VERSION,
    )
    groups_sql, groups_params = compiled(shape, groups)
    flag = "MAX(CASE WHEN {} THEN 1 ELSE 0 END) AS {}"
    types = [flag.format("m.doc_type = %s", f"t{i}") for i in range(len(settings.DOC_TYPES))]
    pair_holds = [
        "NOT (p.numbers_differ OR p.ids_differ OR p.title_differs)",
        *(f"p.{g}" for g in GUARDS),
        *("(p.channels & %s) <> 0" for _ in channels.ACTIVE),
    ]
    pair_flags = [flag.format(held, f"f{i}") for i, held in enumerate(pair_holds)]
    columns = [
        *(f"t.t{i}" for i in range(len(types))),
        *(f"pf.f{i}" for i in range(len(pair_flags))),
    ]
    # The pairs from each member to another member of its group, by look-ups on the
    # pair's side and on the group's members: PostgreSQL would otherwise hash every pair
    # (it cannot know how few members there are; OFFSET 0 keeps it from flattening the
    # look-up into a join); SQLite looks up anyway.
    pair_in_group = (
        "{p}.a_id = ma.document_id AND {p}.b_id IN"
        " (SELECT o.document_id FROM ingest_groupmember o WHERE o.group_id = ma.group_id)"
    )
    pairs_of_member = (
        "CROSS JOIN LATERAL (SELECT * FROM ingest_candidatepair p1"
        f" WHERE {pair_in_group.format(p='p1')} OFFSET 0) p"
        if connection.vendor == "postgresql"
        else f"JOIN ingest_candidatepair p ON {pair_in_group.format(p='p')}"
    )
    sql = f"""
        WITH g (id, {", ".join(SHOWN[1:])}, {", ".join(status)}, ever_decided)
            AS ({groups_sql}),
        m AS (
            SELECT gm.group_id, gm.document_id,
                (SELECT d.doc_type FROM ingest_document d WHERE d.id = gm.document_id) AS doc_type
            FROM ingest_groupmember gm WHERE gm.group_id IN (SELECT id FROM g)
        ),
        t AS (SELECT m.group_id, {", ".join(types)} FROM m GROUP BY m.group_id),
        pf AS (
            SELECT ma.group_id, {", ".join(pair_flags)}
            FROM m ma
            {pairs_of_member}
            JOIN ingest_fingerprintmethod fm ON fm.id = p.method_id
            WHERE NOT p.below_floor AND fm.retired_at IS NULL
            GROUP BY ma.group_id
        )
        SELECT g.*, {", ".join(columns)},
            (SELECT d.url FROM ingest_document d WHERE d.id = g.representative_id)
        FROM g
        LEFT JOIN t ON t.group_id = g.id LEFT JOIN pf ON pf.group_id = g.id
    """
    params = [
        *groups_params,
        *settings.DOC_TYPES,
        *(channels.BITS[c] for c in channels.ACTIVE),
    ]
    names = [
        *status,
        "ever_decided",
        *(f"type_{t}" for t in settings.DOC_TYPES),
        *(f"guard_{g}" for g in ("none", *GUARDS)),
        *(f"channel_{c}" for c in channels.ACTIVE),
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [
            GroupFacts(
                pk=pk,
                size=size,
                diameter=diameter,
                rule=rule,
                review_note=note,
                representative_url=url,
                row=dict(zip(names, (kind, *(bool(v) for v in held)), strict=True)),
            )
            for pk, size, diameter, rule, note, _, kind, *held, url in cursor.fetchall()
        ]


def _group_holds(f: QueueFilters, row: dict[str, Any]) -> bool:
    """The filters counted value by value (doc type, guard, channel, status), for one
    row of the group counts: queue_groups' filters on a group's facts."""
    return (
        (not f.doc_type or bool(row.get(f"type_{f.doc_type}")))
        and _group_guard_holds(f.guard, row)
        and (not f.channel or bool(row.get(f"channel_{f.channel}")))
        and _group_status_holds(f.status, row)
    )


def _group_guard_holds(guard: str, row: dict[str, Any]) -> bool:
    if guard == "any":
        return any(row[f"guard_{g}"] for g in GUARDS)
    if guard:
        return bool(row[f"guard_{guard}"])
    return True


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
        pair_rows = _pair_count_rows(filters)
    else:
        pair_rows = pair_count_rows(
            method=filters.method,
            distance_min=filters.distance_min,
            distance_max=filters.distance_max,
        )
    if groups_in_scope is None:
        groups_in_scope = queue_group_facts(filters=filters, disputed=disputed)
    group_rows = _group_rows_folded(groups_in_scope)

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
            and _pair_guard_holds(f.guard, flags)  # type: ignore[arg-type]
            and (not f.channel or bool(bits & bit))
            and _pair_status_holds(f.status, labeled, disputed, stale)
        )

    def groups(f: QueueFilters) -> int:
        return sum(r["n"] for r in group_rows if _group_holds(f, r))

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


@dataclass
class CrawlQuality:
    by_site: list[dict[str, Any]]
    groups: list[CandidateGroup]
    pairs: int


def crawl_quality(*, limit: int = 100) -> CrawlQuality:
    """What the queue leaves out as not content: wall pages (blocked, empty, too
    short) counted by site and reason, their groups, and the pairs with a wall side."""
    walls = wall_documents()
    by_site = list(
        Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION, status__in=WALL_STATUSES)
        .values("document__site__host", "status", "quality")
        .annotate(n=Count("pk"), message=Min("message"))
        .order_by("-n", "document__site__host", "status", "quality")[:limit]
    )
    groups = list(
        CandidateGroup.objects.filter(dissolved=False, representative_id__in=walls)
        .select_related("representative")
        .order_by("-size", "id")[:limit]
    )
    pairs = (
        CandidatePair.objects.filter(below_floor=False)
        .filter(Q(a_id__in=walls) | Q(b_id__in=walls))
        .count()
    )
    return CrawlQuality(by_site=by_site, groups=groups, pairs=pairs)


def filter_choices() -> dict[str, list[str]]:
    return {
        "sites": list(Site.objects.values_list("host", flat=True)),
        "methods": list(
            FingerprintMethod.objects.filter(
                Exists(CandidatePair.objects.filter(method=OuterRef("pk")))
            ).values_list("key", flat=True)
        ),
        "doc_types": list(settings.DOC_TYPES),
        "statuses": list(STATUSES),
        "guards": list(GUARDS),
        "channels": list(channels.ACTIVE),
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
    adjudications: list[Adjudication] = field(default_factory=list)

    @property
    def adjudicated(self) -> Adjudication | None:
        return self.adjudications[0] if self.adjudications else None


@dataclass(frozen=True)
class SimhashCell:
    bit: int
    differs: bool
    band: int  # the index band the bit belongs to


@dataclass(frozen=True)
class SimhashView:
    """The pair's two SimHashes explained: distance against the threshold, a strip of
    the 64 bits (most significant first) marking the differing ones and the bands of
    the candidate index, and which band nominated the pair."""

    distance: int
    threshold: int
    cells: list[SimhashCell]
    bands: int
    band: int | None
    band_differs: int | None
    radius: int | None


def simhash_view(*, pair: CandidatePair) -> SimhashView:
    xor = to_unsigned64(pair.xor)
    scheme = index.SCHEME
    band_of: dict[int, int] = {}
    for i, combo in enumerate(scheme.combos):
        for block in combo:
            shift, width = scheme.blocks[block]
            for bit in range(shift, shift + width):
                band_of.setdefault(bit, i)
    cells = [
        SimhashCell(bit=b, differs=bool((xor >> b) & 1), band=band_of.get(b, -1))
        for b in range(63, -1, -1)
    ]
    band = pair.band
    band_differs = radius = None
    if band is not None and 0 <= band < len(scheme.combos):
        band_differs = scheme.combo_value(xor, band).bit_count()
        radius = scheme.radii(query_k())[band]
    return SimhashView(
        distance=pair.distance,
        threshold=threshold_for(pair.doc_type),
        cells=cells,
        bands=len(scheme.combos),
        band=band,
        band_differs=band_differs,
        radius=radius,
    )


def pair_get(*, pair_id: int) -> CandidatePair:
    return get_object_or_404(
        CandidatePair.objects.select_related("method", "a__site", "b__site"), pk=pair_id
    )


def blind_mode_for(*, user: User) -> bool:
    pref = ReviewerPreference.objects.filter(user=user).first()
    return bool(pref and pref.blind_mode)


def locale_for(*, user: User) -> tuple[str, str]:
    """The editor's stored (language, time zone); blank where none is chosen."""
    row = ReviewerPreference.objects.filter(user=user).values_list("language", "time_zone").first()
    return (row[0], row[1]) if row else ("", "")


_DIGITS_HEAD = re.compile(r"\d+(?:[.,]\d+)*")


def guard_terms(pair: CandidatePair) -> list[str]:
    """Numbers and ids found on one side only: the ones that tripped a guard."""
    g = pair.guard_details or {}
    terms: set[str] = set()
    for x, y in (("numbers_a", "numbers_b"), ("ids_a", "ids_b")):
        terms |= set(map(str, g.get(x, []))) ^ set(map(str, g.get(y, [])))
    # A number with a multiplier ("1.2万", "1,5 triệu") is more than one token of the
    # diff: its digits are the token to emphasise.
    terms |= {m.group() for t in terms if (m := _DIGITS_HEAD.match(t)) and m.group() != t}
    return sorted(terms)


def pair_view(*, pair: CandidatePair, user: User) -> PairView:
    # The full-page texts are read only by the views that show them (a deferred field).
    extractions = {
        e.document_id: e
        for e in Extraction.objects.filter(
            document_id__in=[pair.a_id, pair.b_id], extractor_version=EXTRACTOR_VERSION
        ).defer("full_text")
    }
    # The labels of the two documents, whichever method's pair they were given on (each
    # shows the method it was given under).
    labels = list(
        Label.objects.of_subject(label_subject(pair.a_id, pair.b_id))
        .select_related("editor")
        .order_by("-created_at", "-id")
    )
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
        adjudications=list(subject_adjudications(pair).select_related("adjudicator")),
    )


# Word diffs computed lately, by the two extractions (their texts never change), the
# branch, the guard terms and the cap: a pair's page is rendered again on every toggle,
# save and return to it.
_WORD_DIFFS = passage_panel.recent(CACHE_WORD_DIFFS)


def pair_text_diff(*, view: PairView, branch: str = "main") -> diffs.WordDiff:
    ea, eb = view.a.extraction, view.b.extraction
    if ea is None or eb is None:
        return _pair_text_diff(view=view, branch=branch)
    key = (ea.pk, eb.pk, branch, tuple(view.guard_terms), settings.REVIEW_DIFF_MAX_WORDS)
    return _WORD_DIFFS.get(key, lambda: _pair_text_diff(view=view, branch=branch))


def _pair_text_diff(*, view: PairView, branch: str) -> diffs.WordDiff:
    main_a = main_b = None
    if branch == "full":
        a, b = view.a.full_text, view.b.full_text
        # Mark what is main text and what is the page around it.
        main_a, main_b = view.a.main_text, view.b.main_text
    else:
        a, b = view.a.main_text, view.b.main_text
    return diffs.word_diff(
        a,
        b,
        max_words=settings.REVIEW_DIFF_MAX_WORDS,
        emphasise=view.guard_terms,
        main_a=main_a,
        main_b=main_b,
    )


def pair_alignment(*, view: PairView) -> Alignment:
    """The main texts aligned sentence by sentence (moved blocks shown as moved)."""
    return sentence_align(
        view.a.main_text,
        view.b.main_text,
        max_sentences=settings.REVIEW_SOURCE_MAX_LINES,
        context=1,
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


def subject_adjudications(pair: CandidatePair) -> QuerySet[Adjudication]:
    """The adjudications of the pair's two documents, on this pair or on another
    method's pair of them."""
    return Adjudication.objects.filter(pair__a_id=pair.a_id, pair__b_id=pair.b_id)


def labels_settled_by(*, editor: User) -> QuerySet[Label]:
    """The editor's current labels under the current extractor on an outer pair's two
    documents (`a_id`, `b_id` of OuterRef), given on it or on another method's pair."""
    return current_labels().filter(
        doc_low=OuterRef("a_id"),
        doc_high=OuterRef("b_id"),
        editor=editor,
        extractor_version=EXTRACTOR_VERSION,
    )


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
        and _pair_guard_holds(filters.guard, tuple(bool(r[g]) for g in GUARDS))  # type: ignore[arg-type]
        and (not filters.channel or bool(r["channels"] & bit))
        and _pair_status_holds(filters.status, r["is_labeled"], r["is_disputed"], r["is_stale"])
    )
    # Read from the editor's labels (a semi-join the labels drive), not from the pairs.
    settled = (
        queue_pairs(filters=filters, sync=False, with_status=False)
        .filter(Exists(labels_settled_by(editor=user)))
        .order_by()
        .count()
    )
    return Progress(done_today=done, left=queued - settled)


def label_defaults(*, user: User) -> dict[str, str]:
    """Region and purpose keep the value of the editor's last label."""
    last = (
        Label.objects.filter(editor=user, retraction=False)
        .order_by("-created_at", "-id")
        .values("region", "purpose")
        .first()
    )
    return dict(last) if last else {}


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
