"""Ingest services: crawl records → documents → extraction → fingerprints.

Every step is idempotent: re-ingesting a file adds nothing, and a processing task
that is delivered twice (a worker died before its ack) finishes what is missing.
"""

import copy
import dataclasses
import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
    transaction,
)
from django.db.models import F, Q
from django.utils import timezone

from dedup_site import dispatch
from dedup_site.task_policy import TRANSIENT_DB_ERRORS, drop_broken_connections
from ingest import body_store, candidates, semantic
from ingest.core.encoding import decode_html
from ingest.core.extract import EXTRACTOR_VERSION, Extracted, extract
from ingest.core.methods import METHODS, FingerprintResult, fingerprint_texts, method_get
from ingest.core.provenance import provenance_read
from ingest.core.readers import (
    Item,
    RawRecord,
    RecordError,
    Skipped,
    clean_text,
    record_sanitise,
    screen,
)
from ingest.core.simhash import to_signed64
from ingest.core.warc_archive import ArchiveError
from ingest.models import (
    BatchError,
    CrawlBatch,
    DocType,
    DocTypeSource,
    Document,
    DocumentBody,
    Extraction,
    Fingerprint,
    FingerprintMethod,
    RefingerprintRun,
    Site,
    rows_insert,
    rows_update,
    snapshots_lock,
)

log = logging.getLogger(__name__)


# A running ingest writes its counters at least this often (its heartbeat).
_HEARTBEAT_SECONDS = 30

# Extraction statuses whose main text may enter the candidate index: empty text
# is never a duplicate of empty text, and a login wall, captcha or menu-only shell
# served at many URLs is a crawl problem, not many copies (docs/page-kinds.md).
INDEXABLE_MAIN = {Extraction.Status.OK}


@dataclass
class IngestSummary:
    batch_id: int
    read: int = 0
    stored: int = 0
    already_stored: int = 0
    exact_duplicates: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    # Problems recorded on records that were stored anyway (bad date, cleaned header).
    warnings: Counter[str] = field(default_factory=Counter)
    document_ids: list[int] = field(default_factory=list)


ProgressFn = Callable[[IngestSummary], None]


def methods_ensure() -> dict[str, FingerprintMethod]:
    """Register every known method (params as the core defines them) and mark the
    configured one active when no method is active yet (a database that runs an older
    method keeps it until a recorded switch). Existing rows are never edited: a key is
    immutable."""
    rows = {m.key: m for m in FingerprintMethod.objects.all()}
    has_active = any(m.is_active for m in rows.values())
    for key, spec in METHODS.items():
        if key not in rows:
            rows[key], _ = FingerprintMethod.objects.get_or_create(
                key=key,
                defaults={
                    "params": spec.params(),
                    "description": spec.description,
                    "is_active": key == settings.ACTIVE_METHOD and not has_active,
                },
            )
    return rows


def fingerprint_method_keys(methods: dict[str, FingerprintMethod] | None = None) -> list[str]:
    """Methods computed for every new document: the active method, the configured one
    (ACTIVE_METHOD: a database still on an older method moves to it) and CANDIDATE_METHODS
    (searched for candidates), FINGERPRINT_METHODS, and every method computed in the
    background since (reviews.operations.method_upgrades: comparing or switching to a
    method starts that) — a new document must not lack the method it may be switched to.
    Retired methods are no longer computed (the active one always is). Nothing else: each
    method costs CPU at ingest, and a method wanted later is computed for the stored
    documents by its run."""
    methods = methods if methods is not None else methods_ensure()
    upgraded = set(
        RefingerprintRun.objects.filter(kind=RefingerprintRun.Kind.FINGERPRINTS).values_list(
            "method__key", flat=True
        )
    )
    active = [m.key for m in methods.values() if m.is_active]
    keys = [
        *active,
        settings.ACTIVE_METHOD,
        *settings.CANDIDATE_METHODS,
        *settings.FINGERPRINT_METHODS,
        *sorted(upgraded),
    ]
    return [
        k
        for k in dict.fromkeys(keys)
        if k in methods and (methods[k].retired_at is None or methods[k].is_active)
    ]


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower() or "unknown"
    except ValueError:
        return "unknown"


