"""`manage.py ingest --bulk` (ingest.bulk): the same documents, extractions,
fingerprints, pairs and groups as the normal path; bad records recorded; re-runs add
nothing; a stopped run is finished by the next."""

import hashlib
import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from ingest import bulk, candidates, services
from ingest.core.readers import read_warc
from ingest.models import (
    BatchError,
    CandidatePair,
    CrawlBatch,
    Document,
    Extraction,
    Fingerprint,
    GroupMember,
)
from tests import factories

Snapshot = dict[str, set[tuple[object, ...]]]


def _pages() -> list[tuple[str, bytes]]:
    """Ten distinct articles, then copies of three of them: syndicated (another host,
    another title), lightly edited, and byte for byte at another URL."""
    texts = {i: factories.article_text(i, words=320) for i in range(10)}
    pages = [
        (f"https://news{i % 3}.example.com/a/{i}", factories.article_html(f"T{i}", texts[i]))
        for i in range(10)
    ]
    edited = texts[1].replace(texts[1].split()[5], "zebra", 1)
    pages += [
        ("https://other.example.org/syndicated/0", factories.article_html("Elsewhere", texts[0])),
        ("https://news1.example.com/a/1?rev=2", factories.article_html("T1", edited)),
        ("https://mirror.example.net/2", factories.article_html("T2", texts[2])),
    ]
    return [(url, html.encode()) for url, html in pages]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _snapshot() -> Snapshot:
    url = dict(Document.objects.values_list("pk", "url"))
    return {
        "documents": set(Document.objects.values_list("url", "raw_sha256", "doc_type")),
        "extractions": {
            (
                url[e.document_id],
                e.extractor_version,
                e.status,
                _sha(e.main_text),
                _sha(e.full_text),
            )
            for e in Extraction.objects.all()
        },
        "fingerprints": {
            (url[f.document_id], f.method.key, b.branch, b.status, b.simhash, b.text_sha256)
            for f in Fingerprint.objects.select_related("method")
            for b in f.branches()
        },
        "pairs": {
            (p.method.key, frozenset((url[p.a_id], url[p.b_id])))
            for p in CandidatePair.objects.select_related("method")
        },
        "groups": {
            (key.split()[0], frozenset(url[d] for d in members))
            for key, members in _groups().items()
        },
    }


def _groups() -> dict[str, list[int]]:
    """Each group's documents, by method key and group."""
    groups: dict[str, list[int]] = {}
    for key, group, document in GroupMember.objects.values_list(
        "method__key", "group_id", "document_id"
    ):
        groups.setdefault(f"{key} {group}", []).append(document)
    return {key: members for key, members in groups.items()}


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("ingest", *args, "--no-progress", stdout=out)
    return out.getvalue()


def _warc(tmp_path: Path, pages: list[tuple[str, bytes]], name: str = "crawl.warc.gz") -> Path:
    path = tmp_path / name
    path.write_bytes(factories.warc_bytes(pages))
    return path


def _bulk_equals_normal(tmp_path: Path, settings) -> None:
    path = _warc(tmp_path, _pages())
    # The normal path in small chunks and tasks (eager here), so that its searches run
    # chunk by chunk as on the workers.
    settings.PROCESS_TASK_SIZE = 3
    settings.INGEST_CHUNK_SIZE = 4
    _run(str(path))
    normal = _snapshot()
    assert normal["pairs"] and normal["groups"], "the fixture must make pairs and groups"
    print({k: len(v) for k, v in normal.items()})
    call_command("flush", "--no-input", verbosity=0)
    out = _run(str(path), "--bulk", "--jobs", "2", "--chunk", "4", "--search-batch", "5")
    assert "processed 13" in out
    bulk = _snapshot()
    for key in normal:
        assert bulk[key] == normal[key], key


@pytest.mark.django_db(transaction=True)
def test_bulk_gives_what_the_normal_path_gives(tmp_path: Path, settings) -> None:
    _bulk_equals_normal(tmp_path, settings)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_bulk_gives_what_the_normal_path_gives_on_postgres(tmp_path: Path, settings) -> None:
    assert connection.vendor == "postgresql"
    _bulk_equals_normal(tmp_path, settings)


@pytest.mark.django_db
def test_bulk_in_one_process_gives_the_same_rows_as_with_workers(tmp_path: Path) -> None:
    path = _warc(tmp_path, _pages())
    _run(str(path), "--bulk", "--jobs", "1", "--chunk", "5")
    assert Document.objects.count() == 13
    assert Extraction.objects.count() == 13
    assert Fingerprint.objects.filter(simhash__isnull=False).exists()
    assert CandidatePair.objects.exists()
    batch = CrawlBatch.objects.get()
    assert (batch.status, batch.stored, batch.records_read) == ("done", 13, 13)


