"""Stored embeddings, read: a document's vector under the configured model, the cosine of
two documents, and this process's approximate index of them (ingest/core/ann.py).

Design of the index (several workers): every worker process keeps its own in-memory
usearch index per (model, text rule, extractor version) and, before each query, catches
up from PostgreSQL: the rows committed since it last read, by id, with the ids still
missing under its watermark asked for again (ann.CatchUp). A worker stores its batch's
vectors and commits before it catches up and queries, so of two documents embedded at
the same time by two workers, whichever commits second finds the other (the same rule
as the SimHash index). A cold process first loads the space's snapshot
(EMBEDDING_INDEX_DIR, written by the periodic task `embeddings_snapshot` or `manage.py
embeddings --snapshot`) where there is a valid one, then catches up from its watermark;
without one it reads the whole table. A catch-up inside a task has a time budget
(EMBEDDING_CATCHUP_SECONDS): past it the index stays partial in the process, says so
(`complete`), and the next catch-up goes on from where this one stopped.
No process owns the index: workers can be added, restarted or killed freely, and
PostgreSQL stays the one store of vectors (a snapshot is only a head start).
"""

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db.models import Q

from ingest import embedder
from ingest.channels.thresholds import cosine_threshold
from ingest.core import ann
from ingest.core import embeddings as core
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import Document, Embedding

log = logging.getLogger(__name__)

READ_CHUNK = 5000


class IndexIncomplete(Exception):
    """This process's index has not read every committed row yet (its catch-up ran out
    of time): nothing may be nominated from it."""


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

    def parts(self) -> tuple[str, str, str]:
        return (self.model, self.text_rule, self.extractor_version)

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
            where.rows(), document_id__any_of=ids, status=Embedding.Status.COVERED
        ).values_list("document_id", "vector")
        if v is not None
    }


def pair_cosine(vectors: dict[int, bytes], a: int, b: int) -> float | None:
    va, vb = vectors.get(a), vectors.get(b)
    if va is None or vb is None or len(va) != len(vb):
        return None
    return round(core.cosine(va, vb), 4)


# --- this process's approximate index --------------------------------------------------


def _micros(at: datetime | None) -> int:
    return ann.NO_TIME if at is None else round(at.timestamp() * 1_000_000)


