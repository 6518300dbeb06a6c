"""Grouping rules over candidate pairs (the index nominates, people
decide, and every decision is on the record): pure, named, versioned.

A rule turns documents and their groupable pairs into groups. Do-not-match
constraints (a person said two documents differ) are hard: no rule ever puts such
documents in one group; where the pairs would have joined them, the rule reports a
conflict instead, for a person to look at.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from ingest.core.provenance import credits_name

CONNECTED = "connected-components-v1"
CENTRED = "representative-centred-v1"
RULES = (CONNECTED, CENTRED)


@dataclass(frozen=True)
class Edge:
    a: int
    b: int
    distance: int
    # One text holds most of the other's passages (an excerpt and its article): the
    # pair is near whatever its SimHash distance.
    contained: bool = False


@dataclass
class Grouping:
    groups: list[set[int]]
    # Pairs (a, b) whose union was refused because of a do-not-match constraint.
    conflicts: list[tuple[int, int]] = field(default_factory=list)


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


class Components:
    """Union-find over document ids: which documents the pairs joined so far connect."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def root(self, x: int) -> int:
        parent = self.parent
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(self, a: int, b: int) -> None:
        self.parent[self.root(a)] = self.root(b)

    def same(self, a: int, b: int) -> bool:
        return self.root(a) == self.root(b)


def connected_components(
    documents: Iterable[int], edges: Sequence[Edge], do_not_match: Iterable[tuple[int, int]]
) -> Grouping:
    """Single linkage under cannot-link constraints: edges are joined nearest first and
    a join that would put a do-not-match pair in one group is refused (a conflict)."""
    parent: dict[int, int] = {d: d for d in documents}
    members: dict[int, set[int]] = {d: {d} for d in parent}
    banned: dict[int, set[int]] = {d: set() for d in parent}
    for a, b in do_not_match:
        if a in parent and b in parent:
            banned[a].add(b)
            banned[b].add(a)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    conflicts: list[tuple[int, int]] = []
    for edge in sorted(edges, key=lambda e: (e.distance, e.a, e.b)):
        ra, rb = find(edge.a), find(edge.b)
        if ra == rb:
            continue
        small, large = sorted((ra, rb), key=lambda r: len(members[r]))
        if any(banned[m] & members[large] for m in members[small]):
            conflicts.append(_pair(edge.a, edge.b))
            continue
        parent[small] = large
        members[large] |= members.pop(small)
    groups = [m for r, m in members.items() if find(r) == r and len(m) > 1]
    return Grouping(groups=groups, conflicts=conflicts)


def representative_centred(
    ranked: Sequence[int],
    edges: Sequence[Edge],
    do_not_match: Iterable[tuple[int, int]],
    threshold: int,
) -> Grouping:
    """Documents in representative-policy order: the best unassigned one founds a group,
    and a document joins only when it is within `threshold` of that representative (no
    chaining through other members)."""
    near: dict[int, dict[int, int]] = {d: {} for d in ranked}
    for e in edges:
        if e.a in near and e.b in near and (e.distance <= threshold or e.contained):
            near[e.a][e.b] = e.distance
            near[e.b][e.a] = e.distance
    banned = {_pair(a, b) for a, b in do_not_match}
    assigned: set[int] = set()
    groups: list[set[int]] = []
    conflicts: list[tuple[int, int]] = []
    for rep in ranked:
        if rep in assigned:
            continue
        group = {rep}
        for doc in ranked:
            if doc in assigned or doc in group or doc not in near[rep]:
                continue
            clash = next((m for m in group if _pair(m, doc) in banned), None)
            if clash is not None:
                conflicts.append(_pair(clash, doc))
                continue
            group.add(doc)
        if len(group) > 1:
            assigned |= group
            groups.append(group)
    return Grouping(groups=groups, conflicts=conflicts)


@dataclass(frozen=True)
class Candidate:
    """What the representative policy looks at for one document."""

    document_id: int
    site_priority: int
    extraction_ok: bool
    main_tokens: int
    fetched_at: datetime
    url: str
    # Members of its group whose text this document contains (passage channel): the
    # most complete version of an excerpted article holds the others.
    contains: int = 0
    # What the page declares (ingest.core.provenance): its publication time, the names a
    # credit line may give its site, and the sources it credits itself.
    published_at: datetime | None = None
    names: frozenset[str] = frozenset()
    credits: tuple[str, ...] = ()


def _https(url: str) -> bool:
    return url.lower().startswith("https://")


POLICY_STEPS = (
    "declared_original",
    "most_complete",
    "site_priority",
    "extraction_complete",
    "newest",
    "earliest_fetch",
    "canonical_url",
)
_NEVER = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True)
class _Declared:
    """A candidate's standing among the others by what the pages declare."""

    credited_by: int  # other members crediting this page's site
    credits_other: bool  # this page credits another member's site
    published_at: datetime


