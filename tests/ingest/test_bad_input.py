"""Bad input: recorded on the batch with kind and offset; the batch goes on."""

import io
import json

import pytest

from ingest import services
from ingest.core.readers import read_jsonl, read_warc
from ingest.models import BatchError, CrawlBatch, Document
from tests import factories

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
