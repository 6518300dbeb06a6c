"""Candidate services: fingerprints → candidate pairs → candidate groups.

Runs on the workers. The index only nominates; each pair carries its
distances, similarities and guards; pairs under the similarity floor are stored but
do not join groups. Groups follow a named rule and honour do-not-match constraints and
human representatives: a worker never overwrites them.
"""

import dataclasses
import logging
import time
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.dispatch import Signal
from django.utils import timezone

from ingest import index, passages, sites, vectors
from ingest.channels import registry
from ingest.channels.base import CheckProbe, CheckQuery, Doc, PairScores
from ingest.channels.passages import query_shared_min, short_copy
from ingest.channels.semantic import HIT_RANK as SEMANTIC_HIT_RANK
from ingest.channels.thresholds import (
    active_method_key,
    candidate_method_keys,
    cosine_pair_threshold,
    cosine_threshold,
    query_k,
    threshold_for,
)
from ingest.core import channels, grouping, provenance, shortcopy
from ingest.core import passages as passages_core
from ingest.core.bands import nominating_band
from ingest.core.extract import EXTRACTOR_VERSION, guess_language
from ingest.core.guards import Guards, Similarity, guards_check, similarity
from ingest.core.methods import (
    fingerprint_text,
    method_get,
    normalize_for,
    passage_method_for,
)
from ingest.core.simhash import hamming, to_hex, to_unsigned64
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    Document,
    DoNotMatch,
    Extraction,
    Fingerprint,
    FingerprintMethod,
    GroupMember,
    memberships_lock,
    rows_update,
)

log = logging.getLogger(__name__)

# How far a grouping update may spread from the documents that changed.
AREA_MAX = 5000


# A document being searched (ingest/channels/base.py).
_Doc = Doc


def candidates_find(
    *, document_ids: Sequence[int], method_keys: Sequence[str] | None = None
) -> dict[str, int]:
    """Index the documents' main-text fingerprints and pair them with every indexed
    document within the threshold. Idempotent: a pair exists once per method, a < b.
    Returns pairs created per method key (default methods: candidate_method_keys())."""
    created: dict[str, int] = {}
    for key in method_keys if method_keys is not None else candidate_method_keys():
        method = FingerprintMethod.objects.filter(key=key).first()
        if method is None:
            continue
        new_pairs = _candidates_find_for(method, document_ids)
        created[key] = len(new_pairs)
        # Vectors committed while these pairs were built: of the pair's commit and the
        # vectors' commit, whichever comes second sets the cosine (see semantic.py).
        pairs_cosine_update(method=method, document_ids=document_ids)
        groups_update(method=method, document_ids=document_ids, new_pairs=new_pairs)
    return created


def _candidates_find_for(
    method: FingerprintMethod, document_ids: Sequence[int]
) -> set[tuple[int, int]]:
    """Returns the pairs (a, b) it created."""
    docs = _docs_for(method, document_ids)
    if not docs:
        return set()
    # Every running channel's probe, in the registry's order: each indexes the documents
    # (and commits) before it queries. Later channels' nominations join the earlier ones,
    # ranked after them (their hits' rank), so that families of exact twins, links
    # already made and the per-document cap treat every channel alike.
    hits_by_doc: dict[int, list[index.Hit]] = {doc.id: [] for doc in docs}
    known: dict[str, Any] = {}
    for channel in registry.running():
        found = channel.search(method, docs)
        if found is None:
            continue
        known[channel.name] = found.known
        for doc in docs:
            seen = {h.document_id for h in hits_by_doc[doc.id]}
            hits_by_doc[doc.id] += [
                hit for hit in found.hits.get(doc.id, []) if hit.document_id not in seen
            ]
    return _pairs_store(method, _pairs_wanted(method, docs, hits_by_doc), known=known)


def _docs_for(method: FingerprintMethod, document_ids: Sequence[int]) -> list[_Doc]:
    """The documents with an indexable main-text fingerprint under the method."""
    rows = (
        Fingerprint.objects.filter(
            document_id__any_of=document_ids, method=method, simhash__isnull=False
        )
        .select_related("document")
        .only(
            "simhash",
            "text_sha256",
            "document__doc_type",
            "document__fetched_at",
            "document__site_id",
        )
    )
    return [
        _Doc(
            r.document_id,
            r.document.doc_type,
            to_unsigned64(r.simhash),  # type: ignore[arg-type]
            r.text_sha256,
            r.document.fetched_at,
            r.document.site_id,
        )
        for r in rows
    ]


def semantic_pairs_find(
    *, method: FingerprintMethod, neighbours: dict[int, list[int]]
) -> set[tuple[int, int]]:
    """Pairs of documents with the neighbours the semantic channel found for them
    (nearest first), under the same rules as the other channels' hits: exact twins
    linked as a star, one pair per family of twins, links already made and do-not-match
    records kept, at most CANDIDATES_PER_DOCUMENT_MAX families; then the one pair
    builder. Returns the pairs (a, b) it created."""
    docs = _docs_for(method, list(neighbours))
    if not docs:
        return set()
    # A neighbour without an indexable main text (a login wall or a menu-only shell that
    # was embedded) is never a candidate, whichever side found it.
    others = {o for d in docs for o in neighbours.get(d.id, [])}
    indexable = set(
        Fingerprint.objects.filter(
            document_id__any_of=list(others), method=method, simhash__isnull=False
        ).values_list("document_id", flat=True)
    )
    hits_by_doc = {
        d.id: [
            index.Hit(other, 0, SEMANTIC_HIT_RANK + rank)
            for rank, other in enumerate(neighbours.get(d.id, []))
            if other in indexable
        ]
        for d in docs
    }
    return _pairs_store(method, _pairs_wanted(method, docs, hits_by_doc))


def _pairs_store(
    method: FingerprintMethod,
    wanted: "_Wanted",
    known: dict[str, Any] | None = None,
) -> set[tuple[int, int]]:
    """Build the wanted pairs that are neither stored yet nor under a do-not-match record
    (every channel's hits end here), then store those the per-document cap keeps of the
    ones a channel nominates (``_pairs_capped``). Returns the pairs created."""
    candidates = wanted.candidates()
    if not candidates:
        return set()
    ids = {d for pair in candidates for d in pair}
    existing = set(
        CandidatePair.objects.filter(method=method, a_id__any_of=ids, b_id__any_of=ids).values_list(
            "a_id", "b_id"
        )
    )
    banned = _do_not_match_among(ids)
    todo = [p for p in candidates if p not in existing and p not in banned]
    built = {(p.a_id, p.b_id): p for p in _pairs_build(method, todo, known=known)}
    kept = _pairs_capped(wanted, nominated=built.keys() | (existing & candidates))
    pairs = [built[p] for p in sorted(kept) if p in built]
    CandidatePair.objects.bulk_create(pairs, ignore_conflicts=True)
    return {(p.a_id, p.b_id) for p in pairs}


