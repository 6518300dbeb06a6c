"""Next hands out queue items on a lease; two editors never get the same item."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from reviews.labels import labelling
from reviews.models import Claim
from reviews.queue import claiming
from reviews.queue.queue_filters import QueueFilters
from tests import factories


@pytest.mark.django_db
def test_next_claims_the_most_uncertain_pair_first(pairs, editor) -> None:
    # Threshold 3 for articles: the pair at distance 3 is the nearest to it.
    claim = claiming.claim_next(editor=editor)
    assert claim is not None and claim.kind == "pair" and claim.pair is not None
    assert claim.pair.distance == 3
    assert claim.expires_at > timezone.now() + timedelta(minutes=14)


@pytest.mark.django_db
def test_two_editors_get_different_items(pairs, editor, other_editor) -> None:
    one = claiming.claim_next(editor=editor)
    two = claiming.claim_next(editor=other_editor)
    assert one and two and one.pair_id != two.pair_id


@pytest.mark.django_db
def test_an_expired_claim_returns_to_the_queue(pairs, editor, other_editor) -> None:
    one = claiming.claim_next(editor=editor)
    assert one is not None
    Claim.objects.filter(pk=one.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    two = claiming.claim_next(editor=other_editor)
    assert two is not None and two.pair_id == one.pair_id


@pytest.mark.django_db
def test_next_releases_my_previous_claim_and_skips(pairs, editor) -> None:
    one = claiming.claim_next(editor=editor)
    assert one is not None and one.pair_id is not None
    two = claiming.claim_next(editor=editor, skip_pairs={one.pair_id})
    assert two is not None and two.pair_id != one.pair_id
    one.refresh_from_db()
    assert one.released_at is not None
    assert claiming.active_claims().filter(editor=editor).count() == 1


@pytest.mark.django_db
def test_labeling_releases_the_claim(pairs, editor) -> None:
    claim = claiming.claim_next(editor=editor)
    assert claim is not None and claim.pair is not None
    labelling.label_record(
        pair=claim.pair,
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="same",
        region="body",
    )
    claim.refresh_from_db()
    assert claim.released_at is not None


@pytest.mark.django_db
def test_an_empty_queue_gives_nothing(editor) -> None:
    assert claiming.claim_next(editor=editor) is None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_next_on_postgres_never_hands_out_one_item_twice(pairs) -> None:
    editors = [factories.user_create(username=f"ed{i}", role="editor") for i in range(6)]
    barrier = threading.Barrier(len(editors))
    got: dict[str, int | None] = {}
    errors: list[BaseException] = []

    def work(user) -> None:
        try:
            barrier.wait()
            claim = claiming.claim_next(editor=user, filters=QueueFilters(kind="pair"))
            got[user.username] = claim.pair_id if claim else None
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        finally:
            connection.close()  # each thread had its own connection

    threads = [threading.Thread(target=work, args=(u,)) for u in editors]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    handed = [p for p in got.values() if p is not None]
    assert len(handed) == len(set(handed)) == len(pairs)  # 3 pairs, 6 editors
    assert list(got.values()).count(None) == len(editors) - len(pairs)
