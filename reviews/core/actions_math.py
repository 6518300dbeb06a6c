"""Calibration errors counted per action: what the groups a threshold would produce do.

Pure: no Django. One clustering decision can make many wrong pairs (a group of 40 with
one wrong member is one bad merge for an editor and 39 wrong pairs for a pair metric),
and a pair metric misses the wrong merges that chaining makes out of pairs that are each
within the threshold. So at every threshold the shipped grouping rule
(ingest/core/grouping.py, connected components or representative-centred, with the
representative policy) is re-run over the candidate pairs whose score is within the
threshold, and the groups are checked against the labels:

- **Wrong group** (one wrong merge action): a group holding both documents of at least
  one pair labelled distinct (negative).
- **Hidden wrongly**: a document, not the representative, that the labels say differs
  from the representative: directly (the pair is labelled distinct) or through pairs
  labelled the same (a positive label chain from the document reaches a document
  labelled distinct from a document the representative's chain reaches). Counted by the
  document's doc type and site priority: an important site's page is visible as such.
- **Missed**: a pair labelled the same (positive) whose documents are not in one group.
- **Cost per action** of automatic merging: ``cost_false_merge`` × wrong groups +
  ``cost_missed`` × missed pairs, beside the **cost per pair**: ``cost_false_merge`` ×
  distinct-labelled pairs within the threshold + ``cost_missed`` × same-labelled pairs
  outside it (the pair metric of the threshold sweep, unweighted here).

The labels are the answer key, so the re-run honours no do-not-match constraint (the
desk's "distinct" labels write some; with them the rule could never be wrong on a
labelled pair). Counts are unweighted: a group is an action, whatever its sampling.
Only the components (at the loosest threshold) that hold a labelled document are
grouped: no group elsewhere can hold a labelled pair.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ingest.core import grouping
from reviews.core.scores import Score


@dataclass(frozen=True)
class ScoredPair:
    """A candidate pair the rule may join (a < b), with its score on the channel."""

    a: int
    b: int
    score: float


@dataclass(frozen=True)
class LabelledLink:
    """A labelled pair: positive (same) or negative (distinct), with its score."""

    a: int
    b: int
    positive: bool
    score: float
    pair_id: int | None = None


@dataclass(frozen=True)
class DocFacts:
    """What the representative policy and the breakdowns need about one document."""

    candidate: grouping.Candidate
    doc_type: str


@dataclass(frozen=True)
class WrongGroup:
    members: tuple[int, ...]  # sorted document ids
    representative: int
    distinct_pairs: tuple[LabelledLink, ...]  # negative-labelled pairs inside the group
    hidden_wrongly: tuple[int, ...]  # members the labels say differ from the representative
    top_priority_hidden: int | None  # highest site priority among them

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class HiddenCount:
    doc_type: str
    site_priority: int
    documents: int


@dataclass(frozen=True)
class ActionRow:
    threshold: float
    groups: int  # groups of two or more the rule forms (among labelled components)
    wrong_groups: int  # groups holding ≥ 1 distinct-labelled pair: wrong merge actions
    distinct_pairs_grouped: int  # distinct-labelled pairs inside one group
    pair_false_merges: int  # distinct-labelled pairs within the threshold (pair metric)
    missed_pairs: int  # same-labelled pairs left in different groups
    pair_missed: int  # same-labelled pairs outside the threshold (pair metric)
    hidden_wrongly: int
    hidden_by: list[HiddenCount]  # by doc type and site priority, highest priority first
    largest_wrong_group: int  # 0 when no group is wrong
    cost_actions: float
    cost_pairs: float
    worst: list[WrongGroup]


class _Union:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def labelled_components(pairs: Iterable[ScoredPair], labelled: Iterable[int]) -> set[int]:
    """Documents in a component (over all given pairs) that holds a labelled document."""
    union = _Union()
    for p in pairs:
        union.join(p.a, p.b)
    roots = {union.find(d) for d in labelled}
    return {d for d in union.parent if union.find(d) in roots} | set(labelled)


def groups_at(
    score: Score,
    threshold: float,
    pairs: Sequence[ScoredPair],
    documents: Sequence[int],
    *,
    rule: str,
    ranked: Sequence[int] = (),
) -> list[set[int]]:
    """The groups the shipped rule forms from the pairs within the threshold."""
    near = [p for p in pairs if score.within(p.score, threshold)]
    # The rules read an integer distance; after filtering only the order matters (for
    # connected components) and nothing else (representative-centred, threshold 0).
    order = sorted(near, key=lambda p: (score.closer_first(p.score), p.a, p.b))
    edges = [grouping.Edge(p.a, p.b, i) for i, p in enumerate(order)]
    if rule == grouping.CONNECTED:
        return grouping.connected_components(documents, edges, ()).groups
    if rule == grouping.CENTRED:
        # A group is a representative and its neighbours, so it never leaves a connected
        # component: running the rule per component gives the same groups, without its
        # quadratic pass over every document of the area.
        union = _Union()
        for e in edges:
            union.join(e.a, e.b)
        by_root: dict[int, list[grouping.Edge]] = defaultdict(list)
        for e in edges:
            by_root[union.find(e.a)].append(grouping.Edge(e.a, e.b, 0))
        ranked_by_root: dict[int, list[int]] = defaultdict(list)
        for d in ranked:
            if d in union.parent:
                ranked_by_root[union.find(d)].append(d)
        out: list[set[int]] = []
        for root, component_edges in by_root.items():
            result = grouping.representative_centred(ranked_by_root[root], component_edges, (), 0)
            out.extend(result.groups)
        return out
    raise ValueError(f"unknown rule {rule!r}; known: {grouping.RULES}")


def _hidden(members: set[int], rep: int, links: Sequence[LabelledLink]) -> list[int]:
    """Members the labels say differ from the representative (see the module rules)."""
    same = _Union()
    for link in links:
        if link.positive and link.a in members and link.b in members:
            same.join(link.a, link.b)
    apart: set[tuple[int, int]] = set()
    for link in links:
        if not link.positive and link.a in members and link.b in members:
            ra, rb = same.find(link.a), same.find(link.b)
            apart.add((ra, rb))
            apart.add((rb, ra))
    rep_root = same.find(rep)
    return sorted(d for d in members if d != rep and (same.find(d), rep_root) in apart)


@dataclass(frozen=True)
class _Analysis:
    groups: int
    wrong: list[WrongGroup]  # worst first
    hidden_by: list[HiddenCount]
    missed: int


def _analyse(
    groups: list[set[int]],
    labels: Sequence[LabelledLink],
    facts: Mapping[int, DocFacts],
    policy: Sequence[str],
) -> _Analysis:
    """Check one grouping against the labels (see the module rules)."""
    group_of = {d: i for i, g in enumerate(groups) for d in g}
    inside: dict[int, list[LabelledLink]] = defaultdict(list)
    for link in labels:
        ga, gb = group_of.get(link.a), group_of.get(link.b)
        if ga is not None and ga == gb:
            inside[ga].append(link)
    wrong: list[WrongGroup] = []
    hidden_counts: dict[tuple[str, int], int] = defaultdict(int)
    for i, links in inside.items():
        distinct = tuple(sorted((x for x in links if not x.positive), key=lambda x: (x.a, x.b)))
        if not distinct:
            continue
        members = groups[i]
        rep, _ = grouping.choose_representative([facts[d].candidate for d in members], policy)
        hidden = _hidden(members, rep, links)
        for d in hidden:
            hidden_counts[(facts[d].doc_type, facts[d].candidate.site_priority)] += 1
        wrong.append(
            WrongGroup(
                members=tuple(sorted(members)),
                representative=rep,
                distinct_pairs=distinct,
                hidden_wrongly=tuple(hidden),
                top_priority_hidden=max(
                    (facts[d].candidate.site_priority for d in hidden), default=None
                ),
            )
        )
    wrong.sort(
        key=lambda g: (
            -len(g.hidden_wrongly),
            -(g.top_priority_hidden if g.top_priority_hidden is not None else -(10**9)),
            -g.size,
            g.members,
        )
    )
    same_group = {(x.a, x.b) for links in inside.values() for x in links}
    return _Analysis(
        groups=len(groups),
        wrong=wrong,
        hidden_by=[
            HiddenCount(doc_type, priority, n)
            for (doc_type, priority), n in sorted(
                hidden_counts.items(), key=lambda kv: (-kv[0][1], kv[0][0])
            )
        ],
        missed=sum(1 for x in labels if x.positive and (x.a, x.b) not in same_group),
    )


def action_sweep(
    score: Score,
    thresholds: Sequence[float],
    pairs: Sequence[ScoredPair],
    labels: Sequence[LabelledLink],
    facts: Mapping[int, DocFacts],
    *,
    rule: str,
    policy: Sequence[str],
    cost_false_merge: float,
    cost_missed: float,
    worst: int = 5,
) -> list[ActionRow]:
    """One ActionRow per threshold. ``pairs`` are the pairs the rule may join (the
    groupable candidate pairs of one doc type and method); ``labels`` the labelled pairs
    (a labelled pair that is not groupable is never joined directly, as in the desk);
    ``facts`` at least every document of the components that hold a labelled document
    (``labelled_components``)."""
    if cost_false_merge < 0 or cost_missed < 0:
        raise ValueError("costs must be >= 0")
    labelled_docs = {d for link in labels for d in (link.a, link.b)}
    area = labelled_components(pairs, labelled_docs)
    missing = sorted(d for d in area if d not in facts)
    if missing:
        raise ValueError(f"no facts for documents {missing[:10]}")
    kept = [p for p in pairs if p.a in area]
    documents = sorted(area)
    ranked = [c.document_id for c in grouping.rank([facts[d].candidate for d in area], policy)]

    # The pairs within a threshold are nested (a closer threshold keeps a subset), so two
    # thresholds with as many pairs within them have the same pairs and the same groups:
    # the rule runs once per distinct edge set.
    analysed: dict[int, _Analysis] = {}
    rows: list[ActionRow] = []
    for t in thresholds:
        n_near = sum(1 for p in kept if score.within(p.score, t))
        if n_near not in analysed:
            groups = groups_at(score, t, kept, documents, rule=rule, ranked=ranked)
            analysed[n_near] = _analyse(groups, labels, facts, policy)
        a = analysed[n_near]
        pair_fm = sum(1 for x in labels if not x.positive and score.within(x.score, t))
        pair_missed = sum(1 for x in labels if x.positive and not score.within(x.score, t))
        rows.append(
            ActionRow(
                threshold=t,
                groups=a.groups,
                wrong_groups=len(a.wrong),
                distinct_pairs_grouped=sum(len(g.distinct_pairs) for g in a.wrong),
                pair_false_merges=pair_fm,
                missed_pairs=a.missed,
                pair_missed=pair_missed,
                hidden_wrongly=sum(h.documents for h in a.hidden_by),
                hidden_by=a.hidden_by,
                largest_wrong_group=max((g.size for g in a.wrong), default=0),
                cost_actions=cost_false_merge * len(a.wrong) + cost_missed * a.missed,
                cost_pairs=cost_false_merge * pair_fm + cost_missed * pair_missed,
                worst=a.wrong[:worst],
            )
        )
    return rows