def _declared(candidates: Sequence[Candidate]) -> dict[int, _Declared]:
    # Only members with credit lines can credit anyone (most groups have none): the
    # pairwise comparison runs over those alone.
    crediting = [c for c in candidates if c.credits]
    out = {}
    for c in candidates:
        out[c.document_id] = _Declared(
            credited_by=sum(
                1
                for o in crediting
                if o.document_id != c.document_id and credits_name(o.credits, c.names)
            ),
            credits_other=bool(c.credits)
            and any(
                credits_name(c.credits, o.names)
                for o in candidates
                if o.document_id != c.document_id
            ),
            published_at=c.published_at or _NEVER,
        )
    return out


def _key(
    c: Candidate, step: str, declared: dict[int, _Declared] | None = None
) -> tuple[object, ...]:
    """Smaller is better."""
    if step == "declared_original":
        d = (declared or {}).get(c.document_id)
        if d is None:
            return (0, False, _NEVER)
        return (-d.credited_by, d.credits_other, d.published_at)
    if step == "earliest_fetch":
        return (c.fetched_at.timestamp(),)
    if step == "most_complete":
        return (-c.contains,)
    if step == "site_priority":
        return (-c.site_priority,)
    if step == "extraction_complete":
        return (not c.extraction_ok, -c.main_tokens)
    if step == "newest":
        return (-c.fetched_at.timestamp(),)
    if step == "canonical_url":
        return (not _https(c.url), len(c.url))
    raise ValueError(f"unknown representative policy step {step!r}; known: {POLICY_STEPS}")


def _why(
    best: Candidate, other: Candidate, step: str, declared: dict[int, _Declared] | None = None
) -> str:
    if step == "declared_original":
        b, o = (declared or {})[best.document_id], (declared or {})[other.document_id]
        if b.credited_by != o.credited_by:
            n = b.credited_by
            return f"the original: {n} other member{'s' * (n != 1)} credit{'s' * (n == 1)} its site"
        if b.credits_other != o.credits_other:
            return "the original: the other credits another member's site as its source"
        return f"published first ({best.published_at:%Y-%m-%d %H:%M} UTC)"
    if step == "earliest_fetch":
        return (
            f"earliest fetch ({best.fetched_at:%Y-%m-%d %H:%M} < {other.fetched_at:%Y-%m-%d %H:%M})"
        )
    if step == "most_complete":
        n = best.contains
        return f"most complete version: contains the text of {n} other member{'s' * (n != 1)}"
    if step == "site_priority":
        return f"site priority {best.site_priority} > {other.site_priority}"
    if step == "extraction_complete":
        if best.extraction_ok != other.extraction_ok:
            return "extraction complete (the other is not ok)"
        return f"longer main text ({best.main_tokens} > {other.main_tokens} tokens)"
    if step == "newest":
        return (
            f"newest snapshot ({best.fetched_at:%Y-%m-%d %H:%M} > "
            f"{other.fetched_at:%Y-%m-%d %H:%M})"
        )
    if _https(best.url) != _https(other.url):
        return "https URL"
    return f"shorter URL ({len(best.url)} < {len(other.url)} characters)"


def _ranked(
    candidates: Sequence[Candidate], policy: Sequence[str]
) -> tuple[list[Candidate], dict[int, _Declared] | None]:
    declared = _declared(candidates) if "declared_original" in policy else None
    ranked = sorted(
        candidates,
        key=lambda c: (*[_key(c, step, declared) for step in policy], c.document_id),
    )
    return ranked, declared


def rank(candidates: Sequence[Candidate], policy: Sequence[str]) -> list[Candidate]:
    """Best first under the ordered policy; ties end with the lower document id."""
    return _ranked(candidates, policy)[0]


def choose_representative(
    candidates: Sequence[Candidate], policy: Sequence[str]
) -> tuple[int, str]:
    """The suggested representative and the reason, written out against the runner-up."""
    if not candidates:
        raise ValueError("no candidates")
    ranked, declared = _ranked(candidates, policy)
    best = ranked[0]
    if len(ranked) == 1:
        return best.document_id, "only member"
    runner_up = ranked[1]
    for step in policy:
        if _key(best, step, declared) != _key(runner_up, step, declared):
            return best.document_id, _why(best, runner_up, step, declared)
    return best.document_id, "all policy steps tie: lowest document id"


def diameter(values: Sequence[int], limit: int) -> tuple[int, bool]:
    """Largest pairwise Hamming distance among the first `limit` values, and whether the
    set was cut (so the figure is a lower bound)."""
    cut = len(values) > limit
    array = np.array([v & ((1 << 64) - 1) for v in values[:limit]], dtype=np.uint64)
    if len(array) < 2:
        return 0, cut
    widest = 0
    for i in range(len(array) - 1):
        widest = max(widest, int(np.bitwise_count(array[i + 1 :] ^ array[i]).max()))
    return widest, cut
