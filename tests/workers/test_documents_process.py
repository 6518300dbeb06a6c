"""Ingest with a real worker: tasks go through Redis to a separate worker process."""

import io

import pytest
from django.db.models import Count

from ingest import services
from ingest.core.readers import read_warc
from ingest.models import Document, Extraction, Fingerprint
from tests import factories
from tests.factories import wait_until

pytestmark = [pytest.mark.redis, pytest.mark.postgres]

PER_DOCUMENT = 1  # the methods computed at ingest by default (the active one): a row each


def _crawl(n: int) -> bytes:
    pages = [
        (
            f"https://w.example.com/story-{i}",
            factories.article_html(f"Story {i}", factories.article_text(i, words=300)).encode(),
        )
        for i in range(n)
    ]
    return factories.warc_bytes(pages)


def _ingest(data: bytes) -> services.IngestSummary:
    return services.batch_ingest(source="w", fmt="warc", items=read_warc(io.BytesIO(data)))


def test_a_worker_fingerprints_an_ingested_warc(worker) -> None:
    summary = _ingest(_crawl(30))
    assert summary.stored == 30
    wait_until(lambda: Fingerprint.objects.count() == 30 * PER_DOCUMENT, 60, "all fingerprints")
    assert Extraction.objects.filter(status="ok").count() == 30


def test_a_killed_worker_leaves_no_duplicate_and_no_missing_document(worker, settings) -> None:
    settings.PROCESS_TASK_SIZE = 100
    n = 600
    summary = _ingest(_crawl(n))
    assert summary.stored == n

    # Kill the worker while a batch is half done: some documents committed, not all.
    wait_until(lambda: Extraction.objects.count() >= 30, 60, "the worker to start")
    worker.kill()
    done_at_kill = Extraction.objects.count()
    assert 0 < done_at_kill < n

    # The unacked task comes back after the visibility timeout; a new worker finishes.
    worker.start()
    wait_until(lambda: Fingerprint.objects.count() >= n * PER_DOCUMENT, 120, "every fingerprint")

    assert Document.objects.count() == n
    assert Extraction.objects.count() == n
    assert Fingerprint.objects.count() == n * PER_DOCUMENT
    per_document = Fingerprint.objects.values("document").annotate(c=Count("id"))
    assert {row["c"] for row in per_document} == {PER_DOCUMENT}


def test_a_worker_keeps_its_database_connection_from_task_to_task(worker_factory, settings) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        # Backends left by earlier tests' workers that are still shutting down are not
        # this worker's.
        cursor.execute(
            "SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        (earlier,) = cursor.fetchone()
    worker_factory(env={"DB_CONN_MAX_AGE": "600"}).start()  # the suite's workers use 0
    settings.PROCESS_TASK_SIZE = 3
    summary = _ingest(_crawl(15))  # five tasks
    assert summary.stored == 15
    wait_until(lambda: Fingerprint.objects.exists(), 60, "the first task")
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        (first_done,) = cursor.fetchone()
    wait_until(lambda: Fingerprint.objects.count() == 15 * PER_DOCUMENT, 60, "every task")
    with connection.cursor() as cursor:
        # The worker's backend, opened before its first task ended, is the one it still
        # uses after the last (a connection closed after every task would be newer).
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_start < %s AND NOT pid = ANY(%s)",
            [first_done, list(earlier)],
        )
        assert cursor.fetchone() == (1,)
