"""The groups of the review queue: flagged, chained, oversized or exact, and not decided
at their current version; their facts read in one statement, which both the queue's
counts and its list of groups use."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, cast

from django.conf import settings
from django.db import connection
from django.db.models import Case, Exists, F, OuterRef, Q, QuerySet, Subquery, When

from ingest.core import channels
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidateGroup, CandidatePair, Document, GroupMember, group_flagged
from reviews.models import Claim, Decision, Label, PairState
from reviews.queue.compiled_sql import compiled, compiled_rows
from reviews.queue.pair_queue import pair_channel, pair_guard
from reviews.queue.queue_filters import GUARDS, QueueFilters
from reviews.queue.wall_pages import wall_documents

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class GroupStatus(TypedDict):
    """A queued group's review status, as _group_status_exprs annotates it."""

    is_decided: bool
    is_disputed: bool
    ever_decided: bool


def _groups_with_distinct_label() -> QuerySet[GroupMember, int]:
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
    return GroupMember.objects.filter(Exists(both)).values_list("group_id", flat=True)


def _groups_with_type(doc_type: str) -> QuerySet[GroupMember, int]:
    return GroupMember.objects.filter(document__doc_type=doc_type).values_list(
        "group_id", flat=True
    )


def _groups_with_guard(guard: str) -> QuerySet[CandidatePair, int]:
    """Guards are facts of pairs: a group matches when one of its pairs does."""
    return (
        CandidatePair.objects.filter(below_floor=False, method__retired_at__isnull=True)
        .filter(pair_guard(guard))
        .filter(a__memberships__group=F("b__memberships__group"))
        .values_list("a__memberships__group", flat=True)
    )


def _groups_with_channel(channel: str) -> QuerySet[CandidatePair, int]:
    """Channels are facts of pairs too: a group matches when one of its pairs does."""
    return (
        CandidatePair.objects.filter(below_floor=False, method__retired_at__isnull=True)
        .filter(pair_channel(channel))
        .filter(a__memberships__group=F("b__memberships__group"))
        .values_list("a__memberships__group", flat=True)
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


def _group_status_exprs(disputed: Collection[int] | None = None) -> dict[str, Exists | Case]:
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
        # The plugin cannot see annotations passed as **_group_status_exprs(): name them.
        annotated = cast("QuerySet[WithAnnotations[CandidateGroup, GroupStatus]]", qs)
        qs = _group_status_filter(annotated, filters.status)
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
        (g for g in groups_in_scope if group_holds(filters, g.row)), key=GroupFacts.order_key
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


def _group_status_filter(
    qs: QuerySet[WithAnnotations[CandidateGroup, GroupStatus]], status: str
) -> QuerySet[WithAnnotations[CandidateGroup, GroupStatus]]:
    # An exact group is reviewed as one item (its pairs are not queued one by one).
    flagged = group_flagged() | Q(is_disputed=True)
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


def _group_flagged(disputed: Collection[int] | None = None) -> Q:
    """Groups the review statuses short of "labeled" and "all" can hold: flagged,
    chained, oversized, exact, or holding both sides of a "distinct" label."""
    return group_flagged() | _disputed(disputed)


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


def group_rows_in_scope(
    filters: QueueFilters, disputed: Collection[int] | None = None
) -> list[dict[str, Any]]:
    """Groups in scope with their status facts, the doc types they hold and the guards
    and channels their pairs hold, as rows of distinct facts with a count `n`."""
    return group_rows_folded(queue_group_facts(filters=filters, disputed=disputed))


def group_rows_folded(groups: list[GroupFacts]) -> list[dict[str, Any]]:
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


def group_holds(f: QueueFilters, row: dict[str, Any]) -> bool:
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
