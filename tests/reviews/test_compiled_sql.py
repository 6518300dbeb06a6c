"""The queue's statements compiled once per shape (reviews.queue.compiled_sql) read what the
querysets they are compiled from read: whatever filters, settings and labels came
before, and in any order."""

import pytest
from django.conf import settings as live_settings

from ingest.models import CandidateGroup, CandidatePair
from reviews.labels import label_reads, labelling
from reviews.queue import compiled_sql, group_queue, pair_queue, queue_tally
from reviews.queue.compiled_sql import compiled
from reviews.queue.group_queue import queue_group_page, queue_groups
from reviews.queue.pair_queue import QueuePairPage
from reviews.queue.queue_filters import QueueFilters
from tests import factories
from tests.factories import pair_of

pytestmark = pytest.mark.django_db
ALL = QueueFilters()
SHAPES = (
    ALL,
    ALL.replace(status="all"),
    ALL.replace(distance_max=2),
    ALL.replace(distance_min=3),
    ALL.replace(doc_type="product"),
    ALL.replace(site="b.example.com"),
    ALL.replace(guard="any"),
    ALL.replace(status="labeled"),
)


def _page(filters: QueueFilters) -> list[tuple[int, bool, int]]:
    rows = QueuePairPage(filters=filters, count=50)[0:50]
    return [(r.id, r.is_labeled, r.threshold) for r in rows]


def _fresh(filters: QueueFilters) -> list[tuple[int, bool, int]]:
    return [
        (p.id, bool(p.is_labeled), p.threshold)  # type: ignore[attr-defined]
        for p in pair_queue.queue_pairs(filters=filters, sync=False)[:50]
    ]


def test_each_shape_reads_its_own_rows_in_any_order(pairs, editor) -> None:
    queue_tally.queue_sync()
    for shapes in (SHAPES, SHAPES[::-1]):
        for f in shapes:
            assert _page(f) == _fresh(f), f
    labelling.label_record(
        pair=pairs[0],
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="seen",
        region="body",
    )
    queue_tally.queue_sync()
    for f in SHAPES:
        assert _page(f) == _fresh(f), f
    assert [pk for pk, *_ in _page(ALL.replace(status="labeled"))] == [pairs[0].id]


def test_a_new_threshold_compiles_anew(pairs, settings) -> None:
    queue_tally.queue_sync()
    before = {pk: threshold for pk, _, threshold in _page(ALL)}
    settings.CANDIDATE_THRESHOLDS = {t: 0 for t in settings.DOC_TYPES}
    queue_tally.queue_sync()  # the stored order follows the thresholds
    after = _page(ALL)
    assert {threshold for _, _, threshold in after} == {0} != set(before.values())
    assert after == _fresh(ALL)


def test_the_thresholds_are_part_of_the_key_even_without_the_signal(pairs) -> None:
    """A setting changed behind the signal's back (by assignment) compiles anew too."""
    queue_tally.queue_sync()
    _page(ALL)
    thresholds = live_settings.CANDIDATE_THRESHOLDS
    try:
        live_settings.CANDIDATE_THRESHOLDS = {t: 1 for t in live_settings.DOC_TYPES}
        assert {threshold for _, _, threshold in _page(ALL)} == {1}
    finally:
        live_settings.CANDIDATE_THRESHOLDS = thresholds


GROUP_SHAPES = (
    ALL,
    ALL.replace(status="all"),
    ALL.replace(status="labeled"),
    ALL.replace(status="unlabeled"),
    ALL.replace(doc_type="article"),
    ALL.replace(doc_type="product"),
    ALL.replace(guard="any"),
    ALL.replace(guard="none"),
    ALL.replace(guard="numbers_differ", status="all"),
    ALL.replace(channel="simhash", status="all"),
    ALL.replace(channel="passages"),
    ALL.replace(site="news.example.com"),
    ALL.replace(distance_max=1, status="all"),
)


