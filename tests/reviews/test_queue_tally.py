"""The queue's counts come from a tally kept as pairs, walls and labels come in; after
every kind of change they equal a count of every pair from scratch, and the stored
order equals the order computed from the thresholds."""

from collections import Counter
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db.models import F

from ingest import candidates
from ingest.candidates import threshold_for
from ingest.core import channels
from ingest.core.channels import ACTIVE, SEMANTIC
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidatePair, Document, Extraction
from reviews.decisions import group_splits
from reviews.labels import labelling
from reviews.models import LabelTally, PairState, QueueTally, Watermark
from reviews.queue import group_queue, pair_queue, queue_counts, queue_filters
from reviews.queue.pair_states import TALLY_WALLS, label_key_counts, pair_states_rebuild
from reviews.queue.queue_filters import QueueFilters
from reviews.queue.queue_tally import (
    ORDER,
    _uncertainty,
    pair_count_rows,
    queue_sync,
    queue_tally_rebuild,
    walls,
)
from tests import factories
from tests.reviews.conftest import BASE, TEXT, find, group_of, pair_of, reviewed_document

pytestmark = pytest.mark.django_db
ALL = QueueFilters()
FACETS = ("status", "kind", "doc_type", "guard", "channel")


@pytest.fixture(params=[0, 600], ids=["tallied", "live"])
def lag(request, settings) -> int:
    """0: every pair and page is older than the lag, so the tally holds them all;
    600: everything is newer, so it is all counted live."""
    settings.QUEUE_TALLY_LAG_SECONDS = request.param
    return request.param


