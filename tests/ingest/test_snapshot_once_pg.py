"""One document per snapshot (url, fetched_at, raw digest) with no unique index behind
it (dedup_site/distribution.py): two ingests of the same record at once, against a real
PostgreSQL, store it once. The writer looks the snapshot up under the digest's lock."""

import io
import threading
import time
from typing import Any

import pytest
from django.db import connections

from ingest import services
from ingest.core.readers import read_warc
from ingest.models import Document
from tests import factories

pytestmark = pytest.mark.postgres

URL = "https://news.example.com/story"
TEXT = factories.article_text(7)


def _ingest(data: bytes, out: dict[str, Any]) -> None:
    try:
        out["summary"] = services.batch_ingest(
            source="same.warc.gz",
            fmt="warc",
            items=read_warc(io.BytesIO(data)),
            on_stored=lambda ids: None,  # nothing to process: the rows are the point
        )
    except BaseException as e:  # noqa: BLE001 - reported by the test
        out["error"] = e
    finally:
        connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_two_ingests_of_one_record_at_once_store_it_once(monkeypatch) -> None:
    data = factories.warc_bytes([(URL, factories.article_html("Story", TEXT).encode())])
    inserted = threading.Event()
    create = services._documents_create

    def slow_first(documents: Any, bodies: Any) -> list[int]:
        # The first ingest inserts, then holds its transaction open a while: the second
        # one has looked (and found nothing committed) and must wait for it.
        ids = create(documents, bodies)
        if threading.current_thread().name == "first":
            inserted.set()
            time.sleep(1.5)
        return ids

    monkeypatch.setattr(services, "_documents_create", slow_first)
    first: dict[str, Any] = {}
    second: dict[str, Any] = {}
    a = threading.Thread(target=_ingest, args=(data, first), name="first")
    a.start()
    assert inserted.wait(60)
    b = threading.Thread(target=_ingest, args=(data, second), name="second")
    b.start()
    a.join(60)
    b.join(60)
    assert "error" not in first and "error" not in second, (first, second)
    assert Document.objects.filter(url=URL).count() == 1
    assert (first["summary"].stored, first["summary"].already_stored) == (1, 0)
    assert (second["summary"].stored, second["summary"].already_stored) == (0, 1)
