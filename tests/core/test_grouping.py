from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from ingest.core.grouping import (
    Candidate,
    Components,
    Edge,
    choose_representative,
    connected_components,
    diameter,
    representative_centred,
)

POLICY = ["site_priority", "extraction_complete", "newest", "canonical_url"]
T0 = datetime(2026, 5, 1, tzinfo=UTC)


def _c(doc: int, **kw: object) -> Candidate:
    base: dict[str, object] = {
        "document_id": doc,
        "site_priority": 0,
        "extraction_ok": True,
        "main_tokens": 100,
        "fetched_at": T0,
        "url": f"https://example.com/{doc}",
    }
    base.update(kw)
    return Candidate(**base)  # type: ignore[arg-type]


def test_a_chain_is_one_component() -> None:
    result = connected_components([1, 2, 3, 4], [Edge(1, 2, 1), Edge(2, 3, 2)], [])
    assert result.groups == [{1, 2, 3}]
    assert result.conflicts == []


def test_do_not_match_is_never_grouped_even_through_a_chain() -> None:
    result = connected_components([1, 2, 3], [Edge(1, 2, 1), Edge(2, 3, 2)], [(1, 3)])
    assert all(not {1, 3} <= g for g in result.groups)
    assert {1, 2} in result.groups
    assert result.conflicts == [(2, 3)]


def test_centred_rule_does_not_chain() -> None:
    edges = [Edge(1, 2, 2), Edge(2, 3, 2)]  # 1 and 3 are 4 apart: no pair between them
    result = representative_centred([1, 2, 3], edges, [], threshold=3)
    assert result.groups == [{1, 2}]


def test_representative_reason_names_the_deciding_step() -> None:
    rep, why = choose_representative([_c(1, site_priority=5), _c(2, site_priority=10)], POLICY)
    assert (rep, why) == (2, "site priority 10 > 5")
    rep, why = choose_representative(
        [_c(1, fetched_at=T0), _c(2, fetched_at=T0 + timedelta(days=1))], POLICY
    )
    assert rep == 2 and why.startswith("newest snapshot")
    rep, why = choose_representative(
        [_c(1, url="http://example.com/a"), _c(2, url="https://example.com/abc")], POLICY
    )
    assert (rep, why) == (2, "https URL")
    rep, why = choose_representative([_c(1, extraction_ok=False), _c(2)], POLICY)
    assert rep == 2 and "extraction complete" in why


def test_diameter_is_the_widest_pair_and_says_when_cut() -> None:
    assert diameter([0b0, 0b1, 0b111], 10) == (3, False)
    assert diameter([0, 1, 2**64 - 1], 2) == (1, True)


edges_st = st.lists(
    st.builds(Edge, st.integers(0, 15), st.integers(0, 15), st.integers(0, 6)).filter(
        lambda e: e.a != e.b
    ),
    max_size=40,
)
dnm_st = st.lists(
    st.tuples(st.integers(0, 15), st.integers(0, 15)).filter(lambda p: p[0] != p[1]), max_size=8
)


@given(edges_st, dnm_st)
def test_no_rule_ever_groups_a_do_not_match_pair(
    edges: list[Edge], dnm: list[tuple[int, int]]
) -> None:
    docs = list(range(16))
    for result in (
        connected_components(docs, edges, dnm),
        representative_centred(docs, edges, dnm, threshold=6),
    ):
        for group in result.groups:
            assert not any(a in group and b in group for a, b in dnm)
        seen: set[int] = set()
        for group in result.groups:
            assert not (group & seen), "a document is in two groups"
            seen |= group


@given(edges_st)
def test_without_constraints_components_match_plain_connectivity(edges: list[Edge]) -> None:
    docs = list(range(16))
    result = connected_components(docs, edges, [])
    for e in edges:
        assert any(e.a in g and e.b in g for g in result.groups)


def test_a_containment_edge_joins_whatever_its_distance_under_the_centred_rule() -> None:
    # 1 is the article; 2 and 3 two excerpts of it (20 bits away, sharing nothing).
    edges = [Edge(1, 2, 20, contained=True), Edge(1, 3, 22, contained=True)]
    result = representative_centred([1, 2, 3], edges, [], threshold=3)
    assert result.groups == [{1, 2, 3}]
    plain = representative_centred([1, 2, 3], [Edge(1, 2, 20), Edge(1, 3, 22)], [], 3)
    assert plain.groups == []


