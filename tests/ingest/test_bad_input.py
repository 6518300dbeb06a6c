"""Bad input: recorded on the batch with kind and offset; the batch goes on."""

import io
import json
import secrets
from datetime import timedelta

import pytest
from django.utils import timezone

from ingest import services
from ingest.core.readers import RawRecord, RecordError, read_jsonl, read_warc
from ingest.models import BatchError, CrawlBatch, Document
from tests import broken_archives, factories

pytestmark = pytest.mark.django_db

GOOD = factories.article_html("Good page", factories.article_text(1)).encode()


def _kinds(batch_id: int) -> dict[str, int]:
    return dict(BatchError.objects.filter(batch_id=batch_id).values_list("kind", "offset"))


def test_truncated_gzip_keeps_the_records_before_it() -> None:
    pages = [
        (f"https://a.example.com/{i}", GOOD.replace(b"Good", f"Good {i}".encode()))
        for i in range(3)
    ]
    data = factories.warc_bytes(pages)
    summary = services.batch_ingest(
        source="cut.warc.gz", fmt="warc", items=read_warc(io.BytesIO(data[: len(data) - 200]))
    )
    assert summary.stored == 2
    assert Document.objects.count() == 2
    kinds = _kinds(summary.batch_id)
    assert set(kinds) & {"truncated", "corrupt"}
    assert CrawlBatch.objects.get(pk=summary.batch_id).status == "done"


def test_each_bad_record_is_recorded_and_the_good_ones_stored(settings) -> None:
    settings.INGEST_MAX_BODY_BYTES = 50_000
    out = io.BytesIO()
    out.write(factories.warc_bytes([("https://a.example.com/ok-1", GOOD)]))
    out.write(
        factories.warc_bytes(
            [("https://a.example.com/doc.pdf", b"%PDF-1.7 binary")], content_type="application/pdf"
        )
    )
    out.write(
        factories.warc_bytes([("https://a.example.com/huge", b"<p>" + b"x " * 40_000 + b"</p>")])
    )
    out.write(factories.warc_bytes([("https://a.example.com/empty", b"")]))
    out.write(factories.warc_bytes([("https://a.example.com/ok-2", GOOD + b"<!-- 2 -->")]))
    summary = services.batch_ingest(
        source="mixed", fmt="warc", items=read_warc(io.BytesIO(out.getvalue()))
    )
    assert summary.stored == 2
    assert set(Document.objects.values_list("url", flat=True)) == {
        "https://a.example.com/ok-1",
        "https://a.example.com/ok-2",
    }
    errors = BatchError.objects.filter(batch_id=summary.batch_id)
    assert {e.kind for e in errors} == {"non_html", "too_large", "empty_body"}
    # Each error points at its own record: distinct offsets past the first record.
    offsets = [e.offset for e in errors]
    assert len(set(offsets)) == 3
    assert min(offsets) > 0
    assert errors.get(kind="too_large").url == "https://a.example.com/huge"


def test_jsonl_bad_lines_are_recorded_by_line_number() -> None:
    lines = [
        '{"url": "https://b.example.com/1", "html": "<p>one two three four five six</p>"}',
        "not json at all",
        '{"html": "<p>no url</p>"}',
        '{"url": "https://b.example.com/2"}',
        '{"url": "https://b.example.com/3", "html": "<p>3</p>", "fetched_at": "2026-05-01T10:00Z"}',
    ]
    data = ("\n".join(lines) + "\n").encode()
    summary = services.batch_ingest(
        source="x.jsonl", fmt="jsonl", items=read_jsonl(io.BytesIO(data))
    )
    assert summary.stored == 2
    errors = {e.offset: e.kind for e in BatchError.objects.filter(batch_id=summary.batch_id)}
    assert errors == {2: "bad_json", 3: "missing_field", 4: "missing_field"}


def test_a_failure_later_in_a_stream_keeps_what_was_stored(settings) -> None:
    settings.INGEST_CHUNK_SIZE = 1

    def items():
        yield from read_warc(io.BytesIO(factories.warc_bytes([("https://c.example.com/1", GOOD)])))
        raise RuntimeError("disk went away")

    with pytest.raises(RuntimeError):
        services.batch_ingest(source="boom", fmt="warc", items=items())
    assert Document.objects.filter(url="https://c.example.com/1").exists()
    batch = CrawlBatch.objects.get(source="boom")
    assert batch.status == "failed"
    assert batch.errors.filter(kind="ingest_failed").exists()
    assert batch.error_count == 1


def test_records_the_database_would_refuse_are_errors_and_the_rest_is_stored() -> None:
    archive = broken_archives.bad_jsonl_records()

    summary = services.batch_ingest(
        source="bad.jsonl", fmt="jsonl", items=read_jsonl(io.BytesIO(archive.data))
    )

    assert sorted(Document.objects.values_list("url", flat=True)) == sorted(archive.good_urls)
    errors = BatchError.objects.filter(batch_id=summary.batch_id)
    assert {e.offset: e.kind for e in errors} == archive.bad_offsets
    assert all(e.stored == (e.kind in ("bad_header", "bad_html")) for e in errors)
    batch = CrawlBatch.objects.get(pk=summary.batch_id)
    assert batch.status == "done"
    assert batch.error_count == 8


