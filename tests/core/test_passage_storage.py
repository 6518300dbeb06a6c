"""What the passage index keeps of a text (ingest.core.passages.Storage): the coarse
storage's picks are the larger window's winnowing, its guarantee holds for all inputs,
short texts keep every passage, and the residue sample (a variant) is consistent."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core import passages as P

VOCAB = [f"w{i}" for i in range(3000)]
words = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=700)
SMALL_VOCAB = [f"w{i}" for i in range(12)]  # many repeated k-grams: ties everywhere
tied_words = st.lists(st.sampled_from(SMALL_VOCAB), min_size=0, max_size=400)
RUN = P.COARSE.window + P.K - 1  # the coarse storage's guarantee, in words


def test_the_shipped_storages() -> None:
    assert P.WHOLE.window == 0 and P.WHOLE.limit == P.STORED_MAX
    assert (P.COARSE.window, P.COARSE.whole_max, P.COARSE.lookup_min) == (150, 24, 1)
    assert P.STORAGES == {"smallest64-v1": P.WHOLE, "coarse-w150-whole24-v1": P.COARSE}
    assert RUN == 154


@settings(max_examples=60, deadline=None)
@given(st.one_of(words, tied_words), st.sampled_from([40, 100, 150]))
def test_coarse_picks_hold_the_larger_windows_winnowing(ws: list[str], window: int) -> None:
    found = P.passages_of(ws)
    picks = P.coarse(found, window)
    large = {h for _, h in P.winnow(P.kgram_hashes(ws), window)}
    assert large <= picks <= P.hash_set(found)


def coarse_by_scan(found: list[P.Passage], window: int, w: int = P.W) -> set[int]:
    """The coarse picks read window by window, each window's minimum by a scan: what
    P.coarse's sliding minimum must equal."""
    if not found:
        return set()
    items = sorted((p.start, p.hash) for p in found)
    pos = [p for p, _ in items]
    last_start = max(0, pos[-1] + w - window)
    starts = {0} | {p + 1 for p in pos} | {p - window + 1 for p in pos}
    picks: set[int] = set()
    for i in starts:
        if not 0 <= i <= last_start:
            continue
        inside = [j for j, p in enumerate(pos) if i <= p < i + window]
        if inside:
            picks.add(items[min(inside, key=lambda j: (items[j][1], -j))][1])
    return picks


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 600), st.integers(0, 20)), min_size=0, max_size=120),
    st.sampled_from([1, 5, 40, 150]),
    st.sampled_from([1, 36]),
)
def test_coarse_is_each_windows_minimum(raw: list[tuple[int, int]], window: int, w: int) -> None:
    # Few distinct hashes and repeated positions: ties everywhere.
    found = [P.Passage(h, start) for start, h in raw]
    assert P.coarse(found, window, w) == coarse_by_scan(found, window, w)


@settings(max_examples=40, deadline=None)
@given(words, words, words, st.lists(st.sampled_from(VOCAB), min_size=RUN, max_size=RUN + 80))
def test_a_shared_run_of_the_guarantee_shares_a_stored_passage(
    a_head: list[str], a_tail: list[str], b_head: list[str], run: list[str]
) -> None:
    a = a_head + run + a_tail
    b = b_head + run
    pa, pb = P.passages_of(a), P.passages_of(b)
    # Either text's stored set meets the other's whole set (what its lookup asks with).
    assert set(P.COARSE.stored(pa)) & P.hash_set(pb)
    assert set(P.COARSE.stored(pb)) & P.hash_set(pa)


@settings(max_examples=40, deadline=None)
@given(tied_words, tied_words, st.lists(st.sampled_from(SMALL_VOCAB), min_size=RUN, max_size=200))
def test_the_guarantee_holds_with_repeated_k_grams(
    head: list[str], tail: list[str], run: list[str]
) -> None:
    pa, pb = P.passages_of(head + run + tail), P.passages_of(run)
    assert set(P.COARSE.stored(pa)) & P.hash_set(pb)


@settings(max_examples=60, deadline=None)
@given(st.one_of(words, tied_words))
def test_the_stored_set_is_among_the_texts_passages_and_short_texts_keep_all(
    ws: list[str],
) -> None:
    found = P.passages_of(ws)
    stored = P.COARSE.stored(found)
    assert set(stored) <= P.hash_set(found)
    assert stored == sorted(stored) and len(stored) <= P.COARSE.limit
    if len(P.hash_set(found)) <= P.COARSE.whole_max:
        assert set(stored) == P.hash_set(found)


def test_a_long_text_keeps_about_one_passage_in_four() -> None:
    ws = [f"t{i}" for i in range(6000)]
    found = P.passages_of(ws)
    stored = P.COARSE.stored(found)
    assert len(P.hash_set(found)) > P.COARSE.limit
    # 2 / (150 + 1) a word against 2 / (36 + 1), capped at the limit.
    assert len(stored) == P.COARSE.limit
    part = P.passages_of(ws[:800])
    assert len(P.hash_set(part)) / 6 < len(P.COARSE.stored(part)) < len(P.hash_set(part)) / 2


@settings(max_examples=40, deadline=None)
@given(words, words, st.lists(st.sampled_from(VOCAB), min_size=40, max_size=300))
def test_the_residue_sample_is_consistent(a_rest: list[str], b_rest: list[str], shared: list[str]):
    sample = P.Storage("residue4", modulus=4, limit=10_000)
    pa, pb = P.passages_of(shared + a_rest), P.passages_of(b_rest + shared)
    kept_a, kept_b = set(sample.stored(pa)), set(sample.stored(pb))
    both = P.hash_set(pa) & P.hash_set(pb)
    # A passage kept in one text is kept in every text that holds it.
    assert kept_a & both == kept_b & both == {h for h in both if h % 4 == 0}


def test_the_lookup_minimum() -> None:
    assert P.WHOLE.shared_min(3) == 3
    assert P.COARSE.shared_min(3) == 1
    assert P.COARSE.shared_min(1) == 1
    assert P.Storage("x", lookup_min=2).shared_min(3) == 2


def test_no_passages_store_nothing() -> None:
    assert P.COARSE.stored([]) == []
    assert P.coarse([], 150) == set()
