"""The pair view's passage panel: shared passages on both sides, aligned run by run,
containment in words, template passages greyed. Reads only; crawl text stays plain
strings (the template escapes it)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TypeVar

from django.utils.translation import gettext

from ingest import passages, sites
from ingest.core import channels
from ingest.core import passages as core
from ingest.core.methods import method_get, passage_method_for
from ingest.models import CandidatePair, Extraction

# Characters of each text shown in the panel (a huge page would flood the view: the
# word diff above shows the texts in full up to its own cap).
TEXT_MAX_CHARS = 20_000
RUNS_SHOWN = 30
# Extractions computed lately (an extraction's text never changes, so what is derived
# from it is kept by its id): a pair's page is rendered again on every toggle and save.
CACHE_EXTRACTIONS = 16

T = TypeVar("T")


class Recent:
    """A small least-recently-used store of what was derived from extractions."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[tuple[object, ...], object] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[object, ...], make: Callable[[], T]) -> T:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]  # type: ignore[return-value]
        value = make()
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self.lock:
            self.items.clear()


_DERIVED = Recent(CACHE_EXTRACTIONS * 2)


def cache_clear() -> None:
    """Forget what was derived from extractions (benchmarks time the first view)."""
    _DERIVED.clear()
    for other in _OTHERS:
        other.clear()


_OTHERS: list[Recent] = []


def recent(size: int) -> Recent:
    """Another store of what is derived from extractions, cleared with this one."""
    store = Recent(size)
    _OTHERS.append(store)
    return store


@dataclass(frozen=True)
class _Derived:
    """One extraction's passages (the whole main text) and the words of its shown part."""

    passages: list[core.Passage]
    words: core.Words
    cut: bool


def _derive(text: str, method: str) -> _Derived:
    return _Derived(
        passages=core.passages(text, method=method),
        words=core.words(text[:TEXT_MAX_CHARS], method=method),
        cut=len(text) > TEXT_MAX_CHARS,
    )


def _derived(extraction_id: int, method: str, dropped: tuple[str, ...] = ()) -> _Derived:
    """What the panel needs of one extraction, as the passage channel read it (without
    the `dropped` boilerplate lines): read and computed once while it is recent (its
    text is loaded only then)."""

    def make() -> _Derived:
        text = Extraction.objects.filter(id=extraction_id).values_list("main_text", flat=True)
        return _derive(sites.passage_text(text.get(), dropped), method)

    return _DERIVED.get(("passages", extraction_id, method, TEXT_MAX_CHARS, dropped), make)


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
    # Main-text lines the site's boilerplate removed before the passages were read.
    boilerplate_a: list[str] = field(default_factory=list)
    boilerplate_b: list[str] = field(default_factory=list)

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
    name, number = passage_method_for(pair.method.key), passages.method_for(pair.method.key)
    rows = list(
        Extraction.objects.filter(
            document_id__in=[pair.a_id, pair.b_id],
            extractor_version=method_get(pair.method.key).extractor_version,
        ).values_list("document_id", "id")
    )
    # The texts as the passage channel read them: without their site's boilerplate lines.
    dropped = {
        doc: tuple(lines)
        for doc, lines in sites.boilerplate_dropped(
            document_ids=[pair.a_id, pair.b_id],
            extractor_version=method_get(pair.method.key).extractor_version,
        ).items()
    }
    derived = {doc: _derived(pk, name, dropped.get(doc, ())) for doc, pk in rows}
    empty = _derive("", name)
    da, db = derived.get(pair.a_id, empty), derived.get(pair.b_id, empty)
    every = {p.hash for p in da.passages} | {p.hash for p in db.passages}
    template = passages.templates_among(every, method=number)
    stock = passages.stock_among(every - template, method=number)
    ids = {doc: pk for doc, pk in rows}
    if pair.a_id not in ids or pair.b_id not in ids:
        return _view(pair, da, db, template, stock, dropped)
    # The same two texts with the same template passages and stock phrases give the
    # same panel: kept while recent, under what it depends on.
    key = (
        "panel",
        ids[pair.a_id],
        ids[pair.b_id],
        name,
        bool(pair.channels & channels.PASSAGES),
        frozenset(template),
        frozenset(stock),
        dropped.get(pair.a_id, ()),
        dropped.get(pair.b_id, ()),
    )
    return _PANELS.get(key, lambda: _view(pair, da, db, template, stock, dropped))


_PANELS = recent(CACHE_EXTRACTIONS)


def _view(
    pair: CandidatePair,
    da: _Derived,
    db: _Derived,
    template: set[int],
    stock: set[int],
    dropped: dict[int, tuple[str, ...]],
) -> PassageView:
    pa, pb, wa, wb = da.passages, db.passages, da.words, db.words
    ov = core.overlap(pa, pb, ignore=template | stock)
    cut = da.cut or db.cut
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
        boilerplate_a=list(dropped.get(pair.a_id, ())),
        boilerplate_b=list(dropped.get(pair.b_id, ())),
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
