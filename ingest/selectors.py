from django.db.models import Prefetch, Q, QuerySet
from django.shortcuts import get_object_or_404

from ingest.candidates import active_method_key
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CrawlBatch, Document, Extraction, Fingerprint


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
