"""Per-pair review state (reviews.models.PairState): label counts, distinct verdicts,
the labels' extractor version and whether a re-crawl changed a side. A label is about
its subject (the two documents, reviews.models.LabelSubject), not about one method's
pair row: every pair of the same two documents, under any method, has the state of the
subject's current labels and adjudications (the labels stay on the pair they were given
on, with the method they were given under; the state is the link). The label services
refresh a pair's state (and so its subject's other pairs) when they append a label;
pair_states_sync, run before the queue is read, picks up labels written any other way,
re-crawls (new fingerprints) and new pairs of labelled subjects (another method's, or
another channel's) from three watermarks; a late cosine that changes a pair's channels
refreshes its state (reviews.queue.queue_tally._pairs_changed). The queue reads only this
table, never the labels.

The same writer keeps the labelled part of the queue's counts (reviews.models.LabelTally)
in the transaction that writes the states: the states' old keys out, the new ones in,
under a lock on the queue tally's wall watermark (which also orders two refreshes of one
pair, and a refresh against the tally moving its watermarks)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Case, Count, Exists, Max, Min, OuterRef, Q, QuerySet, Subquery, When
from django.db.models import Value as V
from django.utils import timezone

from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import WALL_STATUSES, CandidatePair, Document, Extraction, Fingerprint
from reviews.models import Adjudication, Label, LabelTally, PairState, Watermark
from reviews.queue.watermarks import (
    FINGERPRINTS,
    LABELS,
    SUBJECTS,
    TALLY_WALLS,
    UNSET,
    watermark_put,
    watermarks_lock,
)

SYNC_BATCH = 5000
# The pair's facts copied into its state. A pair's sides, method, doc type, distance and
# guards never change; its channels (and so `queued`) change when a late cosine adds the
# semantic bit, and reviews.queue.queue_tally refreshes the state then.
FACTS = (
    "method_ref",
    "side_a",
    "side_b",
    "doc_type",
    "distance",
    "channels",
    "guards",
    "queued",
    "distinct_labels",
)
# The queue tally's wall watermark (reviews.queue.queue_tally), TALLY_WALLS: the label tally
# leaves out the states with a side found to be a wall up to it, as the pair tally does.
# method, doc type, distance, channels, guards, disputed, stale
LabelKey = tuple[int, str, int, int, int, bool, bool]


def _walls_upto(mark: int) -> QuerySet[Extraction, Any]:
    return Extraction.objects.filter(
        extractor_version=EXTRACTOR_VERSION, status__in=WALL_STATUSES, id__lte=mark
    ).values("document_id")


def _label_key(state: PairState) -> LabelKey | None:
    """The state's key in the label tally, None when it is not counted there."""
    if not (state.labels > 0 and state.queued):
        return None
    return (
        state.method_ref,
        state.doc_type,
        state.distance,
        state.channels,
        state.guards,
        state.verdicts > 1 and state.adjudicated_verdict == "",
        state.extractor_version != EXTRACTOR_VERSION or state.recrawled,
    )


def label_key_counts(states: QuerySet[PairState]) -> Counter[LabelKey]:
    """These states counted by their label tally key (labelled and queued ones only)."""
    out: Counter[LabelKey] = Counter()
    for m, t, d, c, g, disputed, stale, n in (
        states.filter(labels__gt=0, queued=True)
        .annotate(
            disputed=Case(
                When(verdicts__gt=1, adjudicated_verdict="", then=V(True)), default=V(False)
            ),
            stale=Case(
                When(~Q(extractor_version=EXTRACTOR_VERSION) | Q(recrawled=True), then=V(True)),
                default=V(False),
            ),
        )
        .values_list(
            "method_ref", "doc_type", "distance", "channels", "guards", "disputed", "stale"
        )
        .annotate(n=Count("pk"))
        .order_by()
    ):
        out[(m, t, d, c, g, bool(disputed), bool(stale))] += n
    return out


def label_tally_add(delta: Counter[LabelKey]) -> None:
    """Add these counts to the label tally (under the wall watermark's lock)."""
    delta = Counter({k: v for k, v in delta.items() if v})
    if not delta:
        return
    keys = Q()
    for key in delta:
        keys |= Q(**dict(zip(LabelTally.KEY, key, strict=True)))
    have = {
        tuple(getattr(r, f) for f in LabelTally.KEY): r.n for r in LabelTally.objects.filter(keys)
    }
    rows = [
        LabelTally(**dict(zip(LabelTally.KEY, key, strict=True)), n=have.get(key, 0) + delta[key])
        for key in sorted(delta)
    ]
    LabelTally.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=list(LabelTally.KEY), update_fields=["n"]
    )


