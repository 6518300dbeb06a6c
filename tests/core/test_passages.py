import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core import channels
from ingest.core import passages as P

VOCAB = [f"w{i}" for i in range(400)]
word_lists = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=300)
long_word_lists = st.lists(st.sampled_from(VOCAB), min_size=P.GUARANTEE, max_size=400)


def text(ws: list[str]) -> str:
    return " ".join(ws)


def test_method_parameters_are_consistent() -> None:
    assert P.GUARANTEE == P.W + P.K - 1
    assert f"winnow-words-k{P.K}-w{P.W}-v1" == P.METHOD


def test_passages_are_deterministic_and_case_insensitive() -> None:
    a = P.passages("The Quick brown fox jumps over the lazy dog again and again")
    b = P.passages("the quick BROWN fox, jumps over the lazy dog again and again!")
    assert a == b
    assert a  # 12 words: at least one passage


def test_fewer_words_than_k_have_no_passages() -> None:
    assert P.passages("one two three four") == []
    assert P.passages("") == []


@given(word_lists)
def test_containment_bounds_and_symmetry(ws: list[str]) -> None:
    half = len(ws) // 2
    a, b = P.passages(text(ws[: half + 20])), P.passages(text(ws[half:]))
    ov = P.overlap(a, b)
    assert 0.0 <= ov.a_in_b <= 1.0 and 0.0 <= ov.b_in_a <= 1.0
    # |A∩B| is the same seen from either side.
    assert ov.a_in_b * ov.size_a == ov.shared == ov.b_in_a * ov.size_b or ov.shared == 0
    swapped = P.overlap(b, a)
    assert (swapped.a_in_b, swapped.b_in_a, swapped.shared) == (ov.b_in_a, ov.a_in_b, ov.shared)


@given(st.lists(st.sampled_from(VOCAB), min_size=P.K, max_size=300))
def test_a_text_contains_itself_entirely(ws: list[str]) -> None:
    ps = P.passages(text(ws))
    ov = P.overlap(ps, ps)
    assert ov.a_in_b == ov.b_in_a == 1.0


@settings(max_examples=200)
@given(long_word_lists, st.data())
def test_an_excerpt_of_guarantee_words_shares_a_passage(ws: list[str], data: st.DataObject) -> None:
    """Winnowing's guarantee: a shared run of W + K - 1 words shares a passage."""
    start = data.draw(st.integers(0, len(ws) - P.GUARANTEE))
    end = data.draw(st.integers(start + P.GUARANTEE, len(ws)))
    excerpt = ws[start:end]
    ov = P.overlap(P.passages(text(excerpt)), P.passages(text(ws)))
    assert ov.shared >= 1
    assert ov.a_in_b > 0


@given(long_word_lists, st.lists(st.sampled_from(VOCAB), max_size=100))
def test_wrapping_a_text_keeps_it_contained(ws: list[str], intro: list[str]) -> None:
    """Another site's intro and outro around the whole text: B still holds all of A
    except the passages that straddle the seams."""
    a = P.passages(text(ws))
    b = P.passages(text(intro + ws + intro))
    ov = P.overlap(a, b)
    assert ov.shared >= 1


@given(word_lists)
def test_template_passages_are_not_evidence(ws: list[str]) -> None:
    ps = P.passages(text(ws))
    everything = P.hash_set(ps)
    ov = P.overlap(ps, ps, ignore=everything)
    assert ov.shared == 0 and ov.a_in_b == 0.0
    assert ov.template_a == len(everything)


@given(st.lists(st.integers(0, P.MASK64), max_size=500), st.integers(1, 50))
def test_winnow_selects_a_minimum_of_every_window(values: list[int], w: int) -> None:
    hashes = np.array(values, dtype=np.uint64)
    picked = dict(P.winnow(hashes, w))
    if len(values) == 0:
        assert picked == {}
        return
    for i in range(max(1, len(values) - w + 1)):
        window = values[i : i + w]
        assert any(i <= p < i + w for p in picked)
        assert min(window) in {picked[p] for p in picked if i <= p < i + w}


def _winnow_reference(values: list[int], w: int) -> list[tuple[int, int]]:
    """Robust winnowing spelled out: the rightmost minimum of every window."""
    if not values:
        return []
    picked = set()
    for i in range(max(1, len(values) - w + 1)):
        window = values[i : i + w]
        low = min(window)
        picked.add(i + max(j for j, v in enumerate(window) if v == low))
    return [(p, values[p]) for p in sorted(picked)]


@given(
    st.lists(st.integers(0, P.MASK64) | st.integers(0, 5), max_size=400),
    st.integers(1, 50),
)
def test_winnow_picks_exactly_the_rightmost_minimum_of_every_window(
    values: list[int], w: int
) -> None:
    assert P.winnow(np.array(values, dtype=np.uint64), w) == _winnow_reference(values, w)