@dataclass
class _Family:
    """A family of exact twins near a searched document, and the pair that would link
    the two (None: a stored pair links them already, or every way to link them is under
    a do-not-match record)."""

    documents: frozenset[int]
    pair: tuple[int, int] | None


@dataclass
class _Searched:
    """A searched document's family and the other families near it, nearest first."""

    document_id: int
    members: frozenset[int]
    near: list[_Family]


@dataclass
class _Wanted:
    """What the searches found: the links that keep families of exact twins connected,
    and per searched document (in id order) the families near it; the pairs already
    stored among all these documents."""

    stored: list[tuple[int, int]]
    twin_links: list[tuple[int, int]]
    searched: list[_Searched]

    def candidates(self) -> set[tuple[int, int]]:
        """Every pair worth building (the cap chooses among those a channel nominates)."""
        near = {f.pair for s in self.searched for f in s.near if f.pair is not None}
        return set(self.twin_links) | near


def _pairs_wanted(
    method: FingerprintMethod, docs: list[_Doc], hits_by_doc: dict[int, list[index.Hit]]
) -> _Wanted:
    """The pairs to build for these documents' hits, the same in number, in the family
    pairs they make and in the groups they give whatever the order the documents are
    searched in, and however often (a redelivered task searches again), under a cap
    that the documents' families never reach (``_pairs_capped`` for one they do).

    Exact twins (one normalized text, hence one SimHash) form a family. A login wall
    served at a thousand URLs is one text: pairing every copy with every other is
    quadratic, so a family of n gets n - 1 links that keep it connected, each to its
    earliest member at the time (a star, not a clique). Two families within the
    threshold get one pair, between their earliest members, and only when no pair links
    them yet: a twin searched after the pair exists (later, or again) adds nothing.
    Without this, a redelivered twin paired itself with every family indexed since its
    first search."""
    hit_ids = {h.document_id for hits in hits_by_doc.values() for h in hits}
    ids = hit_ids | {d.id for d in docs}
    if not hit_ids:
        return _Wanted([], [], [])
    shas = dict(
        Fingerprint.objects.filter(method=method, document_id__any_of=ids).values_list(
            "document_id", "text_sha256"
        )
    )
    stored = list(
        CandidatePair.objects.filter(method=method, a_id__any_of=ids, b_id__any_of=ids).values_list(
            "a_id", "b_id"
        )
    )
    banned = _do_not_match_among(ids)
    links: list[tuple[int, int]] = []
    searched: list[_Searched] = []
    # Under a lookback window the earliest twin may be out of the other family's
    # window: the searched document itself stands for its family then.
    windowed = bool(settings.CANDIDATE_LOOKBACK_DAYS)
    for doc in sorted(docs, key=lambda d: d.id):
        families: dict[str, list[index.Hit]] = defaultdict(list)
        for hit in hits_by_doc[doc.id]:
            families[shas.get(hit.document_id, f"#{hit.document_id}")].append(hit)
        twins = families.pop(doc.text_sha256, [])
        members = {doc.id} | {h.document_id for h in twins}
        if twins:
            links += _twin_links(members, [*stored, *links], banned)
        # A family a stored pair links already needs no pair built (it still counts
        # under the cap: _pairs_capped).
        linked = {b if a in members else a for a, b in stored if (a in members) != (b in members)}
        ranked = sorted(
            families.values(),
            key=lambda hs: (min(h.distance for h in hs), min(h.document_id for h in hs)),
        )
        near = []
        for hits in ranked:
            head = min(h.document_id for h in hits)
            ours = doc.id if windowed else min(members)
            pairs = [(min(a, head), max(a, head)) for a in dict.fromkeys((ours, doc.id))]
            documents = frozenset(h.document_id for h in hits)
            pair = None if documents & linked else next((p for p in pairs if p not in banned), None)
            near.append(_Family(documents, pair))
        searched.append(_Searched(doc.id, frozenset(members), near))
    return _Wanted(stored, links, searched)


def _pairs_capped(
    wanted: _Wanted, *, nominated: Collection[tuple[int, int]]
) -> set[tuple[int, int]]:
    """The nominated pairs to store. Each searched document gets its pairs to the
    CANDIDATES_PER_DOCUMENT_MAX nearest families a channel nominates a pair with, the
    families it is linked to already counted among them (a search repeated later adds
    none once the document has its share); past the cap, a family gets its pair only
    when no pair connects it to the document yet. So the cap changes which pairs a large
    group stores, never which documents the pairs connect (the groups), and a family
    whose pair no channel nominates takes no place under the cap."""
    cap = settings.CANDIDATES_PER_DOCUMENT_MAX
    connected = grouping.Components()
    for a, b in wanted.stored:
        connected.join(a, b)
    kept = [p for p in wanted.twin_links if p in nominated]
    for a, b in kept:
        connected.join(a, b)
    for s in wanted.searched:
        linked = {
            b if a in s.members else a
            for a, b in [*wanted.stored, *kept]
            if (a in s.members) != (b in s.members)
        }
        fresh = [f for f in s.near if not f.documents & linked]
        room = cap - (len(s.near) - len(fresh))
        bridges = 0
        for family in fresh:
            if family.pair is None or family.pair not in nominated:
                continue
            if room <= 0:
                if any(connected.same(d, s.document_id) for d in family.documents):
                    continue
                bridges += 1
            kept.append(family.pair)
            connected.join(*family.pair)
            room -= 1
        if len(s.near) > cap:
            log.info(
                "document %d: %d families near, pairs to the %d nearest and %d bridges",
                s.document_id,
                len(s.near),
                cap,
                bridges,
            )
    return set(kept)