def _group_pages() -> None:
    queue_tally.queue_sync()
    disputed = group_queue.groups_disputed()
    for f in GROUP_SHAPES:
        facts = group_queue.queue_group_facts(filters=f, disputed=disputed)
        shown = queue_group_page(filters=f, groups_in_scope=facts)
        fresh = list(queue_groups(filters=f, with_urls=True, disputed=disputed)[:25])
        assert [g.pk for g in shown] == [g.pk for g in fresh], f
        for a, b in zip(shown, fresh, strict=True):
            for attr in ("representative_url", "is_decided", "is_disputed", "ever_decided"):
                assert bool(getattr(a, attr)) == bool(getattr(b, attr)), (f, attr)
            assert a.representative_url == b.representative_url  # type: ignore[attr-defined]


def test_the_group_list_is_the_one_queue_groups_gives(chain, two_groups, editor) -> None:
    """Chosen from the facts the counts read, in queue_groups' order (a group with no
    diameter where the database puts it), with the same filters."""
    a, b, c = chain
    CandidateGroup.objects.update(needs_review=True)  # every group in the list
    _group_pages()
    CandidatePair.objects.filter(id=pair_of(a, b).id).update(numbers_differ=True)
    # Equal but for the diameter: none, 1 (and 7).
    CandidateGroup.objects.update(chained=False, oversized=False, size=2)
    ids = list(CandidateGroup.objects.order_by("pk").values_list("pk", flat=True))
    assert len(ids) >= 2
    for pk, diameter in zip(ids, (None, 1, 7), strict=False):
        CandidateGroup.objects.filter(pk=pk).update(diameter=diameter)
    _group_pages()
    CandidateGroup.objects.filter(pk=ids[-1]).update(size=1)
    _group_pages()
    labelling.label_record(
        pair=pair_of(b, c),
        editor=editor,
        verdict="distinct",
        reason_code="different_item",
        reason="two stories",
        region="body",
    )
    _group_pages()
    assert queue_group_page(
        filters=ALL, groups_in_scope=group_queue.queue_group_facts(filters=ALL)
    ), "the test lists no group"


def test_a_setting_change_empties_the_cache(settings) -> None:
    compiled(("probe",), lambda: label_reads.current_labels().values_list("pk"))
    assert compiled_sql._SQL
    settings.REVIEW_LEASE_MINUTES = 16
    assert not compiled_sql._SQL


def test_a_distinct_label_inside_a_group_is_read_anew(chain, editor) -> None:
    a, b, _ = chain
    assert group_queue.groups_disputed() == []
    labelling.label_record(
        pair=pair_of(a, b),
        editor=editor,
        verdict="distinct",
        reason_code="different_item",
        reason="two stories",
        region="body",
    )
    queue_tally.queue_sync()
    assert len(group_queue.groups_disputed()) == 1


def _disputed_then_adjudicated(chain, editor, other_editor, verdict: str) -> None:
    """Two editors disagree on a pair inside a group; an adjudicator decides `verdict`."""
    a, b, _ = chain
    pair = pair_of(a, b)
    for who, given in ((editor, "distinct"), (other_editor, "duplicate")):
        labelling.label_record(
            pair=pair, editor=who, verdict=given, reason_code="other", reason="r", region="body"
        )
    queue_tally.queue_sync()
    assert len(group_queue.groups_disputed()) == 1
    labelling.pair_adjudicate(
        pair=pair,
        adjudicator=factories.user_create(username="judy", role="adjudicator"),
        verdict=verdict,
        reason_code="other",
        reason="decided",
    )
    queue_tally.queue_sync()


def test_an_adjudication_that_overrules_the_distinct_label_ends_the_dispute(
    chain, editor, other_editor
) -> None:
    _disputed_then_adjudicated(chain, editor, other_editor, "duplicate")
    assert group_queue.groups_disputed() == []


def test_an_adjudication_that_confirms_the_distinct_label_keeps_the_group_disputed(
    chain, editor, other_editor
) -> None:
    _disputed_then_adjudicated(chain, editor, other_editor, "distinct")
    assert len(group_queue.groups_disputed()) == 1
