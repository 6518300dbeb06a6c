"""The SimHash channel: main-text SimHash within the doc type's threshold, found through
the band index (ingest/index.py; every pair within k bits shares a band, then the exact
Hamming filter)."""

from collections.abc import Sequence

from django.conf import settings

from ingest import index
from ingest.channels.base import Channel, Doc, PairScores, Search
from ingest.channels.thresholds import query_k, threshold_for
from ingest.core import channels as bits
from ingest.core.scores import SIMHASH_DISTANCE
from ingest.models import FingerprintMethod


class SimHash(Channel):
    name = "simhash"
    bit = bits.SIMHASH
    score = SIMHASH_DISTANCE
    pair_field = "distance"

    def configured_threshold(self, doc_type: str) -> float:
        return float(threshold_for(doc_type))

    def nominates(self, s: PairScores) -> bool:
        return s.distance <= s.threshold

    def evidence(self, s: PairScores) -> dict[str, object]:
        return {"distance": s.distance, "band": s.band}

    def search(self, method: FingerprintMethod, docs: Sequence[Doc]) -> Search:
        # Index first and commit, then query: of two documents fingerprinted at the same
        # time by two workers, the later query always sees the other.
        index.entries_add([(method.pk, d.id, d.value, d.fetched_at) for d in docs])
        k = query_k()
        return Search(
            {
                doc.id: index.query(
                    method_id=method.pk,
                    value=doc.value,
                    k=k,
                    exclude_document=doc.id,
                    around=doc.fetched_at,
                    lookback_days=settings.CANDIDATE_LOOKBACK_DAYS,
                )
                for doc in docs
            }
        )


CHANNEL = SimHash()
