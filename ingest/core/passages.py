"""Passage fingerprints, method winnow-words-k5-w36-v1: the partial-copy channel.

SimHash answers "is this the same text, give or take a few words"; it cannot see an
excerpt, a teaser, or a wire story wrapped in another site's introduction and closing
lines (their SimHash distance is 15–25 bits, far past any safe threshold). This module
measures containment directly.

Design: winnowing over word k-grams (Schleimer, Wilkerson & Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003, the algorithm behind MOSS).

- Tokens are the reference tokenizer's words (`\\w+`, casefolded); each word is hashed
  once (first 8 bytes of BLAKE2b), each run of K words gets a 64-bit rolling hash,
  finished by a SplitMix64 mixer so that minima are uniform.
- In every window of W consecutive k-gram hashes the smallest is selected (the
  rightmost on ties: "robust winnowing"). A document's passages are the selected
  hashes with the word position of their k-gram.
- Guarantee: two texts that share a run of at least GUARANTEE = W + K - 1 words share
  at least one passage (every window of that run selects the same minimum in both).
  Shared runs shorter than K words are never evidence (noise threshold).
- Density is about 2 / (W + 1) passages per word: ~35 for a 640-word article. What the
  index stores of them is a ``Storage`` (below): the storage before the dedup budget
  keeps the STORED_MAX smallest hashes (a consistent sample: a hash kept by two
  documents is kept because of its value, not its place); the budget's keeps a long
  text's picks of a winnowing window of 150 (a shared run of 154 words is still found)
  and a short text's every passage. The query side always uses its whole set, so a new
  long document still sees every stored passage of a stored short one.

Why not MinHash LSH Ensemble (datasketch): it answers containment thresholds well on
sets of very different sizes, but a signature is 128–256 hashes per document (1–2 KB
before any index), its answer is probabilistic, it lives in memory or a key-value
store rather than the database every worker shares, it cannot say *where* two texts
overlap (the pair view highlights the shared runs), and a site's template passages
cannot be taken out of a signature after the fact. Winnowed passages are a plain set
of integers with positions: exact set arithmetic for containment both ways, the shared
runs' positions for free, a per-site document frequency per passage, and a GIN index
over a bigint[] in PostgreSQL.

Method winnow-mixed-k5-w36-v1 (the passages of the mixed-script fingerprint method) reads
every character of a CJK run (Han, kana, hangul) as a token and every other script as the
reference's words, after a length-keeping fold (full-width forms and U+3000 to their
compatibility forms, traditional Han to simplified), so the k-grams inside a Han run are
character 5-grams and the guarantee reads in characters: two texts that share a run of
at least GUARANTEE (40) CJK characters share a passage (punctuation inside the run is
not counted: it is no token). On text without CJK characters its passages are the
words method's, hash for hash.

Containment is computed on distinct passage hashes with template passages removed:
a_in_b = |A ∩ B| / |A|, b_in_a = |A ∩ B| / |B| (so a_in_b·|A| = b_in_a·|B|).
No Django here.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ingest.core.normalize import (
    FOLD_BLOCKS,
    GRAM_CLASS,
    han_t2s,
    has_cjk,
    has_han_char,
    recent_words,
)

METHOD = "winnow-words-k5-w36-v1"
MIXED_METHOD = "winnow-mixed-k5-w36-v1"
K = 5  # words per k-gram: shared runs shorter than this are never evidence
W = 36  # k-grams per winnowing window
GUARANTEE = W + K - 1  # a shared run of this many words always shares a passage
STORED_MAX = 64  # passages kept in the index per document (smallest hashes)
QUERY_MAX = 1024  # passages a query looks up (smallest hashes)

_WORD_RE = re.compile(r"\w+")
# Mixed scripts: one CJK character, or a word of any other script.
_MIXED_RE = re.compile(f"(?=\\w)[{GRAM_CLASS}]|[^\\W{GRAM_CLASS}]+")
_MULT = np.uint64(0x100000001B3)  # odd multiplier of the rolling k-gram hash
MASK64 = (1 << 64) - 1


_WORD_CACHE: dict[str, int] = {}
_WORD_CACHE_MAX = 1 << 17


def cache_clear() -> None:
    """Forget the cached word hashes (benchmarks time the cold path with it)."""
    _WORD_CACHE.clear()


def _word_hash(word: str) -> int:
    h = _WORD_CACHE.get(word)
    if h is None:
        h = int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "big")
        if len(_WORD_CACHE) >= _WORD_CACHE_MAX:
            _WORD_CACHE.clear()
        _WORD_CACHE[word] = h
    return h


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer, elementwise on uint64."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@dataclass(frozen=True)
class Words:
    """A text's words (casefolded) and their character spans in the text."""

    tokens: list[str]
    spans: list[tuple[int, int]]
    text: str = ""


