"""Per-pair review state (reviews.models.PairState): label counts, distinct verdicts,
the labels' extractor version and whether a re-crawl changed a side. The label services
refresh a pair's state when they append a label; pair_states_sync, run before the queue
is read, picks up labels written any other way and re-crawls (new fingerprints) from
two watermarks. The queue reads only this table, never the labels."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Max, Min, Q, QuerySet

from ingest.models import CandidatePair, Document, Fingerprint
from reviews.models import Adjudication, Label, PairState, Watermark

SYNC_BATCH = 5000
# The pair's facts copied into its state (a pair never changes them).
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
FINGERPRINTS = "pair_states.fingerprint"
LABELS = "pair_states.label"


def _current() -> QuerySet[Label]:
    return Label.objects.filter(superseded_by__isnull=True, retraction=False)


def _recrawled_ids(pair_ids: Iterable[int]) -> set[int]:
    """The pairs with a side re-crawled since: a newer snapshot of a's or b's URL (not
    the pair's other side: two snapshots of one URL are what such a pair compares)
    whose main text under the pair's method differs — another text SHA-256 or another
    fingerprint status. Three queries for the whole batch."""
    ids = list(pair_ids)
    if not ids:
        return set()
    pairs = list(
        CandidatePair.objects.filter(pk__in=ids).values_list(
            "pk", "method_id", "a_id", "b_id", "a__url", "a__fetched_at", "b__url", "b__fetched_at"
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
    prints = {
        (doc, method): (sha, status)
        for doc, method, sha, status in Fingerprint.objects.filter(
            document_id__in=docs,
            method_id__in={p[1] for p in pairs},
            branch=Fingerprint.Branch.MAIN,
        ).values_list("document_id", "method_id", "text_sha256", "status")
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


def pair_states_refresh(*, pair_ids: Iterable[int]) -> None:
    """Recompute the state of these pairs from their labels (idempotent)."""
    ids = sorted(set(pair_ids))
    if not ids:
        return
    rows = {
        r["pair_id"]: r
        for r in _current()
        .filter(pair_id__in=ids)
        .values("pair_id")
        .annotate(
            n=Count("id"),
            v=Count("verdict", distinct=True),
            distinct=Count("id", filter=Q(verdict=Label.Verdict.DISTINCT)),
            lo=Min("extractor_version"),
            hi=Max("extractor_version"),
        )
    }
    recrawled = _recrawled_ids(rows)
    final: dict[int, str] = {}
    for pair_id, verdict in (
        Adjudication.objects.filter(pair_id__in=ids)
        .order_by("created_at", "id")
        .values_list("pair_id", "verdict")
    ):
        final[pair_id] = verdict  # the latest wins
    facts = {
        f[0]: f
        for f in CandidatePair.objects.filter(pk__in=ids).values_list(
            "pk",
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


def _mark_set(name: str, value: int) -> None:
    Watermark.objects.bulk_create(
        [Watermark(name=name, value=value)],
        update_conflicts=True,
        unique_fields=["name"],
        update_fields=["value"],
    )


def pair_states_rebuild() -> int:
    """Recompute every labelled pair's state (and drop the others'). Returns pairs."""
    with transaction.atomic():
        last_label = Label.objects.aggregate(m=Max("id"))["m"] or 0
        last_print = Fingerprint.objects.aggregate(m=Max("id"))["m"] or 0
        ids = sorted(
            set(_current().values_list("pair_id", flat=True))
            | set(Adjudication.objects.values_list("pair_id", flat=True))
        )
        PairState.objects.exclude(pair_id__in=ids).delete()
        for start in range(0, len(ids), SYNC_BATCH):
            pair_states_refresh(pair_ids=ids[start : start + SYNC_BATCH])
        _mark_set(LABELS, last_label)
        _mark_set(FINGERPRINTS, last_print)
    return len(ids)


def pair_states_sync() -> int:
    """Bring the states up to date with labels and fingerprints stored since the last
    call: the pairs of new labels, and the labelled pairs with a side whose URL has a
    newly fingerprinted snapshot. Three small queries when nothing is new. Returns the
    pairs refreshed."""
    marks = dict(Watermark.objects.filter(name__in=(LABELS, FINGERPRINTS)).values_list())
    if len(marks) < 2:
        return pair_states_rebuild()
    last_label = Label.objects.aggregate(m=Max("id"))["m"] or 0
    last_print = Fingerprint.objects.aggregate(m=Max("id"))["m"] or 0
    refreshed = 0
    mark = marks[LABELS]
    while mark < last_label:
        upto = min(mark + SYNC_BATCH, last_label)
        ids = set(Label.objects.filter(id__gt=mark, id__lte=upto).values_list("pair_id", flat=True))
        pair_states_refresh(pair_ids=ids)
        refreshed += len(ids)
        mark = upto
    if marks[LABELS] < last_label:
        _mark_set(LABELS, last_label)
    mark = marks[FINGERPRINTS]
    while mark < last_print:
        upto = min(mark + SYNC_BATCH, last_print)
        urls = set(
            Fingerprint.objects.filter(
                id__gt=mark, id__lte=upto, branch=Fingerprint.Branch.MAIN
            ).values_list("document__url", flat=True)
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
        _mark_set(FINGERPRINTS, last_print)
    return refreshed
