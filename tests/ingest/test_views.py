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
    from ingest.core.readers import read_warc
    from ingest.models import Fingerprint

    html = factories.article_html("<script>alert(1)</script>", factories.article_text(5))
    data = factories.warc_bytes([("https://v.example.com/<b>x</b>", html.encode())])
    with committed():
        services.batch_ingest(source="v", fmt="warc", items=read_warc(io.BytesIO(data)))
    client.force_login(editor)
    r = client.get("/")
    assert r.status_code == 200
    page = r.content.decode()
    fp = Fingerprint.objects.get(branch="main", method__key=DEFAULT_KEY)
    assert fp.hex in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page
    assert "<b>x</b>" not in page
    detail = client.get(f"/documents/{fp.document_id}/").content.decode()
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