def words(text: str, *, method: str = METHOD) -> Words:
    """Spans of the tokens of the casefolded text, mapped back to the text where
    casefolding kept the length (it nearly always does). Under the mixed method the
    text is first folded character for character (``cjk_fold``), so spans stay valid."""
    word_re = _WORD_RE
    source = text
    if method == MIXED_METHOD and has_cjk(text):
        word_re = _MIXED_RE
        source = cjk_fold(text)
    folded = source.casefold()
    spans = [m.span() for m in word_re.finditer(folded)]
    tokens = [folded[s:e] for s, e in spans]
    if len(folded) != len(source):
        spans = _original_spans(source, len(tokens), word_re)
    return Words(tokens, spans, text)


def _original_spans(text: str, count: int, word_re: re.Pattern[str]) -> list[tuple[int, int]]:
    spans = [m.span() for m in word_re.finditer(text)][:count]
    return spans + [(len(text), len(text))] * (count - len(spans))


_FOLD_TABLE: tuple[re.Pattern[str], dict[str, str]] | None = None


def _fold_table() -> tuple[re.Pattern[str], dict[str, str]]:
    """Each character whose NFKC form is one other character (full-width forms, U+3000,
    half-width katakana, compatibility ideographs …) within the mixed normalization's
    CJK blocks, mapped to that form; and a pattern matching them (a page holds a few:
    substituting those is ten times faster than translating every character)."""
    global _FOLD_TABLE
    if _FOLD_TABLE is None:
        table: dict[str, str] = {}
        # Beyond the BMP only the compatibility ideographs supplement has such forms.
        for a, b in (*FOLD_BLOCKS[:-1], (0x2F800, 0x2FA1F)):
            for c in range(a, b + 1):
                ch = chr(c)
                nfkc = unicodedata.normalize("NFKC", ch)
                if len(nfkc) == 1 and nfkc != ch:
                    table[ch] = nfkc
        pattern = re.compile("[" + "".join(map(re.escape, sorted(table))) + "]")
        _FOLD_TABLE = pattern, table
    return _FOLD_TABLE


def cjk_fold(text: str) -> str:
    """The mixed normalization's folding, one character for one: compatibility forms
    of CJK characters and the full-width block, then traditional Han to simplified (kept
    only where it kept the length, as OpenCC's tables do)."""
    pattern, table = _fold_table()
    out = pattern.sub(lambda m: table[m.group()], text)
    if has_han_char(out):
        simplified = han_t2s(out)
        if len(simplified) == len(out):
            out = simplified
    return out


def kgram_hashes(tokens: Sequence[str], k: int = K) -> np.ndarray:
    """The 64-bit hash of every run of k consecutive tokens (len(tokens) - k + 1)."""
    n = len(tokens) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    values = list(map(_WORD_CACHE.get, tokens))
    if None in values:  # words not seen lately: each hashed once, however often it occurs
        for word in set(tokens).difference(_WORD_CACHE):
            _word_hash(word)
        values = list(map(_WORD_CACHE.get, tokens))
    if None in values:  # the cache filled up and was emptied meanwhile
        values = [_word_hash(t) if v is None else v for t, v in zip(tokens, values, strict=True)]
    wh = np.array(values, dtype=np.uint64)
    acc = np.zeros(n, dtype=np.uint64)
    for j in range(k):
        acc = acc * _MULT + wh[j : j + n]
    return _mix(acc)


