"""Stored embeddings, read: a document's vector under the configured model, the cosine of
two documents, and this process's approximate index of them (ingest/core/ann.py).

Design of the index (several workers): every worker process keeps its own in-memory
usearch index per (model, text rule, extractor version) and, before each query, catches
up from PostgreSQL: the rows committed since it last read, by id, with the ids still
missing under its watermark asked for again (ann.CatchUp). A worker stores its batch's
vectors and commits before it catches up and queries, so of two documents embedded at
the same time by two workers, whichever commits second finds the other (the same rule
as the SimHash index). A cold process reads the whole table once (the rebuild).
No process owns the index: workers can be added, restarted or killed freely, and
PostgreSQL stays the one store of vectors.
"""

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db.models import Q

from ingest import embedder
from ingest.core import ann
from ingest.core import embeddings as core
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import Document, Embedding

READ_CHUNK = 5000


@dataclass(frozen=True)
class Space:
    """The vectors that can be compared: one model, text rule and extractor version."""

    model: str
    text_rule: str = core.TEXT_RULE
    extractor_version: str = EXTRACTOR_VERSION

    def rows(self) -> Q:
        return Q(
            model=self.model,
            text_rule=self.text_rule,
            extractor_version=self.extractor_version,
        )

    @classmethod
    def of(cls, row: Embedding) -> "Space":
        return cls(row.model, row.text_rule, row.extractor_version)


def space() -> Space | None:
    """The configured model's space; None when no model is configured. Stored vectors
    are read (cosines of pairs) even where the extra is not installed."""
    key = embedder.model_key()
    return Space(key) if key else None


def vectors_for(ids: list[int] | set[int], where: Space | None = None) -> dict[int, bytes]:
    """Packed vectors of these documents (those that have one) in the space."""
    where = where or space()
    if where is None or not ids:
        return {}
    return {
        d: bytes(v)
        for d, v in Embedding.objects.filter(
            where.rows(), document_id__in=list(ids), status=Embedding.Status.COVERED
        ).values_list("document_id", "vector")
        if v is not None
    }


def threshold(doc_type: str) -> float:
    thresholds = settings.SEMANTIC_THRESHOLDS
    return float(thresholds.get(doc_type, thresholds.get("other", 0.9)))


def pair_threshold(type_a: str, type_b: str) -> float:
    """Either side's doc type may nominate (as with the SimHash thresholds)."""
    return min(threshold(type_a), threshold(type_b))


def pair_cosine(vectors: dict[int, bytes], a: int, b: int) -> float | None:
    va, vb = vectors.get(a), vectors.get(b)
    if va is None or vb is None or len(va) != len(vb):
        return None
    return round(core.cosine(va, vb), 4)


# --- this process's approximate index --------------------------------------------------


@dataclass
class ProcessIndex:
    where: Space
    index: Any = None  # a usearch index (ann.new_index), made on the first vector
    catchup: ann.CatchUp = field(default_factory=ann.CatchUp)
    fetched_at: dict[int, datetime] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def catch_up(self) -> int:
        """Read the rows committed since the last catch-up; returns vectors added."""
        added = 0
        with self.lock:
            while True:
                above, gaps = self.catchup.wanted()
                rows = list(
                    Embedding.objects.filter(Q(pk__gt=above) | Q(pk__in=gaps))
                    .order_by("pk")
                    .values_list(
                        "pk",
                        "document_id",
                        "model",
                        "text_rule",
                        "extractor_version",
                        "status",
                        "vector",
                        "document__fetched_at",
                    )[:READ_CHUNK]
                )
                self.catchup.seen([r[0] for r in rows], time.monotonic())
                ours = [
                    r
                    for r in rows
                    if r[5] == Embedding.Status.COVERED
                    and r[6] is not None
                    and (r[2], r[3], r[4])
                    == (self.where.model, self.where.text_rule, self.where.extractor_version)
                ]
                if ours:
                    matrix = np.stack([core.unpack(bytes(r[6] or b"")) for r in ours])
                    if self.index is None:
                        self.index = ann.new_index(matrix.shape[1])
                    before = len(self.index)
                    ann.add(self.index, [r[1] for r in ours], matrix)
                    added += len(self.index) - before
                    self.fetched_at.update({r[1]: r[7] for r in ours})
                if len(rows) < READ_CHUNK:
                    return added

    def nearest(
        self, vector: npt.NDArray[np.float32], count: int, *, around: datetime | None = None
    ) -> list[ann.Neighbour]:
        """Up to `count` nearest documents within the lookback window of `around`."""
        with self.lock:
            if self.index is None:
                return []
            days = settings.CANDIDATE_LOOKBACK_DAYS
            # The window filters after the search: ask for more so that `count` remain.
            ask = count * 4 if days and around is not None else count
            found = ann.search(self.index, vector, ask)
            if days and around is not None:
                window = timedelta(days=days)
                found = [
                    n
                    for n in found
                    if abs(self.fetched_at.get(n.document_id, around) - around) <= window
                ]
            return found[:count]

    def __len__(self) -> int:
        return 0 if self.index is None else len(self.index)