@dataclass
class ProcessIndex:
    where: Space
    index: Any = None  # a usearch index (ann.new_index), made on the first vector
    catchup: ann.CatchUp = field(default_factory=ann.CatchUp)
    fetched_at: dict[int, int] = field(default_factory=dict)  # document -> µs since epoch
    # True once a catch-up read up to the last committed row (False while a budgeted
    # catch-up has more to read).
    complete: bool = False
    snapshot_tried: bool = False
    saved_state: tuple[int, int, int] | None = None  # (watermark, vectors, gaps) on disk
    lock: threading.Lock = field(default_factory=threading.Lock)

    def catch_up(self, seconds: float | None = None) -> int:
        """Read the rows committed since the last catch-up; returns vectors added. With
        `seconds`, stops after the first chunk read past that time (`complete` False);
        the next catch-up goes on from there."""
        added = 0
        deadline = None if seconds is None else time.monotonic() + seconds
        with self.lock:
            while True:
                above, gaps = self.catchup.wanted()
                rows = list(
                    Embedding.objects.filter(Q(id__gt=above) | Q(id__any_of=gaps))
                    .order_by("id")
                    .values_list(
                        "id",
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
                    and (r[2], r[3], r[4]) == self.where.parts()
                ]
                if ours:
                    matrix = np.stack([core.unpack(bytes(r[6] or b"")) for r in ours])
                    if self.index is None:
                        self.index = ann.new_index(matrix.shape[1])
                    before = len(self.index)
                    ann.add(self.index, [r[1] for r in ours], matrix)
                    added += len(self.index) - before
                    self.fetched_at.update({r[1]: _micros(r[7]) for r in ours})
                if len(rows) < READ_CHUNK:
                    self.complete = True
                    return added
                if deadline is not None and time.monotonic() >= deadline:
                    self.complete = False
                    return added

    def nearest(
        self, vector: npt.NDArray[np.float32], count: int, *, around: datetime | None = None
    ) -> list[ann.Neighbour]:
        """Up to `count` nearest documents within the lookback window of `around`: the
        window is applied before the top `count` is cut (ann.nearest_within)."""
        with self.lock:
            if self.index is None:
                return []
            days = settings.CANDIDATE_LOOKBACK_DAYS
            if not days or around is None:
                return ann.search(self.index, vector, count)
            centre = _micros(around)
            window = days * 86_400 * 1_000_000
            fetched = self.fetched_at

            def inside(key: int) -> bool:
                at = fetched.get(key, ann.NO_TIME)
                return at == ann.NO_TIME or abs(at - centre) <= window

            def window_keys() -> list[int]:
                return [k for k in fetched if inside(k)]

            return ann.nearest_within(
                self.index,
                vector,
                count,
                inside,
                window_keys,
                cap=settings.SEMANTIC_LOOKBACK_MAX_FETCH,
            )

    def snapshot_path(self) -> Path:
        return Path(settings.EMBEDDING_INDEX_DIR) / ann.snapshot_name(self.where.parts())

    def snapshot_load(self) -> bool:
        """Start from the space's snapshot when this process has no index yet and a
        valid one is there (once per process); a bad file is logged and ignored."""
        with self.lock:
            if self.index is not None or self.snapshot_tried:
                return False
            self.snapshot_tried = True
            path = self.snapshot_path()
            if not path.exists():
                return False
            try:
                snap = ann.snapshot_read(path, self.where.parts())
            except ann.SnapshotInvalid as exc:
                log.warning("ignoring the index snapshot: %s; building from PostgreSQL", exc)
                return False
            mismatch = self._snapshot_mismatch(snap)
            if mismatch:
                log.warning("ignoring the index snapshot: %s; building from PostgreSQL", mismatch)
                return False
            self.index = snap.index
            self.catchup = ann.CatchUp.resumed(snap.watermark, snap.gap_ids, time.monotonic())
            self.fetched_at = dict(
                zip(snap.fetched_keys.tolist(), snap.fetched_us.tolist(), strict=True)
            )
            self.complete = False
            self.saved_state = (snap.watermark, len(snap.index), len(snap.gap_ids))
            return True

    def _snapshot_mismatch(self, snap: ann.Snapshot) -> str:
        """Why the snapshot does not belong to this database ("" when it does): the row
        at its watermark must be there and, when it is a vector of the space, in the
        index. A database restored from an older backup (or another database writing
        to the same directory) would otherwise have its rows under the watermark
        skipped."""
        if snap.watermark <= 0:
            return ""
        row = (
            Embedding.objects.filter(id=snap.watermark)
            .values_list("document_id", "model", "text_rule", "extractor_version", "status")
            .first()
        )
        if row is None:
            return f"its watermark {snap.watermark} is ahead of the embedding table"
        ours = (row[1], row[2], row[3]) == self.where.parts()
        if ours and row[4] == Embedding.Status.COVERED and not (snap.fetched_keys == row[0]).any():
            return f"row {snap.watermark} of this database is not in it (written elsewhere)"
        return ""

    def snapshot_save(self) -> int:
        """Write this process's index as the space's snapshot; returns its size in
        bytes (0 when there is nothing to write)."""
        with self.lock:
            if self.index is None:
                return 0
            keys = np.fromiter(self.fetched_at.keys(), dtype=np.int64, count=len(self.fetched_at))
            times = np.fromiter(
                self.fetched_at.values(), dtype=np.int64, count=len(self.fetched_at)
            )
            above, gaps = self.catchup.wanted()
            state = (above, len(self.index), len(gaps))
            path = self.snapshot_path()
            if state == self.saved_state and path.exists():
                return path.stat().st_size  # nothing new since it was written or read
            snapshot = ann.Snapshot(
                space=self.where.parts(),
                dims=int(self.index.ndim),
                index=self.index,
                watermark=above,
                gap_ids=gaps,
                fetched_keys=keys,
                fetched_us=times,
            )
            size = ann.snapshot_write(path, snapshot)
            self.saved_state = state
            return size

    def __len__(self) -> int:
        return 0 if self.index is None else len(self.index)


_indexes: dict[Space, ProcessIndex] = {}
_indexes_lock = threading.Lock()


def process_index(where: Space, *, seconds: float | None = None) -> ProcessIndex:
    """This process's index of the space, started from its snapshot when the process
    has none, then caught up: with every committed row, or for `seconds` at most
    (see `complete`)."""
    with _indexes_lock:
        found = _indexes.get(where)
        if found is None:
            found = _indexes[where] = ProcessIndex(where)
    found.snapshot_load()
    found.catch_up(seconds)
    return found


def process_indexes_forget() -> None:
    """Drop this process's indexes (tests; a process starting over)."""
    with _indexes_lock:
        _indexes.clear()


@dataclass(frozen=True)
class SnapshotResult:
    vectors: int
    complete: bool
    path: str
    bytes: int


def index_snapshot(*, seconds: float | None = None) -> SnapshotResult | None:
    """Bring this process's index of the configured space up to date (from its snapshot,
    then PostgreSQL; for `seconds` at most) and write it as the space's snapshot. A
    partial index is written too: the next run goes on from its watermark. None when
    no model is configured."""
    where = space()
    if where is None:
        return None
    index = process_index(where, seconds=seconds)
    size = index.snapshot_save()
    return SnapshotResult(len(index), index.complete, str(index.snapshot_path()), size)


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
    return check_search(text=text, language=language, doc_type=doc_type, exclude=exclude)[0]


def check_search(
    *, text: str, language: str, doc_type: str, exclude: set[int]
) -> tuple[SemanticCheck, bytes | None, Space | None]:
    """check_nearest's answer, with the checked text's vector and its space (None when
    the text was not embedded), so that any stored document's cosine can be read."""
    state = embedder.channel_state()
    if not state.on:
        return SemanticCheck("off", state.reason, state.model, None, []), None, None
    where = Space(embedder.model_key())
    cut = cosine_threshold(doc_type)
    language = core.primary_language(language)
    if core.coverage(language, settings.EMBEDDING_LANGUAGES) == core.NOT_COVERED:
        reason = f"language {language!r} is not covered by the model"
        return SemanticCheck("not_covered", reason, where.model, cut, []), None, None
    if not text.strip():
        return SemanticCheck("empty", "no text to embed", where.model, cut, []), None, None
    try:
        packed = embedder.embed_documents([text])[0]
    except Exception as exc:  # the model's failure is the answer's, not a server error
        message = f"{type(exc).__name__}: {exc}"[:500]
        return SemanticCheck("error", message, where.model, cut, []), None, None
    found = process_index(where).nearest(
        core.unpack(packed), settings.SEMANTIC_NEIGHBOURS + len(exclude)
    )
    ids = [n.document_id for n in found if n.document_id not in exclude]
    stored = vectors_for(ids, where)
    scored = [(d, round(core.cosine(packed, stored[d]), 4)) for d in ids if d in stored]
    kept = sorted(((d, c) for d, c in scored if c >= cut), key=lambda x: (-x[1], x[0]))
    kept = kept[: settings.SEMANTIC_NEIGHBOURS]
    urls = dict(Document.objects.filter(pk__any_of=[d for d, _ in kept]).values_list("pk", "url"))
    answer = SemanticCheck(
        "on", "", where.model, cut, [SemanticMatch(d, urls.get(d, ""), c) for d, c in kept]
    )
    return answer, packed, where
