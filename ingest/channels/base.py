"""What a candidate channel is (see ingest/channels/__init__.py)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ingest.core import passages as passages_core
from ingest.core.scores import Score
from ingest.index import Hit
from ingest.models import CandidatePair, FingerprintMethod


@dataclass(frozen=True)
class Doc:
    """A document being searched: its main-text fingerprint under the method."""

    id: int
    doc_type: str
    value: int
    text_sha256: str
    fetched_at: datetime
    site_id: int = 0


@dataclass
class PairScores:
    """Every channel's score of one pair: two stored documents, or a checked text and a
    stored document. Every score is computed whichever channel nominated the pair."""

    exact: bool  # same normalized main text
    distance: int  # SimHash distance of the main texts
    threshold: int  # SimHash threshold of the pair's doc types
    overlap: passages_core.Overlap
    band: int | None = None  # the band that nominated it (pairs of stored documents)
    cosine: float | None = None  # None while a side has no vector
    cosine_threshold: float = 1.0
    # Share of the shorter text's word 3-shingles in the other (guards.similarity's
    # containment): the passage channel's short-copy rule reads it. ``shingles_chars``:
    # the shorter text is mostly Chinese or Japanese, and ``shingles`` is the share of
    # its character shingles instead (ingest/core/shortcopy.py, the character reading).
    shingles: float = 0.0
    shingles_chars: bool = False
    # Scores of channels beyond these, by channel name (None: a side has none).
    more: dict[str, float | None] = field(default_factory=dict)
    # SimHash distance of the main texts without their site's boilerplate lines, when a
    # side lost some (ingest/sites.py); None: nothing was dropped.
    distance_read: int | None = None


@dataclass(frozen=True)
class Search:
    """A channel's answer to a search of documents: each one's hits (their ``distance``
    is the rank among the document's hits), and what the channel computed of the
    documents that the pair builder reuses."""

    hits: dict[int, list[Hit]]
    known: Any = None


@dataclass(frozen=True)
class CheckQuery:
    """A checked text, as every channel's check probe reads it."""

    method: FingerprintMethod | None  # None: nothing stored under the method yet
    text: str
    language: str
    doc_type: str
    exclude: set[int]  # the checked page itself, if stored


@dataclass(frozen=True)
class CheckProbe:
    """A channel's answer to a check: the stored documents it nominates (nearest
    first), and its scores of any stored documents (those it has a score for)."""

    nominees: list[int]
    scores: Callable[[Sequence[int]], dict[int, float]]
    status: Any = None  # what the channel reports of the check beside its matches


@dataclass(frozen=True)
class RecallCheck:
    """A channel's stored index against brute force on the stored documents
    (``manage.py candidates --recall-check``): what the command prints, the index's recall
    and the least recall the check accepts."""

    lines: list[str]
    recall: float
    minimum: float

    @property
    def ok(self) -> bool:
        return self.recall >= self.minimum


Scorer = Callable[[int, int], float | None]


class Channel:
    """The defaults: a channel that never probes, records no evidence and shows no panel."""

    name: str = ""
    bit: int = 0
    score: Score | None = None  # the score calibration sweeps
    pair_field: str | None = None  # where a pair keeps it (a field path of CandidatePair)
    panel_template: str | None = None  # the pair view's panel (reads its context only)
    check_probes: bool = False  # has a check probe of its own (check_probe)
    panel_when_off: bool = True  # the panel shows while the channel is off (saying so)

    def configured_threshold(self, doc_type: str) -> float | None:
        """The threshold on ``score`` the channel nominates at for this doc type."""
        return None

    def on(self) -> bool:
        """Whether the channel runs (its setting)."""
        return True

    def nominates(self, s: PairScores) -> bool:
        return False

    def evidence(self, s: PairScores) -> dict[str, object] | None:
        """What a pair records of this channel (None: nothing)."""
        return None

    def search(self, method: FingerprintMethod, docs: Sequence[Doc]) -> Search | None:
        """Index these documents and find their neighbours (None: the channel does not
        probe when documents are searched)."""
        return None

    def scorer(self, method: FingerprintMethod, ids: set[int], known: Any) -> Scorer | None:
        """The channel's score of pairs among these documents, for a channel whose score
        is not one of PairScores' own fields (it lands in PairScores.more)."""
        return None

    def check_probe(self, q: CheckQuery) -> CheckProbe | None:
        """The channel's part of a check, for a channel whose probe is not built into the
        check (exact, SimHash and passages read the checked text's fingerprint there)."""
        return None

    def recall_check(
        self, method: FingerprintMethod, *, sample: int = 0, seed: int = 1
    ) -> RecallCheck | None:
        """The channel's own index against brute force on what it stored under the
        method, for ``sample`` stored documents as queries (0: every one). None: the
        channel has no such check (the SimHash band index, the passage index and the
        semantic index are checked by the command itself)."""
        return None

    def panel_context(self, pair: CandidatePair) -> object:
        """What the pair view's panel reads: by default the pair's evidence entry."""
        return (pair.evidence or {}).get(self.name)
