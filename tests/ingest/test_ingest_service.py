import io

import pytest
from django.utils import timezone

from ingest import services
from ingest.core.readers import read_warc
from ingest.models import BatchError, Document, DocumentBody, Extraction, Fingerprint, Site
from reviews.pair.text_diffs import document_source
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def ingest(committed):
    def run(data: bytes, source: str = "test.warc.gz") -> services.IngestSummary:
        with committed():
            return services.batch_ingest(
                source=source, fmt="warc", items=read_warc(io.BytesIO(data))
            )

    return run


def _pages(n: int) -> list[tuple[str, bytes]]:
    return [
        (
            f"https://news.example.com/story-{i}",
            factories.article_html(f"Story {i}", factories.article_text(i)).encode(),
        )
        for i in range(n)
    ]


def test_every_response_becomes_a_document_with_fingerprints(ingest) -> None:
    summary = ingest(factories.warc_bytes(_pages(4)))
    assert (summary.read, summary.stored) == (4, 4)
    assert Extraction.objects.filter(status="ok").count() == 4
    # Every method computed at ingest (by default the active one), both branches a row.
    methods = len(services.fingerprint_method_keys())
    assert Fingerprint.objects.count() == 4 * methods
    assert Fingerprint.objects.filter(full_simhash__isnull=False).count() == 4 * methods
    assert Fingerprint.objects.filter(simhash__isnull=False).count() == 4 * methods


def test_reingesting_the_same_file_adds_nothing(ingest) -> None:
    data = factories.warc_bytes(_pages(3))
    ingest(data)
    again = ingest(data)
    assert again.stored == 0
    assert again.already_stored == 3
    assert Document.objects.count() == 3
    assert Fingerprint.objects.count() == 3 * len(services.fingerprint_method_keys())


def test_same_bytes_at_another_url_is_stored_and_counted_as_exact_duplicate(ingest) -> None:
    pages = _pages(2)
    pages.append(("https://mirror.example.net/copy", pages[0][1]))
    summary = ingest(factories.warc_bytes(pages))
    assert summary.stored == 3
    assert summary.exact_duplicates == 1
    a, copy = Document.objects.filter(
        raw_sha256=Document.objects.get(pk=summary.document_ids[0]).raw_sha256
    )
    assert {a.url, copy.url} == {pages[0][0], "https://mirror.example.net/copy"}


def test_raw_bytes_are_kept_compressed_with_their_sha256_under_body_store_database(
    ingest, settings
) -> None:
    import hashlib

    settings.BODY_STORE = "database"
    body = _pages(1)[0][1]
    summary = ingest(factories.warc_bytes([("https://news.example.com/x", body)]))
    document = Document.objects.get(pk=summary.document_ids[0])
    assert document.raw_sha256 == hashlib.sha256(body).hexdigest()
    assert document.body.raw() == body
    assert document.body.codec == "zstd"
    assert len(bytes(document.body.data)) < len(body)


def test_a_body_stored_with_zlib_before_is_still_extracted(committed) -> None:
    """Bodies keep the codec they were written with: rows from before zstd are read
    with zlib by the workers and the source view."""
    import zlib

    html = factories.article_html("Old story", factories.article_text(3)).encode()
    site = Site.objects.create(host="old.example.com")
    with committed():
        document = Document.objects.create(
            site=site,
            url="https://old.example.com/a",
            fetched_at=timezone.now(),
            raw_sha256="0" * 64,
            raw_size=len(html),
            content_type="text/html; charset=utf-8",
        )
        DocumentBody.objects.create(document=document, codec="zlib", data=zlib.compress(html))
    services.documents_process(document_ids=[document.pk])
    extraction = Extraction.objects.get(document=document)
    assert extraction.status == "ok"
    assert factories.article_text(3).split()[5] in extraction.main_text
    assert document_source(document=document) == html.decode()


def _stored_page(host: str, html: bytes) -> Document:
    """A stored, unprocessed page at https://{host}/story (its body packed as ingest does)."""
    document = Document.objects.create(
        site=Site.objects.create(host=host),
        url=f"https://{host}/story",
        fetched_at=timezone.now(),
        raw_sha256="0" * 64,
        raw_size=len(html),
        content_type="text/html; charset=utf-8",
    )
    DocumentBody.objects.create(document=document, data=DocumentBody.pack(html))
    return document


def test_processing_searches_its_documents_for_candidates_in_the_same_call() -> None:
    """The processing task searches its own documents once they are committed, rather
    than queueing the search behind every other processing task."""
    from ingest.models import CandidatePair

    html = factories.article_html("Wire story", factories.article_text(7)).encode()
    ids = [_stored_page(host, html).pk for host in ("a.example.com", "b.example.com")]
    # Inside the test's transaction nothing queued on commit ever runs: the pair can
    # only come from the call itself.
    assert services.documents_process(document_ids=ids) == 2
    assert CandidatePair.objects.filter(a_id=min(ids), b_id=max(ids)).exists()