def _rows(rows: list[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
    out: Counter[tuple[Any, ...]] = Counter()
    for r in rows:
        out[tuple(r[k] for k in sorted(r) if k != "n")] += r["n"]
    return +out


def _recount(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, int]]:
    """The queue's counts with the pairs counted from scratch (one GROUP BY over every
    pair, as the queue does under a site filter)."""
    with monkeypatch.context() as m:
        m.setattr(
            queue_counts,
            "pair_count_rows",
            lambda **kw: pair_queue.pair_rows_in_scope(QueueFilters(**kw)),
        )
        return queue_counts.queue_counts(filters=ALL)


def _label_tally() -> Counter[tuple[Any, ...]]:
    return +Counter(
        {
            (r.method_ref, r.doc_type, r.distance, r.channels, r.guards, r.disputed, r.stale): r.n
            for r in LabelTally.objects.all()
        }
    )


def _label_recount() -> Counter[tuple[Any, ...]]:
    """The labelled states the label tally should hold, counted from scratch."""
    old_walls = walls(upto=Watermark.objects.get(name=TALLY_WALLS).value)
    return +label_key_counts(
        PairState.objects.exclude(side_a__in=old_walls).exclude(side_b__in=old_walls)
    )


def assert_counts_true(monkeypatch: pytest.MonkeyPatch) -> None:
    queue_sync()
    # The labelled part, kept as labels come in, equals a count of the review states.
    assert _label_tally() == _label_recount()
    kept = _rows(pair_count_rows())
    fresh = _rows(pair_queue.pair_rows_in_scope(ALL))
    assert kept == fresh
    for distance_max in (0, 2):
        kept = _rows(pair_count_rows(distance_max=distance_max))
        fresh = _rows(pair_queue.pair_rows_in_scope(ALL.replace(distance_max=distance_max)))
        assert kept == fresh
    shown = queue_counts.queue_counts(filters=ALL)
    assert shown == _recount(monkeypatch)
    # The stored order is the order the thresholds give.
    assert not CandidatePair.objects.exclude(uncertainty=_uncertainty()).exists()


def _label(pair, editor, verdict):
    return labelling.label_record(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code="same_text",
        reason="seen",
        region="body",
    )


def _rewall(document) -> None:
    """The page read again as a login wall (a new extraction row, as ingest writes)."""
    Extraction.objects.filter(document=document).delete()
    Extraction.objects.create(
        document=document, extractor_version=EXTRACTOR_VERSION, status="blocked", main_text=""
    )


def test_counts_equal_a_recount_through_labels_walls_splits_and_rebuilds(
    lag, pairs, chain, editor, other_editor, monkeypatch
) -> None:
    judge = factories.user_create(username="judy", role="adjudicator")
    assert_counts_true(monkeypatch)
    first, second, third = pairs
    _label(first, editor, "duplicate")
    assert_counts_true(monkeypatch)
    _label(first, other_editor, "distinct")  # disputed
    _label(second, editor, "distinct")
    assert_counts_true(monkeypatch)
    assert queue_counts.queue_counts(filters=ALL)["status"]["disputed"] >= 1
    labelling.pair_adjudicate(
        pair=first, adjudicator=judge, verdict="duplicate", reason_code="same_text", reason="x"
    )
    assert_counts_true(monkeypatch)
    labelling.label_undo(editor=editor, pair=second)
    assert_counts_true(monkeypatch)
    _label(second, editor, "near_duplicate")  # relabel after the undo
    _label(second, editor, "duplicate")  # supersedes
    assert_counts_true(monkeypatch)
    # New pages and pairs after the tally was built.
    x = reviewed_document(url="https://late.example.com/x", text=TEXT + " late", base=0x5A5A5A5A)
    y = reviewed_document(
        url="https://late.example.com/y", text=TEXT + " later", flips=1, base=0x5A5A5A5A
    )
    find(x, y)
    assert_counts_true(monkeypatch)
    _label(pair_of(x, y), editor, "duplicate")
    # A side of a tallied pair turns out to be a login wall; so does a side of a new one.
    _rewall(third.a)
    _rewall(x)
    assert_counts_true(monkeypatch)
    # A split of the chained group, a distinct label inside a group.
    a, b, c = chain
    _label(pair_of(a, b), editor, "distinct")
    assert_counts_true(monkeypatch)
    group_splits.group_split(
        group=group_of(a),
        document_ids=[a.pk],
        editor=editor,
        reason_code="different_item",
        reason="a is another story",
    )
    assert_counts_true(monkeypatch)
    pair_states_rebuild()
    queue_tally_rebuild()
    assert_counts_true(monkeypatch)


def test_a_wrong_tally_shows_and_a_rebuild_mends_it(settings, pairs, monkeypatch) -> None:
    settings.QUEUE_TALLY_LAG_SECONDS = 0
    assert_counts_true(monkeypatch)
    QueueTally.objects.exclude(n=0).update(n=F("n") + 1)
    with pytest.raises(AssertionError):
        assert_counts_true(monkeypatch)
    queue_tally_rebuild()
    assert_counts_true(monkeypatch)


def test_a_wrong_label_tally_shows_and_the_command_mends_it(
    settings, pairs, editor, other_editor, monkeypatch
) -> None:
    settings.QUEUE_TALLY_LAG_SECONDS = 0
    first, second, _ = pairs
    _label(first, editor, "duplicate")
    _label(second, editor, "duplicate")
    _label(second, other_editor, "distinct")
    assert_counts_true(monkeypatch)
    assert LabelTally.objects.filter(n__gt=0).count() == 2  # one settled, one disputed
    LabelTally.objects.filter(disputed=True).update(n=F("n") + 1)
    with pytest.raises(AssertionError):
        assert_counts_true(monkeypatch)
    call_command("queue_tally_rebuild", stdout=None)
    assert_counts_true(monkeypatch)
    # A review state edited behind the desk's back: --states recomputes them first.
    PairState.objects.filter(pair=first).update(labels=0)
    call_command("queue_tally_rebuild", "--states", stdout=None)
    assert PairState.objects.get(pair=first).labels == 1
    assert_counts_true(monkeypatch)


def test_new_thresholds_reorder_the_queue(settings, pairs, monkeypatch) -> None:
    """Distances 3, 2, 0 against a threshold of 3: the pair at 3 is the most uncertain;
    at a threshold of 0 the pair at 0 is."""
    settings.QUEUE_TALLY_LAG_SECONDS = 0
    first, second, third = pairs
    assert list(pair_queue.queue_pairs(filters=ALL))[0] == first
    settings.CANDIDATE_THRESHOLDS = {t: 0 for t in settings.DOC_TYPES}
    assert list(pair_queue.queue_pairs(filters=ALL)) == [third, second, first]
    assert_counts_true(monkeypatch)


def test_semantic_only_pairs_rank_below_every_other_pair(settings, pairs, monkeypatch) -> None:
    """The most uncertain pair, once nominated by the semantic channel alone, comes after
    every other pair; the stored order equals ingest.core.channels.queue_rank."""
    settings.QUEUE_TALLY_LAG_SECONDS = 0
    first, second, third = pairs
    assert list(pair_queue.queue_pairs(filters=ALL)) == [first, second, third]
    CandidatePair.objects.filter(id=first.id).update(channels=channels.SEMANTIC)
    # As after an upgrade to this order: the stored stamp of the order differs, so the
    # next read of the queue recomputes every pair's rank.
    Watermark.objects.filter(name=ORDER).delete()
    queue_tally_rebuild()
    assert list(pair_queue.queue_pairs(filters=ALL)) == [second, third, first]
    for p in CandidatePair.objects.all():
        rank = channels.queue_rank(
            distance=p.distance, threshold=threshold_for(p.doc_type), mask=p.channels
        )
        assert p.uncertainty == rank
    assert CandidatePair.objects.get(id=first.id).uncertainty >= channels.SEMANTIC_ONLY_RANK
    assert_counts_true(monkeypatch)
    # With another channel beside it, the pair is back in the ordinary order.
    CandidatePair.objects.filter(id=first.id).update(channels=channels.SEMANTIC | channels.SIMHASH)
    Watermark.objects.filter(name=ORDER).delete()
    queue_tally_rebuild()
    assert list(pair_queue.queue_pairs(filters=ALL)) == [first, second, third]


def test_a_new_extractor_version_rebuilds_the_tally(settings, pairs, editor, monkeypatch) -> None:
    settings.QUEUE_TALLY_LAG_SECONDS = 0
    _label(pairs[0], editor, "duplicate")
    assert_counts_true(monkeypatch)
    assert queue_counts.queue_counts(filters=ALL)["status"]["stale"] == 0
    for module in (
        "queue.queue_tally",
        "queue.pair_states",
        "queue.pair_queue",
        "queue.group_queue",
        "queue.wall_pages",
        "labels.label_reads",
    ):
        monkeypatch.setattr(f"reviews.{module}.EXTRACTOR_VERSION", "next-version")
    # Under another extractor version no page has a current extraction: no walls, and
    # every label is stale.
    assert_counts_true(monkeypatch)
    assert queue_counts.queue_counts(filters=ALL)["status"]["stale"] == 1


def _group_recount(filters: QueueFilters) -> Counter[tuple[Any, ...]]:
    """The groups' count rows from scratch: each group's members, their doc types and
    the pairs between two of its members, read one group at a time."""
    out: Counter[tuple[Any, ...]] = Counter()
    groups = group_queue.queue_groups(filters=filters, status_filter=False)
    for g in groups:
        members = list(g.members.values_list("document_id", flat=True))
        if filters.status not in ("labeled", "all") and not (
            g.needs_review or g.chained or g.oversized or g.kind == "exact" or g.is_disputed  # type: ignore[attr-defined]
        ):
            continue
        types = set(Document.objects.filter(pk__in=members).values_list("doc_type", flat=True))
        inside = list(
            CandidatePair.objects.filter(
                below_floor=False,
                method__retired_at__isnull=True,
                a_id__in=members,
                b_id__in=members,
            )
        )
        fact = {
            "kind": g.kind,
            **{k: bool(getattr(g, k)) for k in ("needs_review", "chained", "oversized")},
            **{k: bool(getattr(g, k)) for k in ("is_decided", "is_disputed", "ever_decided")},
            **{f"type_{t}": t in types for t in settings.DOC_TYPES},
            "guard_none": any(not any(getattr(p, k) for k in queue_filters.GUARDS) for p in inside),
            **{f"guard_{k}": any(getattr(p, k) for p in inside) for k in queue_filters.GUARDS},
            **{f"channel_{c}": any(c in p.channel_names for p in inside) for c in ACTIVE},
        }
        out[tuple(sorted(fact.items()))] += 1
    return out


def test_group_counts_equal_a_recount_group_by_group(chain, pairs, editor) -> None:
    a, b, c = chain
    # A guard on a pair inside the group, a "distinct" label between two of its members.
    CandidatePair.objects.filter(id=pair_of(a, b).id).update(numbers_differ=True)
    _label(pair_of(b, c), editor, "distinct")
    queue_sync()
    disputed = group_queue.groups_disputed()
    assert disputed == [group_of(a).pk]
    for f in (ALL, ALL.replace(status="all"), ALL.replace(distance_max=1)):
        for given in (None, disputed):
            rows = group_queue.group_rows_in_scope(f, given)
            kept = Counter(
                {tuple(sorted((k, v) for k, v in r.items() if k != "n")): r["n"] for r in rows}
            )
            assert kept == _group_recount(f)
    counts = queue_counts.queue_counts(filters=ALL)
    assert counts["guard"]["numbers_differ"] >= 1
    assert counts["status"]["disputed"] >= 1


# --- a late cosine: a pair's channels (and floor) change after it was counted ----------


def _tables() -> tuple[Counter[tuple[Any, ...]], Counter[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The pair tally, the label tally and the review states' facts, as stored."""
    pairs = +Counter(
        {
            (r.method_ref, r.doc_type, r.distance, r.channels, r.guards): r.n
            for r in QueueTally.objects.all()
        }
    )
    states = list(
        PairState.objects.order_by("pair_id").values_list(
            "pair_id",
            "labels",
            "method_ref",
            "doc_type",
            "distance",
            "channels",
            "guards",
            "queued",
        )
    )
    return pairs, _label_tally(), states


def _unlike_pair():
    """Two pages SimHash calls near whose words have nothing in common: a pair under the
    similarity floor (stored, not served) until a channel of meaning nominates it."""
    half = len(factories.WORDS) // 2
    base = BASE ^ (0xFFFF << 48)  # 16+ bits from the other pairs
    a = reviewed_document(
        url="https://u.example.com/a", text=" ".join(factories.WORDS[:half] * 6), base=base
    )
    b = reviewed_document(
        url="https://u.example.com/b",
        text=" ".join(factories.WORDS[half:] * 6),
        flips=1,
        base=base,
    )
    find(a, b)
    pair = pair_of(a, b)
    assert pair.below_floor
    return pair


@pytest.mark.parametrize("labelled", [True, False], ids=["labelled", "unlabelled"])
def test_a_late_cosine_keeps_the_tallies_equal_to_a_recount(
    lag, labelled, pairs, editor, settings, monkeypatch
) -> None:
    """Pairs counted (or not: `lag`) and labelled, then their vectors arrive: the tallies
    and the review states follow the pairs' new channels and floor, and the queue's
    channel counts and filter agree with the pairs."""
    settings.EMBEDDING_MODEL = "all-MiniLM-L6-v2"
    first, second, third = pairs
    unlike = _unlike_pair()
    walled = pairs[2]
    _rewall(walled.a)  # a pair the tally leaves out: a side is a login wall
    assert_counts_true(monkeypatch)  # the queue read: the tallies move their watermarks
    if labelled:
        _label(first, editor, "duplicate")
        _label(unlike, editor, "distinct")  # labelled under the floor (not queued)
    assert_counts_true(monkeypatch)
    same, other = [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]
    for pair, vector_b in ((first, same), (second, other), (unlike, same), (walled, same)):
        factories.embedding_row(pair.a, vector=same)
        factories.embedding_row(pair.b, vector=vector_b)
    ids = [d for p in (first, second, unlike, walled) for d in (p.a_id, p.b_id)]
    assert candidates.pairs_cosine_update(method=first.method, document_ids=ids) == 4
    assert CandidatePair.objects.filter(channels__in=channels.masks_with(SEMANTIC)).count() == 3
    assert not CandidatePair.objects.get(id=unlike.id).below_floor
    # As stored, before any read of the queue: equal to a count from scratch.
    kept = _tables()
    pair_states_rebuild()
    queue_tally_rebuild()
    assert _tables() == kept
    assert_counts_true(monkeypatch)
    everything = ALL.replace(status="all", kind="pair")
    shown = queue_counts.queue_counts(filters=everything)
    assert shown["channel"]["semantic"] == 2  # first and unlike (walled is not served)
    if labelled:
        assert (
            queue_counts.queue_counts(filters=ALL.replace(kind="pair"))["channel"]["semantic"] == 0
        )
    served = list(pair_queue.queue_pairs(filters=everything.replace(channel="semantic")))
    assert sorted(p.id for p in served) == sorted([first.id, unlike.id])