_indexes: dict[Space, ProcessIndex] = {}
_indexes_lock = threading.Lock()


def process_index(where: Space) -> ProcessIndex:
    """This process's index of the space, caught up with every committed row."""
    with _indexes_lock:
        found = _indexes.get(where)
        if found is None:
            found = _indexes[where] = ProcessIndex(where)
    found.catch_up()
    return found


def process_indexes_forget() -> None:
    """Drop this process's indexes (tests; a process starting over)."""
    with _indexes_lock:
        _indexes.clear()


# --- the check API's semantic part ------------------------------------------------------


@dataclass(frozen=True)
class SemanticMatch:
    document_id: int
    url: str
    cosine: float


@dataclass(frozen=True)
class SemanticCheck:
    """The semantic channel's answer to a check, apart from the verdict."""

    status: str  # on | off | not_covered | empty | error
    reason: str  # why there are no semantic matches to look for; empty when on
    model: str
    threshold: float | None
    matches: list[SemanticMatch]


def check_nearest(*, text: str, language: str, doc_type: str, exclude: set[int]) -> SemanticCheck:
    """Embed a checked text and list the stored documents at or above the doc type's
    cosine threshold, nearest first. Reads only (this process's index catches up)."""
    state = embedder.channel_state()
    if not state.on:
        return SemanticCheck("off", state.reason, state.model, None, [])
    where = Space(embedder.model_key())
    cut = threshold(doc_type)
    language = core.primary_language(language)
    if core.coverage(language, settings.EMBEDDING_LANGUAGES) == core.NOT_COVERED:
        reason = f"language {language!r} is not covered by the model"
        return SemanticCheck("not_covered", reason, where.model, cut, [])
    if not text.strip():
        return SemanticCheck("empty", "no text to embed", where.model, cut, [])
    try:
        packed = embedder.embed_texts([text])[0]
    except Exception as exc:  # the model's failure is the answer's, not a server error
        return SemanticCheck("error", f"{type(exc).__name__}: {exc}"[:500], where.model, cut, [])
    found = process_index(where).nearest(
        core.unpack(packed), settings.SEMANTIC_NEIGHBOURS + len(exclude)
    )
    ids = [n.document_id for n in found if n.document_id not in exclude]
    stored = vectors_for(ids, where)
    scored = [(d, round(core.cosine(packed, stored[d]), 4)) for d in ids if d in stored]
    kept = sorted(((d, c) for d, c in scored if c >= cut), key=lambda x: (-x[1], x[0]))
    kept = kept[: settings.SEMANTIC_NEIGHBOURS]
    urls = dict(Document.objects.filter(pk__in=[d for d, _ in kept]).values_list("pk", "url"))
    return SemanticCheck(
        "on", "", where.model, cut, [SemanticMatch(d, urls.get(d, ""), c) for d, c in kept]
    )
