"""What the review queue keeps so that a page of it does not read every pair.

- `CandidatePair.uncertainty`: |distance - the doc type's threshold| (plus
  `SEMANTIC_ONLY_RANK` for a pair the semantic channel alone nominated, so that it ranks
  below every other pair: ingest.core.channels.queue_rank), the queue's first order,
  stored under an index so that a page is the first rows of that index. Set for the
  pairs newer than the tally's watermark on every read of the queue, and for every
  pair when the thresholds change.
- `QueueTally`: the pairs the queue can serve (neither exact nor under the floor, no
  side a wall page) counted by method, doc type, distance, channels and guards, up to
  two watermarks (the last pair, the last extraction). Pairs and extractions are only
  ever added, and a page is a wall for good once its extraction says so, so the counts
  of today are the tally, plus the pairs since the watermark without a wall side,
  minus the tallied pairs with a side that became a wall since: a few small queries.
  One change to a pair comes later: a late cosine (ingest.candidates
  pairs_cosine_update) adds the semantic bit and lifts the pair over the similarity
  floor. Its signals reach `_pairs_changing` (the watermarks locked before the pairs'
  rows, so the change and a move of the watermarks never interleave) and
  `_pairs_changed` (the tallied pairs moved from their old key to the new one, their
  review states refreshed, the label tally with them), in the change's transaction.
- `LabelTally`: the labelled pairs among them, by the same facts and disputed / stale,
  kept by the review states' writer (reviews.queue.pair_states) as labels come in, up to the
  same wall watermark. The counts take them out of the pairs' counts.

`queue_tally_rebuild()` (the `queue_tally_rebuild` command) counts both from scratch:
after a data migration that rewrites pairs' facts or an extraction's status, or to repair
a tally found wrong.

The watermarks move only past rows older than `QUEUE_TALLY_LAG_SECONDS`, so that a
row whose transaction commits after a later one is never skipped; newer rows are
counted live. A new extractor version rebuilds the tally (walls are judged by the
current extraction).
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Case, Count, F, IntegerField, Max, Q, QuerySet, Subquery, When
from django.db.models import Value as V
from django.db.models.functions import Abs
from django.utils import timezone

from dedup_site.transactions import conflict_retry
from ingest.candidates import PairFacts, pair_facts_changed, pair_facts_changing
from ingest.channels.thresholds import threshold_for
from ingest.core import channels
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import WALL_STATUSES, CandidatePair, Extraction, FingerprintMethod
from reviews.models import LabelTally, PairState, QueueTally, Watermark
from reviews.queue.compiled_sql import compiled_rows
from reviews.queue.pair_states import (
    LabelKey,
    label_key_counts,
    label_tally_add,
    label_tally_recount,
    pair_states_refresh,
    pair_states_sync,
    sync_reads,
)
from reviews.queue.watermarks import (
    FINGERPRINTS,
    LABELS,
    ORDER,
    PAIRS,
    SUBJECTS,
    TALLY_WALLS,
    VERSION,
    watermark_put,
    watermarks_lock,
)

WALLS = TALLY_WALLS
STATE_MARKS = (LABELS, FINGERPRINTS, SUBJECTS)  # the review states' (read in the same statement)
# The row that is always there, so that one read returns the watermarks with the tally.
SENTINEL = {"method_ref": 0, "doc_type": "", "distance": -1, "channels": 0, "guards": 0}
Key = tuple[int, str, int, int, int]  # method, doc type, distance, channels, guards
TALLY_COLUMNS = ("method_ref", "doc_type", "distance", "channels", "guards", "n", "pm", "wm", "st")


def _stamp(text: str) -> int:
    return zlib.crc32(text.encode())


def threshold_case() -> Case:
    return Case(
        *[When(doc_type=t, then=V(threshold_for(t))) for t in settings.DOC_TYPES],
        default=V(threshold_for("other")),
        output_field=IntegerField(),
    )


def _uncertainty() -> Any:
    """ingest.core.channels.queue_rank in SQL: semantic-only pairs rank last."""
    return Abs(F("distance") - threshold_case()) + Case(
        When(channels=channels.SEMANTIC, then=V(channels.SEMANTIC_ONLY_RANK)),
        default=V(0),
        output_field=IntegerField(),
    )


def _thresholds_stamp() -> int:
    order = {t: threshold_for(t) for t in (*settings.DOC_TYPES, "other")}
    # The semantic-only rank is part of the order: a change of it re-orders every pair.
    return _stamp(
        json.dumps({**order, "semantic_only": channels.SEMANTIC_ONLY_RANK}, sort_keys=True)
    )


def walls(*, after: int | None = None, upto: int | None = None) -> QuerySet[Extraction, Any]:
    """Documents whose current extraction says they are not content (login walls,
    captchas, errors), optionally only those extracted in (after, upto]."""
    qs = Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION, status__in=WALL_STATUSES)
    if after is not None:
        qs = qs.filter(id__gt=after)
    if upto is not None:
        qs = qs.filter(id__lte=upto)
    return qs.values("document_id")


def _no_wall(w: QuerySet[Extraction, Any]) -> Q:
    return ~Q(a_id__in=w) & ~Q(b_id__in=w)


def _guards_expr() -> Any:
    return (
        Case(When(numbers_differ=True, then=V(1)), default=V(0))
        + Case(When(ids_differ=True, then=V(2)), default=V(0))
        + Case(When(title_differs=True, then=V(4)), default=V(0))
    )


def _key_count_query(qs: QuerySet[CandidatePair]) -> QuerySet[CandidatePair, Any]:
    return (
        qs.filter(below_floor=False, exact=False)
        .annotate(g=_guards_expr())
        .values_list("method_id", "doc_type", "distance", "channels", "g")
        .annotate(n=Count("id"))
        .order_by()
    )


def _key_counts(qs: QuerySet[CandidatePair]) -> Counter[Key]:
    out: Counter[Key] = Counter()
    for m, t, d, c, g, n in _key_count_query(qs):
        out[(m, t, d, c, g)] += n
    return out


def _key_counts_rows(key: tuple[Any, ...], build: Any) -> Counter[Key]:
    """_key_counts of the pairs `build()` gives, compiled once for this key."""
    out: Counter[Key] = Counter()
    for m, t, d, c, g, n in compiled_rows(key, lambda: _key_count_query(build())):
        out[(m, t, d, c, g)] += n
    return out


def _cutoff() -> Any:
    return timezone.now() - timedelta(seconds=settings.QUEUE_TALLY_LAG_SECONDS)


def _locked_marks() -> dict[str, int]:
    """The tally's watermarks, locked until the transaction ends (one writer at a time;
    in the one order of reviews.queue.watermarks)."""
    return watermarks_lock(PAIRS, WALLS, VERSION)


def _settled(model: type[CandidatePair] | type[Extraction], after: int) -> int:
    """The last id of the rows older than the lag (rows after `after` only)."""
    m = model.objects.filter(id__gt=after, created_at__lt=_cutoff()).aggregate(m=Max("id"))["m"]
    return max(m or 0, after)


def _settled_expr(model: type[CandidatePair] | type[Extraction], mark: str) -> Subquery:
    """_settled as an expression: the last id older than the lag, after the mark."""
    after = Subquery(Watermark.objects.filter(name=mark).values("value")[:1])
    return Subquery(
        model.objects.filter(id__gt=after, created_at__lt=_cutoff())
        .order_by("-id")
        .values("id")[:1]
    )


def queue_tally_rebuild() -> None:
    """Count the tally from scratch (the queue does it when the extractor changes)."""
    with transaction.atomic():
        _locked_marks()
        _rebuild()


def _rebuild() -> None:
    pm, wm = _settled(CandidatePair, 0), _settled(Extraction, 0)
    counts = _key_counts(CandidatePair.objects.filter(id__lte=pm).filter(_no_wall(walls(upto=wm))))
    QueueTally.objects.all().delete()
    QueueTally.objects.bulk_create(
        [QueueTally(**SENTINEL)]
        + [
            QueueTally(method_ref=m, doc_type=t, distance=d, channels=c, guards=g, n=n)
            for (m, t, d, c, g), n in counts.items()
        ],
        batch_size=1000,
    )
    label_tally_recount(wall_mark=wm)
    watermark_put(PAIRS, pm)
    watermark_put(WALLS, wm)
    watermark_put(VERSION, _stamp(EXTRACTOR_VERSION))


def _advance(pm_to: int, wm_to: int) -> None:
    """Move the watermarks: take out the tallied pairs that gained a wall side, add the
    pairs since (all under the lock, so that no two requests add the same pairs)."""
    with transaction.atomic():
        marks = _locked_marks()
        if marks[VERSION] != _stamp(EXTRACTOR_VERSION):
            _rebuild()
            return
        pm, wm = marks[PAIRS], marks[WALLS]
        pm_to, wm_to = max(pm_to, pm), max(wm_to, wm)
        if (pm_to, wm_to) == (pm, wm):
            return
        delta: Counter[Key] = Counter()
        if wm_to > wm:
            new_walls = walls(after=wm, upto=wm_to)
            old_walls = walls(upto=wm)
            walled = label_key_counts(
                PairState.objects.filter(Q(side_a__in=new_walls) | Q(side_b__in=new_walls))
                .exclude(side_a__in=old_walls)
                .exclude(side_b__in=old_walls)
            )
            label_tally_add(Counter({k: -n for k, n in walled.items()}))
            delta.subtract(
                _key_counts(
                    CandidatePair.objects.filter(id__lte=pm)
                    .filter(
                        Q(a_id__in=walls(after=wm, upto=wm_to))
                        | Q(b_id__in=walls(after=wm, upto=wm_to))
                    )
                    .filter(_no_wall(walls(upto=wm)))
                )
            )
        if pm_to > pm:
            delta.update(
                _key_counts(
                    CandidatePair.objects.filter(id__gt=pm, id__lte=pm_to).filter(
                        _no_wall(walls(upto=wm_to))
                    )
                )
            )
        _tally_add(delta)
        watermark_put(PAIRS, pm_to)
        watermark_put(WALLS, wm_to)


def _tally_add(delta: Counter[Key]) -> None:
    delta = Counter({k: v for k, v in delta.items() if v})
    if not delta:
        return
    have = {
        (r.method_ref, r.doc_type, r.distance, r.channels, r.guards): r.n
        for r in QueueTally.objects.all()
    }
    rows = []
    for key in sorted(delta):
        m, t, d, c, g = key
        n = have.get(key, 0) + delta[key]
        rows.append(QueueTally(method_ref=m, doc_type=t, distance=d, channels=c, guards=g, n=n))
    QueueTally.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["method_ref", "doc_type", "distance", "channels", "guards"],
        update_fields=["n"],
    )


def _pairs_changing(*, pair_ids: list[int], **_: Any) -> None:
    """A late cosine is about to change these pairs' facts (ingest.candidates
    pairs_cosine_update): take the tally's lock before the pairs' rows, so that the
    change and a move of the watermarks happen one after the other, never interleaved."""
    _locked_marks()


def _pairs_changed(*, before: dict[int, PairFacts], **_: Any) -> None:
    """These pairs' channels (and floor) changed: move the ones the tally holds (up to
    its pair watermark, exact-free, no side a wall up to its wall watermark) from their
    old key to their new one, and refresh their review states (the label tally with
    them). Pairs after the watermark are counted live from their rows."""
    marks = _locked_marks()  # held since _pairs_changing: these are the marks in force
    if marks[VERSION] == _stamp(EXTRACTOR_VERSION):
        tallied = [pk for pk in before if pk <= marks[PAIRS]]
        delta: Counter[Key] = Counter()
        for pk, m, t, d, c, g, floor in (
            CandidatePair.objects.filter(id__in=tallied, exact=False)
            .filter(_no_wall(walls(upto=marks[WALLS])))
            .annotate(g=_guards_expr())
            .values_list("id", "method_id", "doc_type", "distance", "channels", "g", "below_floor")
        ):
            old = before[pk]
            if not old.below_floor:
                delta[(m, t, d, old.channels, g)] -= 1
            if not floor:
                delta[(m, t, d, c, g)] += 1
        _tally_add(delta)
    # (A tally of another extractor version is rebuilt by the next read of the queue.)
    stated = PairState.objects.filter(pair_id__in=list(before)).values_list("pair_id", flat=True)
    pair_states_refresh(pair_ids=list(stated))


def signals_connect() -> None:
    """Hear of late changes to pairs' facts (ingest never imports reviews)."""
    pair_facts_changing.connect(
        _pairs_changing, sender=CandidatePair, weak=False, dispatch_uid="queue-tally-changing"
    )
    pair_facts_changed.connect(
        _pairs_changed, sender=CandidatePair, weak=False, dispatch_uid="queue-tally-changed"
    )


