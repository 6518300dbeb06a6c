"""The pair page's diffs: the word diff of the texts (cached: the page is rendered again
on every toggle and save), the sentence alignment and the source diff."""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404

from ingest.models import CandidatePair, Document
from reviews.core import diff as diffs
from reviews.core.align import Alignment, sentence_align
from reviews.pair import passage_panel
from reviews.pair.pair_reads import PairView

CACHE_WORD_DIFFS = 16


# Word diffs computed lately, by the two extractions (their texts never change), the
# branch, the guard terms and the cap: a pair's page is rendered again on every toggle,
# save and return to it.
_WORD_DIFFS = passage_panel.recent(CACHE_WORD_DIFFS)


def pair_text_diff(*, view: PairView, branch: str = "main") -> diffs.WordDiff:
    ea, eb = view.a.extraction, view.b.extraction
    if ea is None or eb is None:
        return _pair_text_diff(view=view, branch=branch)
    key = (ea.pk, eb.pk, branch, tuple(view.guard_terms), settings.REVIEW_DIFF_MAX_WORDS)
    return _WORD_DIFFS.get(key, lambda: _pair_text_diff(view=view, branch=branch))


def _pair_text_diff(*, view: PairView, branch: str) -> diffs.WordDiff:
    main_a = main_b = None
    if branch == "full":
        a, b = view.a.full_text, view.b.full_text
        # Mark what is main text and what is the page around it.
        main_a, main_b = view.a.main_text, view.b.main_text
    else:
        a, b = view.a.main_text, view.b.main_text
    return diffs.word_diff(
        a,
        b,
        max_words=settings.REVIEW_DIFF_MAX_WORDS,
        emphasise=view.guard_terms,
        main_a=main_a,
        main_b=main_b,
    )


def pair_alignment(*, view: PairView) -> Alignment:
    """The main texts aligned sentence by sentence (moved blocks shown as moved)."""
    return sentence_align(
        view.a.main_text,
        view.b.main_text,
        max_sentences=settings.REVIEW_SOURCE_MAX_LINES,
        context=1,
    )


def document_source(*, document: Document) -> str:
    """The raw body decoded for display (never for a browser to run: see the source
    view's policy). Undecodable bytes are replaced."""
    raw = document.body.raw()
    for encoding in (document.detected_encoding, document.declared_encoding, "utf-8"):
        if not encoding:
            continue
        try:
            return raw.decode(encoding, errors="replace")
        except LookupError:
            continue
    return raw.decode("utf-8", errors="replace")


def pair_source_diff(*, pair: CandidatePair) -> diffs.LineDiff:
    return diffs.line_diff(
        document_source(document=pair.a),
        document_source(document=pair.b),
        max_lines=settings.REVIEW_SOURCE_MAX_LINES,
        context=3,
    )


def document_get(*, document_id: int) -> Document:
    return get_object_or_404(Document.objects.select_related("body"), pk=document_id)
