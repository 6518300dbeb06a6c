"""The semantic channel: nearest neighbours of main-text embeddings, where EMBEDDING_MODEL
is set. Its probe runs on the embedding workers once a batch's vectors are stored
(ingest/semantic.py ``nominate``, through the same pair builder), and a pair whose
vectors come later gets its cosine then (``candidates.pairs_cosine_update``); here is
its rule, its evidence and its part of a check."""

from collections.abc import Sequence

from ingest import vectors
from ingest.channels.base import Channel, CheckProbe, CheckQuery, PairScores
from ingest.channels.thresholds import cosine_threshold
from ingest.core import channels as bits
from ingest.core import embeddings as core
from ingest.core.scores import COSINE

# Where semantic nominations rank among a document's hits: after the passage ones, in
# the order of their cosine.
HIT_RANK = 66


class Semantic(Channel):
    name = "semantic"
    bit = bits.SEMANTIC
    score = COSINE
    pair_field = "cosine"
    panel_template = "reviews/_semantic.html"
    check_probes = True

    def configured_threshold(self, doc_type: str) -> float:
        return cosine_threshold(doc_type)

    def nominates(self, s: PairScores) -> bool:
        return s.cosine is not None and s.cosine >= s.cosine_threshold

    def evidence(self, s: PairScores) -> dict[str, object] | None:
        return {"cosine": s.cosine} if s.cosine is not None else None

    def check_probe(self, q: CheckQuery) -> CheckProbe:
        """The checked text embedded: its nearest stored documents at or above the doc
        type's threshold, and any stored document's cosine with it."""
        answer, packed, where = vectors.check_search(
            text=q.text, language=q.language, doc_type=q.doc_type, exclude=q.exclude
        )

        def scores(ids: Sequence[int]) -> dict[int, float]:
            if packed is None or where is None:
                return {}
            stored = vectors.vectors_for(list(ids), where)
            return {
                d: round(core.cosine(packed, v), 4)
                for d, v in stored.items()
                if len(v) == len(packed)
            }

        return CheckProbe([m.document_id for m in answer.matches], scores, status=answer)

    def panel_context(self, pair: object) -> object:
        return None  # the desk builds this panel (reviews/semantic.py)


CHANNEL = Semantic()
