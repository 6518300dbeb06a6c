"""A real worker reads bodies from the archive the ingesting process wrote, verifies
them, and records the one it cannot read instead of failing the batch."""

import io
from pathlib import Path

import pytest

from ingest import services
from ingest.core.readers import read_warc
from ingest.models import BatchError, DocumentBody, Extraction
from tests import factories
from tests.factories import wait_until

pytestmark = [pytest.mark.redis, pytest.mark.postgres]


def test_a_worker_extracts_archived_bodies_and_records_a_changed_one(
    archive_dir: Path, worker_factory, settings
) -> None:
    settings.PROCESS_TASK_SIZE = 10
    pages = [
        (
            f"https://aw.example.com/story-{i}",
            factories.article_html(f"Story {i}", factories.article_text(i, words=300)).encode(),
        )
        for i in range(6)
    ]
    worker = worker_factory()  # started after the tampering: nothing is processed before
    summary = services.batch_ingest(
        source="w", fmt="warc", items=read_warc(io.BytesIO(factories.warc_bytes(pages)))
    )
    assert summary.stored == 6
    bodies = DocumentBody.objects.select_related("archive_file").order_by("document_id")
    assert {b.codec for b in bodies} == {"warc"}
    changed = bodies[2]
    assert changed.archive_file is not None and changed.archive_offset is not None
    path = archive_dir / changed.archive_file.path
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[changed.archive_offset + (changed.archive_length or 0) // 2] ^= 0x01
    path.write_bytes(bytes(data))

    worker.start()
    wait_until(lambda: Extraction.objects.count() == 5, 60, "five extractions")
    wait_until(lambda: BatchError.objects.filter(kind="body_unreadable").exists(), 30, "the error")
    error = BatchError.objects.get(kind="body_unreadable")
    assert error.url == "https://aw.example.com/story-2"
    assert changed.archive_file.path in error.message
    assert not Extraction.objects.filter(document_id=changed.document_id).exists()
