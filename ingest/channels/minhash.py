"""The MinHash-LSH channel: the Jaccard similarity of two main texts' token shingles,
found through the LSH bands of their MinHash signatures (ingest/core/minhash.py), the
channel text-dedup, datatrove and NeMo Curator use. Off by default (MINHASH_CHANNEL).

Its index is ``ingest.MinHashSet``: one row per document and fingerprint method with the
signature and its band keys, the keys under a GIN index on PostgreSQL (a scan on
SQLite). A lookup returns the documents sharing a band whose signature estimate is
within ``MARGIN`` of the threshold (the estimate's standard error is 0.04 at 0.7: a pair
at the threshold is dropped there with probability about 1e-4); the pair builder then
computes the exact Jaccard similarity of the two shingle sets, the channel's score, and
nominates at MINHASH_THRESHOLD (as NeMo Curator verifies its LSH buckets). Recall
against brute-force Jaccard: ``recall_check`` (tests/ingest/test_minhash_channel.py,
bench/minhash_bench.py)."""

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection

from ingest import index, partitions
from ingest.channels.base import (
    Channel,
    CheckProbe,
    CheckQuery,
    Doc,
    PairScores,
    RecallCheck,
    Scorer,
    Search,
)
from ingest.core import channels as bits
from ingest.core import minhash as core
from ingest.core.methods import method_get
from ingest.core.scores import HIGHER, Score
from ingest.models import CandidatePair, Extraction, FingerprintMethod, MinHashSet

# The score calibration sweeps (kept in the pair's evidence, not in a column).
JACCARD = Score(
    name="minhash_jaccard",
    label="Jaccard similarity, token 5-shingles of the main text (MinHash channel, 0–1)",
    closer=HIGHER,
    lo=0,
    hi=1,
    bin_width=0.05,
)
# Where its nominations rank among a document's hits: with the passage ones.
HIT_RANK = 65
# The check's nominees at most (as the check API's other channels).
CHECK_MAX = 10
# How far under the threshold a signature estimate may be and still be verified.
MARGIN = 0.15
# The least recall of the stored index against brute force that the recall check accepts:
# LSH is probabilistic (a pair at the threshold shares no band with probability 2e-4 and
# its estimate falls under the margin with about 1e-4).
RECALL_MIN = 0.99

_PG_QUERY = """
SELECT document_id, signature FROM ingest_minhashset
WHERE method = %s AND bands && %s::bigint[] AND NOT (document_id = ANY(%s))
"""
_PG_WINDOW = " AND fetched_at BETWEEN %s AND %s"


@dataclass(frozen=True)
class Found:
    document_id: int
    jaccard: float  # the signatures' estimate


def _texts(method: FingerprintMethod, ids: Sequence[int]) -> dict[int, str]:
    return dict(
        Extraction.objects.filter(
            document_id__any_of=list(ids),
            extractor_version=method_get(method.key).extractor_version,
        ).values_list("document_id", "main_text")
    )


def signatures_of(text_by_doc: dict[int, str]) -> dict[int, core.Signature]:
    """Each text's signature, once per distinct text (exact copies share theirs)."""
    by_text: dict[str, core.Signature | None] = {}
    out = {}
    for d, text in text_by_doc.items():
        if text not in by_text:
            by_text[text] = core.signature(core.shingles(text))
        sig = by_text[text]
        if sig is not None:
            out[d] = sig
    return out


def _jaccard_of(texts: dict[int, str]) -> Scorer:
    """Exact shingle Jaccard of two of these documents, each text shingled once."""
    by_text: dict[str, set[str]] = {}

    def shingled(d: int) -> set[str]:
        text = texts.get(d, "")
        if text not in by_text:
            by_text[text] = core.shingles(text)
        return by_text[text]

    def score(a: int, b: int) -> float | None:
        sa, sb = shingled(a), shingled(b)
        return round(core.jaccard(sa, sb), 4) if sa and sb else None

    return score


def stored(method_id: int, ids: Sequence[int]) -> dict[int, core.Signature]:
    return {
        d: core.Signature.from_bytes(bytes(sig))
        for d, sig in MinHashSet.objects.filter(
            method=method_id, document_id__any_of=list(ids)
        ).values_list("document_id", "signature")
    }