class _SiteCache:
    def __init__(self) -> None:
        self._sites: dict[str, Site] = {}

    def prefetch(self, hosts: Iterable[str]) -> None:
        """Read (and create) the sites of a chunk's new hosts in one transaction: one
        statement each way, where `get` costs a transaction per new host. A host the
        database refuses leaves the rest to `get`, which records the record's error."""
        todo = {h for h in hosts if h not in self._sites}
        if not todo:
            return
        try:
            with transaction.atomic():
                Site.objects.bulk_create(
                    [Site(host=h) for h in sorted(todo)], ignore_conflicts=True
                )
                self._sites.update((s.host, s) for s in Site.objects.filter(host__in=todo))
        except DatabaseError as exc:
            if _database_gone(exc):
                raise

    def get(self, host: str) -> Site:
        site = self._sites.get(host)
        if site is None:
            with transaction.atomic():
                site, _ = Site.objects.get_or_create(host=host)
            self._sites[host] = site
        return site


def record_error(batch: CrawlBatch, error: RecordError, *, stored: bool = False) -> None:
    """Record a record's error (or warning, ``stored``) on its batch, once."""
    # The url and message may quote the bad input itself: keep them storable.
    BatchError.objects.get_or_create(
        batch=batch,
        offset=error.offset,
        kind=error.kind[:32],
        defaults={
            "url": clean_text(error.url),
            "message": clean_text(error.message),
            "stored": stored,
        },
    )


def batches_fail_stale(*, now: datetime | None = None) -> list[int]:
    """Mark failed every running batch with no sign of life for INGEST_STALE_MINUTES
    (its ingest was killed: a SIGKILL leaves no chance to say so). Returns their ids."""
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=settings.INGEST_STALE_MINUTES)
    stale = CrawlBatch.objects.filter(status=CrawlBatch.Status.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at=None, started_at__lt=cutoff)
    )
    failed: list[int] = []
    for batch in stale:
        last = batch.heartbeat_at or batch.started_at
        with transaction.atomic():
            updated = CrawlBatch.objects.filter(
                pk=batch.pk, status=CrawlBatch.Status.RUNNING
            ).update(status=CrawlBatch.Status.FAILED, error_count=F("error_count") + 1)
            if not updated:
                continue
            record_error(
                batch,
                RecordError(
                    "interrupted",
                    -1,
                    f"no progress since {last:%Y-%m-%d %H:%M:%S} UTC: the ingest stopped "
                    f"(killed?) after {batch.records_read} records; the documents stored "
                    "until then are kept, ingest the file again to add the rest",
                ),
            )
        failed.append(batch.pk)
    return failed


