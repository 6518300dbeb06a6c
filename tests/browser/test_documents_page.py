import io

import pytest
from playwright.sync_api import expect

from ingest import services
from ingest.core.methods import DEFAULT_KEY
from ingest.core.readers import read_warc
from ingest.models import Fingerprint
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_editor_logs_in_and_sees_documents_with_fingerprints(logged_in) -> None:
    page = logged_in
    html = factories.article_html("Harbour news", factories.article_text(11))
    data = factories.warc_bytes([("https://b.example.com/harbour", html.encode())])
    services.batch_ingest(source="b", fmt="warc", items=read_warc(io.BytesIO(data)))
    fp = Fingerprint.objects.get(method__key=DEFAULT_KEY)

    page.goto("/")
    row = page.locator("table.documents tbody tr").first
    expect(row).to_contain_text("https://b.example.com/harbour")
    expect(row).to_contain_text(fp.hex)
    # The status filter swaps the table in place (htmx), without a page load.
    page.evaluate("window.__marker = 'still here'")
    page.click("nav.filters a:has-text('blocked')")
    page.wait_for_selector("#document-table:has-text('0 documents')")
    assert page.evaluate("window.__marker") == "still here"
    assert "status=blocked" in page.url
