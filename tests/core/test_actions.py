"""reviews.core.actions_math: calibration errors per merge action, by re-running the rule."""

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core import grouping
from reviews.core.actions_math import (
    ActionRow,
    DocFacts,
    LabelledLink,
    ScoredPair,
    action_sweep,
    groups_at,
    labelled_components,
)
from reviews.core.scores import SIMHASH_DISTANCE, TOKEN_SET_RATIO, Score

POLICY = ("site_priority", "extraction_complete", "newest", "canonical_url")
WHEN = datetime(2026, 5, 1, tzinfo=UTC)


def facts(ids, priority=None, doc_type="article"):
    priority = priority or {}
    return {
        d: DocFacts(
            candidate=grouping.Candidate(
                document_id=d,
                site_priority=priority.get(d, 0),
                extraction_ok=True,
                main_tokens=100,
                fetched_at=WHEN,
                url=f"https://s.example.com/{d}",
            ),
            doc_type=doc_type,
        )
        for d in ids
    }


def sweep(
    pairs, labels, docs, *, rule=grouping.CONNECTED, score: Score = SIMHASH_DISTANCE, ts=None
) -> list[ActionRow]:
    return action_sweep(
        score,
        ts if ts is not None else [float(t) for t in range(8)],
        pairs,
        labels,
        docs,
        rule=rule,
        policy=POLICY,
        cost_false_merge=10,
        cost_missed=1,
    )


def test_a_chain_makes_a_wrong_merge_that_the_pair_metric_does_not_see() -> None:
    # 1–2–3–4 each 1 bit apart; 1 and 4 are 9 bits apart and labelled distinct.
    pairs = [ScoredPair(1, 2, 1), ScoredPair(2, 3, 1), ScoredPair(3, 4, 1), ScoredPair(1, 4, 9)]
    labels = [LabelledLink(1, 4, positive=False, score=9, pair_id=77)]
    rows = sweep(pairs, labels, facts([1, 2, 3, 4], priority={1: 10}))
    at3 = rows[3]
    assert at3.pair_false_merges == 0 and at3.cost_pairs == 0  # the pair metric: all fine
    assert at3.wrong_groups == 1 and at3.largest_wrong_group == 4  # one wrong merge action
    assert at3.cost_actions == 10
    (group,) = at3.worst
    assert group.members == (1, 2, 3, 4) and group.representative == 1
    assert group.hidden_wrongly == (4,)
    assert [x.pair_id for x in group.distinct_pairs] == [77]
    assert rows[0].wrong_groups == 0 and rows[0].groups == 0


def test_one_wrong_member_in_a_group_of_40_is_one_action_and_39_pairs() -> None:
    good = list(range(1, 40))
    wrong = 100
    pairs = [ScoredPair(1, d, 1) for d in good[1:]] + [ScoredPair(1, wrong, 2)]
    labels = [LabelledLink(d, wrong, positive=False, score=2) for d in good]
    docs = facts([*good, wrong], priority={1: 10, wrong: 7}, doc_type="product")
    row = sweep(pairs, labels, docs)[2]
    assert row.pair_false_merges == 39 and row.cost_pairs == 390
    assert row.wrong_groups == 1 and row.cost_actions == 10
    assert row.largest_wrong_group == 40
    assert row.hidden_wrongly == 1
    assert [(h.doc_type, h.site_priority, h.documents) for h in row.hidden_by] == [
        ("product", 7, 1)
    ]
    assert row.distinct_pairs_grouped == 39


def test_hidden_wrongly_follows_chains_of_same_labels() -> None:
    # Group {1, 2, 3}; 1 is the representative; 1 = 2 (labelled), 2 ≠ 3 (labelled):
    # 3 differs from the representative's page; 2 does not.
    pairs = [ScoredPair(1, 2, 1), ScoredPair(1, 3, 1)]
    labels = [
        LabelledLink(1, 2, positive=True, score=1),
        LabelledLink(2, 3, positive=False, score=2),
    ]
    row = sweep(pairs, labels, facts([1, 2, 3], priority={1: 5}))[1]
    assert row.wrong_groups == 1
    assert row.worst[0].hidden_wrongly == (3,)
    assert row.missed_pairs == 0


def test_when_the_representative_is_unknown_relative_to_the_pair_nothing_is_hidden() -> None:
    pairs = [ScoredPair(1, 2, 1), ScoredPair(1, 3, 1)]
    labels = [LabelledLink(2, 3, positive=False, score=2)]
    row = sweep(pairs, labels, facts([1, 2, 3], priority={1: 5}))[1]
    assert row.wrong_groups == 1 and row.hidden_wrongly == 0


