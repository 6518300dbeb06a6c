"""`manage.py ingest` when the database goes away: a lost connection is retried (the
chunk stored again from the start), an outage longer than INGEST_DB_RETRY_SECONDS ends
the command with one clear line (no traceback) and the batch is failed at once."""

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError, connection

from ingest import services
from ingest.models import CrawlBatch, Document
from tests.broken_archives import page, warc_record

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _warc(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "crawl.warc.gz"
    path.write_bytes(b"".join(warc_record(f"https://o.example.com/{i}", page(i)) for i in range(n)))
    return path


def test_a_connection_killed_mid_ingest_is_retried_and_nothing_is_lost(
    tmp_path: Path, monkeypatch, settings
) -> None:
    settings.INGEST_CHUNK_SIZE = 2
    settings.PROCESS_TASK_SIZE = 2
    real = services._chunk_store
    calls = {"n": 0}

    def store(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:  # the server ends this session's backend (a restart, a failover)
            with connection.cursor() as c:
                c.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "_chunk_store", store)
    call_command("ingest", str(_warc(tmp_path, 6)), "--no-progress", stdout=io.StringIO())
    assert Document.objects.count() == 6
    batch = CrawlBatch.objects.get()
    assert batch.status == CrawlBatch.Status.DONE
    assert batch.stored == 6


def test_an_outage_past_the_retry_window_is_one_line_and_a_failed_batch(
    tmp_path: Path, monkeypatch, settings
) -> None:
    settings.INGEST_DB_RETRY_SECONDS = 1

    def store(*args, **kwargs):
        raise OperationalError(
            'connection to server at "127.0.0.1" failed: Connection refused\nIs the server running?'
        )

    monkeypatch.setattr(services, "_chunk_store", store)
    with pytest.raises(CommandError) as failed:
        call_command("ingest", str(_warc(tmp_path, 3)), "--no-progress", stdout=io.StringIO())
    message = str(failed.value)
    assert "\n" not in message
    assert "database is unavailable" in message and "marked failed" in message
    assert failed.value.__cause__ is None and failed.value.__suppress_context__
    batch = CrawlBatch.objects.get()
    assert batch.status == CrawlBatch.Status.FAILED  # at once, not after INGEST_STALE_MINUTES
    assert batch.errors.filter(kind="ingest_failed").exists()
