"""The bulk path: loading an existing archive of many pages in one process tree, with no
Celery round trip per chunk (`manage.py ingest --bulk`, docs/ingest.md).

The records are stored exactly as the normal ingest stores them (`services.batch_ingest`:
bodies in the archive first, one transaction a chunk, bad records recorded, snapshots
already stored recognised and skipped), in large chunks. Each stored chunk's bodies are
read back (verified against their SHA-256, as a worker reads them) and handed to a pool of
worker processes that decode, extract and fingerprint them: pure functions, no database
in a child. The parent writes the rows (one transaction a chunk, through the same
services the workers use), then searches candidates in large batches, grouping once per
batch (`candidates.candidates_find`). While the children work on one chunk, the parent
reads and stores the next and writes and searches the one before.

Resumable: a run that stopped (killed, Ctrl-C, a lost database) leaves its batch
`failed` or `running`; the next run of the same source first processes what that batch
stored without processing it, and searches again its last searched window (searching
is idempotent), then reads the file, whose stored records are skipped.
"""

import bisect
import multiprocessing
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.pool import AsyncResult, Pool

from django.conf import settings
from django.db import connections, transaction
from django.db.models import F, Max

from ingest import body_store, candidates, index, semantic, services
from ingest.core.methods import FingerprintResult, fingerprint_texts, method_get
from ingest.core.readers import Item, RecordError
from ingest.core.warc_archive import ArchiveError
from ingest.models import (
    CrawlBatch,
    Document,
    DocumentBody,
    Fingerprint,
    FingerprintMethod,
)

MAIN = Fingerprint.Branch.MAIN
FULL = Fingerprint.Branch.FULL


@dataclass(frozen=True)
class PageWork:
    """What a worker process needs to process one stored document (no database)."""

    document_id: int
    raw: bytes
    content_type: str
    forced: str | None
    url: str
    http_status: int | None
    # (extractor version, the method keys fingerprinting its text), current version first
    versions: tuple[tuple[str, tuple[str, ...]], ...]
    extraction_min_tokens: int
    fingerprint_min_tokens: int


@dataclass(frozen=True)
class PageDone:
    document_id: int
    pages: dict[str, services.PageExtracted]
    fingerprints: dict[tuple[str, str], dict[str, FingerprintResult]]
    cpu: float  # CPU seconds the worker spent on it (decode, extract, fingerprints)


def page_work(work: PageWork) -> PageDone:
    """Decode, extract and fingerprint one body: runs in a worker process, touches no
    database (the parent writes every row)."""
    start = time.process_time()
    pages: dict[str, services.PageExtracted] = {}
    prints: dict[tuple[str, str], dict[str, FingerprintResult]] = {}
    for version, keys in work.versions:
        page = services.page_extract(
            work.raw,
            content_type=work.content_type,
            forced=work.forced,
            url=work.url,
            http_status=work.http_status,
            version=version,
            min_tokens=work.extraction_min_tokens,
        )
        pages[version] = page
        for branch, text in ((MAIN, page.result.main_text), (FULL, page.result.full_text)):
            prints[(version, branch)] = fingerprint_texts(
                list(keys), text, min_tokens=work.fingerprint_min_tokens
            )
    return PageDone(work.document_id, pages, prints, time.process_time() - start)


@dataclass
class BulkSummary:
    ingest: services.IngestSummary | None = None
    processed: int = 0  # documents extracted and fingerprinted by this run
    searched: int = 0  # documents searched for candidates by this run
    resumed: int = 0  # documents of an earlier stopped run processed or searched again
    unreadable: int = 0  # bodies that could not be read back (recorded errors)
    pairs_created: int = 0
    searches: int = 0  # candidate search calls (each groups once)
    worker_cpu_s: float = 0.0  # as the workers timed their pages
    search_s: float = 0.0  # wall seconds the parent spent searching
    search_cpu_s: float = 0.0  # its CPU seconds (the database server's not counted)
    write_s: float = 0.0  # wall seconds the parent spent writing extractions + fingerprints
    write_cpu_s: float = 0.0
    stage_log: list[str] = field(default_factory=list)


BulkProgressFn = Callable[[BulkSummary], None]


