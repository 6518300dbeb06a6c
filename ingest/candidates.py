"""Candidate services: fingerprints → candidate pairs → candidate groups.

Runs on the workers. The index only nominates (invariant 5); each pair carries its
distances, similarities and guards; pairs under the similarity floor are stored but
do not join groups. Groups follow a named rule and honour do-not-match constraints and
human representatives (invariant 7): a worker never overwrites them.
"""

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q

from ingest import index
from ingest.core import grouping
from ingest.core.bands import nominating_band
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.guards import Similarity, guards_check, similarity
from ingest.core.methods import normalize_for
from ingest.core.simhash import hamming, to_signed64, to_unsigned64
from ingest.models import (
    CandidateGroup,
    CandidatePair,
    Document,
    DoNotMatch,
    Extraction,
    Fingerprint,
    FingerprintMethod,
    GroupMember,
)

log = logging.getLogger(__name__)

MAIN = Fingerprint.Branch.MAIN
FULL = Fingerprint.Branch.FULL
# How far a grouping update may spread from the documents that changed.
AREA_MAX = 5000


def threshold_for(doc_type: str) -> int:
    return min(int(settings.CANDIDATE_THRESHOLDS.get(doc_type, 3)), index.K_MAX)


def query_k() -> int:
    return min(max(threshold_for(t) for t in settings.DOC_TYPES), index.K_MAX)


@dataclass(frozen=True)
class _Doc:
    id: int
    doc_type: str
    value: int
    text_sha256: str
    fetched_at: object


def active_method_key() -> str:
    """The active method: the database's (a switch is recorded there, see
    ingest.upgrades), settings.ACTIVE_METHOD until a method row exists."""
    key = FingerprintMethod.objects.filter(is_active=True).values_list("key", flat=True).first()
    return key or settings.ACTIVE_METHOD


def candidate_method_keys() -> list[str]:
    """Methods searched for candidates: the active one, plus any other method
    CANDIDATE_METHODS names beside ACTIVE_METHOD (settings stay the default of a first
    run: until a switch, the active method is settings.ACTIVE_METHOD). Retired methods
    are never searched."""
    active = active_method_key()
    retired = set(
        FingerprintMethod.objects.filter(retired_at__isnull=False).values_list("key", flat=True)
    )
    extras = [k for k in settings.CANDIDATE_METHODS if k != settings.ACTIVE_METHOD]
    return [active] + [k for k in dict.fromkeys(extras) if k != active and k not in retired]


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
        created[key] = _candidates_find_for(method, document_ids)
        groups_update(method=method, document_ids=document_ids)
    return created


def _candidates_find_for(method: FingerprintMethod, document_ids: Sequence[int]) -> int:
    rows = (
        Fingerprint.objects.filter(
            document_id__in=document_ids, method=method, branch=MAIN, status="ok"
        )
        .select_related("document")
        .only("simhash", "text_sha256", "document__doc_type", "document__fetched_at")
    )
    docs = [
        _Doc(
            r.document_id,
            r.document.doc_type,
            to_unsigned64(r.simhash),  # type: ignore[arg-type]
            r.text_sha256,
            r.document.fetched_at,
        )
        for r in rows
    ]
    if not docs:
        return 0
    # Index first and commit, then query: of two documents fingerprinted at the same
    # time by two workers, the later query always sees the other.
    index.entries_add([(method.pk, d.id, d.value, d.fetched_at) for d in docs])

    k = query_k()
    hits_by_doc = {
        doc.id: index.query(
            method_id=method.pk,
            value=doc.value,
            k=k,
            exclude_document=doc.id,
            around=doc.fetched_at,  # type: ignore[arg-type]
            lookback_days=settings.CANDIDATE_LOOKBACK_DAYS,
        )
        for doc in docs
    }
    wanted = _pairs_wanted(method, docs, hits_by_doc)
    if not wanted:
        return 0
    existing = set(
        CandidatePair.objects.filter(method=method)
        .filter(Q(a_id__in=[d.id for d in docs]) | Q(b_id__in=[d.id for d in docs]))
        .values_list("a_id", "b_id")
    )
    banned = _do_not_match_among({d for pair in wanted for d in pair})
    todo = {p: d for p, d in wanted.items() if p not in existing and p not in banned}
    pairs = _pairs_build(method, todo)
    CandidatePair.objects.bulk_create(pairs, ignore_conflicts=True)
    return len(pairs)


