from collections.abc import Iterable
from dataclasses import dataclass, replace

from django.conf import settings
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext

from ingest import embedder, vectors
from ingest.candidates import active_method_key
from ingest.core import embeddings as embeddings_core
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.methods import fingerprint_text, method_get
from ingest.models import BranchPrint, CrawlBatch, Document, Embedding, Extraction, Fingerprint

SEARCH_MAX_CHARS = 200


def documents_search(*, q: str) -> QuerySet[Document]:
    """Documents whose URL or final URL, or whose current extraction's title or main
    text, contains `q` (case-insensitive; any script). On PostgreSQL these are ILIKE
    lookups the GIN trigram indexes of pg_trgm serve (ingest migration 0022); on SQLite a
    plain LIKE. Unordered."""
    q = q[:SEARCH_MAX_CHARS]
    texts = Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION).filter(
        Q(title__icontains=q) | Q(main_text__icontains=q)
    )
    return Document.objects.filter(
        Q(url__icontains=q) | Q(final_url__icontains=q) | Q(pk__in=texts.values("document_id"))
    )


def documents_list(*, status: str = "", quality: str = "", q: str = "") -> QuerySet[Document]:
    """Newest first; `status` and `quality` (what a blocked page is: login wall, captcha,
    navigation shell, …) narrow to the current extraction's, `q` to documents whose URL,
    title or text contains it (`documents_search`). Each document's current extraction
    and active-method fingerprints come prefetched (``document_rows`` reads them)."""
    qs = (
        Document.objects.select_related("site")
        .prefetch_related(
            Prefetch(
                "extractions",
                queryset=Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION).defer(
                    "main_text", "full_text"
                ),
            ),
            Prefetch(
                "fingerprints",
                queryset=Fingerprint.objects.filter(method__key=active_method_key()),
            ),
        )
        .order_by("-id")
    )
    if status or quality:
        current = Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION)
        if status:
            current = current.filter(status=status)
        if quality:
            current = current.filter(quality=quality)
        qs = qs.filter(pk__in=current.values("document_id"))
    if q:
        qs = qs.filter(pk__in=documents_search(q=q).values("pk"))
    return qs


class EstimatedPaginator(Paginator):
    """A paginator whose count is given (the planner's estimate), not counted."""

    estimated = True

    def __init__(self, object_list: QuerySet[Document], per_page: int, *, count: int) -> None:
        super().__init__(object_list, per_page)
        self.__dict__["count"] = count  # Paginator.count is a cached_property


def documents_count_estimate() -> int | None:
    """PostgreSQL's estimate of the documents stored (the table's `reltuples`, kept by
    ANALYZE and autovacuum); None on SQLite or before the table was first analysed."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = 'ingest_document'::regclass"
        )
        (estimate,) = cursor.fetchone()
    return estimate if estimate >= 0 else None


def documents_paginator(
    documents: QuerySet[Document], per_page: int, *, filtered: bool
) -> Paginator:
    """The documents list's pages. Unfiltered, past DOCUMENT_LIST_EXACT_COUNT_MAX
    documents, the count is the planner's estimate: counting ten million rows takes
    ~200 ms on every page (bench/results/2026-12-03-scale-10m.md). A filtered list is
    counted (its filter bounds the work)."""
    estimate = None if filtered else documents_count_estimate()
    if estimate is not None and estimate > settings.DOCUMENT_LIST_EXACT_COUNT_MAX:
        return EstimatedPaginator(documents, per_page, count=estimate)
    return Paginator(documents, per_page)


@dataclass(frozen=True)
class DocumentRow:
    """A line of the documents list: the document, its extraction by the current
    extractor (None: not extracted yet) and its fingerprints under the active method,
    main and full-page branch (None: not computed yet)."""

    document: Document
    extraction: Extraction | None
    main: BranchPrint | None
    full: BranchPrint | None


def document_rows(documents: Iterable[Document]) -> list[DocumentRow]:
    """The list's rows of documents from ``documents_list`` (read from its prefetches:
    no query per document)."""
    rows = []
    for document in documents:
        extractions = list(document.extractions.all())
        prints = list(document.fingerprints.all())
        rows.append(
            DocumentRow(
                document=document,
                extraction=extractions[0] if extractions else None,
                main=prints[0].main if prints else None,
                full=prints[0].full if prints else None,
            )
        )
    return rows


def document_get(*, document_id: int) -> Document:
    return get_object_or_404(Document.objects.select_related("site", "batch"), pk=document_id)


def document_fingerprints(*, document: Document) -> list[BranchPrint]:
    """The document's fingerprints, a line a method and branch (main, then full page).
    The full page's digest and token count are not stored (ingest 0035): they are
    computed here from the full text of the method's extraction, as ingest computed
    them."""
    rows = list(document.fingerprints.select_related("method").order_by("method__key"))
    versions = {method_get(f.method.key).extractor_version for f in rows}
    full_texts = dict(
        Extraction.objects.filter(document=document, extractor_version__in=versions).values_list(
            "extractor_version", "full_text"
        )
    )
    out = []
    for fingerprint in rows:
        key = fingerprint.method.key
        text = full_texts.get(method_get(key).extractor_version)
        full = fingerprint.full
        if text is not None:
            computed = fingerprint_text(key, text, min_tokens=settings.FINGERPRINT_MIN_TOKENS)
            full = replace(full, token_count=computed.token_count, text_sha256=computed.text_sha256)
        out += [fingerprint.main, full]
    return out


def batches_list() -> QuerySet[CrawlBatch]:
    return CrawlBatch.objects.prefetch_related("errors").order_by("-started_at")


def extraction_current(*, document: Document) -> Extraction | None:
    """The document's extraction by the current extractor, if it has one yet."""
    return document.extractions.filter(extractor_version=EXTRACTOR_VERSION).first()


