"""How an ingest hands its documents to the workers: chunk by chunk as they commit."""

import io

import pytest

from ingest import services
from ingest.core.readers import read_warc
from tests import factories

pytestmark = pytest.mark.django_db


def test_the_first_chunks_grow_from_one_task_so_the_workers_start_early(
    settings, monkeypatch
) -> None:
    settings.PROCESS_TASK_SIZE = 2
    settings.INGEST_CHUNK_SIZE = 5
    handed: list[int] = []
    monkeypatch.setattr(services, "documents_enqueue", lambda ids: handed.append(len(ids)))
    pages = [
        (f"https://chunks.example.com/{i}", factories.article_html(f"Page {i}", "text").encode())
        for i in range(20)
    ]
    data = factories.warc_bytes(pages)

    summary = services.batch_ingest(source="c.warc", fmt="warc", items=read_warc(io.BytesIO(data)))

    assert summary.stored == 20
    # One task's worth, then twice the last, up to INGEST_CHUNK_SIZE.
    assert handed == [2, 4, 5, 5, 4]
