"""The pairs of the review queue: in scope, filtered, uncertain first, read a page at a
time (the ids in queue order, then the columns a row shows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Count, Exists, Expression, OuterRef, Q, QuerySet, When

from ingest.core import channels
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidatePair, Document
from reviews.models import Claim, PairState
from reviews.queue.compiled_sql import compiled_rows
from reviews.queue.queue_filters import GUARDS, QueueFilters
from reviews.queue.queue_tally import queue_sync, threshold_case
from reviews.queue.wall_pages import wall_documents


def _threshold_case() -> Case:
    return threshold_case()


def pair_status_exprs() -> dict[str, Expression]:
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


def pair_guard(guard: str) -> Q:
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
    qs: QuerySet[CandidatePair] = CandidatePair.objects.filter(_pair_scope(filters))
    if with_status:
        qs = qs.annotate(**pair_status_exprs())
    qs = qs.annotate(threshold=_threshold_case())
    if filters.doc_type:
        qs = qs.filter(doc_type=filters.doc_type)
    qs = qs.filter(pair_guard(filters.guard))
    if filters.channel:
        qs = qs.filter(pair_channel(filters.channel))
    if status_filter:
        qs = _pair_status_filter(qs, filters.status)
    return qs.order_by(*QUEUE_ORDER)


def pair_channel(channel: str) -> Q:
    """Pairs that this channel nominated (one bit of `channels`, as a set of masks so
    that every database filters it on an index-friendly IN)."""
    bit = channels.BITS.get(channel, 0)
    return Q(channels__in=channels.masks_with(bit)) if bit else Q(id__in=[])


QUEUE_ORDER = ("uncertainty", "-numbers_differ", "-ids_differ", "-distance", "id")


# What a row of the queue page shows (templates/reviews/queue.html), and no more: the
# documents' headers and the guards' details are not decoded for 50 rows a page.
QUEUE_ROW_FIELDS = (
    "id",
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

    id: int
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
            ids = queue_pairs(filters=self.filters, sync=False, with_status=False).values("id")
            return (
                CandidatePair.objects.filter(id__in=ids[key])
                .annotate(**pair_status_exprs(), threshold=_threshold_case())
                .order_by(*QUEUE_ORDER)
                .values_list(*QUEUE_ROW_FIELDS)
            )

        shape = ("queue page", self.filters, key.start, key.stop, EXTRACTOR_VERSION)
        return [
            QueueRow(
                id=pair_id,
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
                pair_id,
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
        return qs.exclude(Exists(PairState.objects.filter(labeled, pair=OuterRef("id"))))
    if status == "disputed":
        return qs.filter(id__in=PairState.objects.filter(disputed).values("pair_id"))
    if status == "stale":
        return qs.filter(id__in=PairState.objects.filter(stale).values("pair_id"))
    if status == "labeled":
        return qs.filter(id__in=PairState.objects.filter(labeled).values("pair_id"))
    if status == "all":
        return qs
    settled = (
        PairState.objects.filter(labeled, pair=OuterRef("id")).exclude(disputed).exclude(stale)
    )
    return qs.exclude(Exists(settled))


def pair_status_holds(status: str, labeled: bool, disputed: bool, stale: bool) -> bool:
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


def pair_guard_holds(guard: str, flags: tuple[bool, ...]) -> bool:
    """pair_guard, for one row of the counts (flags in GUARDS order)."""
    if guard == "any":
        return any(flags)
    if guard == "none":
        return not any(flags)
    if guard in GUARDS:
        return flags[GUARDS.index(guard)]
    return True


def pair_rows_in_scope(filters: QueueFilters) -> list[dict[str, Any]]:
    """Pairs in scope counted by doc type, guards and status: one GROUP BY."""
    return list(
        CandidatePair.objects.filter(_pair_scope(filters))
        .annotate(**pair_status_exprs())
        .values("doc_type", "channels", *GUARDS, "is_labeled", "is_disputed", "is_stale")
        .annotate(n=Count("id"))
        .order_by()
    )