def entries_add(method_id: int, rows: Sequence[tuple[int, datetime, core.Signature]]) -> None:
    """Store the documents' signatures and bands (a row already there stays)."""
    partitions.months_ensure("ingest_minhashset", (at for _, at, _ in rows))
    MinHashSet.objects.bulk_create(
        [
            MinHashSet(
                method=method_id,
                document_id=d,
                fetched_at=at,
                bands=sig.bands(),
                signature=sig.to_bytes(),
            )
            for d, at, sig in rows
        ],
        ignore_conflicts=True,
    )


def query(
    *,
    method_id: int,
    sig: core.Signature,
    exclude: Sequence[int] = (),
    around: datetime | None = None,
    lookback_days: int = 0,
    threshold: float | None = None,
) -> list[Found]:
    """The stored documents sharing a band with this signature whose estimate reaches the
    threshold (by default MINHASH_THRESHOLD - MARGIN; 0: every band collision), the
    highest estimate first."""
    cut = settings.MINHASH_THRESHOLD - MARGIN if threshold is None else threshold
    bands = sig.bands()
    window = around is not None and lookback_days > 0
    if connection.vendor == "postgresql":
        sql = _PG_QUERY
        params: list[Any] = [method_id, bands, list(exclude)]
        if window:
            assert around is not None
            span = timedelta(days=lookback_days)
            sql += _PG_WINDOW
            params += [around - span, around + span]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = [(d, core.Signature.from_bytes(bytes(s))) for d, s in cursor.fetchall()]
    else:
        wanted, skip = set(bands), set(exclude)
        qs = MinHashSet.objects.filter(method=method_id)
        if window:
            assert around is not None
            span = timedelta(days=lookback_days)
            qs = qs.filter(fetched_at__range=(around - span, around + span))
        rows = [
            (d, core.Signature.from_bytes(bytes(s)))
            for d, keys, s in qs.values_list("document_id", "bands", "signature")
            if d not in skip and wanted.intersection(keys)
        ]
    found = [Found(d, core.estimate(sig, other)) for d, other in rows]
    return sorted((f for f in found if f.jaccard >= cut), key=lambda f: (-f.jaccard, f.document_id))


