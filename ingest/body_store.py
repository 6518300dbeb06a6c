"""Where every stored body's raw bytes go, and how they come back (docs/archive.md).

Every ingest path (WARC, ARC, JSONL, the API) stores bodies through `bodies_prepare`
then `bodies_insert`: under BODY_STORE=archive the bytes become records of this
process's own archive file (ingest.core.warc_archive) and the database keeps a pointer;
under BODY_STORE=database they are compressed into the database as before. Bodies
stored either way are read by `DocumentBody.raw()` / `bulk_read`, an archived one
verified against the document's digest.

One writer per process: its file is created by this process and written by nobody
else. When a process opens its first file it seals the files left open by dead
writers of its host (so does `manage.py archive_seal`); a file stays open while its
writer lives, until it reaches ARCHIVE_FILE_MAX_BYTES (or the writing command ends).
"""

import atexit
import logging
import stat
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ingest.core import warc_archive
from ingest.core.warc_archive import ArchiveError
from ingest.models import ArchiveFile, Document, DocumentBody

log = logging.getLogger(__name__)


class BodiesUnreadable(Exception):
    """Some documents' archived bodies cannot be read back as stored (their file is
    missing or changed). Raised before anything is written for them."""

    def __init__(self, problems: dict[int, ArchiveError]) -> None:
        self.problems = problems
        listed = "; ".join(f"document {d}: {e}" for d, e in sorted(problems.items())[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(f"{len(problems)} bodies unreadable: {listed}{more}")


# A prepared body: the compressed bytes (database) or the durable record (archive).
Prepared = bytes | warc_archive.Pointer


@dataclass(frozen=True)
class BodyEntry:
    """What `bodies_prepare` needs of a record."""

    url: str
    payload: bytes
    sha256: str
    fetched_at: datetime | None = None
    content_type: str = ""


_lock = threading.Lock()
_writer: warc_archive.ArchiveWriter | None = None


def _writer_get() -> warc_archive.ArchiveWriter:
    """This process's writer for the configured directory (a new one after a fork or a
    change of ARCHIVE_DIR, as in tests); a new writer first seals its host's files that
    dead writers left open."""
    global _writer
    root = Path(settings.ARCHIVE_DIR)
    writer = _writer
    current = warc_archive.WriterId.current()
    if writer is not None and writer.root == root and writer.writer.pid == current.pid:
        writer.max_bytes = settings.ARCHIVE_FILE_MAX_BYTES
        return writer
    if writer is not None and writer.writer.pid == current.pid:
        writer.close_unsealed()
    root.mkdir(parents=True, exist_ok=True)
    archive_seal_dead()
    if _writer is None or _writer.writer.pid != current.pid:
        atexit.register(_seal_at_exit)
    _writer = warc_archive.ArchiveWriter(root, settings.ARCHIVE_FILE_MAX_BYTES, current)
    return _writer


def _seal_at_exit() -> None:
    """A process that stops normally (a web process's graceful shutdown) seals its file;
    one that is killed leaves it to the next writer of its host or `archive_seal`."""
    try:
        archive_seal_own()
    except Exception:  # at exit nothing can be done about it: the sweep seals it later
        log.warning("the archive file was not sealed at exit", exc_info=True)


def bodies_prepare(entries: Sequence[BodyEntry]) -> list[Prepared]:
    """Each body ready to insert, in order. Under BODY_STORE=archive the records are
    written, flushed and fsynced here, before any transaction points to them: a record
    whose chunk rolls back stays in the file, unpointed, and costs only its bytes."""
    if settings.BODY_STORE != "archive":
        return [DocumentBody.pack(e.payload) for e in entries]
    if not entries:
        return []
    with _lock:
        writer = _writer_get()
        appended = writer.append(
            [
                warc_archive.Entry(
                    uri=e.url,
                    payload=e.payload,
                    sha256=e.sha256,
                    fetched_at=e.fetched_at,
                    content_type=e.content_type,
                )
                for e in entries
            ]
        )
        for path in appended.opened:
            _file_row(path, writer.writer)
        for sealed in appended.sealed:
            _seal_record(sealed)
    return list(appended.pointers)


def bodies_insert(rows: Sequence[tuple[int, Prepared]]) -> None:
    """Insert the bodies of (document id, prepared body), inside the caller's
    transaction: the pointers' file rows are made here if a rolled-back transaction took
    them away."""
    packed = [(d, p) for d, p in rows if isinstance(p, bytes)]
    pointed = [(d, p) for d, p in rows if isinstance(p, warc_archive.Pointer)]
    DocumentBody.bulk_insert(packed)
    if not pointed:
        return
    paths = {p.path for _, p in pointed}
    ids = dict(ArchiveFile.objects.filter(path__in=paths).values_list("path", "pk"))
    for path in paths - ids.keys():
        ids[path] = _file_row(path, warc_archive.WriterId.current()).pk
    DocumentBody.bulk_insert_archived((d, ids[p.path], p.offset, p.length) for d, p in pointed)


def _file_row(path: str, writer: warc_archive.WriterId) -> ArchiveFile:
    row, _ = ArchiveFile.objects.get_or_create(
        path=path,
        defaults={"host": writer.host, "pid": writer.pid, "process_started": writer.started},
    )
    return row


def _seal_record(sealed: warc_archive.Sealed) -> None:
    """Record a file's seal once (a second seal of the same file changes nothing)."""
    with transaction.atomic():
        done = ArchiveFile.objects.filter(path=sealed.path, sealed_at=None).update(
            sealed_at=timezone.now(), size=sealed.size, sha256=sealed.sha256
        )
        if not done and not ArchiveFile.objects.filter(path=sealed.path).exists():
            writer = warc_archive.WriterId.current()
            ArchiveFile.objects.create(
                path=sealed.path,
                host=writer.host,
                pid=writer.pid,
                process_started=writer.started,
                sealed_at=timezone.now(),
                size=sealed.size,
                sha256=sealed.sha256,
            )


def archive_seal_own() -> str | None:
    """Seal this process's open file (a command that wrote bodies, at its end): its
    path, or None when it has none open."""
    with _lock:
        writer = _writer
        if writer is None:
            return None
        sealed = writer.seal()
    if sealed is None:
        return None
    _seal_record(sealed)
    return sealed.path


def archive_close_unsealed() -> None:
    """Stop writing this process's file without sealing it (a test session whose
    database is gone at exit): the next writer of the host or `archive_seal` seals it."""
    global _writer
    with _lock:
        if _writer is not None:
            _writer.close_unsealed()
        _writer = None


def archive_seal_dead(*, gone_host: str = "") -> list[str]:
    """Seal the open files of this host whose writer no longer runs (killed with its
    file open): the paths sealed. Another host's files are left to that host, unless
    the operator names it as gone for good (`gone_host`): then all its open files."""
    root = Path(settings.ARCHIVE_DIR)
    host = gone_host or warc_archive.WriterId.current().host
    done: list[str] = []
    for row in ArchiveFile.objects.filter(host=host, sealed_at=None).order_by("pk"):
        owner = warc_archive.WriterId(host=row.host, pid=row.pid, started=row.process_started)
        # A read-only file was sealed by its writer, whose record of it was lost (a
        # rolled-back transaction): record it now, even though the writer still runs.
        if not gone_host and owner.alive() and _writable(root / row.path):
            continue
        try:
            sealed = warc_archive.file_seal(root, row.path)
        except FileNotFoundError:
            log.error("archive file %s is missing: it cannot be sealed", row.path)
            continue
        _seal_record(sealed)
        log.info("sealed archive file %s left open by process %s", row.path, row.pid)
        done.append(row.path)
    return done


def _writable(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & stat.S_IWUSR)
    except FileNotFoundError:
        return True  # missing: left to archive_verify, never sealed from here


@dataclass(frozen=True)
class FileProblem:
    path: str
    problem: str  # "missing" | "changed" | "size"
    message: str
    documents: int  # how many bodies point into it


@dataclass
class Verified:
    checked: int = 0
    problems: list[FileProblem] = field(default_factory=list)
    # Files not sealed yet: (path, host, pid) of their writer (a host gone for good
    # leaves them open: `archive_seal --gone-host`).
    open_files: list[tuple[str, str, int]] = field(default_factory=list)


def archive_verify() -> Verified:
    """Re-read every sealed file's digest (and check every open file exists): how many
    files were checked, the problems found (each with how many bodies it holds), and
    the files still open."""
    root = Path(settings.ARCHIVE_DIR)
    result = Verified()
    for row in ArchiveFile.objects.order_by("pk").iterator():
        result.checked += 1
        full = root / row.path
        problem = ""
        message = ""
        if not full.exists():
            problem, message = "missing", f"archive file {row.path} is missing"
        elif row.sealed_at is not None:
            size, sha = warc_archive.file_digest(full)
            if size != row.size or sha != row.sha256:
                problem = "changed"
                message = (
                    f"archive file {row.path}: its digest does not match the one recorded at "
                    f"sealing ({size} bytes now, {row.size} then)"
                )
        if row.sealed_at is None:
            result.open_files.append((row.path, row.host, row.pid))
        if problem:
            count = DocumentBody.objects.filter(archive_file=row).count()
            result.problems.append(FileProblem(row.path, problem, message, count))
    return result


def body_read(*, document: Document) -> bytes:
    """A document's raw bytes (ArchiveError when its archive record is missing or
    changed: the pages that show the bytes say so)."""
    return document.body.raw()