@dataclass(frozen=True)
class Passage:
    hash: int  # unsigned 64-bit
    start: int  # index of the k-gram's first word


def winnow(hashes: np.ndarray, w: int = W) -> list[tuple[int, int]]:
    """(position, hash) selected by robust winnowing, in position order."""
    n = len(hashes)
    if n == 0:
        return []
    if n <= w:
        pos = n - 1 - int(np.argmin(hashes[::-1]))
        return [(pos, int(hashes[pos]))]
    # The rightmost minimum of a window is the first minimum of the reversed window:
    # windows of the reversed hashes (contiguous rows), window j of them being window
    # n - w - j of the hashes.
    windows = np.lib.stride_tricks.sliding_window_view(np.ascontiguousarray(hashes[::-1]), w)
    rightmost = (n - 1 - np.arange(len(windows)) - np.argmin(windows, axis=1))[::-1]
    # Never decreasing as the window slides: a minimum stays picked until it leaves or
    # an equal or smaller hash enters, so repeats are neighbours.
    positions = rightmost[np.concatenate(([True], rightmost[1:] != rightmost[:-1]))]
    return list(zip(positions.tolist(), hashes[positions].tolist(), strict=True))


def passages(text: str, *, k: int = K, w: int = W, method: str = METHOD) -> list[Passage]:
    """A text's passages, in position order (a hash may repeat at two positions).
    ``method``: METHOD (words) or MIXED_METHOD (CJK characters, words elsewhere)."""
    return passages_of(tokens(text, method=method), k=k, w=w)


def tokens(text: str, *, method: str = METHOD) -> list[str]:
    """The tokens ``method`` winnows: casefolded ``\\w+`` words, or under MIXED_METHOD
    each CJK character after the fold (traditional Han to simplified) and every other
    script's words."""
    if method == MIXED_METHOD and has_cjk(text):
        return _MIXED_RE.findall(cjk_fold(text).casefold())
    found = recent_words(text)  # the fingerprint step's words of the same text
    if found is None:
        found = _WORD_RE.findall(text.casefold())
    return found


def passages_of(tokens: Sequence[str], *, k: int = K, w: int = W) -> list[Passage]:
    return [Passage(h, p) for p, h in winnow(kgram_hashes(tokens, k), w)]


def hash_set(items: Iterable[Passage]) -> set[int]:
    return {p.hash for p in items}


def smallest(hashes: Iterable[int], limit: int) -> list[int]:
    """The `limit` smallest distinct unsigned hashes, ascending: what the index keeps
    (STORED_MAX) and what a query looks up (QUERY_MAX)."""
    return sorted(set(hashes))[:limit]


@dataclass(frozen=True)
class Storage:
    """What the passage index keeps of a text's passages (its stored set), and how many
    of them a lookup hit needs in common with the query's.

    The query side always asks with the whole passage set of its text, and a pair's
    containment is computed on both texts' whole sets: the stored set decides only
    what can be found, never what is nominated.

    - ``window``: a text with more than ``whole_max`` distinct passages keeps, of its
      passages, those a winnowing of the same k-gram hashes with this larger window
      selects (every such pick is one of its passages: the minimum of a large window
      is the minimum of each window of W inside it). Two texts sharing a run of at
      least ``window + K - 1`` words then share a stored passage of either: the run
      holds a whole large window, whose minimum both texts hold as a passage. The
      picks are made from the passages' positions alone (see ``coarse``).
    - ``whole_max``: a text with at most this many distinct passages keeps them all (a
      short text's few passages are all the evidence it has).
    - ``modulus``: (a variant measured, not shipped) only the hashes in one residue class
      are kept (``h % modulus == 0``), a consistent sample of the passages.
    - ``limit``: then at most this many, the smallest (a consistent sample too).
    - ``lookup_min``: the fewest stored passages a hit shares with the query's (0: the
      channel's PASSAGE_SHARED_MIN, as the whole storage asks).
    """

    key: str
    window: int = 0
    whole_max: int = 0
    modulus: int = 1
    limit: int = STORED_MAX
    lookup_min: int = 0

    def stored(self, found: Sequence[Passage]) -> list[int]:
        """The stored set of a text's passages: unsigned hashes, ascending."""
        distinct = hash_set(found)
        if len(distinct) > self.whole_max:
            if self.window:
                distinct = coarse(found, self.window)
            if self.modulus > 1:
                distinct = {h for h in distinct if h % self.modulus == 0}
        return sorted(distinct)[: self.limit]

    def shared_min(self, channel_min: int) -> int:
        """The fewest stored passages a lookup hit needs, given the channel's minimum of
        shared passages (PASSAGE_SHARED_MIN, or fewer for a short CJK text)."""
        return min(channel_min, self.lookup_min) if self.lookup_min else channel_min


