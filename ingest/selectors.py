from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404

from ingest import embedder
from ingest.candidates import active_method_key
from ingest.core import embeddings as embeddings_core
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CrawlBatch, Document, Embedding, Extraction, Fingerprint


def documents_list(*, status: str = "", q: str = "") -> QuerySet[Document]:
    """Newest first; `q` narrows to URLs (or final URLs) containing it."""
    qs = (
        Document.objects.select_related("site")
        .prefetch_related(
            Prefetch(
                "extractions",
                queryset=Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION).defer(
                    "main_text", "full_text"
                ),
                to_attr="current_extractions",
            ),
            Prefetch(
                "fingerprints",
                queryset=Fingerprint.objects.filter(method__key=active_method_key()),
                to_attr="active_fingerprints",
            ),
        )
        .order_by("-id")
    )
    if status:
        qs = qs.filter(extractions__extractor_version=EXTRACTOR_VERSION, extractions__status=status)
    if q:
        qs = qs.filter(Q(url__icontains=q) | Q(final_url__icontains=q))
    return qs


def document_get(*, document_id: int) -> Document:
    return get_object_or_404(Document.objects.select_related("site", "batch"), pk=document_id)


def document_fingerprints(*, document: Document) -> QuerySet[Fingerprint]:
    return document.fingerprints.select_related("method").order_by("method__key", "branch")


def batches_list() -> QuerySet[CrawlBatch]:
    return CrawlBatch.objects.prefetch_related("errors").order_by("-started_at")


def extraction_current(*, document: Document) -> Extraction | None:
    """The document's extraction by the current extractor, if it has one yet."""
    return document.extractions.filter(extractor_version=EXTRACTOR_VERSION).first()


@dataclass(frozen=True)
class EmbeddingStatus:
    """What the desk says of a document's main-text embedding (the semantic channel)."""

    status: str  # an Embedding.Status, or "missing" (no row yet)
    words: str  # for people: "embedded", "not covered by the model (language vi)", …
    model: str = ""
    dims: int = 0

    @property
    def embedded(self) -> bool:
        return self.status == Embedding.Status.COVERED


def _status_words(row: Embedding) -> str:
    if row.status == Embedding.Status.COVERED:
        return "embedded"
    if row.status == Embedding.Status.NOT_COVERED:
        language = row.language or embeddings_core.UNKNOWN_LANGUAGE
        return f"not covered by the model (language {language})"
    if row.status == Embedding.Status.EMPTY:
        return "no main text"
    return f"error: {row.message}" if row.message else "error"


def embedding_statuses(*, document_ids: Iterable[int]) -> dict[int, EmbeddingStatus]:
    """Each document's embedding under the current extractor and text rule (the latest
    row when several models wrote one), or why there is none: one query."""
    ids = list(document_ids)
    rows: dict[int, Embedding] = {}
    for row in (
        Embedding.objects.filter(
            document_id__in=ids,
            extractor_version=EXTRACTOR_VERSION,
            text_rule=embeddings_core.TEXT_RULE,
        )
        .defer("vector")
        .order_by("id")
    ):
        rows[row.document_id] = row  # later rows win
    out: dict[int, EmbeddingStatus] = {}
    state = embedder.channel_state()
    for d in ids:
        row_or_none = rows.get(d)
        if row_or_none is not None:
            out[d] = EmbeddingStatus(
                row_or_none.status, _status_words(row_or_none), row_or_none.model, row_or_none.dims
            )
        elif state.on:
            out[d] = EmbeddingStatus("missing", "not embedded yet: a worker will pick it up")
        else:
            out[d] = EmbeddingStatus(
                "missing", f"not embedded: the semantic channel is off ({state.reason})"
            )
    return out
