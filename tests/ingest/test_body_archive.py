"""Bodies in the desk's own archive (ingest.body_store): every ingest path writes there,
the input may then be deleted, every body reads back verified, a missing or changed file
is a clear error, and bodies stored in the database stay readable. Runs on SQLite and,
with DATABASE_URL, on PostgreSQL."""

import hashlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from ingest import body_store, services
from ingest.core import warc_archive
from ingest.core.readers import Item, read_warc
from ingest.models import ArchiveFile, BatchError, Document, DocumentBody, Extraction, Site
from tests import factories

pytestmark = pytest.mark.django_db


def _pages(n: int, host: str = "arch.example.com") -> list[tuple[str, bytes]]:
    return [
        (
            f"https://{host}/story-{i}",
            factories.article_html(f"Story {i}", factories.article_text(i)).encode(),
        )
        for i in range(n)
    ]


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _tamper(path: Path, body: DocumentBody) -> None:
    """Change one byte in the middle of the body's record."""
    assert body.archive_offset is not None and body.archive_length is not None
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[body.archive_offset + body.archive_length // 2] ^= 0x20
    path.write_bytes(bytes(data))


@pytest.fixture
def ingested(archive_dir: Path, tmp_path: Path, committed) -> list[Document]:
    """A WARC and a JSONL file ingested by the command, then deleted."""
    pages = _pages(3)
    warc = tmp_path / "crawl.warc.gz"
    warc.write_bytes(factories.warc_bytes(pages))
    jsonl = tmp_path / "crawl.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"url": f"https://j.example.com/{i}", "html": html.decode()}) + "\n"
            for i, (_, html) in enumerate(_pages(2, "j.example.com"))
        ),
        encoding="utf-8",
    )
    with committed():
        _run("ingest", str(warc), str(jsonl), "--no-progress")
    warc.unlink()
    jsonl.unlink()
    return list(Document.objects.order_by("pk"))


def test_every_body_reads_back_verified_after_the_input_is_deleted(ingested) -> None:
    assert len(ingested) == 5
    for document in ingested:
        body = DocumentBody.objects.get(document=document)
        assert body.codec == "warc" and bytes(body.data) == b""
        raw = body.raw()
        assert hashlib.sha256(raw).hexdigest() == document.raw_sha256
    read = DocumentBody.bulk_read([d.pk for d in ingested])
    assert {d: hashlib.sha256(b.raw()).hexdigest() for d, b in read.items()} == {
        d.pk: d.raw_sha256 for d in ingested
    }
    # The workers read them too: every document was extracted.
    assert Extraction.objects.filter(document__in=ingested, status="ok").count() == 5


def test_the_command_seals_the_file_it_wrote(ingested, archive_dir: Path) -> None:
    [row] = ArchiveFile.objects.all()
    assert row.sealed_at is not None
    assert (row.size, row.sha256) == warc_archive.file_digest(archive_dir / row.path)
    assert (
        _run("archive_verify")
        .strip()
        .endswith("1 archive file(s) checked (0 open), 0 with problems")
    )


def test_a_changed_archive_file_is_a_named_error_and_archive_verify_fails(
    ingested, archive_dir: Path
) -> None:
    row = ArchiveFile.objects.get()
    first = DocumentBody.objects.select_related("document", "archive_file").get(
        document=ingested[0]
    )
    _tamper(archive_dir / row.path, first)
    with pytest.raises(warc_archive.ArchiveError, match=row.path):
        first.raw()
    with pytest.raises(CommandError, match="missing or changed"):
        _run("archive_verify")


def test_a_missing_archive_file_says_which(ingested, archive_dir: Path) -> None:
    row = ArchiveFile.objects.get()
    (archive_dir / row.path).unlink()
    body = DocumentBody.objects.get(document=ingested[-1])
    with pytest.raises(
        warc_archive.ArchiveFileMissing, match=f"archive file {row.path} is missing"
    ):
        body_store.body_read(document=ingested[-1])
    with pytest.raises(warc_archive.ArchiveFileMissing):
        body.raw()
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("archive_verify", stdout=out)
    assert f"archive file {row.path} is missing; 5 bodies stored in it" in out.getvalue()