@pytest.mark.postgres  # SQLite stores it; PostgreSQL refuses it
def test_a_value_refused_by_the_database_costs_one_record_not_the_chunk(monkeypatch) -> None:
    url = "https://d.example.com/\x00"
    # Whatever the boundary checks miss, the chunk falls back to one record at a time.
    monkeypatch.setattr(services, "record_sanitise", lambda record: record)
    items = [
        RawRecord(f"https://d.example.com/{i}", GOOD + str(i).encode(), 200, {}, None, i + 1)
        for i in range(3)
    ]
    items[1] = RawRecord(url, GOOD, 200, {}, None, 2)

    summary = services.batch_ingest(source="db", fmt="api", items=iter(items))

    assert summary.stored == 2
    error = BatchError.objects.get(batch_id=summary.batch_id)
    assert (error.kind, error.offset) == ("db_error", 2)
    assert "\x00" not in error.url


@pytest.mark.postgres
def test_a_url_longer_than_a_btree_entry_is_stored(monkeypatch) -> None:
    """No btree holds a document's URL since the snapshot's unique went (ingest 0033:
    the look-up is by the digest): a URL past a btree entry's limit (~2.7 KB), which
    that index refused, is stored like any other."""
    monkeypatch.setattr(services, "record_sanitise", lambda record: record)
    url = "https://d.example.com/" + secrets.token_hex(3000)
    summary = services.batch_ingest(
        source="db", fmt="api", items=iter([RawRecord(url, GOOD, 200, {}, None, 1)])
    )
    assert summary.stored == 1
    assert Document.objects.filter(url=url).exists()


def test_an_unusable_warc_date_is_recorded_and_the_ingest_time_used() -> None:
    data = factories.warc_bytes([("https://w.example.com/1", GOOD)], gzip_records=False).replace(
        b"2026-05-01T12:00:00Z", b"2026-05-41T12:00:00Z"
    )

    summary = services.batch_ingest(source="date", fmt="warc", items=read_warc(io.BytesIO(data)))

    assert summary.stored == 1
    warning = BatchError.objects.get(batch_id=summary.batch_id)
    assert (warning.kind, warning.stored) == ("bad_date", True)
    assert "2026-05-41" in warning.message
    assert "ingest time" in warning.message
    batch = CrawlBatch.objects.get(pk=summary.batch_id)
    assert Document.objects.get().fetched_at >= batch.started_at
    assert batch.error_count == 0


def test_a_crashed_batch_counts_its_failure() -> None:
    def items():
        yield RecordError("bad_json", 1, "x")
        raise RuntimeError("disk went away")

    with pytest.raises(RuntimeError):
        services.batch_ingest(source="crash", fmt="jsonl", items=items())
    batch = CrawlBatch.objects.get(source="crash")
    assert batch.status == "failed"
    assert batch.error_count == batch.errors.count() == 2


def test_an_interrupted_ingest_marks_its_batch_failed() -> None:
    def items():
        yield from read_warc(io.BytesIO(factories.warc_bytes([("https://i.example.com/", GOOD)])))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        services.batch_ingest(source="ctrl-c", fmt="warc", items=items())
    batch = CrawlBatch.objects.get(source="ctrl-c")
    assert batch.status == "failed"
    assert batch.errors.filter(kind="ingest_failed").exists()


def test_a_killed_ingest_is_marked_failed_once_stale(settings) -> None:
    settings.INGEST_STALE_MINUTES = 15
    now = timezone.now()
    dead = CrawlBatch.objects.create(source="killed", format="warc", records_read=40)
    CrawlBatch.objects.filter(pk=dead.pk).update(
        started_at=now - timedelta(hours=2), heartbeat_at=now - timedelta(minutes=16)
    )
    alive = CrawlBatch.objects.create(source="alive", format="warc", heartbeat_at=now)

    services.batch_ingest(source="next", fmt="warc", items=iter(()))

    dead.refresh_from_db()
    assert dead.status == "failed"
    assert dead.error_count == 1
    error = dead.errors.get()
    assert error.kind == "interrupted"
    assert "40 records" in error.message
    alive.refresh_from_db()
    assert alive.status == "running"


def test_a_running_batch_keeps_a_heartbeat(settings) -> None:
    settings.INGEST_CHUNK_SIZE = 1
    beats = []

    def progress(summary: services.IngestSummary) -> None:
        beats.append(CrawlBatch.objects.get(pk=summary.batch_id).heartbeat_at)

    services.batch_ingest(
        source="beat",
        fmt="warc",
        items=read_warc(
            io.BytesIO(
                factories.warc_bytes(
                    [("https://h.example.com/1", GOOD), ("https://h.example.com/2", GOOD + b" ")]
                )
            )
        ),
        progress=progress,
    )

    assert len(beats) >= 2
    stamps = [beat for beat in beats if beat is not None]
    assert stamps == beats  # every beat stamped
    assert stamps == sorted(stamps)


def test_jsonl_protocol_relative_url_is_stored_as_https() -> None:
    line = {"url": "//d.example.com/2008/story.html", "html": GOOD.decode()}
    data = (json.dumps(line) + "\n").encode()

    summary = services.batch_ingest(
        source="p.jsonl", fmt="jsonl", items=read_jsonl(io.BytesIO(data))
    )

    assert summary.stored == 1
    document = Document.objects.get(pk=summary.document_ids[0])
    assert document.url == "https://d.example.com/2008/story.html"
    assert document.site.host == "d.example.com"
