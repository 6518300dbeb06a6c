from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dedup_site import roles
from dedup_site.http import HtmxHttpRequest, fragment, role_required, template_for
from ingest import selectors
from ingest.models import Extraction

# Crawled documents and batches are for the desk's roles, not every account.
_reader = role_required(roles.can_view, "reading documents needs the editor, auditor or admin role")


@_reader
@require_GET
def document_list(request: HtmxHttpRequest) -> HttpResponse:
    status = request.GET.get("status", "")
    if status not in Extraction.Status.values:
        status = ""
    quality = request.GET.get("quality", "")
    if quality not in Extraction.Quality.values:
        quality = ""
    q = request.GET.get("q", "").strip()[:200]
    documents = selectors.documents_list(status=status, quality=quality, q=q)
    paginator = selectors.documents_paginator(documents, 50, filtered=bool(status or quality or q))
    page = paginator.get_page(request.GET.get("page"))
    template = template_for("ingest/document_list.html", fragment(request, "document-table"))
    return render(
        request,
        template,
        {
            "page": page,
            "rows": selectors.document_rows(page),
            "status": status,
            "quality": quality,
            "q": q,
            "statuses": Extraction.Status.choices,
            "qualities": Extraction.Quality.choices,
        },
    )


@_reader
@require_GET
def document_detail(request: HttpRequest, document_id: int) -> HttpResponse:
    document = selectors.document_get(document_id=document_id)
    extraction = selectors.extraction_current(document=document)
    return render(
        request,
        "ingest/document_detail.html",
        {
            "document": document,
            "extraction": extraction,
            "fingerprints": selectors.document_fingerprints(document=document),
            "embedding": selectors.embedding_statuses(document_ids=[document.pk])[document.pk],
        },
    )


@_reader
@require_GET
def batch_list(request: HttpRequest) -> HttpResponse:
    return render(request, "ingest/batch_list.html", {"batches": selectors.batches_list()[:50]})