def test_the_most_complete_version_is_the_representative_and_says_so() -> None:
    policy = ["most_complete", *POLICY]
    article = _c(1, contains=2, main_tokens=900)
    excerpt = _c(2, site_priority=10, main_tokens=300)
    other = _c(3, main_tokens=250)
    rep, reason = choose_representative([excerpt, article, other], policy)
    assert rep == 1
    assert reason == "most complete version: contains the text of 2 other members"


def test_without_containment_the_policy_falls_through_to_the_next_step() -> None:
    rep, reason = choose_representative([_c(1), _c(2, site_priority=5)], ["most_complete", *POLICY])
    assert rep == 2 and reason.startswith("site priority")


# --- the original of a copy made across sites --------------------------------------


def _declaring(
    doc: int,
    *,
    host: str,
    name: str = "",
    credits: tuple[str, ...] = (),
    published: datetime | None = None,
    fetched_day: int = 1,
) -> Candidate:
    from ingest.core.provenance import names_of

    return Candidate(
        document_id=doc,
        site_priority=0,
        extraction_ok=True,
        main_tokens=500,
        fetched_at=datetime(2026, 5, fetched_day, tzinfo=UTC),
        url=f"https://{host}/{doc}",
        names=frozenset(names_of(name, host)),
        credits=credits,
        published_at=published,
    )


ORIGINAL_FIRST = ["declared_original", "most_complete", "earliest_fetch", "site_priority"]


def test_the_page_another_member_credits_is_the_original() -> None:
    wire = _declaring(1, host="www.news.cn", name="新华网", fetched_day=3)
    repost = _declaring(2, host="www.163.com", credits=("新华网",), fetched_day=1)
    rep, why = choose_representative([repost, wire], ORIGINAL_FIRST)
    assert rep == 1 and "credit" in why


def test_a_page_crediting_another_members_site_is_not_the_original() -> None:
    # The credited site's page does not declare a name a credit would match.
    a = _declaring(1, host="tt.example.vn", fetched_day=5)
    b = _declaring(2, host="baomoi.com", credits=("Tuổi Trẻ",), fetched_day=1)
    c = _declaring(3, host="vnexpress.net", credits=("Tuổi Trẻ",), fetched_day=2)
    rep, _ = choose_representative([b, c, a], ORIGINAL_FIRST)
    # Neither credit names a member: no declaration decides, the earlier fetch does.
    assert rep == 2
    named = _declaring(1, host="tt.example.vn", name="Tuổi Trẻ", fetched_day=5)
    rep, why = choose_representative([b, c, named], ORIGINAL_FIRST)
    assert rep == 1 and "2 other members credit its site" in why


def test_the_earlier_publication_decides_when_nobody_credits() -> None:
    early = _declaring(
        1, host="a.example", published=datetime(2026, 4, 1, tzinfo=UTC), fetched_day=9
    )
    late = _declaring(
        2, host="b.example", published=datetime(2026, 4, 2, tzinfo=UTC), fetched_day=1
    )
    rep, why = choose_representative([late, early], ORIGINAL_FIRST)
    assert rep == 1 and why.startswith("published first")


def test_then_the_earlier_fetch() -> None:
    first = _declaring(1, host="a.example", fetched_day=1)
    second = _declaring(2, host="b.example", fetched_day=2)
    rep, why = choose_representative([second, first], ORIGINAL_FIRST)
    assert rep == 1 and why.startswith("earliest fetch")


@given(st.permutations([1, 2, 3, 4]))
def test_the_original_does_not_depend_on_the_order_given(order: list[int]) -> None:
    pages = {
        1: _declaring(1, host="www.news.cn", name="新华网", fetched_day=4),
        2: _declaring(2, host="www.163.com", credits=("新华网",), fetched_day=1),
        3: _declaring(3, host="www.sohu.com", credits=("新华网",), fetched_day=2),
        4: _declaring(4, host="www.qq.com", fetched_day=3),
    }
    rep, _ = choose_representative([pages[i] for i in order], ORIGINAL_FIRST)
    assert rep == 1


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=30))
def test_components_connect_exactly_what_the_pairs_reach(pairs: list[tuple[int, int]]) -> None:
    connected = Components()
    for a, b in pairs:
        connected.join(a, b)
    reach = {d: {d} for d in range(13)}
    for _ in range(13):  # transitive closure by repeated merging
        for a, b in pairs:
            reach[a] = reach[b] = reach[a] | reach[b]
        for d in range(13):
            reach[d] = set().union(*(reach[x] for x in reach[d]))
    for a in range(13):
        for b in range(13):
            assert connected.same(a, b) == (b in reach[a])
