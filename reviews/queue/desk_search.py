"""The desk's search: documents and candidate pairs by URL, title and text.

Documents match when their URL, final URL, or current extraction's title or main text
contains the term (``ingest.selectors.documents_search``: PostgreSQL's pg_trgm indexes
serve it, Chinese and Vietnamese included; SQLite does a plain LIKE). Pairs match when
either document does, under the active method. Newest first, a bounded number of each.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from ingest import selectors as ingest_selectors
from ingest.channels.thresholds import active_method_key
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidatePair, Document, Extraction

# Fewer characters than this match too much to be useful (and no trigram serves them).
MIN_CHARS = 2
SHOWN = 50


@dataclass(frozen=True)
class DocumentHit:
    document: Document
    title: str  # the current extraction's ("" when none)


@dataclass(frozen=True)
class PairHit:
    pair: CandidatePair
    title_a: str
    title_b: str


@dataclass(frozen=True)
class SearchResults:
    q: str
    documents: list[DocumentHit]
    pairs: list[PairHit]
    more_documents: bool
    more_pairs: bool


def search(*, q: str) -> SearchResults | None:
    """Documents and pairs matching `q`; None when `q` is too short to search."""
    q = q.strip()[: ingest_selectors.SEARCH_MAX_CHARS]
    if len(q) < MIN_CHARS:
        return None
    matching = ingest_selectors.documents_search(q=q)
    documents = list(matching.select_related("site").order_by("-id")[: SHOWN + 1])
    ids = matching.values("pk")
    pairs = list(
        CandidatePair.objects.filter(method__key=active_method_key())
        .filter(Q(a_id__in=ids) | Q(b_id__in=ids))
        .select_related("a", "b")
        .order_by("-id")[: SHOWN + 1]
    )
    shown_docs, shown_pairs = documents[:SHOWN], pairs[:SHOWN]
    doc_ids = (
        {d.pk for d in shown_docs} | {p.a_id for p in shown_pairs} | {p.b_id for p in shown_pairs}
    )
    titles = dict(
        Extraction.objects.filter(
            extractor_version=EXTRACTOR_VERSION, document_id__in=doc_ids
        ).values_list("document_id", "title")
    )
    return SearchResults(
        q=q,
        documents=[DocumentHit(d, titles.get(d.pk, "")) for d in shown_docs],
        pairs=[PairHit(p, titles.get(p.a_id, ""), titles.get(p.b_id, "")) for p in shown_pairs],
        more_documents=len(documents) > SHOWN,
        more_pairs=len(pairs) > SHOWN,
    )
