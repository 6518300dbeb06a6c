"""Next never loops: a pair an editor has labelled is not served to them again, a
re-crawl of one URL is not stale against itself, and a rebuild does not re-flag a split."""

from datetime import UTC, datetime

import pytest

from ingest import candidates
from reviews.decisions import group_splits
from reviews.labels import labelling
from reviews.queue import claiming, pair_queue
from reviews.queue.queue_filters import QueueFilters
from tests import factories
from tests.factories import TEXT, find, group_of, group_or_none, pair_of, reviewed_document

pytestmark = pytest.mark.django_db
PAIRS = QueueFilters(kind="pair")


def _label(pair, editor, verdict="duplicate"):
    return labelling.label_record(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code="same_text",
        reason="seen",
        region="body",
    )


def _needs_review(pair) -> bool:
    return pair_queue.queue_pairs(filters=QueueFilters()).filter(id=pair.id).exists()


def test_two_snapshots_of_one_url_are_not_stale_after_a_label(editor) -> None:
    url = "https://news.example.com/story"
    old = reviewed_document(url=url, text=TEXT, fetched_at=datetime(2026, 5, 1, tzinfo=UTC))
    new = reviewed_document(
        url=url, text=TEXT + " updated", flips=1, fetched_at=datetime(2026, 5, 2, tzinfo=UTC)
    )
    find(old, new)
    pair = pair_of(old, new)
    _label(pair, editor, "revision")
    row = pair_queue.queue_pairs(filters=QueueFilters(status="all")).get(id=pair.id)
    assert not row.is_stale  # type: ignore[attr-defined]
    assert not _needs_review(pair)


def test_a_third_snapshot_still_makes_the_label_stale(editor) -> None:
    url = "https://news.example.com/story"
    old = reviewed_document(url=url, text=TEXT, fetched_at=datetime(2026, 5, 1, tzinfo=UTC))
    mid = reviewed_document(
        url=url, text=TEXT + " updated", flips=1, fetched_at=datetime(2026, 5, 2, tzinfo=UTC)
    )
    find(old, mid)
    pair = pair_of(old, mid)
    _label(pair, editor, "revision")
    reviewed_document(
        url=url, text=TEXT + " again", flips=2, fetched_at=datetime(2026, 5, 3, tzinfo=UTC)
    )
    row = pair_queue.queue_pairs(filters=QueueFilters(status="all")).get(id=pair.id)
    assert row.is_stale  # type: ignore[attr-defined]


def test_next_never_serves_a_disputed_pair_to_an_editor_who_labelled_it(
    pairs, editor, other_editor
) -> None:
    first = pairs[0]
    _label(first, other_editor, "duplicate")
    _label(first, editor, "distinct")  # now disputed
    served = []
    for _ in range(4):
        claim = claiming.claim_next(editor=editor, filters=PAIRS)
        if claim is None:
            break
        assert claim.pair_id is not None
        served.append(claim.pair_id)
        _label(claim.pair, editor)
    assert first.id not in served
    assert sorted(served) == sorted(p.id for p in pairs[1:])


def test_the_disputed_pair_goes_to_an_editor_without_a_label(pairs, editor, other_editor) -> None:
    first = pairs[0]
    _label(first, other_editor, "duplicate")
    _label(first, editor, "distinct")
    third = factories.user_create(username="thea", role="editor")
    claim = claiming.claim_next(editor=third, filters=PAIRS)
    assert claim is not None and claim.pair_id == first.id


def test_asking_for_labelled_pairs_still_serves_them(pairs, editor) -> None:
    _label(pairs[0], editor)
    claim = claiming.claim_next(editor=editor, filters=PAIRS.replace(status="labeled"))
    assert claim is not None and claim.pair_id == pairs[0].id


def test_a_rebuild_does_not_flag_a_split_group_again(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    group_splits.group_split(
        group=group,
        document_ids=[c.pk],
        editor=editor,
        reason_code="different_item",
        reason="c is another story",
    )
    group.refresh_from_db()
    assert not group.needs_review
    candidates.candidates_find(document_ids=[a.pk, b.pk, c.pk])  # what --rebuild does
    group.refresh_from_db()
    assert not group.needs_review, group.review_note
    assert group_or_none(c) is None or group_or_none(c) != group


def test_the_queue_page_query_count_does_not_grow_with_labels(
    client, pairs, editor, other_editor
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    client.force_login(editor)
    client.get(reverse("reviews:queue"))  # the first read builds the review states

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(reverse("reviews:queue")).status_code == 200
        return len(ctx.captured_queries)

    before = queries()
    for p in pairs:
        _label(p, editor, "duplicate")
        _label(p, other_editor, "distinct")
    # The first read after new labels also catches the review states up with them (a few
    # queries per batch of 5,000 new labels); from then on the count is the same.
    assert queries() > before
    assert queries() == before
