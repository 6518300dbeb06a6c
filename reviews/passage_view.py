"""The pair view's passage panel: shared passages on both sides, aligned run by run,
containment in words, template passages greyed. Reads only; crawl text stays plain
strings (the template escapes it)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from django.utils.translation import gettext

from ingest import passages
from ingest.core import channels
from ingest.core import passages as core
from ingest.core.methods import method_get, passage_method_for
from ingest.models import CandidatePair, Extraction

# Characters of each text shown in the panel (a huge page would flood the view).
TEXT_MAX_CHARS = 60_000
RUNS_SHOWN = 30


@dataclass(frozen=True)
class Segment:
    text: str
    kind: str  # "" | "shared" | "template" | "stock"
    run: int | None = None  # 1-based run number of a shared segment


@dataclass(frozen=True)
class AlignedRun:
    number: int
    a_text: str
    b_text: str
    a_words: tuple[int, int]  # 1-based, inclusive
    b_words: tuple[int, int]


@dataclass
class PassageView:
    a_in_b: float  # share of A's passages found in B
    b_in_a: float
    shared: int
    size_a: int
    size_b: int
    template_a: int
    template_b: int
    nominated: bool  # the passage channel nominated the pair
    stock_a: int = 0  # A's passages that are stock phrases (PassageCommon)
    stock_b: int = 0
    a_segments: list[Segment] = field(default_factory=list)
    b_segments: list[Segment] = field(default_factory=list)
    runs: list[AlignedRun] = field(default_factory=list)
    runs_total: int = 0
    cut: bool = False

    @property
    def summary(self) -> str:
        """Containment in words, the larger direction first."""
        if self.a_in_b >= self.b_in_a:
            text = gettext(
                "B contains %(a_in_b)s of A; A contains %(b_in_a)s of B (by shared passages)."
            )
        else:
            text = gettext(
                "A contains %(b_in_a)s of B; B contains %(a_in_b)s of A (by shared passages)."
            )
        return text % {"a_in_b": f"{self.a_in_b:.0%}", "b_in_a": f"{self.b_in_a:.0%}"}


def _kinds(
    w: core.Words,
    ps: list[core.Passage],
    ranges: list[tuple[int, int, int]],
    template: set[int],
    stock: Collection[int] = frozenset(),
) -> list[Segment]:
    """Cut the text into plain, shared (with its run), template and stock-phrase
    segments (a stock phrase: a passage on many pages of many sites)."""
    n = len(w.spans)
    labels: list[tuple[str, int | None]] = [("", None)] * n
    for p in ps:
        kind = "template" if p.hash in template else "stock" if p.hash in stock else ""
        if kind:
            for i in range(p.start, min(p.start + core.K, n)):
                labels[i] = (kind, None)
    for start, end, run in ranges:
        for i in range(start, min(end, n)):
            labels[i] = ("shared", run)
    return _segments(w, labels)


def _segments(w: core.Words, labels: list[tuple[str, int | None]]) -> list[Segment]:
    text = w.text
    out: list[Segment] = []
    at = 0
    i = 0
    while i < len(labels):
        label = labels[i]
        j = i
        while j + 1 < len(labels) and labels[j + 1] == label:
            j += 1
        s, e = w.spans[i][0], w.spans[j][1]
        if label[0]:
            if s > at:
                out.append(Segment(text[at:s], ""))
            out.append(Segment(text[s:e], label[0], label[1]))
            at = e
        i = j + 1
    if at < len(text):
        out.append(Segment(text[at:], ""))
    return out


def _text(w: core.Words, start: int, end: int) -> str:
    end = min(end, len(w.spans))
    if start >= end:
        return ""
    return w.text[w.spans[start][0] : w.spans[end - 1][1]]


def pair_passages(*, pair: CandidatePair) -> PassageView:
    texts = dict(
        Extraction.objects.filter(
            document_id__in=[pair.a_id, pair.b_id],
            extractor_version=method_get(pair.method.key).extractor_version,
        ).values_list("document_id", "main_text")
    )
    text_a = texts.get(pair.a_id, "")
    text_b = texts.get(pair.b_id, "")
    name, number = passage_method_for(pair.method.key), passages.method_for(pair.method.key)
    pa, pb = core.passages(text_a, method=name), core.passages(text_b, method=name)
    every = {p.hash for p in pa} | {p.hash for p in pb}
    template = passages.templates_among(every, method=number)
    stock = passages.stock_among(every - template, method=number)
    ov = core.overlap(pa, pb, ignore=template | stock)
    cut = len(text_a) > TEXT_MAX_CHARS or len(text_b) > TEXT_MAX_CHARS
    wa = core.words(text_a[:TEXT_MAX_CHARS], method=name)
    wb = core.words(text_b[:TEXT_MAX_CHARS], method=name)
    runs = [r for r in ov.runs if r.a_end <= len(wa.spans) and r.b_end <= len(wb.spans)]
    view = PassageView(
        a_in_b=ov.a_in_b,
        b_in_a=ov.b_in_a,
        shared=ov.shared,
        size_a=ov.size_a,
        size_b=ov.size_b,
        template_a=len(core.hash_set(pa) & template),
        template_b=len(core.hash_set(pb) & template),
        stock_a=len(core.hash_set(pa) & stock),
        stock_b=len(core.hash_set(pb) & stock),
        nominated=bool(pair.channels & channels.PASSAGES),
        runs_total=len(ov.runs),
        cut=cut,
    )
    view.a_segments = _kinds(
        wa, pa, [(r.a_start, r.a_end, i + 1) for i, r in enumerate(runs)], template, stock
    )
    view.b_segments = _kinds(
        wb, pb, [(r.b_start, r.b_end, i + 1) for i, r in enumerate(runs)], template, stock
    )
    view.runs = [
        AlignedRun(
            number=i + 1,
            a_text=_text(wa, r.a_start, r.a_end),
            b_text=_text(wb, r.b_start, r.b_end),
            a_words=(r.a_start + 1, r.a_end),
            b_words=(r.b_start + 1, r.b_end),
        )
        for i, r in enumerate(runs[:RUNS_SHOWN])
    ]
    return view