def batch_ingest(
    *,
    source: str,
    fmt: str,
    items: Iterable[Item],
    bytes_total: int = 0,
    bytes_read: Callable[[], int] | None = None,
    progress: ProgressFn | None = None,
    on_stored: Callable[[list[int]], None] | None = None,
    chunk_size: int | None = None,
) -> IngestSummary:
    """Store every good record of a crawl stream; record every bad one and go on.

    Documents are written in chunks, each in its own transaction, so a failure later in
    the stream never loses what was stored before. Processing (extraction and
    fingerprints) is enqueued when each chunk commits. The first chunk is one worker
    task's worth (PROCESS_TASK_SIZE) and each next one twice the last, up to
    INGEST_CHUNK_SIZE, so that the workers start one after another while the rest of
    the file is read.

    With ``on_stored`` (the bulk path, ingest.bulk) nothing is enqueued: each chunk's new
    document ids go to it once the chunk commits, and chunks are ``chunk_size`` records
    from the first.
    """
    batches_fail_stale()
    batch = CrawlBatch.objects.create(
        source=source, format=fmt, bytes_total=bytes_total, heartbeat_at=timezone.now()
    )
    summary = IngestSummary(batch_id=batch.pk)
    sites = _SiteCache()
    chunk: list[RawRecord] = []
    max_chunk = chunk_size or settings.INGEST_CHUNK_SIZE
    size = chunk_size or min(settings.PROCESS_TASK_SIZE, settings.INGEST_CHUNK_SIZE)
    last_save = time.monotonic()

    def flush() -> None:
        nonlocal last_save, size, sites
        if chunk:
            # A chunk is one transaction: after a lost connection it is stored again
            # from the start (the counters as they were), until INGEST_DB_RETRY_SECONDS.
            give_up = time.monotonic() + settings.INGEST_DB_RETRY_SECONDS
            pause = 0.5
            while True:
                before = copy.deepcopy(summary)
                try:
                    created = _chunk_store(batch, chunk, sites, summary)
                    break
                except TRANSIENT_DB_ERRORS:
                    _summary_restore(summary, before)
                    sites = _SiteCache()  # rows it cached may have been rolled back
                    if time.monotonic() + pause > give_up:
                        raise
                    log.warning("ingest: the database is unavailable, retrying in %.1fs", pause)
                    time.sleep(pause)
                    pause = min(pause * 2, 10.0)
                    drop_broken_connections()
            chunk.clear()
            size = min(2 * size, max_chunk)
            if on_stored is None:
                documents_enqueue(created)
            elif created:
                on_stored(created)
        if bytes_read is not None:
            batch.bytes_read = bytes_read()
        _batch_counters_save(batch, summary)
        last_save = time.monotonic()
        if progress is not None:
            progress(summary)

    try:
        for item in items:
            if isinstance(item, Skipped):
                summary.skipped[item.reason] += 1
                continue
            summary.read += 1
            error = item if isinstance(item, RecordError) else None
            if isinstance(item, RawRecord):
                checked = record_sanitise(item)
                if isinstance(checked, RecordError):
                    error = checked
                else:
                    error = screen(checked, max_bytes=settings.INGEST_MAX_BODY_BYTES)
                if error is None and isinstance(checked, RawRecord):
                    chunk.append(checked)
                    for warning in checked.warnings:
                        summary.warnings[warning.kind] += 1
                        record_error(batch, warning, stored=True)
                    if len(chunk) >= size:
                        flush()
                    continue
            assert error is not None
            summary.errors[error.kind] += 1
            record_error(batch, error)
            if time.monotonic() - last_save > _HEARTBEAT_SECONDS:
                flush()  # a long run of bad records still shows the batch alive
        flush()
    except BaseException as exc:
        # Whatever broke the stream (or interrupted it), the chunks stored so far stay
        # stored, and the batch says it failed and why — at once, not when the stale
        # sweep finds it (a few quick tries: the database may be what broke).
        batch.status = CrawlBatch.Status.FAILED
        summary.errors["ingest_failed"] += 1
        first_line = (str(exc).splitlines() or [""])[0]
        for attempt in range(3):
            try:
                drop_broken_connections()
                record_error(
                    batch, RecordError("ingest_failed", -1, f"{type(exc).__name__}: {first_line}")
                )
                _batch_counters_save(batch, summary)
                break
            except TRANSIENT_DB_ERRORS:
                time.sleep(0.5 * (attempt + 1))
        raise
    batch.status = CrawlBatch.Status.DONE
    batch.finished_at = timezone.now()
    _batch_counters_save(batch, summary)
    return summary


def _summary_restore(summary: IngestSummary, before: IngestSummary) -> None:
    for f in dataclasses.fields(summary):
        setattr(summary, f.name, getattr(before, f.name))


def _batch_counters_save(batch: CrawlBatch, summary: IngestSummary) -> None:
    batch.records_read = summary.read
    batch.stored = summary.stored
    batch.already_stored = summary.already_stored
    batch.exact_duplicates = summary.exact_duplicates
    batch.skipped = dict(summary.skipped)
    batch.error_count = sum(summary.errors.values())
    batch.heartbeat_at = timezone.now()
    batch.save()