def test_extracting_an_unreadable_body_writes_nothing_and_names_it(
    archive_dir: Path, committed
) -> None:
    with committed():
        summary = services.batch_ingest(
            source="t.warc.gz",
            fmt="warc",
            items=_items(_pages(2)),
        )
    row = ArchiveFile.objects.get()
    (archive_dir / row.path).unlink()
    documents = list(Document.objects.filter(pk__in=summary.document_ids))
    with pytest.raises(body_store.BodiesUnreadable, match="2 bodies unreadable"):
        services.documents_extract(documents=documents, version="another-version")
    assert not Extraction.objects.filter(extractor_version="another-version").exists()


def test_processing_goes_on_without_an_unreadable_body_and_records_it(
    archive_dir: Path, settings
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    summary = services.batch_ingest(source="t.warc.gz", fmt="warc", items=_items(_pages(2)))
    # Not processed yet: `committed` not used, the on-commit work never ran.
    assert not Extraction.objects.exists()
    first, second = sorted(summary.document_ids)
    # The second body's record now points past the end of its file: unreadable.
    row = ArchiveFile.objects.get()
    path = archive_dir / row.path
    path.chmod(0o644)
    keep = DocumentBody.objects.get(document_id=second).archive_offset
    assert keep is not None
    with open(path, "r+b") as f:
        f.truncate(keep + 10)
    services.documents_process(document_ids=[first, second])
    assert list(Extraction.objects.values_list("document_id", flat=True)) == [first]
    error = BatchError.objects.get(kind="body_unreadable")
    assert error.url == "https://arch.example.com/story-1"
    assert "shorter than recorded" in error.message


def _items(pages: list[tuple[str, bytes]]) -> Iterator[Item]:
    return read_warc(io.BytesIO(factories.warc_bytes(pages)))


def test_files_rotate_at_the_cap_and_each_sealed_file_has_its_digest(
    archive_dir: Path, settings, committed
) -> None:
    settings.ARCHIVE_FILE_MAX_BYTES = 3000
    settings.INGEST_CHUNK_SIZE = 2
    settings.PROCESS_TASK_SIZE = 2
    with committed():
        services.batch_ingest(source="t.warc.gz", fmt="warc", items=_items(_pages(6)))
    rows = list(ArchiveFile.objects.order_by("pk"))
    assert len(rows) > 1
    assert all(r.sealed_at is not None for r in rows[:-1])
    for row in rows[:-1]:
        assert (row.size, row.sha256) == warc_archive.file_digest(archive_dir / row.path)
    assert rows[-1].sealed_at is None  # still this process's open file
    for document in Document.objects.all():
        assert hashlib.sha256(document.body.raw()).hexdigest() == document.raw_sha256
    assert body_store.archive_seal_own() == rows[-1].path
    assert ArchiveFile.objects.filter(sealed_at=None).count() == 0


def test_a_file_left_open_by_a_dead_writer_is_sealed_by_archive_seal(archive_dir: Path) -> None:
    me = warc_archive.WriterId.current()
    dead = warc_archive.WriterId(me.host, me.pid, me.started + 1 if me.started else 0)
    writer = warc_archive.ArchiveWriter(archive_dir, 1 << 20, dead)
    entry = warc_archive.Entry(
        uri="https://x/", payload=b"x", sha256=hashlib.sha256(b"x").hexdigest()
    )
    [pointer] = writer.append([entry]).pointers
    writer.close_unsealed()
    ArchiveFile.objects.create(
        path=pointer.path, host=dead.host, pid=dead.pid, process_started=dead.started
    )
    other = ArchiveFile.objects.create(
        path="elsewhere.warc.gz", host="another-host.invalid", pid=1, process_started=1
    )
    if not me.started:
        pytest.skip("no /proc: a process's start time cannot be read")
    out = _run("archive_seal")
    assert f"sealed {pointer.path}" in out
    row = ArchiveFile.objects.get(path=pointer.path)
    assert (row.size, row.sha256) == warc_archive.file_digest(archive_dir / pointer.path)
    other.refresh_from_db()
    assert other.sealed_at is None  # another host's file is that host's to seal


def test_body_store_database_keeps_bodies_in_the_database(
    settings, committed, archive_dir: Path
) -> None:
    settings.BODY_STORE = "database"
    with committed():
        summary = services.batch_ingest(source="t.warc.gz", fmt="warc", items=_items(_pages(2)))
    assert not ArchiveFile.objects.exists()
    assert not any(archive_dir.rglob("*.warc.gz"))
    for document in Document.objects.filter(pk__in=summary.document_ids):
        assert document.body.codec == "zstd"
        assert hashlib.sha256(document.body.raw()).hexdigest() == document.raw_sha256
    assert Extraction.objects.filter(status="ok").count() == 2


def test_a_body_stored_in_the_database_stays_readable_under_the_archive(
    archive_dir: Path, committed
) -> None:
    html = factories.article_html("Old", factories.article_text(5)).encode()
    site = Site.objects.create(host="old.example.com")
    old = Document.objects.create(
        site=site,
        url="https://old.example.com/",
        fetched_at="2026-01-01T00:00:00Z",
        raw_sha256=hashlib.sha256(html).hexdigest(),
        raw_size=len(html),
    )
    DocumentBody.objects.create(document=old, data=DocumentBody.pack(html))
    with committed():
        summary = services.batch_ingest(source="t.warc.gz", fmt="warc", items=_items(_pages(1)))
    new = Document.objects.get(pk=summary.document_ids[0])
    read = DocumentBody.bulk_read([old.pk, new.pk])
    assert read[old.pk].codec == "zstd" and read[old.pk].raw() == html
    assert read[new.pk].codec == "warc"
    assert hashlib.sha256(read[new.pk].raw()).hexdigest() == new.raw_sha256
    assert Document.objects.get(pk=old.pk).body.raw() == html


def test_an_archived_body_costs_the_database_a_pointer_only(archive_dir: Path, committed) -> None:
    with committed():
        services.batch_ingest(source="t.warc.gz", fmt="warc", items=_items(_pages(3)))
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(length(data)) FROM ingest_documentbody")
        assert cursor.fetchone()[0] == 0


def test_the_api_stores_through_the_archive(client, api_token: str, archive_dir: Path) -> None:
    html = factories.article_html("Api", factories.article_text(9))
    r = client.post(
        "/api/v1/documents",
        {"url": "https://api.example.com/1", "html": html},
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert r.status_code == 201, r.content
    document = Document.objects.get(url="https://api.example.com/1")
    assert document.body.codec == "warc"
    assert document.body.raw() == html.encode()
    assert os.listdir(archive_dir)


def test_a_seal_whose_record_was_rolled_back_is_recorded_by_the_next_sweep(
    archive_dir: Path,
) -> None:
    writer = warc_archive.ArchiveWriter(archive_dir, 1 << 20)
    entry = warc_archive.Entry(
        uri="https://x/", payload=b"y", sha256=hashlib.sha256(b"y").hexdigest()
    )
    [pointer] = writer.append([entry]).pointers
    me = writer.writer
    ArchiveFile.objects.create(
        path=pointer.path, host=me.host, pid=me.pid, process_started=me.started
    )
    writer.seal()  # closed and read-only; its record never made it to the database
    assert body_store.archive_seal_dead() == [pointer.path]
    row = ArchiveFile.objects.get(path=pointer.path)
    assert (row.size, row.sha256) == warc_archive.file_digest(archive_dir / pointer.path)


def test_a_host_gone_for_good_has_its_open_files_sealed_on_request(archive_dir: Path) -> None:
    gone = warc_archive.WriterId("old-worker-7", 4242, 99)
    writer = warc_archive.ArchiveWriter(archive_dir, 1 << 20, gone)
    entry = warc_archive.Entry(
        uri="https://x/", payload=b"z", sha256=hashlib.sha256(b"z").hexdigest()
    )
    [pointer] = writer.append([entry]).pointers
    writer.close_unsealed()
    ArchiveFile.objects.create(path=pointer.path, host=gone.host, pid=gone.pid, process_started=99)
    assert "0 file(s) sealed" in _run("archive_seal")
    assert f"sealed {pointer.path}" in _run("archive_seal", "--gone-host", "old-worker-7")
    assert ArchiveFile.objects.get(path=pointer.path).sealed_at is not None


def test_after_a_restore_archive_verify_hands_the_skipped_documents_back(
    archive_dir: Path, committed
) -> None:
    summary = services.batch_ingest(source="t.warc.gz", fmt="warc", items=_items(_pages(2)))
    row = ArchiveFile.objects.get()
    path = archive_dir / row.path
    path.rename(path.with_suffix(".away"))
    services.documents_process(document_ids=summary.document_ids)
    assert BatchError.objects.filter(kind="body_unreadable").count() == 2
    assert not Extraction.objects.exists()
    path.with_suffix(".away").rename(path)  # restored from a backup
    with committed():
        out = _run("archive_verify", "--reprocess")
    assert "2 unprocessed document(s) handed to the workers" in out
    assert Extraction.objects.filter(status="ok").count() == 2


def test_a_re_extraction_run_stops_on_a_missing_file_with_it_on_record(
    archive_dir: Path, committed, settings
) -> None:
    from ingest.core.methods import CURRENT_REFERENCE_KEY, EXTRACTOR, REFERENCE_KEY
    from reviews.operations import method_upgrades as upgrades

    # Stored under the first extractor; the current one re-extracts from the bytes.
    settings.ACTIVE_METHOD = REFERENCE_KEY
    settings.CANDIDATE_METHODS = [REFERENCE_KEY]
    settings.FINGERPRINT_METHODS = [REFERENCE_KEY]
    with committed():
        services.batch_ingest(source="t.warc.gz", fmt="warc", items=_items(_pages(2)))
    row = ArchiveFile.objects.get()
    path = archive_dir / row.path
    path.rename(path.with_suffix(".away"))
    run = upgrades.run_start(key=CURRENT_REFERENCE_KEY, enqueue=False)
    with pytest.raises(body_store.BodiesUnreadable):
        upgrades.run_work(run_id=run.pk, seconds=5)
    run.refresh_from_db()
    assert run.status == "failed"
    assert f"archive file {row.path} is missing" in run.message
    assert not Extraction.objects.filter(extractor_version=EXTRACTOR).exists()

    path.with_suffix(".away").rename(path)  # restored; restarting resumes the run
    run = upgrades.run_start(key=CURRENT_REFERENCE_KEY, enqueue=False)
    assert upgrades.run_work(run_id=run.pk, seconds=30).status == "done"
    assert Extraction.objects.filter(extractor_version=EXTRACTOR).count() == 2


def test_the_pages_that_show_the_bytes_say_the_file_is_missing(
    client, editor, archive_dir: Path, tmp_path: Path, committed
) -> None:
    """The source frame and the pair's HTML diff name the missing file: a 200, never a
    500, and no bytes pretending to be the page."""
    html = factories.article_html("Wire story", factories.article_text(41)).encode()
    warc = tmp_path / "copies.warc.gz"
    warc.write_bytes(
        factories.warc_bytes([("https://a.example.com/s", html), ("https://b.example.com/s", html)])
    )
    with committed():
        _run("ingest", str(warc), "--no-progress")
    a, b = Document.objects.order_by("pk")
    pair = factories.pair_of(a, b)
    row = ArchiveFile.objects.get()
    (archive_dir / row.path).unlink()
    client.force_login(editor)
    source = client.get(f"/review/documents/{a.pk}/source")
    assert source.status_code == 200
    assert f"archive file {row.path} is missing" in source.content.decode()
    diff = client.get(f"/review/pairs/{pair.id}/", {"view": "html"})
    assert diff.status_code == 200
    assert f"archive file {row.path} is missing" in diff.content.decode()
