"""A late cosine and a move of the queue tally's watermarks at the same time, on
PostgreSQL, in both orders: whichever takes the tally's lock first, the other waits for
its commit, and the tallies end equal to a count from scratch. Each order is forced:
the first transaction holds on until the second is seen waiting for a lock (or done,
which is the bug these tests catch)."""

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from ingest import candidates
from ingest.models import CandidatePair, Extraction
from reviews.queue.pair_states import pair_states_rebuild
from reviews.queue.queue_tally import _advance, queue_sync, queue_tally_rebuild
from tests import factories
from tests.reviews.test_queue_tally import _tables, _unlike_pair

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
SAME = [1.0, 0.0, 0.0, 0.0]


@pytest.fixture
def late_pair(pairs, settings) -> CandidatePair:
    """The tally counted up to the three pairs; then a pair under the floor, after its
    watermark, whose sides' vectors (one meaning) are stored but not yet compared."""
    settings.QUEUE_TALLY_LAG_SECONDS = 0
    settings.EMBEDDING_MODEL = "all-MiniLM-L6-v2"
    settings.PASSAGE_CHANNEL = False
    queue_sync()
    pair = _unlike_pair()
    factories.embedding_row(pair.a, vector=SAME)
    factories.embedding_row(pair.b, vector=SAME)
    return pair


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _waiting_for_a_lock(pid: int) -> bool:
    # Read on this thread's connection in autocommit: each statement sees the present.
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


Hold = Callable[[], None]


def _race(first: Callable[[Hold], None], second: Callable[[], None]) -> None:
    """Run `first` until it calls `hold()` inside its transaction, then `second`; the
    hold ends (and `first` commits) once `second` waits for a lock or has finished."""
    started, release, done = threading.Event(), threading.Event(), threading.Event()
    pid: list[int] = []
    errors: list[BaseException] = []

    def hold() -> None:
        started.set()
        release.wait()

    def run_first() -> None:
        try:
            first(hold)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        finally:
            started.set()
            connection.close()

    def run_second() -> None:
        try:
            started.wait()
            pid.append(_backend_pid())
            second()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
        finally:
            done.set()
            connection.close()

    holder = threading.Thread(target=run_first)
    waiter = threading.Thread(target=run_second)
    holder.start()
    waiter.start()
    try:
        started.wait()
        factories.wait_until(
            lambda: done.is_set() or (bool(pid) and _waiting_for_a_lock(pid[0])),
            30,
            "the second transaction to wait for the first or to finish",
        )
    finally:
        release.set()
        holder.join()
        waiter.join()
    assert not errors


def _assert_tallies_true() -> None:
    queue_sync()  # the watermarks where a rebuild puts them (the lag is 0)
    kept = _tables()
    pair_states_rebuild()
    queue_tally_rebuild()
    assert _tables() == kept


def test_a_late_cosine_waits_for_the_watermarks_moving_past_its_pair(late_pair) -> None:
    """The tally counts the pair with its old facts and moves past it; the late cosine,
    waiting meanwhile, then finds the pair under the watermark and moves its counts."""
    wall_mark = Extraction.objects.order_by("-id").values_list("id", flat=True).first() or 0

    def advance(hold: Hold) -> None:
        with transaction.atomic():
            _advance(late_pair.id, wall_mark)
            hold()

    def late_cosine() -> None:
        candidates.pairs_cosine_update(method=late_pair.method, document_ids=[late_pair.a_id])

    _race(advance, late_cosine)
    assert not CandidatePair.objects.get(id=late_pair.id).below_floor
    _assert_tallies_true()


def test_the_watermarks_wait_for_a_late_cosine_in_progress(late_pair) -> None:
    """The late cosine has changed the pair but not committed; the tally's move waits,
    then counts the pair with its new facts."""
    wall_mark = Extraction.objects.order_by("-id").values_list("id", flat=True).first() or 0

    def late_cosine(hold: Hold) -> None:
        def held(**_: Any) -> None:
            hold()  # after the tally's receiver: the pair and the tally written

        candidates.pair_facts_changed.connect(held, dispatch_uid="race-hold", weak=False)
        try:
            candidates.pairs_cosine_update(method=late_pair.method, document_ids=[late_pair.a_id])
        finally:
            candidates.pair_facts_changed.disconnect(dispatch_uid="race-hold")

    def advance() -> None:
        _advance(late_pair.id, wall_mark)

    _race(late_cosine, advance)
    assert not CandidatePair.objects.get(id=late_pair.id).below_floor
    _assert_tallies_true()
