"""The semantic channel as the desk shows and weighs it: a doc type's cosine threshold,
the pair view's semantic panel (the cosine in plain words, why a side has no vector,
the sentences closest in meaning) and the embedding status of the pair's documents.

Reads only. The closest-sentences view embeds the first SENTENCES_MAX sentences of each
main text with the configured model (only when the channel is on and the pair reads as
the same meaning in different words: no other channel nominated it), and caches the
result per model and texts. Crawled text stays plain
strings: the template escapes it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.core.cache import cache
from django.utils.translation import gettext

from ingest import embedder
from ingest.channels import thresholds
from ingest.core import channels
from ingest.core.embeddings import TEXT_RULE
from ingest.models import CandidatePair
from ingest.selectors import EmbeddingStatus, embedding_statuses
from reviews.core.align import sentences
from reviews.core.meaning import closest

# Sentences of each side embedded for the closest-sentences view: bounds the model's
# work per pair view (two calls of up to this many short texts, then cached).
SENTENCES_MAX = 40
SENTENCE_CHARS = 600  # a "sentence" longer than this (a list without stops) is cut
CACHE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class SentenceMatch:
    a_number: int  # 1-based
    a_text: str
    b_number: int
    b_text: str
    cosine: float


@dataclass
class SemanticView:
    cosine: float | None
    threshold: float
    channels: int  # the pair's channel bits
    channel_on: bool
    channel_reason: str  # why the channel is off
    a: EmbeddingStatus
    b: EmbeddingStatus
    sentences: list[SentenceMatch] = field(default_factory=list)
    sentences_note: str = ""  # why there is no sentence view, or that it was cut

    @property
    def nominated(self) -> bool:
        return bool(self.channels & channels.SEMANTIC)

    @property
    def semantic_only(self) -> bool:
        return channels.semantic_only(self.channels)

    @property
    def same_meaning(self) -> bool:
        return self.nominated or (self.cosine is not None and self.cosine >= self.threshold)

    @property
    def other_channels(self) -> list[str]:
        return channels.names(self.channels & ~channels.SEMANTIC)

    @property
    def summary(self) -> str:
        """The cosine in plain words."""
        if self.cosine is None:
            return gettext("No cosine: %(why)s.") % {"why": self.missing_reason}
        if self.same_meaning:
            if self.other_channels:
                text = gettext(
                    "same meaning (cosine %(cosine)s); the words are shared too: "
                    "also nominated by %(channels)s"
                )
                return text % {
                    "cosine": f"{self.cosine:.2f}",
                    "channels": ", ".join(self.other_channels),
                }
            text = gettext("same meaning, different words (cosine %(cosine)s)")
            return text % {"cosine": f"{self.cosine:.2f}"}
        # Three decimals: 0.7951 must not read as the threshold 0.8 itself.
        text = gettext(
            "cosine %(cosine)s, under the semantic threshold %(threshold)s: "
            "the embeddings do not say these texts mean the same"
        )
        return text % {"cosine": f"{self.cosine:.3f}", "threshold": f"{self.threshold:g}"}

    @property
    def missing_reason(self) -> str:
        """Why the pair has no cosine: each side without a vector, and why."""
        sides = [(name, side) for name, side in (("A", self.a), ("B", self.b))]
        missing = [f"{name}: {side.words}" for name, side in sides if not side.embedded]
        return "; ".join(missing) or gettext(
            "both sides are embedded; the cosine is not computed yet"
        )


def _cut(sentence: str) -> str:
    return sentence if len(sentence) <= SENTENCE_CHARS else sentence[:SENTENCE_CHARS] + " …"


def closest_sentences(text_a: str, text_b: str, *, model: str) -> tuple[list[SentenceMatch], bool]:
    """For each of A's first SENTENCES_MAX sentences, B's closest one in meaning among
    its first SENTENCES_MAX; cached per model and texts. The flag says a side was cut."""
    all_a, all_b = sentences(text_a), sentences(text_b)
    a, b = [_cut(s) for s in all_a[:SENTENCES_MAX]], [_cut(s) for s in all_b[:SENTENCES_MAX]]
    cut = len(all_a) > SENTENCES_MAX or len(all_b) > SENTENCES_MAX
    if not a or not b:
        return [], cut
    digest = hashlib.sha256(
        "\x00".join([model, TEXT_RULE, str(SENTENCES_MAX), *a, "\x01", *b]).encode()
    ).hexdigest()
    key = f"semantic-sentences:{digest}"
    found = cache.get(key)
    if found is None:
        vectors = embedder.embed_texts([*a, *b])
        found = [(c.a, c.b, c.cosine) for c in closest(vectors[: len(a)], vectors[len(a) :])]
        cache.set(key, found, CACHE_SECONDS)
    return [SentenceMatch(i + 1, a[i], j + 1, b[j], cos) for i, j, cos in found], cut


def pair_semantic(*, pair: CandidatePair, text_a: str, text_b: str) -> SemanticView:
    """The semantic panel of a pair: its cosine against the threshold, each side's
    embedding status, and (channel on, same meaning) the closest sentences."""
    statuses = embedding_statuses(document_ids=[pair.a_id, pair.b_id])
    state = embedder.channel_state()
    view = SemanticView(
        cosine=pair.cosine,
        threshold=thresholds.cosine_pair_threshold(pair.a.doc_type, pair.b.doc_type),
        channels=pair.channels,
        channel_on=state.on,
        channel_reason=state.reason,
        a=statuses[pair.a_id],
        b=statuses[pair.b_id],
    )
    if not view.same_meaning:
        return view
    if view.other_channels:
        # The words are shared: the sentence diffs show the pair, and the model's work
        # (about a CPU second per pair) is kept for the pairs only the meaning joins.
        view.sentences_note = (
            "The words are shared too: the aligned sentences tab shows them side by side."
        )
        return view
    if not state.on:
        view.sentences_note = gettext(
            "The sentences closest in meaning need the semantic channel on (%(why)s)."
        ) % {"why": state.reason}
        return view
    try:
        view.sentences, cut = closest_sentences(text_a, text_b, model=state.model)
    except (embedder.ChannelOff, OSError, RuntimeError, ValueError) as e:
        view.sentences_note = gettext(
            "The sentences closest in meaning could not be computed: %(error)s"
        ) % {"error": e}
        return view
    if cut:
        view.sentences_note = gettext("Long texts: the first %(n)s sentences of each side.") % {
            "n": SENTENCES_MAX
        }
    return view