class MinHashChannel(Channel):
    name = "minhash"
    bit = bits.MINHASH
    score = JACCARD
    pair_field = "evidence_kept__minhash__jaccard"
    panel_template = "reviews/_minhash.html"
    check_probes = True
    panel_when_off = False  # unless the pair has its evidence

    def on(self) -> bool:
        return bool(settings.MINHASH_CHANNEL)

    def configured_threshold(self, doc_type: str) -> float:
        return float(settings.MINHASH_THRESHOLD)

    def nominates(self, s: PairScores) -> bool:
        jaccard = s.more.get(self.name)
        return jaccard is not None and jaccard >= settings.MINHASH_THRESHOLD

    def evidence(self, s: PairScores) -> dict[str, object] | None:
        jaccard = s.more.get(self.name)
        return None if jaccard is None else {"jaccard": jaccard}

    def search(self, method: FingerprintMethod, docs: Sequence[Doc]) -> Search:
        """Store the documents' signatures, then find the stored documents sharing a
        band whose estimate is near the threshold (``known``: the searched texts)."""
        texts = _texts(method, [d.id for d in docs])
        sigs = signatures_of(texts)
        entries_add(method.pk, [(d.id, d.fetched_at, sigs[d.id]) for d in docs if d.id in sigs])
        cap = settings.CANDIDATE_HITS_MAX
        hits = {
            d.id: [
                index.Hit(f.document_id, 0, HIT_RANK)
                for f in query(
                    method_id=method.pk,
                    sig=sigs[d.id],
                    exclude=[d.id],
                    around=d.fetched_at,
                    lookback_days=settings.CANDIDATE_LOOKBACK_DAYS,
                )[:cap]
            ]
            for d in docs
            if d.id in sigs
        }
        return Search(hits, known=texts)

    def scorer(self, method: FingerprintMethod, ids: set[int], known: object) -> Scorer:
        """The exact Jaccard similarity of the pair's shingle sets (None where a side has
        no shingle: fewer than SHINGLE tokens)."""
        texts: dict[int, str] = dict(known) if isinstance(known, dict) else {}
        texts.update(_texts(method, [d for d in ids if d not in texts]))
        return _jaccard_of(texts)

    def check_probe(self, q: CheckQuery) -> CheckProbe:
        checked = core.shingles(q.text)
        sig = core.signature(checked)
        method = q.method
        if sig is None or method is None:
            return CheckProbe([], lambda ids: {})
        found = query(method_id=method.pk, sig=sig, exclude=sorted(q.exclude))

        def scores(ids: Sequence[int]) -> dict[int, float]:
            out = {}
            for d, text in _texts(method, ids).items():
                other = core.shingles(text)
                if other:
                    out[d] = round(core.jaccard(checked, other), 4)
            return out

        return CheckProbe([f.document_id for f in found][:CHECK_MAX], scores)

    def recall_check(
        self, method: FingerprintMethod, *, sample: int = 0, seed: int = 1
    ) -> RecallCheck | None:
        ids = sorted(
            MinHashSet.objects.filter(method=method.pk).values_list("document_id", flat=True)
        )
        if not ids:
            state = "on" if self.on() else "off"
            return RecallCheck(
                [f"minhash: the MinHash index is empty (MINHASH_CHANNEL {state})"], 1.0, 0.0
            )
        queries = (
            ids if not sample or sample >= len(ids) else random.Random(seed).sample(ids, sample)
        )
        found = index_recall(method, queries)
        cut = settings.MINHASH_THRESHOLD
        lines = [
            f"minhash: {len(ids)} indexed, {len(queries)} queries, Jaccard >= {cut}",
            f"pairs found by brute force:        {found.pairs}",
            f"of them sharing a band (index):    {found.found_by_bands}",
            f"of them returned by a lookup:      {found.found}  "
            f"({found.candidates} returned in all)",
            f"minhash recall: {found.recall:.3f}",
        ]
        return RecallCheck(lines, found.recall, RECALL_MIN)

    def panel_context(self, pair: CandidatePair) -> object:
        entry = (pair.evidence or {}).get(self.name) or {}
        return {
            "on": self.on(),
            "jaccard": entry.get("jaccard"),
            "threshold": settings.MINHASH_THRESHOLD,
            "nominated": bool(pair.channels & self.bit),
        }


CHANNEL = MinHashChannel()


def recall_check(texts: dict[int, str], threshold: float | None = None) -> core.Recall:
    """The channel's recall against brute force on these texts (document id → main
    text), in memory: every pair whose exact shingle Jaccard similarity reaches the
    threshold, and how many of them share a band and pass the lookup's estimate."""
    cut = settings.MINHASH_THRESHOLD if threshold is None else threshold
    return core.recall({d: core.shingles(t) for d, t in texts.items()}, cut, MARGIN)


def index_recall(method: FingerprintMethod, queries: Sequence[int]) -> core.Recall:
    """The stored index (``query``) against brute force on the stored documents' texts:
    for each query document, every stored document whose exact shingle Jaccard similarity
    with it reaches MINHASH_THRESHOLD (the truth), the stored documents sharing a band
    with it, and those a lookup returns; a pair counts once."""
    ids = list(MinHashSet.objects.filter(method=method.pk).values_list("document_id", flat=True))
    texts = _texts(method, ids)
    by_text: dict[str, set[str]] = {}
    for text in texts.values():
        if text not in by_text:
            by_text[text] = core.shingles(text)
    shingled = {d: by_text[t] for d, t in texts.items()}
    sigs = stored(method.pk, list(queries))
    cut = settings.MINHASH_THRESHOLD
    truth: set[tuple[int, int]] = set()
    banded: set[tuple[int, int]] = set()
    returned: set[tuple[int, int]] = set()
    for q in queries:
        mine = shingled.get(q)
        if q not in sigs or not mine:
            continue
        truth |= {
            _pair(q, o)
            for o, theirs in shingled.items()
            if o != q and theirs and core.jaccard(mine, theirs) >= cut
        }
        found = query(method_id=method.pk, sig=sigs[q], exclude=[q], threshold=0.0)
        banded |= {_pair(q, f.document_id) for f in found}
        returned |= {_pair(q, f.document_id) for f in found if f.jaccard >= cut - MARGIN}
    return core.Recall(len(truth), len(truth & banded), len(truth & returned), len(returned))


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)