@dataclass(frozen=True)
class EmbeddingStatus:
    """What the desk says of a document's main-text embedding in the configured space
    (model, text rule, extractor version: vectors.Space)."""

    status: str  # an Embedding.Status, or "missing" (no row in the configured space)
    words: str  # for people: "embedded", "not covered by the model (language vi)", …
    model: str = ""
    dims: int = 0
    attempts: int = 0  # tries in the configured space, the failed ones included
    earlier_errors: tuple[str, ...] = ()  # the messages of failed tries before this row

    @property
    def embedded(self) -> bool:
        return self.status == Embedding.Status.COVERED


def _status_words(row: Embedding) -> str:
    if row.status == Embedding.Status.COVERED:
        return gettext("embedded")
    if row.status == Embedding.Status.NOT_COVERED:
        language = row.language or embeddings_core.UNKNOWN_LANGUAGE
        return gettext("not covered by the model (language %(language)s)") % {"language": language}
    if row.status == Embedding.Status.EMPTY:
        return gettext("no main text")
    if row.message:
        return gettext("error: %(message)s") % {"message": row.message}
    return gettext("error")


def _tries_words(row: Embedding) -> str:
    """A failed try's number, and whether another will be made (EMBEDDING_ATTEMPTS)."""
    most = settings.EMBEDDING_ATTEMPTS
    values = {"attempt": row.attempt, "most": most}
    if row.attempt >= most:
        return gettext("try %(attempt)s of %(most)s: no more tries") % values
    return gettext("try %(attempt)s of %(most)s: the next run tries again") % values


def _latest(rows: list[Embedding]) -> tuple[Embedding, list[Embedding]]:
    """A space's row to show (its outcome, else its latest failed try) and the failed
    tries before it."""
    failed = sorted(
        (r for r in rows if r.status == Embedding.Status.ERROR), key=lambda r: r.attempt
    )
    outcome = next((r for r in rows if r.status != Embedding.Status.ERROR), None)
    if outcome is not None:
        return outcome, failed
    return failed[-1], failed[:-1]


def _elsewhere(rows: list[Embedding], where: vectors.Space | None) -> str:
    """Rows outside the configured space, in words: whose they are and what they say."""
    spaces: dict[vectors.Space, list[Embedding]] = {}
    for row in rows:
        spaces.setdefault(vectors.Space.of(row), []).append(row)
    parts = []
    for space, space_rows in spaces.items():
        row, _ = _latest(space_rows)
        if where is None or space.model != where.model:
            text = gettext("only a row of another model exists: %(model)s (%(status)s)")
        elif space.text_rule != where.text_rule:
            text = gettext(
                "only a row under another text rule exists: %(model)s, %(rule)s (%(status)s)"
            )
        else:
            text = gettext(
                "only a row under another extractor version exists: %(model)s, %(version)s "
                "(%(status)s)"
            )
        parts.append(
            text
            % {
                "model": space.model,
                "rule": space.text_rule,
                "version": space.extractor_version,
                "status": _status_words(row),
            }
        )
    return "; ".join(parts)


def embedding_statuses(*, document_ids: Iterable[int]) -> dict[int, EmbeddingStatus]:
    """Each document's embedding in the configured space (its outcome, else its latest
    failed try and how many were made), or why there is none, saying so when only
    another model, text rule or extractor version has a row: one query."""
    ids = list(document_ids)
    where = vectors.space()
    rows: dict[int, list[Embedding]] = {}
    for row in Embedding.objects.filter(document_id__in=ids).defer("vector").order_by("id"):
        rows.setdefault(row.document_id, []).append(row)
    out: dict[int, EmbeddingStatus] = {}
    state = embedder.channel_state()
    for d in ids:
        ours = [r for r in rows.get(d, []) if vectors.Space.of(r) == where]
        if ours:
            row, earlier = _latest(ours)
            words = _status_words(row)
            if row.status == Embedding.Status.ERROR:
                words = gettext("%(status)s (%(tries)s)") % {
                    "status": words,
                    "tries": _tries_words(row),
                }
            out[d] = EmbeddingStatus(
                row.status,
                words,
                row.model,
                row.dims,
                attempts=row.attempt,
                earlier_errors=tuple(r.message or "error" for r in earlier),
            )
            continue
        model = {"model": where.model if where is not None else "", "why": state.reason}
        if state.on and where is not None:
            words = gettext("not embedded by %(model)s yet: a worker will pick it up") % model
        elif state.on:
            words = gettext("not embedded yet: a worker will pick it up")
        elif where is not None:
            words = (
                gettext("not embedded by %(model)s: the semantic channel is off (%(why)s)") % model
            )
        else:
            words = gettext("not embedded: the semantic channel is off (%(why)s)") % model
        elsewhere = _elsewhere(rows.get(d, []), where)
        out[d] = EmbeddingStatus("missing", f"{words}; {elsewhere}" if elsewhere else words)
    return out