def _chunk_store(
    batch: CrawlBatch, records: Sequence[RawRecord], sites: _SiteCache, summary: IngestSummary
) -> list[int]:
    """Store a chunk's new snapshots (their bodies first): the new documents' ids."""
    now = timezone.now()
    prepared: list[tuple[RawRecord, str, datetime]] = []
    for record in records:
        sha = hashlib.sha256(record.body).hexdigest()
        prepared.append((record, sha, record.fetched_at or now))

    shas = {sha for _, sha, _ in prepared}
    known_snapshots = _snapshots_stored(shas)
    known_url_sha = {(u, s) for u, _, s in known_snapshots}
    known_sha = {s for _, _, s in known_snapshots}

    sites.prefetch(_host(r.final_url or r.url) for r in records)
    documents: list[Document] = []
    entries: list[body_store.BodyEntry] = []
    records_kept: list[RawRecord] = []
    for record, sha, fetched_at in prepared:
        seen = (
            (record.url, sha) in known_url_sha
            if record.fetched_at is None
            else (record.url, fetched_at, sha) in known_snapshots
        )
        if seen:
            summary.already_stored += 1
            continue
        if sha in known_sha:
            summary.exact_duplicates += 1
        known_snapshots.add((record.url, fetched_at, sha))
        known_url_sha.add((record.url, sha))
        known_sha.add(sha)
        try:
            site = sites.get(_host(record.final_url or record.url))
        except DatabaseError as exc:
            if _database_gone(exc):
                raise
            _store_failed(batch, record, exc, summary)
            continue
        records_kept.append(record)
        documents.append(
            Document(
                site=site,
                batch=batch,
                url=record.url,
                final_url=record.final_url or "",
                http_status=record.http_status,
                fetched_at=fetched_at,
                content_type=record.headers.get("content-type", "")[:255],
                declared_encoding=(record.forced_charset or "")[:64],
                charset_forced=record.forced_charset is not None,
                raw_sha256=sha,
                raw_size=len(record.body),
                doc_type=record.doc_type or site.default_doc_type,
                doc_type_source=DocTypeSource.CRAWL if record.doc_type else DocTypeSource.SITE,
                doc_type_evidence=(
                    "the record's doc_type field"
                    if record.doc_type
                    else f"default of site {site.host}"
                )[:255],
                headers=record.headers,
                batch_offset=record.offset,
            )
        )
        entries.append(
            body_store.BodyEntry(
                url=record.url,
                payload=record.body,
                sha256=sha,
                fetched_at=fetched_at,
                content_type=record.headers.get("content-type", ""),
            )
        )
    if not documents:
        return []
    # Written once, before the transaction: a retry one by one reuses the same records.
    bodies = body_store.bodies_prepare(entries)
    rows = list(zip(documents, bodies, records_kept, strict=True))
    try:
        with transaction.atomic():
            created, stored_meanwhile = _documents_create_once(rows)
    except (DatabaseError, ValueError) as exc:
        if _database_gone(exc):
            raise  # not a record's fault: the batch fails and says so
        # One record holds a value the database refuses: go one by one, so it costs
        # that record only.
        created, stored_meanwhile = [], 0
        for row in rows:
            try:
                with transaction.atomic():
                    one, meanwhile = _documents_create_once([row])
            except (DatabaseError, ValueError) as exc:
                if _database_gone(exc):
                    raise
                _store_failed(batch, row[2], exc, summary)
                continue
            created += one
            stored_meanwhile += meanwhile
    summary.already_stored += stored_meanwhile
    summary.stored += len(created)
    summary.document_ids += created
    return created


def _documents_create_once(
    rows: Sequence[tuple[Document, body_store.Prepared, RawRecord]],
) -> tuple[list[int], int]:
    """Store the snapshots no other ingest stored since the chunk looked (the new ids,
    and how many were stored meanwhile), in the caller's transaction. A snapshot is one
    (url, fetched_at, raw_sha256): not a unique index, which distributed documents could
    not keep (dedup_site/distribution.py), but a look-up by the digest under the
    digest's lock (`snapshots_lock`), held to the commit, so that a second ingest of the
    same record finds the first one's row."""
    digests = {document.raw_sha256 for document, _, _ in rows}
    snapshots_lock(digests)
    stored = _snapshots_stored(digests)
    new = [
        (document, body)
        for document, body, _ in rows
        if (document.url, document.fetched_at, document.raw_sha256) not in stored
    ]
    if not new:
        return [], len(rows)
    created = _documents_create([d for d, _ in new], [b for _, b in new])
    return created, len(rows) - len(new)


def _snapshots_stored(digests: Collection[str]) -> set[tuple[str, datetime, str]]:
    """The stored snapshots (url, fetched_at, raw_sha256) among these raw digests."""
    return set(
        Document.objects.filter(raw_sha256__in=digests).values_list(
            "url", "fetched_at", "raw_sha256"
        )
    )


def _database_gone(exc: Exception) -> bool:
    """Whether an error says the database is unreachable rather than that a record is
    bad (PostgreSQL reports some per-row limits as operational errors too)."""
    if isinstance(exc, InterfaceError):
        return True
    return isinstance(exc, OperationalError) and not connection.is_usable()


