"""The documents list past DOCUMENT_LIST_EXACT_COUNT_MAX documents: unfiltered, it shows
PostgreSQL's estimate of the count and never counts the table (~200 ms a page at 10M);
a filtered list is still counted."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests import factories

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _documents(n: int) -> None:
    for i in range(n):
        factories.passage_document(i, "count.example.com", [i], datetime(2026, 5, 1, tzinfo=UTC))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_document")


def _counts(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]


def test_a_large_unfiltered_list_shows_the_estimate_without_counting(
    client, editor, settings
) -> None:
    settings.DOCUMENT_LIST_EXACT_COUNT_MAX = 3
    _documents(5)
    client.force_login(editor)
    with CaptureQueriesContext(connection) as queries:
        page = client.get("/").content.decode()
    assert "about 5 documents" in page
    assert not any("ingest_document" in sql for sql in _counts(queries))


def test_a_small_or_filtered_list_is_counted(client, editor, settings) -> None:
    _documents(5)
    client.force_login(editor)
    settings.DOCUMENT_LIST_EXACT_COUNT_MAX = 10
    small = client.get("/").content.decode()
    assert "5 documents" in small and "about 5" not in small
    settings.DOCUMENT_LIST_EXACT_COUNT_MAX = 3
    with CaptureQueriesContext(connection) as queries:
        searched = client.get("/", {"q": "count.example.com"}).content.decode()
    assert "about" not in searched.split('class="count"')[1][:80]
    assert any("ingest_document" in sql for sql in _counts(queries))