def coarse(found: Sequence[Passage], window: int, w: int = W) -> set[int]:
    """Of a text's passages (its winnowing under ``w``), the hashes a winnowing of the
    same k-grams under the larger ``window`` selects, from the passages' positions
    alone: for every run of ``window`` consecutive k-gram positions, the smallest
    passage hash in it (the rightmost on ties), the runs starting anywhere from the
    text's first k-gram to where its last could be (the last passage is within ``w``
    of the last k-gram: its last window of ``w`` selected a passage). That takes every
    large window the text has, and at most ``w`` more, shorter ones at its end; so it
    holds the large winnowing's picks, and a run of ``window + K - 1`` words shared
    with another text holds one of them."""
    if not found:
        return set()
    items = sorted((p.start, p.hash) for p in found)
    pos = [p for p, _ in items]
    values = [h for _, h in items]
    last_start = max(0, pos[-1] + w - window)
    # The passages in a window [i, i + window) change only where i passes a position
    # (i = p + 1) or i + window reaches one (i = p - window + 1): one window each.
    starts = {0}
    for p in pos:
        starts.update((p + 1, p - window + 1))
    # Both ends of the window only move right: a sliding minimum (a deque of indices
    # whose hashes increase from its front) gives each window's pick in amortised
    # constant time; an equal hash entering drops the older one (the rightmost wins).
    picks: set[int] = set()
    queue: deque[int] = deque()
    lo = hi = 0
    n = len(pos)
    for i in sorted(s for s in starts if 0 <= s <= last_start):
        while hi < n and pos[hi] < i + window:
            while queue and values[queue[-1]] >= values[hi]:
                queue.pop()
            queue.append(hi)
            hi += 1
        while lo < n and pos[lo] < i:
            lo += 1
        while queue and queue[0] < lo:
            queue.popleft()
        if queue:
            picks.add(values[queue[0]])
    return picks


# The index before the budget: a document's STORED_MAX smallest passages, 40 words.
WHOLE = Storage("smallest64-v1")
# The budget's storage: a text of more than 24 passages (about 430 words) keeps the
# picks of a window of 150 (one passage per ~75 words instead of ~18; any shared run
# of 154 words is found), a shorter one keeps them all; one stored passage shared finds
# a pair (bench/results/2026-12-03-passage-budget.md).
COARSE = Storage("coarse-w150-whole24-v1", window=150, whole_max=24, lookup_min=1)
STORAGES: dict[str, Storage] = {s.key: s for s in (WHOLE, COARSE)}


def to_signed(h: int) -> int:
    return h - (1 << 64) if h >= 1 << 63 else h


def to_unsigned(h: int) -> int:
    return h & MASK64