def _twin_links(
    members: set[int], pairs: list[tuple[int, int]], banned: set[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Links that make a family of exact twins one connected piece: each part not yet
    connected to the earliest member is linked to it through the part's earliest member.
    n twins get n - 1 links in all, whatever the order they arrive in."""
    connected = grouping.Components()
    for a, b in pairs:
        if a in members and b in members:
            connected.join(a, b)
    first, *rest = sorted(members)
    links = []
    for m in rest:
        if not connected.same(m, first) and (first, m) not in banned:
            connected.join(m, first)
            links.append((first, m))
    return links


def _do_not_match_among(ids: Iterable[int]) -> set[tuple[int, int]]:
    ids = list(ids)
    # Only constraints in force: a restore revokes the rows a split wrote (kept on file).
    return set(
        DoNotMatch.objects.filter(
            a_id__any_of=ids, b_id__any_of=ids, revoked_at__isnull=True
        ).values_list("a_id", "b_id")
    )


def _below_floor(
    *,
    exact: bool,
    sim: Similarity,
    doc_type: str,
    passage_containment: float = 0.0,
    semantic: bool = False,
    short: bool = False,
) -> bool:
    """Under the doc type's similarity floor: not the same text, too dissimilar, and
    neither text contained in the other, by word shingles or by passages (a teaser
    or an excerpt stays above the floor, whichever channel nominated it). A rewritten
    copy shares few words by nature: a pair the semantic channel nominates is above it;
    so is a short copy beside another site's text (``short``: the short-copy rule)."""
    floor = settings.SIMILARITY_FLOORS.get(doc_type, 60.0)
    contained = max(sim.containment, passage_containment) >= settings.CONTAINMENT_FLOOR
    return (
        not exact and sim.token_set_ratio < floor and not contained and not semantic and not short
    )


_NONE: tuple[None, str, None] = (None, "", None)  # no fingerprint under the method


class _ShortReading:
    """What the short-copy rule reads of a pair (ingest/core/shortcopy.py), each text's
    part computed once however many pairs it is in: the word 3-shingle containment of
    the normalized texts (``guards.similarity``'s), or, when the shorter text is mostly
    in a script written without spaces (shortcopy.reads_as_words), the character
    shingle containment of the texts the passage channel reads."""

    def __init__(self) -> None:
        self.as_words: dict[str, bool] = {}
        self.chars: dict[str, frozenset[tuple[str, ...]]] = {}

    def of(
        self, sim: Similarity, text_a: str, text_b: str, read_a: str, read_b: str
    ) -> tuple[float, bool]:
        """(shingle containment, whether it is the character reading's)."""
        shorter = text_a if len(text_a) <= len(text_b) else text_b
        if shorter not in self.as_words:
            self.as_words[shorter] = shortcopy.reads_as_words(shorter)
        if self.as_words[shorter]:
            return sim.containment, False
        for text in (read_a, read_b):
            if text not in self.chars:
                self.chars[text] = shortcopy.char_shingles(text)
        return shortcopy.char_containment(self.chars[read_a], self.chars[read_b]), True


def _pairs_build(
    method: FingerprintMethod,
    todo: Iterable[tuple[int, int]],
    known: dict[str, Any] | None = None,
) -> list[CandidatePair]:
    """Every channel's score of each pair (``known``: what the channels' searches
    computed of the documents, by channel), the one evidence rule
    (ingest.channels.registry.evidence), the similarities and guards; a pair no channel
    nominates is not built."""
    todo = sorted(todo)
    if not todo:
        return []
    ids = {d for pair in todo for d in pair}
    doc_types = dict(Document.objects.filter(pk__any_of=ids).values_list("pk", "doc_type"))
    # document → (signed main SimHash or None, SHA-256 of the normalized main text,
    # signed full-page SimHash or None)
    prints: dict[int, tuple[int | None, str, int | None]] = {
        d: (value, sha, full)
        for d, value, sha, full in Fingerprint.objects.filter(
            method=method, document_id__any_of=ids
        ).values_list("document_id", "simhash", "text_sha256", "full_simhash")
    }
    texts: dict[int, Any] = {
        e["document_id"]: e
        for e in Extraction.objects.filter(
            document_id__any_of=ids, extractor_version=method_get(method.key).extractor_version
        ).values("document_id", "main_text", "title")
    }
    known = known or {}
    known_passages: dict[int, list[passages_core.Passage]] = known.get("passages") or {}
    # What the passage channel reads: the main text without the site's boilerplate lines
    # recorded for it (ingest/sites.py).
    dropped = sites.boilerplate_dropped(
        document_ids=ids, extractor_version=method_get(method.key).extractor_version
    )
    read = {
        d: sites.passage_text(texts.get(d, {}).get("main_text", ""), dropped.get(d)) for d in ids
    }
    # A text's passages once: exact copies share them (and most pairs are exact copies).
    by_text = {read[d]: ps for d, ps in known_passages.items() if d in read}
    doc_passages = {}
    for d in ids:
        if d in known_passages:
            doc_passages[d] = known_passages[d]
            continue
        if read[d] not in by_text:
            by_text[read[d]] = passages_core.passages(
                read[d], method=passage_method_for(method.key)
            )
        doc_passages[d] = by_text[read[d]]
    # A pair whose texts lost boilerplate lines is compared by SimHash without them too.
    read_prints: dict[int, int | None] = {}
    template = passages.never_evidence(
        {p.hash for ps in doc_passages.values() for p in ps},
        method=passages.method_for(method.key),
    )
    embedded = vectors.vectors_for(ids)
    scorers = {
        c.name: scorer
        for c in registry.running()
        if (scorer := c.scorer(method, ids, known.get(c.name))) is not None
    }
    # Each text normalized once, however many pairs and exact copies it is in.
    by_raw: dict[str, str] = {}
    normalized = {}
    for d in ids:
        raw = texts.get(d, {}).get("main_text", "")
        if raw not in by_raw:
            by_raw[raw] = normalize_for(method.key, raw)
        normalized[d] = by_raw[raw]
    out = []
    reading = _ShortReading()
    for a, b in todo:
        (sa, sha_a, full_a), (sb, sha_b, full_b) = prints.get(a, _NONE), prints.get(b, _NONE)
        if sa is None or sb is None:
            continue  # not fingerprinted (ok) under this method: nothing to compare
        va, vb = to_unsigned64(sa), to_unsigned64(sb)
        distance = hamming(va, vb)
        distance_read = None
        if dropped.get(a) or dropped.get(b):
            for d in (a, b):
                if d not in read_prints:
                    read_prints[d] = fingerprint_text(method.key, read[d]).simhash
            ra, rb = read_prints[a], read_prints[b]
            # A side left with too little to fingerprint (its text was nearly all lines
            # the site's other pages carry: one story at most of a small site's URLs)
            # gives no reading without boilerplate; the stored distance stands.
            if ra is not None and rb is not None:
                distance_read = hamming(ra, rb)
        full_distance = None
        if full_a is not None and full_b is not None:
            full_distance = hamming(to_unsigned64(full_a), to_unsigned64(full_b))
        ta, tb = texts.get(a, {}), texts.get(b, {})
        text_a, text_b = normalized[a], normalized[b]
        sim = similarity(text_a, text_b, max_chars=settings.SIMILARITY_MAX_CHARS)
        short_shingles, by_chars = reading.of(sim, text_a, text_b, read[a], read[b])
        guards = guards_check(text_a, text_b, ta.get("title", ""), tb.get("title", ""))
        type_a, type_b = doc_types[a], doc_types[b]
        doc_type = type_a if type_a == type_b else "other"
        ov = passages_core.overlap(doc_passages[a], doc_passages[b], ignore=template)
        exact = sha_a == sha_b
        cosine = vectors.pair_cosine(embedded, a, b)
        scores = PairScores(
            exact=exact,
            distance=distance,
            threshold=max(threshold_for(type_a), threshold_for(type_b)),
            overlap=ov,
            band=nominating_band(index.SCHEME, va, vb, query_k()),
            cosine=cosine,
            cosine_threshold=cosine_pair_threshold(type_a, type_b),
            more={name: score(a, b) for name, score in scorers.items()},
            shingles=short_shingles,
            shingles_chars=by_chars,
            distance_read=distance_read,
        )
        nominated, evidence = registry.evidence(scores)
        if not nominated:
            continue
        band = scores.band
        out.append(
            CandidatePair(
                method=method,
                a_id=a,
                b_id=b,
                doc_type=doc_type,
                distance=distance,
                uncertainty=channels.queue_rank(
                    distance=distance, threshold=threshold_for(doc_type), mask=nominated
                ),
                full_distance=full_distance,
                band=band,
                exact=exact,
                ratio=sim.ratio,
                token_set_ratio=sim.token_set_ratio,
                length_ratio=sim.length_ratio,
                containment=sim.containment,
                numbers_differ=guards.numbers_differ,
                ids_differ=guards.ids_differ,
                title_differs=guards.title_differs,
                guard_details=_guard_details(guards),
                channels=nominated,
                a_in_b=ov.a_in_b,
                b_in_a=ov.b_in_a,
                shared_passages=ov.shared,
                cosine=cosine,
                below_floor=_below_floor(
                    exact=exact,
                    sim=sim,
                    doc_type=doc_type,
                    passage_containment=ov.containment,
                    semantic=bool(nominated & channels.SEMANTIC),
                    short=short_copy(ov, short_shingles, by_chars),
                ),
            )
        )
        # The evidence its columns give is not stored twice (CandidatePair.evidence).
        out[-1].evidence_kept = out[-1].evidence_to_keep(evidence)
    return out


def _guard_details(guards: Guards) -> dict[str, list[str]] | None:
    """The numbers and ids of each side the guards read (None: neither side has any)."""
    details = {
        "numbers_a": list(guards.numbers_a),
        "numbers_b": list(guards.numbers_b),
        "ids_a": list(guards.ids_a),
        "ids_b": list(guards.ids_b),
    }
    return details if any(details.values()) else None


# A late cosine changes facts other apps count pairs by (the review queue's tallies;
# ingest never imports them). In the transaction that writes the pairs:
# `pair_facts_changing` (pair_ids) before any row is locked, so that a receiver takes
# the locks that order it against its own writers first; `pair_facts_changed`
# (before: {pair id: PairFacts as they were}, the pairs whose channels or floor changed)
# once the rows are written. Neither is sent for a cosine under the threshold.
pair_facts_changing = Signal()
pair_facts_changed = Signal()


@dataclass(frozen=True)
class PairFacts:
    """The facts of a pair a late cosine can change (what the queue counts pairs by)."""

    channels: int
    below_floor: bool


def pairs_cosine_update(*, method: FingerprintMethod, document_ids: Sequence[int]) -> int:
    """Set the cosine of these documents' pairs that have none yet where both sides now
    have vectors, whatever channel nominated the pair. The pair ends as _pairs_build
    makes it when both vectors exist: the semantic bit where the cosine reaches the
    pair's threshold, and then above the similarity floor, its queue rank from its new
    channels, the cosine in its evidence. Its other facts stay as they were. Receivers
    of pair_facts_changing / pair_facts_changed hear of it in the same transaction.
    Returns the pairs updated."""
    where = vectors.space()
    if where is None or not document_ids:
        return 0
    pairs = list(
        CandidatePair.objects.filter(method=method, cosine__isnull=True)
        .filter(Q(a_id__any_of=document_ids) | Q(b_id__any_of=document_ids))
        .select_related("a", "b")
        .only("id", "a_id", "b_id", "a__doc_type", "b__doc_type")
    )
    if not pairs:
        return 0
    embedded = vectors.vectors_for({d for p in pairs for d in (p.a_id, p.b_id)}, where)
    cosines: dict[int, tuple[float, int]] = {}
    for pair in pairs:
        cosine = vectors.pair_cosine(embedded, pair.a_id, pair.b_id)
        if cosine is None:
            continue
        bit = channels.SEMANTIC
        if cosine < cosine_pair_threshold(pair.a.doc_type, pair.b.doc_type):
            bit = 0
        cosines[pair.id] = (cosine, bit)
    if not cosines:
        return 0
    # A cosine under the threshold changes no fact the receivers count by: no signal
    # then (nor their locks).
    nominated = sorted(pair_id for pair_id, (_, bit) in cosines.items() if bit)
    with transaction.atomic():
        if nominated:
            pair_facts_changing.send(sender=CandidatePair, pair_ids=nominated)
        # Only where no cosine is set yet, read under the rows' lock: two workers
        # filling the same pair write once, and `before` is what the row held. (No key
        # update: the key-share lock of a label's foreign key check does not wait.)
        rows = list(
            CandidatePair.objects.select_for_update(of=("self",), no_key=True)
            .filter(id__any_of=list(cosines), cosine__isnull=True)
            .order_by("id")
            .only("id", "doc_type", "distance", "channels", "below_floor")
        )
        before: dict[int, PairFacts] = {}
        for row in rows:
            cosine, bit = cosines[row.id]
            if row.channels | bit != row.channels or (row.below_floor and bit):
                before[row.id] = PairFacts(row.channels, row.below_floor)
            row.cosine = cosine
            row.channels |= bit
            # A pair the semantic channel nominates is above the floor (_below_floor).
            row.below_floor = row.below_floor and not bit
            row.uncertainty = channels.queue_rank(
                distance=row.distance, threshold=threshold_for(row.doc_type), mask=row.channels
            )
        # Its evidence's semantic entry is the cosine column (CandidatePair.evidence).
        CandidatePair.objects.bulk_update(
            rows, ["cosine", "channels", "below_floor", "uncertainty"]
        )
        if before:
            pair_facts_changed.send(sender=CandidatePair, before=before)
    return len(rows)


# --- groups --------------------------------------------------------------------------


def _lock(method: FingerprintMethod) -> None:
    """One grouping update per method at a time, and no person's merge beside it
    (ingest.models.memberships_lock): the one-group-per-document rule."""
    memberships_lock(method.pk)


def _groupable_pairs(method: FingerprintMethod) -> Q:
    """Pairs that link documents into groups. A pair the semantic channel alone nominated
    (same meaning, no shared words) stays a pair in the queue, out of every group, unless
    SEMANTIC_AUTO_MERGE names both sides' doc type: a group is what the rule may merge or
    a person accepts at once, and such a link would also bar the group's exact copies from
    the rule."""
    named = list(settings.SEMANTIC_AUTO_MERGE)
    text_evidence = ~Q(channels=channels.SEMANTIC)
    if named:
        text_evidence |= Q(a__doc_type__in=named, b__doc_type__in=named)
    return Q(method=method, below_floor=False) & text_evidence


def _area(method: FingerprintMethod, seeds: Iterable[int]) -> set[int]:
    """Documents reachable from the seeds over groupable pairs and current groups."""
    area: set[int] = set()
    frontier = set(seeds)
    while frontier and len(area) < AREA_MAX:
        area |= frontier
        ids = list(frontier)
        nxt: set[int] = set()
        for a, b in (
            CandidatePair.objects.filter(_groupable_pairs(method))
            .filter(Q(a_id__any_of=ids) | Q(b_id__any_of=ids))
            .values_list("a_id", "b_id")
        ):
            nxt.update((a, b))
        group_ids = GroupMember.objects.filter(method=method, document_id__any_of=ids).values(
            "group_id"
        )
        nxt.update(
            GroupMember.objects.filter(group_id__in=group_ids).values_list("document_id", flat=True)
        )
        frontier = nxt - area
    return area


@transaction.atomic
def groups_update(
    *,
    method: FingerprintMethod,
    document_ids: Iterable[int],
    new_pairs: Iterable[tuple[int, int]] | None = None,
) -> list[int]:
    """Recompute the groups around these documents under the configured rule.

    Existing groups keep their id (and a person's representative) when they keep most
    of their members; groups left with fewer than two members are dissolved, not
    deleted. A refused join flags the group for review only when it involves one of
    `new_pairs` (None: every refused join counts): pairs a person already separated
    are not new evidence. Returns the ids of the groups that changed."""
    _lock(method)
    area = _area(method, document_ids)
    if not area:
        return []
    edges = [
        grouping.Edge(a, b, d, contained=bool(ch & channels.PASSAGES))
        for a, b, d, ch in CandidatePair.objects.filter(
            _groupable_pairs(method), a_id__any_of=area, b_id__any_of=area
        ).values_list("a_id", "b_id", "distance", "channels")
    ]
    edges += _pinned_edges(method, area)
    banned = _do_not_match_among(area)
    candidates = policy_candidates(area)
    rule = settings.GROUP_RULE
    if rule == grouping.CENTRED:
        ranked = [c.document_id for c in grouping.rank(candidates, settings.REPRESENTATIVE_POLICY)]
        result = grouping.representative_centred(ranked, edges, banned, query_k())
    elif rule == grouping.CONNECTED:
        result = grouping.connected_components(area, edges, banned)
    else:
        raise ValueError(f"unknown GROUP_RULE {rule!r}; known: {grouping.RULES}")
    if new_pairs is not None:
        touched = {d for pair in new_pairs for d in pair}
        result.conflicts = [c for c in result.conflicts if touched & set(c)]
    return _groups_store(method, area, result, candidates)


def _pinned_edges(method: FingerprintMethod, area: set[int]) -> list[grouping.Edge]:
    """A person's merge or restore holds: a member a person put into a group is linked
    to its representative, so recomputing keeps it there (a do-not-match still wins)."""
    rows = GroupMember.objects.filter(
        method=method,
        document_id__any_of=area,
        added_by__startswith="person:",
        group__dissolved=False,
        group__representative__isnull=False,
    ).values_list("document_id", "group__representative_id")
    return [grouping.Edge(min(d, r), max(d, r), 0) for d, r in rows if d != r and r in area]


def policy_candidates(ids: Iterable[int]) -> list[grouping.Candidate]:
    """What the representative policy looks at, for these documents."""
    ids = list(ids)
    extraction: dict[int, tuple[str, int, dict[str, Any]]] = {}
    # The current extractor's facts; an older one's until the document is re-extracted.
    for d, version, st, n, said in Extraction.objects.filter(document_id__any_of=ids).values_list(
        "document_id", "extractor_version", "status", "main_tokens", "declared"
    ):
        if d not in extraction or version == EXTRACTOR_VERSION:
            extraction[d] = (st, n, said or {})
    status = {d: st for d, (st, _, _) in extraction.items()}
    tokens = {d: n for d, (_, n, _) in extraction.items()}
    declared = {d: said for d, (_, _, said) in extraction.items()}
    contains: dict[int, set[int]] = defaultdict(set)
    for outer, inner in containment_relations(ids):
        contains[outer].add(inner)
    return [
        grouping.Candidate(
            document_id=d,
            site_priority=priority,
            extraction_ok=status.get(d) == "ok",
            main_tokens=tokens.get(d, 0),
            fetched_at=fetched_at,
            url=final_url or url,
            contains=len(contains.get(d, ())),
            published_at=provenance.parse_time(declared.get(d, {}).get("published_at") or ""),
            names=frozenset(provenance.names_of(declared.get(d, {}).get("site_name", ""), host)),
            credits=tuple(declared.get(d, {}).get("credits", ())),
        )
        for d, priority, fetched_at, final_url, url, host in Document.objects.filter(
            pk__any_of=ids
        ).values_list("pk", "site__priority", "fetched_at", "final_url", "url", "site__host")
    ]


def containment_relations(ids: Iterable[int]) -> set[tuple[int, int]]:
    """(outer, inner) among these documents: the passage channel nominated the pair
    and the outer text holds more of the inner's passages than the other way round
    (an article and its excerpt; two equal copies are no such relation)."""
    ids = list(ids)
    rows = (
        CandidatePair.objects.filter(a_id__any_of=ids, b_id__any_of=ids, below_floor=False)
        .annotate(by_passages=F("channels").bitand(channels.PASSAGES))
        .filter(by_passages__gt=0)
        .values_list("a_id", "b_id", "a_in_b", "b_in_a")
    )
    cmin = settings.PASSAGE_CONTAINMENT_MIN
    out: set[tuple[int, int]] = set()
    for a, b, a_in_b, b_in_a in rows:
        if b_in_a >= cmin and b_in_a > a_in_b:
            out.add((a, b))
        elif a_in_b >= cmin and a_in_b > b_in_a:
            out.add((b, a))
    return out


def _groups_store(
    method: FingerprintMethod,
    area: set[int],
    result: grouping.Grouping,
    candidates: list[grouping.Candidate],
) -> list[int]:
    by_doc = {c.document_id: c for c in candidates}
    current: dict[int, int] = dict(
        GroupMember.objects.filter(method=method, document_id__any_of=area).values_list(
            "document_id", "group_id"
        )
    )
    groups = {
        g.pk: g
        for g in CandidateGroup.objects.select_for_update().filter(pk__any_of=set(current.values()))
    }
    conflicts_by_doc: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for a, b in result.conflicts:
        conflicts_by_doc[a].append((a, b))
        conflicts_by_doc[b].append((a, b))

    facts = GroupFacts.load(method.pk, {d for members in result.groups for d in members})
    changed: set[int] = set()
    kept: set[int] = set()
    fresh: list[CandidateGroup] = []  # written in one statement after the loop
    dirty: dict[int, CandidateGroup] = {}  # stored groups whose row changed
    placed: list[tuple[CandidateGroup, set[int], bool]] = []  # group, members, seen changed
    # Biggest new groups pick their old group first; a locked (human) group wins ties.
    for members in sorted(result.groups, key=len, reverse=True):
        overlap: dict[int, int] = defaultdict(int)
        for d in members:
            if d in current and current[d] not in kept:
                overlap[current[d]] += 1
        if overlap:
            gid = max(overlap, key=lambda g: (overlap[g], groups[g].representative_locked, -g))
            group = groups[gid]
            kept.add(gid)
        else:
            group = CandidateGroup(
                method=method,
                kind=CandidateGroup.Kind.NEAR,
                rule=settings.GROUP_RULE,
                rule_params=_rule_params(),
            )
            fresh.append(group)
        before = _stored(group)
        seen_changed = _group_refresh(group, members, by_doc, facts, conflicts_by_doc)
        if group.pk is not None and _stored(group) != before:
            dirty[group.pk] = group
        placed.append((group, members, seen_changed))
    CandidateGroup.objects.bulk_create(fresh)
    assignment: dict[int, int] = {}
    for group, members, seen_changed in placed:
        for d in members:
            assignment[d] = group.pk
        if seen_changed:
            changed.add(group.pk)

    # Memberships follow the assignment; documents in no group lose theirs.
    leaving: list[int] = []
    joining: list[GroupMember] = []
    moving: dict[int, list[int]] = defaultdict(list)
    for d in sorted(area):
        old, new = current.get(d), assignment.get(d)
        if old == new:
            continue
        if old is not None:
            changed.add(old)
        if new is None:
            leaving.append(d)
        elif old is None:
            joining.append(
                GroupMember(
                    group_id=new,
                    document_id=d,
                    method=method,
                    added_by=f"rule:{settings.GROUP_RULE}",
                )
            )
        else:
            moving[new].append(d)
    if leaving:
        GroupMember.objects.filter(method=method, document_id__any_of=leaving).delete()
    for new, ids in moving.items():
        GroupMember.objects.filter(method=method, document_id__any_of=ids).update(group_id=new)
    GroupMember.objects.bulk_create(joining)
    for gid, group in groups.items():
        if gid not in kept and not group.dissolved:
            group.dissolved = True
            group.size = 0
            group.version += 1
            dirty[gid] = group
            changed.add(gid)
    _groups_write(list(dirty.values()))
    return sorted(changed)


def _groups_write(groups: list[CandidateGroup]) -> None:
    """Write these groups' regrouped fields (one statement on PostgreSQL)."""
    now = timezone.now()
    for group in groups:
        group.updated_at = now
    rows_update(groups, [*_STORED_FIELDS, "updated_at"])


def _rule_params() -> dict[str, object]:
    return {
        "thresholds": settings.CANDIDATE_THRESHOLDS,
        "similarity_floors": settings.SIMILARITY_FLOORS,
        "containment_floor": settings.CONTAINMENT_FLOOR,
        "representative_policy": settings.REPRESENTATIVE_POLICY,
    }


@dataclass(frozen=True)
class GroupFacts:
    """What a group's facts are made of, read for a set of documents at once (a worker
    regrouping an area sets many groups' facts)."""

    prints: dict[int, tuple[int | None, str]]  # main fingerprint: (signed SimHash, SHA-256)
    doc_types: dict[int, str]
    containment: set[tuple[int, int]]  # (outer, inner), see containment_relations

    @classmethod
    def load(cls, method_id: int, ids: Collection[int]) -> "GroupFacts":
        ids = list(ids)
        return cls(
            prints={
                d: (value, sha)
                for d, value, sha in Fingerprint.objects.filter(
                    method=method_id, document_id__any_of=ids
                ).values_list("document_id", "simhash", "text_sha256")
            },
            doc_types=dict(Document.objects.filter(pk__any_of=ids).values_list("pk", "doc_type")),
            containment=containment_relations(ids),
        )


def group_facts_set(
    group: CandidateGroup, members: Collection[int], facts: GroupFacts | None = None
) -> None:
    """Size, kind, diameter, the chained and oversized flags of a group's members: the
    one rule, for the workers' groups and for the desk's splits and merges alike.
    ``facts``: read beforehand for a set of documents holding the members."""
    if facts is None:
        facts = GroupFacts.load(group.method_id, members)
    rows = [(d, *facts.prints[d]) for d in members if d in facts.prints]
    prints = {d: value for d, value, _ in rows}
    shas = {sha for _, _, sha in rows}
    # An excerpt is far from its article in bits by nature: the diameter measures the
    # whole versions, so a group is chained only when those drift apart.
    member_set = set(members)
    inner = {i for o, i in facts.containment if o in member_set and i in member_set}
    ordered = sorted(set(members) - inner or members)
    diameter, cut = grouping.diameter(
        [to_unsigned64(v) for d in ordered if (v := prints.get(d)) is not None],
        settings.GROUP_PAIRWISE_MAX,
    )
    types = [facts.doc_types[d] for d in members if d in facts.doc_types]
    group.size = len(members)
    group.kind = CandidateGroup.Kind.EXACT if len(shas) == 1 else CandidateGroup.Kind.NEAR
    group.diameter = diameter
    group.chained = diameter > max((threshold_for(t) for t in types), default=0)
    group.oversized = cut or len(members) > settings.GROUP_LARGE


def representative_by_rule(group: CandidateGroup, candidates: list[grouping.Candidate]) -> None:
    """The representative the configured policy picks among these documents."""
    rep, reason = grouping.choose_representative(candidates, settings.REPRESENTATIVE_POLICY)
    group.representative_id = rep
    group.representative_reason = reason
    group.representative_by = f"rule:{'>'.join(settings.REPRESENTATIVE_POLICY)}"


# What the regrouping may change in a group's row: a group whose values are all as they
# were is not written again.
_STORED_FIELDS = (
    "kind",
    "representative",
    "representative_reason",
    "representative_by",
    "representative_locked",
    "size",
    "diameter",
    "chained",
    "oversized",
    "needs_review",
    "review_note",
    "dissolved",
    "version",
)


def _stored(group: CandidateGroup) -> tuple[object, ...]:
    return tuple(
        group.representative_id if f == "representative" else getattr(group, f)
        for f in _STORED_FIELDS
    )


def _seen(group: CandidateGroup) -> tuple[object, ...]:
    """What an editor sees of a group: a change of any of it bumps the version."""
    return (
        group.size,
        group.representative_id,
        group.diameter,
        group.chained,
        group.kind,
        group.needs_review,
        group.dissolved,
    )


def _group_refresh(
    group: CandidateGroup,
    members: set[int],
    by_doc: dict[int, grouping.Candidate],
    facts: GroupFacts,
    conflicts_by_doc: dict[int, list[tuple[int, int]]],
) -> bool:
    """Recompute a group's facts (the caller writes the row); True when anything an
    editor sees changed."""
    before = _seen(group)
    group_facts_set(group, members, facts)
    group.dissolved = False
    if not (group.representative_locked and group.representative_id in members):
        if group.representative_locked:
            group.needs_review = True
            group.review_note = (
                f"the representative chosen by a person ({group.representative_id}) "
                "left the group with new evidence"
            )
            group.representative_locked = False
        representative_by_rule(group, [by_doc[d] for d in members])
    conflicts = sorted({c for d in members for c in conflicts_by_doc.get(d, [])})
    if conflicts:
        group.needs_review = True
        group.review_note = "new pairs connect documents a person separated: " + ", ".join(
            f"{a}≠{b}" for a, b in conflicts[:10]
        )
    after = _seen(group)
    if before != after:
        group.version += 1
    return before != after


# --- crawler-facing check ----------------------------------------------------------------


@dataclass(frozen=True)
class CheckMatch:
    document_id: int
    url: str
    distance: int
    exact: bool
    ratio: float
    token_set_ratio: float
    containment: float
    guards: list[str]
    below_floor: bool
    channels: list[str]  # the channels that nominate this match
    checked_in_match: float  # share of the checked text's passages the match holds
    match_in_checked: float  # share of the match's passages the checked text holds
    cosine: float | None = None  # of the embeddings (None: the semantic channel has none)


@dataclass(frozen=True)
class CheckResult:
    verdict: str  # exact | near | new | insufficient
    method: str
    simhash: str | None
    token_count: int
    threshold: int
    matches: list[CheckMatch]
    channels: list[str]  # the channels behind the verdict (those of the kept matches)
    # What the semantic channel made of the text: its status, threshold and nearest
    # stored documents (those also among the matches carry the channel there).
    semantic: vectors.SemanticCheck | None = None
    # Channels left out because the check's time budget (CHECK_TIME_BUDGET_SECONDS) ran out.
    not_consulted: list[str] = dataclasses.field(default_factory=list)


CHECK_MAX_MATCHES = 10


def check(
    *,
    text: str,
    title: str = "",
    doc_type: str = "other",
    url: str | None = None,
    language: str | None = None,
) -> CheckResult:
    """Is this text a duplicate of something stored? Reads only. Every running channel
    is consulted (SimHash index, exact text, passage index, then the channels with a
    probe of their own: the semantic channel embeds the text); a stored document at the
    checked URL is the page itself, never its match. Each match's channels come from the
    rule pair building applies (ingest.channels.registry.evidence), so a match the
    semantic channel nominates carries it and counts toward the verdict as its pair
    would. ``semantic`` also says what the channel made of the text (or why it is off)."""
    deadline = time.monotonic() + settings.CHECK_TIME_BUDGET_SECONDS
    skipped: list[str] = []

    def in_budget(channel: str) -> bool:
        """Whether there is time left for this channel (else it is listed as skipped)."""
        if time.monotonic() < deadline:
            return True
        skipped.append(channel)
        return False

    key = active_method_key()
    k = threshold_for(doc_type)
    itself = _documents_at(url)
    result = fingerprint_text(key, text, min_tokens=settings.FINGERPRINT_MIN_TOKENS)
    method = FingerprintMethod.objects.filter(key=key).first()
    query = CheckQuery(
        method=method,
        text=text,
        language=guess_language(text) if language is None else language,
        doc_type=doc_type,
        exclude=itself,
    )

    def probes() -> dict[str, CheckProbe]:
        # After the built-in probes: the semantic channel is the slowest.
        out: dict[str, CheckProbe] = {}
        for channel in registry.running():
            if channel.check_probes and in_budget(channel.name):
                probe = channel.check_probe(query)
                if probe is not None:
                    out[channel.name] = probe
        return out

    def semantic_status(found: dict[str, CheckProbe]) -> vectors.SemanticCheck:
        probe = found.get("semantic")
        if probe is None:
            return vectors.SemanticCheck(
                "skipped", "the check's time budget ran out before this channel", "", None, []
            )
        status: vectors.SemanticCheck = probe.status
        return status

    if result.simhash is None:
        sem = semantic_status(probes())
        return CheckResult("insufficient", key, None, result.token_count, k, [], [], sem, skipped)
    if method is None:
        sem = semantic_status(probes())
        return CheckResult(
            "new", key, to_hex(result.simhash), result.token_count, k, [], [], sem, skipped
        )
    hits = {
        h.document_id: h.distance
        for h in index.query(method_id=method.pk, value=result.simhash, k=k)
        if h.document_id not in itself
    }
    exact_ids = list(
        Fingerprint.objects.filter(
            method=method, simhash__isnull=False, text_sha256=result.text_sha256
        )
        .exclude(document_id__any_of=itself)
        .values_list("document_id", flat=True)[:CHECK_MAX_MATCHES]
    )
    for d in exact_ids:
        hits.setdefault(d, 0)
    passage_method, passage_id = passage_method_for(key), passages.method_for(key)
    checked_passages = passages_core.passages(text, method=passage_method)
    by_passages: list[int] = []
    if settings.PASSAGE_CHANNEL and checked_passages and in_budget("passages"):
        by_passages = [
            h.document_id
            for h in passages.query(
                passages=checked_passages,
                method=passage_id,
                shared_min=query_shared_min(text, checked_passages),
            )
            if h.document_id not in itself
        ][:CHECK_MAX_MATCHES]
    found = probes()
    nearest = sorted(hits, key=lambda d: (d not in exact_ids, hits[d], d))[:CHECK_MAX_MATCHES]
    nearest += [d for d in by_passages if d not in hits]
    for probe in found.values():
        nearest += [d for d in probe.nominees if d not in nearest and d not in itself]
    texts: dict[int, Any] = {
        e["document_id"]: e
        for e in Extraction.objects.filter(
            document_id__any_of=nearest, extractor_version=method_get(key).extractor_version
        ).values("document_id", "main_text", "title")
    }
    urls = dict(Document.objects.filter(pk__any_of=nearest).values_list("pk", "url"))
    values = {
        f.document_id: to_unsigned64(f.simhash)
        for f in Fingerprint.objects.filter(
            method=method, simhash__isnull=False, document_id__any_of=nearest
        ).only("document_id", "simhash")
        if f.simhash is not None
    }
    dropped = sites.boilerplate_dropped(
        document_ids=nearest, extractor_version=method_get(key).extractor_version
    )
    stored_read = {
        d: sites.passage_text(texts.get(d, {}).get("main_text", ""), dropped.get(d))
        for d in nearest
    }
    stored_passages = {
        d: passages_core.passages(stored_read[d], method=passage_method) for d in nearest
    }
    template = passages.never_evidence(
        {p.hash for ps in [checked_passages, *stored_passages.values()] for p in ps},
        method=passage_id,
    )
    # Every probing channel's score of every match, whichever channel found it.
    more = {name: probe.scores(nearest) for name, probe in found.items()}
    cosines = more.pop("semantic", {})
    cosine_cut = cosine_threshold(doc_type)
    normalized = normalize_for(key, text)
    matches = []
    reading = _ShortReading()
    for d in nearest:
        other = normalize_for(key, texts.get(d, {}).get("main_text", ""))
        sim = similarity(normalized, other, max_chars=settings.SIMILARITY_MAX_CHARS)
        short_shingles, by_chars = reading.of(sim, normalized, other, text, stored_read[d])
        guards = guards_check(normalized, other, title, texts.get(d, {}).get("title", ""))
        exact = d in exact_ids
        if d in hits:
            distance = hits[d]
        else:
            distance = 64 if d not in values else hamming(result.simhash, values[d])
        ov = passages_core.overlap(checked_passages, stored_passages[d], ignore=template)
        nominated, _ = registry.evidence(
            PairScores(
                exact=exact,
                distance=distance,
                threshold=k,
                overlap=ov,
                cosine=cosines.get(d),
                cosine_threshold=cosine_cut,
                more={name: scores.get(d) for name, scores in more.items()},
                shingles=short_shingles,
                shingles_chars=by_chars,
            )
        )
        if not nominated:
            continue
        matches.append(
            CheckMatch(
                document_id=d,
                url=urls.get(d, ""),
                distance=distance,
                exact=exact,
                ratio=sim.ratio,
                token_set_ratio=sim.token_set_ratio,
                containment=sim.containment,
                guards=guards.flags(),
                below_floor=_below_floor(
                    exact=exact,
                    sim=sim,
                    doc_type=doc_type,
                    passage_containment=ov.containment,
                    semantic=bool(nominated & channels.SEMANTIC),
                    short=short_copy(ov, short_shingles, by_chars),
                ),
                channels=channels.names(nominated),
                checked_in_match=round(ov.a_in_b, 4),
                match_in_checked=round(ov.b_in_a, 4),
                cosine=cosines.get(d),
            )
        )
    if any(m.exact for m in matches):
        verdict = "exact"
        behind = [m for m in matches if m.exact]
    elif any(not m.below_floor for m in matches):
        verdict = "near"
        behind = [m for m in matches if not m.below_floor]
    else:
        verdict = "new"
        behind = []
    used = {c for m in behind for c in m.channels}
    return CheckResult(
        verdict,
        key,
        to_hex(result.simhash),
        result.token_count,
        k,
        matches,
        [c for c in channels.BITS if c in used],
        semantic_status(found),
        skipped,
    )


def _documents_at(url: str | None) -> set[int]:
    """Stored documents fetched at this URL (or redirected to it): the checked page."""
    if not url:
        return set()
    return set(Document.objects.filter(Q(url=url) | Q(final_url=url)).values_list("pk", flat=True))