def test_the_representative_centred_rule_is_the_one_rerun() -> None:
    # 1–2 and 2–3 one bit; 1–3 labelled distinct (3 bits). Centred on 2 (highest
    # priority) the group takes both; centred on 1 it does not take 3.
    pairs = [ScoredPair(1, 2, 1), ScoredPair(2, 3, 1), ScoredPair(1, 3, 3)]
    labels = [LabelledLink(1, 3, positive=False, score=3)]
    on_2 = sweep(pairs, labels, facts([1, 2, 3], priority={2: 9}), rule=grouping.CENTRED)
    on_1 = sweep(pairs, labels, facts([1, 2, 3], priority={1: 9}), rule=grouping.CENTRED)
    assert on_2[1].wrong_groups == 1
    assert on_1[1].wrong_groups == 0 and on_1[1].groups == 1
    # Connected components would chain them in both cases.
    assert sweep(pairs, labels, facts([1, 2, 3], priority={1: 9}))[1].wrong_groups == 1


def test_missed_pairs_count_same_labels_left_in_different_groups() -> None:
    pairs = [ScoredPair(1, 2, 5)]
    labels = [LabelledLink(1, 2, positive=True, score=5)]
    rows = sweep(pairs, labels, facts([1, 2]))
    assert [r.missed_pairs for r in rows[:6]] == [1, 1, 1, 1, 1, 0]
    assert rows[4].cost_actions == 1 and rows[5].cost_actions == 0


def test_a_higher_is_closer_score_plugs_in_by_its_descriptor() -> None:
    pairs = [ScoredPair(1, 2, 97), ScoredPair(2, 3, 91)]
    labels = [LabelledLink(1, 3, positive=False, score=40)]
    rows = sweep(pairs, labels, facts([1, 2, 3]), score=TOKEN_SET_RATIO, ts=[95.0, 90.0])
    assert [r.wrong_groups for r in rows] == [0, 1]
    assert [r.pair_false_merges for r in rows] == [0, 0]


def test_only_components_with_a_label_need_facts() -> None:
    pairs = [ScoredPair(1, 2, 1), ScoredPair(8, 9, 1)]
    labels = [LabelledLink(1, 2, positive=True, score=1)]
    assert labelled_components(pairs, {1, 2}) == {1, 2}
    rows = sweep(pairs, labels, facts([1, 2]))  # no facts for 8, 9: not needed
    assert rows[1].groups == 1
    with pytest.raises(ValueError, match="no facts"):
        sweep(pairs, labels, facts([1]))


EDGE = st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 7)).filter(
    lambda e: e[0] != e[1]
)


@settings(max_examples=60, deadline=None)
@given(edges=st.lists(EDGE, max_size=25), marks=st.lists(st.booleans(), min_size=25, max_size=25))
def test_action_counts_agree_with_the_pairs_for_connected_components(edges, marks) -> None:
    seen: dict[tuple[int, int], int] = {}
    for a, b, d in edges:
        seen.setdefault((min(a, b), max(a, b)), d)
    pairs = [ScoredPair(a, b, d) for (a, b), d in seen.items()]
    labels = [LabelledLink(p.a, p.b, positive=marks[i], score=p.score) for i, p in enumerate(pairs)]
    rows = sweep(pairs, labels, facts(range(10)))
    for prev, row in zip(rows, rows[1:], strict=False):
        # Single linkage only ever joins more as the threshold grows.
        assert row.distinct_pairs_grouped >= prev.distinct_pairs_grouped
        assert row.missed_pairs <= prev.missed_pairs
    for row in rows:
        # Every labelled-distinct pair within the threshold is in one group (all
        # labelled pairs are joinable here), and one group can hold several.
        assert row.distinct_pairs_grouped >= row.pair_false_merges
        assert row.wrong_groups <= row.distinct_pairs_grouped
        assert (row.largest_wrong_group >= 2) == (row.wrong_groups > 0)
        assert row.missed_pairs <= row.pair_missed
        assert row.cost_actions <= row.cost_pairs + 10 * row.wrong_groups


@settings(max_examples=60, deadline=None)
@given(
    edges=st.lists(EDGE, max_size=30),
    order=st.permutations(list(range(10))),
    t=st.integers(0, 7),
)
def test_the_centred_rule_per_component_groups_as_the_shipped_rule_does(edges, order, t) -> None:
    seen: dict[tuple[int, int], int] = {}
    for a, b, d in edges:
        seen.setdefault((min(a, b), max(a, b)), d)
    pairs = [ScoredPair(a, b, d) for (a, b), d in seen.items()]
    shipped = grouping.representative_centred(
        order, [grouping.Edge(p.a, p.b, int(p.score)) for p in pairs], (), t
    ).groups
    ours = groups_at(
        SIMHASH_DISTANCE, t, pairs, list(range(10)), rule=grouping.CENTRED, ranked=order
    )
    assert sorted(map(sorted, ours)) == sorted(map(sorted, shipped))
