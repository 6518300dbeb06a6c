"""The broken-archive corpus through the ingest command: every good record is stored,
every damaged region and every bad record is recorded with its offset."""

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from ingest.models import BatchError, CrawlBatch, Document
from tests import broken_archives

pytestmark = pytest.mark.django_db

CORPUS = {archive.name: archive for archive in broken_archives.corpus()}
WARNINGS = {"bad_header", "bad_date", "bad_html"}  # recorded on records that are stored


def _ingest(path: Path) -> tuple[CrawlBatch, bool]:
    """The batch, and whether the command ended with an error (a damaged file does,
    after storing everything readable)."""
    try:
        call_command("ingest", str(path), "--no-progress", stdout=io.StringIO())
    except CommandError:
        return CrawlBatch.objects.get(source=str(path)), True
    return CrawlBatch.objects.get(source=str(path)), False


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_good_record_is_stored_and_every_damage_recorded(tmp_path: Path, name: str) -> None:
    archive = CORPUS[name]
    path = tmp_path / archive.name
    path.write_bytes(archive.data)

    batch, failed = _ingest(path)

    assert failed == bool(archive.damaged_offsets)
    stored = list(Document.objects.filter(batch=batch).values_list("url", flat=True))
    assert sorted(stored) == sorted(archive.good_urls)
    errors = BatchError.objects.filter(batch=batch)
    corrupt = sorted(e.offset for e in errors if e.kind == "corrupt")
    assert corrupt == sorted(archive.damaged_offsets)
    assert {e.offset: e.kind for e in errors if e.kind != "corrupt"} == archive.bad_offsets
    assert {e.offset for e in errors if e.stored} == {
        offset for offset, kind in archive.bad_offsets.items() if kind in WARNINGS
    }
    assert batch.status == CrawlBatch.Status.DONE
    assert batch.error_count == len(archive.damaged_offsets) + sum(
        1 for kind in archive.bad_offsets.values() if kind not in WARNINGS
    )


def test_the_damaged_ranges_are_named(tmp_path: Path) -> None:
    archive = CORPUS["junk-members.warc.gz"]
    path = tmp_path / archive.name
    path.write_bytes(archive.data)

    batch, _ = _ingest(path)

    messages = [e.message for e in batch.errors.filter(kind="corrupt")]
    assert all("damaged region" in m for m in messages)
    assert str(archive.damaged_offsets[1]) in messages[1]


def test_clueweb_bad_date_is_recorded_as_a_warning_on_a_stored_record(tmp_path: Path) -> None:
    archive = CORPUS["clueweb09-00.warc.gz"]
    path = tmp_path / archive.name
    path.write_bytes(archive.data)

    batch, _ = _ingest(path)

    warning = batch.errors.get(kind="bad_date")
    assert warning.stored
    assert "ingest time" in warning.message
    document = Document.objects.get(url=warning.url)
    assert document.fetched_at >= batch.started_at