@conflict_retry
def queue_sync() -> None:
    """Bring what the queue reads up to date: the review states, the stored order of the
    new pairs (of every pair after a change of thresholds) and the tally's watermarks.
    Two statements when nothing is new (the watermarks with the last ids, then the last
    fingerprint above its watermark: reviews.queue.pair_states.last_print_above)."""
    rows = list(
        Watermark.objects.filter(name__in=(PAIRS, WALLS, VERSION, ORDER, *STATE_MARKS))
        .annotate(
            **sync_reads(),
            pm_to=_settled_expr(CandidatePair, PAIRS),
            wm_to=_settled_expr(Extraction, WALLS),
        )
        .values_list("name", "value", "last_label", "last_pair", "pm_to", "wm_to")
    )
    marks = {name: value for name, value, *_ in rows}
    last_label, last_pair, settled_pair, settled_wall = (
        rows[0][2:] if rows else (None, None, None, None)
    )
    if rows:
        pair_states_sync(seen=(marks, last_label or 0, last_pair or 0))
    else:
        pair_states_sync()
    order = _thresholds_stamp()
    if marks.get(ORDER) != order:
        with transaction.atomic():
            watermarks_lock(ORDER)  # the watermarks before the pairs' rows, as everywhere
            CandidatePair.objects.exclude(uncertainty=_uncertainty()).update(
                uncertainty=_uncertainty()
            )
            watermark_put(ORDER, order)
    elif last_pair is None or last_pair > marks.get(PAIRS, 0):
        CandidatePair.objects.filter(id__gt=marks.get(PAIRS, 0)).exclude(
            uncertainty=_uncertainty()
        ).update(uncertainty=_uncertainty())
    if marks.get(VERSION) != _stamp(EXTRACTOR_VERSION) or PAIRS not in marks or WALLS not in marks:
        queue_tally_rebuild()
        return
    pm, wm = marks[PAIRS], marks[WALLS]
    pm_to, wm_to = max(settled_pair or 0, pm), max(settled_wall or 0, wm)
    if (pm_to, wm_to) != (pm, wm):
        _advance(pm_to, wm_to)