def _pairs_wanted(
    method: FingerprintMethod, docs: list[_Doc], hits_by_doc: dict[int, list[index.Hit]]
) -> dict[tuple[int, int], int]:
    """The pairs to store for these documents' hits, the same in number, in the family
    pairs they make and in the groups they give whatever the order the documents are
    searched in, and however often (a redelivered task searches again).

    Exact twins (one normalized text, hence one SimHash) form a family. A login wall
    served at a thousand URLs is one text: pairing every copy with every other is
    quadratic, so a family of n gets n - 1 links that keep it connected, each to its
    earliest member at the time (a star, not a clique). Two families within the
    threshold get one pair, between their earliest members, and only when no pair links
    them yet: a twin searched after the pair exists (later, or again) adds nothing.
    Without this, a redelivered twin paired itself with every family indexed since its
    first search. At most CANDIDATES_PER_DOCUMENT_MAX families per document, nearest
    first."""
    hit_ids = {h.document_id for hits in hits_by_doc.values() for h in hits}
    ids = hit_ids | {d.id for d in docs}
    if not hit_ids:
        return {}
    shas = dict(
        Fingerprint.objects.filter(method=method, branch=MAIN, document_id__in=ids).values_list(
            "document_id", "text_sha256"
        )
    )
    stored = list(
        CandidatePair.objects.filter(method=method, a_id__in=ids, b_id__in=ids).values_list(
            "a_id", "b_id"
        )
    )
    banned = _do_not_match_among(ids)
    wanted: dict[tuple[int, int], int] = {}
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
            for pair in _twin_links(members, [*stored, *wanted], banned):
                wanted[pair] = 0  # one normalized text: one SimHash
        linked = {
            b if a in members else a
            for a, b in [*stored, *wanted]
            if (a in members) != (b in members)
        }
        ranked = sorted(
            families.values(),
            key=lambda hs: (min(h.distance for h in hs), min(h.document_id for h in hs)),
        )
        if len(ranked) > settings.CANDIDATES_PER_DOCUMENT_MAX:
            log.info("kept %d of %d families", settings.CANDIDATES_PER_DOCUMENT_MAX, len(ranked))
        for hits in ranked[: settings.CANDIDATES_PER_DOCUMENT_MAX]:
            if any(h.document_id in linked for h in hits):
                continue
            head = min(hits, key=lambda h: h.document_id)
            ours = doc.id if windowed else min(members)
            for a in dict.fromkeys((ours, doc.id)):
                pair = (min(a, head.document_id), max(a, head.document_id))
                if pair not in banned:
                    wanted[pair] = head.distance
                    break
    return wanted


