"""reviews.core.mincut: the smallest set of links separating two documents."""

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.core.mincut import connected, min_cut


def test_a_bridge_is_the_cut() -> None:
    # Two triangles joined by one link.
    edges = [(1, 2), (2, 3), (1, 3), (3, 4), (4, 5), (5, 6), (4, 6)]
    cut, side = min_cut(edges, 1, 6)
    assert cut == {(3, 4)}
    assert side == {1, 2, 3}


def test_disconnected_documents_need_no_cut() -> None:
    assert min_cut([(1, 2), (3, 4)], 1, 4) == (set(), {1, 2})


def test_a_chain_is_cut_once() -> None:
    cut, _ = min_cut([(1, 2), (2, 3), (3, 4)], 1, 4)
    assert len(cut) == 1


EDGES = st.lists(
    st.tuples(st.integers(0, 6), st.integers(0, 6)).filter(lambda e: e[0] != e[1]),
    max_size=12,
    unique_by=lambda e: frozenset(e),
)


@settings(max_examples=150, deadline=None)
@given(EDGES, st.integers(0, 6), st.integers(0, 6))
def test_the_cut_separates_and_is_minimum(edges: list[tuple[int, int]], s: int, t: int) -> None:
    if s == t:
        return
    cut, side = min_cut(edges, s, t)
    rest = [e for e in edges if e not in cut]
    assert not connected(rest, s, t)
    assert s in side and t not in side
    # No smaller set of links separates them (brute force).
    for k in range(len(cut)):
        for removed in combinations(edges, k):
            kept = [e for e in edges if e not in removed]
            assert connected(kept, s, t)