def label_tally_recount(*, wall_mark: int) -> None:
    """Count the label tally from the states (the caller holds the wall watermark's
    lock): labelled queued states with no side a wall up to `wall_mark`."""
    walls = _walls_upto(wall_mark)
    counts = label_key_counts(PairState.objects.exclude(side_a__in=walls).exclude(side_b__in=walls))
    LabelTally.objects.all().delete()
    label_tally_add(counts)


def _wall_mark_locked() -> int:
    """The queue tally's wall watermark, locked until the transaction ends (-1 while the
    tally is not built: it is then counted from the states when it is)."""
    return watermarks_lock(TALLY_WALLS)[TALLY_WALLS]


def _current() -> QuerySet[Label]:
    return Label.objects.filter(superseded_by__isnull=True, retraction=False)


def subject_labelled() -> Exists:
    """For an outer pair: its subject (its two documents) has a current label, given on
    this pair or on another method's pair of the same documents."""
    return Exists(_current().filter(doc_low=OuterRef("a_id"), doc_high=OuterRef("b_id")))


def subject_adjudicated() -> Exists:
    """For an outer pair: a pair of its two documents (any method) was adjudicated."""
    return Exists(
        Adjudication.objects.filter(pair__a_id=OuterRef("a_id"), pair__b_id=OuterRef("b_id"))
    )