def _methods(method_key: str) -> QuerySet[FingerprintMethod, Any]:
    qs = FingerprintMethod.objects.filter(retired_at__isnull=True)
    if method_key:
        qs = qs.filter(key=method_key)
    return qs.values("pk")


def pair_count_rows(
    *, method: str = "", distance_min: int | None = None, distance_max: int | None = None
) -> list[dict[str, Any]]:
    """The pairs the queue can serve under these filters, counted by doc type, channels,
    guards and review status, in the rows of one GROUP BY over the pairs (the
    queue's counts): from the tally, the pairs and walls since its watermarks and the
    label tally. Three queries whatever the number of pairs and labels (five while pages
    found to be walls in the last minutes are taken out), each compiled once per shape
    (reviews.queue.compiled_sql)."""
    shape = (method, distance_min, distance_max, EXTRACTOR_VERSION)

    def scopes() -> tuple[Q, Q]:
        scope = Q(method_ref__in=_methods(method))
        pair_scope = Q(method_id__in=_methods(method))
        if distance_min is not None:
            scope &= Q(distance__gte=distance_min)
            pair_scope &= Q(distance__gte=distance_min)
        if distance_max is not None:
            scope &= Q(distance__lte=distance_max)
            pair_scope &= Q(distance__lte=distance_max)
        return scope, pair_scope

    def mark(name: str) -> Subquery:
        return Subquery(Watermark.objects.filter(name=name).values("value")[:1])

    def tallies() -> QuerySet[Any, Any]:
        # One statement reads both tallies with their watermarks: a request moving them
        # commits all at once. `st`: -1 a row of the pairs, else a row of the labelled
        # ones (1 disputed, 2 stale).
        scope, _ = scopes()
        pair_rows = (
            QueueTally.objects.filter(scope | Q(**SENTINEL))
            .annotate(pm=mark(PAIRS), wm=mark(WALLS), st=V(-1))
            .values_list(*TALLY_COLUMNS)
        )
        label_rows = (
            LabelTally.objects.filter(scope)
            .annotate(
                pm=mark(PAIRS),
                wm=mark(WALLS),
                st=Case(When(disputed=True, then=V(1)), default=V(0))
                + Case(When(stale=True, then=V(2)), default=V(0)),
            )
            .values_list(*TALLY_COLUMNS)
        )
        return pair_rows.union(label_rows, all=True)

    total: Counter[tuple[str, int, int]] = Counter()
    labelled: Counter[tuple[str, int, int, bool, bool]] = Counter()
    pm = wm = None
    for m, t, d, c, g, n, pm_now, wm_now, st in compiled_rows(("tallies", *shape), tallies):
        pm, wm = pm_now, wm_now
        if st >= 0:
            labelled[(t, c, g, bool(st & 1), bool(st & 2))] += n
        elif (m, t, d) != (0, "", -1):
            total[(t, c, g)] += n
    if pm is None or wm is None:
        raise RuntimeError("the queue tally is not built (queue_sync first)")
    new = _key_counts_rows(
        ("new pairs", *shape, pm),
        lambda: CandidatePair.objects.filter(scopes()[1], id__gt=pm).filter(_no_wall(walls())),
    )
    # Pages found to be walls since the watermark (few: the last minutes of ingest).
    new_walls = [
        d
        for (d,) in compiled_rows(
            ("new walls", EXTRACTOR_VERSION, wm),
            lambda: walls(after=wm).values_list("document_id"),
        )
    ]
    walled = Counter[Key]()
    walled_labelled = Counter[LabelKey]()
    if new_walls:
        scope, pair_scope = scopes()
        walled = _key_counts(
            CandidatePair.objects.filter(pair_scope, id__lte=pm)
            .filter(Q(a_id__in=new_walls) | Q(b_id__in=new_walls))
            .filter(_no_wall(walls(upto=wm)))
        )
        old_walls = walls(upto=wm)
        walled_labelled = label_key_counts(
            PairState.objects.filter(scope)
            .filter(Q(side_a__in=new_walls) | Q(side_b__in=new_walls))
            .exclude(side_a__in=old_walls)
            .exclude(side_b__in=old_walls)
        )
    for (_, t, _, c, g), n in new.items():
        total[(t, c, g)] += n
    for (_, t, _, c, g), n in walled.items():
        total[(t, c, g)] -= n
    for (_, t, _, c, g, disputed, stale), n in walled_labelled.items():
        labelled[(t, c, g, disputed, stale)] -= n
    out = []
    for (t, c, g, disputed, stale), n in labelled.items():
        if n:
            total[(t, c, g)] -= n
            out.append(_row(t, c, g, True, disputed, stale, n))
    out += [_row(t, c, g, False, False, False, n) for (t, c, g), n in total.items() if n]
    return out


def _row(
    doc_type: str, bits: int, guards: int, labeled: bool, disputed: bool, stale: bool, n: int
) -> dict[str, Any]:
    return {
        "doc_type": doc_type,
        "channels": bits,
        "numbers_differ": bool(guards & 1),
        "ids_differ": bool(guards & 2),
        "title_differs": bool(guards & 4),
        "is_labeled": labeled,
        "is_disputed": disputed,
        "is_stale": stale,
        "n": n,
    }