def _twin_links(
    members: set[int], pairs: list[tuple[int, int]], banned: set[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Links that make a family of exact twins one connected piece: each part not yet
    connected to the earliest member is linked to it through the part's earliest member.
    n twins get n - 1 links in all, whatever the order they arrive in."""
    parent = {m: m for m in members}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        if a in parent and b in parent:
            parent[root(a)] = root(b)
    first, *rest = sorted(members)
    links = []
    for m in rest:
        if root(m) != root(first) and (first, m) not in banned:
            parent[root(m)] = root(first)
            links.append((first, m))
    return links


def _do_not_match_among(ids: Iterable[int]) -> set[tuple[int, int]]:
    ids = list(ids)
    # Only constraints in force: a restore revokes the rows a split wrote (kept on file).
    return set(
        DoNotMatch.objects.filter(a_id__in=ids, b_id__in=ids, revoked_at__isnull=True).values_list(
            "a_id", "b_id"
        )
    )


def _below_floor(*, exact: bool, sim: Similarity, doc_type: str) -> bool:
    """Under the doc type's similarity floor: not the same text, too dissimilar, and
    neither text contained in the other (a teaser stays above the floor)."""
    floor = settings.SIMILARITY_FLOORS.get(doc_type, 60.0)
    return (
        not exact and sim.token_set_ratio < floor and sim.containment < settings.CONTAINMENT_FLOOR
    )


def _pairs_build(
    method: FingerprintMethod, todo: dict[tuple[int, int], int]
) -> list[CandidatePair]:
    if not todo:
        return []
    ids = {d for pair in todo for d in pair}
    documents = {d.pk: d for d in Document.objects.filter(pk__in=ids).only("doc_type")}
    prints: dict[tuple[int, str], Fingerprint] = {
        (f.document_id, f.branch): f
        for f in Fingerprint.objects.filter(method=method, document_id__in=ids).only(
            "document_id", "branch", "simhash", "text_sha256", "status"
        )
    }
    texts = {
        e["document_id"]: e
        for e in Extraction.objects.filter(
            document_id__in=ids, extractor_version=EXTRACTOR_VERSION
        ).values("document_id", "main_text", "title")
    }
    out = []
    for (a, b), distance in todo.items():
        fa, fb = prints[(a, MAIN)], prints[(b, MAIN)]
        va, vb = to_unsigned64(fa.simhash), to_unsigned64(fb.simhash)  # type: ignore[arg-type]
        full_a, full_b = prints.get((a, FULL)), prints.get((b, FULL))
        full_distance = None
        if full_a and full_b and full_a.simhash is not None and full_b.simhash is not None:
            full_distance = hamming(to_unsigned64(full_a.simhash), to_unsigned64(full_b.simhash))
        ta, tb = texts.get(a, {}), texts.get(b, {})
        text_a = normalize_for(method.key, ta.get("main_text", ""))
        text_b = normalize_for(method.key, tb.get("main_text", ""))
        sim = similarity(text_a, text_b, max_chars=settings.SIMILARITY_MAX_CHARS)
        guards = guards_check(text_a, text_b, ta.get("title", ""), tb.get("title", ""))
        type_a, type_b = documents[a].doc_type, documents[b].doc_type
        doc_type = type_a if type_a == type_b else "other"
        if distance > max(threshold_for(type_a), threshold_for(type_b)):
            continue
        out.append(
            CandidatePair(
                method=method,
                a_id=a,
                b_id=b,
                doc_type=doc_type,
                distance=distance,
                full_distance=full_distance,
                xor=to_signed64(va ^ vb),
                band=nominating_band(index.SCHEME, va, vb, query_k()),
                exact=fa.text_sha256 == fb.text_sha256,
                ratio=sim.ratio,
                token_set_ratio=sim.token_set_ratio,
                length_ratio=sim.length_ratio,
                containment=sim.containment,
                numbers_differ=guards.numbers_differ,
                ids_differ=guards.ids_differ,
                title_differs=guards.title_differs,
                guard_details={
                    "numbers_a": list(guards.numbers_a),
                    "numbers_b": list(guards.numbers_b),
                    "ids_a": list(guards.ids_a),
                    "ids_b": list(guards.ids_b),
                },
                below_floor=_below_floor(
                    exact=fa.text_sha256 == fb.text_sha256, sim=sim, doc_type=doc_type
                ),
            )
        )
    return out


# --- groups --------------------------------------------------------------------------


def _lock(method: FingerprintMethod) -> None:
    """One grouping update per method at a time (PostgreSQL advisory lock)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [7331, method.pk])


def _groupable_pairs(method: FingerprintMethod) -> Q:
    return Q(method=method, below_floor=False)


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
            .filter(Q(a_id__in=ids) | Q(b_id__in=ids))
            .values_list("a_id", "b_id")
        ):
            nxt.update((a, b))
        group_ids = GroupMember.objects.filter(method=method, document_id__in=ids).values(
            "group_id"
        )
        nxt.update(
            GroupMember.objects.filter(group_id__in=group_ids).values_list("document_id", flat=True)
        )
        frontier = nxt - area
    return area