def test_a_processing_task_logs_where_its_cpu_went(caplog) -> None:
    import re

    html = factories.article_html("Logged story", factories.article_text(11)).encode()
    document = _stored_page("log.example.com", html)
    with caplog.at_level("INFO", logger="ingest.services"):
        services.documents_process(document_ids=[document.pk])
    found = [
        re.fullmatch(
            r"processed 1 documents in ([\d.]+) CPU-s: decode \+ extract ([\d.]+), "
            r"search ([\d.]+)",
            record.getMessage(),
        )
        for record in caplog.records
    ]
    (total, extraction, search), *_ = [tuple(map(float, m.groups())) for m in found if m]
    assert 0 < extraction < total and search < total
    assert extraction + search <= total + 0.002  # rounded to the millisecond


def test_empty_page_gets_a_status_and_no_main_fingerprint(ingest) -> None:
    html = b"<html><body><nav><a href='/'>Home</a></nav></body></html>"
    summary = ingest(factories.warc_bytes([("https://news.example.com/empty", html)]))
    document = Document.objects.get(pk=summary.document_ids[0])
    assert document.extractions.get().status in {"empty", "too_short"}
    main = document.fingerprints.all()
    assert main.count() == len(services.fingerprint_method_keys())
    assert {f.status for f in main} == {"insufficient_features"}
    assert all(f.simhash is None for f in main)


def test_processing_twice_changes_nothing(ingest) -> None:
    summary = ingest(factories.warc_bytes(_pages(2)))
    before = list(Fingerprint.objects.order_by("pk").values_list("pk", "simhash"))
    assert services.documents_process(document_ids=summary.document_ids) == 0
    assert list(Fingerprint.objects.order_by("pk").values_list("pk", "simhash")) == before


def test_declared_charset_mismatch_is_recorded_and_the_page_still_stored(ingest) -> None:
    body = (
        factories.article_html("Café", factories.article_text(3))
        .replace("Copyright", "Caf\xe9 Copyright")
        .encode("latin-1")
    )
    data = factories.warc_bytes([("https://news.example.com/cafe", body)])
    summary = ingest(data)
    assert summary.stored == 1
    error = BatchError.objects.get(kind="charset_mismatch")
    assert error.stored is True
    assert error.url == "https://news.example.com/cafe"


def test_gbk_and_windows_1258_pages_come_out_as_correct_text(ingest) -> None:
    import unicodedata

    from demo.crawl import cp1258_form

    zh = "北京市今天举行了新闻发布会。记者了解到，城市公共交通将在明年全面升级。" * 6
    vi = "Thành phố Hà Nội vừa công bố kế hoạch cải tạo hệ thống giao thông công cộng. " * 6
    zh_html = f"<html><head><meta charset='gbk'></head><body><article><p>{zh}</p><p>{zh}</p>"
    vi_html = f"<html><body><article><p>{vi}</p><p>{vi}</p></article></body></html>"
    ingest(
        factories.warc_bytes(
            [("https://xinwen.example.cn/a", (zh_html + "</article></body></html>").encode("gbk"))],
            content_type="text/html; charset=gbk",
        )
    )
    ingest(
        factories.warc_bytes(
            [("https://tintuc.example.vn/a", cp1258_form(vi_html).encode("cp1258"))],
            content_type="text/html; charset=windows-1258",
        )
    )
    zh_doc = Document.objects.get(url="https://xinwen.example.cn/a")
    assert zh_doc.detected_encoding in {"gb18030", "gbk"}
    assert "北京市今天举行了新闻发布会" in zh_doc.extractions.get().main_text
    vi_doc = Document.objects.get(url="https://tintuc.example.vn/a")
    assert vi_doc.detected_encoding == "cp1258"
    text = unicodedata.normalize("NFC", vi_doc.extractions.get().main_text)
    assert "Thành phố Hà Nội vừa công bố" in text


def test_utf8_page_with_bad_bytes_keeps_utf8_and_records_the_count(ingest) -> None:
    text = factories.article_text(4)
    html = factories.article_html("Zürich’s café “Grünau” reopens", text + " Grüße aus Zürich")
    cut = len(html) // 2
    body = html[:cut].encode() + b"\xe9\x96\xff" + html[cut:].encode()
    data = factories.warc_bytes([("https://news.example.com/zurich", body)])

    summary = ingest(data)

    document = Document.objects.get(pk=summary.document_ids[0])
    assert document.detected_encoding == "utf-8"
    extraction = Extraction.objects.get(document=document)
    assert extraction.title == "Zürich’s café “Grünau” reopens"
    error = BatchError.objects.get(kind="charset_mismatch", url="https://news.example.com/zurich")
    assert "3 bytes invalid" in error.message


def test_a_chunks_new_sites_are_made_in_a_few_statements(ingest) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    pages = [
        (f"https://host{i}.example.org/a", factories.article_html(f"S {i}", "x").encode())
        for i in range(12)
    ]
    Site.objects.create(host="host3.example.org", priority=5)  # an existing one is kept
    with CaptureQueriesContext(connection) as ctx:
        summary = ingest(factories.warc_bytes(pages))
    assert summary.stored == 12
    site_statements = [q for q in ctx.captured_queries if '"ingest_site"' in q["sql"]]
    assert len(site_statements) <= 4, [q["sql"][:80] for q in site_statements]
    hosts = {d.site.host for d in Document.objects.select_related("site")}
    assert hosts == {f"host{i}.example.org" for i in range(12)}
    assert Site.objects.get(host="host3.example.org").priority == 5