def subject_pairs(pair_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """These pairs and every pair of the same two documents under another method, each
    with its subject (a pair's a < b: its sides are the subject's low and high)."""
    ids = set(pair_ids)
    if not ids:
        return {}
    sides = set(CandidatePair.objects.filter(id__in=ids).values_list("a_id", "b_id"))
    if not sides:
        return {}
    out: dict[int, tuple[int, int]] = {}
    for pk, a, b in CandidatePair.objects.filter(
        a_id__in={a for a, _ in sides}, b_id__in={b for _, b in sides}
    ).values_list("id", "a_id", "b_id"):
        if (a, b) in sides:
            out[pk] = (a, b)
    return out


def _recrawled_ids(pair_ids: Iterable[int]) -> set[int]:
    """The pairs with a side re-crawled since: a newer snapshot of a's or b's URL (not
    the pair's other side: two snapshots of one URL are what such a pair compares)
    whose main text under the pair's method differs — another text SHA-256 or another
    fingerprint status. Three queries for the whole batch."""
    ids = list(pair_ids)
    if not ids:
        return set()
    pairs = list(
        CandidatePair.objects.filter(id__in=ids).values_list(
            "id", "method_id", "a_id", "b_id", "a__url", "a__fetched_at", "b__url", "b__fetched_at"
        )
    )
    urls = {p[4] for p in pairs} | {p[6] for p in pairs}
    snapshots: dict[str, list[tuple[int, datetime]]] = defaultdict(list)
    for doc, url, when in Document.objects.filter(url__in=urls).values_list(
        "id", "url", "fetched_at"
    ):
        snapshots[url].append((doc, when))
    if all(len(v) < 2 for v in snapshots.values()):
        return set()
    docs = {d for versions in snapshots.values() for d, _ in versions}
    # (digest, whether it has a SimHash: its status, ingest.models.Fingerprint.status)
    prints = {
        (doc, method): (sha, simhash is None)
        for doc, method, sha, simhash in Fingerprint.objects.filter(
            document_id__in=docs,
            method_id__in={p[1] for p in pairs},
        ).values_list("document_id", "method_id", "text_sha256", "simhash")
    }
    out = set()
    for pk, method, a, b, url_a, when_a, url_b, when_b in pairs:
        for side, url, when in ((a, url_a, when_a), (b, url_b, when_b)):
            own = prints.get((side, method))
            if own is None:
                continue
            if any(
                later > when and doc not in (a, b) and prints.get((doc, method), own) != own
                for doc, later in snapshots[url]
            ):
                out.add(pk)
    return out


def guard_bits(numbers_differ: bool, ids_differ: bool, title_differs: bool) -> int:
    """The three guards as one small integer (PairState.guards, QueueTally.guards)."""
    return int(numbers_differ) | int(ids_differ) << 1 | int(title_differs) << 2


@transaction.atomic
def pair_states_refresh(*, pair_ids: Iterable[int]) -> None:
    """Recompute the state of these pairs, and of every other pair of the same two
    documents, from their subjects' labels and adjudications (idempotent), and the label
    tally with them."""
    subjects = subject_pairs(pair_ids)
    ids = sorted(subjects)
    if not ids:
        return
    wall_mark = _wall_mark_locked()
    old = [(s.pair_id, _label_key(s)) for s in PairState.objects.filter(pair_id__in=ids)]
    lows = {low for low, _ in subjects.values()}
    highs = {high for _, high in subjects.values()}
    by_subject = {
        (r["doc_low"], r["doc_high"]): r
        for r in _current()
        .filter(doc_low__in=lows, doc_high__in=highs)
        .values("doc_low", "doc_high")
        .annotate(
            n=Count("id"),
            v=Count("verdict", distinct=True),
            distinct=Count("id", filter=Q(verdict=Label.Verdict.DISTINCT)),
            lo=Min("extractor_version"),
            hi=Max("extractor_version"),
        )
    }
    rows = {pk: by_subject[s] for pk, s in subjects.items() if s in by_subject}
    recrawled = _recrawled_ids(rows)
    settled: dict[tuple[int, int], str] = {}
    for a, b, verdict in (
        Adjudication.objects.filter(pair__a_id__in=lows, pair__b_id__in=highs)
        .order_by("created_at", "id")
        .values_list("pair__a_id", "pair__b_id", "verdict")
    ):
        settled[(a, b)] = verdict  # the latest wins, whichever method's pair it was on
    final = {pk: settled[s] for pk, s in subjects.items() if s in settled}
    facts = {
        f[0]: f
        for f in CandidatePair.objects.filter(id__in=ids).values_list(
            "id",
            "method_id",
            "a_id",
            "b_id",
            "doc_type",
            "distance",
            "channels",
            "numbers_differ",
            "ids_differ",
            "title_differs",
            "below_floor",
            "exact",
        )
    }
    states = []
    for pair_id in ids:
        if pair_id not in facts:
            continue
        r = rows.get(pair_id)
        version = "" if r is None else (r["lo"] if r["lo"] == r["hi"] else "*")
        _, method, a, b, doc_type, distance, bits, numbers, ids_, title, floor, exact = facts[
            pair_id
        ]
        states.append(
            PairState(
                pair_id=pair_id,
                labels=r["n"] if r else 0,
                verdicts=r["v"] if r else 0,
                extractor_version=version,
                recrawled=pair_id in recrawled,
                adjudicated_verdict=final.get(pair_id, ""),
                method_ref=method,
                side_a=a,
                side_b=b,
                doc_type=doc_type,
                distance=distance,
                channels=bits,
                guards=guard_bits(numbers, ids_, title),
                queued=not floor and not exact,
                distinct_labels=r["distinct"] if r else 0,
            )
        )
    PairState.objects.bulk_create(
        states,
        update_conflicts=True,
        unique_fields=["pair"],
        update_fields=[
            "labels",
            "verdicts",
            "extractor_version",
            "recrawled",
            "adjudicated_verdict",
            *FACTS,
            "updated_at",
        ],
    )
    # A pair's sides never change: they are those of its old state (walls judged alike).
    sides = {s.side_a for s in states} | {s.side_b for s in states}
    walled = set(
        _walls_upto(wall_mark).filter(document_id__in=sides).values_list("document_id", flat=True)
    )
    kept = {s.pair_id for s in states if s.side_a not in walled and s.side_b not in walled}
    delta: Counter[LabelKey] = Counter(
        k for s in states if s.pair_id in kept and (k := _label_key(s)) is not None
    )
    # Old states of pairs that are gone (a cascade) are not refreshed: recounts fix them.
    delta.subtract(k for pair_id, k in old if k is not None and pair_id in kept)
    label_tally_add(delta)


def pair_states_rebuild() -> int:
    """Recompute every labelled pair's state (and drop the others'). Returns pairs."""
    with transaction.atomic():
        last_label = Label.objects.aggregate(m=Max("id"))["m"] or 0
        last_print = last_print_above(UNSET)
        last_pair = CandidatePair.objects.aggregate(m=Max("id"))["m"] or 0
        ids = sorted(
            CandidatePair.objects.filter(subject_labelled() | subject_adjudicated()).values_list(
                "id", flat=True
            )
        )
        PairState.objects.exclude(pair_id__in=ids).delete()
        for start in range(0, len(ids), SYNC_BATCH):
            pair_states_refresh(pair_ids=ids[start : start + SYNC_BATCH])
        watermark_put(LABELS, last_label)
        watermark_put(FINGERPRINTS, last_print)
        watermark_put(SUBJECTS, last_pair)
        label_tally_recount(wall_mark=_wall_mark_locked())
    return len(ids)


def sync_reads() -> dict[str, Subquery]:
    """What pair_states_sync reads, as expressions for a caller's one statement (the
    last fingerprint is read apart, above its watermark: last_print_above)."""
    return {
        "last_label": Subquery(Label.objects.order_by("-id").values("id")[:1]),
        "last_pair": Subquery(CandidatePair.objects.order_by("-id").values("id")[:1]),
    }


def last_print_above(mark: int) -> int:
    """The largest fingerprint id above the watermark (the mark when there is none). The
    fingerprints' `id` index is a BRIN index on PostgreSQL (ingest.models.WatermarkIndex),
    which cannot give the largest value by itself: it gives the heap's runs holding ids
    above the mark, the newest rows. The mark goes in as a value so that the planner sees
    how few rows lie above it (as a parameter of one statement it would plan a scan)."""
    found = Fingerprint.objects.filter(id__gt=mark).aggregate(m=Max("id"))["m"]
    return max(mark, 0) if found is None else int(found)


def _new_pairs_of_labelled_subjects(*, mark: int, last_pair: int) -> int:
    """Give the pairs made since `mark` whose two documents were already labelled (on
    another method's pair, or nominated now by another channel) their subject's state,
    and move the mark past the pairs old enough that no earlier one can still commit
    (QUEUE_TALLY_LAG_SECONDS). Returns the pairs refreshed."""
    if last_pair <= mark:
        return 0
    fresh = CandidatePair.objects.filter(id__gt=mark, id__lte=last_pair)
    ids = list(
        fresh.filter(subject_labelled() | subject_adjudicated())
        .exclude(review_state__labels__gt=0)
        .exclude(review_state__adjudicated_verdict__gt="")
        .values_list("id", flat=True)
    )
    if ids:
        pair_states_refresh(pair_ids=ids)
    cutoff = timezone.now() - timedelta(seconds=settings.QUEUE_TALLY_LAG_SECONDS)
    settled = fresh.filter(created_at__lt=cutoff).aggregate(m=Max("id"))["m"]
    if settled is not None and settled > mark:
        watermark_put(SUBJECTS, settled)
    return len(ids)


def pair_states_sync(*, seen: tuple[dict[str, int], int, int] | None = None) -> int:
    """Bring the states up to date with labels, fingerprints and pairs stored since the
    last call: the pairs of new labels, the labelled pairs with a side whose URL has a
    newly fingerprinted snapshot, and the new pairs of labelled subjects. Four small
    queries when nothing is new, one when the caller read the others (`seen`: the
    watermarks, the last label id and the last pair id, as `sync_reads()` gives them;
    the last fingerprint is read above its watermark). Returns the pairs refreshed."""
    names = (LABELS, FINGERPRINTS, SUBJECTS)
    if seen is None:
        marks = dict(Watermark.objects.filter(name__in=names).values_list())
        last_label = Label.objects.aggregate(m=Max("id"))["m"] or 0
        last_pair = CandidatePair.objects.aggregate(m=Max("id"))["m"] or 0
    else:
        marks, last_label, last_pair = seen
        marks = {k: v for k, v in marks.items() if k in names}
    if len(marks) < len(names) or min(marks.values()) <= UNSET:
        return pair_states_rebuild()
    last_print = last_print_above(marks[FINGERPRINTS])
    refreshed = 0
    mark = marks[LABELS]
    while mark < last_label:
        upto = min(mark + SYNC_BATCH, last_label)
        ids = set(Label.objects.filter(id__gt=mark, id__lte=upto).values_list("pair_id", flat=True))
        pair_states_refresh(pair_ids=ids)
        refreshed += len(ids)
        mark = upto
    if marks[LABELS] < last_label:
        watermark_put(LABELS, last_label)
    mark = marks[FINGERPRINTS]
    while mark < last_print:
        upto = min(mark + SYNC_BATCH, last_print)
        urls = set(
            Fingerprint.objects.filter(id__gt=mark, id__lte=upto).values_list(
                "document__url", flat=True
            )
        )
        if urls:
            ids = set(
                PairState.objects.filter(labels__gt=0)
                .filter(Q(pair__a__url__in=urls) | Q(pair__b__url__in=urls))
                .values_list("pair_id", flat=True)
            )
            pair_states_refresh(pair_ids=ids)
            refreshed += len(ids)
        mark = upto
    if marks[FINGERPRINTS] < last_print:
        watermark_put(FINGERPRINTS, last_print)
    refreshed += _new_pairs_of_labelled_subjects(mark=marks[SUBJECTS], last_pair=last_pair)
    return refreshed