@transaction.atomic
def groups_update(*, method: FingerprintMethod, document_ids: Iterable[int]) -> list[int]:
    """Recompute the groups around these documents under the configured rule.

    Existing groups keep their id (and a person's representative) when they keep most
    of their members; groups left with fewer than two members are dissolved, not
    deleted. Returns the ids of the groups that changed."""
    _lock(method)
    area = _area(method, document_ids)
    if not area:
        return []
    edges = [
        grouping.Edge(a, b, d)
        for a, b, d in CandidatePair.objects.filter(
            _groupable_pairs(method), a_id__in=area, b_id__in=area
        ).values_list("a_id", "b_id", "distance")
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
    return _groups_store(method, area, result, candidates)


def _pinned_edges(method: FingerprintMethod, area: set[int]) -> list[grouping.Edge]:
    """A person's merge or restore holds: a member a person put into a group is linked
    to its representative, so recomputing keeps it there (a do-not-match still wins)."""
    rows = GroupMember.objects.filter(
        method=method,
        document_id__in=area,
        added_by__startswith="person:",
        group__dissolved=False,
        group__representative__isnull=False,
    ).values_list("document_id", "group__representative_id")
    return [grouping.Edge(min(d, r), max(d, r), 0) for d, r in rows if d != r and r in area]


def policy_candidates(ids: Iterable[int]) -> list[grouping.Candidate]:
    """What the representative policy looks at, for these documents."""
    ids = list(ids)
    extraction = {
        d: (status, tokens)
        for d, status, tokens in Extraction.objects.filter(
            document_id__in=ids, extractor_version=EXTRACTOR_VERSION
        ).values_list("document_id", "status", "main_tokens")
    }
    status = {d: st for d, (st, _) in extraction.items()}
    tokens = {d: n for d, (_, n) in extraction.items()}
    return [
        grouping.Candidate(
            document_id=d.pk,
            site_priority=d.site.priority,
            extraction_ok=status.get(d.pk) == "ok",
            main_tokens=tokens.get(d.pk, 0),
            fetched_at=d.fetched_at,
            url=d.final_url or d.url,
        )
        for d in Document.objects.filter(pk__in=ids)
        .select_related("site")
        .only("url", "final_url", "fetched_at", "site__priority")
    ]


def _groups_store(
    method: FingerprintMethod,
    area: set[int],
    result: grouping.Grouping,
    candidates: list[grouping.Candidate],
) -> list[int]:
    by_doc = {c.document_id: c for c in candidates}
    current: dict[int, int] = dict(
        GroupMember.objects.filter(method=method, document_id__in=area).values_list(
            "document_id", "group_id"
        )
    )
    groups = {
        g.pk: g
        for g in CandidateGroup.objects.select_for_update().filter(pk__in=set(current.values()))
    }
    conflicts_by_doc: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for a, b in result.conflicts:
        conflicts_by_doc[a].append((a, b))
        conflicts_by_doc[b].append((a, b))

    changed: set[int] = set()
    kept: set[int] = set()
    assignment: dict[int, int] = {}
    # Biggest new groups pick their old group first; a locked (human) group wins ties.
    for members in sorted(result.groups, key=len, reverse=True):
        overlap: dict[int, int] = defaultdict(int)
        for d in members:
            if d in current and current[d] not in kept:
                overlap[current[d]] += 1
        group = None
        if overlap:
            gid = max(overlap, key=lambda g: (overlap[g], groups[g].representative_locked, -g))
            group = groups[gid]
        if group is None:
            group = CandidateGroup.objects.create(
                method=method,
                kind=CandidateGroup.Kind.NEAR,
                rule=settings.GROUP_RULE,
                rule_params=_rule_params(),
            )
            groups[group.pk] = group
        kept.add(group.pk)
        for d in members:
            assignment[d] = group.pk
        if _group_refresh(group, members, by_doc, method, conflicts_by_doc):
            changed.add(group.pk)

    # Memberships follow the assignment; documents in no group lose theirs.
    for d in area:
        old, new = current.get(d), assignment.get(d)
        if old == new:
            continue
        if old is not None:
            changed.add(old)
        if new is None:
            GroupMember.objects.filter(method=method, document_id=d).delete()
        elif old is None:
            GroupMember.objects.create(
                group_id=new, document_id=d, method=method, added_by=f"rule:{settings.GROUP_RULE}"
            )
        else:
            GroupMember.objects.filter(method=method, document_id=d).update(group_id=new)
    for gid, group in groups.items():
        if gid not in kept and not group.dissolved:
            group.dissolved = True
            group.size = 0
            group.version += 1
            group.save()
            changed.add(gid)
    return sorted(changed)


def _rule_params() -> dict[str, object]:
    return {
        "thresholds": settings.CANDIDATE_THRESHOLDS,
        "similarity_floors": settings.SIMILARITY_FLOORS,
        "containment_floor": settings.CONTAINMENT_FLOOR,
        "representative_policy": settings.REPRESENTATIVE_POLICY,
    }


def _group_refresh(
    group: CandidateGroup,
    members: set[int],
    by_doc: dict[int, grouping.Candidate],
    method: FingerprintMethod,
    conflicts_by_doc: dict[int, list[tuple[int, int]]],
) -> bool:
    """Recompute a group's facts; True when anything an editor sees changed."""
    rows = list(
        Fingerprint.objects.filter(method=method, branch=MAIN, document_id__in=members).values_list(
            "document_id", "simhash", "text_sha256"
        )
    )
    prints = {d: value for d, value, _ in rows}
    shas = {sha for _, _, sha in rows}
    ordered = sorted(members)
    diameter, cut = grouping.diameter(
        [to_unsigned64(prints[d]) for d in ordered if prints.get(d) is not None],
        settings.GROUP_PAIRWISE_MAX,
    )
    types = Document.objects.filter(pk__in=members).values_list("doc_type", flat=True)
    limit = max(threshold_for(t) for t in types)
    before = (
        group.size,
        group.representative_id,
        group.diameter,
        group.chained,
        group.kind,
        group.needs_review,
        group.dissolved,
    )
    group.size = len(members)
    group.kind = CandidateGroup.Kind.EXACT if len(shas) == 1 else CandidateGroup.Kind.NEAR
    group.diameter = diameter
    group.chained = diameter > limit
    group.oversized = cut or len(members) > settings.GROUP_LARGE
    group.dissolved = False
    if not (group.representative_locked and group.representative_id in members):
        if group.representative_locked:
            group.needs_review = True
            group.review_note = (
                f"the representative chosen by a person ({group.representative_id}) "
                "left the group with new evidence"
            )
            group.representative_locked = False
        rep, reason = grouping.choose_representative(
            [by_doc[d] for d in members], settings.REPRESENTATIVE_POLICY
        )
        group.representative_id = rep
        group.representative_reason = reason
        group.representative_by = f"rule:{'>'.join(settings.REPRESENTATIVE_POLICY)}"
    conflicts = sorted({c for d in members for c in conflicts_by_doc.get(d, [])})
    if conflicts:
        group.needs_review = True
        group.review_note = "new pairs connect documents a person separated: " + ", ".join(
            f"{a}≠{b}" for a, b in conflicts[:10]
        )
    after = (
        group.size,
        group.representative_id,
        group.diameter,
        group.chained,
        group.kind,
        group.needs_review,
        group.dissolved,
    )
    if before != after:
        group.version += 1
    group.save()
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


@dataclass(frozen=True)
class CheckResult:
    verdict: str  # exact | near | new | insufficient
    method: str
    simhash: str | None
    token_count: int
    threshold: int
    matches: list[CheckMatch]


CHECK_MAX_MATCHES = 10


def check(*, text: str, title: str = "", doc_type: str = "other") -> CheckResult:
    """Is this text a duplicate of something stored? Reads only."""
    from ingest.core.methods import fingerprint_text
    from ingest.core.simhash import to_hex

    key = active_method_key()
    k = threshold_for(doc_type)
    result = fingerprint_text(key, text, min_tokens=settings.FINGERPRINT_MIN_TOKENS)
    if result.simhash is None:
        return CheckResult("insufficient", key, None, result.token_count, k, [])
    method = FingerprintMethod.objects.filter(key=key).first()
    if method is None:
        return CheckResult("new", key, to_hex(result.simhash), result.token_count, k, [])
    hits = {
        h.document_id: h.distance
        for h in index.query(method_id=method.pk, value=result.simhash, k=k)
    }
    exact_ids = list(
        Fingerprint.objects.filter(
            method=method, branch=MAIN, status="ok", text_sha256=result.text_sha256
        ).values_list("document_id", flat=True)[:CHECK_MAX_MATCHES]
    )
    for d in exact_ids:
        hits.setdefault(d, 0)
    nearest = sorted(hits, key=lambda d: (d not in exact_ids, hits[d], d))[:CHECK_MAX_MATCHES]
    texts = {
        e["document_id"]: e
        for e in Extraction.objects.filter(
            document_id__in=nearest, extractor_version=EXTRACTOR_VERSION
        ).values("document_id", "main_text", "title")
    }
    urls = dict(Document.objects.filter(pk__in=nearest).values_list("pk", "url"))
    normalized = normalize_for(key, text)
    matches = []
    for d in nearest:
        other = normalize_for(key, texts.get(d, {}).get("main_text", ""))
        sim = similarity(normalized, other, max_chars=settings.SIMILARITY_MAX_CHARS)
        guards = guards_check(normalized, other, title, texts.get(d, {}).get("title", ""))
        exact = d in exact_ids
        matches.append(
            CheckMatch(
                document_id=d,
                url=urls.get(d, ""),
                distance=hits[d],
                exact=exact,
                ratio=sim.ratio,
                token_set_ratio=sim.token_set_ratio,
                containment=sim.containment,
                guards=guards.flags(),
                below_floor=_below_floor(exact=exact, sim=sim, doc_type=doc_type),
            )
        )
    if any(m.exact for m in matches):
        verdict = "exact"
    elif any(not m.below_floor for m in matches):
        verdict = "near"
    else:
        verdict = "new"
    return CheckResult(verdict, key, to_hex(result.simhash), result.token_count, k, matches)