def _store_failed(
    batch: CrawlBatch, record: RawRecord, exc: Exception, summary: IngestSummary
) -> None:
    summary.errors["db_error"] += 1
    message = f"the database refused the record: {type(exc).__name__}: {exc}"
    record_error(batch, RecordError("db_error", record.offset, message[:2000], record.url))


def _documents_create(documents: list[Document], bodies: list[body_store.Prepared]) -> list[int]:
    for document in documents:
        document.pk = None
    Document.objects.bulk_create(documents)
    body_store.bodies_insert(
        [(document.pk, body) for document, body in zip(documents, bodies, strict=True)]
    )
    return [document.pk for document in documents]


def documents_enqueue(document_ids: Sequence[int]) -> None:
    """Hand documents to the workers once the current transaction commits."""
    size = settings.PROCESS_TASK_SIZE
    for start in range(0, len(document_ids), size):
        part = list(document_ids[start : start + size])
        dispatch.on_commit("documents_process", part)


def documents_unprocessed_enqueue() -> int:
    """Hand the workers every document without an extraction (one whose body could not
    be read when it was processed: `body_unreadable`, its archive file since restored).
    Processing is idempotent: a document still queued is done once. Returns how many."""
    ids = list(
        Document.objects.filter(extractions__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    with transaction.atomic():
        documents_enqueue(ids)
    return len(ids)


def documents_process(*, document_ids: Sequence[int]) -> int:
    """Extract and fingerprint the documents that still lack it, in one transaction
    (bulk writes), then search all of them for candidates. Returns how many documents
    got new work. A retry after a crash redoes the whole batch: the unique constraints
    make that safe."""
    started = time.process_time()
    cpu = ProcessCpu()
    methods = methods_ensure()
    wanted = [methods[key] for key in fingerprint_method_keys(methods)]
    todo = list(document_ids)
    while True:
        try:
            done = _documents_process_in_transaction(todo, wanted, cpu)
            break
        except body_store.BodiesUnreadable as exc:
            # The batch goes on without the documents whose bytes cannot be read; each
            # gets a recorded error (its archive file missing or changed).
            bodies_unreadable_record(exc)
            todo = [d for d in todo if d not in exc.problems]
    # Embeddings on their own queue (nothing when the channel is off), then the
    # candidate search in this task, once the processing has committed (the search
    # indexes and commits before it queries: of two documents processed at the same
    # time by two workers, the later query sees the other). In this task rather than
    # queued behind every processing task, so searches run beside the other workers'
    # extraction, not all at the end. Every document handed in is searched, new work
    # or not: a retry after a crash in the search redoes it.
    semantic.embeddings_enqueue(todo)
    searched = time.process_time()
    candidates.candidates_find(document_ids=todo)
    end = time.process_time()
    # Where a worker's CPU goes, task by task (the ingest benchmark adds these up).
    log.info(
        "processed %d documents in %.3f CPU-s: decode + extract %.3f, search %.3f",
        len(document_ids),
        end - started,
        cpu.extraction,
        end - searched,
    )
    return done


def _documents_process_in_transaction(
    document_ids: Sequence[int], wanted: Sequence[FingerprintMethod], cpu: "ProcessCpu"
) -> int:
    with transaction.atomic():
        documents = list(
            Document.objects.select_for_update(of=("self",))
            .select_related("batch", "site")
            .filter(pk__any_of=list(document_ids))
            .order_by("pk")
        )
        extractions = {
            version: documents_extract(documents=documents, version=version, cpu=cpu)
            for version in extractor_versions(wanted)
        }
        return fingerprints_compute(documents=documents, extractions=extractions, methods=wanted)


def bodies_unreadable_record(exc: body_store.BodiesUnreadable) -> None:
    """A recorded `body_unreadable` error on the batch of each document whose bytes
    could not be read back (it stays unprocessed until its archive file is restored)."""
    documents = Document.objects.filter(pk__in=list(exc.problems)).select_related("batch")
    errors = [
        _batch_error(
            document,
            "body_unreadable",
            document.batch_offset if document.batch_offset is not None else -document.pk,
            f"not processed: {exc.problems[document.pk]}",
        )
        for document in documents
        if document.batch is not None
    ]
    BatchError.objects.bulk_create(errors, ignore_conflicts=True)
    log.error("documents not processed: %s", exc)


@dataclass
class ProcessCpu:
    """CPU seconds a processing task spent decoding and extracting its pages."""

    extraction: float = 0.0


def extractor_versions(methods: Iterable[FingerprintMethod]) -> list[str]:
    """The extractor versions whose text the methods fingerprint, current first."""
    versions = {method_get(m.key).extractor_version for m in methods if m.key in METHODS}
    return sorted(versions, key=lambda v: (v != EXTRACTOR_VERSION, v))


@dataclass(frozen=True)
class PageExtracted:
    """One body decoded and extracted under one extractor version, with no database:
    what an Extraction row and its document's encodings are made of."""

    declared_encoding: str | None
    used_encoding: str
    warning: str | None
    result: Extracted
    provenance: dict[str, object]
    cpu: float  # CPU seconds of decode + extract


def page_extract(
    raw: bytes,
    *,
    content_type: str,
    forced: str | None,
    url: str,
    http_status: int | None,
    version: str,
    min_tokens: int,
) -> PageExtracted:
    """Decode and extract one body (pure: the bulk path runs it in worker processes)."""
    start = time.process_time()
    decoded = decode_html(raw, content_type=content_type or None, forced=forced)
    result = extract(
        decoded.text, url=url, http_status=http_status, min_tokens=min_tokens, version=version
    )
    cpu = time.process_time() - start
    return PageExtracted(
        declared_encoding=decoded.declared,
        used_encoding=decoded.used,
        warning=decoded.warning,
        result=result,
        provenance=provenance_read(decoded.text, result.main_text).as_dict(),
        cpu=cpu,
    )


def documents_extract(
    *,
    documents: Sequence[Document],
    version: str = EXTRACTOR_VERSION,
    cpu: ProcessCpu | None = None,
    computed: Mapping[int, PageExtracted] | None = None,
) -> dict[int, Extraction]:
    """Each document's extraction under extractor ``version`` (made once); the CPU time
    of decoding and extracting is added to ``cpu``. A document in ``computed`` (decoded
    and extracted elsewhere: the bulk path's worker processes) is not read again."""
    found = {
        e.document_id: e
        for e in Extraction.objects.filter(
            document_id__any_of=[d.pk for d in documents], extractor_version=version
        )
    }
    todo = [d for d in documents if d.pk not in found]
    if not todo:
        return found
    computed = computed or {}
    bodies = DocumentBody.bulk_read(d.pk for d in todo if d.pk not in computed)
    created: list[Extraction] = []
    errors: list[BatchError] = []
    unreadable: dict[int, ArchiveError] = {}
    for document in todo:
        page = computed.get(document.pk)
        if page is None:
            try:
                raw = bodies[document.pk].raw()
            except ArchiveError as exc:
                unreadable[document.pk] = exc
                continue
            page = page_extract(
                raw,
                content_type=document.content_type,
                forced=document.declared_encoding if document.charset_forced else None,
                url=document.url,
                http_status=document.http_status,
                version=version,
                min_tokens=settings.EXTRACTION_MIN_TOKENS,
            )
        result = page.result
        if cpu is not None:
            cpu.extraction += page.cpu
        created.append(
            Extraction(
                document=document,
                extractor_version=version,
                status=result.status,
                quality=result.quality,
                message=result.message,
                title=result.title,
                language=result.language,
                main_text=result.main_text,
                full_text=result.full_text,
                main_tokens=result.main_tokens,
                full_tokens=result.full_tokens,
                declared=page.provenance,
            )
        )
        document.declared_encoding = (page.declared_encoding or "")[:64]
        document.detected_encoding = page.used_encoding[:64]
        _doc_type_decide(document, result)
        if document.batch is not None:
            offset = document.batch_offset if document.batch_offset is not None else -document.pk
            if page.warning:
                errors.append(_batch_error(document, "charset_mismatch", offset, page.warning))
            if result.status == Extraction.Status.ERROR:
                errors.append(_batch_error(document, "extraction_error", offset, result.message))
    if unreadable:
        # Nothing is written for any of them: an extraction is permanent, and the bytes
        # may come back (a restored file). The caller says so where it is seen.
        raise body_store.BodiesUnreadable(unreadable)
    rows_insert(created)
    rows_update(
        todo,
        [
            "declared_encoding",
            "detected_encoding",
            "doc_type",
            "doc_type_source",
            "doc_type_evidence",
        ],
    )
    BatchError.objects.bulk_create(errors, ignore_conflicts=True)
    found.update({e.document_id: e for e in created})
    return found


def _doc_type_decide(document: Document, result: Extracted) -> None:
    """The document's doc type and who decided it: the crawl's own field wins; else what
    the page declares (og:type, schema.org, price markup, …); else a short main text makes
    it "short"; else the site's default stays."""
    if document.doc_type_source == DocTypeSource.CRAWL:
        return
    declared = result.doc_type
    if declared.doc_type != DocType.OTHER:
        document.doc_type = declared.doc_type
        document.doc_type_source = DocTypeSource.PAGE
        document.doc_type_evidence = declared.describe()[:255]
    elif (
        result.status == Extraction.Status.OK
        and result.main_tokens < settings.SHORT_DOC_MAX_TOKENS
        and document.doc_type == document.site.default_doc_type
    ):
        document.doc_type = DocType.SHORT
        document.doc_type_source = DocTypeSource.SHORT
        document.doc_type_evidence = (
            f"main text of {result.main_tokens} words < SHORT_DOC_MAX_TOKENS "
            f"({settings.SHORT_DOC_MAX_TOKENS})"
        )


def _batch_error(document: Document, kind: str, offset: int, message: str) -> BatchError:
    return BatchError(
        batch=document.batch,
        kind=kind,
        offset=offset,
        url=document.url,
        message=message,
        stored=True,
    )


def fingerprints_compute(
    *,
    documents: Sequence[Document],
    extractions: dict[str, dict[int, Extraction]],
    methods: Sequence[FingerprintMethod],
    computed: Mapping[tuple[int, str, str], dict[str, FingerprintResult]] | None = None,
) -> int:
    """Fingerprint both branches under each method (one row a document and method), from
    the extraction of the method's extractor version (``extractions[version][document
    id]``). Returns how many documents got new fingerprints. ``computed[(document id,
    version, branch)]`` holds results computed elsewhere (the bulk path's worker
    processes) for every method of that version: they are used as they are."""
    version_of = {m.key: method_get(m.key).extractor_version for m in methods}
    have = set(
        Fingerprint.objects.filter(document_id__any_of=[d.pk for d in documents]).values_list(
            "document_id", "method_id"
        )
    )
    min_tokens = settings.FINGERPRINT_MIN_TOKENS
    rows: list[Fingerprint] = []
    touched = 0
    for document in documents:
        missing = [m for m in methods if (document.pk, m.pk) not in have]
        if not missing:
            continue
        touched += 1
        results: dict[tuple[str, str], dict[str, FingerprintResult]] = {}
        for version in dict.fromkeys(version_of[m.key] for m in missing):
            extraction = extractions[version][document.pk]
            keys = [m.key for m in methods if version_of[m.key] == version]
            for branch, text in (
                (Fingerprint.Branch.MAIN, extraction.main_text),
                (Fingerprint.Branch.FULL, extraction.full_text),
            ):
                done = (computed or {}).get((document.pk, version, branch))
                if done is None or any(k not in done for k in keys):
                    done = fingerprint_texts(keys, text, min_tokens=min_tokens)
                results[(version, branch)] = done
        for method in missing:
            version = version_of[method.key]
            extraction = extractions[version][document.pk]
            main = results[(version, Fingerprint.Branch.MAIN)][method.key]
            full = results[(version, Fingerprint.Branch.FULL)][method.key]
            # No SimHash is the status insufficient_features (Fingerprint.status).
            simhash = main.simhash if extraction.status in INDEXABLE_MAIN else None
            rows.append(
                Fingerprint(
                    document=document,
                    method=method,
                    simhash=None if simhash is None else to_signed64(simhash),
                    text_sha256=main.text_sha256,
                    token_count=main.token_count,
                    full_simhash=None if full.simhash is None else to_signed64(full.simhash),
                )
            )
    Fingerprint.objects.bulk_create(rows, ignore_conflicts=True)
    return touched
