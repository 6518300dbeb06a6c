"""Search documents and pairs by URL, title and text: pg_trgm indexes on PostgreSQL
(Chinese characters included), a plain LIKE elsewhere."""

import pytest
from django.db import connection
from django.db.models import Q
from django.urls import reverse

from ingest import selectors as ingest_selectors
from ingest.models import Document, Extraction
from reviews.queue import desk_search
from tests.factories import TEXT, find, pair_of, reviewed_document

pytestmark = pytest.mark.django_db

ZH_TITLE = "长江流域今年降雨偏多 防汛部门加强巡查"
ZH_TEXT = "记者今天从水利部门获悉，长江中下游地区近期降雨明显偏多，多地河流水位上涨。" * 8


@pytest.fixture
def zh_pair(db):
    a = reviewed_document(url="https://news.example.cn/a", text=ZH_TEXT, title=ZH_TITLE)
    b = reviewed_document(
        url="https://copy.example.cn/b", text=ZH_TEXT + "完", flips=1, title=ZH_TITLE + "（转载）"
    )
    other = reviewed_document(
        url="https://shop.example.com/lamp", text=TEXT, title="Brass Desk Lamp", base=0
    )
    find(a, b, other)
    return a, b, other


def test_a_chinese_title_finds_its_documents_and_pair(zh_pair, client, editor) -> None:
    a, b, other = zh_pair
    for term in ("防汛", "长江流域", "巡查"):
        found = {hit.document.pk for hit in desk_search.search(q=term).documents}  # type: ignore[union-attr]
        assert found == {a.pk, b.pk}, term
    results = desk_search.search(q="防汛部门")
    assert results is not None
    assert [hit.pair.id for hit in results.pairs] == [pair_of(a, b).id]
    client.force_login(editor)
    page = client.get(reverse("reviews:search"), {"q": "防汛"}).content.decode()
    assert ZH_TITLE in page and reverse("reviews:pair-detail", args=[pair_of(a, b).id]) in page
    assert reverse("ingest:document-detail", args=[other.pk]) not in page


def test_text_url_and_case_are_searched(zh_pair) -> None:
    a, b, other = zh_pair
    ids = lambda q: set(ingest_selectors.documents_search(q=q).values_list("pk", flat=True))  # noqa: E731
    assert ids("水位上涨") == {a.pk, b.pk}  # main text, not the title
    assert ids("brass DESK") == {other.pk}  # title, any case
    assert ids("shop.example") == {other.pk}  # URL
    assert ids("转载") == {b.pk}
    assert ids("100%") == set()  # a LIKE wildcard is a character, not a pattern
    assert desk_search.search(q="长") is None  # one character: too short to search


def test_the_documents_page_searches_titles_too(zh_pair, client, editor) -> None:
    a, b, other = zh_pair
    client.force_login(editor)
    page = client.get(reverse("ingest:document-list"), {"q": "防汛"}).content.decode()
    assert "2 documents" in page
    assert reverse("ingest:document-detail", args=[other.pk]) not in page


@pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_trgm is PostgreSQL's")
def test_postgresql_serves_the_search_from_trigram_indexes(zh_pair) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE '%%_trgm'")
        names = {r[0] for r in cursor.fetchall()}
        assert {"extraction_title_trgm", "extraction_main_text_trgm"} <= names
        assert {"document_url_trgm", "document_final_url_trgm"} <= names
        # Off: a scan of the table or of its primary key (which a tiny table prefers).
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        # The lookups the search makes, as Django writes them (UPPER(column::text) LIKE):
        # the expression indexes serve them.
        for qs, wanted in [
            (
                Extraction.objects.filter(
                    Q(title__icontains="防汛部门") | Q(main_text__icontains="防汛")
                ),
                {"extraction_title_trgm", "extraction_main_text_trgm"},
            ),
            (
                Document.objects.filter(
                    Q(url__icontains="example") | Q(final_url__icontains="x.cn")
                ),
                {"document_url_trgm", "document_final_url_trgm"},
            ),
        ]:
            sql, params = qs.values("pk").query.sql_with_params()
            cursor.execute("EXPLAIN " + sql, params)
            plan = "\n".join(r[0] for r in cursor.fetchall())
            assert all(name in plan for name in wanted), plan