@dataclass(frozen=True)
class Run:
    """A shared stretch: words [a_start, a_end) of A and [b_start, b_end) of B."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int

    def as_list(self) -> list[int]:
        return [self.a_start, self.a_end, self.b_start, self.b_end]


@dataclass(frozen=True)
class Overlap:
    shared: int  # distinct shared passages (templates removed)
    size_a: int  # distinct passages of A (templates removed)
    size_b: int
    runs: list[Run] = field(default_factory=list)
    template_a: int = 0  # A's passages that are template passages
    template_b: int = 0

    @property
    def a_in_b(self) -> float:
        """Share of A's passages found in B: 'B contains x of A'."""
        return self.shared / self.size_a if self.size_a else 0.0

    @property
    def b_in_a(self) -> float:
        return self.shared / self.size_b if self.size_b else 0.0

    @property
    def containment(self) -> float:
        """The larger direction: how much of the smaller-looking text the other holds."""
        return max(self.a_in_b, self.b_in_a)

    def evidence(self, runs_max: int = 50) -> dict[str, object]:
        return {
            "shared": self.shared,
            "passages_a": self.size_a,
            "passages_b": self.size_b,
            "a_in_b": round(self.a_in_b, 4),
            "b_in_a": round(self.b_in_a, 4),
            "template_a": self.template_a,
            "template_b": self.template_b,
            "runs": [r.as_list() for r in self.runs[:runs_max]],
        }


def overlap(
    a: Sequence[Passage],
    b: Sequence[Passage],
    *,
    ignore: Collection[int] = (),
    k: int = K,
) -> Overlap:
    """Containment both ways and the shared runs, template hashes (`ignore`) removed."""
    ignored = set(ignore)
    set_a, set_b = hash_set(a), hash_set(b)
    kept_a, kept_b = set_a - ignored, set_b - ignored
    shared = kept_a & kept_b
    return Overlap(
        shared=len(shared),
        size_a=len(kept_a),
        size_b=len(kept_b),
        runs=shared_runs(a, b, shared, k=k),
        template_a=len(set_a & ignored),
        template_b=len(set_b & ignored),
    )


def shared_runs(
    a: Sequence[Passage], b: Sequence[Passage], shared: Collection[int], *, k: int = K
) -> list[Run]:
    """Shared passages joined into runs: consecutive matches (in A's order) whose
    offset into B stays the same and whose gap is within a window are one run."""
    first_b: dict[int, int] = {}
    for p in b:
        if p.hash in shared:
            first_b.setdefault(p.hash, p.start)
    matches = [(p.start, first_b[p.hash]) for p in a if p.hash in first_b]
    runs: list[Run] = []
    gap = W + k
    for pa, pb in sorted(matches):
        if runs:
            last = runs[-1]
            same_offset = pb - pa == last.b_start - last.a_start
            if same_offset and pa - (last.a_end - k) <= gap and pa >= last.a_start:
                runs[-1] = Run(last.a_start, pa + k, last.b_start, pb + k)
                continue
        runs.append(Run(pa, pa + k, pb, pb + k))
    return runs


def templates(counts: dict[int, int], df_min: int) -> set[int]:
    """Hashes seen on at least df_min pages of one site: template passages."""
    return {h for h, n in counts.items() if n >= df_min}


def nominates(ov: Overlap, *, containment_min: float, shared_min: int) -> bool:
    """The channel's rule: enough shared passages, and one text mostly inside the other."""
    return ov.shared >= shared_min and ov.containment >= containment_min


def char_spans(w: Words, runs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Word ranges [start, end) → character spans in the text, merged and ordered."""
    spans: list[tuple[int, int]] = []
    for start, end in sorted(runs):
        end = min(end, len(w.spans))
        if start >= end:
            continue
        s, e = w.spans[start][0], w.spans[end - 1][1]
        if spans and s <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], e))
        else:
            spans.append((s, e))
    return spans


def segments(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[str, bool]]:
    """The text cut into (piece, highlighted) segments along sorted, disjoint spans."""
    out: list[tuple[str, bool]] = []
    at = 0
    for s, e in spans:
        if s > at:
            out.append((text[at:s], False))
        out.append((text[s:e], True))
        at = e
    if at < len(text):
        out.append((text[at:], False))
    return out
