"""The passage channel: shared winnowed passages, one text mostly inside the other
(ingest/core/passages.py for the passages, ingest/passages.py for their index)."""

import math
from collections.abc import Sequence

from django.conf import settings

from ingest import index, passages, sites
from ingest.channels.base import Channel, Doc, PairScores, Search
from ingest.core import channels as bits
from ingest.core import passages as core
from ingest.core import shortcopy
from ingest.core.methods import method_get, passage_method_for
from ingest.core.scores import PASSAGE_CONTAINMENT
from ingest.models import CandidatePair, FingerprintMethod

# Where a passage nomination ranks among a document's hits: after every SimHash hit
# (their distances are at most 64).
HIT_RANK = 65


def passage_nominates(ov: core.Overlap) -> bool:
    """The channel's nomination rule: at least PASSAGE_SHARED_MIN passages shared, and
    one text holding at least PASSAGE_CONTAINMENT_MIN of the other's."""
    return core.nominates(
        ov,
        containment_min=settings.PASSAGE_CONTAINMENT_MIN,
        shared_min=settings.PASSAGE_SHARED_MIN,
    )


def short_rule() -> shortcopy.ShortRule:
    """The short-copy rule of the settings (``PASSAGE_SHORT_*``)."""
    return shortcopy.ShortRule(
        passages_max=settings.PASSAGE_SHORT_MAX,
        shingle_min=settings.PASSAGE_SHORT_SHINGLES_MIN,
        shared_min=settings.PASSAGE_SHARED_MIN,
        containment_min=settings.PASSAGE_SHORT_CONTAINMENT_MIN,
        chars_min=settings.PASSAGE_SHORT_CHARS_MIN,
    )


def short_copy(ov: core.Overlap, shingles: float, chars: bool = False) -> bool:
    """The channel's second rule (ingest/core/shortcopy.py): a short text copied with
    light edits beside other text; off with the channel. ``chars``: ``shingles`` is the
    character reading's (a shorter text mostly in Chinese or Japanese)."""
    return bool(settings.PASSAGE_CHANNEL) and shortcopy.short_copy(
        ov, shingle_containment=shingles, rule=short_rule(), chars=chars
    )


def query_shared_min(text: str, found: Sequence[core.Passage]) -> int:
    """The fewest shared passages the index lookup of a text asks for: PASSAGE_SHARED_MIN,
    or for a short text (at most PASSAGE_SHORT_MAX passages) as few as the short-copy
    rule can nominate with it the shorter side: PASSAGE_SHORT_CONTAINMENT_MIN of its
    passages, two at least under the word reading (``shortcopy.shared_needed``: two for
    a text of up to eight passages), one at least for a text mostly in a script written
    without spaces (Chinese, Japanese: an excerpt of 50-150 characters shares one or two
    with its source). A stored text that short is found by any lookup with as few
    (``ingest.passages.hit_shared_min``)."""
    default = int(settings.PASSAGE_SHARED_MIN)
    n = len(core.hash_set(found))
    if n == 0 or n > settings.PASSAGE_SHORT_MAX:
        return default
    if shortcopy.reads_as_words(text):
        return shortcopy.shared_needed(n, default, settings.PASSAGE_SHORT_CONTAINMENT_MIN)
    return max(1, min(default, math.ceil(settings.PASSAGE_SHORT_CONTAINMENT_MIN * n)))


class Passages(Channel):
    name = "passages"
    bit = bits.PASSAGES
    score = PASSAGE_CONTAINMENT  # swept over a_in_b / b_in_a, the larger direction
    panel_template = "reviews/_passages.html"

    def on(self) -> bool:
        return bool(settings.PASSAGE_CHANNEL)

    def configured_threshold(self, doc_type: str) -> float:
        return float(settings.PASSAGE_CONTAINMENT_MIN)

    def nominates(self, s: PairScores) -> bool:
        return passage_nominates(s.overlap) or short_copy(s.overlap, s.shingles, s.shingles_chars)

    def evidence(self, s: PairScores) -> dict[str, object]:
        out = s.overlap.evidence()
        if short_copy(s.overlap, s.shingles, s.shingles_chars):
            short: dict[str, object] = {"shingles": round(s.shingles, 4)}
            if s.shingles_chars:
                short["reading"] = "characters"
            out["short_copy"] = short
        return out

    def search(self, method: FingerprintMethod, docs: Sequence[Doc]) -> Search:
        """The documents' passages (``known``: the pair builder reuses them), and the
        documents sharing passages with each, most shared first; their passage sets are
        stored (and counted per site) before the lookups, for the same reason as the
        SimHash index."""
        # The main texts without their site's boilerplate lines; templates are counted on
        # each site's registrable domain (ingest/sites.py).
        texts = sites.boilerplate_learn(
            documents=[(d.id, d.site_id) for d in docs],
            extractor_version=method_get(method.key).extractor_version,
        )
        counted_on = sites.template_sites(d.site_id for d in docs)
        name = passage_method_for(method.key)
        out = {d.id: core.passages(texts.get(d.id, ""), method=name) for d in docs}
        found = passages.entries_add_and_query(
            [
                passages.Entry(
                    d.id,
                    counted_on.get(d.site_id, d.site_id),
                    d.fetched_at,
                    out[d.id],
                    query_shared_min(texts.get(d.id, ""), out[d.id]),
                )
                for d in docs
                if out[d.id]
            ],
            lookback_days=settings.CANDIDATE_LOOKBACK_DAYS,
            method=passages.method_for(method.key),
        )
        cap = settings.CANDIDATE_HITS_MAX
        return Search(
            {
                d: [index.Hit(hit.document_id, 0, HIT_RANK) for hit in hits[:cap]]
                for d, hits in found.items()
            },
            known=out,
        )

    def panel_context(self, pair: CandidatePair) -> object:
        return None  # the desk builds this panel (reviews/pair/passage_panel.py)


CHANNEL = Passages()