@pytest.mark.django_db
def test_a_corrupt_record_is_recorded_and_the_rest_stored(tmp_path: Path) -> None:
    pages = _pages()
    path = tmp_path / "damaged.warc.gz"
    junk = b"\x1f\x8b\x08\x00not a gzip member at all" * 10
    path.write_bytes(factories.warc_bytes(pages[:6]) + junk + factories.warc_bytes(pages[6:]))
    with pytest.raises(CommandError, match="damaged"):
        _run(str(path), "--bulk", "--jobs", "2", "--chunk", "4")
    batch = CrawlBatch.objects.get()
    assert batch.stored == 13
    assert batch.status == "done"
    assert BatchError.objects.filter(batch=batch, kind="corrupt").count() == 1
    assert Extraction.objects.count() == 13


@pytest.mark.django_db
def test_running_the_same_file_again_adds_nothing(tmp_path: Path) -> None:
    path = _warc(tmp_path, _pages())
    _run(str(path), "--bulk", "--jobs", "2", "--chunk", "4")
    before = _snapshot()
    out = _run(str(path), "--bulk", "--jobs", "2", "--chunk", "4")
    assert "stored 0, already stored 13" in out
    assert _snapshot() == before
    assert Document.objects.count() == 13
    assert Extraction.objects.count() == 13


@pytest.mark.django_db
def test_a_stopped_run_is_finished_by_the_next(tmp_path: Path) -> None:
    """A run killed after storing, before processing: the next run of the file
    processes and searches what it stored, and stores nothing twice."""
    path = _warc(tmp_path, _pages())
    with path.open("rb") as fh:
        summary = services.batch_ingest(
            source=str(path), fmt="warc", items=read_warc(fh), on_stored=lambda ids: None
        )
    CrawlBatch.objects.filter(pk=summary.batch_id).update(status="failed")
    assert not Extraction.objects.exists()
    out = _run(str(path), "--bulk", "--jobs", "2", "--chunk", "4")
    assert "stored 0, already stored 13" in out
    assert "resumed 13" in out
    assert Extraction.objects.count() == 13
    assert CandidatePair.objects.exists()


@pytest.mark.parametrize("fail_on", [1, 2], ids=["while-reading", "after-the-file"])
@pytest.mark.django_db(transaction=True)
def test_a_run_stopped_in_a_search_is_finished_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_on: int
) -> None:
    """The first search fails (while the file is still read), or the last (after it):
    the batch says it failed, and the next run ends with what one clean run gives."""
    path = _warc(tmp_path, _pages())
    args = (str(path), "--bulk", "--jobs", "2", "--chunk", "4", "--search-batch", "5")
    _run(*args)
    clean = _snapshot()
    call_command("flush", "--no-input", verbosity=0)

    real = candidates.candidates_find
    calls = [0]

    def failing(**kwargs: object) -> dict[str, int]:
        calls[0] += 1
        if calls[0] == fail_on:
            raise RuntimeError("search lost")
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(candidates, "candidates_find", failing)
    with pytest.raises(RuntimeError, match="search lost"):
        _run(*args)
    monkeypatch.setattr(candidates, "candidates_find", real)
    stopped = CrawlBatch.objects.get()
    assert stopped.status == "failed"
    assert BatchError.objects.filter(batch=stopped, kind="ingest_failed").exists()

    out = _run(*args)
    assert "resumed" in out
    assert Document.objects.count() == 13
    assert _snapshot() == clean


@pytest.mark.django_db
def test_the_resume_finds_the_batchs_last_indexed_document() -> None:
    """Through the processed documents' main fingerprints (the band index has no key
    by document on PostgreSQL: ingest 0036)."""
    batch = CrawlBatch.objects.create(source="resume.warc", format="warc", status="failed")
    docs = [
        factories.indexed_document(
            url=f"https://resume.example.com/{i}", text=f"words {i}", simhash=0x77 << i
        )
        for i in range(4)
    ]
    Document.objects.filter(pk__in=[d.pk for d in docs]).update(batch=batch)
    other = factories.indexed_document(url="https://else.example.com/", text="x", simhash=1)
    factories.find(docs[0], docs[1], other)
    done = [d.pk for d in docs]
    assert bulk._last_indexed(batch, done) == docs[1].pk
    assert bulk._last_indexed(batch, done[2:]) is None
    assert bulk._last_indexed(batch, []) is None