class _Pipeline:
    """Stored chunks → worker processes → rows written → candidate searches in batches."""

    def __init__(
        self, *, jobs: int, search_batch: int, summary: BulkSummary, progress: BulkProgressFn | None
    ) -> None:
        self.jobs = max(1, jobs)
        self.search_batch = max(1, search_batch)
        self.summary = summary
        self.progress = progress
        methods = services.methods_ensure()
        self.wanted: list[FingerprintMethod] = [
            methods[k] for k in services.fingerprint_method_keys(methods)
        ]
        by_version: dict[str, list[str]] = {}
        for m in self.wanted:
            by_version.setdefault(method_get(m.key).extractor_version, []).append(m.key)
        self.versions = tuple(
            (v, tuple(by_version[v])) for v in services.extractor_versions(self.wanted)
        )
        self.pool: Pool | None = None
        self.pending: tuple[list[int], AsyncResult[list[PageDone]] | list[PageDone]] | None = None
        self.to_search: list[int] = []

    # -- the pool ------------------------------------------------------------------------

    def start(self) -> None:
        if self.jobs < 2:
            return  # in this process: no fork
        # A forked child must not share the parent's database connections: they are
        # closed first, and the parent reopens its own on its next query. One inside a
        # caller's transaction (a test's) or an in-memory SQLite database cannot be
        # closed without losing it: it is left open, and like every connection never
        # used by a child (the children run pure functions and leave by os._exit, with
        # no finalizer that could talk to the server).
        for conn in connections.all(initialized_only=True):
            name = str(conn.settings_dict["NAME"])
            in_memory = conn.vendor == "sqlite" and (name == ":memory:" or "mode=memory" in name)
            if not (conn.in_atomic_block or in_memory):
                conn.close()
        self.pool = multiprocessing.get_context("fork").Pool(self.jobs)

    def stop(self, *, ok: bool) -> None:
        if self.pool is None:
            return
        if ok:
            self.pool.close()
        else:
            self.pool.terminate()
        self.pool.join()  # its CPU time is then counted in the parent's children times
        self.pool = None

    # -- the stages ----------------------------------------------------------------------

    def stored(self, document_ids: list[int]) -> None:
        """A chunk committed: hand it to the workers, then finish the chunk before it."""
        submitted = self._submit(document_ids)
        self._finish_pending()
        self.pending = submitted
        if len(self.to_search) >= self.search_batch:
            self._search()
        if self.progress is not None:
            self.progress(self.summary)

    def drain(self) -> None:
        self._finish_pending()
        self._search()
        if self.progress is not None:
            self.progress(self.summary)

    def _submit(
        self, document_ids: Sequence[int]
    ) -> tuple[list[int], AsyncResult[list[PageDone]] | list[PageDone]]:
        ids = sorted(document_ids)
        bodies = DocumentBody.bulk_read(ids)
        docs = (
            Document.objects.filter(pk__any_of=ids)
            .only("pk", "content_type", "declared_encoding", "charset_forced", "url", "http_status")
            .order_by("pk")
        )
        work: list[PageWork] = []
        unreadable: dict[int, ArchiveError] = {}
        for doc in docs:
            try:
                raw = bodies[doc.pk].raw()
            except ArchiveError as exc:
                unreadable[doc.pk] = exc
                continue
            except KeyError:
                continue  # no body row: nothing to process
            work.append(
                PageWork(
                    document_id=doc.pk,
                    raw=raw,
                    content_type=doc.content_type,
                    forced=doc.declared_encoding if doc.charset_forced else None,
                    url=doc.url,
                    http_status=doc.http_status,
                    versions=self.versions,
                    extraction_min_tokens=settings.EXTRACTION_MIN_TOKENS,
                    fingerprint_min_tokens=settings.FINGERPRINT_MIN_TOKENS,
                )
            )
        if unreadable:
            services.bodies_unreadable_record(body_store.BodiesUnreadable(unreadable))
            self.summary.unreadable += len(unreadable)
        todo = [w.document_id for w in work]
        if self.pool is None:
            return todo, [page_work(w) for w in work]
        chunksize = max(1, min(32, len(work) // (4 * self.jobs) or 1))
        return todo, self.pool.map_async(page_work, work, chunksize=chunksize)

    def _finish_pending(self) -> None:
        if self.pending is None:
            return
        ids, result = self.pending
        self.pending = None
        done = result if isinstance(result, list) else result.get()
        started, cpu = time.monotonic(), time.process_time()
        with transaction.atomic():
            documents = list(
                Document.objects.select_for_update(of=("self",))
                .select_related("batch", "site")
                .filter(pk__any_of=ids)
                .order_by("pk")
            )
            extractions = {
                version: services.documents_extract(
                    documents=documents,
                    version=version,
                    computed={d.document_id: d.pages[version] for d in done},
                )
                for version, _ in self.versions
            }
            services.fingerprints_compute(
                documents=documents,
                extractions=extractions,
                methods=self.wanted,
                computed={
                    (d.document_id, version, branch): results
                    for d in done
                    for (version, branch), results in d.fingerprints.items()
                },
            )
        self.summary.write_s += time.monotonic() - started
        self.summary.write_cpu_s += time.process_time() - cpu
        self.summary.processed += len(done)
        self.summary.worker_cpu_s += sum(d.cpu for d in done)
        # Embeddings on their own queue, as the normal path does (nothing when the
        # semantic channel is off).
        semantic.embeddings_enqueue(ids)
        self.to_search += ids

    def _search(self) -> None:
        while self.to_search:
            part = self.to_search[: self.search_batch]
            started, cpu = time.monotonic(), time.process_time()
            created = candidates.candidates_find(document_ids=part)
            self.summary.search_s += time.monotonic() - started
            self.summary.search_cpu_s += time.process_time() - cpu
            self.summary.searches += 1
            self.summary.pairs_created += sum(created.values())
            self.summary.searched += len(part)
            del self.to_search[: len(part)]

    # -- what an earlier run left --------------------------------------------------------

    def resume(self, *, source: str, before: int) -> None:
        """Finish what earlier stopped runs of ``source`` left: documents stored and
        not processed are processed and searched; of those processed, the last
        searched window and everything after it is searched again (searching is
        idempotent and goes in document order, so nothing before it was left)."""
        stopped = CrawlBatch.objects.filter(source=source, pk__lt=before).exclude(
            status=CrawlBatch.Status.DONE
        )
        for batch in stopped.order_by("pk"):
            ids = list(
                Document.objects.filter(batch=batch).order_by("pk").values_list("pk", flat=True)
            )
            if not ids:
                continue
            processed = set(
                Document.objects.filter(batch=batch, extractions__isnull=False)
                .values_list("pk", flat=True)
                .distinct()
            )
            unprocessed = [d for d in ids if d not in processed]
            done_ids = [d for d in ids if d in processed]
            last_indexed = _last_indexed(batch, done_ids)
            window = 2 * self.search_batch
            start = (
                max(0, bisect.bisect_right(done_ids, last_indexed) - window)
                if last_indexed is not None
                else 0
            )
            again = done_ids[start:]
            self.summary.resumed += len(again) + len(unprocessed)
            self.to_search += again
            self._search()
            for part in _parts(unprocessed, self.search_batch):
                self.stored(part)
        self.drain()


def _last_indexed(batch: CrawlBatch, done_ids: Sequence[int]) -> int | None:
    """The batch's last document in the band index, of those processed (`done_ids`, in
    order), found from their main fingerprints (each the source of one entry:
    `index.fingerprints_indexed`), read by their key's range (it leads with the
    document): the batch's span of the table, not all of it."""
    if not done_ids:
        return None
    prints = Fingerprint.objects.filter(
        document_id__gte=done_ids[0],
        document_id__lte=done_ids[-1],
        document__batch=batch,
        simhash__isnull=False,
    )
    return index.fingerprints_indexed(prints).aggregate(last=Max("document_id"))["last"]


def _parts(ids: Sequence[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def bulk_ingest(
    *,
    source: str,
    fmt: str,
    items: Iterable[Item],
    jobs: int,
    chunk_size: int = 1000,
    search_batch: int = 2000,
    bytes_total: int = 0,
    bytes_read: Callable[[], int] | None = None,
    progress: BulkProgressFn | None = None,
) -> BulkSummary:
    """Store every good record of a crawl stream (as `services.batch_ingest` does, in
    chunks of ``chunk_size``), process the stored documents in ``jobs`` worker
    processes and search them for candidates ``search_batch`` at a time, all before
    returning: no Celery task is queued (but embeddings, on their own queue)."""
    summary = BulkSummary()
    pipeline = _Pipeline(jobs=jobs, search_batch=search_batch, summary=summary, progress=progress)
    first = CrawlBatch.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    pipeline.start()
    ok = False
    try:
        pipeline.resume(source=source, before=first + 1)

        def ingest_progress(s: services.IngestSummary) -> None:
            summary.ingest = s
            if progress is not None:
                progress(summary)

        summary.ingest = services.batch_ingest(
            source=source,
            fmt=fmt,
            items=items,
            bytes_total=bytes_total,
            bytes_read=bytes_read,
            progress=ingest_progress,
            on_stored=pipeline.stored,
            chunk_size=chunk_size,
        )
        try:
            pipeline.drain()
        except BaseException as exc:
            assert summary.ingest is not None
            _batch_fail(summary.ingest.batch_id, exc)
            raise
        ok = True
    finally:
        pipeline.stop(ok=ok)
    return summary


def _batch_fail(batch_id: int, exc: BaseException) -> None:
    """The file was stored but its last documents were not all processed or searched:
    the batch says it failed, so that the next run of the file finishes them."""
    first_line = (str(exc).splitlines() or [""])[0]
    with transaction.atomic():
        CrawlBatch.objects.filter(pk=batch_id).update(
            status=CrawlBatch.Status.FAILED, error_count=F("error_count") + 1
        )
        services.record_error(
            CrawlBatch.objects.get(pk=batch_id),
            RecordError(
                "ingest_failed", -1, f"processing stopped: {type(exc).__name__}: {first_line}"
            ),
        )
