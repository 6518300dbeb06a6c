import pytest

from ingest.core.methods import DEFAULT_KEY
from tests import factories

pytestmark = pytest.mark.django_db


def test_the_home_page_needs_a_login(client) -> None:
    r = client.get("/")
    assert r.status_code == 302
    assert "/accounts/login/" in r["Location"]


def test_the_home_page_lists_documents_with_status_and_fingerprints(
    client, editor, committed
) -> None:
    import io

    from ingest import services
    from ingest.core.methods import fingerprint_text
    from ingest.core.readers import read_warc
    from ingest.models import Extraction, Fingerprint

    html = factories.article_html("<script>alert(1)</script>", factories.article_text(5))
    data = factories.warc_bytes([("https://v.example.com/<b>x</b>", html.encode())])
    with committed():
        services.batch_ingest(source="v", fmt="warc", items=read_warc(io.BytesIO(data)))
    client.force_login(editor)
    r = client.get("/")
    assert r.status_code == 200
    page = r.content.decode()
    fp = Fingerprint.objects.get(method__key=DEFAULT_KEY)
    assert fp.hex in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page
    assert "<b>x</b>" not in page
    detail = client.get(f"/documents/{fp.document_id}/").content.decode()
    # The full page's digest is not stored (ingest 0035): the page computes it.
    full_text = Extraction.objects.get(document_id=fp.document_id).full_text
    full = fingerprint_text(DEFAULT_KEY, full_text)
    assert full.text_sha256 != fp.text_sha256
    assert f">{full.text_sha256}<" in detail and f">{fp.text_sha256}<" in detail
    assert "<script>alert(1)</script>" not in detail
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in detail
    assert "Content-Security-Policy" in r.headers


def test_the_htmx_filter_returns_only_the_table(client, editor) -> None:
    client.force_login(editor)
    r = client.get("/?status=ok", headers={"HX-Request": "true"})
    assert r.status_code == 200
    assert b"<html" not in r.content
    assert b'id="document-table"' in r.content


def test_the_batches_page_says_when_a_running_batch_last_made_progress(client, editor) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from ingest.models import CrawlBatch

    CrawlBatch.objects.create(
        source="slow.warc.gz", format="warc", heartbeat_at=timezone.now() - timedelta(hours=2)
    )
    client.force_login(editor)

    page = client.get("/batches/").content.decode()

    assert "running (last progress 2\xa0hours ago)" in page


def test_the_documents_list_shows_each_row_from_the_prefetches(client, editor) -> None:
    """Each row: the current extraction's status and tokens, the active method's main and
    full-page SimHash; a document not extracted yet is pending with dashes; the page asks
    no query per document."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ingest.core.simhash import to_signed64
    from ingest.models import Document, Fingerprint, Site

    done = factories.indexed_document(
        url="https://v.example.com/done", text=factories.article_text(3), simhash=0xABC
    )
    Fingerprint.objects.filter(document=done).update(full_simhash=to_signed64(0xDEF))
    site = Site.objects.get(host="g.example.com")
    waiting = Document.objects.create(
        site=site,
        url="https://v.example.com/waiting",
        fetched_at=done.fetched_at,
        raw_sha256="0" * 64,
        raw_size=1,
    )
    client.force_login(editor)
    client.get("/")  # the first request of a session reads more (the session, the methods)
    with CaptureQueriesContext(connection) as two:
        page = client.get("/").content.decode()
    done_row = page.split(f">{done.pk}</a>")[1].split("</tr>")[0]
    assert 'class="status status-ok"' in done_row
    assert f"<td>{len(factories.article_text(3).split())}</td>" in done_row
    assert f"{0xABC:016x}" in done_row and f"{0xDEF:016x}" in done_row
    waiting_row = page.split(f">{waiting.pk}</a>")[1].split("</tr>")[0]
    assert 'class="status status-pending"' in waiting_row
    assert waiting_row.count("—") == 4  # HTTP status, tokens, both SimHashes
    for i in range(3):
        factories.indexed_document(
            url=f"https://v.example.com/more-{i}", text=factories.article_text(i), simhash=i
        )
    with CaptureQueriesContext(connection) as five:
        client.get("/")
    assert len(five.captured_queries) == len(two.captured_queries)