@given(st.lists(st.text(alphabet="abcdé", min_size=1, max_size=4), max_size=60), st.integers(1, 6))
def test_kgram_hashes_roll_the_word_hashes(words: list[str], k: int) -> None:
    P._WORD_CACHE.clear()  # words seen and not seen alike
    got = P.kgram_hashes(words[: len(words) // 2], k), P.kgram_hashes(words, k)
    for tokens, hashes in zip((words[: len(words) // 2], words), got, strict=True):
        expected = []
        for i in range(len(tokens) - k + 1):
            acc = 0
            for t in tokens[i : i + k]:
                acc = (acc * int(P._MULT) + P._word_hash(t)) & P.MASK64
            expected.append(acc)
        assert P._mix(np.array(expected, dtype=np.uint64)).tolist() == hashes.tolist()


def test_kgram_hashes_hold_when_the_word_cache_fills_up_meanwhile(monkeypatch) -> None:
    words = [f"w{i % 40}" for i in range(200)]
    P._WORD_CACHE.clear()
    expected = P.kgram_hashes(words).tolist()
    P._WORD_CACHE.clear()
    monkeypatch.setattr(P, "_WORD_CACHE_MAX", 8)  # emptied several times on the way
    assert P.kgram_hashes(words).tolist() == expected
    P._WORD_CACHE.clear()


@given(st.lists(st.integers(0, P.MASK64), max_size=300), st.integers(1, 100))
def test_smallest_is_a_consistent_sample(values: list[int], limit: int) -> None:
    kept = P.smallest(values, limit)
    assert kept == sorted(set(kept))
    assert len(kept) == min(limit, len(set(values)))
    # A value kept from a superset is kept from any subset holding it.
    subset = values[: len(values) // 2]
    assert set(kept) & set(subset) <= set(P.smallest(subset, limit))


@given(st.integers(0, P.MASK64))
def test_signed_storage_round_trips(h: int) -> None:
    s = P.to_signed(h)
    assert -(2**63) <= s < 2**63
    assert P.to_unsigned(s) == h


def test_runs_locate_the_shared_stretch_on_both_sides() -> None:
    article = [f"a{i}" for i in range(300)]
    excerpt = article[100:200]
    intro = [f"x{i}" for i in range(50)]
    b_words = intro + excerpt
    ov = P.overlap(P.passages(text(article)), P.passages(text(b_words)))
    assert ov.runs
    for run in ov.runs:
        assert 100 <= run.a_start < run.a_end <= 200
        assert run.b_start - run.a_start == 50 - 100
    assert ov.b_in_a >= 0.6  # B is a third intro, two thirds excerpt of A


def test_char_spans_and_segments_cover_the_text() -> None:
    t = "Hello, big WORLD. Straße und mehr!"
    w = P.words(t)
    spans = P.char_spans(w, [(1, 3)])
    assert [t[s:e] for s, e in spans] == ["big WORLD"]
    segs = P.segments(t, spans)
    assert "".join(s for s, _ in segs) == t
    assert [s for s, hl in segs if hl] == ["big WORLD"]


def test_nominates_needs_both_shared_passages_and_containment() -> None:
    ov = P.Overlap(shared=3, size_a=4, size_b=100)
    assert P.nominates(ov, containment_min=0.5, shared_min=2)
    assert not P.nominates(ov, containment_min=0.5, shared_min=4)
    assert not P.nominates(
        P.Overlap(shared=3, size_a=40, size_b=40), containment_min=0.5, shared_min=2
    )


@given(st.sets(st.sampled_from(sorted(channels.BITS))))
def test_channel_mask_round_trips(names: set[str]) -> None:
    m = channels.mask(names)
    assert set(channels.names(m)) == names
    assert channels.names(0) == []


# Words, spaces of every kind, zero-width characters, letters NFC composes or casefolding
# expands: what could make the fingerprint's normalized words differ from the text's own.
_PIECES = st.sampled_from(
    [
        "word",
        "Straße",
        "ﬁle",
        "e\u0301",
        "\u00e9",
        "Ω",
        "\u212b",
        "A",
        "_",
        "42",
        "中文",
        " ",
        "\t",
        "\n",
        "\u00a0",
        "\u3000",
        "\u2009",
        "\u180e",
        "\u200b",
        "\u200d",
        "\u00ad",
        "\ufeff",
        "-",
        ".",
    ]
)


@settings(max_examples=300)
@given(st.lists(_PIECES, max_size=60).map("".join))
def test_words_taken_from_the_fingerprint_step_are_the_texts_own(text: str) -> None:
    from ingest.core.normalize import nfc_words, recent_words

    nfc_words(text)  # as the fingerprint step reads a text before the search does
    own = P._WORD_RE.findall(text.casefold())
    reused = recent_words(text)
    assert reused is None or reused == own
    assert P.passages(text, k=2, w=3) == P.passages_of(own, k=2, w=3)
